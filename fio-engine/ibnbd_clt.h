/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ibnbd_clt.h - a small userspace IBNBD client on top of libibtrs, with no
 * fio in it: one IBTRS session, one device. Control messages (SESS_INFO,
 * OPEN, CLOSE), the device's geometry and limits, IO submission, and the
 * -ESTALE re-open (the server restarted and forgot our device handle: the
 * device is opened again and the IO resubmitted).
 *
 * Threading: as libibtrs, no threads; everything (callbacks included) runs
 * in the caller of ibnbd_clt_poll(). One handle, one thread at a time.
 *
 * Errors: functions return 0 or a negative errno; ibnbd_clt_errmsg() gives
 * a one-line message for the last failure (no trailing newline).
 */
#ifndef IBNBD_CLT_H
#define IBNBD_CLT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ibtrs.h"
#include "trs/ibnbd_proto.h"

/* Times one IO is resubmitted after -ESTALE before it fails. */
#define IBNBD_CLT_MAX_RETRIES	5

struct ibnbd_clt;

enum ibnbd_clt_log_level {
	IBNBD_CLT_LOG_ERR,
	IBNBD_CLT_LOG_INFO,
};

/* @msg has no trailing newline; default (NULL): stderr. */
typedef void (*ibnbd_clt_log_fn)(void *priv, enum ibnbd_clt_log_level lvl,
				 const char *msg);

/**
 * struct ibnbd_clt_params - what ibnbd_clt_create() needs.
 * @paths: server addresses, comma separated, "ip" or "src_ip@dst_ip".
 * @devpath: device or file to open on the server.
 * @sessname: IBTRS session name (unique per session).
 * @trs: transport options; its @sessname is ignored (@sessname is used).
 * @queue_depth: use at most this many permits (0 = all the server gives).
 * @log, @log_priv: where info/error lines go (re-open notices).
 */
struct ibnbd_clt_params {
	const char *paths;
	const char *devpath;
	const char *sessname;
	struct ibtrs_clt_opts trs;
	unsigned int queue_depth;
	ibnbd_clt_log_fn log;
	void *log_priv;
};

/**
 * struct ibnbd_clt_dev - the opened device, from OPEN_RSP (host endian).
 * @handle: device_id for IO and CLOSE.
 * @size: bytes. @lbs: logical block size, bytes.
 * @max_io: largest READ/WRITE part in bytes (server's max_hw_sectors,
 *	capped by the transport's max IO size); longer IOs are split.
 * @max_discard: largest DISCARD part in bytes, 0 = none; longer DISCARDs
 *	are split. @max_write_zeroes: the same for WRITE_ZEROES.
 * @flags: IBNBD_DEV_*. @ver: negotiated protocol version.
 * @mode: the granted access mode.
 */
struct ibnbd_clt_dev {
	uint32_t handle;
	uint64_t size;
	uint32_t lbs;
	uint32_t max_io;
	uint32_t max_discard;
	uint32_t max_write_zeroes;
	uint32_t flags;
	uint8_t ver;
	enum ibnbd_access_mode mode;
};

/**
 * struct ibnbd_clt_stats - cumulative counters of the IBNBD layer.
 * @ios: IOs submitted; @parts: transport requests they took;
 * @split: IOs that needed more than one part;
 * @waits: parts that found no permit and waited for one;
 * @reopens: successful re-opens after -ESTALE;
 * @stale: part answers -ESTALE that were resubmitted.
 */
struct ibnbd_clt_stats {
	uint64_t ios;
	uint64_t parts;
	uint64_t split;
	uint64_t waits;
	uint64_t reopens;
	uint64_t stale;
};

struct ibnbd_clt_io;
typedef void (*ibnbd_clt_done_fn)(struct ibnbd_clt_io *io, int err);

/*
 * One transport request of an IO: an IO longer than the device's max IO
 * size (max discard size for DISCARD/WRITE_ZEROES) travels as several
 * parts, each on its own permit. Private to ibnbd_clt.c.
 */
struct ibnbd_clt_part {
	struct ibnbd_clt_io *io;
	struct ibtrs_permit *permit;
	struct ibnbd_msg_io msg;
	struct iovec iov;
	int retries;			/* -ESTALE resubmissions */
	unsigned int open_gen;		/* the client's open_gen when sent */
	struct ibnbd_clt_part *next;	/* on the stale or resend list */
};

/**
 * struct ibnbd_clt_io - one block IO of any length; the caller embeds it in
 * its own per-IO object and gets back with container_of() in @done.
 *
 * Set by the caller before ibnbd_clt_submit(): @op, @flags (IBNBD_F_*),
 * @offset and @len in bytes (0 for FLUSH), @buf (READ/WRITE data), @done.
 * @done runs once per submission with 0 or a negative errno (the first
 * error of any part), from ibnbd_clt_poll() or from ibnbd_clt_submit()
 * itself when the transport rejects the IO outright.
 * The rest is private to ibnbd_clt.c; ibnbd_clt_io_init() sets it up.
 */
struct ibnbd_clt_io {
	enum ibnbd_io_op op;
	uint32_t flags;
	uint64_t offset;
	uint64_t len;
	void *buf;
	ibnbd_clt_done_fn done;

	struct ibnbd_clt *clt;
	struct ibnbd_clt_part *parts;
	unsigned int max_parts;		/* parts[] allocated */
	unsigned int nparts;		/* parts of this submission */
	unsigned int next;		/* first part not sent yet */
	unsigned int ndone;		/* parts completed (or dropped) */
	int error;			/* first error of any part */
	enum ibtrs_dir dir;
	struct ibnbd_clt_io *wait_next;	/* on the client's wait queue */
};

/*
 * Allocates the client and checks @p (paths); no connection yet. On
 * failure returns NULL and -errno in *@err, message in ibnbd_clt_errmsg(NULL).
 */
struct ibnbd_clt *ibnbd_clt_create(const struct ibnbd_clt_params *p, int *err);
/* Connects the session (SESS_INFO, OPEN follow in ibnbd_clt_dev_open()). */
int ibnbd_clt_connect(struct ibnbd_clt *c);
/*
 * SESS_INFO + OPEN in @mode. A refusal by the server returns its positive
 * errno negated (-EBUSY: access mode conflict ...) with its reason text.
 */
int ibnbd_clt_dev_open(struct ibnbd_clt *c, enum ibnbd_access_mode mode);
/*
 * Waits (bounded) for in-flight IO, sends CLOSE when a device is open and a
 * path is up, disconnects, frees. NULL is fine.
 */
void ibnbd_clt_destroy(struct ibnbd_clt *c);

const char *ibnbd_clt_errmsg(const struct ibnbd_clt *c);
const struct ibnbd_clt_dev *ibnbd_clt_dev(const struct ibnbd_clt *c);
const char *ibnbd_clt_sessname(const struct ibnbd_clt *c);
const char *ibnbd_clt_devpath(const struct ibnbd_clt *c);
struct ibtrs_clt *ibnbd_clt_trs(const struct ibnbd_clt *c);
/* Permits this client uses (min of the server's and params.queue_depth). */
unsigned int ibnbd_clt_queue_depth(const struct ibnbd_clt *c);
/* IOs submitted whose @done has not run yet. */
unsigned int ibnbd_clt_inflight(const struct ibnbd_clt *c);
void ibnbd_clt_get_stats(const struct ibnbd_clt *c, struct ibnbd_clt_stats *st);

/* IO buffers registered for zero-copy; unregistered by destroy. */
int ibnbd_clt_reg_mem(struct ibnbd_clt *c, void *addr, size_t len);

/*
 * Prepares @io for IOs of up to @max_len bytes (after the device is open:
 * the part count follows its max IO and discard sizes). 0 or -ENOMEM.
 */
int ibnbd_clt_io_init(struct ibnbd_clt *c, struct ibnbd_clt_io *io,
		      uint64_t max_len);
void ibnbd_clt_io_free(struct ibnbd_clt_io *io);

/*
 * Submits @io: its parts are sent as permits allow, in submission order;
 * parts that find no permit wait in the client and go out from
 * ibnbd_clt_poll() as earlier parts complete, so any number of IOs of any
 * length can be submitted without deadlock. Returns 0 (@done will run,
 * possibly before this returns) or, with @done not run and a message set:
 * -EINVAL (not aligned to the device's logical blocks), -E2BIG (longer than
 * ibnbd_clt_io_init()'s @max_len allows).
 * Transport errors reach @done (-ENOTCONN: every path lost and
 * ctrl_loss_tmo expired).
 */
int ibnbd_clt_submit(struct ibnbd_clt *c, struct ibnbd_clt_io *io);

/* The transport's pollable fd: readable when ibnbd_clt_poll() has work. */
int ibnbd_clt_fd(const struct ibnbd_clt *c);
/*
 * Runs completions (@done callbacks) and the -ESTALE re-open; @timeout_ms as
 * ibtrs_clt_poll(). Returns the transport's count or a negative errno.
 */
int ibnbd_clt_poll(struct ibnbd_clt *c, int timeout_ms);

#endif /* IBNBD_CLT_H */
