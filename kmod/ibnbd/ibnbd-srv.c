// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibnbd-srv.c - IBNBD server (ibnbd-server.ko): exports block devices
 * beneath dev_search_path to IBNBD clients over ibtrs-server.ko. The
 * messages (SESS_INFO, OPEN, CLOSE, IO) and their semantics are those of
 * the userspace daemon (server/src/srv_sess.c, srv_io.c): access modes
 * ro/rw/migration, one rw writer per device, a closed writer's claim held
 * until its in-flight IO drained, unknown handles answered -ESTALE. IO goes
 * to the backing device as bios on the session's chunk memory; FLUSH,
 * FUA, DISCARD and WRITE_ZEROES map to the block layer's operations.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/highmem.h>
#include <linux/random.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>

#include "ibnbd-srv.h"

static char *dev_search_path = "/dev";
module_param(dev_search_path, charp, 0444);
MODULE_PARM_DESC(dev_search_path,
		 "only block devices beneath this directory are served (default /dev)");

static uint max_devices = 64;
module_param(max_devices, uint, 0444);
MODULE_PARM_DESC(max_devices, "devices one session may open (default 64)");

static struct ibtrs_srv_ctx *ibnbd_srv_ctx;
static struct workqueue_struct *ibnbd_srv_wq;
static struct bio_set ibnbd_srv_bio_set;
static u16 ibnbd_srv_gen;		/* handle tag of this module load */
static atomic_t ibnbd_srv_nr_sess = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(ibnbd_srv_sess_wq);
/* the sessions, for sysfs */
static LIST_HEAD(ibnbd_srv_sessions);
static DEFINE_MUTEX(ibnbd_srv_sessions_mutex);

/* ---------------------------------------------------------------- */
/* Sessions and handles                                              */

static void ibnbd_srv_sess_release(struct kref *ref)
{
	struct ibnbd_srv_sess *s = container_of(ref, struct ibnbd_srv_sess,
						ref);

	pr_info("sess %s: gone (%lld bad messages)\n", s->name,
		(long long)atomic64_read(&s->bad_msgs));
	mutex_lock(&ibnbd_srv_sessions_mutex);
	list_del(&s->link);
	mutex_unlock(&ibnbd_srv_sessions_mutex);
	free_percpu(s->inflight);
	kvfree(s->ios);
	kfree(s->devs);
	kfree(s);
	if (atomic_dec_and_test(&ibnbd_srv_nr_sess))
		wake_up(&ibnbd_srv_sess_wq);
}

static void ibnbd_srv_sess_put(struct ibnbd_srv_sess *s)
{
	kref_put(&s->ref, ibnbd_srv_sess_release);
}

/* Sum over the CPUs of the counter at @off of @sd's counters. */
static s64 ibnbd_srv_sd_stat_off(const struct ibnbd_srv_sess_dev *sd,
				 size_t off)
{
	s64 n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += *(const s64 *)((const char *)per_cpu_ptr(sd->stats, cpu) +
				    off);
	return n;
}

#define ibnbd_srv_sd_stat(sd, field)	\
	ibnbd_srv_sd_stat_off(sd, offsetof(struct ibnbd_srv_sd_stats, field))

static long ibnbd_srv_sess_inflight(const struct ibnbd_srv_sess *s)
{
	long n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += *per_cpu_ptr(s->inflight, cpu);
	return n;
}

static void ibnbd_srv_sd_free(struct ibnbd_srv_sess_dev *sd)
{
	percpu_ref_exit(&sd->ref);
	free_percpu(sd->stats);
	kfree(sd);
}

/* The handle's last IO is done: give up the bdev and the claim. */
static void ibnbd_srv_sd_release(struct ibnbd_srv_sess_dev *sd)
{
	struct ibnbd_srv_sess *s = sd->sess;

	blkdev_put(sd->bdev, sd->fmode);
	if (sd->draining) {
		ibnbd_srv_dev_drain_end(sd->dev);
		pr_info("sess %s: %s (handle %#x): in-flight IO drained, %s claim released\n",
			s->name, sd->path, sd->handle,
			ibnbd_access_mode_name(sd->mode));
	}
	ibnbd_srv_dev_put(sd->dev, sd->mode);
	/* out of the table a grace period ago (ibnbd_srv_sd_close()) */
	ibnbd_srv_sd_free(sd);
	ibnbd_srv_sess_put(s);
}

static void ibnbd_srv_sd_release_work(struct work_struct *work)
{
	ibnbd_srv_sd_release(container_of(work, struct ibnbd_srv_sess_dev,
					  release_work));
}

/* The last reference of a killed handle (any context). */
static void ibnbd_srv_sd_ref_release(struct percpu_ref *ref)
{
	struct ibnbd_srv_sess_dev *sd = container_of(ref,
						     struct ibnbd_srv_sess_dev,
						     ref);

	queue_work(ibnbd_srv_wq, &sd->release_work);	/* blkdev_put() sleeps */
}

/*
 * @sd was taken out of the handle table: give up its device now or when its
 * in-flight IO completed. Until then a writer's claim stays, so an old
 * write cannot land after a newer one of the next writer (typically the
 * same client, reconnected, re-sending its writes): that opener gets
 * -EBUSY, which the client retries. Context: process.
 */
static void ibnbd_srv_sd_close(struct ibnbd_srv_sess *s,
			       struct ibnbd_srv_sess_dev *sd, const char *why)
{
	s64 inflight;

	/* no IO takes a reference any more: the count below is complete */
	synchronize_rcu();
	inflight = ibnbd_srv_sd_stat(sd, inflight);
	if (ibnbd_access_is_writer(sd->mode)) {
		ibnbd_srv_dev_drain_begin(sd->dev);
		sd->draining = true;
	}
	pr_info("sess %s: closed %s (handle %#x, %s, %lld IOs in flight): reads=%lld writes=%lld read_bytes=%lld write_bytes=%lld flushes=%lld discards=%lld write_zeroes=%lld errors=%lld\n",
		s->name, sd->path, sd->handle, why, inflight,
		ibnbd_srv_sd_stat(sd, reads), ibnbd_srv_sd_stat(sd, writes),
		ibnbd_srv_sd_stat(sd, read_bytes),
		ibnbd_srv_sd_stat(sd, write_bytes),
		ibnbd_srv_sd_stat(sd, flushes), ibnbd_srv_sd_stat(sd, discards),
		ibnbd_srv_sd_stat(sd, write_zeroes),
		ibnbd_srv_sd_stat(sd, errors));
	if (!inflight && sd->draining) {	/* nothing to wait for */
		ibnbd_srv_dev_drain_end(sd->dev);
		sd->draining = false;
	}
	/* released (a work item) when the last IO put its reference */
	percpu_ref_kill(&sd->ref);
}

/* Whether @handle names a slot of @s. */
static bool ibnbd_srv_handle_ok(struct ibnbd_srv_sess *s, u32 handle)
{
	return (handle >> 16) == ibnbd_srv_gen && (handle & 0xffff) < s->max_devs;
}

/*
 * The handle @handle of @s with a reference for one IO, or NULL. No lock:
 * an RCU read section, and a reference of a handle still in the table.
 */
static struct ibnbd_srv_sess_dev *ibnbd_srv_sd_get(struct ibnbd_srv_sess *s,
						   u32 handle)
{
	struct ibnbd_srv_sess_dev *sd;

	if (!ibnbd_srv_handle_ok(s, handle))
		return NULL;
	rcu_read_lock();
	sd = rcu_dereference(s->devs[handle & 0xffff]);
	if (IS_ERR_OR_NULL(sd) || sd->handle != handle ||
	    !percpu_ref_tryget_live(&sd->ref)) {
		sd = NULL;
	} else {
		this_cpu_inc(sd->stats->inflight);
		this_cpu_inc(*s->inflight);
	}
	rcu_read_unlock();
	return sd;
}

/* Take handle @handle of @s out of its table (CLOSE); under s->lock. */
static struct ibnbd_srv_sess_dev *ibnbd_srv_sd_take(struct ibnbd_srv_sess *s,
						    u32 handle)
{
	struct ibnbd_srv_sess_dev *sd;

	if (!ibnbd_srv_handle_ok(s, handle))
		return NULL;
	sd = rcu_dereference_protected(s->devs[handle & 0xffff],
				       lockdep_is_held(&s->lock));
	if (IS_ERR_OR_NULL(sd) || sd->handle != handle)
		return NULL;
	RCU_INIT_POINTER(s->devs[sd->slot], NULL);
	return sd;
}

/* An IO of @sd ended (any context); @sd may go after this. */
static void ibnbd_srv_io_put(struct ibnbd_srv_sess_dev *sd)
{
	this_cpu_dec(sd->stats->inflight);
	this_cpu_dec(*sd->sess->inflight);
	percpu_ref_put(&sd->ref);
}

/* ---------------------------------------------------------------- */
/* Messages                                                          */

static void ibnbd_srv_bad_msg(struct ibnbd_srv_sess *s, int type,
			      size_t usrlen, enum ibtrs_dir dir, int err)
{
	s64 n = atomic64_inc_return(&s->bad_msgs);

	if (n <= 5 || !(n % 1000))
		pr_warn("sess %s: rejected %s message (%zu bytes, dir %s): %d\n",
			s->name, type > 0 ? ibnbd_msg_type_name(type) :
			"malformed", usrlen, dir == IBTRS_READ ? "read" : "write",
			err);
}

/*
 * Copy a response into a read's data area and answer the whole area. The
 * request is answered then: 0, so that nobody answers it again.
 */
static int ibnbd_srv_answer(struct ibtrs_srv_op *op, void *data,
			    size_t datalen, const void *rsp, size_t len)
{
	memcpy(data, rsp, len);
	memset(data + len, 0, datalen - len);
	flush_kernel_vmap_range(data, datalen);
	ibtrs_srv_resp(op, 0, datalen);
	return 0;
}

static int ibnbd_srv_sess_info(struct ibnbd_srv_sess *s,
			       struct ibtrs_srv_op *op, enum ibtrs_dir dir,
			       void *data, size_t datalen, const void *usr,
			       size_t usrlen)
{
	const struct ibnbd_msg_sess_info *m = usr;
	struct ibnbd_msg_sess_info_rsp rsp;
	int ret = ibnbd_validate_sess_info(usr, usrlen);

	if (ret)
		return ret;
	if (dir != IBTRS_READ || datalen < sizeof(rsp))
		return -EINVAL;
	s->ver = ibnbd_negotiate_ver(m->ver);
	ibnbd_init_sess_info_rsp(&rsp, s->ver);
	pr_info("sess %s: protocol version %u (client offered %u)\n", s->name,
		s->ver, m->ver);
	return ibnbd_srv_answer(op, data, datalen, &rsp, sizeof(rsp));
}

/* Largest DISCARD/WRITE_ZEROES: bi_size is 32 bits of bytes. */
static u32 ibnbd_srv_cap_sectors(u64 sectors, u32 lbs)
{
	u64 max = (0xffffffffULL & ~(u64)(lbs - 1)) >> SECTOR_SHIFT;

	sectors = min(sectors, max);
	return sectors & ~(u64)((lbs >> SECTOR_SHIFT) - 1);
}

static void ibnbd_srv_geometry(struct ibnbd_srv_sess_dev *sd,
			       struct ibnbd_msg_open_rsp *rsp)
{
	struct block_device *bdev = sd->bdev;
	u32 lbs = bdev_logical_block_size(bdev);
	u32 pbs = bdev_physical_block_size(bdev);
	u32 flags = IBNBD_DEV_FUA;	/* the block layer emulates FUA */
	struct ibnbd_dev_limits *lim = &sd->lim;

	lim->nsectors = bdev_nr_sectors(bdev) &
			~(u64)((lbs >> SECTOR_SHIFT) - 1);
	lim->logical_block_size = lbs;
	lim->max_io_bytes = ibtrs_srv_max_io_size(ibnbd_srv_ctx);
	lim->max_discard_sectors =
		ibnbd_srv_cap_sectors(bdev_max_discard_sectors(bdev), lbs);
	lim->max_write_zeroes_sectors =
		ibnbd_srv_cap_sectors(bdev_write_zeroes_sectors(bdev), lbs);
	lim->read_only = sd->mode == IBNBD_ACCESS_RO;
	if (!bdev_nonrot(bdev))
		flags |= IBNBD_DEV_ROTATIONAL;
	if (bdev_write_cache(bdev))
		flags |= IBNBD_DEV_FLUSH;
	if (lim->max_discard_sectors)
		flags |= IBNBD_DEV_DISCARD;
	if (lim->max_write_zeroes_sectors)
		flags |= IBNBD_DEV_WRITE_ZEROES;
	if (lim->read_only)
		flags |= IBNBD_DEV_READ_ONLY;

	ibnbd_init_open_rsp_err(rsp, 0, NULL);
	rsp->device_id = cpu_to_le32(sd->handle);
	rsp->nsectors = cpu_to_le64(lim->nsectors);
	rsp->max_hw_sectors = cpu_to_le32(lim->max_io_bytes >> SECTOR_SHIFT);
	rsp->max_discard_sectors = cpu_to_le32(lim->max_discard_sectors);
	rsp->discard_granularity = cpu_to_le32(bdev_discard_granularity(bdev));
	rsp->discard_alignment = cpu_to_le32(0);
	rsp->max_write_zeroes_sectors =
		cpu_to_le32(lim->max_write_zeroes_sectors);
	rsp->dev_flags = cpu_to_le32(flags);
	rsp->logical_block_size = cpu_to_le16(lbs);
	rsp->physical_block_size = cpu_to_le16(pbs > 32768 ? lbs : pbs);
	rsp->max_segments = cpu_to_le16(1);
	rsp->access_mode = sd->mode;
}

static int ibnbd_srv_open(struct ibnbd_srv_sess *s, struct ibtrs_srv_op *op,
			  enum ibtrs_dir dir, void *data, size_t datalen,
			  const void *usr, size_t usrlen)
{
	const struct ibnbd_msg_open *m = usr;
	struct ibnbd_msg_open_rsp rsp;
	struct ibnbd_srv_sess_dev *sd = NULL;
	struct ibnbd_srv_dev *dev;
	struct block_device *bdev;
	const char *reason = NULL;
	char *resolved = NULL;
	unsigned int slot;
	fmode_t fmode;
	dev_t devt;
	int ret;

	if (dir != IBTRS_READ || datalen < sizeof(rsp))
		return -EINVAL;
	ret = ibnbd_validate_open(usr, usrlen);
	if (ret) {
		reason = "malformed OPEN message";
		atomic64_inc(&s->bad_msgs);
		goto out_refuse_nolog;
	}
	/* Reserve a slot: requests of several connections run in parallel. */
	spin_lock_irq(&s->lock);
	for (slot = 0; slot < s->max_devs; slot++)
		if (!rcu_access_pointer(s->devs[slot]))
			break;
	if (slot < s->max_devs)
		RCU_INIT_POINTER(s->devs[slot], ERR_PTR(-EBUSY));
	spin_unlock_irq(&s->lock);
	if (slot == s->max_devs) {
		ret = -EMFILE;
		reason = "too many devices open in this session";
		goto out_refuse;
	}
	resolved = kmalloc(IBNBD_DEV_PATH_MAX, GFP_KERNEL);
	if (!resolved) {
		ret = -ENOMEM;
		reason = "out of memory";
		goto out_free_slot;
	}
	ret = ibnbd_srv_resolve(dev_search_path, m->dev_path, &devt, resolved,
				IBNBD_DEV_PATH_MAX, &reason);
	if (ret)
		goto out_free_slot;
	ret = ibnbd_srv_dev_get(devt, m->access_mode, &dev, &reason);
	if (ret)
		goto out_free_slot;
	fmode = FMODE_READ;
	if (ibnbd_access_is_writer(m->access_mode))
		fmode |= FMODE_WRITE | FMODE_EXCL;
	/* Writers share one holder: the device's registry entry. */
	bdev = blkdev_get_by_dev(devt, fmode, fmode & FMODE_EXCL ? dev : NULL);
	if (IS_ERR(bdev)) {
		ret = PTR_ERR(bdev);
		reason = ret == -EBUSY ?
			"device is in use on the server (mounted or opened exclusively)" :
			"cannot open device";
		goto out_put_dev;
	}
	if ((fmode & FMODE_WRITE) && bdev_read_only(bdev)) {
		ret = -EROFS;
		reason = "device is read-only on the server";
		goto out_put_bdev;
	}
	sd = kzalloc(sizeof(*sd), GFP_KERNEL);
	if (!sd) {
		ret = -ENOMEM;
		reason = "out of memory";
		goto out_put_bdev;
	}
	sd->stats = alloc_percpu(struct ibnbd_srv_sd_stats);
	if (!sd->stats ||
	    percpu_ref_init(&sd->ref, ibnbd_srv_sd_ref_release, 0, GFP_KERNEL)) {
		free_percpu(sd->stats);
		kfree(sd);
		ret = -ENOMEM;
		reason = "out of memory";
		goto out_put_bdev;
	}
	sd->sess = s;
	sd->dev = dev;
	sd->bdev = bdev;
	sd->fmode = fmode;
	sd->slot = slot;
	sd->handle = (u32)ibnbd_srv_gen << 16 | slot;
	sd->mode = m->access_mode;
	INIT_WORK(&sd->release_work, ibnbd_srv_sd_release_work);
	strscpy(sd->path, resolved, sizeof(sd->path));
	ibnbd_srv_geometry(sd, &rsp);
	if (sd->lim.max_io_bytes < sd->lim.logical_block_size) {
		ret = -EINVAL;
		reason = "logical block size above the transport's IO size";
		goto out_free_sd;
	}
	spin_lock_irq(&s->lock);
	if (s->dead) {
		spin_unlock_irq(&s->lock);
		ret = -ENOTCONN;
		reason = "session closed";
		goto out_free_sd;
	}
	kref_get(&s->ref);
	rcu_assign_pointer(s->devs[slot], sd);
	spin_unlock_irq(&s->lock);
	pr_info("sess %s: opened %s (%s) handle %#x: %llu sectors, lbs %u, flags %#x\n",
		s->name, sd->path, ibnbd_access_mode_name(sd->mode), sd->handle,
		sd->lim.nsectors, sd->lim.logical_block_size,
		le32_to_cpu(rsp.dev_flags));
	kfree(resolved);
	return ibnbd_srv_answer(op, data, datalen, &rsp, sizeof(rsp));

out_free_sd:
	ibnbd_srv_sd_free(sd);
out_put_bdev:
	blkdev_put(bdev, fmode);
out_put_dev:
	ibnbd_srv_dev_put(dev, m->access_mode);
out_free_slot:
	spin_lock_irq(&s->lock);
	RCU_INIT_POINTER(s->devs[slot], NULL);
	spin_unlock_irq(&s->lock);
out_refuse:
	pr_warn("sess %s: refused open of '%s' (%s): %s (%d)\n", s->name,
		m->dev_path, ibnbd_access_mode_name(m->access_mode), reason,
		ret);
out_refuse_nolog:
	kfree(resolved);
	ibnbd_init_open_rsp_err(&rsp, ret, reason);
	return ibnbd_srv_answer(op, data, datalen, &rsp, sizeof(rsp));
}

static int ibnbd_srv_close(struct ibnbd_srv_sess *s, struct ibtrs_srv_op *op,
			   enum ibtrs_dir dir, size_t datalen,
			   const void *usr, size_t usrlen)
{
	const struct ibnbd_msg_close *m = usr;
	struct ibnbd_srv_sess_dev *sd;
	int ret = ibnbd_validate_close(usr, usrlen);

	if (ret)
		return ret;
	/* a write without data: an answer with no data area to cover */
	if (dir != IBTRS_WRITE || datalen)
		return -EINVAL;
	spin_lock_irq(&s->lock);
	sd = ibnbd_srv_sd_take(s, le32_to_cpu(m->device_id));
	spin_unlock_irq(&s->lock);
	if (!sd)
		return -ESTALE;
	ibnbd_srv_sd_close(s, sd, "closed by client");
	ibtrs_srv_resp(op, 0, 0);
	return 0;	/* answered */
}

/* ---------------------------------------------------------------- */
/* IO                                                                */

/*
 * The IO of a chunk ended: its context is let go first (the answer lets
 * the client, and with it the next request of the chunk, reuse it), then
 * the answer, then the handle's reference.
 */
static void ibnbd_srv_bi_end_io(struct bio *bio)
{
	struct ibnbd_srv_io *io = bio->bi_private;
	struct ibnbd_srv_sess_dev *sd = io->sd;
	struct ibtrs_srv_op *op = io->op;
	int err = blk_status_to_errno(bio->bi_status);
	bool read = io->opcode == IBNBD_OP_READ;
	u32 len = io->len;

	if (err) {
		this_cpu_inc(sd->stats->errors);
		pr_debug("sess %s: %s on %s failed: %d\n", sd->sess->name,
			 ibnbd_op_name(io->opcode), sd->path, err);
	} else if (read) {
		invalidate_kernel_vmap_range(io->data, len);
	}
	if (bio == &io->inline_bio)
		bio_uninit(bio);
	else
		bio_put(bio);
	ibtrs_srv_resp(op, err, read && !err ? len : 0);
	ibnbd_srv_io_put(sd);
}

static void ibnbd_srv_account(struct ibnbd_srv_sess_dev *sd, u32 op, u32 len)
{
	switch (op) {
	case IBNBD_OP_READ:
		this_cpu_inc(sd->stats->reads);
		this_cpu_add(sd->stats->read_bytes, len);
		break;
	case IBNBD_OP_WRITE:
		this_cpu_inc(sd->stats->writes);
		this_cpu_add(sd->stats->write_bytes, len);
		break;
	case IBNBD_OP_FLUSH:
		this_cpu_inc(sd->stats->flushes);
		break;
	case IBNBD_OP_DISCARD:
		this_cpu_inc(sd->stats->discards);
		break;
	case IBNBD_OP_WRITE_ZEROES:
		this_cpu_inc(sd->stats->write_zeroes);
		break;
	}
}

static blk_opf_t ibnbd_srv_opf(u32 op, u32 flags)
{
	blk_opf_t opf;

	switch (op) {
	case IBNBD_OP_READ:
		opf = REQ_OP_READ;
		break;
	case IBNBD_OP_WRITE:
		/*
		 * A client's write waits for its answer (as nvmet's do): no
		 * writeback throttling on the server.
		 */
		opf = REQ_OP_WRITE | REQ_SYNC | REQ_IDLE;
		if (flags & IBNBD_F_FUA)
			opf |= REQ_FUA;
		if (flags & IBNBD_F_PREFLUSH)
			opf |= REQ_PREFLUSH;
		break;
	case IBNBD_OP_FLUSH:
		opf = REQ_OP_WRITE | REQ_PREFLUSH;
		break;
	case IBNBD_OP_DISCARD:
		opf = REQ_OP_DISCARD;
		break;
	default:	/* IBNBD_OP_WRITE_ZEROES, validated */
		opf = REQ_OP_WRITE_ZEROES;
		if (flags & IBNBD_F_NOUNMAP)
			opf |= REQ_NOUNMAP;
		if (flags & IBNBD_F_FUA)
			opf |= REQ_FUA;
		break;
	}
	if (flags & IBNBD_F_SYNC)
		opf |= REQ_SYNC;
	return opf;
}

/*
 * Add the @len bytes of chunk memory at @data (the pool's pages, found by
 * the transport from the offset) to @parent and submit it. A bio holds at
 * most BIO_MAX_VECS pages (more is a BUG() in bvec_alloc()) and a chunk
 * can be larger: the pages that do not fit go into further bios chained
 * to @parent (bio_chain()), each submitted when full; @parent, submitted
 * last, ends when all have (its bi_end_io answers the request once, with
 * the first error). A PREFLUSH stays on @parent only; FUA is on every part.
 */
static void ibnbd_srv_submit_pages(struct ibnbd_srv_sess *s,
				   struct bio *parent, void *data, u32 len,
				   u32 nr_vecs, blk_opf_t opf)
{
	struct block_device *bdev = parent->bi_bdev;
	sector_t sector = parent->bi_iter.bi_sector;
	struct bio *bio = parent, *child;
	u32 off = 0, left = nr_vecs;

	while (off < len) {
		void *p = data + off;
		u32 n = min_t(u32, len - off, PAGE_SIZE - offset_in_page(p));

		if (bio_add_page(bio, ibtrs_srv_data_page(s->ts, p), n,
				 offset_in_page(p)) != n) {
			/* an empty bio takes a page: else fail, never spin */
			if (WARN_ON_ONCE(!bio->bi_vcnt)) {
				bio_io_error(bio);	/* a child: to @parent */
				if (bio != parent)
					bio_io_error(parent);
				return;
			}
			/* full (BIO_MAX_VECS, or the queue's limits) */
			child = bio_alloc_bioset(bdev,
						 min_t(u32, left, BIO_MAX_VECS),
						 opf & ~REQ_PREFLUSH, GFP_NOIO,
						 &ibnbd_srv_bio_set);
			child->bi_iter.bi_sector = sector +
						   (off >> SECTOR_SHIFT);
			bio_chain(child, parent);
			if (bio != parent)
				submit_bio(bio);
			bio = child;
			continue;	/* this page again, into the child */
		}
		off += n;
		left--;
	}
	if (bio != parent)
		submit_bio(bio);
	submit_bio(parent);
}

static int ibnbd_srv_io(struct ibnbd_srv_sess *s, struct ibtrs_srv_op *op,
			enum ibtrs_dir dir, void *data, size_t datalen,
			const void *usr, size_t usrlen)
{
	const struct ibnbd_msg_io *m = usr;
	struct ibnbd_srv_sess_dev *sd;
	struct ibnbd_srv_io *io;
	struct bio *bio;
	u32 rw, opcode, len, id, nr_vecs = 0;
	blk_opf_t opf;
	int ret;

	ret = ibnbd_validate_io(usr, usrlen, dir == IBTRS_WRITE, datalen);
	if (ret)
		return ret;
	id = ibtrs_srv_op_id(op);
	if (WARN_ON_ONCE(id >= s->nr_ios))
		return -EINVAL;
	sd = ibnbd_srv_sd_get(s, le32_to_cpu(m->device_id));
	if (!sd)
		return -ESTALE;
	ret = ibnbd_check_io_limits(m, &sd->lim);
	if (ret) {
		this_cpu_inc(sd->stats->errors);
		pr_debug("sess %s: %s on %s refused: %d\n", s->name,
			 ibnbd_op_name(le32_to_cpu(m->rw)), sd->path, ret);
		goto out_put;
	}
	rw = le32_to_cpu(m->rw);
	opcode = rw & IBNBD_OP_MASK;
	len = le32_to_cpu(m->bi_size);
	opf = ibnbd_srv_opf(opcode, rw & ~IBNBD_OP_MASK);
	if (opcode == IBNBD_OP_READ || opcode == IBNBD_OP_WRITE)
		nr_vecs = DIV_ROUND_UP(offset_in_page(data) + len, PAGE_SIZE);
	/* the chunk's context: one request per chunk at a time */
	io = &s->ios[id];
	io->sd = sd;
	io->op = op;
	io->data = data;
	io->len = len;
	io->opcode = opcode;
	if (nr_vecs <= IBNBD_SRV_INLINE_VECS) {
		bio = &io->inline_bio;
		bio_init(bio, sd->bdev, io->inline_vecs,
			 IBNBD_SRV_INLINE_VECS, opf);
	} else {
		bio = bio_alloc_bioset(sd->bdev, min_t(u32, nr_vecs, BIO_MAX_VECS),
				       opf, GFP_NOIO, &ibnbd_srv_bio_set);
	}
	io->bio = bio;
	bio->bi_private = io;
	bio->bi_end_io = ibnbd_srv_bi_end_io;
	if (opcode != IBNBD_OP_FLUSH)
		bio->bi_iter.bi_sector = le64_to_cpu(m->sector);
	if (nr_vecs) {
		if (opcode == IBNBD_OP_WRITE)
			flush_kernel_vmap_range(data, len);
		ibnbd_srv_account(sd, opcode, len);
		ibnbd_srv_submit_pages(s, bio, data, len, nr_vecs, opf);
		return 0;
	}
	if (opcode != IBNBD_OP_FLUSH)
		bio->bi_iter.bi_size = len;	/* DISCARD, WRITE_ZEROES */
	ibnbd_srv_account(sd, opcode, len);
	submit_bio(bio);
	return 0;

out_put:
	ibnbd_srv_io_put(sd);
	return ret;
}

/* The messages other than IO, from an aligned copy of the user header. */
static noinline int ibnbd_srv_ctl_msg(struct ibnbd_srv_sess *s,
				      struct ibtrs_srv_op *op,
				      enum ibtrs_dir dir, void *data,
				      size_t datalen, const void *usr,
				      size_t usrlen, int *type)
{
	union {
		struct ibnbd_msg_hdr hdr;
		struct ibnbd_msg_sess_info si;
		struct ibnbd_msg_open open;
		struct ibnbd_msg_close close;
		struct ibnbd_msg_io io;
	} msg;

	/*
	 * An aligned copy of the header; bytes beyond the largest message
	 * are never looked at.
	 */
	usrlen = min(usrlen, sizeof(msg));
	memcpy(&msg, usr, usrlen);
	*type = ibnbd_msg_type(&msg, usrlen);
	switch (*type) {
	case IBNBD_MSG_IO:
		return ibnbd_srv_io(s, op, dir, data, datalen, &msg, usrlen);
	case IBNBD_MSG_SESS_INFO:
		return ibnbd_srv_sess_info(s, op, dir, data, datalen, &msg,
					   usrlen);
	case IBNBD_MSG_OPEN:
		return ibnbd_srv_open(s, op, dir, data, datalen, &msg, usrlen);
	case IBNBD_MSG_CLOSE:
		return ibnbd_srv_close(s, op, dir, datalen, &msg, usrlen);
	default:
		return -EINVAL;
	}
}

static int ibnbd_srv_rdma_ev(struct ibtrs_srv_sess *ts, void *priv,
			     struct ibtrs_srv_op *op, enum ibtrs_dir dir,
			     void *data, size_t datalen, const void *usr,
			     size_t usrlen)
{
	struct ibnbd_srv_sess *s = priv;
	int type, ret;

	if (!s)
		return -ENOTCONN;
	/*
	 * The transport's copy of the user header is 8-byte aligned: an IO
	 * message, the common one, is read in place.
	 */
	type = IS_ALIGNED((unsigned long)usr, 8) ?
	       ibnbd_msg_type(usr, usrlen) : -EINVAL;
	if (likely(type == IBNBD_MSG_IO))
		ret = ibnbd_srv_io(s, op, dir, data, datalen, usr, usrlen);
	else
		ret = ibnbd_srv_ctl_msg(s, op, dir, data, datalen, usr, usrlen,
					&type);
	if (ret == -EINVAL || ret == -EOPNOTSUPP || ret == -EPROTO)
		ibnbd_srv_bad_msg(s, type, usrlen, dir, ret);
	return ret;
}

static void ibnbd_srv_link_ev(struct ibtrs_srv_sess *ts,
			      enum ibtrs_srv_link_ev ev, void *priv)
{
	struct ibnbd_srv_sess *s = priv;
	unsigned int i;

	switch (ev) {
	case IBTRS_SRV_LINK_EV_CONNECTED:
		s = kzalloc(sizeof(*s), GFP_KERNEL);
		if (s) {
			s->devs = kcalloc(max_devices, sizeof(*s->devs),
					  GFP_KERNEL);
			s->nr_ios = ibtrs_srv_queue_depth(ts);
			s->ios = kvcalloc(s->nr_ios, sizeof(*s->ios),
					  GFP_KERNEL);
			s->inflight = alloc_percpu(long);
		}
		if (!s || !s->devs || !s->ios || !s->inflight) {
			pr_err("sess %s: out of memory\n",
			       ibtrs_srv_sessname(ts));
			if (s) {
				free_percpu(s->inflight);
				kvfree(s->ios);
				kfree(s->devs);
			}
			kfree(s);
			return;	/* its requests are answered -ENOTCONN */
		}
		s->ts = ts;
		s->max_devs = max_devices;
		s->ver = IBNBD_PROTO_VER_MAJOR;
		spin_lock_init(&s->lock);
		kref_init(&s->ref);
		atomic64_set(&s->bad_msgs, 0);
		strscpy(s->name, ibtrs_srv_sessname(ts), sizeof(s->name));
		atomic_inc(&ibnbd_srv_nr_sess);
		mutex_lock(&ibnbd_srv_sessions_mutex);
		list_add_tail(&s->link, &ibnbd_srv_sessions);
		mutex_unlock(&ibnbd_srv_sessions_mutex);
		ibtrs_srv_set_sess_priv(ts, s);
		pr_info("sess %s: connected\n", s->name);
		break;
	case IBTRS_SRV_LINK_EV_DISCONNECTED:
		if (!s)
			return;
		ibtrs_srv_set_sess_priv(ts, NULL);
		spin_lock_irq(&s->lock);
		s->dead = true;
		spin_unlock_irq(&s->lock);
		pr_info("sess %s: disconnected (%ld IOs in flight)\n", s->name,
			ibnbd_srv_sess_inflight(s));
		for (i = 0; i < s->max_devs; i++) {
			struct ibnbd_srv_sess_dev *sd;

			spin_lock_irq(&s->lock);
			sd = rcu_dereference_protected(s->devs[i],
						       lockdep_is_held(&s->lock));
			if (!IS_ERR_OR_NULL(sd))
				RCU_INIT_POINTER(s->devs[i], NULL);
			spin_unlock_irq(&s->lock);
			if (!IS_ERR_OR_NULL(sd))
				ibnbd_srv_sd_close(s, sd, "disconnected");
		}
		ibnbd_srv_sess_put(s);
		break;
	}
}

/* ---------------------------------------------------------------- */
/* sysfs: /sys/kernel/ibnbd-server/devices                           */

static int ibnbd_srv_show_sd(struct ibnbd_srv_sess_dev *sd, char *buf, int at)
{
	at += sysfs_emit_at(buf, at, "  %s handle=%#x mode=%s inflight=%lld",
			    sd->path, sd->handle,
			    ibnbd_access_mode_name(sd->mode),
			    ibnbd_srv_sd_stat(sd, inflight));
	at += sysfs_emit_at(buf, at, " reads=%lld writes=%lld flushes=%lld",
			    ibnbd_srv_sd_stat(sd, reads),
			    ibnbd_srv_sd_stat(sd, writes),
			    ibnbd_srv_sd_stat(sd, flushes));
	at += sysfs_emit_at(buf, at, " discards=%lld errors=%lld\n",
			    ibnbd_srv_sd_stat(sd, discards),
			    ibnbd_srv_sd_stat(sd, errors));
	return at;
}

static ssize_t devices_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	struct ibnbd_srv_sess *s;
	unsigned int i;
	int at = 0;

	mutex_lock(&ibnbd_srv_sessions_mutex);
	list_for_each_entry(s, &ibnbd_srv_sessions, link) {
		spin_lock_irq(&s->lock);
		at += sysfs_emit_at(buf, at, "sess %s%s inflight=%ld bad_msgs=%lld\n",
				    s->name, s->dead ? " (gone)" : "",
				    ibnbd_srv_sess_inflight(s),
				    (long long)atomic64_read(&s->bad_msgs));
		for (i = 0; i < s->max_devs; i++) {
			struct ibnbd_srv_sess_dev *sd;

			sd = rcu_dereference_protected(s->devs[i],
						       lockdep_is_held(&s->lock));
			if (!IS_ERR_OR_NULL(sd))
				at = ibnbd_srv_show_sd(sd, buf, at);
		}
		spin_unlock_irq(&s->lock);
	}
	mutex_unlock(&ibnbd_srv_sessions_mutex);
	return at;
}

static struct kobj_attribute ibnbd_srv_devices_attr = __ATTR_RO(devices);
static struct attribute *ibnbd_srv_attrs[] = {
	&ibnbd_srv_devices_attr.attr,
	NULL,
};

static const struct attribute_group ibnbd_srv_attr_group = {
	.attrs = ibnbd_srv_attrs,
};

static struct kobject *ibnbd_srv_kobj;

static const struct ibtrs_srv_ops ibnbd_srv_ops = {
	.rdma_ev = ibnbd_srv_rdma_ev,
	.link_ev = ibnbd_srv_link_ev,
};

static int __init ibnbd_srv_init(void)
{
	int err;

	ibnbd_srv_gen = (get_random_u32() & 0xffff) ?: 1;
	err = bioset_init(&ibnbd_srv_bio_set, BIO_POOL_SIZE, 0,
			  BIOSET_NEED_BVECS);
	if (err)
		return err;
	ibnbd_srv_wq = alloc_workqueue("ibnbd_srv", WQ_MEM_RECLAIM, 0);
	if (!ibnbd_srv_wq) {
		err = -ENOMEM;
		goto out_exit_bioset;
	}
	ibnbd_srv_kobj = kobject_create_and_add("ibnbd-server", kernel_kobj);
	if (!ibnbd_srv_kobj) {
		err = -ENOMEM;
		goto out_destroy_wq;
	}
	err = sysfs_create_group(ibnbd_srv_kobj, &ibnbd_srv_attr_group);
	if (err)
		goto out_put_kobj;
	ibnbd_srv_ctx = ibtrs_srv_open(&ibnbd_srv_ops);
	if (IS_ERR(ibnbd_srv_ctx)) {
		err = PTR_ERR(ibnbd_srv_ctx);
		goto out_remove_group;
	}
	pr_info("serving block devices beneath %s\n", dev_search_path);
	return 0;

out_remove_group:
	sysfs_remove_group(ibnbd_srv_kobj, &ibnbd_srv_attr_group);
out_put_kobj:
	kobject_put(ibnbd_srv_kobj);
out_destroy_wq:
	destroy_workqueue(ibnbd_srv_wq);
out_exit_bioset:
	bioset_exit(&ibnbd_srv_bio_set);
	return err;
}

static void __exit ibnbd_srv_exit(void)
{
	/* Closes every session; returns when all their IO was answered. */
	ibtrs_srv_close(ibnbd_srv_ctx);
	flush_workqueue(ibnbd_srv_wq);
	wait_event(ibnbd_srv_sess_wq, !atomic_read(&ibnbd_srv_nr_sess));
	sysfs_remove_group(ibnbd_srv_kobj, &ibnbd_srv_attr_group);
	kobject_put(ibnbd_srv_kobj);
	destroy_workqueue(ibnbd_srv_wq);
	bioset_exit(&ibnbd_srv_bio_set);
}

module_init(ibnbd_srv_init);
module_exit(ibnbd_srv_exit);
MODULE_DESCRIPTION("IBNBD server: block devices over IBTRS");
MODULE_LICENSE("GPL");
