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
 * @max_io: largest READ/WRITE in bytes (server's max_hw_sectors, capped by
 *	the transport's max IO size).
 * @max_discard: largest DISCARD in bytes, 0 = none.
 * @flags: IBNBD_DEV_*. @ver: negotiated protocol version.
 * @mode: the granted access mode.
 */
struct ibnbd_clt_dev {
	uint32_t handle;
	uint64_t size;
	uint32_t lbs;
	uint32_t max_io;
	uint32_t max_discard;
	uint32_t flags;
	uint8_t ver;
	enum ibnbd_access_mode mode;
};

/**
 * struct ibnbd_clt_stats - cumulative counters of the IBNBD layer.
 * @reopens: successful re-opens after -ESTALE.
 * @stale: IO answers -ESTALE that were resubmitted.
 */
struct ibnbd_clt_stats {
	uint64_t reopens;
	uint64_t stale;
};

struct ibnbd_clt_io;
typedef void (*ibnbd_clt_done_fn)(struct ibnbd_clt_io *io, int err);

/**
 * struct ibnbd_clt_io - one block IO; the caller embeds it in its own
 * per-IO object and gets back with container_of() in @done.
 *
 * Set by the caller before ibnbd_clt_submit(): @op, @flags (IBNBD_F_*),
 * @offset and @len in bytes (0 for FLUSH), @buf (READ/WRITE data), @done.
 * @done runs once, inside ibnbd_clt_poll(), with 0 or a negative errno.
 * The rest is private to ibnbd_clt.c.
 */
struct ibnbd_clt_io {
	enum ibnbd_io_op op;
	uint32_t flags;
	uint64_t offset;
	uint32_t len;
	void *buf;
	ibnbd_clt_done_fn done;

	struct ibnbd_clt *clt;
	struct ibtrs_permit *permit;
	struct ibnbd_msg_io msg;
	struct iovec iov;
	enum ibtrs_dir dir;
	int retries;
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
unsigned int ibnbd_clt_inflight(const struct ibnbd_clt *c);
void ibnbd_clt_get_stats(const struct ibnbd_clt *c, struct ibnbd_clt_stats *st);

/* IO buffers registered for zero-copy; unregistered by destroy. */
int ibnbd_clt_reg_mem(struct ibnbd_clt *c, void *addr, size_t len);

/*
 * Submits @io. 0: queued, @done will run from ibnbd_clt_poll(). -EBUSY /
 * -EAGAIN: no permit now, try again after a completion. -EINVAL: not
 * aligned to the device's logical blocks (message set). Others: rejected by
 * the transport (-ENOTCONN: every path lost and ctrl_loss_tmo expired).
 * @done does not run when submission fails.
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
