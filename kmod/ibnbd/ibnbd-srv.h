/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ibnbd-srv.h - private structures of the IBNBD server (ibnbd-server.ko).
 */
#ifndef IBNBD_SRV_H
#define IBNBD_SRV_H

#include <linux/types.h>
#include <linux/blkdev.h>
#include <linux/kref.h>
#include <linux/percpu-refcount.h>
#include <linux/bio.h>

#include "trs/ibnbd_proto.h"
#include "trs_common.h"
#include "ibtrs-srv.h"

/**
 * struct ibnbd_srv_dev - one backing block device, shared by every session
 * that opened it; arbitrates the access modes (ibnbd_access_check()).
 * All fields under ibnbd_srv_devs_mutex.
 * @writers: rw/migration openers, including closed ones whose IO is still
 *	in flight (@draining of them): their claim lasts until it landed.
 * @draining: closed writers with IO in flight.
 */
struct ibnbd_srv_dev {
	struct list_head link;
	dev_t devt;
	unsigned int openers;
	unsigned int writers;
	unsigned int draining;
};

/* Inline bio vectors of a chunk's IO: larger IOs allocate their bio. */
#define IBNBD_SRV_INLINE_VECS	8

/**
 * struct ibnbd_srv_io - the IO of one chunk (one per chunk id of the
 * session: the transport starts one request per chunk at a time, and its
 * answer is sent after the IO let go of this).
 * @sd: the handle.
 * @op: the transport's request.
 * @data: the chunk's data area.
 * @len: bytes of the IO.
 * @opcode: IBNBD_OP_*.
 * @bio: the parent bio: @inline_bio, or one of ibnbd_srv_bio_set for an IO
 *	of more than IBNBD_SRV_INLINE_VECS pages.
 * @inline_bio: see @bio.
 * @inline_vecs: its vectors.
 */
struct ibnbd_srv_io {
	struct ibnbd_srv_sess_dev *sd;
	struct ibtrs_srv_op *op;
	void *data;
	u32 len;
	u8 opcode;
	struct bio *bio;
	struct bio inline_bio;
	struct bio_vec inline_vecs[IBNBD_SRV_INLINE_VECS];
};

/**
 * struct ibnbd_srv_sess - the IBNBD side of one IBTRS session.
 * @lock: @devs' changes and @dead; IO looks handles up in an RCU read
 *	section and takes no lock.
 * @ref: one for the link (CONNECTED .. DISCONNECTED), one per open device.
 * @link: in the list of sessions (sysfs), under its mutex.
 * @devs: the handles (slot -> handle; ERR_PTR(-EBUSY) while one opens).
 * @ios: one IO context per chunk (@nr_ios, the transport's queue depth).
 * @inflight: IOs in flight, per CPU (only the sum means something; logs).
 */
struct ibnbd_srv_sess {
	struct list_head link;
	struct ibtrs_srv_sess *ts;
	char name[TRS_SESSNAME_MAX];
	spinlock_t lock;		/* see @lock above */
	struct kref ref;
	struct ibnbd_srv_sess_dev __rcu **devs;
	unsigned int max_devs;
	struct ibnbd_srv_io *ios;
	u32 nr_ios;
	long __percpu *inflight;
	bool dead;
	u8 ver;
	atomic64_t bad_msgs;
};

/**
 * struct ibnbd_srv_sd_stats - counters of a handle, one per CPU.
 * @inflight: bios started minus ended here (only the sum means something).
 */
struct ibnbd_srv_sd_stats {
	u64 reads;
	u64 writes;
	u64 read_bytes;
	u64 write_bytes;
	u64 flushes;
	u64 discards;
	u64 write_zeroes;
	u64 errors;
	s64 inflight;
};

/**
 * struct ibnbd_srv_sess_dev - a device a session opened (a handle).
 * @bdev: opened with @fmode; FMODE_EXCL (holder: @dev) for writers.
 * @ref: one per IO in flight, taken in an RCU read section while the
 *	handle is in the session's table; killed at close: the handle is
 *	released when its last IO ended.
 * @draining: this closed writer holds the device's claim until released.
 * @stats: per CPU.
 * @rcu: the handle is freed after a grace period (lookups may still see
 *	it).
 */
struct ibnbd_srv_sess_dev {
	struct ibnbd_srv_sess *sess;
	struct ibnbd_srv_dev *dev;
	struct block_device *bdev;
	fmode_t fmode;
	u32 handle;
	unsigned int slot;
	u8 mode;
	struct ibnbd_dev_limits lim;
	struct percpu_ref ref;
	bool draining;
	struct work_struct release_work;
	struct ibnbd_srv_sd_stats __percpu *stats;
	struct rcu_head rcu;
	char path[IBNBD_DEV_PATH_MAX];
};

/* ibnbd-srv-dev.c */
extern struct mutex ibnbd_srv_devs_mutex;
int ibnbd_srv_resolve(const char *root, const char *name, dev_t *devt,
		      char *resolved, size_t len, const char **reason);
int ibnbd_srv_dev_get(dev_t devt, unsigned int mode,
		      struct ibnbd_srv_dev **out, const char **reason);
void ibnbd_srv_dev_put(struct ibnbd_srv_dev *d, unsigned int mode);
void ibnbd_srv_dev_drain_begin(struct ibnbd_srv_dev *d);
void ibnbd_srv_dev_drain_end(struct ibnbd_srv_dev *d);

#endif /* IBNBD_SRV_H */
