/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ibnbd-srv.h - private structures of the IBNBD server (ibnbd-server.ko).
 */
#ifndef IBNBD_SRV_H
#define IBNBD_SRV_H

#include <linux/types.h>
#include <linux/blkdev.h>
#include <linux/kref.h>

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

/**
 * struct ibnbd_srv_sess - the IBNBD side of one IBTRS session.
 * @lock: @devs, @inflight, the devices' @inflight and @closing.
 * @ref: one for the link (CONNECTED .. DISCONNECTED), one per open device.
 * @link: in the list of sessions (sysfs), under its mutex.
 */
struct ibnbd_srv_sess {
	struct list_head link;
	struct ibtrs_srv_sess *ts;
	char name[TRS_SESSNAME_MAX];
	spinlock_t lock;		/* see @lock above */
	struct kref ref;
	struct ibnbd_srv_sess_dev **devs;
	unsigned int max_devs;
	unsigned int inflight;
	bool dead;
	u8 ver;
	atomic64_t bad_msgs;
};

/**
 * struct ibnbd_srv_sess_dev - a device a session opened (a handle).
 * @bdev: opened with @fmode; FMODE_EXCL (holder: @dev) for writers.
 * @inflight: bios in flight; a closed handle is released at zero.
 * @draining: this closed writer holds the device's claim until released.
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
	unsigned int inflight;
	bool closing;
	bool draining;
	struct work_struct release_work;
	atomic64_t reads;
	atomic64_t writes;
	atomic64_t read_bytes;
	atomic64_t write_bytes;
	atomic64_t flushes;
	atomic64_t discards;
	atomic64_t write_zeroes;
	atomic64_t errors;
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
