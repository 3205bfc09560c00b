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
/* receives are re-posted in chains of this many; the ring holds as many more */
#define IBTRS_RX_BATCH		16
#define IBTRS_ACK_TIMEOUT	14	/* 4.096 us * 2^14 = 67 ms per retry */
#define IBTRS_RSP_SLOT		32	/* bytes per chunk for its IO_RSP */
#define IBTRS_JOIN_GRACE_US	(10ULL * USEC_PER_SEC)	/* after the HB timeout */
#define IBTRS_DISC_WAIT_MS	1000	/* for the peer's DREP at teardown */
/*
 * Answers are posted unsignaled but every IBTRS_SIG_EVERY-th of a
 * connection (power of 2): nothing waits for an answer's completion, and
 * a signaled one lets the device retire the send queue entries before it.
 */
#define IBTRS_SIG_EVERY		16

extern struct workqueue_struct *ibtrs_srv_wq;
extern struct workqueue_struct *ibtrs_srv_io_wq;	/* op start works */
extern atomic_t ibtrs_srv_nr_sess;
extern wait_queue_head_t ibtrs_srv_sess_wq;

/**
 * enum ibtrs_srv_op_state - what occupies a chunk (&ibtrs_srv_op.state).
 * @IBTRS_OP_FREE: nothing.
 * @IBTRS_OP_ACTIVE: a request handed to the user, not answered yet.
 * @IBTRS_OP_PENDING: ACTIVE, and a failed-over retry of it (on another
 *	path) waits for its answer in @pending_path.
 * @IBTRS_OP_QUEUED: answered; a failed-over retry of it waits in
 *	@start_work to be started.
 *
 * The request's FREE -> ACTIVE and the answer's ACTIVE -> FREE are a
 * cmpxchg each, without a lock; every transition into or out of PENDING
 * and QUEUED (a retry) is made under the session's lock. So a retry that
 * races the answer either finds FREE (and starts) or makes the answer see
 * PENDING (which then takes the lock and queues the start).
 */
enum ibtrs_srv_op_state {
	IBTRS_OP_FREE,
	IBTRS_OP_ACTIVE,
	IBTRS_OP_PENDING,
	IBTRS_OP_QUEUED,
};

/**
 * struct ibtrs_srv_op - the request of one chunk.
 * @sess: owner.
 * @id: chunk id.
 * @state: &enum ibtrs_srv_op_state.
 * @path: the path the request came on; NULL once that path is gone (the
 *	answer is then dropped). Written by the request (the path's CQ
 *	context) or under the session's lock, read by the answer in an RCU
 *	read section (the path is freed after a grace period).
 * @con: its connection: a read's answer must use the QP the client bound
 *	its memory window on.
 * @pending_path: a retried request for this chunk that came (on another
 *	path) while the old one was still served; started after its answer.
 *	A newer retry (the client gave up that path too) replaces it. Under
 *	the session's lock.
 * @pending_con: the connection of @pending_path it came on.
 * @answering: set before the answer is posted, cleared when the chunk's
 *	next request starts: the client may have the answer, end the IO and
 *	send its tag's next request for this chunk on the same path before
 *	the answer moves the op out of ACTIVE; that request then waits like
 *	a retry (in @pending_path) instead of failing the path.
 * @start_work: starts the pending request (not in the answer's context).
 * @req: the validated request header (host order), stable while ACTIVE.
 * @data_wr: a read answer's RDMA_WRITE, or a pulled write's RDMA READ
 *	(write_mode pull); with @rsp_wr, @data_sge and @rsp_sge the op's work
 *	requests, here rather than on the stack (the kernel zeroes every
 *	stack variable: INIT_STACK_ALL_ZERO).
 * @pull_cqe: completion of the pulled write's RDMA READ (signaled): the
 *	write goes to the user from there.
 * @rsp_wr: the answer.
 * @inv_wr: chunk_mode rekey: the LOCAL_INV of the chunk's key, in front
 *	of @reg_wr, in front of the answer (ibtrs-srv-rekey.c).
 * @reg_wr: chunk_mode rekey: the chunk's REG_MR with its next key.
 * @data_sge: see @data_wr.
 * @rsp_sge: see @data_wr.
 */
struct ibtrs_srv_op {
	struct ibtrs_srv_sess *sess;
	u32 id;
	atomic_t state;
	struct ibtrs_srv_path *path;
	struct ibtrs_srv_con *con;
	struct ibtrs_srv_path *pending_path;
	struct ibtrs_srv_con *pending_con;
	bool answering;
	struct work_struct start_work;
	struct trs_io_req_info req;
	struct ib_rdma_wr data_wr;
	struct ib_send_wr rsp_wr;
	struct ib_send_wr inv_wr;
	struct ib_reg_wr reg_wr;
	struct ib_sge data_sge;
	struct ib_sge rsp_sge;
	struct ib_cqe pull_cqe;
};

/*
 * A receive buffer; the CQ hands it back through @cqe. @wr (with @sge) is
 * its receive work request, chained with others to re-post.
 */
struct ibtrs_srv_iu {
	struct ib_cqe cqe;
	struct ibtrs_srv_con *con;
	void *buf;
	u64 dma;
	struct ib_recv_wr wr;
	struct ib_sge sge;
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
 * @sig_cnt: answers posted; every IBTRS_SIG_EVERY-th is signaled.
 * @last_rx: jiffies of the last receive (any receive is life).
 * @rx_chain: receives consumed and not re-posted yet; touched only by
 *	this CQ's work.
 * @pull_depth: RDMA READs this connection may have out (the accept's
 *	initiator depth; 0: the client offered none, no pulled writes).
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
	atomic_t sig_cnt;
	unsigned long last_rx;
	struct ibtrs_rx_chain rx_chain;
	u8 pull_depth;
};

#define IBTRS_TX_RSP_OFF	TRS_MAX_RECV_MSG

/**
 * struct ibtrs_srv_stats - a path's IO counters, one per CPU.
 * @reqs: IO requests received.
 * @rsps: answers posted.
 * @sig_rsps: answers posted signaled.
 * @pulls: RDMA READs posted for pulled writes (write_mode pull).
 * @rekeys: chunk re-keys posted with answers (chunk_mode rekey).
 */
struct ibtrs_srv_stats {
	u64 reqs;
	u64 rsps;
	u64 sig_rsps;
	u64 pulls;
	u64 rekeys;
};

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
 * @mr: the session's pool, registered on @pd (LOCAL_WRITE | REMOTE_WRITE;
 *	LOCAL_WRITE only under chunk_mode rekey).
 * @rekey: chunk_mode rekey (the module parameter when the path was made):
 *	each chunk is reachable only through @chunk_mr[id], re-keyed with
 *	every answer (ibtrs-srv-rekey.c).
 * @chunk_mr: queue_depth MRs, one over each chunk's slot (rekey only).
 * @keys_buf: the KEYS messages of the join (rekey only).
 * @rekey_cqe: completion of the chunks' LOCAL_INV and REG_MR (errors only).
 * @reg_cqe: completion of the pool registration (errors only).
 * @hb_cqe: completion of heartbeats and their acks.
 * @hb: heartbeat state (trs/common/hb.c), under the session's lock.
 * @joined: INFO exchange done; under the session's lock.
 * @closed: teardown has begun, nothing may be posted any more; set under
 *	the session's lock, read in RCU read sections that post (the close
 *	work waits for them before it drains).
 * @need_sync: the device maps DMA (not rxe): chunks are synced.
 * @flags: IBTRS_PATH_FAILED.
 * @hb_work: heartbeat and liveness tick.
 * @close_work: teardown.
 * @addr: the client's address, for the log.
 * @stats: IO counters per CPU (requests received, answers posted, the
 *	signaled ones among them).
 * @hb_sent: heartbeats posted (under the session's lock).
 * @deferred: retried requests that waited for their chunk's original
 *	(under the session's lock).
 * @created_us: when the first connection came; a path must join within
 *	the heartbeat timeout + IBTRS_JOIN_GRACE_US of it, heartbeats or not.
 * @rcu: the closed path is freed after a grace period (an answer may
 *	still read it in an RCU read section).
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
	bool rekey;
	struct ib_mr **chunk_mr;
	struct ibtrs_dma_buf keys_buf;
	struct ib_cqe rekey_cqe;
	struct ib_cqe reg_cqe;
	struct ib_cqe hb_cqe;
	struct trs_hb hb;
	bool joined;
	bool closed;
	bool need_sync;
	unsigned long flags;
	struct delayed_work hb_work;
	struct work_struct close_work;
	char addr[64];
	struct ibtrs_srv_stats __percpu *stats;
	u64 hb_sent;
	u64 deferred;
	u64 created_us;
	struct rcu_head rcu;
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
 * @dead: no path left; freed when no chunk is busy any more.
 * @freeing: the session's free was started (under @lock).
 * @lock: the ops' retries (PENDING, QUEUED), @dead, @freeing and the
 *	paths' joined/closed/hb; not taken per IO.
 * @paths: &struct ibtrs_srv_path list.
 * @npaths: entries of @paths.
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
	bool freeing;
	spinlock_t lock;		/* see @lock above */
	struct list_head paths;
	int npaths;
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

/* The memory of chunk @id of @sess (vmap()ped). */
static inline void *ibtrs_srv_slot(struct ibtrs_srv_sess *sess, u32 id)
{
	return sess->pool + (size_t)id * sess->ctx->slot_size;
}

static inline const char *ibtrs_sess_name(const struct ibtrs_srv_sess *sess)
{
	return sess->named ? sess->name : "(unnamed)";
}

/* Sum over the CPUs of the counter at @off of @path's IO counters. */
static inline u64 ibtrs_srv_stat_off(const struct ibtrs_srv_path *path,
				     size_t off)
{
	u64 n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += *(const u64 *)((const char *)per_cpu_ptr(path->stats, cpu) +
				    off);
	return n;
}

#define ibtrs_srv_stat(path, field)	\
	ibtrs_srv_stat_off(path, offsetof(struct ibtrs_srv_stats, field))

/* KEYS messages of a path of @qd chunks (chunk_mode rekey) */
static inline u32 ibtrs_srv_rekey_nmsgs(u32 qd)
{
	return DIV_ROUND_UP(qd, TRS_KEYS_PER_MSG);
}

/* ibtrs-srv.c */
extern int ibtrs_srv_chunk_mode;
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
unsigned int ibtrs_srv_busy_ops(struct ibtrs_srv_sess *sess);
void ibtrs_srv_sess_dead_check(struct ibtrs_srv_sess *sess, bool may_sleep);
void ibtrs_srv_sync_chunk(struct ibtrs_srv_path *path, u32 id, u32 off,
			  u32 len, bool for_cpu);
extern struct ibtrs_srv_ctx *ibtrs_srv_the_ctx;
/* ibtrs-srv-io.c */
u64 ibtrs_srv_last_rx_us(struct ibtrs_srv_path *path, u64 now);
void ibtrs_srv_op_start_work(struct work_struct *work);
int ibtrs_srv_post_recv(struct ibtrs_srv_con *con, struct ibtrs_srv_iu *iu);
void ibtrs_srv_recv_flush(struct ibtrs_srv_con *con);
void ibtrs_srv_recv_done(struct ib_cq *cq, struct ib_wc *wc);
void ibtrs_srv_hb_work(struct work_struct *work);
/* ibtrs-srv-path.c */
void ibtrs_srv_wr_error(struct ibtrs_srv_path *path, struct ib_wc *wc,
			const char *op);
int ibtrs_srv_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);
/* ibtrs-srv-rekey.c */
int ibtrs_srv_rekey_alloc(struct ibtrs_srv_path *path);
void ibtrs_srv_rekey_free(struct ibtrs_srv_path *path);
struct ib_send_wr *ibtrs_srv_rekey_join(struct ibtrs_srv_path *path,
					struct ibtrs_srv_con *con,
					struct ib_reg_wr *regs,
					struct ib_send_wr *sends,
					struct ib_sge *sges,
					struct ib_send_wr *next);
struct ib_send_wr *ibtrs_srv_rekey_wrs(struct ibtrs_srv_op *op,
				       struct ibtrs_srv_path *path,
				       struct ib_send_wr *next);
#endif /* IBTRS_SRV_PRI_H */
