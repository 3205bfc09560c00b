// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibtrs-srv.c - IBTRS server transport (ibtrs-server.ko): one RDMA CM
 * listener, sessions of 1..N paths sharing one chunk pool, the request
 * path (RDMA_WRITE_WITH_IMM in, one answer message out), heartbeats and
 * path failure. The wire rules are trs/PROTOCOL.md; every message is
 * checked with the shared code of trs/common/ (rx.c, proto.c, hb.c).
 *
 * This file: module parameters, sessions and their chunk pool, the API
 * (ibtrs-srv.h), sysfs, path failure. Requests, answers, receives and
 * heartbeats are in ibtrs-srv-io.c; connections, paths and the RDMA CM
 * in ibtrs-srv-path.c; shared structures in ibtrs-srv-pri.h.
 *
 * Contexts: CM events run in the RDMA CM's work queues, completions in
 * ib_comp_wq (IB_POLL_WORKQUEUE), answers in any context (bio
 * completion), teardown and heartbeats in ibtrs_srv_wq, deferred starts
 * in ibtrs_srv_io_wq (a path's teardown flushes them: a work that flushes
 * a work of its own WQ_MEM_RECLAIM queue can deadlock on the rescuer,
 * which lockdep reported on the debug kernel).
 * Nothing is torn down in completion context.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/inet.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>

#include "ibtrs-srv-pri.h"

static ushort port = 1234;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "RDMA CM port to listen on (default 1234)");

static uint queue_depth = 128;
module_param(queue_depth, uint, 0444);
MODULE_PARM_DESC(queue_depth, "chunks per session (default 128)");

static uint chunk_size = 128 << 10;
module_param(chunk_size, uint, 0444);
MODULE_PARM_DESC(chunk_size, "bytes per chunk = largest IO (default 128 KiB)");

static uint hb_interval_ms = 500;
module_param(hb_interval_ms, uint, 0444);
MODULE_PARM_DESC(hb_interval_ms, "heartbeat interval (default 500 ms)");

static uint hb_missed_max = 3;
module_param(hb_missed_max, uint, 0444);
MODULE_PARM_DESC(hb_missed_max, "silent intervals before a path fails (default 3)");

/*
 * chunk_mode: the shared names (trs/common/modes.c): static (one key per
 * path for the pool) or rekey (a key per chunk, re-keyed with every
 * answer: ibtrs-srv-rekey.c); taken by each path when it is made.
 */
int ibtrs_srv_chunk_mode = TRS_CHUNK_STATIC;

static int ibtrs_srv_chunk_mode_set(const char *val,
				    const struct kernel_param *kp)
{
	const char *why = NULL;
	int m = trs_chunk_mode_parse(val, TRS_IMPL_KERNEL, &why);

	if (m < 0) {
		pr_err("chunk_mode '%.*s': %s\n",
		       val ? (int)strcspn(val, "\n") : 0, val ? : "", why);
		return -EINVAL;
	}
	*(int *)kp->arg = m;
	return 0;
}

static int ibtrs_srv_chunk_mode_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%s\n",
			 trs_chunk_mode_name(*(int *)kp->arg));
}

static const struct kernel_param_ops ibtrs_srv_chunk_mode_ops = {
	.set = ibtrs_srv_chunk_mode_set,
	.get = ibtrs_srv_chunk_mode_get,
};
module_param_cb(chunk_mode, &ibtrs_srv_chunk_mode_ops, &ibtrs_srv_chunk_mode,
		0444);
MODULE_PARM_DESC(chunk_mode, "static (default: one key per path for the chunk pool) or rekey (a key per chunk, replaced after every IO)");

/*
 * Every session pins its chunk pool (queue_depth * (chunk_size + 4 KiB))
 * from its first connection on, before it joined: without a bound any
 * peer that can reach the port takes the server's memory.
 */
uint ibtrs_srv_max_sessions = 128;
module_param_named(max_sessions, ibtrs_srv_max_sessions, uint, 0444);
MODULE_PARM_DESC(max_sessions, "sessions (chunk pools) at once (default 128)");

uint ibtrs_srv_max_sessions_per_addr = 64;
module_param_named(max_sessions_per_addr, ibtrs_srv_max_sessions_per_addr,
		   uint, 0444);
MODULE_PARM_DESC(max_sessions_per_addr,
		 "sessions one client address may create (default 64)");

struct workqueue_struct *ibtrs_srv_wq;
struct workqueue_struct *ibtrs_srv_io_wq;
/*
 * Sessions allocated (listed or not); ibtrs_srv_close() waits for 0. Not
 * in the context: the last session's free wakes the waiter, which frees
 * the context at once.
 */
atomic_t ibtrs_srv_nr_sess = ATOMIC_INIT(0);
DECLARE_WAIT_QUEUE_HEAD(ibtrs_srv_sess_wq);
/* The one context (ibtrs_srv_open()), read by the CM handler. */
struct ibtrs_srv_ctx *ibtrs_srv_the_ctx;
/* ibtrs_srv_the_ctx against sysfs readers (the CM handler needs none) */
static DEFINE_MUTEX(ibtrs_srv_ctx_mutex);

/* Fail a path once, from any context: its close work tears it down. */
void ibtrs_srv_path_fail(struct ibtrs_srv_path *path, const char *fmt, ...)
{
	struct va_format vaf;
	va_list ap;

	if (test_and_set_bit(IBTRS_PATH_FAILED, &path->flags))
		return;
	va_start(ap, fmt);
	vaf.fmt = fmt;
	vaf.va = &ap;
	pr_warn("sess %s: closing path from %s: %pV\n",
		ibtrs_sess_name(path->sess), path->addr, &vaf);
	va_end(ap);
	queue_work(ibtrs_srv_wq, &path->close_work);
}

/* Silence is counted from now on (trs/common/hb.c). */
void ibtrs_srv_hb_start(struct ibtrs_srv_path *path)
{
	trs_hb_start(&path->hb, hb_interval_ms, hb_missed_max, ibtrs_now_us());
}

/* ---------------------------------------------------------------- */
/* Sessions and their chunk pool                                     */

void ibtrs_srv_sess_free(struct ibtrs_srv_sess *sess)
{
	unsigned int i;

	vunmap(sess->pool);
	/* our reference on each compound block (ibtrs_srv_pool_alloc()) */
	for (i = 0; sess->blocks && i < sess->nblocks; i++)
		if (sess->blocks[i])
			__free_pages(sess->blocks[i], sess->order);
	kfree(sess->blocks);
	kvfree(sess->ops);
	kfree(sess);
	if (atomic_dec_and_test(&ibtrs_srv_nr_sess))
		wake_up(&ibtrs_srv_sess_wq);
}

static void ibtrs_srv_sess_free_work(struct work_struct *work)
{
	ibtrs_srv_sess_free(container_of(work, struct ibtrs_srv_sess,
					 free_work));
}

/*
 * The pool as blocks of 2^order pages, few enough for one fast-registration
 * MR on @dev: the client addresses chunk i at pool_addr + i * slot_size
 * through one rkey per path.
 */
static int ibtrs_srv_pool_alloc(struct ibtrs_srv_sess *sess,
				struct ib_device *dev)
{
	u32 max_sg = dev->attrs.max_fast_reg_page_list_len ?: 256;
	/* a slot is chunk_size + 4 KiB: not a page multiple with 64 KiB pages */
	unsigned long npages = DIV_ROUND_UP(sess->pool_len, PAGE_SIZE);
	struct page **pages;
	unsigned int i, j, order = 0;
	int ret = -ENOMEM;

	while (DIV_ROUND_UP(npages, 1UL << order) > max_sg &&
	       order < MAX_ORDER - 1)
		order++;
	if (DIV_ROUND_UP(npages, 1UL << order) > max_sg ||
	    !(dev->attrs.page_size_cap & (PAGE_SIZE << order)))
		return -EINVAL;
	sess->order = order;
	sess->nblocks = DIV_ROUND_UP(npages, 1UL << order);
	sess->blocks = kcalloc(sess->nblocks, sizeof(*sess->blocks),
			       GFP_KERNEL);
	if (!sess->blocks)
		return -ENOMEM;
	pages = kvmalloc_array(sess->nblocks << order, sizeof(*pages),
			       GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	for (i = 0; i < sess->nblocks; i++) {
		/*
		 * Compound: the bios of ibnbd-server carry single pages of a
		 * block, and whoever takes a reference on one (a loop device
		 * over a 9p file: p9_get_mapped_pages() get_page()s and
		 * p9_release_pages() put_page()s every page of the IO) must
		 * count it on the block's head. Without __GFP_COMP the tail
		 * pages have refcount 0, and that put_page() hands a page we
		 * still use (and the RDMA device writes into) to the page
		 * allocator: kernel memory corruption.
		 */
		sess->blocks[i] = alloc_pages(GFP_KERNEL | __GFP_ZERO |
					      __GFP_NOWARN | __GFP_COMP,
					      order);
		if (!sess->blocks[i])
			goto out_free_pages;
		for (j = 0; j < (1U << order); j++)
			pages[(i << order) + j] = sess->blocks[i] + j;
	}
	sess->pool = vmap(pages, sess->nblocks << order, VM_MAP, PAGE_KERNEL);
	if (sess->pool)
		ret = 0;
out_free_pages:
	kvfree(pages);
	return ret;
}

struct ibtrs_srv_sess *ibtrs_srv_sess_create(struct ibtrs_srv_ctx *ctx,
					     const u8 *uuid,
					     struct ib_device *dev,
					     const struct sockaddr *src)
{
	struct ibtrs_srv_sess *sess;
	u32 i;
	int err;

	sess = kzalloc(sizeof(*sess), GFP_KERNEL);
	if (!sess)
		return ERR_PTR(-ENOMEM);
	sess->ctx = ctx;
	atomic_inc(&ibtrs_srv_nr_sess);
	memcpy(sess->uuid, uuid, TRS_UUID_LEN);
	memcpy(&sess->src, src, rdma_addr_size(src));
	spin_lock_init(&sess->lock);
	INIT_LIST_HEAD(&sess->paths);
	INIT_WORK(&sess->free_work, ibtrs_srv_sess_free_work);
	sess->queue_depth = ctx->params.queue_depth;
	sess->pool_len = (size_t)sess->queue_depth * ctx->slot_size;
	sess->ops = kvcalloc(sess->queue_depth, sizeof(*sess->ops), GFP_KERNEL);
	if (!sess->ops) {
		err = -ENOMEM;
		goto out_free_sess;
	}
	for (i = 0; i < sess->queue_depth; i++) {
		sess->ops[i].sess = sess;
		sess->ops[i].id = i;
		atomic_set(&sess->ops[i].state, IBTRS_OP_FREE);
		INIT_WORK(&sess->ops[i].start_work, ibtrs_srv_op_start_work);
	}
	err = ibtrs_srv_pool_alloc(sess, dev);
	if (err)
		goto out_free_sess;
	list_add_tail(&sess->link, &ctx->sessions);
	ctx->nsessions++;
	return sess;

out_free_sess:
	ibtrs_srv_sess_free(sess);	/* frees what was allocated */
	return ERR_PTR(err);
}

/*
 * ibtrs_srv_sync_chunk() - hand bytes [@off, @off + @len) of chunk @id
 * between @path's device and the CPU: @for_cpu before the CPU (or the
 * block layer) reads what the peer wrote, else before the device sends
 * what the CPU wrote. A no-op on devices without DMA mapping (rxe); with
 * swiotlb or a non-coherent device it copies or flushes. A chunk may
 * span blocks of the pool. Any context.
 */
void ibtrs_srv_sync_chunk(struct ibtrs_srv_path *path, u32 id, u32 off,
			  u32 len, bool for_cpu)
{
	struct ibtrs_srv_sess *sess = path->sess;
	unsigned int shift = PAGE_SHIFT + sess->order;
	size_t pos = (size_t)id * sess->ctx->slot_size + off;

	while (len) {
		size_t b = pos >> shift, boff = pos & ((1UL << shift) - 1);
		u32 n = min_t(size_t, len, (1UL << shift) - boff);

		if (for_cpu)
			ib_dma_sync_single_for_cpu(path->dev,
						   path->blk_dma[b] + boff, n,
						   DMA_BIDIRECTIONAL);
		else
			ib_dma_sync_single_for_device(path->dev,
						      path->blk_dma[b] + boff,
						      n, DMA_BIDIRECTIONAL);
		pos += n;
		len -= n;
	}
}

/* ---------------------------------------------------------------- */
/* API                                                               */

struct ibtrs_srv_ctx *ibtrs_srv_open(const struct ibtrs_srv_ops *ops)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	struct ibtrs_srv_ctx *ctx;
	const char *why = "";
	int err;

	if (!ops || !ops->rdma_ev)
		return ERR_PTR(-EINVAL);
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return ERR_PTR(-ENOMEM);
	ctx->ops = *ops;
	mutex_init(&ctx->mutex);
	INIT_LIST_HEAD(&ctx->sessions);
	ctx->params.ver_major = TRS_PROTO_VER_MAJOR;
	ctx->params.ver_minor = TRS_PROTO_VER_MINOR;
	ctx->params.queue_depth = queue_depth;
	ctx->params.chunk_size = chunk_size;
	ctx->params.hdr_area = TRS_HDR_AREA;
	ctx->params.max_usr_len = TRS_MAX_USR_LEN;
	ctx->slot_size = chunk_size + TRS_HDR_AREA;
	if (trs_conn_params_check(&ctx->params, &why) ||
	    chunk_size < PAGE_SIZE) {
		pr_err("bad module parameters: %s\n", why);
		err = -EINVAL;
		goto out_free_ctx;
	}
	mutex_lock(&ibtrs_srv_ctx_mutex);
	if (ibtrs_srv_the_ctx) {
		mutex_unlock(&ibtrs_srv_ctx_mutex);
		err = -EBUSY;	/* one user, one listener */
		goto out_free_ctx;
	}
	ibtrs_srv_the_ctx = ctx;
	mutex_unlock(&ibtrs_srv_ctx_mutex);
	ctx->listen_id = rdma_create_id(&init_net, ibtrs_srv_cm_handler, ctx,
					RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(ctx->listen_id)) {
		err = PTR_ERR(ctx->listen_id);
		goto out_clear_ctx;
	}
	err = rdma_bind_addr(ctx->listen_id, (struct sockaddr *)&sin);
	if (err) {
		pr_err("binding port %u: %d\n", port, err);
		goto out_destroy_id;
	}
	err = rdma_listen(ctx->listen_id, 64);
	if (err) {
		pr_err("listening on port %u: %d\n", port, err);
		goto out_destroy_id;
	}
	pr_info("listening on port %u (queue depth %u, chunk %u)\n", port,
		queue_depth, chunk_size);
	return ctx;

out_destroy_id:
	rdma_destroy_id(ctx->listen_id);
out_clear_ctx:
	mutex_lock(&ibtrs_srv_ctx_mutex);
	ibtrs_srv_the_ctx = NULL;
	mutex_unlock(&ibtrs_srv_ctx_mutex);
out_free_ctx:
	kfree(ctx);
	return ERR_PTR(err);
}
EXPORT_SYMBOL_GPL(ibtrs_srv_open);

/*
 * ibtrs_srv_close() - stop listening, close every path and wait until every
 * session is freed, i.e. until the user answered every request it holds.
 */
void ibtrs_srv_close(struct ibtrs_srv_ctx *ctx)
{
	struct ibtrs_srv_sess *sess;
	struct ibtrs_srv_path *path;

	mutex_lock(&ctx->mutex);
	ctx->closing = true;
	mutex_unlock(&ctx->mutex);
	rdma_destroy_id(ctx->listen_id);	/* no connect request after this */
	mutex_lock(&ctx->mutex);
	list_for_each_entry(sess, &ctx->sessions, link)
		list_for_each_entry(path, &sess->paths, link)
			ibtrs_srv_path_fail(path, "server closing");
	mutex_unlock(&ctx->mutex);
	wait_event(ibtrs_srv_sess_wq, !atomic_read(&ibtrs_srv_nr_sess));
	WARN_ON(!list_empty(&ctx->sessions));
	mutex_lock(&ibtrs_srv_ctx_mutex);
	ibtrs_srv_the_ctx = NULL;
	mutex_unlock(&ibtrs_srv_ctx_mutex);
	kfree(ctx);
}
EXPORT_SYMBOL_GPL(ibtrs_srv_close);

void ibtrs_srv_set_sess_priv(struct ibtrs_srv_sess *sess, void *priv)
{
	WRITE_ONCE(sess->priv, priv);
}
EXPORT_SYMBOL_GPL(ibtrs_srv_set_sess_priv);

u32 ibtrs_srv_queue_depth(const struct ibtrs_srv_sess *sess)
{
	return sess->queue_depth;
}
EXPORT_SYMBOL_GPL(ibtrs_srv_queue_depth);

u32 ibtrs_srv_op_id(const struct ibtrs_srv_op *op)
{
	return op->id;
}
EXPORT_SYMBOL_GPL(ibtrs_srv_op_id);

/*
 * The pool is blocks of 2^order pages: the page of an address is found
 * from its offset, without walking vmalloc's page tables.
 */
struct page *ibtrs_srv_data_page(const struct ibtrs_srv_sess *sess,
				 const void *addr)
{
	size_t off = (const char *)addr - (const char *)sess->pool;
	unsigned long pg = off >> PAGE_SHIFT;

	if (WARN_ON_ONCE(addr < sess->pool || off >= sess->pool_len))
		return vmalloc_to_page(addr);
	return sess->blocks[pg >> sess->order] + (pg & ((1UL << sess->order) - 1));
}
EXPORT_SYMBOL_GPL(ibtrs_srv_data_page);

const char *ibtrs_srv_sessname(const struct ibtrs_srv_sess *sess)
{
	return ibtrs_sess_name(sess);
}
EXPORT_SYMBOL_GPL(ibtrs_srv_sessname);

u32 ibtrs_srv_max_io_size(const struct ibtrs_srv_ctx *ctx)
{
	return ctx->params.chunk_size;
}
EXPORT_SYMBOL_GPL(ibtrs_srv_max_io_size);

/* ---------------------------------------------------------------- */
/* sysfs: /sys/kernel/ibtrs-server/sessions                          */

static int ibtrs_srv_show_sess(struct ibtrs_srv_sess *sess, char *buf, int at)
{
	struct ibtrs_srv_path *path;

	spin_lock_irq(&sess->lock);
	at += sysfs_emit_at(buf, at, "sess %s paths=%d active=%u queue_depth=%u\n",
			    ibtrs_sess_name(sess), sess->npaths,
			    ibtrs_srv_busy_ops(sess), sess->queue_depth);
	list_for_each_entry(path, &sess->paths, link) {
		at += sysfs_emit_at(buf, at, "  path %s cons=%u state=%s",
				    path->addr, path->ncons,
				    path->closed ? "closing" :
				    path->joined ? "joined" : "connecting");
		at += sysfs_emit_at(buf, at, " reqs=%llu rsps=%llu deferred=%llu",
				    ibtrs_srv_stat(path, reqs),
				    ibtrs_srv_stat(path, rsps), path->deferred);
		at += sysfs_emit_at(buf, at, " hb_sent=%llu recon_cnt=%u",
				    path->hb_sent, path->recon_cnt);
		at += sysfs_emit_at(buf, at, " sig_rsps=%llu pulls=%llu",
				    ibtrs_srv_stat(path, sig_rsps),
				    ibtrs_srv_stat(path, pulls));
		at += sysfs_emit_at(buf, at, " chunk_mode=%s rekeys=%llu\n",
				    trs_chunk_mode_name(path->rekey ?
							TRS_CHUNK_REKEY :
							TRS_CHUNK_STATIC),
				    ibtrs_srv_stat(path, rekeys));
	}
	spin_unlock_irq(&sess->lock);
	return at;
}

static ssize_t sessions_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	struct ibtrs_srv_sess *sess;
	struct ibtrs_srv_ctx *ctx;
	int at = 0;

	mutex_lock(&ibtrs_srv_ctx_mutex);
	ctx = ibtrs_srv_the_ctx;
	if (ctx) {
		mutex_lock(&ctx->mutex);
		list_for_each_entry(sess, &ctx->sessions, link)
			at = ibtrs_srv_show_sess(sess, buf, at);
		mutex_unlock(&ctx->mutex);
	}
	mutex_unlock(&ibtrs_srv_ctx_mutex);
	return at;
}

static struct kobj_attribute ibtrs_srv_sessions_attr = __ATTR_RO(sessions);
static struct attribute *ibtrs_srv_attrs[] = {
	&ibtrs_srv_sessions_attr.attr,
	NULL,
};

static const struct attribute_group ibtrs_srv_attr_group = {
	.attrs = ibtrs_srv_attrs,
};

static struct kobject *ibtrs_srv_kobj;

static int __init ibtrs_srv_init(void)
{
	int err;

	ibtrs_srv_wq = alloc_workqueue("ibtrs_srv", WQ_MEM_RECLAIM, 0);
	if (!ibtrs_srv_wq)
		return -ENOMEM;
	ibtrs_srv_io_wq = alloc_workqueue("ibtrs_srv_io", WQ_MEM_RECLAIM, 0);
	if (!ibtrs_srv_io_wq) {
		err = -ENOMEM;
		goto out_destroy_wq;
	}
	ibtrs_srv_kobj = kobject_create_and_add("ibtrs-server", kernel_kobj);
	if (!ibtrs_srv_kobj) {
		err = -ENOMEM;
		goto out_destroy_io_wq;
	}
	err = sysfs_create_group(ibtrs_srv_kobj, &ibtrs_srv_attr_group);
	if (err)
		goto out_put_kobj;
	return 0;

out_put_kobj:
	kobject_put(ibtrs_srv_kobj);
out_destroy_io_wq:
	destroy_workqueue(ibtrs_srv_io_wq);
out_destroy_wq:
	destroy_workqueue(ibtrs_srv_wq);
	return err;
}

static void __exit ibtrs_srv_exit(void)
{
	rcu_barrier();	/* closed paths freed (ibtrs_srv_path_free_rcu()) */
	sysfs_remove_group(ibtrs_srv_kobj, &ibtrs_srv_attr_group);
	kobject_put(ibtrs_srv_kobj);
	destroy_workqueue(ibtrs_srv_wq);
	destroy_workqueue(ibtrs_srv_io_wq);
}

module_init(ibtrs_srv_init);
module_exit(ibtrs_srv_exit);
MODULE_DESCRIPTION("IBTRS server: multipath RDMA transport for block IO");
MODULE_LICENSE("GPL");
