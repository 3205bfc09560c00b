// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibnbd-clt-blk.c - the IBNBD client's block device: one blk-mq tag set per
 * session whose tags are the server's chunk ids (shared by every hardware
 * queue and every device of the session), one hardware queue per
 * connection of a path (completion vector i serves queue i; polled
 * queues last), requests sent as IBTRS requests, completions (batched
 * when polled), timeouts.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/cpumask.h>

#include "ibnbd-clt.h"

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

static void ibnbd_clt_complete_batch(struct io_comp_batch *iob)
{
	blk_mq_end_request_batch(iob);
}

/* @batch: the block layer's io_comp_batch of a poll (ibnbd_clt_poll()). */
static void ibnbd_clt_io_conf(void *priv, int err, void *batch)
{
	struct ibnbd_clt_iu *iu = priv;
	struct ibnbd_clt_dev *dev = iu->dev;
	struct request *rq = blk_mq_rq_from_pdu(iu);

	if (err == -ESTALE && !test_bit(IBNBD_CLT_DEV_DYING, &dev->flags)) {
		iu->stale_retry = true;
		/*
		 * Sent before the device's last (re)open (it was in flight
		 * meanwhile): send it again with the current handle. Else the
		 * server lost our handle: reopen, then retry this IO.
		 */
		if (iu->gen == (u32)atomic_read(&dev->gen) &&
		    !atomic_xchg(&dev->stale, 1))
			queue_delayed_work(system_long_wq, &dev->reopen_work, 0);
		blk_mq_requeue_request(rq, true);
		return;
	}
	iu->err = err;
	if (!blk_mq_add_to_batch(rq, batch, err, ibnbd_clt_complete_batch))
		blk_mq_complete_request(rq);
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
	if (atomic_read(&dev->stale)) {
		atomic_long_inc(&dev->busy);
		return BLK_STS_RESOURCE;	/* until the reopen */
	}
	if (iu->stale_retry) {
		iu->stale_retry = false;
		if (READ_ONCE(dev->reopen_err))
			return BLK_STS_IOERR;	/* the reopen gave up */
	}
	/* the tag is the chunk: a request that has one can be sent */
	iu->permit = rq->tag;
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
		/* the entries it can use, not all max_segs (1 KiB to zero) */
		sg_init_table(iu->sg, blk_rq_nr_phys_segments(rq));
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
		if (ret == -EAGAIN || ret == -ENOMEM) {
			/* no path up now: the block layer runs it again */
			atomic_long_inc(&dev->busy);
			return BLK_STS_RESOURCE;
		}
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
			    blk_rq_bytes(rq), ibnbd_clt_io_timeout_ms,
			    final ? ", again: failing it" : ": failing its path");
	ibtrs_clt_request_timeout(dev->sess->trs, iu->permit, iu, final);
	return BLK_EH_RESET_TIMER;
}

/* blk-mq's .poll of a polled hardware queue (HIPRI, io_uring IOPOLL). */
static int ibnbd_clt_poll(struct blk_mq_hw_ctx *hctx,
			  struct io_comp_batch *iob)
{
	struct ibnbd_clt_sess *sess = hctx->queue->tag_set->driver_data;

	return ibtrs_clt_poll(sess->trs, hctx->queue_num, iob);
}

/*
 * Hardware queue i is connection i of every path: with the RDMA mapping,
 * the CPUs that take completion vector i's interrupts submit on queue i,
 * so an IO completes where it was issued. Devices that do not tell their
 * vectors' affinity (rxe) get blk-mq's default spread.
 */
static void ibnbd_clt_map_one(struct ibnbd_clt_sess *sess,
			      struct blk_mq_queue_map *map, bool rdma)
{
	const struct cpumask *mask;
	unsigned int q, cpu;

	blk_mq_map_queues(map);
	if (!rdma)
		return;
	for (q = 0; q < map->nr_queues; q++)
		if (!ibtrs_clt_con_affinity(sess->trs, q))
			return;
	for (q = 0; q < map->nr_queues; q++) {
		mask = ibtrs_clt_con_affinity(sess->trs, q);
		for_each_cpu(cpu, mask)
			map->mq_map[cpu] = map->queue_offset + q;
	}
}

static void ibnbd_clt_map_queues(struct blk_mq_tag_set *set)
{
	struct ibnbd_clt_sess *sess = set->driver_data;
	int nr_cons = ibtrs_clt_nr_cons(sess->trs);
	int nr_poll = ibtrs_clt_nr_poll(sess->trs);

	set->map[HCTX_TYPE_DEFAULT].nr_queues = nr_cons;
	set->map[HCTX_TYPE_DEFAULT].queue_offset = 0;
	ibnbd_clt_map_one(sess, &set->map[HCTX_TYPE_DEFAULT], true);
	if (set->nr_maps <= HCTX_TYPE_POLL)
		return;
	/* reads share the default queues */
	set->map[HCTX_TYPE_READ].nr_queues = nr_cons;
	set->map[HCTX_TYPE_READ].queue_offset = 0;
	ibnbd_clt_map_one(sess, &set->map[HCTX_TYPE_READ], true);
	set->map[HCTX_TYPE_POLL].nr_queues = nr_poll;
	set->map[HCTX_TYPE_POLL].queue_offset = nr_cons;
	ibnbd_clt_map_one(sess, &set->map[HCTX_TYPE_POLL], false);
}

static const struct blk_mq_ops ibnbd_clt_mq_ops = {
	.queue_rq = ibnbd_clt_queue_rq,
	.complete = ibnbd_clt_complete_rq,
	.timeout = ibnbd_clt_timeout,
	.poll = ibnbd_clt_poll,
	.map_queues = ibnbd_clt_map_queues,
};

/*
 * The session's tag set: the server's queue depth less the control ids,
 * shared by every hardware queue (BLK_MQ_F_TAG_HCTX_SHARED) and every
 * device, so that a tag is a chunk id.
 */
int ibnbd_clt_alloc_tag_set(struct ibnbd_clt_sess *sess)
{
	struct blk_mq_tag_set *set = &sess->tag_set;
	int nr_poll = ibtrs_clt_nr_poll(sess->trs);

	sess->max_segs = ibtrs_clt_max_segments(sess->trs);
	memset(set, 0, sizeof(*set));
	set->ops = &ibnbd_clt_mq_ops;
	set->nr_hw_queues = ibtrs_clt_nr_cons(sess->trs) + nr_poll;
	set->nr_maps = nr_poll ? HCTX_MAX_TYPES : 1;
	set->queue_depth = sess->ctl_base;
	set->numa_node = NUMA_NO_NODE;
	set->cmd_size = sizeof(struct ibnbd_clt_iu) +
			sess->max_segs * sizeof(struct scatterlist);
	/*
	 * With shared tags blk-mq would default to mq-deadline (one lock per
	 * device) at any queue count: "none", as for other multi-queue
	 * devices; a scheduler can be chosen in sysfs.
	 */
	set->flags = BLK_MQ_F_SHOULD_MERGE | BLK_MQ_F_TAG_HCTX_SHARED |
		     BLK_MQ_F_NO_SCHED_BY_DEFAULT;
	set->driver_data = sess;
	return blk_mq_alloc_tag_set(set);
}

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
	blk_queue_max_segments(q, dev->sess->max_segs);
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
	blk_queue_rq_timeout(q, msecs_to_jiffies(ibnbd_clt_io_timeout_ms));
	set_capacity(dev->disk, le64_to_cpu(rsp->nsectors));
	if ((flags & IBNBD_DEV_READ_ONLY) || rsp->access_mode == IBNBD_ACCESS_RO)
		set_disk_ro(dev->disk, true);
}

int ibnbd_clt_create_disk(struct ibnbd_clt_dev *dev)
{
	int ret;

	dev->disk = blk_mq_alloc_disk(&dev->sess->tag_set, dev);
	if (IS_ERR(dev->disk)) {
		ret = PTR_ERR(dev->disk);
		dev->disk = NULL;
		return ret;
	}
	dev->disk->fops = &ibnbd_clt_fops;
	dev->disk->private_data = dev;
	snprintf(dev->disk->disk_name, DISK_NAME_LEN, "ibnbd%d", dev->idx);
	ibnbd_clt_set_limits(dev);
	ret = add_disk(dev->disk);
	if (ret) {
		put_disk(dev->disk);
		dev->disk = NULL;
	}
	return ret;
}
