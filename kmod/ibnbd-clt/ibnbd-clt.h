/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ibnbd-clt.h - the IBNBD client's structures and the functions its files
 * share (ibnbd-clt.c: sessions, control messages, sysfs, map/unmap;
 * ibnbd-clt-blk.c: the block device).
 */
#ifndef IBNBD_CLT_H
#define IBNBD_CLT_H

#include <linux/blkdev.h>
#include <linux/blk-mq.h>
#include <linux/kobject.h>
#include <linux/semaphore.h>
#include <linux/workqueue.h>

#include "trs/ibnbd_proto.h"
#include "ibtrs-clt.h"

/* module parameters (ibnbd-clt.c) */
extern uint ibnbd_clt_io_timeout_ms;
extern uint ibnbd_clt_poll_queues;

/*
 * Chunk ids the control messages (SESS_INFO, OPEN, CLOSE) use: the last
 * ones of the session; the block layer's tags are the others.
 */
#define IBNBD_CLT_CTL_IDS	2

/* reopens of a device after -ESTALE, a second apart, before its IO fails */
#define IBNBD_CLT_REOPEN_TRIES	30

/**
 * struct ibnbd_clt_sess - an IBTRS session and the devices mapped on it.
 * @list: in ibnbd_clt_sessions.
 * @trs: the transport session.
 * @refs: devices using it (under ibnbd_clt_mutex).
 * @ver: negotiated IBNBD protocol version.
 * @tag_set: one tag set for every device of the session: a request's tag
 *	is its chunk id (the server's queue depth bounds the requests of all
 *	devices together, and a request that has a tag has a chunk). One
 *	hardware queue per connection of a path, the polled ones last.
 * @max_segs: data segments per request.
 * @ctl_base: the first chunk id of the control messages.
 * @ctl_sem: control ids free.
 * @ctl_busy: control ids in use (bit i: ctl_base + i).
 */
struct ibnbd_clt_sess {
	struct list_head list;
	struct ibtrs_clt_sess *trs;
	int refs;
	u8 ver;
	struct blk_mq_tag_set tag_set;
	u32 max_segs;
	u32 ctl_base;
	struct semaphore ctl_sem;
	unsigned long ctl_busy;
};

/* Bits of &struct ibnbd_clt_dev.flags */
enum {
	IBNBD_CLT_DEV_DYING,	/* unmap has begun: no reopen, no resend */
};

/**
 * enum ibnbd_clt_dev_state - of a mapped device.
 * @IBNBD_CLT_DEV_MAPPED: serves IO.
 * @IBNBD_CLT_DEV_UNMAPPING: being unmapped; opens are refused.
 */
enum ibnbd_clt_dev_state {
	IBNBD_CLT_DEV_MAPPED,
	IBNBD_CLT_DEV_UNMAPPING,
};

/**
 * struct ibnbd_clt_dev - a mapped device.
 * @kobj: its sysfs directory (owns the struct).
 * @list: in ibnbd_clt_devs.
 * @idx: N of ibnbd<N>.
 * @sess: the session.
 * @path: the server's device path.
 * @mode: access mode asked for.
 * @lock: @state and @open_cnt (not ibnbd_clt_mutex: add_disk() opens the
 *	device to scan it while the mapping holds that one).
 * @state: &enum ibnbd_clt_dev_state.
 * @open_cnt: opens of the block device.
 * @device_id: the server's handle.
 * @rsp: the server's OPEN_RSP (geometry).
 * @disk: the block device (on the session's tag set).
 * @stale: the server answered -ESTALE (it lost our handle, e.g. its
 *	session went away while every path was down): IO waits until
 *	@reopen_work opened the device again.
 * @reopen_work: SESS_INFO + OPEN again, then IO resumes with the new
 *	handle.
 * @reopen_tries: failed attempts of the reopen running now (only
 *	@reopen_work touches it).
 * @reopen_err: how the last reopen ended: 0, or -errno when it gave up
 *	(the requests it held then fail; the next -ESTALE tries again).
 * @gen: opens of the device on the server so far (the map's, then one per
 *	reopen). Only an -ESTALE answer to IO sent in the current one starts
 *	a reopen: the server may give a new open the handle value it gave the
 *	last one, so the handle does not tell an IO sent before the reopen.
 * @flags: IBNBD_CLT_DEV_DYING.
 * @busy: requests refused with BLK_STS_RESOURCE (no path up, a reopen
 *	running), to be run again by the block layer.
 */
struct ibnbd_clt_dev {
	struct kobject kobj;
	struct list_head list;
	int idx;
	struct ibnbd_clt_sess *sess;
	char path[IBNBD_DEV_PATH_MAX];
	enum ibnbd_access_mode mode;
	struct mutex lock;	/* @state, @open_cnt */
	enum ibnbd_clt_dev_state state;
	int open_cnt;
	u32 device_id;
	struct ibnbd_msg_open_rsp rsp;
	struct gendisk *disk;
	atomic_t stale;
	struct delayed_work reopen_work;
	int reopen_tries;
	int reopen_err;
	atomic_t gen;
	unsigned long flags;
	atomic_long_t busy;
};

/**
 * struct ibnbd_clt_iu - per block request data (blk-mq pdu).
 * @msg: the IO message (user header of the IBTRS request).
 * @dev: the device.
 * @permit: the chunk id of the request sent: its tag.
 * @err: result.
 * @timeouts: block layer timeouts of this request so far.
 * @stale_retry: re-queued after -ESTALE: fails if the reopen gave up.
 * @gen: the device's &ibnbd_clt_dev.gen when the request was sent.
 * @sg: data segments (max_segs entries follow).
 */
struct ibnbd_clt_iu {
	struct ibnbd_msg_io msg;
	struct ibnbd_clt_dev *dev;
	int permit;
	int err;
	int timeouts;
	bool stale_retry;
	u32 gen;
	struct scatterlist sg[];
};

/* ibnbd-clt-blk.c */
int ibnbd_clt_alloc_tag_set(struct ibnbd_clt_sess *sess);
int ibnbd_clt_create_disk(struct ibnbd_clt_dev *dev);

#endif /* IBNBD_CLT_H */
