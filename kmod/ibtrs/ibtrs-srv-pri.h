/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ibtrs-srv-pri.h - the server transport's own structures and the
 * functions its files share (ibtrs-srv.c: module, sessions, API, sysfs;
 * ibtrs-srv-io.c: requests, answers, receives, heartbeats;
 * ibtrs-srv-path.c: connections, paths and the RDMA CM). Users of the
 * module see ibtrs-srv.h only.
 */
#ifndef IBTRS_SRV_PRI_H
#define IBTRS_SRV_PRI_H

#include <linux/workqueue.h>
#include <linux/ktime.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "trs_common.h"
#include "ibtrs-kcore.h"
#include "ibtrs-srv.h"

#define IBTRS_TICK_MS		50	/* heartbeat work period */
#define IBTRS_RX_EXTRA		32	/* receives beyond one per chunk: HB, INFO */
#define IBTRS_ACK_TIMEOUT	14	/* 4.096 us * 2^14 = 67 ms per retry */
#define IBTRS_RSP_SLOT		32	/* bytes per chunk for its IO_RSP */
#define IBTRS_JOIN_GRACE_US	(10ULL * USEC_PER_SEC)	/* after the HB timeout */
#define IBTRS_DISC_WAIT_MS	1000	/* for the peer's DREP at teardown */

extern struct workqueue_struct *ibtrs_srv_wq;
extern struct workqueue_struct *ibtrs_srv_io_wq;	/* op start works */
extern atomic_t ibtrs_srv_nr_sess;
extern wait_queue_head_t ibtrs_srv_sess_wq;

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
 *	A newer retry (the client gave up that path too) replaces it.
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
 * @rxb: @nrx * TRS_MAX_RECV_MSG bytes of receive buffers.
 * @txb: INFO_RSP at offset 0, then one IO_RSP slot per chunk.
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
	struct ibtrs_dma_buf rxb;
	struct ibtrs_dma_buf txb;
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
 * @blk_dma: the device address of each pool block (for the DMA syncs of
 *	a chunk: ibtrs_srv_sync_chunk()).
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
 * @deferred: retried requests that waited for their chunk's original.
 * @created_us: when the first connection came; a path must join within
 *	the heartbeat timeout + IBTRS_JOIN_GRACE_US of it, heartbeats or not.
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
	u64 *blk_dma;
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
	u64 deferred;
	u64 created_us;
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
 * @src: the client address that created the session (the per-address
 *	session limit).
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
	struct sockaddr_storage src;
};

/**
 * struct ibtrs_srv_ctx - the listener and its sessions.
 * @ops: the user's callbacks.
 * @listen_id: RDMA CM listener on INADDR_ANY:port.
 * @mutex: @sessions, @nsessions, @closing and the sessions' path lists;
 *	a path's close work takes it too before it detaches the path's
 *	connections, so a connect request never races a teardown.
 * @sessions: sessions that have paths.
 * @nsessions: entries of @sessions.
 * @closing: ibtrs_srv_close() has begun.
 * @params: what the accept advertises.
 * @slot_size: chunk size + header area.
 */
struct ibtrs_srv_ctx {
	struct ibtrs_srv_ops ops;
	struct rdma_cm_id *listen_id;
	struct mutex mutex;	/* see @mutex above */
	struct list_head sessions;
	unsigned int nsessions;
	bool closing;
	struct trs_conn_params params;
	u32 slot_size;
};

static inline u64 ibtrs_now_us(void)
{
	return ktime_to_us(ktime_get());
}

static inline const char *ibtrs_sess_name(const struct ibtrs_srv_sess *sess)
{
	return sess->named ? sess->name : "(unnamed)";
}

/* ibtrs-srv.c */
extern uint ibtrs_srv_max_sessions;
extern uint ibtrs_srv_max_sessions_per_addr;
__printf(2, 3)
void ibtrs_srv_path_fail(struct ibtrs_srv_path *path, const char *fmt, ...);
void ibtrs_srv_hb_start(struct ibtrs_srv_path *path);
void ibtrs_srv_sess_free(struct ibtrs_srv_sess *sess);
struct ibtrs_srv_sess *ibtrs_srv_sess_create(struct ibtrs_srv_ctx *ctx,
					     const u8 *uuid,
					     struct ib_device *dev,
					     const struct sockaddr *src);
void *ibtrs_srv_slot(struct ibtrs_srv_sess *sess, u32 id);
void ibtrs_srv_sync_chunk(struct ibtrs_srv_path *path, u32 id, u32 off,
			  u32 len, bool for_cpu);
extern struct ibtrs_srv_ctx *ibtrs_srv_the_ctx;
/* ibtrs-srv-io.c */
void ibtrs_srv_op_start_work(struct work_struct *work);
int ibtrs_srv_post_recv(struct ibtrs_srv_con *con, struct ibtrs_srv_iu *iu);
void ibtrs_srv_recv_done(struct ib_cq *cq, struct ib_wc *wc);
void ibtrs_srv_hb_work(struct work_struct *work);
/* ibtrs-srv-path.c */
void ibtrs_srv_wr_error(struct ibtrs_srv_path *path, struct ib_wc *wc,
			const char *op);
int ibtrs_srv_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);
#endif /* IBTRS_SRV_PRI_H */
