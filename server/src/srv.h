/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * srv.h - ibnbd-serverd internals shared by its source files.
 */
#ifndef IBNBD_SRV_H
#define IBNBD_SRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define SRV_MAX_ADDRS		8
#define SRV_DEFAULT_ROOT	"/dev"
#define SRV_DEFAULT_MAX_DEVS	64

/* ---- srv_opts.c --------------------------------------------------- */

/**
 * struct srv_opts - command line of ibnbd-serverd.
 * @addrs/@naddrs: listen addresses (one RDMA CM listener each).
 * @port: RDMA CM port.
 * @root: device search root (realpath'd by the daemon at start).
 * @queue_depth/@chunk_size: IBTRS chunks per session and bytes per chunk.
 * @daemon: fork into the background, log to syslog.
 * @use_syslog: log to syslog even in the foreground.
 * @pidfile/@stats_file: optional paths.
 * @max_devs: devices one session may hold open.
 * @verbose: 0 = info, 1+ = debug.
 * @hb_interval_ms/@hb_missed_max: IBTRS heartbeat (0 = library default).
 */
struct srv_opts {
	const char *addrs[SRV_MAX_ADDRS];
	int naddrs;
	uint16_t port;
	const char *root;
	unsigned int queue_depth;
	unsigned int chunk_size;
	bool daemon;
	bool use_syslog;
	const char *pidfile;
	const char *stats_file;
	unsigned int max_devs;
	int verbose;
	unsigned int hb_interval_ms;
	unsigned int hb_missed_max;
	unsigned int test_faults;	/* IBTRS_SRV_TEST_*: client tests only */
	int chunk_mode;			/* enum trs_chunk_mode */
};

/*
 * srv_opts_parse() - parse argv into @o (defaults first). Returns 0, 1 when
 * --help was printed (exit 0), or -EINVAL with a message in @err.
 */
int srv_opts_parse(int argc, char **argv, struct srv_opts *o, char *err,
		   size_t errlen);
void srv_opts_usage(FILE *f, const char *prog);
/* Size with optional k/m/g suffix (powers of 1024). */
int srv_parse_size(const char *s, unsigned long long *out);

/* ---- srv_path.c --------------------------------------------------- */

/**
 * struct srv_open_result - what srv_path_open() found.
 * @fd: open file descriptor (caller closes).
 * @is_blk: block device (else regular file).
 * @buffered: O_DIRECT was refused by the file system; opened without it.
 * @st_dev/@st_ino/@st_rdev: identity, for arbitration across sessions.
 * @resolved: the path below the root that was opened (for logs).
 */
struct srv_open_result {
	int fd;
	bool is_blk;
	bool buffered;
	dev_t st_dev;
	ino_t st_ino;
	dev_t st_rdev;
	char resolved[1024];
};

/*
 * srv_path_rel() - turn a client's device path into a path relative to the
 * root: "/dev/nullb0" (root /dev) and "nullb0" both give "nullb0"; an
 * absolute path outside the root gives -EACCES. Purely lexical: ".." and
 * symlinks are refused later by RESOLVE_BENEATH. Returns 0 or -errno with
 * a reason.
 */
int srv_path_rel(const char *root, const char *path, char *rel, size_t rellen,
		 const char **reason);
/*
 * srv_path_open() - open @path (client's) beneath @root_fd with @flags
 * (O_RDONLY or O_RDWR; O_DIRECT and O_CLOEXEC are added). Only block
 * devices and regular files are accepted. Returns 0 or -errno + @reason.
 */
int srv_path_open(int root_fd, const char *root, const char *path, int flags,
		  struct srv_open_result *res, const char **reason);

/* ---- srv_dev.c: device registry and access arbitration ------------ */

/**
 * struct srv_dev - one backing device, shared by every session that opened
 * it (key: st_rdev for block devices, st_dev+st_ino for files).
 * @writers: openers with rw or migration access.
 * @openers: all openers.
 * @excl_fd: block devices with writers: an O_EXCL open that fences local
 *	writers (mounts, other O_EXCL openers), else -1.
 * @draining: writers that were closed and whose IO is still in flight
 *	(still counted in @writers until it has landed).
 */
struct srv_dev {
	struct srv_dev *next;
	bool is_blk;
	dev_t dev;
	ino_t ino;
	unsigned int writers;
	unsigned int openers;
	unsigned int draining;
	int excl_fd;
	char path[256];
};

struct srv_dev_reg {
	struct srv_dev *head;
	unsigned int ndevs;
};

/*
 * srv_dev_get() - register one opener with access @mode; -EBUSY (with
 * @reason) when the mode conflicts with the current writers.
 */
int srv_dev_get(struct srv_dev_reg *reg, bool is_blk, dev_t dev, ino_t ino,
		const char *path, unsigned int mode, struct srv_dev **out,
		const char **reason);
/*
 * srv_dev_claim_excl() - a writer opened block device @d (as @fd): hold it
 * O_EXCL, as rnbd-srv does, until the last writer is gone (srv_dev_put()).
 * -EBUSY with @reason if it is mounted or opened O_EXCL on this host.
 */
int srv_dev_claim_excl(struct srv_dev *d, int fd, const char **reason);
/*
 * srv_dev_drain_begin() - a writer of @d was closed with IO in flight: it
 * keeps its claim until srv_dev_drain_end() + srv_dev_put() when the IO is
 * done; new writers meanwhile are told why they are refused.
 */
void srv_dev_drain_begin(struct srv_dev *d, unsigned int mode);
void srv_dev_drain_end(struct srv_dev *d, unsigned int mode);
/* srv_dev_put() - one opener with @mode is gone; frees @d after the last. */
void srv_dev_put(struct srv_dev_reg *reg, struct srv_dev *d, unsigned int mode);

/* ---- logging (ibnbd_serverd.c) ------------------------------------ */
enum { SRV_LOG_ERR = 3, SRV_LOG_WARN = 4, SRV_LOG_INFO = 6, SRV_LOG_DEBUG = 7 };
void srv_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define srv_err(...)	srv_log(SRV_LOG_ERR, __VA_ARGS__)
#define srv_wrn(...)	srv_log(SRV_LOG_WARN, __VA_ARGS__)
#define srv_info(...)	srv_log(SRV_LOG_INFO, __VA_ARGS__)
#define srv_dbg(...)	srv_log(SRV_LOG_DEBUG, __VA_ARGS__)

#endif /* IBNBD_SRV_H */
