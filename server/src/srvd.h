/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * srvd.h - the daemon's own state (sessions, devices of a session, IO in
 * flight) shared by srv_main.c, srv_sess.c, srv_io.c and srv_stats.c. The
 * pure pieces (options, paths, device registry) are declared in srv.h.
 *
 * Lifetimes: a srv_io holds its srv_sess_dev (sd->inflight) and its session
 * (sess->inflight). A CLOSE takes the handle out of the table at once; the
 * fd is closed and the access-mode claim released when its last IO
 * completes (srv_sd_free()). When IBTRS reports that a
 * session is gone, its devices are closed the same way and the srv_sess
 * lives on, marked dead, until its in-flight IO completes: every request is
 * still answered exactly once with ibtrs_srv_resp() (the library keeps the
 * chunks valid until then). Completions are answered only outside
 * ibtrs_srv_poll() (d->deferred), never re-entrantly from an IBTRS callback.
 */
#ifndef IBNBD_SRVD_H
#define IBNBD_SRVD_H

#include <limits.h>
#include <liburing.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "ibtrs.h"
#include "srv.h"
#include "srv_backend.h"
#include "trs/ibnbd_proto.h"

struct srv_stats {
	uint64_t reads, writes, read_bytes, write_bytes;
	uint64_t flushes, discards, write_zeroes, errors;
};

/*
 * The daemon's side of the data path's cost: io_uring_submit() calls
 * (each an io_uring_enter() system call when it has SQEs), the CQEs they
 * reaped, and srv_io objects that had to be allocated (the rest came from
 * the cache).
 */
struct srv_fast_stats {
	uint64_t ring_submits, ring_cqes, io_allocs, fixed_ios;
};

/*
 * io_uring registered buffers (srv_fixed.c): one sparse table of @n slots,
 * one slot per session holding its chunk pool, so READ/WRITE of a chunk
 * need no page pinning per IO (READ_FIXED/WRITE_FIXED). @ok: the table
 * exists; @free: stack of free slot numbers, @nfree of them.
 */
struct srv_fixed {
	bool ok;
	unsigned int n;
	unsigned int *free, nfree;
};

struct srv_sess;

/* One device opened by one session. */
struct srv_sess_dev {
	struct srv_sess *sess;
	struct srv_dev *dev;		/* registry entry (arbitration) */
	uint32_t handle;
	unsigned int slot;
	unsigned int mode;
	int fd;
	bool is_blk, buffered, closing;
	struct srv_geom geom;
	struct ibnbd_dev_limits lim;
	unsigned int inflight;
	struct srv_stats st;
	char path[1024];
	struct srv_sess_dev *next_closing;
};

struct srv_sess {
	struct srv_sess *next;
	struct ibtrs_srv_sess *ts;
	char name[IBTRS_SESSNAME_MAX];
	uint8_t ver;
	bool dead;
	unsigned int inflight;
	unsigned int max_devs;
	struct srv_sess_dev **devs;	/* by slot */
	struct srv_sess_dev *closing;	/* closed, IO still in flight */
	struct srv_stats st;		/* includes closed devices */
	uint64_t bad_msgs;
	int fixed;			/* io_uring buffer slot of the chunk
					 * pool, or -1 (srv_fixed.c) */
};

struct srv_io {
	struct srv_io *next;		/* d->deferred */
	struct srv_sess_dev *sd;
	struct ibtrs_srv_op *op;
	uint32_t opcode;
	uint32_t len;
	uint64_t off;			/* bytes */
	int pending;			/* CQEs still to come */
	int res;
	void *data;			/* chunk */
	void *bounce;			/* aligned copy for O_DIRECT, or NULL */
};

/**
 * struct srv_discard_worker - the BLKDISCARD thread (srv_discard.c).
 * @todo/@todo_tail: queued by the loop, FIFO.
 * @done: finished, for the loop to answer (any order).
 * @efd: eventfd the worker signals, in the loop's epoll set.
 * @lock/@cond: protect @todo, @done, @stop; wake the worker.
 */
struct srv_discard_worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct srv_io *todo, **todo_tail;
	struct srv_io *done;
	int efd;
	bool stop;
	bool running;
};

struct srvd {
	struct srv_opts o;
	char root[PATH_MAX];
	int root_fd;
	struct ibtrs_srv_ctx *ctx;
	struct io_uring ring;
	int sigfd;
	uint32_t chunk_size;
	uint16_t gen;			/* high half of device handles */
	struct srv_dev_reg reg;
	struct srv_sess *sessions;
	struct srv_io *deferred, **deferred_tail;
	struct srv_io *io_cache;	/* free srv_io objects, reused */
	unsigned int io_cached;
	struct srv_fast_stats fast;
	struct srv_fixed fixed;
	bool in_poll;
	bool stopping;
	unsigned int inflight;		/* all sessions */
	uint64_t parked;		/* requests not answered at shutdown */
	unsigned int stop_inflight;	/* IOs in flight at SIGTERM/SIGINT */
	uint64_t stop_answered;		/* IOs answered since */
	struct srv_stats total;		/* every session, since start */
	struct srv_discard_worker discard;
	time_t start;
};

/* The daemon; the IBTRS callbacks get no context pointer of their own. */
extern struct srvd *srvd_global;

/* ---- srv_log.c ---------------------------------------------------- */
void srv_log_setup(int max_level, bool use_syslog);
void srv_ibtrs_log(enum ibtrs_log_level lvl, const char *msg);

/* ---- srv_sess.c: sessions, their devices, the IBTRS callbacks ------ */
extern const struct ibtrs_srv_ops srv_ops;
int srv_rdma_ev(struct ibtrs_srv_sess *ts, void *priv, struct ibtrs_srv_op *op,
		enum ibtrs_dir dir, void *data, size_t datalen,
		const void *usr, size_t usrlen);
void srv_link_ev(struct ibtrs_srv_sess *ts, enum ibtrs_srv_link_ev ev,
		 void *priv);
struct srv_sess_dev *srv_sd_lookup(struct srv_sess *s, uint32_t handle);
void srv_sd_close(struct srv_sess *s, struct srv_sess_dev *sd, const char *why);
void srv_sd_reap_closing(struct srv_sess *s);
void srv_sess_kill(struct srvd *d, struct srv_sess *s, const char *why);
void srv_sess_destroy(struct srvd *d, struct srv_sess *s);

/* ---- srv_io.c: backend IO through io_uring, answers ---------------- */
int srv_handle_io(struct srvd *d, struct srv_sess *s, struct ibtrs_srv_op *op,
		  enum ibtrs_dir dir, void *data, size_t datalen,
		  const void *usr, size_t usrlen);
unsigned int srv_reap(struct srvd *d);
void srv_io_done(struct srvd *d, struct srv_io *io);
void srv_flush_deferred(struct srvd *d);
void srv_run_io(struct srvd *d);
struct srv_io *srv_io_alloc(struct srvd *d);
void srv_io_free(struct srvd *d, struct srv_io *io);

/* ---- srv_fixed.c: the chunk pools as io_uring registered buffers --- */
void srv_fixed_init(struct srvd *d);
void srv_fixed_exit(struct srvd *d);
void srv_fixed_attach(struct srvd *d, struct srv_sess *s);
void srv_fixed_detach(struct srvd *d, struct srv_sess *s);

/* ---- srv_discard.c: BLKDISCARD in a worker thread ------------------ */
int srv_discard_start(struct srv_discard_worker *dw);
void srv_discard_stop(struct srv_discard_worker *dw);
void srv_discard_queue(struct srv_discard_worker *dw, struct srv_io *io);
void srv_discard_reap(struct srvd *d);

/* ---- srv_stats.c -------------------------------------------------- */
void srv_stats_line(char *buf, size_t len, const struct srv_stats *s);
void srv_stats_account(struct srvd *d, struct srv_sess_dev *sd,
		       const struct srv_io *io);
void srv_stats_dump(struct srvd *d, FILE *f);
void srv_stats_report(struct srvd *d);

#endif /* IBNBD_SRVD_H */
