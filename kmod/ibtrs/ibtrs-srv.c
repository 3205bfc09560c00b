// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibtrs-srv.c - IBTRS server transport (ibtrs-server.ko): one RDMA CM
 * listener, sessions of 1..N paths sharing one chunk pool, the request
 * path (RDMA_WRITE_WITH_IMM in, one answer message out), heartbeats and
 * path failure. The wire rules are trs/PROTOCOL.md; every message is
 * checked with the shared code of trs/common/ (rx.c, proto.c, hb.c).
 *
 * Contexts: CM events run in the RDMA CM's work queues, completions in
 * ib_comp_wq (IB_POLL_WORKQUEUE), answers in any context (bio
 * completion), teardown, heartbeats and deferred starts in ibtrs_srv_wq.
 * Nothing is torn down in completion context.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/scatterlist.h>
#include <linux/workqueue.h>
#include <linux/ktime.h>
#include <linux/inet.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>

#include "trs_common.h"
#include "ibtrs-srv.h"

#define IBTRS_TICK_MS		50	/* heartbeat work period */
#define IBTRS_RX_EXTRA		32	/* receives beyond one per chunk: HB, INFO */
#define IBTRS_ACK_TIMEOUT	14	/* 4.096 us * 2^14 = 67 ms per retry */
#define IBTRS_RSP_SLOT		32	/* bytes per chunk for its IO_RSP */
#define IBTRS_JOIN_GRACE_US	(10ULL * USEC_PER_SEC)
#define IBTRS_DISC_WAIT_MS	1000	/* for the peer's DREP at teardown */

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

static struct workqueue_struct *ibtrs_srv_wq;
/*
 * Sessions allocated (listed or not); ibtrs_srv_close() waits for 0. Not
 * in the context: the last session's free wakes the waiter, which frees
 * the context at once.
 */
static atomic_t ibtrs_srv_nr_sess = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(ibtrs_srv_sess_wq);

/**
 * enum ibtrs_srv_op_state - what occupies a chunk.
 * @IBTRS_OP_FREE: nothing.
 * @IBTRS_OP_ACTIVE: a request handed to the user, not answered yet.
 * @IBTRS_OP_QUEUED: answered; a failed-over retry of it waits in
 *	@start_work to be started.
 */
enum ibtrs_srv_op_state {
	IBTRS_OP_FREE,
	IBTRS_OP_ACTIVE,
	IBTRS_OP_QUEUED,
};

/**
 * struct ibtrs_srv_op - the request of one chunk.
 * @sess: owner.
 * @id: chunk id.
 * @state: &enum ibtrs_srv_op_state, under the session's lock like the
 *	four pointers below.
 * @path: the path the request came on; NULL once that path is gone (the
 *	answer is then dropped).
 * @con: its connection: a read's answer must use the QP the client bound
 *	its memory window on.
 * @pending_path: a retried request for this chunk that came (on another
 *	path) while the old one was still served; started after its answer.
 * @pending_con: the connection of @pending_path it came on.
 * @start_work: starts the pending request (not in the answer's context).
 * @req: the validated request header (host order), stable while ACTIVE.
 */
struct ibtrs_srv_op {
	struct ibtrs_srv_sess *sess;
	u32 id;
	enum ibtrs_srv_op_state state;
	struct ibtrs_srv_path *path;
	struct ibtrs_srv_con *con;
	struct ibtrs_srv_path *pending_path;
	struct ibtrs_srv_con *pending_con;
	struct work_struct start_work;
	struct trs_io_req_info req;
};

/* A receive buffer; the CQ hands it back through @cqe. */
struct ibtrs_srv_iu {
	struct ib_cqe cqe;
	struct ibtrs_srv_con *con;
	void *buf;
	u64 dma;
};

/**
 * struct ibtrs_srv_con - one RDMA CM connection of a path.
 * @path: owner.
 * @cid: index in the path.
 * @cm_id: NULL until the connect request was accepted.
 * @cq: this connection's CQ (IB_POLL_WORKQUEUE).
 * @qp: the RC QP (@cm_id->qp).
 * @nrx: receive buffers, all posted.
 * @rx: their descriptors.
 * @rx_buf: @nrx * TRS_MAX_RECV_MSG bytes, DMA-mapped at @rx_dma.
 * @rx_dma: see @rx_buf.
 * @tx: INFO_RSP at offset 0, then one IO_RSP slot per chunk; mapped at
 *	@tx_dma, @tx_len bytes.
 * @tx_dma: see @tx.
 * @tx_len: see @tx.
 * @send_cqe: completion of every answer and of INFO_RSP.
 * @cm_done: the CM reported the end of the connection (DISCONNECTED,
 *	TIMEWAIT_EXIT, an error or DEVICE_REMOVAL).
 * @hdr: private copy of a request's header area (the client can still
 *	write the chunk while it is validated); used by this CQ's work only.
 */
struct ibtrs_srv_con {
	struct ibtrs_srv_path *path;
	u16 cid;
	struct rdma_cm_id *cm_id;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u32 nrx;
	struct ibtrs_srv_iu *rx;
	void *rx_buf;
	u64 rx_dma;
	void *tx;
	u64 tx_dma;
	size_t tx_len;
	struct ib_cqe send_cqe;
	struct completion cm_done;
	u8 *hdr;
};

#define IBTRS_TX_RSP_OFF	TRS_MAX_RECV_MSG

enum {
	IBTRS_PATH_FAILED,	/* close_work queued */
};

/**
 * struct ibtrs_srv_path - the connections from one client address.
 * @sess: owner.
 * @link: in @sess->paths.
 * @uuid: the client's path UUID.
 * @recon_cnt: the client's reconnect count of this incarnation.
 * @ncons: connections of the path (cid_num).
 * @cons: @ncons connections.
 * @dev: the RDMA device of every connection of the path.
 * @pd: protection domain of the path.
 * @sgt: the session's pool blocks, DMA-mapped for @dev.
 * @sg_mapped: entries ib_dma_map_sg() returned, 0 if not mapped.
 * @mr: the session's pool, registered on @pd (LOCAL_WRITE | REMOTE_WRITE).
 * @reg_cqe: completion of the pool registration (errors only).
 * @hb_cqe: completion of heartbeats and their acks.
 * @hb: heartbeat state (trs/common/hb.c), under the session's lock.
 * @joined: INFO exchange done; under the session's lock.
 * @closed: teardown has begun, nothing may be posted any more; under the
 *	session's lock.
 * @flags: IBTRS_PATH_FAILED.
 * @hb_work: heartbeat and liveness tick.
 * @close_work: teardown.
 * @addr: the client's address, for the log.
 * @reqs: IO requests received; with @rsps and @hb_sent under the
 *	session's lock (sysfs).
 * @rsps: answers posted.
 * @hb_sent: heartbeats posted.
 */
struct ibtrs_srv_path {
	struct ibtrs_srv_sess *sess;
	struct list_head link;
	u8 uuid[TRS_UUID_LEN];
	u16 recon_cnt;
	u16 ncons;
	struct ibtrs_srv_con *cons;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct sg_table sgt;
	int sg_mapped;
	struct ib_mr *mr;
	struct ib_cqe reg_cqe;
	struct ib_cqe hb_cqe;
	struct trs_hb hb;
	bool joined;
	bool closed;
	unsigned long flags;
	struct delayed_work hb_work;
	struct work_struct close_work;
	char addr[64];
	u64 reqs;
	u64 rsps;
	u64 hb_sent;
};

/**
 * struct ibtrs_srv_sess - one client: 1..N paths, one chunk pool.
 * @ctx: owner.
 * @link: in @ctx->sessions while it has paths.
 * @uuid: the client's session UUID.
 * @name: from the first INFO_REQ; with @named, @link_up, @paths and
 *	@npaths under @ctx->mutex.
 * @named: @name is set.
 * @link_up: the user got LINK_EV_CONNECTED.
 * @dead: no path left; freed when @active_ops drops to 0.
 * @lock: @ops, @active_ops, @dead and the paths' joined/closed/hb.
 * @paths: &struct ibtrs_srv_path list.
 * @npaths: entries of @paths.
 * @active_ops: chunks not FREE.
 * @priv: the user's session.
 * @queue_depth: chunks.
 * @blocks: the pool's memory, @nblocks blocks of 2^@order pages, mapped
 *	contiguously at @pool (vmap) and in each path's MR.
 * @nblocks: see @blocks.
 * @order: see @blocks.
 * @pool: see @blocks.
 * @pool_len: @queue_depth * slot size.
 * @ops: one per chunk.
 * @free_work: frees the session from a context that may sleep.
 */
struct ibtrs_srv_sess {
	struct ibtrs_srv_ctx *ctx;
	struct list_head link;
	u8 uuid[TRS_UUID_LEN];
	char name[TRS_SESSNAME_MAX];
	bool named;
	bool link_up;
	bool dead;
	spinlock_t lock;		/* see @lock above */
	struct list_head paths;
	int npaths;
	unsigned int active_ops;
	void *priv;
	u32 queue_depth;
	struct page **blocks;
	unsigned int nblocks;
	unsigned int order;
	void *pool;
	size_t pool_len;
	struct ibtrs_srv_op *ops;
	struct work_struct free_work;
};

/**
 * struct ibtrs_srv_ctx - the listener and its sessions.
 * @ops: the user's callbacks.
 * @listen_id: RDMA CM listener on INADDR_ANY:port.
 * @mutex: @sessions, @closing and the sessions' path lists.
 * @sessions: sessions that have paths.
 * @closing: ibtrs_srv_close() has begun.
 * @params: what the accept advertises.
 * @slot_size: chunk size + header area.
 */
struct ibtrs_srv_ctx {
	struct ibtrs_srv_ops ops;
	struct rdma_cm_id *listen_id;
	struct mutex mutex;	/* see @mutex above */
	struct list_head sessions;
	bool closing;
	struct trs_conn_params params;
	u32 slot_size;
};

static u64 ibtrs_now_us(void)
{
	return ktime_to_us(ktime_get());
}

static const char *ibtrs_sess_name(const struct ibtrs_srv_sess *sess)
{
	return sess->named ? sess->name : "(unnamed)";
}

static __printf(2, 3)
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

/* Every failed work completion ends here; a flush is the teardown's echo. */
static void ibtrs_srv_wr_error(struct ibtrs_srv_path *path, struct ib_wc *wc,
			       const char *op)
{
	if (wc->status == IB_WC_WR_FLUSH_ERR &&
	    test_bit(IBTRS_PATH_FAILED, &path->flags))
		return;
	ibtrs_srv_path_fail(path, "%s failed: %s", op,
			    ib_wc_status_msg(wc->status));
}

static void ibtrs_srv_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_srv_con *con =
		container_of(wc->wr_cqe, struct ibtrs_srv_con, send_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS))
		ibtrs_srv_wr_error(con->path, wc, "send");
}

static void ibtrs_srv_hb_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_srv_path *path =
		container_of(wc->wr_cqe, struct ibtrs_srv_path, hb_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS))
		ibtrs_srv_wr_error(path, wc, "heartbeat send");
}

static void ibtrs_srv_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_srv_path *path =
		container_of(wc->wr_cqe, struct ibtrs_srv_path, reg_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS))
		ibtrs_srv_wr_error(path, wc, "pool registration");
}

/* ---------------------------------------------------------------- */
/* Sessions and their chunk pool                                     */

static void ibtrs_srv_sess_free(struct ibtrs_srv_sess *sess)
{
	unsigned int i;

	vunmap(sess->pool);
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

static void ibtrs_srv_op_start_work(struct work_struct *work);

/*
 * The pool as blocks of 2^order pages, few enough for one fast-registration
 * MR on @dev: the client addresses chunk i at pool_addr + i * slot_size
 * through one rkey per path.
 */
static int ibtrs_srv_pool_alloc(struct ibtrs_srv_sess *sess,
				struct ib_device *dev)
{
	u32 max_sg = dev->attrs.max_fast_reg_page_list_len ?: 256;
	unsigned long npages = sess->pool_len >> PAGE_SHIFT;
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
		sess->blocks[i] = alloc_pages(GFP_KERNEL | __GFP_ZERO |
					      __GFP_NOWARN, order);
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

static struct ibtrs_srv_sess *ibtrs_srv_sess_create(struct ibtrs_srv_ctx *ctx,
						    const u8 *uuid,
						    struct ib_device *dev)
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
		INIT_WORK(&sess->ops[i].start_work, ibtrs_srv_op_start_work);
	}
	err = ibtrs_srv_pool_alloc(sess, dev);
	if (err)
		goto out_free_sess;
	list_add_tail(&sess->link, &ctx->sessions);
	return sess;

out_free_sess:
	ibtrs_srv_sess_free(sess);	/* frees what was allocated */
	return ERR_PTR(err);
}

static void *ibtrs_srv_slot(struct ibtrs_srv_sess *sess, u32 id)
{
	return sess->pool + (size_t)id * sess->ctx->slot_size;
}

/* ---------------------------------------------------------------- */
/* Answers                                                           */

/* Post the answer of @op (and a read's data before it). Under sess->lock. */
static int ibtrs_srv_post_resp(struct ibtrs_srv_op *op, int status, u32 len)
{
	struct ibtrs_srv_path *path = op->path;
	struct ibtrs_srv_con *con = op->con;
	struct ib_rdma_wr data_wr = {};
	struct ib_send_wr rsp_wr = {};
	const struct ib_send_wr *first = &rsp_wr;
	struct ib_sge data_sge, rsp_sge;
	u32 imm;

	if (op->req.type == TRS_MSG_IO_READ && !status && len) {
		data_sge.addr = path->mr->iova +
				(u64)op->id * op->sess->ctx->slot_size;
		data_sge.length = len;
		data_sge.lkey = path->mr->lkey;
		data_wr.wr.wr_cqe = &con->send_cqe;
		data_wr.wr.opcode = IB_WR_RDMA_WRITE;
		data_wr.wr.sg_list = &data_sge;
		data_wr.wr.num_sge = 1;
		data_wr.wr.next = &rsp_wr;
		data_wr.remote_addr = op->req.raddr;
		data_wr.rkey = op->req.rkey;
		first = &data_wr.wr;
	}
	rsp_wr.wr_cqe = &con->send_cqe;
	rsp_wr.send_flags = IB_SEND_SIGNALED;
	if (op->req.type == TRS_MSG_IO_READ ||
	    (op->req.flags & TRS_IO_F_NEED_INV)) {
		/*
		 * A read's answer is an IO_RSP message: it carries the length,
		 * and SEND_WITH_INV ends the client's rkey before the client
		 * sees the answer (PROTOCOL.md 4).
		 */
		bool inv = op->req.flags & TRS_IO_F_NEED_INV;
		size_t off = IBTRS_TX_RSP_OFF + (size_t)op->id * IBTRS_RSP_SLOT;
		struct trs_io_rsp_info ri = {
			.chunk_id = (u16)op->id,
			.status = status,
			.flags = inv ? TRS_RSP_F_INVALIDATED : 0,
			.len = len,
		};

		trs_io_rsp_encode(con->tx + off, &ri);
		ib_dma_sync_single_for_device(path->dev, con->tx_dma + off,
					      sizeof(struct trs_msg_io_rsp),
					      DMA_TO_DEVICE);
		rsp_sge.addr = con->tx_dma + off;
		rsp_sge.length = sizeof(struct trs_msg_io_rsp);
		rsp_sge.lkey = path->pd->local_dma_lkey;
		rsp_wr.opcode = inv ? IB_WR_SEND_WITH_INV : IB_WR_SEND;
		rsp_wr.ex.invalidate_rkey = inv ? op->req.rkey : 0;
		rsp_wr.sg_list = &rsp_sge;
		rsp_wr.num_sge = 1;
	} else {
		if (trs_imm_pack(TRS_IMM_IO_RSP, op->id, status, &imm))
			imm = trs_to_imm(TRS_IMM_IO_RSP, op->id, EIO);
		rsp_wr.opcode = IB_WR_SEND_WITH_IMM;
		rsp_wr.ex.imm_data = cpu_to_be32(imm);
	}
	return ib_post_send(con->qp, first, NULL);
}

/* Drop @op's claim on its chunk. Under sess->lock; true: free the session. */
static bool ibtrs_srv_op_release(struct ibtrs_srv_op *op)
{
	struct ibtrs_srv_sess *sess = op->sess;

	op->state = IBTRS_OP_FREE;
	op->path = NULL;
	op->con = NULL;
	sess->active_ops--;
	return sess->dead && !sess->active_ops;
}

int ibtrs_srv_resp(struct ibtrs_srv_op *op, int status, size_t len)
{
	struct ibtrs_srv_sess *sess = op->sess;
	struct ibtrs_srv_path *path;
	unsigned long flags;
	bool free_sess = false;
	int err = 0, perr;

	if (status > 0)
		status = -status;
	if (status < -TRS_IMM_MAX_ERRNO)
		status = -EIO;
	if (op->req.type == TRS_MSG_IO_READ) {
		/*
		 * A successful read answer covers the whole request, else the
		 * client would take a partly stale buffer for good data.
		 */
		size_t want = op->req.sg_cnt ? op->req.rlen : 0;

		if (len > want || (!status && len != want)) {
			pr_err_ratelimited("sess %s: read answer of chunk %u has %zu bytes, the request %zu; failing the IO with EIO\n",
					   ibtrs_sess_name(sess), op->id, len,
					   want);
			status = -EIO;
			len = 0;
			err = -EINVAL;
		}
	} else {
		len = 0;
	}
	spin_lock_irqsave(&sess->lock, flags);
	if (WARN_ON_ONCE(op->state != IBTRS_OP_ACTIVE)) {
		spin_unlock_irqrestore(&sess->lock, flags);
		return -EINVAL;
	}
	path = op->path;
	if (path && !path->closed) {
		perr = ibtrs_srv_post_resp(op, status, len);
		if (!perr)
			path->rsps++;
		else
			ibtrs_srv_path_fail(path, "posting the answer of chunk %u: %d",
					    op->id, perr);
	}
	if (op->pending_path) {
		op->state = IBTRS_OP_QUEUED;
		op->path = NULL;
		op->con = NULL;
		queue_work(ibtrs_srv_wq, &op->start_work);
	} else {
		free_sess = ibtrs_srv_op_release(op);
	}
	spin_unlock_irqrestore(&sess->lock, flags);
	if (free_sess)
		queue_work(ibtrs_srv_wq, &sess->free_work);
	return err;
}
EXPORT_SYMBOL_GPL(ibtrs_srv_resp);

/* ---------------------------------------------------------------- */
/* Requests                                                          */

/*
 * @op is ACTIVE on @path: validate its header from a private copy (@hdr)
 * and hand it to the user. A malformed header fails the path.
 */
static void ibtrs_srv_op_start(struct ibtrs_srv_op *op,
			       struct ibtrs_srv_path *path, u8 *hdr)
{
	struct ibtrs_srv_sess *sess = op->sess;
	struct ibtrs_srv_ctx *ctx = sess->ctx;
	const struct trs_conn_params *p = &ctx->params;
	void *slot = ibtrs_srv_slot(sess, op->id);
	const char *why = "";
	unsigned long flags;
	enum ibtrs_dir dir;
	size_t datalen;
	void *data;
	bool free_sess;
	int ret;

	memcpy(hdr, slot + p->chunk_size, p->hdr_area);
	ret = trs_io_req_decode(hdr, p->hdr_area, p->chunk_size,
				p->max_usr_len, &op->req, &why);
	if (ret) {
		spin_lock_irqsave(&sess->lock, flags);
		op->pending_path = NULL;
		op->pending_con = NULL;
		free_sess = ibtrs_srv_op_release(op);
		spin_unlock_irqrestore(&sess->lock, flags);
		if (free_sess)
			queue_work(ibtrs_srv_wq, &sess->free_work);
		ibtrs_srv_path_fail(path, "invalid request in chunk %u: %s",
				    op->id, why);
		return;
	}
	if (op->req.type == TRS_MSG_IO_WRITE) {
		dir = IBTRS_WRITE;
		datalen = op->req.data_len;
		data = slot + p->chunk_size - datalen;
	} else {
		dir = IBTRS_READ;
		datalen = op->req.sg_cnt ? op->req.rlen : 0;
		data = slot;
	}
	ret = ctx->ops.rdma_ev(sess, READ_ONCE(sess->priv), op, dir, data,
			       datalen, hdr + sizeof(struct trs_msg_io_req),
			       op->req.usr_len);
	if (ret)
		ibtrs_srv_resp(op, ret < 0 ? ret : -ret, 0);
}

/* A retried request waited for the answer of its chunk's old one. */
static void ibtrs_srv_op_start_work(struct work_struct *work)
{
	struct ibtrs_srv_op *op = container_of(work, struct ibtrs_srv_op,
					       start_work);
	struct ibtrs_srv_sess *sess = op->sess;
	struct ibtrs_srv_path *path;
	bool free_sess = false;
	u8 *hdr;

	spin_lock_irq(&sess->lock);
	path = op->pending_path;
	op->pending_path = NULL;
	if (!path || path->closed) {
		op->pending_con = NULL;
		free_sess = ibtrs_srv_op_release(op);
		spin_unlock_irq(&sess->lock);
		if (free_sess)
			ibtrs_srv_sess_free(sess);
		return;
	}
	op->state = IBTRS_OP_ACTIVE;
	op->path = path;
	op->con = op->pending_con;
	op->pending_con = NULL;
	spin_unlock_irq(&sess->lock);

	hdr = kmalloc(TRS_HDR_AREA, GFP_KERNEL);
	if (!hdr) {
		ibtrs_srv_resp(op, -ENOMEM, 0);
		return;
	}
	ibtrs_srv_op_start(op, path, hdr);
	kfree(hdr);
}

static void ibtrs_srv_io_req(struct ibtrs_srv_con *con, u32 id)
{
	struct ibtrs_srv_path *path = con->path;
	struct ibtrs_srv_sess *sess = path->sess;
	struct ibtrs_srv_op *op = &sess->ops[id];
	unsigned long flags;

	spin_lock_irqsave(&sess->lock, flags);
	if (op->state != IBTRS_OP_FREE) {
		if (op->state == IBTRS_OP_QUEUED || op->path == path ||
		    op->pending_path) {
			spin_unlock_irqrestore(&sess->lock, flags);
			ibtrs_srv_path_fail(path, "request for chunk %u which is busy",
					    id);
			return;
		}
		/* A failed-over retry overtook the original's answer. */
		op->pending_path = path;
		op->pending_con = con;
		path->reqs++;
		spin_unlock_irqrestore(&sess->lock, flags);
		return;
	}
	op->state = IBTRS_OP_ACTIVE;
	op->path = path;
	op->con = con;
	sess->active_ops++;
	path->reqs++;
	spin_unlock_irqrestore(&sess->lock, flags);
	ibtrs_srv_op_start(op, path, con->hdr);
}

/* ---------------------------------------------------------------- */
/* Receives, INFO, heartbeats                                        */

static int ibtrs_srv_post_recv(struct ibtrs_srv_con *con,
			       struct ibtrs_srv_iu *iu)
{
	struct ib_sge sge = {
		.addr = iu->dma,
		.length = TRS_MAX_RECV_MSG,
		.lkey = con->path->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &iu->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	return ib_post_recv(con->qp, &wr, NULL);
}

/* SEND_WITH_IMM without payload on connection 0. Under sess->lock. */
static int ibtrs_srv_post_imm(struct ibtrs_srv_path *path, u32 imm)
{
	struct ib_send_wr wr = {
		.wr_cqe = &path->hb_cqe,
		.opcode = IB_WR_SEND_WITH_IMM,
		.send_flags = IB_SEND_SIGNALED,
		.ex.imm_data = cpu_to_be32(imm),
	};

	if (path->closed || !path->cons[0].qp)
		return 0;
	return ib_post_send(path->cons[0].qp, &wr, NULL);
}

static void ibtrs_srv_info_req(struct ibtrs_srv_con *con, const void *msg,
			       u32 len)
{
	struct ibtrs_srv_path *path = con->path, *p;
	struct ibtrs_srv_sess *sess = path->sess;
	struct ibtrs_srv_ctx *ctx = sess->ctx;
	char name[TRS_SESSNAME_MAX];
	struct ib_send_wr send_wr = {};
	struct ib_reg_wr reg_wr = {};
	struct ib_sge sge;
	struct trs_info info = {};
	const char *why = "";
	bool first;
	int err, n;

	if (con->cid != 0 || path->joined) {
		ibtrs_srv_path_fail(path, "unexpected INFO_REQ");
		return;
	}
	if (trs_info_req_decode(msg, len, name, &why)) {
		ibtrs_srv_path_fail(path, "bad INFO_REQ: %s", why);
		return;
	}

	/*
	 * The user learns of the session before the client can send it a
	 * request: INFO_RSP goes out only after link_ev() returned.
	 */
	mutex_lock(&ctx->mutex);
	if (!sess->named) {
		strscpy(sess->name, name, sizeof(sess->name));
		sess->named = true;
	} else if (strcmp(sess->name, name)) {
		pr_warn("sess %s: path from %s names itself '%s'\n",
			sess->name, path->addr, name);
	}
	first = !sess->link_up;
	sess->link_up = true;
	if (first && ctx->ops.link_ev)
		ctx->ops.link_ev(sess, IBTRS_SRV_LINK_EV_CONNECTED, sess->priv);
	mutex_unlock(&ctx->mutex);

	ib_update_fast_reg_key(path->mr, ib_inc_rkey(path->mr->rkey));
	info.queue_depth = sess->queue_depth;
	info.chunk_size = ctx->params.chunk_size;
	info.slot_size = ctx->slot_size;
	info.pool_addr = path->mr->iova;
	info.pool_rkey = path->mr->rkey;
	trs_info_rsp_encode(con->tx, &info);
	ib_dma_sync_single_for_device(path->dev, con->tx_dma,
				      sizeof(struct trs_msg_info_rsp),
				      DMA_TO_DEVICE);

	/* The pool's registration goes first on the same QP. */
	reg_wr.wr.opcode = IB_WR_REG_MR;
	reg_wr.wr.wr_cqe = &path->reg_cqe;
	reg_wr.wr.next = &send_wr;
	reg_wr.mr = path->mr;
	reg_wr.key = path->mr->rkey;
	reg_wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	sge.addr = con->tx_dma;
	sge.length = sizeof(struct trs_msg_info_rsp);
	sge.lkey = path->pd->local_dma_lkey;
	send_wr.wr_cqe = &con->send_cqe;
	send_wr.opcode = IB_WR_SEND;
	send_wr.send_flags = IB_SEND_SIGNALED;
	send_wr.sg_list = &sge;
	send_wr.num_sge = 1;

	spin_lock_irq(&sess->lock);
	if (path->closed) {
		spin_unlock_irq(&sess->lock);
		return;
	}
	err = ib_post_send(con->qp, &reg_wr.wr, NULL);
	if (!err) {
		path->joined = true;
		trs_hb_start(&path->hb, hb_interval_ms, hb_missed_max,
			     ibtrs_now_us());
	}
	spin_unlock_irq(&sess->lock);
	if (err) {
		ibtrs_srv_path_fail(path, "posting INFO_RSP: %d", err);
		return;
	}
	/* for the log: the paths that joined, this one included */
	n = 0;
	mutex_lock(&ctx->mutex);
	list_for_each_entry(p, &sess->paths, link)
		n += READ_ONCE(p->joined) &&
		     !test_bit(IBTRS_PATH_FAILED, &p->flags);
	mutex_unlock(&ctx->mutex);
	pr_info("sess %s: path from %s joined (%d path%s)\n", sess->name,
		path->addr, n, n > 1 ? "s" : "");
	mod_delayed_work(ibtrs_srv_wq, &path->hb_work, 0);
}

static void ibtrs_srv_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_srv_iu *iu = container_of(wc->wr_cqe, struct ibtrs_srv_iu,
					       cqe);
	struct ibtrs_srv_con *con = iu->con;
	struct ibtrs_srv_path *path = con->path;
	struct ibtrs_srv_sess *sess = path->sess;
	struct trs_rx_wc w = {};
	struct trs_rx_msg m;
	u8 msg[TRS_MAX_RECV_MSG];
	const char *why = "";
	int err;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		ibtrs_srv_wr_error(path, wc, "receive");
		return;
	}
	if (test_bit(IBTRS_PATH_FAILED, &path->flags))
		return;		/* nothing more is served on a failed path */
	w.ok = true;
	if (wc->opcode == IB_WC_RECV)
		w.op = TRS_RX_OP_RECV;
	else if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM)
		w.op = TRS_RX_OP_RECV_RDMA_IMM;
	else
		w.op = TRS_RX_OP_OTHER;
	w.with_imm = wc->wc_flags & IB_WC_WITH_IMM;
	w.imm = w.with_imm ? be32_to_cpu(wc->ex.imm_data) : 0;
	w.with_inv = wc->wc_flags & IB_WC_WITH_INVALIDATE;
	w.inv_rkey = w.with_inv ? wc->ex.invalidate_rkey : 0;
	w.byte_len = wc->byte_len;

	ib_dma_sync_single_for_cpu(path->dev, iu->dma, TRS_MAX_RECV_MSG,
				   DMA_FROM_DEVICE);
	err = trs_rx_decode_srv(&w, iu->buf, sess->queue_depth, &m, &why);
	if (err) {
		ibtrs_srv_path_fail(path, "bad receive: %s (opcode %d, %u bytes)",
				    why, wc->opcode, wc->byte_len);
		return;
	}
	if (m.kind == TRS_RX_MSG)
		memcpy(msg, iu->buf, m.len);
	ib_dma_sync_single_for_device(path->dev, iu->dma, TRS_MAX_RECV_MSG,
				      DMA_FROM_DEVICE);
	err = ibtrs_srv_post_recv(con, iu);
	if (err) {
		ibtrs_srv_path_fail(path, "reposting a receive: %d", err);
		return;
	}

	spin_lock_irq(&sess->lock);
	trs_hb_on_rx(&path->hb, ibtrs_now_us());	/* any receive is life */
	if (m.kind == TRS_RX_HB)
		err = ibtrs_srv_post_imm(path, trs_to_imm(TRS_IMM_HB_ACK, m.id, 0));
	spin_unlock_irq(&sess->lock);
	if (err) {
		ibtrs_srv_path_fail(path, "cannot answer a heartbeat: %d", err);
		return;
	}

	switch (m.kind) {
	case TRS_RX_HB:
	case TRS_RX_HB_ACK:	/* only life; the server keeps no RTT */
		break;
	case TRS_RX_IO_REQ:
		if (!READ_ONCE(path->joined)) {
			ibtrs_srv_path_fail(path, "IO request before the path joined");
			break;
		}
		ibtrs_srv_io_req(con, m.id);
		break;
	case TRS_RX_MSG:	/* INFO_REQ, the only valid message */
		ibtrs_srv_info_req(con, msg, m.len);
		break;
	default:
		ibtrs_srv_path_fail(path, "unexpected receive kind %d", m.kind);
	}
}

static void ibtrs_srv_hb_work(struct work_struct *work)
{
	struct ibtrs_srv_path *path = container_of(to_delayed_work(work),
						   struct ibtrs_srv_path,
						   hb_work);
	struct ibtrs_srv_sess *sess = path->sess;
	u64 now = ibtrs_now_us(), tmo, idle;
	const char *why = NULL;
	int err = 0;
	u16 seq;

	spin_lock_irq(&sess->lock);
	if (path->closed) {
		spin_unlock_irq(&sess->lock);
		return;
	}
	tmo = trs_hb_timeout_us(&path->hb);
	idle = trs_hb_idle_us(&path->hb, now);
	if (!path->joined) {
		/* a connection that never joins is dropped as well */
		if (idle > tmo + IBTRS_JOIN_GRACE_US)
			why = "did not join in time";
	} else if (trs_hb_timed_out(&path->hb, now)) {
		why = "heartbeat timeout";
	} else if (trs_hb_due(&path->hb, now, &seq)) {
		err = ibtrs_srv_post_imm(path, trs_to_imm(TRS_IMM_HB, seq, 0));
		path->hb_sent++;
	}
	spin_unlock_irq(&sess->lock);
	if (why) {
		ibtrs_srv_path_fail(path, "%s: nothing received for %llu ms",
				    why, idle / USEC_PER_MSEC);
		return;
	}
	if (err) {
		ibtrs_srv_path_fail(path, "cannot post a heartbeat: %d", err);
		return;
	}
	queue_delayed_work(ibtrs_srv_wq, &path->hb_work,
			   msecs_to_jiffies(IBTRS_TICK_MS));
}

/* ---------------------------------------------------------------- */
/* Connections and paths                                             */

static void ibtrs_srv_qp_event(struct ib_event *ev, void *context)
{
	struct ibtrs_srv_con *con = context;

	switch (ev->event) {
	case IB_EVENT_COMM_EST:
		/* a receive before the CM's RTU: let the CM move on */
		rdma_notify(con->cm_id, ev->event);
		break;
	case IB_EVENT_QP_LAST_WQE_REACHED:
	case IB_EVENT_SQ_DRAINED:
		break;
	default:
		ibtrs_srv_path_fail(con->path, "QP event %s",
				    ib_event_msg(ev->event));
	}
}

/* Undo ibtrs_srv_con_create(); the cm_id stays (its owner destroys it). */
static void ibtrs_srv_con_destroy(struct ibtrs_srv_con *con)
{
	struct ib_device *dev = con->path->dev;

	if (con->qp) {
		rdma_destroy_qp(con->cm_id);
		con->qp = NULL;
	}
	if (con->cq) {
		ib_free_cq(con->cq);
		con->cq = NULL;
	}
	if (con->rx_buf) {
		ib_dma_unmap_single(dev, con->rx_dma,
				    (size_t)con->nrx * TRS_MAX_RECV_MSG,
				    DMA_FROM_DEVICE);
		kfree(con->rx_buf);
		con->rx_buf = NULL;
	}
	if (con->tx) {
		ib_dma_unmap_single(dev, con->tx_dma, con->tx_len,
				    DMA_TO_DEVICE);
		kfree(con->tx);
		con->tx = NULL;
	}
	kfree(con->rx);
	con->rx = NULL;
	kfree(con->hdr);
	con->hdr = NULL;
}

static void *ibtrs_srv_dma_alloc(struct ib_device *dev, size_t len,
				 enum dma_data_direction dir, u64 *dma)
{
	void *buf = kzalloc(len, GFP_KERNEL);

	if (!buf)
		return NULL;
	*dma = ib_dma_map_single(dev, buf, len, dir);
	if (ib_dma_mapping_error(dev, *dma)) {
		kfree(buf);
		return NULL;
	}
	return buf;
}

/* CQ, QP and receive ring of @con on its cm_id. */
static int ibtrs_srv_con_create(struct ibtrs_srv_con *con)
{
	struct ibtrs_srv_path *path = con->path;
	struct ib_device *dev = path->dev;
	u32 qd = path->sess->queue_depth;
	/* per IO: the RDMA_WRITE of read data + the answer; + HB, INFO, REG */
	u32 sq = 2 * qd + 16;
	/* per IO: the client's WRITE_WITH_IMM; + HB, INFO_REQ */
	u32 rq = qd + IBTRS_RX_EXTRA;
	struct ib_qp_init_attr qp_attr = {};
	u32 i;
	int err;

	sq = min_t(u32, sq, dev->attrs.max_qp_wr - 1);
	rq = min_t(u32, rq, dev->attrs.max_qp_wr - 1);
	/* +1 each for ib_drain_qp()'s markers */
	con->cq = ib_alloc_cq(dev, con, sq + 1 + rq + 1,
			      con->cid % dev->num_comp_vectors,
			      IB_POLL_WORKQUEUE);
	if (IS_ERR(con->cq)) {
		err = PTR_ERR(con->cq);
		con->cq = NULL;
		return err;
	}
	qp_attr.event_handler = ibtrs_srv_qp_event;
	qp_attr.qp_context = con;
	qp_attr.send_cq = con->cq;
	qp_attr.recv_cq = con->cq;
	qp_attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	qp_attr.qp_type = IB_QPT_RC;
	qp_attr.cap.max_send_wr = sq + 1;
	qp_attr.cap.max_recv_wr = rq + 1;
	qp_attr.cap.max_send_sge = 1;
	qp_attr.cap.max_recv_sge = 1;
	err = rdma_create_qp(con->cm_id, path->pd, &qp_attr);
	if (err)
		goto out_destroy;
	con->qp = con->cm_id->qp;

	err = -ENOMEM;
	con->nrx = rq;
	con->rx_buf = ibtrs_srv_dma_alloc(dev, (size_t)rq * TRS_MAX_RECV_MSG,
					  DMA_FROM_DEVICE, &con->rx_dma);
	if (!con->rx_buf)
		goto out_destroy;
	con->tx_len = IBTRS_TX_RSP_OFF + (size_t)qd * IBTRS_RSP_SLOT;
	con->tx = ibtrs_srv_dma_alloc(dev, con->tx_len, DMA_TO_DEVICE,
				      &con->tx_dma);
	if (!con->tx)
		goto out_destroy;
	con->hdr = kmalloc(TRS_HDR_AREA, GFP_KERNEL);
	con->rx = kcalloc(rq, sizeof(*con->rx), GFP_KERNEL);
	if (!con->hdr || !con->rx)
		goto out_destroy;
	con->send_cqe.done = ibtrs_srv_send_done;
	for (i = 0; i < rq; i++) {
		struct ibtrs_srv_iu *iu = &con->rx[i];

		iu->cqe.done = ibtrs_srv_recv_done;
		iu->con = con;
		iu->buf = con->rx_buf + (size_t)i * TRS_MAX_RECV_MSG;
		iu->dma = con->rx_dma + (size_t)i * TRS_MAX_RECV_MSG;
		err = ibtrs_srv_post_recv(con, iu);
		if (err)
			goto out_destroy;
	}
	return 0;

out_destroy:
	ibtrs_srv_con_destroy(con);
	return err;
}

/* Register the session's pool on the path's PD: one MR, one rkey. */
static int ibtrs_srv_path_map_pool(struct ibtrs_srv_path *path)
{
	struct ibtrs_srv_sess *sess = path->sess;
	unsigned int bsize = PAGE_SIZE << sess->order;
	struct scatterlist *sg;
	int i, n, err;

	err = sg_alloc_table(&path->sgt, sess->nblocks, GFP_KERNEL);
	if (err)
		return err;
	for_each_sg(path->sgt.sgl, sg, sess->nblocks, i)
		sg_set_page(sg, sess->blocks[i], bsize, 0);
	n = ib_dma_map_sg(path->dev, path->sgt.sgl, sess->nblocks,
			  DMA_BIDIRECTIONAL);
	if (!n)
		return -ENOMEM;
	path->sg_mapped = n;
	path->mr = ib_alloc_mr(path->pd, IB_MR_TYPE_MEM_REG, n);
	if (IS_ERR(path->mr)) {
		err = PTR_ERR(path->mr);
		path->mr = NULL;
		return err;
	}
	if (ib_map_mr_sg(path->mr, path->sgt.sgl, n, NULL, bsize) != n)
		return -EINVAL;
	return 0;
}

static void ibtrs_srv_path_unmap_pool(struct ibtrs_srv_path *path)
{
	if (path->mr)
		ib_dereg_mr(path->mr);
	if (path->sg_mapped)
		ib_dma_unmap_sg(path->dev, path->sgt.sgl, path->sess->nblocks,
				DMA_BIDIRECTIONAL);
	sg_free_table(&path->sgt);
}

static void ibtrs_srv_path_close_work(struct work_struct *work)
{
	struct ibtrs_srv_path *path = container_of(work, struct ibtrs_srv_path,
						   close_work);
	struct ibtrs_srv_sess *sess = path->sess;
	struct ibtrs_srv_ctx *ctx = sess->ctx;
	unsigned long deadline;
	bool last, free_sess;
	u32 i;

	/* From here on nobody posts on the path's QPs. */
	spin_lock_irq(&sess->lock);
	path->closed = true;
	for (i = 0; i < sess->queue_depth; i++) {
		struct ibtrs_srv_op *op = &sess->ops[i];

		if (op->pending_path == path) {
			op->pending_path = NULL;
			op->pending_con = NULL;
		}
		if (op->path == path) {
			op->path = NULL;
			op->con = NULL;
		}
	}
	spin_unlock_irq(&sess->lock);
	cancel_delayed_work_sync(&path->hb_work);
	/* a deferred start may still use the path */
	for (i = 0; i < sess->queue_depth; i++)
		flush_work(&sess->ops[i].start_work);

	for (i = 0; i < path->ncons; i++)
		if (path->cons[i].cm_id)
			rdma_disconnect(path->cons[i].cm_id);
	/*
	 * Destroying a cm_id cancels a DREQ still queued: give the peer's
	 * DREP (a round trip) a moment, so the client learns of the close
	 * now and not from its heartbeat. A dead peer costs the timeout,
	 * once for all connections.
	 */
	deadline = jiffies + msecs_to_jiffies(IBTRS_DISC_WAIT_MS);
	for (i = 0; i < path->ncons; i++) {
		long left = (long)(deadline - jiffies);

		if (path->cons[i].cm_id && left > 0)
			wait_for_completion_timeout(&path->cons[i].cm_done,
						    left);
	}
	for (i = 0; i < path->ncons; i++)
		if (path->cons[i].qp)
			ib_drain_qp(path->cons[i].qp);
	for (i = 0; i < path->ncons; i++)
		if (path->cons[i].cm_id)
			ibtrs_srv_con_destroy(&path->cons[i]);
	/*
	 * QPs, CQs, the pool MR and the PD go before the cm_ids: a device
	 * removal waits for the cm_ids, and nothing of ours may be left on
	 * the device by then.
	 */
	ibtrs_srv_path_unmap_pool(path);
	if (path->pd)
		ib_dealloc_pd(path->pd);
	for (i = 0; i < path->ncons; i++)
		if (path->cons[i].cm_id)
			rdma_destroy_id(path->cons[i].cm_id);

	mutex_lock(&ctx->mutex);
	list_del(&path->link);
	last = --sess->npaths == 0;
	if (last)
		list_del(&sess->link);	/* a reconnect makes a new one */
	mutex_unlock(&ctx->mutex);
	pr_info("sess %s: path from %s closed%s\n", ibtrs_sess_name(sess),
		path->addr, last ? ", no path left" : "");
	kfree(path->cons);
	kfree(path);
	if (!last)
		return;
	if (sess->link_up && ctx->ops.link_ev)
		ctx->ops.link_ev(sess, IBTRS_SRV_LINK_EV_DISCONNECTED,
				 sess->priv);
	spin_lock_irq(&sess->lock);
	sess->dead = true;
	free_sess = !sess->active_ops;
	spin_unlock_irq(&sess->lock);
	if (free_sess)
		ibtrs_srv_sess_free(sess);
}

static struct ibtrs_srv_path *
ibtrs_srv_path_create(struct ibtrs_srv_sess *sess,
		      const struct trs_conn_req_info *in, struct rdma_cm_id *id)
{
	struct ibtrs_srv_path *path;
	int err = -ENOMEM;

	path = kzalloc(sizeof(*path), GFP_KERNEL);
	if (!path)
		return ERR_PTR(-ENOMEM);
	path->cons = kcalloc(in->cid_num, sizeof(*path->cons), GFP_KERNEL);
	if (!path->cons)
		goto out_free_path;
	path->sess = sess;
	path->ncons = in->cid_num;
	path->recon_cnt = in->recon_cnt;
	memcpy(path->uuid, in->path_uuid, TRS_UUID_LEN);
	path->dev = id->device;
	path->reg_cqe.done = ibtrs_srv_reg_done;
	path->hb_cqe.done = ibtrs_srv_hb_done;
	INIT_DELAYED_WORK(&path->hb_work, ibtrs_srv_hb_work);
	INIT_WORK(&path->close_work, ibtrs_srv_path_close_work);
	snprintf(path->addr, sizeof(path->addr), "%pISc",
		 &id->route.addr.dst_addr);
	path->pd = ib_alloc_pd(path->dev, 0);
	if (IS_ERR(path->pd)) {
		err = PTR_ERR(path->pd);
		path->pd = NULL;
		goto out_free_cons;
	}
	err = ibtrs_srv_path_map_pool(path);
	if (err)
		goto out_unmap_pool;
	/* silence is counted from now on, also before the path joins */
	trs_hb_start(&path->hb, hb_interval_ms, hb_missed_max, ibtrs_now_us());
	list_add_tail(&path->link, &sess->paths);
	sess->npaths++;
	queue_delayed_work(ibtrs_srv_wq, &path->hb_work,
			   msecs_to_jiffies(IBTRS_TICK_MS));
	return path;

out_unmap_pool:
	ibtrs_srv_path_unmap_pool(path);
	ib_dealloc_pd(path->pd);
out_free_cons:
	kfree(path->cons);
out_free_path:
	kfree(path);
	return ERR_PTR(err);
}

/* ---------------------------------------------------------------- */
/* RDMA CM                                                           */

static int ibtrs_srv_reject(struct rdma_cm_id *id, int code, const char *why)
{
	struct trs_conn_params p = {
		.ver_major = TRS_PROTO_VER_MAJOR,
		.ver_minor = TRS_PROTO_VER_MINOR,
		.rej = code,
	};
	struct trs_msg_conn_rsp rsp;

	pr_warn("rejecting a connection from %pISc: %s (%s)\n",
		&id->route.addr.dst_addr, trs_rej_str(code), why);
	trs_conn_rsp_encode(&rsp, &p);
	rdma_reject(id, &rsp, sizeof(rsp), IB_CM_REJ_CONSUMER_DEFINED);
	return -ECONNREFUSED;	/* non-zero: the CM destroys the cm_id */
}

static int ibtrs_srv_connect_request(struct ibtrs_srv_ctx *ctx,
				     struct rdma_cm_id *id, const void *pdata,
				     u8 plen)
{
	struct trs_conn_params params = ctx->params;
	struct trs_conn_req_info in;
	struct trs_msg_conn_rsp rsp;
	struct rdma_conn_param cp = {
		.private_data = &rsp,
		.private_data_len = sizeof(rsp),
		.rnr_retry_count = 7,
	};
	struct ibtrs_srv_path *path = NULL, *p;
	struct ibtrs_srv_sess *sess;
	struct ibtrs_srv_con *con;
	const char *why = "";
	int rej, err;

	rej = trs_conn_req_decode(pdata, plen, &in, &why);
	if (rej)
		return ibtrs_srv_reject(id, rej, why);
	rej = trs_negotiate_version(in.ver_major, in.ver_minor,
				    &params.ver_minor);
	if (rej)
		return ibtrs_srv_reject(id, rej, "version");

	mutex_lock(&ctx->mutex);
	if (ctx->closing) {
		err = ibtrs_srv_reject(id, TRS_REJ_CLOSING, "module unloading");
		goto out_unlock;
	}
	list_for_each_entry(sess, &ctx->sessions, link)
		if (!memcmp(sess->uuid, in.sess_uuid, TRS_UUID_LEN))
			goto found;
	if (!(in.flags & TRS_CONN_F_FIRST)) {
		err = ibtrs_srv_reject(id, TRS_REJ_NO_SESS, "unknown session");
		goto out_unlock;
	}
	sess = ibtrs_srv_sess_create(ctx, in.sess_uuid, id->device);
	if (IS_ERR(sess)) {
		err = ibtrs_srv_reject(id, TRS_REJ_NOMEM, "session allocation");
		goto out_unlock;
	}
found:
	list_for_each_entry(p, &sess->paths, link) {
		if (test_bit(IBTRS_PATH_FAILED, &p->flags) ||
		    memcmp(p->uuid, in.path_uuid, TRS_UUID_LEN))
			continue;
		if (p->recon_cnt != in.recon_cnt) {
			/* The client reconnected before we noticed: drop it. */
			ibtrs_srv_path_fail(p, "replaced by reconnect %u",
					    in.recon_cnt);
			continue;
		}
		path = p;
	}
	if (path && (path->ncons != in.cid_num || path->cons[in.cid].cm_id ||
		     path->dev != id->device)) {
		err = ibtrs_srv_reject(id, path->ncons != in.cid_num ?
				       TRS_REJ_BAD_CID : TRS_REJ_BUSY,
				       "connection index or device");
		goto out_unlock;
	}
	if (!path) {
		path = ibtrs_srv_path_create(sess, &in, id);
		if (IS_ERR(path)) {
			err = ibtrs_srv_reject(id, TRS_REJ_NOMEM,
					       "path allocation");
			if (!sess->npaths) {
				list_del(&sess->link);
				ibtrs_srv_sess_free(sess);
			}
			goto out_unlock;
		}
	}
	con = &path->cons[in.cid];
	con->path = path;
	con->cid = in.cid;
	con->cm_id = id;
	init_completion(&con->cm_done);
	err = ibtrs_srv_con_create(con);
	if (err)
		goto out_fail_con;
	id->context = con;
	err = rdma_set_ack_timeout(id, IBTRS_ACK_TIMEOUT);
	if (err)
		goto out_fail_con;
	trs_conn_rsp_encode(&rsp, &params);
	err = rdma_accept(id, &cp);
	if (err)
		goto out_fail_con;
	mutex_unlock(&ctx->mutex);
	return 0;

out_fail_con:
	/* The CM destroys the cm_id when we return non-zero. */
	ibtrs_srv_con_destroy(con);
	con->cm_id = NULL;
	ibtrs_srv_path_fail(path, "setting up connection %u failed: %d",
			    in.cid, err);
	err = ibtrs_srv_reject(id, TRS_REJ_NOMEM, "connection setup");
out_unlock:
	mutex_unlock(&ctx->mutex);
	return err;
}

static struct ibtrs_srv_ctx *ibtrs_srv_the_ctx;
/* ibtrs_srv_the_ctx against sysfs readers (the CM handler needs none) */
static DEFINE_MUTEX(ibtrs_srv_ctx_mutex);

static int ibtrs_srv_cm_handler(struct rdma_cm_id *id,
				struct rdma_cm_event *ev)
{
	struct ibtrs_srv_ctx *ctx = ibtrs_srv_the_ctx;
	struct ibtrs_srv_con *con;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return ibtrs_srv_connect_request(ctx, id,
						 ev->param.conn.private_data,
						 ev->param.conn.private_data_len);
	if (id == ctx->listen_id) {
		pr_warn("listener: %s (status %d)\n", rdma_event_msg(ev->event),
			ev->status);
		return 0;
	}
	con = id->context;
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		/*
		 * The client may join and break a rule before the CM here has
		 * processed its RTU: the teardown's rdma_disconnect() then
		 * found no established connection to send a DREQ for.
		 */
		if (test_bit(IBTRS_PATH_FAILED, &con->path->flags))
			rdma_disconnect(id);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		complete(&con->cm_done);
		break;
	default:
		ibtrs_srv_path_fail(con->path, "%s (status %d)",
				    rdma_event_msg(ev->event), ev->status);
		complete(&con->cm_done);
	}
	return 0;
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
			    sess->active_ops, sess->queue_depth);
	list_for_each_entry(path, &sess->paths, link) {
		at += sysfs_emit_at(buf, at, "  path %s cons=%u state=%s",
				    path->addr, path->ncons,
				    path->closed ? "closing" :
				    path->joined ? "joined" : "connecting");
		at += sysfs_emit_at(buf, at, " reqs=%llu rsps=%llu hb_sent=%llu recon_cnt=%u\n",
				    path->reqs, path->rsps, path->hb_sent,
				    path->recon_cnt);
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
	ibtrs_srv_kobj = kobject_create_and_add("ibtrs-server", kernel_kobj);
	if (!ibtrs_srv_kobj) {
		err = -ENOMEM;
		goto out_destroy_wq;
	}
	err = sysfs_create_group(ibtrs_srv_kobj, &ibtrs_srv_attr_group);
	if (err)
		goto out_put_kobj;
	return 0;

out_put_kobj:
	kobject_put(ibtrs_srv_kobj);
out_destroy_wq:
	destroy_workqueue(ibtrs_srv_wq);
	return err;
}

static void __exit ibtrs_srv_exit(void)
{
	sysfs_remove_group(ibtrs_srv_kobj, &ibtrs_srv_attr_group);
	kobject_put(ibtrs_srv_kobj);
	destroy_workqueue(ibtrs_srv_wq);
}

module_init(ibtrs_srv_init);
module_exit(ibtrs_srv_exit);
MODULE_DESCRIPTION("IBTRS server: multipath RDMA transport for block IO");
MODULE_LICENSE("GPL");
