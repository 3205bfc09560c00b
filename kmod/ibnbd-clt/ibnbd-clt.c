// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibnbd-clt.c - IBNBD client (ibnbd-client.ko): a blk-mq block device
 * /dev/ibnbd<N> per device mapped from a server over ibtrs-client.
 *
 *   echo "sessname=S path=[src@]dst [path=...] device_path=P \
 *         [access_mode=ro|rw|migration]" > /sys/class/ibnbd-client/ctl/map_device
 *
 * Each mapped device gets /sys/class/ibnbd-client/ctl/devices/ibnbd<N>/
 * with state, session, mapping_path, paths and unmap_device ("normal", or
 * "force" while the device is open). Devices mapped with the same session
 * name share one IBTRS session. The message flow is the one of
 * fio-engine/ibnbd_clt.c: SESS_INFO and OPEN as IBTRS reads whose answer
 * lands in a buffer of ours, CLOSE as a write without data, one IBTRS
 * request per block request (trs/include/trs/ibnbd_proto.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/blkdev.h>
#include <linux/blk-mq.h>
#include <linux/idr.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include <linux/device.h>

#include "trs/ibnbd_proto.h"
#include "ibtrs-clt.h"
#include "ibnbd-clt-parse.h"

static ushort port = 1234;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "server port (default 1234)");

/*
 * A request not answered within io_timeout_ms fails the path it is on
 * (error recovery, as nvme-rdma does: the path's teardown re-sends it on a
 * path); when it times out a second time it fails with an error. Control
 * messages (SESS_INFO, OPEN, CLOSE) wait as long, then the same.
 */
static uint io_timeout_ms = 30000;
module_param(io_timeout_ms, uint, 0444);
MODULE_PARM_DESC(io_timeout_ms, "request timeout (default 30000); the second one fails the request");

/**
 * struct ibnbd_clt_sess - an IBTRS session and the devices mapped on it.
 * @list: in ibnbd_clt_sessions.
 * @trs: the transport session.
 * @refs: devices using it (under ibnbd_clt_mutex).
 * @ver: negotiated IBNBD protocol version.
 */
struct ibnbd_clt_sess {
	struct list_head list;
	struct ibtrs_clt_sess *trs;
	int refs;
	u8 ver;
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
 * @max_segs: data segments per request.
 * @tag_set: blk-mq tag set.
 * @disk: the block device.
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
	u32 max_segs;
	struct blk_mq_tag_set tag_set;
	struct gendisk *disk;
	atomic_t stale;
	struct delayed_work reopen_work;
	int reopen_tries;
	int reopen_err;
	atomic_t gen;
	unsigned long flags;
};

/**
 * struct ibnbd_clt_iu - per block request data (blk-mq pdu).
 * @msg: the IO message (user header of the IBTRS request).
 * @dev: the device.
 * @permit: the IBTRS permit held.
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

static DEFINE_MUTEX(ibnbd_clt_mutex);
static LIST_HEAD(ibnbd_clt_sessions);
static LIST_HEAD(ibnbd_clt_devs);
static DEFINE_IDA(ibnbd_clt_ida);
static struct class *ibnbd_clt_class;
static struct device *ibnbd_clt_ctl;
static struct kobject *ibnbd_clt_devs_kobj;
/* unmaps running (sysfs or module exit), which the exit waits for */
static atomic_t ibnbd_clt_unmapping = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(ibnbd_clt_unmap_wq);

/* ---------------------------------------------------------------- */
/* Control messages                                                  */

struct ibnbd_clt_ctrl {
	struct completion done;
	int err;
};

static void ibnbd_clt_ctrl_conf(void *priv, int err)
{
	struct ibnbd_clt_ctrl *ctl = priv;

	ctl->err = err;
	complete(&ctl->done);
}

/* One synchronous control request; its answer lands in @rsp (kmalloc'ed). */
static int ibnbd_clt_ctrl(struct ibnbd_clt_sess *sess, enum ibtrs_clt_dir dir,
			  const void *msg, size_t len, void *rsp, u32 rsplen)
{
	struct ibnbd_clt_ctrl ctl;
	struct scatterlist sg;
	int permit, ret, tries = 0;

	while ((permit = ibtrs_clt_get_permit(sess->trs)) < 0) {
		if (++tries > 10000)
			return -EBUSY;
		usleep_range(500, 1000);
	}
	init_completion(&ctl.done);
	if (rsp)
		sg_init_one(&sg, rsp, rsplen);
	ret = ibtrs_clt_request(sess->trs, dir, permit, raw_smp_processor_id(),
				msg, len,
				rsp ? &sg : NULL, rsp ? 1 : 0, rsp ? rsplen : 0,
				ibnbd_clt_ctrl_conf, &ctl);
	if (!ret) {
		/*
		 * A live server that never answers: fail the path (the
		 * request is re-sent), then give up. Once given up the
		 * transport ends the request after the path's teardown, and
		 * @ctl must live until then.
		 */
		unsigned long tmo = msecs_to_jiffies(io_timeout_ms);

		if (!wait_for_completion_timeout(&ctl.done, tmo)) {
			ibtrs_clt_request_timeout(sess->trs, permit, &ctl, false);
			if (!wait_for_completion_timeout(&ctl.done, tmo)) {
				ibtrs_clt_request_timeout(sess->trs, permit,
							  &ctl, true);
				wait_for_completion(&ctl.done);
			}
		}
		ret = ctl.err;
	}
	ibtrs_clt_put_permit(sess->trs, permit);
	return ret;
}

static struct ibnbd_clt_sess *ibnbd_clt_sess_find(const char *name)
{
	struct ibnbd_clt_sess *sess;

	list_for_each_entry(sess, &ibnbd_clt_sessions, list)
		if (!strcmp(ibtrs_clt_sessname(sess->trs), name))
			return sess;
	return NULL;
}

/* Under ibnbd_clt_mutex. */
static struct ibnbd_clt_sess *ibnbd_clt_sess_get(const char *name,
						 const struct ibtrs_clt_addr *paths,
						 int npaths)
{
	struct ibnbd_msg_sess_info_rsp *rsp;
	struct ibnbd_msg_sess_info si;
	struct ibnbd_clt_sess *sess;
	int ret;

	sess = ibnbd_clt_sess_find(name);
	if (sess) {
		sess->refs++;
		return sess;
	}
	sess = kzalloc(sizeof(*sess), GFP_KERNEL);
	rsp = kzalloc(sizeof(*rsp), GFP_KERNEL);
	if (!sess || !rsp) {
		ret = -ENOMEM;
		goto out_free;
	}
	sess->trs = ibtrs_clt_open(name, paths, npaths, port);
	if (IS_ERR(sess->trs)) {
		ret = PTR_ERR(sess->trs);
		pr_err("session %s: cannot connect to the server: %d\n", name,
		       ret);
		goto out_free;
	}
	if (ibtrs_clt_max_usr_len(sess->trs) < IBNBD_MAX_USR_LEN) {
		pr_err("session %s: transport user header too small (%u)\n",
		       name, ibtrs_clt_max_usr_len(sess->trs));
		ret = -EMSGSIZE;
		goto out_close;
	}
	ibnbd_init_sess_info(&si, IBNBD_PROTO_VER_MAJOR);
	ret = ibnbd_clt_ctrl(sess, IBTRS_CLT_READ, &si, sizeof(si), rsp,
			     sizeof(*rsp));
	if (ret) {
		pr_err("session %s: SESS_INFO failed: %d\n", name, ret);
		goto out_close;
	}
	if (ibnbd_validate_sess_info_rsp(rsp, sizeof(*rsp))) {
		pr_err("session %s: bad SESS_INFO answer\n", name);
		ret = -EPROTO;
		goto out_close;
	}
	sess->ver = ibnbd_negotiate_ver(rsp->ver);
	sess->refs = 1;
	list_add(&sess->list, &ibnbd_clt_sessions);
	kfree(rsp);
	return sess;

out_close:
	ibtrs_clt_close(sess->trs);
out_free:
	kfree(rsp);
	kfree(sess);
	return ERR_PTR(ret);
}

/* Under ibnbd_clt_mutex. */
static void ibnbd_clt_sess_put(struct ibnbd_clt_sess *sess)
{
	if (--sess->refs)
		return;
	list_del(&sess->list);
	ibtrs_clt_close(sess->trs);
	kfree(sess);
}

/* ---------------------------------------------------------------- */
/* Block device                                                      */

static int ibnbd_clt_open(struct block_device *bdev, fmode_t mode)
{
	struct ibnbd_clt_dev *dev = bdev->bd_disk->private_data;
	int ret = 0;

	mutex_lock(&dev->lock);
	if (dev->state != IBNBD_CLT_DEV_MAPPED)
		ret = -ENXIO;
	else
		dev->open_cnt++;
	mutex_unlock(&dev->lock);
	return ret;
}

static void ibnbd_clt_release(struct gendisk *disk, fmode_t mode)
{
	struct ibnbd_clt_dev *dev = disk->private_data;

	mutex_lock(&dev->lock);
	dev->open_cnt--;
	mutex_unlock(&dev->lock);
}

static const struct block_device_operations ibnbd_clt_fops = {
	.owner = THIS_MODULE,
	.open = ibnbd_clt_open,
	.release = ibnbd_clt_release,
};

#define IBNBD_CLT_REOPEN_TRIES	30

static void ibnbd_clt_io_conf(void *priv, int err)
{
	struct ibnbd_clt_iu *iu = priv;
	struct ibnbd_clt_dev *dev = iu->dev;

	ibtrs_clt_put_permit(dev->sess->trs, iu->permit);
	if (err == -ESTALE && !test_bit(IBNBD_CLT_DEV_DYING, &dev->flags)) {
		iu->stale_retry = true;
		/*
		 * Sent with a handle a reopen has replaced since (it was in
		 * flight meanwhile): send it again with the new one. Else the
		 * server lost our handle: reopen, then retry this IO.
		 */
		if (iu->gen == (u32)atomic_read(&dev->gen) &&
		    !atomic_xchg(&dev->stale, 1))
			queue_delayed_work(system_long_wq, &dev->reopen_work, 0);
		blk_mq_requeue_request(blk_mq_rq_from_pdu(iu), true);
		return;
	}
	iu->err = err;
	blk_mq_complete_request(blk_mq_rq_from_pdu(iu));
}

static void ibnbd_clt_complete_rq(struct request *rq)
{
	struct ibnbd_clt_iu *iu = blk_mq_rq_to_pdu(rq);

	blk_mq_end_request(rq, errno_to_blk_status(iu->err));
}

static blk_status_t ibnbd_clt_queue_rq(struct blk_mq_hw_ctx *hctx,
				       const struct blk_mq_queue_data *bd)
{
	struct request *rq = bd->rq;
	struct ibnbd_clt_dev *dev = rq->q->queuedata;
	struct ibnbd_clt_iu *iu = blk_mq_rq_to_pdu(rq);
	enum ibtrs_clt_dir dir = IBTRS_CLT_WRITE;
	unsigned int nents = 0;
	u32 rw, len = 0;
	u64 sector = 0;
	int ret;

	switch (req_op(rq)) {
	case REQ_OP_READ:
		rw = IBNBD_OP_READ;
		dir = IBTRS_CLT_READ;
		break;
	case REQ_OP_WRITE:
		rw = IBNBD_OP_WRITE;
		break;
	case REQ_OP_FLUSH:
		rw = IBNBD_OP_FLUSH;
		break;
	case REQ_OP_DISCARD:
		rw = IBNBD_OP_DISCARD;
		break;
	case REQ_OP_WRITE_ZEROES:
		rw = IBNBD_OP_WRITE_ZEROES;
		if (rq->cmd_flags & REQ_NOUNMAP)
			rw |= IBNBD_F_NOUNMAP;
		break;
	default:
		return BLK_STS_NOTSUPP;
	}
	if (rq->cmd_flags & REQ_FUA)
		rw |= IBNBD_F_FUA;
	if ((rq->cmd_flags & REQ_PREFLUSH) && req_op(rq) == REQ_OP_WRITE)
		rw |= IBNBD_F_PREFLUSH;
	if (rq->cmd_flags & REQ_SYNC)
		rw |= IBNBD_F_SYNC;

	if (test_bit(IBNBD_CLT_DEV_DYING, &dev->flags))
		return BLK_STS_IOERR;		/* a forced unmap */
	if (atomic_read(&dev->stale))
		return BLK_STS_RESOURCE;	/* until the reopen */
	if (iu->stale_retry) {
		iu->stale_retry = false;
		if (READ_ONCE(dev->reopen_err))
			return BLK_STS_IOERR;	/* the reopen gave up */
	}
	iu->permit = ibtrs_clt_get_permit(dev->sess->trs);
	if (iu->permit < 0)
		return BLK_STS_RESOURCE;	/* rerun after a delay */
	iu->dev = dev;
	iu->err = 0;
	iu->timeouts = 0;
	blk_mq_start_request(rq);
	/*
	 * A flush has no range: the block layer leaves its sector at -1, the
	 * protocol wants 0 and no length.
	 */
	if (req_op(rq) != REQ_OP_FLUSH) {
		sector = blk_rq_pos(rq);
		len = blk_rq_bytes(rq);
	}
	if (blk_rq_nr_phys_segments(rq) &&
	    (req_op(rq) == REQ_OP_READ || req_op(rq) == REQ_OP_WRITE)) {
		sg_init_table(iu->sg, dev->max_segs);
		nents = blk_rq_map_sg(rq->q, rq, iu->sg);
	}
	/* the generation first: a reopen writes the handle, then the gen */
	iu->gen = atomic_read_acquire(&dev->gen);
	ibnbd_init_io(&iu->msg, READ_ONCE(dev->device_id), sector, rw, len, 0);
	/* the hardware queue's connection of the chosen path */
	ret = ibtrs_clt_request(dev->sess->trs, dir, iu->permit,
				hctx->queue_num, &iu->msg,
				sizeof(iu->msg), nents ? iu->sg : NULL, nents,
				nents ? len : 0, ibnbd_clt_io_conf, iu);
	if (ret) {
		ibtrs_clt_put_permit(dev->sess->trs, iu->permit);
		if (ret == -EAGAIN || ret == -ENOMEM)
			return BLK_STS_RESOURCE;
		pr_err_ratelimited("%s: request failed: %d\n",
				   dev->disk->disk_name, ret);
		return BLK_STS_IOERR;
	}
	return BLK_STS_OK;
}

/*
 * The transport ends every request (an answer, or its path's end), so the
 * timer only starts error recovery: the first timeout fails the request's
 * path (it is re-sent, on another path or after the reconnect), the
 * second gives up on it (-ETIMEDOUT after the path's teardown). Both ways
 * the request is still the transport's: wait for it.
 */
static enum blk_eh_timer_return ibnbd_clt_timeout(struct request *rq)
{
	struct ibnbd_clt_iu *iu = blk_mq_rq_to_pdu(rq);
	struct ibnbd_clt_dev *dev = iu->dev;
	bool final = ++iu->timeouts > 1;

	pr_warn_ratelimited("%s: request (sector %llu, %u bytes) not answered in %u ms%s\n",
			    dev->disk->disk_name, blk_rq_pos(rq),
			    blk_rq_bytes(rq), io_timeout_ms,
			    final ? ", again: failing it" : ": failing its path");
	ibtrs_clt_request_timeout(dev->sess->trs, iu->permit, iu, final);
	return BLK_EH_RESET_TIMER;
}

static const struct blk_mq_ops ibnbd_clt_mq_ops = {
	.queue_rq = ibnbd_clt_queue_rq,
	.complete = ibnbd_clt_complete_rq,
	.timeout = ibnbd_clt_timeout,
};

static void ibnbd_clt_set_limits(struct ibnbd_clt_dev *dev)
{
	const struct ibnbd_msg_open_rsp *rsp = &dev->rsp;
	struct request_queue *q = dev->disk->queue;
	u32 flags = le32_to_cpu(rsp->dev_flags);
	u32 max_sectors = min(le32_to_cpu(rsp->max_hw_sectors),
			      ibtrs_clt_max_io_size(dev->sess->trs) >>
			      SECTOR_SHIFT);
	u16 pbs = le16_to_cpu(rsp->physical_block_size);
	u32 max_discard = le32_to_cpu(rsp->max_discard_sectors);
	u32 max_wz = le32_to_cpu(rsp->max_write_zeroes_sectors);

	blk_queue_logical_block_size(q, le16_to_cpu(rsp->logical_block_size));
	blk_queue_physical_block_size(q, pbs ? pbs :
				      le16_to_cpu(rsp->logical_block_size));
	blk_queue_max_hw_sectors(q, max_sectors);
	blk_queue_max_segments(q, dev->max_segs);
	/* a read buffer is one FRWR registration: page-sized gaps only */
	blk_queue_virt_boundary(q, PAGE_SIZE - 1);
	blk_queue_write_cache(q, flags & IBNBD_DEV_FLUSH,
			      flags & IBNBD_DEV_FUA);
	if ((flags & IBNBD_DEV_DISCARD) && max_discard) {
		blk_queue_max_discard_sectors(q, max_discard);
		q->limits.discard_granularity =
			le32_to_cpu(rsp->discard_granularity);
		q->limits.discard_alignment =
			le32_to_cpu(rsp->discard_alignment);
	}
	if ((flags & IBNBD_DEV_WRITE_ZEROES) && max_wz)
		blk_queue_max_write_zeroes_sectors(q, max_wz);
	if (flags & IBNBD_DEV_ROTATIONAL)
		blk_queue_flag_clear(QUEUE_FLAG_NONROT, q);
	else
		blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	blk_queue_rq_timeout(q, msecs_to_jiffies(io_timeout_ms));
	set_capacity(dev->disk, le64_to_cpu(rsp->nsectors));
	if ((flags & IBNBD_DEV_READ_ONLY) || rsp->access_mode == IBNBD_ACCESS_RO)
		set_disk_ro(dev->disk, true);
}

static int ibnbd_clt_create_disk(struct ibnbd_clt_dev *dev)
{
	int ret;

	dev->max_segs = ibtrs_clt_max_segments(dev->sess->trs);
	dev->tag_set.ops = &ibnbd_clt_mq_ops;
	/* one hardware queue per connection of a path */
	dev->tag_set.nr_hw_queues = ibtrs_clt_nr_cons(dev->sess->trs);
	dev->tag_set.queue_depth = ibtrs_clt_queue_depth(dev->sess->trs);
	dev->tag_set.numa_node = NUMA_NO_NODE;
	dev->tag_set.cmd_size = sizeof(struct ibnbd_clt_iu) +
				dev->max_segs * sizeof(struct scatterlist);
	dev->tag_set.flags = BLK_MQ_F_SHOULD_MERGE;
	dev->tag_set.driver_data = dev;
	ret = blk_mq_alloc_tag_set(&dev->tag_set);
	if (ret)
		return ret;
	dev->disk = blk_mq_alloc_disk(&dev->tag_set, dev);
	if (IS_ERR(dev->disk)) {
		ret = PTR_ERR(dev->disk);
		dev->disk = NULL;
		goto out_free_tag_set;
	}
	dev->disk->fops = &ibnbd_clt_fops;
	dev->disk->private_data = dev;
	snprintf(dev->disk->disk_name, DISK_NAME_LEN, "ibnbd%d", dev->idx);
	ibnbd_clt_set_limits(dev);
	ret = add_disk(dev->disk);
	if (ret)
		goto out_put_disk;
	return 0;

out_put_disk:
	put_disk(dev->disk);
	dev->disk = NULL;
out_free_tag_set:
	blk_mq_free_tag_set(&dev->tag_set);
	return ret;
}

/* ---------------------------------------------------------------- */
/* Device sysfs                                                      */

#define to_ibnbd_dev(k) container_of(k, struct ibnbd_clt_dev, kobj)

static ssize_t state_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	struct ibnbd_clt_dev *dev = to_ibnbd_dev(kobj);

	return sysfs_emit(buf, "%s\n", dev->state == IBNBD_CLT_DEV_MAPPED ?
			  (ibtrs_clt_paths_up(dev->sess->trs) ? "open" :
			   "disconnected") : "unmapping");
}

static ssize_t session_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  ibtrs_clt_sessname(to_ibnbd_dev(kobj)->sess->trs));
}

static ssize_t mapping_path_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", to_ibnbd_dev(kobj)->path);
}

static ssize_t paths_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	return ibtrs_clt_paths_show(to_ibnbd_dev(kobj)->sess->trs, buf,
				    PAGE_SIZE);
}

static ssize_t unmap_device_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "Usage: echo <normal|force> > %s\n",
			  attr->attr.name);
}

static int ibnbd_clt_unmap(struct ibnbd_clt_dev *dev, bool force,
			   const struct attribute *self);

static ssize_t unmap_device_store(struct kobject *kobj,
				  struct kobj_attribute *attr, const char *buf,
				  size_t count)
{
	struct ibnbd_clt_dev *dev = to_ibnbd_dev(kobj);
	bool force;
	int ret;

	if (sysfs_streq(buf, "normal")) {
		force = false;
	} else if (sysfs_streq(buf, "force")) {
		force = true;
	} else {
		pr_err("unmap_device: unknown mode '%s' (normal or force)\n",
		       buf);
		return -EINVAL;
	}
	ret = ibnbd_clt_unmap(dev, force, &attr->attr);
	return ret ? ret : count;
}

static struct kobj_attribute ibnbd_clt_state_attr = __ATTR_RO(state);
static struct kobj_attribute ibnbd_clt_session_attr = __ATTR_RO(session);
static struct kobj_attribute ibnbd_clt_mapping_path_attr =
	__ATTR_RO(mapping_path);
static struct kobj_attribute ibnbd_clt_paths_attr = __ATTR_RO(paths);
static struct kobj_attribute ibnbd_clt_unmap_attr =
	__ATTR(unmap_device, 0644, unmap_device_show, unmap_device_store);

static struct attribute *ibnbd_clt_dev_attrs[] = {
	&ibnbd_clt_state_attr.attr,
	&ibnbd_clt_session_attr.attr,
	&ibnbd_clt_mapping_path_attr.attr,
	&ibnbd_clt_paths_attr.attr,
	&ibnbd_clt_unmap_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(ibnbd_clt_dev);

static void ibnbd_clt_dev_release(struct kobject *kobj)
{
	kfree(to_ibnbd_dev(kobj));
}

static struct kobj_type ibnbd_clt_dev_ktype = {
	.sysfs_ops = &kobj_sysfs_ops,
	.release = ibnbd_clt_dev_release,
	.default_groups = ibnbd_clt_dev_groups,
};

/* ---------------------------------------------------------------- */
/* Map / unmap                                                       */

static int ibnbd_clt_close_remote(struct ibnbd_clt_dev *dev)
{
	struct ibnbd_msg_close msg;

	ibnbd_init_close(&msg, dev->device_id);
	return ibnbd_clt_ctrl(dev->sess, IBTRS_CLT_WRITE, &msg, sizeof(msg),
			      NULL, 0);
}

static bool ibnbd_clt_count_started(struct request *rq, void *data)
{
	unsigned int *n = data;

	if (blk_mq_request_started(rq))
		(*n)++;
	return true;
}

static bool ibnbd_clt_abort_rq(struct request *rq, void *data)
{
	struct ibnbd_clt_iu *iu = blk_mq_rq_to_pdu(rq);
	struct ibnbd_clt_dev *dev = data;

	if (blk_mq_request_started(rq))
		ibtrs_clt_request_timeout(dev->sess->trs, iu->permit, iu, true);
	return true;
}

/*
 * A forced unmap: new IO fails (IBNBD_CLT_DEV_DYING), IO in flight gets
 * a second to end by itself, the rest is given up (its paths fail, it ends
 * -ETIMEDOUT after their teardown), so that del_gendisk() does not wait
 * for a server that never answers.
 */
static void ibnbd_clt_abort_inflight(struct ibnbd_clt_dev *dev)
{
	unsigned int n;
	int i;

	for (i = 0; i < 10; i++) {
		n = 0;
		blk_mq_tagset_busy_iter(&dev->tag_set, ibnbd_clt_count_started,
					&n);
		if (!n)
			return;
		msleep(100);
	}
	pr_warn("%s: forced unmap: failing %u requests in flight\n",
		dev->disk->disk_name, n);
	blk_mq_tagset_busy_iter(&dev->tag_set, ibnbd_clt_abort_rq, dev);
}

/*
 * @self: the sysfs attribute being written (unmap_device), removed first
 * so that removing the directory does not wait for our own write.
 */
static int ibnbd_clt_unmap(struct ibnbd_clt_dev *dev, bool force,
			   const struct attribute *self)
{
	int ret;

	mutex_lock(&dev->lock);
	if (dev->state != IBNBD_CLT_DEV_MAPPED) {
		mutex_unlock(&dev->lock);
		return -EALREADY;
	}
	if (dev->open_cnt && !force) {
		pr_err("%s: in use (%d opens); unmap_device force\n",
		       dev->disk->disk_name, dev->open_cnt);
		mutex_unlock(&dev->lock);
		return -EBUSY;
	}
	dev->state = IBNBD_CLT_DEV_UNMAPPING;
	atomic_inc(&ibnbd_clt_unmapping);
	mutex_unlock(&dev->lock);
	mutex_lock(&ibnbd_clt_mutex);
	list_del(&dev->list);
	mutex_unlock(&ibnbd_clt_mutex);

	if (self)
		sysfs_remove_file_self(&dev->kobj, self);
	kobject_del(&dev->kobj);
	/*
	 * No reopen from now on: ESTALE answers end their IO, a queued
	 * reopen lets its IO go. IO still in flight (a force) ends
	 * before del_gendisk() returns; a reopen queued by one of those
	 * completions meanwhile is cancelled after it.
	 */
	set_bit(IBNBD_CLT_DEV_DYING, &dev->flags);
	cancel_delayed_work_sync(&dev->reopen_work);
	atomic_set(&dev->stale, 0);
	blk_mq_run_hw_queues(dev->disk->queue, true);
	if (force)
		ibnbd_clt_abort_inflight(dev);
	del_gendisk(dev->disk);
	cancel_delayed_work_sync(&dev->reopen_work);
	ret = ibnbd_clt_close_remote(dev);
	if (ret)
		pr_warn("%s: CLOSE of %s failed: %d\n", dev->disk->disk_name,
			dev->path, ret);
	pr_info("%s: unmapped %s\n", dev->disk->disk_name, dev->path);
	put_disk(dev->disk);
	blk_mq_free_tag_set(&dev->tag_set);
	mutex_lock(&ibnbd_clt_mutex);
	ibnbd_clt_sess_put(dev->sess);
	mutex_unlock(&ibnbd_clt_mutex);
	ida_free(&ibnbd_clt_ida, dev->idx);
	kobject_put(&dev->kobj);
	if (atomic_dec_and_test(&ibnbd_clt_unmapping))
		wake_up(&ibnbd_clt_unmap_wq);
	return 0;
}

static int ibnbd_clt_open_remote(struct ibnbd_clt_dev *dev)
{
	struct ibnbd_msg_open_rsp *rsp;
	struct ibnbd_msg_open *msg;
	int ret, e;

	msg = kzalloc(sizeof(*msg), GFP_KERNEL);
	rsp = kzalloc(sizeof(*rsp), GFP_KERNEL);
	if (!msg || !rsp) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = ibnbd_init_open(msg, dev->mode, dev->path);
	if (ret) {
		pr_err("map_device: bad device_path '%s'\n", dev->path);
		goto out_free;
	}
	ret = ibnbd_clt_ctrl(dev->sess, IBTRS_CLT_READ, msg, sizeof(*msg), rsp,
			     sizeof(*rsp));
	if (ret) {
		pr_err("OPEN of %s failed: %d\n", dev->path, ret);
		goto out_free;
	}
	if (ibnbd_validate_open_rsp(rsp, sizeof(*rsp))) {
		pr_err("OPEN of %s: malformed answer\n", dev->path);
		ret = -EPROTO;
		goto out_free;
	}
	e = le32_to_cpu(rsp->error);
	if (e) {
		pr_err("server refused to open %s (%s): %s (%d)\n", dev->path,
		       ibnbd_access_mode_name(dev->mode),
		       rsp->reason[0] ? rsp->reason : "no reason given", e);
		ret = e > 0 && e <= MAX_ERRNO ? -e : -EIO;
		goto out_free;
	}
	dev->rsp = *rsp;
	WRITE_ONCE(dev->device_id, le32_to_cpu(rsp->device_id));
	ret = 0;
out_free:
	kfree(msg);
	kfree(rsp);
	return ret;
}

static void ibnbd_clt_reopen_work(struct work_struct *work)
{
	struct ibnbd_clt_dev *dev = container_of(to_delayed_work(work),
						 struct ibnbd_clt_dev,
						 reopen_work);
	struct ibnbd_msg_sess_info_rsp *rsp;
	struct ibnbd_msg_sess_info si;
	u64 nsectors = le64_to_cpu(dev->rsp.nsectors);
	int ret = -ENOMEM;

	if (test_bit(IBNBD_CLT_DEV_DYING, &dev->flags)) {
		ret = -ENODEV;	/* unmapped meanwhile: let the IO fail */
		goto out_resume;
	}
	rsp = kzalloc(sizeof(*rsp), GFP_KERNEL);
	if (rsp) {
		ibnbd_init_sess_info(&si, IBNBD_PROTO_VER_MAJOR);
		ret = ibnbd_clt_ctrl(dev->sess, IBTRS_CLT_READ, &si,
				     sizeof(si), rsp, sizeof(*rsp));
		if (!ret && ibnbd_validate_sess_info_rsp(rsp, sizeof(*rsp)))
			ret = -EPROTO;
		kfree(rsp);
	}
	if (!ret)
		ret = ibnbd_clt_open_remote(dev);
	if (!ret && le64_to_cpu(dev->rsp.nsectors) != nsectors) {
		pr_err("%s: %s changed size on the server\n",
		       dev->disk->disk_name, dev->path);
		ret = -ENXIO;
	}
	if (ret) {
		/*
		 * -EBUSY: the device's previous writer (often our own old
		 * session, its IO draining on the server) still holds it;
		 * transport errors may pass. Anything else is the server's
		 * final word.
		 */
		if ((ret == -EBUSY || ret == -ENOTCONN || ret == -ETIMEDOUT ||
		     ret == -EIO || ret == -EAGAIN || ret == -ESTALE) &&
		    ++dev->reopen_tries < IBNBD_CLT_REOPEN_TRIES) {
			queue_delayed_work(system_long_wq, &dev->reopen_work,
					   HZ);
			return;
		}
		pr_err("%s: cannot reopen %s: %d; the IO that waited fails\n",
		       dev->disk->disk_name, dev->path, ret);
	} else {
		pr_info("%s: reopened %s, handle 0x%x\n", dev->disk->disk_name,
			dev->path, dev->device_id);
		/* after the new handle (ibnbd_clt_open_remote()) */
		atomic_inc_return_release(&dev->gen);
	}
out_resume:
	/* the next -ESTALE starts a fresh reopen */
	dev->reopen_tries = 0;
	WRITE_ONCE(dev->reopen_err, ret);
	atomic_set(&dev->stale, 0);
	blk_mq_run_hw_queues(dev->disk->queue, true);
}

static ssize_t map_device_store(struct device *d, struct device_attribute *attr,
				const char *buf, size_t count)
{
	struct ibnbd_clt_map_opts *o;
	struct ibnbd_clt_dev *dev;
	char *s;
	int ret;

	o = kzalloc(sizeof(*o), GFP_KERNEL);
	s = kstrndup(buf, count, GFP_KERNEL);
	if (!o || !s) {
		ret = -ENOMEM;
		goto out_free_opts;
	}
	ret = ibnbd_clt_parse(s, o);
	if (ret)
		goto out_free_opts;
	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev) {
		ret = -ENOMEM;
		goto out_free_opts;
	}
	kobject_init(&dev->kobj, &ibnbd_clt_dev_ktype);
	mutex_init(&dev->lock);
	INIT_DELAYED_WORK(&dev->reopen_work, ibnbd_clt_reopen_work);
	strscpy(dev->path, o->path, sizeof(dev->path));
	dev->mode = o->mode;
	ret = ida_alloc(&ibnbd_clt_ida, GFP_KERNEL);
	if (ret < 0)
		goto out_put_dev;
	dev->idx = ret;

	mutex_lock(&ibnbd_clt_mutex);
	dev->sess = ibnbd_clt_sess_get(o->sessname, o->paths, o->npaths);
	if (IS_ERR(dev->sess)) {
		ret = PTR_ERR(dev->sess);
		goto out_unlock;
	}
	ret = ibnbd_clt_open_remote(dev);
	if (ret)
		goto out_put_sess;
	ret = ibnbd_clt_create_disk(dev);
	if (ret)
		goto out_close_remote;
	ret = kobject_add(&dev->kobj, ibnbd_clt_devs_kobj, "%s",
			  dev->disk->disk_name);
	if (ret)
		goto out_del_disk;
	dev->state = IBNBD_CLT_DEV_MAPPED;
	list_add_tail(&dev->list, &ibnbd_clt_devs);
	mutex_unlock(&ibnbd_clt_mutex);
	pr_info("%s: mapped %s (%s) of session %s: %llu sectors, lbs %u, max %u sectors, %u segments, flags 0x%x\n",
		dev->disk->disk_name, dev->path,
		ibnbd_access_mode_name(dev->rsp.access_mode), o->sessname,
		le64_to_cpu(dev->rsp.nsectors),
		le16_to_cpu(dev->rsp.logical_block_size),
		queue_max_hw_sectors(dev->disk->queue), dev->max_segs,
		le32_to_cpu(dev->rsp.dev_flags));
	kfree(s);
	kfree(o);
	return count;

out_del_disk:
	del_gendisk(dev->disk);
	put_disk(dev->disk);
	blk_mq_free_tag_set(&dev->tag_set);
out_close_remote:
	ibnbd_clt_close_remote(dev);
out_put_sess:
	ibnbd_clt_sess_put(dev->sess);
out_unlock:
	mutex_unlock(&ibnbd_clt_mutex);
	ida_free(&ibnbd_clt_ida, dev->idx);
out_put_dev:
	kobject_put(&dev->kobj);
out_free_opts:
	kfree(s);
	kfree(o);
	return ret;
}

static ssize_t map_device_show(struct device *d, struct device_attribute *attr,
			       char *buf)
{
	return sysfs_emit(buf, "Usage: echo \"%s\" > %s\n",
			  "sessname=<name> path=<[src@]dst> [path=...] device_path=<path> [access_mode=<ro|rw|migration>]",
			  attr->attr.name);
}

static DEVICE_ATTR_RW(map_device);

static int __init ibnbd_clt_init(void)
{
	int ret;

	ibnbd_clt_class = class_create(THIS_MODULE, "ibnbd-client");
	if (IS_ERR(ibnbd_clt_class))
		return PTR_ERR(ibnbd_clt_class);
	ibnbd_clt_ctl = device_create(ibnbd_clt_class, NULL, MKDEV(0, 0), NULL,
				      "ctl");
	if (IS_ERR(ibnbd_clt_ctl)) {
		ret = PTR_ERR(ibnbd_clt_ctl);
		goto out_destroy_class;
	}
	ibnbd_clt_devs_kobj = kobject_create_and_add("devices",
						     &ibnbd_clt_ctl->kobj);
	if (!ibnbd_clt_devs_kobj) {
		ret = -ENOMEM;
		goto out_destroy_ctl;
	}
	ret = device_create_file(ibnbd_clt_ctl, &dev_attr_map_device);
	if (ret)
		goto out_put_devs;
	return 0;

out_put_devs:
	kobject_put(ibnbd_clt_devs_kobj);
out_destroy_ctl:
	device_destroy(ibnbd_clt_class, MKDEV(0, 0));
out_destroy_class:
	class_destroy(ibnbd_clt_class);
	return ret;
}

static void __exit ibnbd_clt_exit(void)
{
	struct ibnbd_clt_dev *dev;

	device_remove_file(ibnbd_clt_ctl, &dev_attr_map_device);
	for (;;) {
		mutex_lock(&ibnbd_clt_mutex);
		dev = list_first_entry_or_null(&ibnbd_clt_devs,
					       struct ibnbd_clt_dev, list);
		if (dev)	/* a sysfs unmap may free it meanwhile */
			kobject_get(&dev->kobj);
		mutex_unlock(&ibnbd_clt_mutex);
		if (!dev)
			break;
		/* -EALREADY: a sysfs unmap has it, and takes it off the list */
		if (ibnbd_clt_unmap(dev, true, NULL) == -EALREADY)
			msleep(20);
		kobject_put(&dev->kobj);
	}
	wait_event(ibnbd_clt_unmap_wq, !atomic_read(&ibnbd_clt_unmapping));
	WARN_ON(!list_empty(&ibnbd_clt_sessions));
	kobject_put(ibnbd_clt_devs_kobj);
	device_destroy(ibnbd_clt_class, MKDEV(0, 0));
	class_destroy(ibnbd_clt_class);
	ida_destroy(&ibnbd_clt_ida);
}

module_init(ibnbd_clt_init);
module_exit(ibnbd_clt_exit);
MODULE_DESCRIPTION("IBNBD client: block devices over IBTRS");
MODULE_LICENSE("GPL");
