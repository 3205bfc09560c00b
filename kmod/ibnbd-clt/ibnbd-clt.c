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
 *
 * This file: module parameters, sessions and control messages, device
 * sysfs, map and unmap, the reopen after -ESTALE. The block device (tag
 * set, queue_rq, polling, queue mapping) is ibnbd-clt-blk.c; the shared
 * structures ibnbd-clt.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/blkdev.h>
#include <linux/blk-mq.h>
#include <linux/idr.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/semaphore.h>

#include "ibnbd-clt.h"
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
uint ibnbd_clt_io_timeout_ms = 30000;
module_param_named(io_timeout_ms, ibnbd_clt_io_timeout_ms, uint, 0444);
MODULE_PARM_DESC(io_timeout_ms, "request timeout (default 30000); the second one fails the request");

/*
 * Hardware queues for polled IO (io_uring IOPOLL, preadv2 RWF_HIPRI) per
 * session, each on a polled connection of every path.
 */
uint ibnbd_clt_poll_queues;
module_param_named(poll_queues, ibnbd_clt_poll_queues, uint, 0444);
MODULE_PARM_DESC(poll_queues, "polled hardware queues per session (default 0)");

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

static void ibnbd_clt_ctrl_conf(void *priv, int err, void *batch)
{
	struct ibnbd_clt_ctrl *ctl = priv;

	ctl->err = err;
	complete(&ctl->done);
}

/* A chunk id for a control message (sleeps until one is free). */
static int ibnbd_clt_ctl_id_get(struct ibnbd_clt_sess *sess)
{
	int i;

	/* each control message waits at most two timeouts */
	if (down_timeout(&sess->ctl_sem, 3 * msecs_to_jiffies(ibnbd_clt_io_timeout_ms)))
		return -EBUSY;
	for (i = 0; i < IBNBD_CLT_CTL_IDS; i++)
		if (!test_and_set_bit(i, &sess->ctl_busy))
			return sess->ctl_base + i;
	up(&sess->ctl_sem);
	WARN_ON_ONCE(1);	/* the semaphore counts the bits */
	return -EBUSY;
}

static void ibnbd_clt_ctl_id_put(struct ibnbd_clt_sess *sess, int id)
{
	clear_bit(id - sess->ctl_base, &sess->ctl_busy);
	up(&sess->ctl_sem);
}

/* One synchronous control request; its answer lands in @rsp (kmalloc'ed). */
static int ibnbd_clt_ctrl(struct ibnbd_clt_sess *sess, enum ibtrs_clt_dir dir,
			  const void *msg, size_t len, void *rsp, u32 rsplen)
{
	struct ibnbd_clt_ctrl ctl;
	struct scatterlist sg;
	int id, ret;

	id = ibnbd_clt_ctl_id_get(sess);
	if (id < 0)
		return id;
	init_completion(&ctl.done);
	if (rsp)
		sg_init_one(&sg, rsp, rsplen);
	/* beyond the polled hints: an interrupt-driven connection */
	ret = ibtrs_clt_request(sess->trs, dir, id,
				ibtrs_clt_nr_cons(sess->trs) +
				ibtrs_clt_nr_poll(sess->trs) +
				raw_smp_processor_id(), msg, len,
				rsp ? &sg : NULL, rsp ? 1 : 0, rsp ? rsplen : 0,
				ibnbd_clt_ctrl_conf, &ctl);
	if (!ret) {
		/*
		 * A live server that never answers: fail the path (the
		 * request is re-sent), then give up. Once given up the
		 * transport ends the request after the path's teardown, and
		 * @ctl must live until then.
		 */
		unsigned long tmo = msecs_to_jiffies(ibnbd_clt_io_timeout_ms);

		if (!wait_for_completion_timeout(&ctl.done, tmo)) {
			ibtrs_clt_request_timeout(sess->trs, id, &ctl, false);
			if (!wait_for_completion_timeout(&ctl.done, tmo)) {
				ibtrs_clt_request_timeout(sess->trs, id,
							  &ctl, true);
				wait_for_completion(&ctl.done);
			}
		}
		ret = ctl.err;
	}
	ibnbd_clt_ctl_id_put(sess, id);
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
	sess->trs = ibtrs_clt_open(name, paths, npaths, port, IBNBD_MAX_USR_LEN,
				   ibnbd_clt_poll_queues);
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
	if (ibtrs_clt_queue_depth(sess->trs) <= IBNBD_CLT_CTL_IDS) {
		pr_err("session %s: server queue depth %u too small\n", name,
		       ibtrs_clt_queue_depth(sess->trs));
		ret = -EINVAL;
		goto out_close;
	}
	sess->ctl_base = ibtrs_clt_queue_depth(sess->trs) - IBNBD_CLT_CTL_IDS;
	sema_init(&sess->ctl_sem, IBNBD_CLT_CTL_IDS);
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
	ret = ibnbd_clt_alloc_tag_set(sess);
	if (ret) {
		pr_err("session %s: cannot allocate its tag set: %d\n", name,
		       ret);
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
	/* every disk of the tag set is gone */
	blk_mq_free_tag_set(&sess->tag_set);
	ibtrs_clt_close(sess->trs);
	kfree(sess);
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

static ssize_t busy_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%ld\n",
			  atomic_long_read(&to_ibnbd_dev(kobj)->busy));
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
static struct kobj_attribute ibnbd_clt_busy_attr = __ATTR_RO(busy);
static struct kobj_attribute ibnbd_clt_unmap_attr =
	__ATTR(unmap_device, 0644, unmap_device_show, unmap_device_store);

static struct attribute *ibnbd_clt_dev_attrs[] = {
	&ibnbd_clt_state_attr.attr,
	&ibnbd_clt_session_attr.attr,
	&ibnbd_clt_mapping_path_attr.attr,
	&ibnbd_clt_paths_attr.attr,
	&ibnbd_clt_busy_attr.attr,
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

/* What the busy iterators of the session's tag set count for one device. */
struct ibnbd_clt_iter {
	struct ibnbd_clt_dev *dev;
	unsigned int n;
};

static bool ibnbd_clt_count_started(struct request *rq, void *data)
{
	struct ibnbd_clt_iter *it = data;

	if (rq->q->queuedata == it->dev && blk_mq_request_started(rq))
		it->n++;
	return true;
}

static bool ibnbd_clt_abort_rq(struct request *rq, void *data)
{
	struct ibnbd_clt_iu *iu = blk_mq_rq_to_pdu(rq);
	struct ibnbd_clt_iter *it = data;

	if (rq->q->queuedata == it->dev && blk_mq_request_started(rq))
		ibtrs_clt_request_timeout(it->dev->sess->trs, iu->permit, iu,
					  true);
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
	struct ibnbd_clt_iter it = { .dev = dev };
	int i;

	for (i = 0; i < 10; i++) {
		it.n = 0;
		blk_mq_tagset_busy_iter(&dev->sess->tag_set,
					ibnbd_clt_count_started, &it);
		if (!it.n)
			return;
		msleep(100);
	}
	pr_warn("%s: forced unmap: failing %u requests in flight\n",
		dev->disk->disk_name, it.n);
	blk_mq_tagset_busy_iter(&dev->sess->tag_set, ibnbd_clt_abort_rq, &it);
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
		queue_max_hw_sectors(dev->disk->queue), dev->sess->max_segs,
		le32_to_cpu(dev->rsp.dev_flags));
	kfree(s);
	kfree(o);
	return count;

out_del_disk:
	del_gendisk(dev->disk);
	put_disk(dev->disk);
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
