// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibtrs-clt.c - IBTRS client transport (ibtrs-client.ko).
 *
 * A session holds 1..IBTRS_CLT_MAX_PATHS paths to one server session whose
 * chunk pool all paths share (trs/PROTOCOL.md 2). Each path has nr_cons RC
 * connections (cid 0..nr_cons-1; cons_per_path, 0: one per online CPU) on
 * one device and PD, each with its own CQ, QP, receive ring and read MR
 * pool; INFO and heartbeats go on cid 0. An IO goes on the connection of
 * its hint (the block layer's hardware queue) of the path the policy
 * chose, and is answered there. A request is one RDMA_WRITE_WITH_IMM into the
 * chunk of its permit; the answer is one message (section 4). Reads expose
 * the caller's pages through a fast-registration MR (REG_MR chained before
 * the request, REMOTE_WRITE for exactly the IO buffer); the server ends
 * that access with SEND_WITH_INV, else the client posts LOCAL_INV and
 * completes the IO only in its completion (section 5, the kernel's
 * equivalent of the userspace memory windows). Writes send from the
 * caller's pages with the PD's local_dma_lkey (local access only).
 *
 * Pure protocol code (encode/validate, the receive prologue, heartbeat,
 * permits, path selection) is trs/common/, compiled unchanged.
 *
 * A failed path is torn down in process context; its unanswered IO is
 * re-posted on another path with the same chunk id (failover) and the path
 * reconnects with backoff (trs/common/backoff.c). With every path down new
 * IO gets -EAGAIN for ctrl_loss_tmo_ms, then -ENOTCONN.
 *
 * Unanswered IO of a failed path that finds no other path waits for a
 * reconnect as long as new IO does, then fails with -ENOTCONN.
 *
 * Sysfs: /sys/kernel/ibtrs-client/<sessname>/ (policy, counters,
 * add_path, per path reconnect/remove_path). Device removal: an ib_client.
 *
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/inet.h>
#include <linux/uuid.h>
#include <linux/random.h>
#include <linux/workqueue.h>
#include <linux/delay.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <rdma/mr_pool.h>
#include <net/net_namespace.h>
#include <net/ipv6.h>

#include "trs_common.h"
#include "ibtrs-kcore.h"
#include "ibtrs-clt.h"

#define IBTRS_CLT_MAX_PATHS	8
#define IBTRS_CLT_MAX_SGE	32	/* data SGEs of a write (+1 header) */
#define IBTRS_CLT_CM_TMO_MS	5000
#define IBTRS_CLT_HB_TICK	(HZ / 20)
/* receives beyond the queue depth: heartbeats and their acks */
#define IBTRS_CLT_RX_EXTRA	32

static uint max_queue_depth = 512;
module_param(max_queue_depth, uint, 0444);
MODULE_PARM_DESC(max_queue_depth, "largest server queue depth accepted (receives posted per path)");

static uint hb_interval_ms = 500;
module_param(hb_interval_ms, uint, 0444);
MODULE_PARM_DESC(hb_interval_ms, "heartbeat interval (default 500)");

static uint hb_missed_max = 3;
module_param(hb_missed_max, uint, 0444);
MODULE_PARM_DESC(hb_missed_max, "silent intervals before a path fails (default 3)");

static uint reconnect_min_ms = 1000;
module_param(reconnect_min_ms, uint, 0444);
MODULE_PARM_DESC(reconnect_min_ms, "first reconnect delay (default 1000, doubles per attempt)");

static uint reconnect_max_ms = 30000;
module_param(reconnect_max_ms, uint, 0444);
MODULE_PARM_DESC(reconnect_max_ms, "largest reconnect delay (default 30000)");

static uint ctrl_loss_tmo_ms = 30000;
module_param(ctrl_loss_tmo_ms, uint, 0444);
MODULE_PARM_DESC(ctrl_loss_tmo_ms, "with every path down, new IO waits this long, then fails (default 30000)");

static uint cons_per_path;
module_param(cons_per_path, uint, 0444);
MODULE_PARM_DESC(cons_per_path, "connections per path (default 0: one per online CPU, at most 64)");

static int mp_policy = TRS_MP_ROUND_ROBIN;
module_param(mp_policy, int, 0444);
MODULE_PARM_DESC(mp_policy, "path selection: 0 round-robin, 1 min-inflight, 2 min-latency");

static struct workqueue_struct *ibtrs_clt_wq;

/* every open session, for the device removal (ibtrs_clt_ib_client) */
static LIST_HEAD(ibtrs_clt_sessions);
static DEFINE_MUTEX(ibtrs_clt_sess_mutex);

/**
 * enum ibtrs_clt_path_state - life of a path.
 * @IBTRS_CLT_PATH_IDLE: no connection (never connected, or torn down).
 * @IBTRS_CLT_PATH_CONNECTING: CM steps, INFO exchange.
 * @IBTRS_CLT_PATH_CONNECTED: joined, carries IO.
 * @IBTRS_CLT_PATH_FAILED: failed; nothing is posted any more, the error
 *	work tears the connection down.
 */
enum ibtrs_clt_path_state {
	IBTRS_CLT_PATH_IDLE,
	IBTRS_CLT_PATH_CONNECTING,
	IBTRS_CLT_PATH_CONNECTED,
	IBTRS_CLT_PATH_FAILED,
};

struct ibtrs_clt_path;
struct ibtrs_clt_con;

/**
 * struct ibtrs_clt_iu - a receive buffer.
 * @cqe: completion of its receive.
 * @con: owner.
 * @b: TRS_MAX_RECV_MSG bytes, mapped from the device.
 */
struct ibtrs_clt_iu {
	struct ib_cqe cqe;
	struct ibtrs_clt_con *con;
	struct ibtrs_dma_buf b;
};

/**
 * struct ibtrs_clt_con - one RC connection of a path.
 * @path: owner.
 * @cid: index in the path.
 * @cm_id: RDMA CM id.
 * @cq: one CQ for sends and receives (softirq polling, comp vector
 *	@cid % num_comp_vectors).
 * @qp: the QP (@cm_id's).
 * @mr_pool: the read MR pool of @qp exists.
 * @rx: receive buffers.
 * @rx_num: entries of @rx.
 * @ctl_cqe: completion of control sends (INFO_REQ, heartbeats, acks).
 * @reg_cqe: completion (errors only) of unsignaled REG_MRs.
 * @cm_done: a CM step finished (@cm_err).
 * @cm_err: its result.
 * @params: the server's accept of this connection.
 * @max_sge: send SGEs of @qp.
 * @cm_dead: a failed connect unwinds: the CM handler ignores its events
 *	(set under the cm_id's handler lock, so none runs any more).
 * @reqs: requests posted on this connection.
 */
struct ibtrs_clt_con {
	struct ibtrs_clt_path *path;
	int cid;
	struct rdma_cm_id *cm_id;
	struct ib_cq *cq;
	struct ib_qp *qp;
	bool mr_pool;
	struct ibtrs_clt_iu *rx;
	int rx_num;
	struct ib_cqe ctl_cqe;
	struct ib_cqe reg_cqe;
	struct completion cm_done;
	int cm_err;
	struct trs_conn_params params;
	u32 max_sge;
	bool cm_dead;
	atomic64_t reqs;
};

/**
 * struct ibtrs_clt_io - the request on one chunk (one per permit).
 * @sess: owner.
 * @id: chunk (permit) id.
 * @send_cqe: completion of the RDMA_WRITE_WITH_IMM.
 * @inv_cqe: completion of a LOCAL_INV.
 * @ref: references: the send completion, the answer (or the path's
 *	teardown in its place) and a LOCAL_INV in flight; the last one ends
 *	the IO. Send completion and answer come in either order.
 * @inflight: a request is posted and not yet ended (under sess->lock).
 * @answered: the answer (or its replacement at teardown) was taken.
 * @path: the path the request went on.
 * @con: its connection there (the answer must come on it).
 * @hint: the caller's connection hint (index = @hint % nr_cons).
 * @mr: the read buffer's registration (of @con's pool), NULL for writes.
 * @hdr: request header + user header (DMA source of the header SGE).
 * @hdr_dma: mapping of @hdr.
 * @hdr_len: bytes of @hdr sent.
 * @sg: the caller's data.
 * @sg_cnt: entries of @sg.
 * @nents: mapped entries of @sg (0: not mapped).
 * @dir: &enum ibtrs_clt_dir.
 * @datalen: bytes of data.
 * @usrlen: bytes of user header in @hdr.
 * @status: result given to @conf.
 * @start_us: when the request was posted (latency average).
 * @conf: the caller's completion.
 * @priv: its argument.
 * @sge: SGEs of the request (data, then the header).
 * @pending: in sess->pending while it waits for a path (@path NULL).
 */
struct ibtrs_clt_io {
	struct ibtrs_clt_sess *sess;
	u32 id;
	struct ib_cqe send_cqe;
	struct ib_cqe inv_cqe;
	atomic_t ref;
	bool inflight;
	bool answered;
	struct ibtrs_clt_path *path;
	struct ibtrs_clt_con *con;
	unsigned int hint;
	struct ib_mr *mr;
	void *hdr;
	u64 hdr_dma;
	u32 hdr_len;
	struct scatterlist *sg;
	unsigned int sg_cnt;
	int nents;
	enum ibtrs_clt_dir dir;
	u32 datalen;
	u32 usrlen;
	int status;
	u64 start_us;
	ibtrs_clt_conf_fn conf;
	void *priv;
	struct ib_sge sge[IBTRS_CLT_MAX_SGE + 1];
	struct list_head pending;
};

/**
 * struct ibtrs_clt_path - one path: @ncons RC connections to the server.
 * @sess: owner.
 * @idx: index in the session.
 * @addr: its two ends.
 * @uuid: path_uuid (stable across reconnects).
 * @recon_cnt: reconnects so far.
 * @state: &enum ibtrs_clt_path_state, changed under sess->lock.
 * @ncons: connections (the session's nr_cons).
 * @cons: the connections; cid 0 carries INFO and heartbeats.
 * @dev: the RDMA device of every connection.
 * @pd: protection domain of every connection.
 * @txb: the INFO_REQ buffer (sent on cid 0).
 * @info_done: INFO_RSP arrived (@info_err).
 * @info_err: its result.
 * @params: the server's accept.
 * @info: the server's INFO_RSP.
 * @max_sge: send SGEs every connection has.
 * @lock: @hb, @hb_rtt_us, @lat_ewma.
 * @hb: heartbeat state (trs/common/hb.c).
 * @hb_rtt_us: last heartbeat round trip.
 * @lat_ewma: IO latency average (trs/common/mp.c).
 * @hb_work: heartbeat tick.
 * @err_work: tears a failed path down (process context).
 * @reco_work: reconnects a path that is down.
 * @reco_attempt: reconnect attempts since the path was last up.
 * @conn_mutex: held while the path connects or is torn down, so that the
 *	device removal can wait for either.
 * @failing: the error work was queued.
 * @inflight: IOs posted on the path and not ended.
 * @reqs: requests posted.
 * @rsps: answers received.
 * @reg_wrs: REG_MR and LOCAL_INV posted.
 * @local_invs: LOCAL_INVs posted (answers without remote invalidation).
 * @hb_sent: heartbeats sent.
 * @proto_errors: protocol violations seen.
 * @failovers: IOs re-posted on another path after this one failed.
 * @reconnects: successful reconnects.
 * @msgs: messages posted (requests, heartbeats and their acks, INFO_REQ).
 * @kobj: its sysfs directory (owns the struct).
 * @removing: remove_path runs: no reconnect.
 * @reco_now: the teardown is a requested reconnect: no backoff.
 */
struct ibtrs_clt_path {
	struct ibtrs_clt_sess *sess;
	int idx;
	struct ibtrs_clt_addr addr;
	u8 uuid[TRS_UUID_LEN];
	u16 recon_cnt;
	enum ibtrs_clt_path_state state;
	int ncons;
	struct ibtrs_clt_con *cons;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ibtrs_dma_buf txb;
	struct completion info_done;
	int info_err;
	struct trs_conn_params params;
	struct trs_info info;
	u32 max_sge;
	spinlock_t lock;	/* @hb, @hb_rtt_us, @lat_ewma */
	struct trs_hb hb;
	u64 hb_rtt_us;
	u64 lat_ewma;
	struct delayed_work hb_work;
	struct work_struct err_work;
	struct delayed_work reco_work;
	u32 reco_attempt;
	struct mutex conn_mutex;	/* connect and teardown */
	atomic_t failing;
	atomic_t inflight;
	atomic64_t reqs;
	atomic64_t rsps;
	atomic64_t reg_wrs;
	atomic64_t local_invs;
	atomic64_t hb_sent;
	atomic64_t proto_errors;
	atomic64_t failovers;
	atomic64_t reconnects;
	atomic64_t msgs;
	struct kobject kobj;
	bool removing;
	bool reco_now;
};

/**
 * struct ibtrs_clt_sess - a client session.
 * @list: in ibtrs_clt_sessions (under ibtrs_clt_sess_mutex).
 * @sessname: its name.
 * @uuid: sess_uuid.
 * @port: server port.
 * @nr_cons: connections per path (fixed at open).
 * @npaths: slots of @paths in use (removed paths leave NULL).
 * @paths: the paths; changed under ibtrs_clt_sess_mutex and @lock, an index
 *	stays a path's for its life (sess->mp[idx]).
 * @sized: the first accept sized the session (the fields below).
 * @queue_depth: chunks = permits.
 * @chunk_size: bytes per chunk, the largest IO.
 * @max_usr_len: largest user header.
 * @slot_size: chunk stride of the pool.
 * @max_segs: data segments per IO.
 * @mr_pages: pages of a read registration (ib_map_mr_sg() maps pages, a
 *	segment may span several).
 * @max_io: largest IO: the chunk, or what @mr_pages can map.
 * @lock: permits, @ios' state, path states, @mp, @rr_cursor, posting
 *	(one lock for all connections: a post must not race a path's state
 *	change and drain, see ibtrs_clt_path_down()).
 * @permits: permit bitmap (trs/common/permit.c) under @lock.
 * @permit_map: its words.
 * @ios: one request object per chunk.
 * @hdrs: the request headers of @ios.
 * @mp: path selection input (trs/common/mp.c) under @lock.
 * @rr_cursor: path selection cursor.
 * @seq: request sequence number.
 * @closing: ibtrs_clt_close() runs: no reconnects.
 * @all_down_at: jiffies when the last usable path went down, 0 while one
 *	is up (ctrl_loss_tmo_ms).
 * @pending: IO of failed paths waiting for a path (under @lock).
 * @pending_work: fails @pending after ctrl_loss_tmo_ms.
 * @kobj: /sys/kernel/ibtrs-client/<sessname>/ (owns the struct).
 * @paths_kobj: its paths/ directory.
 * @ctl_mutex: serializes add_path, remove_path, reconnect and the close.
 * @mp_policy: &enum trs_mp_policy, under @lock.
 * @inflight: requests taken and not yet ended.
 * @nr_ios: requests taken (ibtrs_clt_request()).
 * @read_bytes: bytes of those reads.
 * @write_bytes: bytes of those writes.
 * @gone: counters of removed paths (msgs, reg_wrs, failovers,
 *	reconnects), under ibtrs_clt_sess_mutex.
 */
struct ibtrs_clt_sess {
	struct list_head list;
	char sessname[TRS_SESSNAME_MAX];
	u8 uuid[TRS_UUID_LEN];
	u16 port;
	int nr_cons;
	int npaths;
	struct ibtrs_clt_path *paths[IBTRS_CLT_MAX_PATHS];
	bool sized;
	u32 queue_depth;
	u32 chunk_size;
	u32 max_usr_len;
	u32 slot_size;
	u32 max_segs;
	u32 mr_pages;
	u32 max_io;
	spinlock_t lock;	/* permits, IO and path states, posting */
	struct trs_permit_pool permits;
	u64 *permit_map;
	struct ibtrs_clt_io *ios;
	void *hdrs;
	struct trs_mp_path mp[IBTRS_CLT_MAX_PATHS];
	u32 rr_cursor;
	u64 seq;
	bool closing;
	unsigned long all_down_at;
	struct list_head pending;
	struct delayed_work pending_work;
	struct kobject kobj;
	struct kobject *paths_kobj;
	struct mutex ctl_mutex;	/* add_path, remove_path, reconnect, close */
	int mp_policy;
	atomic_t inflight;
	atomic64_t nr_ios;
	atomic64_t read_bytes;
	atomic64_t write_bytes;
	u64 gone[4];
};

#define ibtrs_clt_err(path, fmt, ...)					\
	do {								\
		const struct ibtrs_clt_path *_p = (path);		\
									\
		pr_err("sess %s path %pISp: " fmt, _p->sess->sessname,	\
		       &_p->addr.dst, ##__VA_ARGS__);			\
	} while (0)
#define ibtrs_clt_info(path, fmt, ...)					\
	do {								\
		const struct ibtrs_clt_path *_p = (path);		\
									\
		pr_info("sess %s path %pISp: " fmt, _p->sess->sessname, \
			&_p->addr.dst, ##__VA_ARGS__);			\
	} while (0)

static void ibtrs_clt_pending_run(struct ibtrs_clt_sess *sess, bool force);

static u64 ibtrs_clt_now_us(void)
{
	return div_u64(ktime_get_ns(), NSEC_PER_USEC);
}

/* Under sess->lock. */
static bool ibtrs_clt_any_usable(const struct ibtrs_clt_sess *sess)
{
	int i;

	for (i = 0; i < sess->npaths; i++)
		if (sess->mp[i].usable)
			return true;
	return false;
}

/* Fail @path: nothing more is posted on it; the error work tears it down. */
static void ibtrs_clt_path_fail(struct ibtrs_clt_path *path, const char *why)
{
	struct ibtrs_clt_sess *sess = path->sess;
	unsigned long flags;
	bool was_up, connecting;

	spin_lock_irqsave(&sess->lock, flags);
	was_up = path->state == IBTRS_CLT_PATH_CONNECTED;
	connecting = path->state == IBTRS_CLT_PATH_CONNECTING;
	if (path->state != IBTRS_CLT_PATH_IDLE)
		path->state = IBTRS_CLT_PATH_FAILED;
	sess->mp[path->idx].usable = false;
	if (was_up && !ibtrs_clt_any_usable(sess))
		sess->all_down_at = jiffies ? : 1;
	spin_unlock_irqrestore(&sess->lock, flags);
	if (connecting) {
		int i;

		/* do not let ibtrs_clt_path_connect() wait for its timeouts */
		for (i = 0; i < path->ncons; i++) {
			struct ibtrs_clt_con *con = &path->cons[i];

			if (!completion_done(&con->cm_done)) {
				con->cm_err = -ECONNRESET;
				complete(&con->cm_done);
			}
		}
		if (!completion_done(&path->info_done)) {
			path->info_err = -ECONNRESET;
			complete(&path->info_done);
		}
	}
	if (was_up && !atomic_xchg(&path->failing, 1)) {
		ibtrs_clt_err(path, "failed: %s\n", why);
		queue_work(ibtrs_clt_wq, &path->err_work);
	}
}

/* Every failed work completion goes through here. */
static void ibtrs_clt_wr_error(struct ibtrs_clt_path *path, struct ib_wc *wc,
			       const char *op)
{
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		ibtrs_clt_err(path, "%s failed: %s (%d)\n", op,
			      ib_wc_status_msg(wc->status), wc->status);
	ibtrs_clt_path_fail(path, "work request failed");
}

/* ---------------------------------------------------------------- */
/* IO end                                                            */

/* Undo the mappings of a posted @io (ibtrs_clt_io_post()). */
static void ibtrs_clt_io_unmap(struct ibtrs_clt_io *io)
{
	struct ibtrs_clt_path *path = io->path;

	if (io->nents)
		ib_dma_unmap_sg(path->dev, io->sg, io->sg_cnt,
				io->dir == IBTRS_CLT_READ ? DMA_FROM_DEVICE :
				DMA_TO_DEVICE);
	io->nents = 0;
	ib_dma_unmap_single(path->dev, io->hdr_dma, io->hdr_len,
			    DMA_TO_DEVICE);
	if (io->mr) {
		ib_mr_pool_put(io->con->qp, &io->con->qp->rdma_mrs, io->mr);
		io->mr = NULL;
	}
}

static void ibtrs_clt_io_end(struct ibtrs_clt_io *io)
{
	struct ibtrs_clt_sess *sess = io->sess;
	struct ibtrs_clt_path *path = io->path;
	u64 now = ibtrs_clt_now_us();
	unsigned long flags;
	int i;

	ibtrs_clt_io_unmap(io);
	spin_lock_irqsave(&path->lock, flags);
	trs_mp_lat_sample(&path->lat_ewma, now > io->start_us ?
			  now - io->start_us : 0);
	spin_unlock_irqrestore(&path->lock, flags);

	spin_lock_irqsave(&sess->lock, flags);
	io->inflight = false;
	sess->mp[path->idx].lat_ewma = path->lat_ewma;
	for (i = 0; i < sess->npaths; i++)
		if (i != path->idx && !sess->mp[i].inflight)
			trs_mp_lat_age(&sess->mp[i].lat_ewma);
	if (sess->mp[path->idx].inflight)
		sess->mp[path->idx].inflight--;
	spin_unlock_irqrestore(&sess->lock, flags);
	atomic_dec(&path->inflight);
	atomic_dec(&sess->inflight);
	io->conf(io->priv, io->status);
}

static void ibtrs_clt_io_put(struct ibtrs_clt_io *io)
{
	if (atomic_dec_and_test(&io->ref))
		ibtrs_clt_io_end(io);
}

static void ibtrs_clt_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_clt_io *io = container_of(wc->wr_cqe, struct ibtrs_clt_io,
					       send_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS))
		ibtrs_clt_wr_error(io->path, wc, "request");
	ibtrs_clt_io_put(io);
}

static void ibtrs_clt_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_clt_io *io = container_of(wc->wr_cqe, struct ibtrs_clt_io,
					       inv_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		ibtrs_clt_wr_error(io->path, wc, "LOCAL_INV");
		io->status = -EIO;
	}
	ibtrs_clt_io_put(io);
}

static void ibtrs_clt_ctl_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_clt_con *con = cq->cq_context;

	if (unlikely(wc->status != IB_WC_SUCCESS))
		ibtrs_clt_wr_error(con->path, wc, "control send");
}

/* ---------------------------------------------------------------- */
/* Receive                                                           */

static int ibtrs_clt_post_recv(struct ibtrs_clt_iu *iu)
{
	struct ibtrs_clt_con *con = iu->con;

	return ibtrs_post_recv_one(con->qp, con->path->pd, &iu->cqe, iu->b.dma,
				   TRS_MAX_RECV_MSG);
}

static int ibtrs_clt_post_imm(struct ibtrs_clt_con *con, u32 imm)
{
	struct ibtrs_clt_path *path = con->path;
	struct ib_send_wr wr = {};

	wr.wr_cqe = &con->ctl_cqe;
	wr.opcode = IB_WR_SEND_WITH_IMM;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.ex.imm_data = cpu_to_be32(imm);
	if (ib_post_send(con->qp, &wr, NULL))
		return -EIO;
	atomic64_inc(&path->msgs);
	return 0;
}

static void ibtrs_clt_info_rsp(struct ibtrs_clt_path *path, const void *buf,
			       u32 len)
{
	const char *why = "";
	int err;

	if (READ_ONCE(path->state) != IBTRS_CLT_PATH_CONNECTING ||
	    completion_done(&path->info_done)) {
		ibtrs_clt_path_fail(path, "unexpected INFO_RSP");
		return;
	}
	err = trs_info_rsp_decode(buf, len, &path->params, &path->info, &why);
	if (err)
		ibtrs_clt_err(path, "bad INFO_RSP: %s\n", why);
	path->info_err = err;
	complete(&path->info_done);
}

/*
 * The answer of chunk @m->id. @is_msg: an IO_RSP message (@rsp_len its
 * length field), else an immediate.
 */
static void ibtrs_clt_io_answer(struct ibtrs_clt_con *con,
				const struct trs_rx_msg *m, bool is_msg,
				u32 rsp_len)
{
	struct ibtrs_clt_path *path = con->path;
	struct ibtrs_clt_sess *sess = path->sess;
	struct ibtrs_clt_io *io = &sess->ios[m->id];
	const char *proto = NULL;
	bool local_inv = false;
	unsigned long flags;
	int status = m->status;

	spin_lock_irqsave(&sess->lock, flags);
	if (!io->inflight || io->con != con || io->answered) {
		spin_unlock_irqrestore(&sess->lock, flags);
		atomic64_inc(&path->proto_errors);
		ibtrs_clt_path_fail(path, "protocol error: no request on the answer's connection");
		return;
	}
	io->answered = true;
	spin_unlock_irqrestore(&sess->lock, flags);
	atomic64_inc(&path->rsps);

	if (io->dir == IBTRS_CLT_READ) {
		if (!is_msg) {
			proto = "READ answered by an immediate";
			status = -EIO;
		} else if (!status && rsp_len != io->datalen) {
			proto = "successful READ answer shorter or longer than the request";
			status = -EIO;
		}
		if (io->mr) {
			if (m->inv && m->inv_rkey != io->mr->rkey) {
				proto = "invalidated rkey is not the request's";
				status = -EIO;
				local_inv = true;
			} else if (!m->inv) {
				local_inv = true;
			}
		}
	} else if (m->inv) {
		proto = "WRITE answer invalidated an rkey";
		status = -EIO;
	}
	io->status = status;
	if (local_inv) {
		struct ib_send_wr wr = {};

		wr.opcode = IB_WR_LOCAL_INV;
		wr.ex.invalidate_rkey = io->mr->rkey;
		wr.wr_cqe = &io->inv_cqe;
		wr.send_flags = IB_SEND_SIGNALED;
		atomic_inc(&io->ref);
		atomic64_inc(&path->reg_wrs);
		atomic64_inc(&path->local_invs);
		if (ib_post_send(con->qp, &wr, NULL)) {
			/* the path's teardown ends the MR's access */
			atomic_dec(&io->ref);
			io->status = -EIO;
			ibtrs_clt_path_fail(path, "cannot post LOCAL_INV");
		}
	}
	if (proto) {
		atomic64_inc(&path->proto_errors);
		ibtrs_clt_err(path, "protocol error: chunk %u: %s\n", io->id,
			      proto);
		ibtrs_clt_path_fail(path, "protocol error");
	}
	ibtrs_clt_io_put(io);
}

static void ibtrs_clt_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_clt_iu *iu = container_of(wc->wr_cqe, struct ibtrs_clt_iu,
					       cqe);
	struct ibtrs_clt_con *con = iu->con;
	struct ibtrs_clt_path *path = con->path;
	struct ibtrs_clt_sess *sess = path->sess;
	struct trs_io_rsp_info r = {};
	u8 msg[TRS_MAX_RECV_MSG];
	struct trs_rx_wc w = {};
	struct trs_rx_msg m;
	const char *why = "";
	unsigned long flags;
	u64 rtt;
	int err;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		ibtrs_clt_wr_error(path, wc, "receive");
		return;
	}
	if (READ_ONCE(path->state) == IBTRS_CLT_PATH_FAILED)
		return;
	w.ok = true;
	w.op = wc->opcode == IB_WC_RECV ? TRS_RX_OP_RECV :
	       wc->opcode == IB_WC_RECV_RDMA_WITH_IMM ?
	       TRS_RX_OP_RECV_RDMA_IMM : TRS_RX_OP_OTHER;
	w.with_imm = wc->wc_flags & IB_WC_WITH_IMM;
	w.imm = w.with_imm ? be32_to_cpu(wc->ex.imm_data) : 0;
	w.with_inv = wc->wc_flags & IB_WC_WITH_INVALIDATE;
	w.inv_rkey = w.with_inv ? wc->ex.invalidate_rkey : 0;
	w.byte_len = wc->byte_len;
	ib_dma_sync_single_for_cpu(path->dev, iu->b.dma, TRS_MAX_RECV_MSG,
				   DMA_FROM_DEVICE);
	err = trs_rx_decode_clt(&w, iu->b.buf, READ_ONCE(sess->queue_depth), &m,
				&why);
	if (!err && m.kind == TRS_RX_IO_RSP && !w.with_imm)
		err = trs_io_rsp_decode(iu->b.buf, w.byte_len, sess->queue_depth,
					&r, &why);
	if (err) {
		atomic64_inc(&path->proto_errors);
		ibtrs_clt_err(path, "bad receive: %s (opcode %d, %u bytes)\n",
			      why, wc->opcode, wc->byte_len);
		ibtrs_clt_path_fail(path, "protocol error");
		return;
	}
	if (m.kind == TRS_RX_MSG)
		memcpy(msg, iu->b.buf, m.len);
	ib_dma_sync_single_for_device(path->dev, iu->b.dma, TRS_MAX_RECV_MSG,
				      DMA_FROM_DEVICE);
	err = ibtrs_clt_post_recv(iu);
	if (err) {
		ibtrs_clt_path_fail(path, "cannot repost a receive");
		return;
	}

	spin_lock_irqsave(&path->lock, flags);
	trs_hb_on_rx(&path->hb, ibtrs_clt_now_us());	/* any receive is life */
	if (m.kind == TRS_RX_HB_ACK &&
	    !trs_hb_on_ack(&path->hb, m.id, ibtrs_clt_now_us(), &rtt))
		path->hb_rtt_us = rtt;
	spin_unlock_irqrestore(&path->lock, flags);

	switch (m.kind) {
	case TRS_RX_HB:
		if (ibtrs_clt_post_imm(con, trs_to_imm(TRS_IMM_HB_ACK, m.id, 0)))
			ibtrs_clt_path_fail(path, "cannot answer a heartbeat");
		break;
	case TRS_RX_HB_ACK:
		break;
	case TRS_RX_IO_RSP:
		ibtrs_clt_io_answer(con, &m, !w.with_imm, r.len);
		break;
	case TRS_RX_MSG:	/* INFO_RSP, the only message, on cid 0 */
		if (con->cid)
			ibtrs_clt_path_fail(path, "INFO_RSP not on connection 0");
		else
			ibtrs_clt_info_rsp(path, msg, m.len);
		break;
	default:
		ibtrs_clt_path_fail(path, "unexpected receive");
	}
}

/* ---------------------------------------------------------------- */
/* Heartbeat                                                         */

static void ibtrs_clt_hb_work(struct work_struct *work)
{
	struct ibtrs_clt_path *path = container_of(to_delayed_work(work),
						   struct ibtrs_clt_path,
						   hb_work);
	u64 now = ibtrs_clt_now_us();
	const char *why = NULL;
	unsigned long flags;
	u16 seq;

	if (READ_ONCE(path->state) != IBTRS_CLT_PATH_CONNECTED)
		return;
	spin_lock_irqsave(&path->lock, flags);
	if (trs_hb_timed_out(&path->hb, now)) {
		why = "heartbeat timeout";
	} else if (trs_hb_due(&path->hb, now, &seq)) {
		if (ibtrs_clt_post_imm(&path->cons[0],
				       trs_to_imm(TRS_IMM_HB, seq, 0)))
			why = "cannot post a heartbeat";
		else
			atomic64_inc(&path->hb_sent);
	}
	spin_unlock_irqrestore(&path->lock, flags);
	if (why) {
		ibtrs_clt_path_fail(path, why);
		return;
	}
	queue_delayed_work(ibtrs_clt_wq, &path->hb_work, IBTRS_CLT_HB_TICK);
}

/* ---------------------------------------------------------------- */
/* Connection set-up and teardown                                    */

static void ibtrs_clt_qp_event(struct ib_event *ev, void *ctx)
{
	struct ibtrs_clt_con *con = ctx;
	struct ibtrs_clt_path *path = con->path;

	if (ev->event == IB_EVENT_COMM_EST)
		return;
	ibtrs_clt_err(path, "connection %d: QP event %s (%d)\n", con->cid,
		      ib_event_msg(ev->event), ev->event);
	ibtrs_clt_path_fail(path, "QP event");
}

static void ibtrs_clt_free_rx(struct ibtrs_clt_con *con)
{
	int i;

	for (i = 0; i < con->rx_num; i++)
		ibtrs_dma_buf_free(con->path->dev, &con->rx[i].b);
	kfree(con->rx);
	con->rx = NULL;
	con->rx_num = 0;
}

static int ibtrs_clt_alloc_rx(struct ibtrs_clt_con *con, int n)
{
	int i, ret;

	con->rx = kcalloc(n, sizeof(*con->rx), GFP_KERNEL);
	if (!con->rx)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct ibtrs_clt_iu *iu = &con->rx[i];

		iu->con = con;
		iu->cqe.done = ibtrs_clt_recv_done;
		ret = ibtrs_dma_buf_alloc(con->path->dev, &iu->b,
					  TRS_MAX_RECV_MSG, DMA_FROM_DEVICE);
		if (ret)
			goto out_free_rx;
		con->rx_num = i + 1;
	}
	return 0;

out_free_rx:
	ibtrs_clt_free_rx(con);
	return ret;
}

/*
 * Called from the CM handler once the address of @con is resolved. The
 * first connection of the path allocates the PD and the INFO buffer; the
 * others must be on the same device. On an error, what was made stays for
 * the connect's unwinding (drain, then ibtrs_clt_destroy_ib()): receives
 * may be posted already.
 */
static int ibtrs_clt_create_ib(struct ibtrs_clt_con *con)
{
	struct ibtrs_clt_path *path = con->path;
	struct ib_device *dev = con->cm_id->device;
	int sq, rq, i, ret;

	if (con->cid == 0) {
		WRITE_ONCE(path->dev, dev);
		path->pd = ib_alloc_pd(dev, 0);
		if (IS_ERR(path->pd)) {
			ret = PTR_ERR(path->pd);
			path->pd = NULL;
			return ret;
		}
		ret = ibtrs_dma_buf_alloc(dev, &path->txb, TRS_MAX_RECV_MSG,
					  DMA_TO_DEVICE);
		if (ret)
			return ret;
	} else if (dev != path->dev || !path->pd) {
		ibtrs_clt_err(path, "connection %d resolved to another device\n",
			      con->cid);
		return -EXDEV;
	}
	/* MR + request + LOCAL_INV per chunk; heartbeats, acks, INFO_REQ */
	sq = 3 * max_queue_depth + IBTRS_CLT_RX_EXTRA;
	/* an answer per chunk, heartbeats and their acks */
	rq = max_queue_depth + IBTRS_CLT_RX_EXTRA;

	/* +2: drain WRs of both queues */
	con->cq = ib_alloc_cq(dev, con, sq + rq + 2,
			      con->cid % dev->num_comp_vectors,
			      IB_POLL_SOFTIRQ);
	if (IS_ERR(con->cq)) {
		ret = PTR_ERR(con->cq);
		con->cq = NULL;
		return ret;
	}
	ret = ibtrs_rc_qp_create(con->cm_id, path->pd, con->cq, sq, rq,
				 IBTRS_CLT_MAX_SGE + 1, ibtrs_clt_qp_event, con,
				 &con->max_sge);
	if (ret)
		return ret;
	con->qp = con->cm_id->qp;
	ret = ibtrs_clt_alloc_rx(con, rq);
	if (ret)
		return ret;
	for (i = 0; i < con->rx_num; i++) {
		ret = ibtrs_clt_post_recv(&con->rx[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* Undo ibtrs_clt_create_ib() of every connection and the cm_ids; drained. */
static void ibtrs_clt_destroy_ib(struct ibtrs_clt_path *path)
{
	int i;

	for (i = 0; i < path->ncons; i++) {
		struct ibtrs_clt_con *con = &path->cons[i];

		if (con->mr_pool) {
			ib_mr_pool_destroy(con->qp, &con->qp->rdma_mrs);
			con->mr_pool = false;
		}
		if (con->qp) {
			rdma_destroy_qp(con->cm_id);
			con->qp = NULL;
		}
		if (con->cq) {
			ib_free_cq(con->cq);
			con->cq = NULL;
		}
		if (con->rx)
			ibtrs_clt_free_rx(con);
	}
	ibtrs_dma_buf_free(path->dev, &path->txb);
	if (path->pd) {
		ib_dealloc_pd(path->pd);
		path->pd = NULL;
	}
	for (i = 0; i < path->ncons; i++) {
		struct ibtrs_clt_con *con = &path->cons[i];

		if (con->cm_id) {
			rdma_destroy_id(con->cm_id);
			con->cm_id = NULL;
		}
	}
	WRITE_ONCE(path->dev, NULL);
}

static int ibtrs_clt_route_resolved(struct ibtrs_clt_con *con)
{
	struct ibtrs_clt_path *path = con->path;
	struct rdma_conn_param param = {};
	struct trs_msg_conn_req req;
	struct trs_conn_req_info ri = {};

	ri.ver_major = TRS_PROTO_VER_MAJOR;
	ri.ver_minor = TRS_PROTO_VER_MINOR;
	ri.cid = con->cid;
	ri.cid_num = path->ncons;
	ri.recon_cnt = path->recon_cnt;
	ri.flags = TRS_CONN_F_FIRST;
	memcpy(ri.sess_uuid, path->sess->uuid, TRS_UUID_LEN);
	memcpy(ri.path_uuid, path->uuid, TRS_UUID_LEN);
	trs_conn_req_encode(&req, &ri);
	param.private_data = &req;
	param.private_data_len = sizeof(req);
	param.retry_count = 3;
	param.rnr_retry_count = 7;
	return rdma_connect_locked(con->cm_id, &param);
}

static void ibtrs_clt_cm_step_done(struct ibtrs_clt_con *con, int err)
{
	con->cm_err = err;
	complete(&con->cm_done);
}

static int ibtrs_clt_cm_handler(struct rdma_cm_id *cm_id,
				struct rdma_cm_event *ev)
{
	struct ibtrs_clt_con *con = cm_id->context;
	struct ibtrs_clt_path *path = con->path;
	const char *why = "";
	int err;

	if (READ_ONCE(con->cm_dead))
		return 0;	/* the connect unwinds and destroys us */
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		err = ibtrs_clt_create_ib(con);
		if (!err)
			err = rdma_resolve_route(cm_id, IBTRS_CLT_CM_TMO_MS);
		if (err)
			ibtrs_clt_cm_step_done(con, err);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		err = ibtrs_clt_route_resolved(con);
		if (err)
			ibtrs_clt_cm_step_done(con, err);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		err = trs_conn_rsp_decode(ev->param.conn.private_data,
					  ev->param.conn.private_data_len,
					  &con->params, &why);
		if (err)
			ibtrs_clt_err(path, "bad accept: %s\n", why);
		ibtrs_clt_cm_step_done(con, err);
		break;
	case RDMA_CM_EVENT_REJECTED:
		err = trs_conn_rsp_decode(ev->param.conn.private_data,
					  ev->param.conn.private_data_len,
					  &con->params, &why);
		ibtrs_clt_err(path, "connection %d rejected: %s (%s)\n", con->cid,
			      err == -ECONNREFUSED ? why : "no IBTRS reject",
			      rdma_reject_msg(cm_id, ev->status));
		ibtrs_clt_cm_step_done(con, -ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		ibtrs_clt_err(path, "connection %d: CM event %s (%d)\n", con->cid,
			      rdma_event_msg(ev->event), ev->status);
		ibtrs_clt_cm_step_done(con, -EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		/* any connection's end fails the whole path */
		ibtrs_clt_path_fail(path, rdma_event_msg(ev->event));
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		ibtrs_clt_err(path, "unexpected CM event %s (%d)\n",
			      rdma_event_msg(ev->event), ev->status);
		ibtrs_clt_path_fail(path, "unexpected CM event");
		break;
	}
	return 0;
}

/* The accept of the first path sizes the session; later ones must agree. */
static int ibtrs_clt_sess_size(struct ibtrs_clt_path *path)
{
	struct ibtrs_clt_sess *sess = path->sess;
	const struct trs_conn_params *p = &path->params;
	u32 pages, hdr_len, i;
	int ret;

	if (p->queue_depth > max_queue_depth) {
		ibtrs_clt_err(path, "server queue depth %u > max_queue_depth %u\n",
			      p->queue_depth, max_queue_depth);
		return -EINVAL;
	}
	if (p->max_usr_len < 1) {
		ibtrs_clt_err(path, "server max_usr_len 0\n");
		return -EINVAL;
	}
	pages = min_t(u32, p->chunk_size / PAGE_SIZE + 1,
		      path->dev->attrs.max_fast_reg_page_list_len);
	if (pages < 2 || path->max_sge < 2) {
		ibtrs_clt_err(path, "device lacks fast registration or SGEs\n");
		return -EOPNOTSUPP;
	}
	if (sess->sized) {
		if (p->queue_depth != sess->queue_depth ||
		    p->chunk_size != sess->chunk_size ||
		    p->max_usr_len != sess->max_usr_len) {
			ibtrs_clt_err(path, "accept differs from the session's (queue depth %u, chunk %u)\n",
				      sess->queue_depth, sess->chunk_size);
			return -EINVAL;
		}
		if (path->max_sge - 1 < sess->max_segs || pages < sess->mr_pages) {
			ibtrs_clt_err(path, "device takes fewer segments than the session's %u\n",
				      sess->max_segs);
			return -EINVAL;
		}
		return 0;
	}
	hdr_len = sizeof(struct trs_msg_io_req) + p->max_usr_len;
	sess->hdrs = kcalloc(p->queue_depth, hdr_len, GFP_KERNEL);
	sess->ios = kcalloc(p->queue_depth, sizeof(*sess->ios), GFP_KERNEL);
	sess->permit_map = kcalloc(TRS_BITMAP_WORDS(p->queue_depth),
				   sizeof(u64), GFP_KERNEL);
	if (!sess->hdrs || !sess->ios || !sess->permit_map) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = trs_permit_pool_init(&sess->permits, sess->permit_map,
				   TRS_BITMAP_WORDS(p->queue_depth),
				   p->queue_depth);
	if (ret)
		goto out_free;
	for (i = 0; i < p->queue_depth; i++) {
		struct ibtrs_clt_io *io = &sess->ios[i];

		io->sess = sess;
		io->id = i;
		INIT_LIST_HEAD(&io->pending);
		io->hdr = sess->hdrs + (size_t)i * hdr_len;
		io->send_cqe.done = ibtrs_clt_send_done;
		io->inv_cqe.done = ibtrs_clt_inv_done;
	}
	sess->chunk_size = p->chunk_size;
	sess->max_usr_len = p->max_usr_len;
	sess->slot_size = p->chunk_size + p->hdr_area;
	sess->mr_pages = pages;
	sess->max_segs = min(path->max_sge - 1, pages);
	/* an unaligned buffer of n pages spans n + 1 */
	sess->max_io = min_t(u32, p->chunk_size, (pages - 1) * PAGE_SIZE);
	WRITE_ONCE(sess->queue_depth, p->queue_depth);
	sess->sized = true;
	return 0;

out_free:
	kfree(sess->hdrs);
	kfree(sess->ios);
	kfree(sess->permit_map);
	sess->hdrs = NULL;
	sess->ios = NULL;
	sess->permit_map = NULL;
	return ret;
}

static int ibtrs_clt_send_info_req(struct ibtrs_clt_path *path)
{
	struct ibtrs_clt_con *con = &path->cons[0];

	trs_info_req_encode(path->txb.buf, path->sess->sessname);
	if (ibtrs_post_send_one(con->qp, path->pd, &con->ctl_cqe,
				path->txb.dma, sizeof(struct trs_msg_info_req)))
		return -EIO;
	atomic64_inc(&path->msgs);
	return 0;
}

/* Start the CM steps of @con: a cm_id, then the address resolution. */
static int ibtrs_clt_con_start(struct ibtrs_clt_con *con)
{
	struct ibtrs_clt_path *path = con->path;
	struct sockaddr *src = NULL;
	int ret;

	con->cm_id = rdma_create_id(&init_net, ibtrs_clt_cm_handler, con,
				    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(con->cm_id)) {
		ret = PTR_ERR(con->cm_id);
		con->cm_id = NULL;
		return ret;
	}
	ret = rdma_set_ack_timeout(con->cm_id, 14);
	if (ret)
		return ret;
	if (path->addr.src.ss_family != AF_UNSPEC)
		src = (struct sockaddr *)&path->addr.src;
	return rdma_resolve_addr(con->cm_id, src,
				 (struct sockaddr *)&path->addr.dst,
				 IBTRS_CLT_CM_TMO_MS);
}

/*
 * Connect connections @from..@to-1 of @path: start them all, then wait for
 * each to be established (or to fail).
 */
static int ibtrs_clt_cons_connect(struct ibtrs_clt_path *path, int from,
				  int to)
{
	int i, ret;

	for (i = from; i < to; i++) {
		ret = ibtrs_clt_con_start(&path->cons[i]);
		if (ret)
			return ret;
	}
	for (i = from; i < to; i++) {
		struct ibtrs_clt_con *con = &path->cons[i];

		if (!wait_for_completion_timeout(&con->cm_done,
						 msecs_to_jiffies(3 * IBTRS_CLT_CM_TMO_MS)))
			return -ETIMEDOUT;
		if (con->cm_err)
			return con->cm_err;
	}
	return 0;
}

/* Every accept of the path must agree; the path's is cid 0's. */
static int ibtrs_clt_cons_check(struct ibtrs_clt_path *path)
{
	const struct trs_conn_params *p0 = &path->cons[0].params;
	int i;

	path->params = *p0;
	path->max_sge = path->cons[0].max_sge;
	for (i = 1; i < path->ncons; i++) {
		const struct ibtrs_clt_con *con = &path->cons[i];

		if (con->params.queue_depth != p0->queue_depth ||
		    con->params.chunk_size != p0->chunk_size ||
		    con->params.max_usr_len != p0->max_usr_len ||
		    con->params.hdr_area != p0->hdr_area) {
			ibtrs_clt_err(path, "accept of connection %d differs from connection 0's\n",
				      i);
			return -EINVAL;
		}
		path->max_sge = min(path->max_sge, con->max_sge);
	}
	return 0;
}

/* Connect @path and join the session; process context, conn_mutex held. */
static int __ibtrs_clt_path_connect(struct ibtrs_clt_path *path)
{
	struct ibtrs_clt_sess *sess = path->sess;
	unsigned long flags;
	int i, ret;

	init_completion(&path->info_done);
	atomic_set(&path->failing, 0);
	for (i = 0; i < path->ncons; i++) {
		struct ibtrs_clt_con *con = &path->cons[i];

		init_completion(&con->cm_done);
		con->cm_err = -ETIMEDOUT;
		WRITE_ONCE(con->cm_dead, false);
	}
	spin_lock_irqsave(&sess->lock, flags);
	path->state = IBTRS_CLT_PATH_CONNECTING;
	spin_unlock_irqrestore(&sess->lock, flags);

	/* cid 0 makes the PD on the device; the others then join it */
	ret = ibtrs_clt_cons_connect(path, 0, 1);
	if (!ret)
		ret = ibtrs_clt_cons_connect(path, 1, path->ncons);
	if (!ret)
		ret = ibtrs_clt_cons_check(path);
	if (ret)
		goto out_disconnect;

	ret = ibtrs_clt_sess_size(path);
	if (ret)
		goto out_disconnect;
	for (i = 0; i < path->ncons; i++) {
		struct ibtrs_clt_con *con = &path->cons[i];

		ret = ib_mr_pool_init(con->qp, &con->qp->rdma_mrs,
				      sess->queue_depth, IB_MR_TYPE_MEM_REG,
				      sess->mr_pages, 0);
		if (ret)
			goto out_disconnect;
		con->mr_pool = true;
	}

	/* every connection is established: INFO_REQ on cid 0 */
	ret = ibtrs_clt_send_info_req(path);
	if (ret)
		goto out_disconnect;
	if (!wait_for_completion_timeout(&path->info_done,
					 msecs_to_jiffies(IBTRS_CLT_CM_TMO_MS)))
		ret = -ETIMEDOUT;
	else
		ret = path->info_err;
	if (ret)
		goto out_disconnect;

	spin_lock_irqsave(&path->lock, flags);
	trs_hb_start(&path->hb, hb_interval_ms, hb_missed_max,
		     ibtrs_clt_now_us());
	path->lat_ewma = 0;
	spin_unlock_irqrestore(&path->lock, flags);
	spin_lock_irqsave(&sess->lock, flags);
	if (path->state == IBTRS_CLT_PATH_CONNECTING) {
		path->state = IBTRS_CLT_PATH_CONNECTED;
		sess->all_down_at = 0;
		sess->mp[path->idx].usable = true;
		sess->mp[path->idx].inflight = 0;
		sess->mp[path->idx].lat_ewma = 0;
	} else {
		ret = -ECONNRESET;
	}
	spin_unlock_irqrestore(&sess->lock, flags);
	if (ret)
		goto out_disconnect;
	queue_delayed_work(ibtrs_clt_wq, &path->hb_work, 0);
	ibtrs_clt_pending_run(sess, false);
	ibtrs_clt_info(path, "connected (%d connections, queue depth %u, chunk %u, %d segments)\n",
		       path->ncons, sess->queue_depth, sess->chunk_size,
		       sess->max_segs);
	return 0;

out_disconnect:
	/*
	 * A path failure ends the waits above while a CM step may still run
	 * (creating the QP, connecting): wait for it, and ignore later ones.
	 */
	for (i = 0; i < path->ncons; i++) {
		struct ibtrs_clt_con *con = &path->cons[i];

		if (!con->cm_id)
			continue;
		rdma_lock_handler(con->cm_id);
		WRITE_ONCE(con->cm_dead, true);
		rdma_unlock_handler(con->cm_id);
		rdma_disconnect(con->cm_id);
		if (con->qp)
			ib_drain_qp(con->qp);
	}
	ibtrs_clt_destroy_ib(path);
	spin_lock_irqsave(&sess->lock, flags);
	path->state = IBTRS_CLT_PATH_IDLE;
	spin_unlock_irqrestore(&sess->lock, flags);
	ibtrs_clt_err(path, "cannot connect: %d\n", ret);
	return ret;
}

static int ibtrs_clt_path_connect(struct ibtrs_clt_path *path)
{
	int ret;

	mutex_lock(&path->conn_mutex);
	ret = __ibtrs_clt_path_connect(path);
	mutex_unlock(&path->conn_mutex);
	return ret;
}

static int ibtrs_clt_io_post(struct ibtrs_clt_io *io,
			     struct ibtrs_clt_con *con, size_t usrlen);

/* The connection of @path that carries an IO of hint @hint. */
static struct ibtrs_clt_con *ibtrs_clt_con_of(struct ibtrs_clt_path *path,
					      unsigned int hint)
{
	return &path->cons[hint % path->ncons];
}

/* Post @io on a usable path. Under sess->lock. */
static int ibtrs_clt_io_repost(struct ibtrs_clt_io *io)
{
	struct ibtrs_clt_sess *sess = io->sess;
	struct ibtrs_clt_path *path;
	int idx, ret;

	if (sess->closing)
		return -ENOTCONN;
	idx = trs_mp_select(sess->mp_policy, sess->mp, sess->npaths,
			    &sess->rr_cursor, 0);
	if (idx < 0)
		return idx;
	path = sess->paths[idx];
	io->path = path;
	io->con = ibtrs_clt_con_of(path, io->hint);
	io->answered = false;
	io->status = 0;
	ret = ibtrs_clt_io_post(io, io->con, io->usrlen);
	if (ret) {
		io->path = NULL;
		io->con = NULL;
		return ret;
	}
	sess->mp[idx].inflight++;
	atomic_inc(&path->inflight);
	return 0;
}

/* Every path down for less than ctrl_loss_tmo_ms. Under sess->lock. */
static bool ibtrs_clt_may_wait(struct ibtrs_clt_sess *sess)
{
	return !sess->closing && sess->all_down_at &&
	       time_before(jiffies, sess->all_down_at +
			   msecs_to_jiffies(ctrl_loss_tmo_ms));
}

/*
 * Re-post the IO waiting in sess->pending (a path is back), or fail it
 * with -ENOTCONN when nothing can carry it and waiting is over (@force:
 * the session closes).
 */
static void ibtrs_clt_pending_run(struct ibtrs_clt_sess *sess, bool force)
{
	struct ibtrs_clt_io *io, *tmp;
	unsigned long flags;
	LIST_HEAD(failed);

	spin_lock_irqsave(&sess->lock, flags);
	list_for_each_entry_safe(io, tmp, &sess->pending, pending) {
		int ret = force ? -ENOTCONN : ibtrs_clt_io_repost(io);

		if (!ret) {
			list_del_init(&io->pending);
			continue;
		}
		/* out of MRs or send queue, or a reconnect may come */
		if (!force && (ret != -ENOTCONN || ibtrs_clt_may_wait(sess)))
			break;
		list_move_tail(&io->pending, &failed);
		io->inflight = false;
	}
	if (!list_empty(&sess->pending) && !force)
		mod_delayed_work(ibtrs_clt_wq, &sess->pending_work,
				 msecs_to_jiffies(100));
	spin_unlock_irqrestore(&sess->lock, flags);
	list_for_each_entry_safe(io, tmp, &failed, pending) {
		list_del_init(&io->pending);
		io->status = -ENOTCONN;
		atomic_dec(&sess->inflight);
		io->conf(io->priv, io->status);
	}
}

static void ibtrs_clt_pending_work(struct work_struct *work)
{
	struct ibtrs_clt_sess *sess = container_of(to_delayed_work(work),
						   struct ibtrs_clt_sess,
						   pending_work);

	ibtrs_clt_pending_run(sess, false);
}

/*
 * @io was posted on @old, which failed and is drained: no completion of it
 * comes any more. Re-post it on another path with the same chunk id (the
 * server serves it once the original, if it still runs there, is done);
 * with no path up it waits in sess->pending for a reconnect (at most
 * ctrl_loss_tmo_ms), else it ends with -EIO.
 */
static void ibtrs_clt_io_failover(struct ibtrs_clt_io *io,
				  struct ibtrs_clt_path *old)
{
	struct ibtrs_clt_sess *sess = io->sess;
	unsigned long flags;
	int ret;

	WARN_ON_ONCE(atomic_read(&io->ref) != 1);	/* the answer's */
	ibtrs_clt_io_unmap(io);
	atomic_dec(&old->inflight);
	spin_lock_irqsave(&sess->lock, flags);
	if (sess->mp[old->idx].inflight)
		sess->mp[old->idx].inflight--;
	ret = ibtrs_clt_io_repost(io);
	if (ret && !sess->closing &&
	    (ret != -ENOTCONN || ibtrs_clt_may_wait(sess))) {
		io->path = NULL;
		list_add_tail(&io->pending, &sess->pending);
		mod_delayed_work(ibtrs_clt_wq, &sess->pending_work,
				 msecs_to_jiffies(100));
		ret = 0;
	}
	if (ret)
		io->inflight = false;
	else
		atomic64_inc(&old->failovers);
	spin_unlock_irqrestore(&sess->lock, flags);
	if (ret) {
		io->status = -EIO;
		atomic_dec(&sess->inflight);
		io->conf(io->priv, io->status);
	}
}

/*
 * Tear a failed (or closing) path down: disconnect, drain, move the IO
 * that will never be answered to another path, free. Process context.
 */
static void ibtrs_clt_path_down(struct ibtrs_clt_path *path)
{
	struct ibtrs_clt_sess *sess = path->sess;
	struct ibtrs_clt_io *io;
	unsigned long flags;
	u32 i;

	mutex_lock(&path->conn_mutex);
	spin_lock_irqsave(&sess->lock, flags);
	path->state = IBTRS_CLT_PATH_FAILED;
	sess->mp[path->idx].usable = false;
	spin_unlock_irqrestore(&sess->lock, flags);
	cancel_delayed_work_sync(&path->hb_work);
	if (!path->dev)
		goto out_idle;
	for (i = 0; i < path->ncons; i++) {
		struct ibtrs_clt_con *con = &path->cons[i];

		if (!con->cm_id)
			continue;
		rdma_disconnect(con->cm_id);
		if (con->qp)
			ib_drain_qp(con->qp);
	}
	/* all completions of every QP are in: no answer comes any more */
	for (i = 0; i < sess->queue_depth; i++) {
		bool orphan;

		io = &sess->ios[i];
		spin_lock_irqsave(&sess->lock, flags);
		orphan = io->inflight && io->path == path && !io->answered;
		spin_unlock_irqrestore(&sess->lock, flags);
		if (orphan)
			ibtrs_clt_io_failover(io, path);
	}
	WARN_ON_ONCE(atomic_read(&path->inflight));
	ibtrs_clt_destroy_ib(path);
out_idle:
	spin_lock_irqsave(&sess->lock, flags);
	path->state = IBTRS_CLT_PATH_IDLE;
	spin_unlock_irqrestore(&sess->lock, flags);
	mutex_unlock(&path->conn_mutex);
}

static void ibtrs_clt_reco_schedule(struct ibtrs_clt_path *path)
{
	u32 ms = trs_backoff_ms(path->reco_attempt++, reconnect_min_ms,
				reconnect_max_ms, get_random_u32());

	if (READ_ONCE(path->sess->closing) || READ_ONCE(path->removing))
		return;
	if (xchg(&path->reco_now, false)) {
		path->reco_attempt = 0;
		ibtrs_clt_info(path, "reconnect now (asked through sysfs)\n");
		queue_delayed_work(ibtrs_clt_wq, &path->reco_work, 0);
		return;
	}
	ibtrs_clt_info(path, "reconnect in %u ms\n", ms);
	queue_delayed_work(ibtrs_clt_wq, &path->reco_work,
			   msecs_to_jiffies(ms));
}

static void ibtrs_clt_err_work(struct work_struct *work)
{
	struct ibtrs_clt_path *path = container_of(work, struct ibtrs_clt_path,
						   err_work);

	ibtrs_clt_path_down(path);
	ibtrs_clt_info(path, "closed (reqs %lld, answers %lld, local invalidations %lld, failovers %lld)\n",
		       atomic64_read(&path->reqs), atomic64_read(&path->rsps),
		       atomic64_read(&path->local_invs),
		       atomic64_read(&path->failovers));
	ibtrs_clt_reco_schedule(path);
}

static void ibtrs_clt_reco_work(struct work_struct *work)
{
	struct ibtrs_clt_path *path = container_of(to_delayed_work(work),
						   struct ibtrs_clt_path,
						   reco_work);

	/* also queued early by a device's arrival (ibtrs_clt_add_one()) */
	if (READ_ONCE(path->sess->closing) || READ_ONCE(path->removing) ||
	    READ_ONCE(path->state) != IBTRS_CLT_PATH_IDLE)
		return;
	path->recon_cnt++;
	if (ibtrs_clt_path_connect(path)) {
		ibtrs_clt_reco_schedule(path);
		return;
	}
	path->reco_attempt = 0;
	atomic64_inc(&path->reconnects);
}

/* ---------------------------------------------------------------- */
/* Requests                                                          */

int ibtrs_clt_get_permit(struct ibtrs_clt_sess *sess)
{
	unsigned long flags;
	int id;

	spin_lock_irqsave(&sess->lock, flags);
	id = trs_permit_get(&sess->permits);
	spin_unlock_irqrestore(&sess->lock, flags);
	return id;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_get_permit);

void ibtrs_clt_put_permit(struct ibtrs_clt_sess *sess, int permit)
{
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&sess->lock, flags);
	ret = trs_permit_put(&sess->permits, permit);
	spin_unlock_irqrestore(&sess->lock, flags);
	WARN_ONCE(ret, "ibtrs-client: put of permit %d: %d\n", permit, ret);
}
EXPORT_SYMBOL_GPL(ibtrs_clt_put_permit);

/* Map and post @io on @con. Under sess->lock. */
static int ibtrs_clt_io_post(struct ibtrs_clt_io *io,
			     struct ibtrs_clt_con *con, size_t usrlen)
{
	struct ibtrs_clt_path *path = con->path;
	struct ibtrs_clt_sess *sess = io->sess;
	struct ib_device *dev = path->dev;
	struct trs_io_req_info ri = {};
	struct ib_reg_wr reg_wr = {};
	struct ib_rdma_wr wr = {};
	const struct ib_send_wr *first = &wr.wr;
	u64 slot = path->info.pool_addr + (u64)io->id * sess->slot_size;
	int nsge = 0, i, n, ret;

	io->nents = 0;
	if (io->sg_cnt) {
		n = ib_dma_map_sg(dev, io->sg, io->sg_cnt,
				  io->dir == IBTRS_CLT_READ ? DMA_FROM_DEVICE :
				  DMA_TO_DEVICE);
		if (!n)
			return -ENOMEM;
		io->nents = n;
	}
	ri.type = io->dir == IBTRS_CLT_READ ? TRS_MSG_IO_READ :
		  TRS_MSG_IO_WRITE;
	ri.usr_len = usrlen;
	ri.seq = ++sess->seq;
	if (io->dir == IBTRS_CLT_READ && io->nents) {
		io->mr = ib_mr_pool_get(con->qp, &con->qp->rdma_mrs);
		if (!io->mr) {
			ret = -EAGAIN;
			goto out_unmap_sg;
		}
		ib_update_fast_reg_key(io->mr, ib_inc_rkey(io->mr->rkey));
		n = ib_map_mr_sg(io->mr, io->sg, io->nents, NULL, PAGE_SIZE);
		if (n != io->nents || io->mr->length != io->datalen) {
			ret = -EINVAL;
			goto out_put_mr;
		}
		reg_wr.wr.opcode = IB_WR_REG_MR;
		reg_wr.wr.wr_cqe = &con->reg_cqe;
		reg_wr.wr.next = &wr.wr;
		reg_wr.mr = io->mr;
		reg_wr.key = io->mr->rkey;
		/* exactly the IO buffer, writable by the server, this IO only */
		reg_wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
		first = &reg_wr.wr;
		ri.flags = TRS_IO_F_NEED_INV;
		ri.sg_cnt = 1;
		ri.raddr = io->mr->iova;
		ri.rkey = io->mr->rkey;
		ri.rlen = io->datalen;
	} else if (io->dir == IBTRS_CLT_WRITE) {
		struct scatterlist *sg;

		ri.data_len = io->datalen;
		for_each_sg(io->sg, sg, io->nents, i) {
			io->sge[nsge].addr = sg_dma_address(sg);
			io->sge[nsge].length = sg_dma_len(sg);
			io->sge[nsge].lkey = path->pd->local_dma_lkey;
			nsge++;
		}
	}
	trs_io_req_encode(io->hdr, &ri);
	io->hdr_len = sizeof(struct trs_msg_io_req) + usrlen;
	io->hdr_dma = ib_dma_map_single(dev, io->hdr, io->hdr_len,
					DMA_TO_DEVICE);
	if (ib_dma_mapping_error(dev, io->hdr_dma)) {
		ret = -ENOMEM;
		goto out_put_mr;
	}
	io->sge[nsge].addr = io->hdr_dma;
	io->sge[nsge].length = io->hdr_len;
	io->sge[nsge].lkey = path->pd->local_dma_lkey;
	nsge++;

	wr.wr.wr_cqe = &io->send_cqe;
	wr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.ex.imm_data = cpu_to_be32(trs_to_imm(TRS_IMM_IO_REQ, io->id, 0));
	wr.wr.sg_list = io->sge;
	wr.wr.num_sge = nsge;
	/* write data right-aligned before the header: one WRITE for both */
	wr.remote_addr = slot + sess->chunk_size - ri.data_len;
	wr.rkey = path->info.pool_rkey;

	atomic_set(&io->ref, 2);	/* send completion + answer */
	io->start_us = ibtrs_clt_now_us();
	ret = ib_post_send(con->qp, first, NULL);
	if (ret)
		goto out_unmap_hdr;
	atomic64_inc(&con->reqs);
	atomic64_inc(&path->reqs);
	atomic64_inc(&path->msgs);
	if (io->mr)
		atomic64_inc(&path->reg_wrs);
	return 0;

out_unmap_hdr:
	ib_dma_unmap_single(dev, io->hdr_dma, io->hdr_len, DMA_TO_DEVICE);
out_put_mr:
	if (io->mr) {
		ib_mr_pool_put(con->qp, &con->qp->rdma_mrs, io->mr);
		io->mr = NULL;
	}
out_unmap_sg:
	if (io->nents)
		ib_dma_unmap_sg(dev, io->sg, io->sg_cnt,
				io->dir == IBTRS_CLT_READ ? DMA_FROM_DEVICE :
				DMA_TO_DEVICE);
	io->nents = 0;
	return ret;
}

int ibtrs_clt_request(struct ibtrs_clt_sess *sess, enum ibtrs_clt_dir dir,
		      int permit, unsigned int hint, const void *usr,
		      size_t usrlen,
		      struct scatterlist *sg, unsigned int sg_cnt,
		      u32 datalen, ibtrs_clt_conf_fn conf, void *priv)
{
	struct ibtrs_clt_io *io;
	struct ibtrs_clt_path *path;
	unsigned long flags;
	int idx, ret;

	if (permit < 0 || permit >= sess->queue_depth ||
	    usrlen > sess->max_usr_len || datalen > sess->max_io ||
	    sg_cnt > sess->max_segs || (!sg_cnt != !datalen))
		return -EINVAL;
	io = &sess->ios[permit];
	io->dir = dir;
	io->sg = sg;
	io->sg_cnt = sg_cnt;
	io->datalen = datalen;
	io->usrlen = usrlen;
	io->conf = conf;
	io->priv = priv;
	io->hint = hint;
	io->status = 0;
	io->answered = false;
	io->mr = NULL;
	memcpy(io->hdr + sizeof(struct trs_msg_io_req), usr, usrlen);

	spin_lock_irqsave(&sess->lock, flags);
	if (WARN_ON_ONCE(io->inflight ||
			 !trs_permit_is_held(&sess->permits, permit))) {
		ret = -EINVAL;
		goto out_unlock;
	}
	idx = trs_mp_select(sess->mp_policy, sess->mp, sess->npaths,
			    &sess->rr_cursor, 0);
	if (idx < 0) {
		/* every path down: wait ctrl_loss_tmo_ms for a reconnect */
		ret = !sess->closing && sess->all_down_at &&
		      time_before(jiffies, sess->all_down_at +
				  msecs_to_jiffies(ctrl_loss_tmo_ms)) ?
		      -EAGAIN : -ENOTCONN;
		goto out_unlock;
	}
	path = sess->paths[idx];
	io->path = path;
	io->con = ibtrs_clt_con_of(path, hint);
	ret = ibtrs_clt_io_post(io, io->con, usrlen);
	if (ret)
		goto out_unlock;
	atomic_inc(&sess->inflight);
	atomic64_inc(&sess->nr_ios);
	atomic64_add(datalen, dir == IBTRS_CLT_READ ? &sess->read_bytes :
		     &sess->write_bytes);
	io->inflight = true;
	sess->mp[idx].inflight++;
	atomic_inc(&path->inflight);
out_unlock:
	spin_unlock_irqrestore(&sess->lock, flags);
	return ret;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_request);

/* ---------------------------------------------------------------- */
/* Sessions                                                          */

static void ibtrs_clt_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_clt_con *con = cq->cq_context;

	if (unlikely(wc->status != IB_WC_SUCCESS))
		ibtrs_clt_wr_error(con->path, wc, "REG_MR");
}

static struct kobject *ibtrs_clt_kobj;
static const struct kobj_type ibtrs_clt_path_ktype;

static const char *const ibtrs_clt_state_names[] = {
	[IBTRS_CLT_PATH_IDLE] = "idle",
	[IBTRS_CLT_PATH_CONNECTING] = "connecting",
	[IBTRS_CLT_PATH_CONNECTED] = "connected",
	[IBTRS_CLT_PATH_FAILED] = "failed",
};

static const char *const ibtrs_clt_policy_names[] = {
	[TRS_MP_ROUND_ROBIN] = "round-robin",
	[TRS_MP_MIN_INFLIGHT] = "min-inflight",
	[TRS_MP_MIN_LATENCY] = "min-latency",
};

/* A path in slot @idx of @sess, its sysfs directory under paths/. */
static struct ibtrs_clt_path *ibtrs_clt_path_alloc(struct ibtrs_clt_sess *sess,
						   int idx,
						   const struct ibtrs_clt_addr *addr)
{
	struct ibtrs_clt_path *path;
	int i, ret;

	path = kzalloc(sizeof(*path), GFP_KERNEL);
	if (!path)
		return ERR_PTR(-ENOMEM);
	path->cons = kcalloc(sess->nr_cons, sizeof(*path->cons), GFP_KERNEL);
	if (!path->cons) {
		kfree(path);
		return ERR_PTR(-ENOMEM);
	}
	path->ncons = sess->nr_cons;
	for (i = 0; i < path->ncons; i++) {
		struct ibtrs_clt_con *con = &path->cons[i];

		con->path = path;
		con->cid = i;
		con->ctl_cqe.done = ibtrs_clt_ctl_done;
		con->reg_cqe.done = ibtrs_clt_reg_done;
		init_completion(&con->cm_done);
	}
	kobject_init(&path->kobj, &ibtrs_clt_path_ktype);
	path->sess = sess;
	path->idx = idx;
	path->addr = *addr;
	if (path->addr.dst.ss_family == AF_INET)
		((struct sockaddr_in *)&path->addr.dst)->sin_port =
			htons(sess->port);
	else
		((struct sockaddr_in6 *)&path->addr.dst)->sin6_port =
			htons(sess->port);
	generate_random_uuid(path->uuid);
	spin_lock_init(&path->lock);
	mutex_init(&path->conn_mutex);
	INIT_DELAYED_WORK(&path->hb_work, ibtrs_clt_hb_work);
	INIT_WORK(&path->err_work, ibtrs_clt_err_work);
	INIT_DELAYED_WORK(&path->reco_work, ibtrs_clt_reco_work);
	if (addr->src.ss_family != AF_UNSPEC)
		ret = kobject_add(&path->kobj, sess->paths_kobj, "%pISc@%pISc",
				  &addr->src, &addr->dst);
	else
		ret = kobject_add(&path->kobj, sess->paths_kobj, "%pISc",
				  &addr->dst);
	if (ret) {
		kobject_put(&path->kobj);
		return ERR_PTR(ret);
	}
	return path;
}

/* Put @path into its slot (visible to IO selection and device events). */
static void ibtrs_clt_path_install(struct ibtrs_clt_path *path)
{
	struct ibtrs_clt_sess *sess = path->sess;
	unsigned long flags;

	mutex_lock(&ibtrs_clt_sess_mutex);
	spin_lock_irqsave(&sess->lock, flags);
	sess->paths[path->idx] = path;
	sess->npaths = max(sess->npaths, path->idx + 1);
	spin_unlock_irqrestore(&sess->lock, flags);
	mutex_unlock(&ibtrs_clt_sess_mutex);
}

/*
 * Stop @path for good: no reconnect, no error work; tear it down (its
 * unanswered IO fails over). Then take it out of its slot and free it.
 * Process context; not from the path's own sysfs store unless that
 * store's file was removed first.
 */
static void ibtrs_clt_path_stop(struct ibtrs_clt_path *path)
{
	mutex_lock(&ibtrs_clt_sess_mutex);	/* ibtrs_clt_add_one() sees it */
	WRITE_ONCE(path->removing, true);
	mutex_unlock(&ibtrs_clt_sess_mutex);
	cancel_delayed_work_sync(&path->reco_work);
	atomic_set(&path->failing, 1);	/* no error work from now */
	flush_work(&path->err_work);
	cancel_delayed_work_sync(&path->reco_work);
	ibtrs_clt_path_down(path);
}

static void ibtrs_clt_path_uninstall(struct ibtrs_clt_path *path)
{
	struct ibtrs_clt_sess *sess = path->sess;
	unsigned long flags;

	mutex_lock(&ibtrs_clt_sess_mutex);
	sess->gone[0] += atomic64_read(&path->msgs);
	sess->gone[1] += atomic64_read(&path->reg_wrs);
	sess->gone[2] += atomic64_read(&path->failovers);
	sess->gone[3] += atomic64_read(&path->reconnects);
	spin_lock_irqsave(&sess->lock, flags);
	if (sess->paths[path->idx] == path)
		sess->paths[path->idx] = NULL;
	spin_unlock_irqrestore(&sess->lock, flags);
	mutex_unlock(&ibtrs_clt_sess_mutex);
}

static void ibtrs_clt_sess_release(struct kobject *kobj)
{
	struct ibtrs_clt_sess *sess = container_of(kobj, struct ibtrs_clt_sess,
						   kobj);

	kfree(sess->hdrs);
	kfree(sess->ios);
	kfree(sess->permit_map);
	kfree(sess);
}

static const struct kobj_type ibtrs_clt_sess_ktype;

struct ibtrs_clt_sess *ibtrs_clt_open(const char *sessname,
				      const struct ibtrs_clt_addr *paths,
				      int npaths, u16 port)
{
	struct ibtrs_clt_sess *sess;
	int i, up = 0, ret = -ENOTCONN;

	if (npaths < 1 || npaths > IBTRS_CLT_MAX_PATHS ||
	    strlen(sessname) >= TRS_SESSNAME_MAX || !*sessname ||
	    strchr(sessname, '/'))
		return ERR_PTR(-EINVAL);
	sess = kzalloc(sizeof(*sess), GFP_KERNEL);
	if (!sess)
		return ERR_PTR(-ENOMEM);
	kobject_init(&sess->kobj, &ibtrs_clt_sess_ktype);
	strscpy(sess->sessname, sessname, sizeof(sess->sessname));
	generate_random_uuid(sess->uuid);
	sess->port = port;
	sess->nr_cons = min_t(uint, cons_per_path ? : num_online_cpus(),
			      TRS_MAX_CONS_PER_PATH);
	sess->mp_policy = mp_policy;
	spin_lock_init(&sess->lock);
	mutex_init(&sess->ctl_mutex);
	INIT_LIST_HEAD(&sess->pending);
	INIT_DELAYED_WORK(&sess->pending_work, ibtrs_clt_pending_work);
	ret = kobject_add(&sess->kobj, ibtrs_clt_kobj, "%s", sessname);
	if (ret) {
		pr_err("sess %s: cannot create its sysfs directory: %d\n",
		       sessname, ret);
		goto out_put;
	}
	sess->paths_kobj = kobject_create_and_add("paths", &sess->kobj);
	if (!sess->paths_kobj) {
		ret = -ENOMEM;
		goto out_del;
	}
	for (i = 0; i < npaths; i++) {
		struct ibtrs_clt_path *path;

		path = ibtrs_clt_path_alloc(sess, i, &paths[i]);
		if (IS_ERR(path)) {
			ret = PTR_ERR(path);
			goto out_free_paths;
		}
		sess->paths[i] = path;
	}
	sess->npaths = npaths;
	mutex_lock(&ibtrs_clt_sess_mutex);
	list_add_tail(&sess->list, &ibtrs_clt_sessions);
	mutex_unlock(&ibtrs_clt_sess_mutex);
	for (i = 0; i < npaths; i++) {
		ret = ibtrs_clt_path_connect(sess->paths[i]);
		if (!ret)
			up++;
	}
	if (!up) {
		ibtrs_clt_close(sess);
		return ERR_PTR(ret);
	}
	pr_info("sess %s: open, %d of %d paths connected\n", sess->sessname,
		up, npaths);
	for (i = 0; i < npaths; i++)	/* the others keep trying */
		if (READ_ONCE(sess->paths[i]->state) == IBTRS_CLT_PATH_IDLE)
			ibtrs_clt_reco_schedule(sess->paths[i]);
	return sess;

out_free_paths:
	for (i = 0; i < npaths; i++) {
		if (!sess->paths[i])
			continue;
		kobject_del(&sess->paths[i]->kobj);
		kobject_put(&sess->paths[i]->kobj);
	}
	kobject_del(sess->paths_kobj);
	kobject_put(sess->paths_kobj);
out_del:
	kobject_del(&sess->kobj);
out_put:
	kobject_put(&sess->kobj);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(ibtrs_clt_open);

void ibtrs_clt_close(struct ibtrs_clt_sess *sess)
{
	unsigned long flags;
	int i;

	mutex_lock(&ibtrs_clt_sess_mutex);	/* a device removal is done */
	list_del(&sess->list);
	mutex_unlock(&ibtrs_clt_sess_mutex);
	mutex_lock(&sess->ctl_mutex);		/* so are the sysfs controls */
	spin_lock_irqsave(&sess->lock, flags);
	sess->closing = true;
	spin_unlock_irqrestore(&sess->lock, flags);
	mutex_unlock(&sess->ctl_mutex);
	for (i = 0; i < sess->npaths; i++) {
		struct ibtrs_clt_path *path = sess->paths[i];

		if (!path)
			continue;
		ibtrs_clt_path_stop(path);
		kobject_del(&path->kobj);
	}
	cancel_delayed_work_sync(&sess->pending_work);
	ibtrs_clt_pending_run(sess, true);
	pr_info("sess %s: closed\n", sess->sessname);
	for (i = 0; i < sess->npaths; i++) {
		struct ibtrs_clt_path *path = sess->paths[i];

		if (!path)
			continue;
		ibtrs_clt_path_uninstall(path);
		kobject_put(&path->kobj);
	}
	kobject_del(sess->paths_kobj);
	kobject_put(sess->paths_kobj);
	kobject_del(&sess->kobj);
	kobject_put(&sess->kobj);
}
EXPORT_SYMBOL_GPL(ibtrs_clt_close);

int ibtrs_clt_nr_cons(const struct ibtrs_clt_sess *sess)
{
	return sess->nr_cons;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_nr_cons);

u32 ibtrs_clt_queue_depth(const struct ibtrs_clt_sess *sess)
{
	return sess->queue_depth;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_queue_depth);

u32 ibtrs_clt_max_io_size(const struct ibtrs_clt_sess *sess)
{
	return sess->max_io;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_max_io_size);

u32 ibtrs_clt_max_segments(const struct ibtrs_clt_sess *sess)
{
	return sess->max_segs;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_max_segments);

u32 ibtrs_clt_max_usr_len(const struct ibtrs_clt_sess *sess)
{
	return sess->max_usr_len;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_max_usr_len);

int ibtrs_clt_paths_up(const struct ibtrs_clt_sess *sess)
{
	int i, n = 0;

	mutex_lock(&ibtrs_clt_sess_mutex);
	for (i = 0; i < sess->npaths; i++)
		n += sess->paths[i] &&
		     READ_ONCE(sess->paths[i]->state) == IBTRS_CLT_PATH_CONNECTED;
	mutex_unlock(&ibtrs_clt_sess_mutex);
	return n;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_paths_up);

const char *ibtrs_clt_sessname(const struct ibtrs_clt_sess *sess)
{
	return sess->sessname;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_sessname);

int ibtrs_clt_paths_show(const struct ibtrs_clt_sess *sess, char *buf,
			 size_t size)
{
	int i, n = 0;

	mutex_lock(&ibtrs_clt_sess_mutex);
	for (i = 0; i < sess->npaths; i++) {
		const struct ibtrs_clt_path *p = sess->paths[i];

		if (!p)
			continue;
		n += scnprintf(buf + n, size - n,
			       "path %pISp state=%s reqs=%lld rsps=%lld reg_wrs=%lld local_invs=%lld hb_sent=%lld hb_rtt_us=%llu proto_errors=%lld failovers=%lld reconnects=%lld inflight=%d msgs=%lld cons=%d\n",
			       &p->addr.dst,
			       ibtrs_clt_state_names[READ_ONCE(p->state)],
			       atomic64_read(&p->reqs), atomic64_read(&p->rsps),
			       atomic64_read(&p->reg_wrs),
			       atomic64_read(&p->local_invs),
			       atomic64_read(&p->hb_sent), p->hb_rtt_us,
			       atomic64_read(&p->proto_errors),
			       atomic64_read(&p->failovers),
			       atomic64_read(&p->reconnects),
			       atomic_read(&p->inflight),
			       atomic64_read(&p->msgs), p->ncons);
	}
	mutex_unlock(&ibtrs_clt_sess_mutex);
	return n;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_paths_show);

/* ---------------------------------------------------------------- */
/* sysfs: /sys/kernel/ibtrs-client/<sessname>/[paths/<[src@]dst>/]   */

#define to_clt_sess(k) container_of(k, struct ibtrs_clt_sess, kobj)
#define to_clt_path(k) container_of(k, struct ibtrs_clt_path, kobj)

static ssize_t sess_state_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	struct ibtrs_clt_sess *sess = to_clt_sess(kobj);
	int up = ibtrs_clt_paths_up(sess);

	return sysfs_emit(buf, "%s\n", up ? "connected" : "disconnected");
}

static ssize_t mp_policy_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  ibtrs_clt_policy_names[READ_ONCE(to_clt_sess(kobj)->mp_policy)]);
}

static ssize_t mp_policy_store(struct kobject *kobj,
			       struct kobj_attribute *attr, const char *buf,
			       size_t count)
{
	struct ibtrs_clt_sess *sess = to_clt_sess(kobj);
	unsigned long flags;
	int i;

	for (i = 0; i < TRS_MP_MAX; i++)
		if (sysfs_streq(buf, ibtrs_clt_policy_names[i]))
			break;
	if (i == TRS_MP_MAX) {
		pr_err("sess %s: mp_policy: unknown policy '%.*s' (round-robin, min-inflight or min-latency)\n",
		       sess->sessname, (int)strcspn(buf, "\n"), buf);
		return -EINVAL;
	}
	spin_lock_irqsave(&sess->lock, flags);
	sess->mp_policy = i;
	spin_unlock_irqrestore(&sess->lock, flags);
	pr_info("sess %s: mp_policy %s\n", sess->sessname,
		ibtrs_clt_policy_names[i]);
	return count;
}

/* Sum of a path counter over the session's paths, removed ones included. */
static u64 ibtrs_clt_sess_sum(struct ibtrs_clt_sess *sess, size_t off,
			      int gone)
{
	u64 n;
	int i;

	mutex_lock(&ibtrs_clt_sess_mutex);
	n = sess->gone[gone];
	for (i = 0; i < sess->npaths; i++)
		if (sess->paths[i])
			n += atomic64_read((atomic64_t *)((char *)sess->paths[i] +
							 off));
	mutex_unlock(&ibtrs_clt_sess_mutex);
	return n;
}

/**
 * struct ibtrs_clt_cnt_attr - a read-only counter file.
 * @attr: the file.
 * @off: offset of its atomic64_t in the session or path.
 * @gone: for a session sum of path counters, index in sess->gone; -1 for
 *	a counter of the object itself.
 */
struct ibtrs_clt_cnt_attr {
	struct kobj_attribute attr;
	size_t off;
	int gone;
};

#define to_cnt_attr(a) container_of(a, struct ibtrs_clt_cnt_attr, attr)

static ssize_t sess_cnt_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	struct ibtrs_clt_sess *sess = to_clt_sess(kobj);
	const struct ibtrs_clt_cnt_attr *c = to_cnt_attr(attr);

	if (c->gone < 0)
		return sysfs_emit(buf, "%lld\n",
				  (long long)atomic64_read((atomic64_t *)((char *)sess + c->off)));
	return sysfs_emit(buf, "%llu\n", ibtrs_clt_sess_sum(sess, c->off,
							    c->gone));
}

static struct ibtrs_clt_cnt_attr sess_ios_attr = {
	.attr = __ATTR(ios, 0444, sess_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_sess, nr_ios),
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr sess_read_bytes_attr = {
	.attr = __ATTR(read_bytes, 0444, sess_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_sess, read_bytes),
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr sess_write_bytes_attr = {
	.attr = __ATTR(write_bytes, 0444, sess_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_sess, write_bytes),
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr sess_msgs_attr = {
	.attr = __ATTR(msgs, 0444, sess_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, msgs),
	.gone = 0,
};

static struct ibtrs_clt_cnt_attr sess_reg_wrs_attr = {
	.attr = __ATTR(reg_wrs, 0444, sess_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, reg_wrs),
	.gone = 1,
};

static struct ibtrs_clt_cnt_attr sess_failovers_attr = {
	.attr = __ATTR(failovers, 0444, sess_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, failovers),
	.gone = 2,
};

static struct ibtrs_clt_cnt_attr sess_reconnects_attr = {
	.attr = __ATTR(reconnects, 0444, sess_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, reconnects),
	.gone = 3,
};

static ssize_t sess_inflight_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&to_clt_sess(kobj)->inflight));
}

/* Same family and address (ports aside); two AF_UNSPEC are the same. */
static bool ibtrs_clt_same_ip(const struct sockaddr_storage *a,
			      const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return ipv6_addr_equal(&((const struct sockaddr_in6 *)a)->sin6_addr,
				       &((const struct sockaddr_in6 *)b)->sin6_addr);
	return true;
}

static ssize_t add_path_store(struct kobject *kobj, struct kobj_attribute *attr,
			      const char *buf, size_t count)
{
	struct ibtrs_clt_sess *sess = to_clt_sess(kobj);
	struct ibtrs_clt_path *path;
	struct ibtrs_clt_addr addr;
	char str[2 * INET6_ADDRSTRLEN + 2];
	int i, idx = -1, ret;

	if (count >= sizeof(str) || !count) {
		pr_err("sess %s: add_path: bad path (want [src@]dst)\n",
		       sess->sessname);
		return -EINVAL;
	}
	memcpy(str, buf, count);
	str[count] = '\0';
	str[strcspn(str, "\n")] = '\0';
	if (ibtrs_clt_parse_path(str, &addr)) {
		pr_err("sess %s: add_path: bad path '%s' ([src@]dst, IP addresses)\n",
		       sess->sessname, str);
		return -EINVAL;
	}
	mutex_lock(&sess->ctl_mutex);
	if (sess->closing) {
		ret = -ENODEV;
		goto out_unlock;
	}
	for (i = 0; i < IBTRS_CLT_MAX_PATHS; i++) {
		struct ibtrs_clt_path *p = sess->paths[i];

		if (!p) {
			if (idx < 0)
				idx = i;
			continue;
		}
		if (ibtrs_clt_same_ip(&p->addr.dst, &addr.dst) &&
		    ibtrs_clt_same_ip(&p->addr.src, &addr.src)) {
			pr_err("sess %s: add_path: path '%s' exists\n",
			       sess->sessname, str);
			ret = -EEXIST;
			goto out_unlock;
		}
	}
	if (idx < 0) {
		pr_err("sess %s: add_path: %d paths already\n", sess->sessname,
		       IBTRS_CLT_MAX_PATHS);
		ret = -ENOSPC;
		goto out_unlock;
	}
	path = ibtrs_clt_path_alloc(sess, idx, &addr);
	if (IS_ERR(path)) {
		ret = PTR_ERR(path);
		goto out_unlock;
	}
	ibtrs_clt_path_install(path);
	ret = ibtrs_clt_path_connect(path);
	if (ret) {
		ibtrs_clt_path_stop(path);
		ibtrs_clt_path_uninstall(path);
		kobject_del(&path->kobj);
		kobject_put(&path->kobj);
		goto out_unlock;
	}
	ibtrs_clt_info(path, "added through sysfs\n");
	ret = count;
out_unlock:
	mutex_unlock(&sess->ctl_mutex);
	return ret;
}

static struct kobj_attribute sess_state_attr =
	__ATTR(state, 0444, sess_state_show, NULL);
static struct kobj_attribute sess_mp_policy_attr = __ATTR_RW(mp_policy);
static struct kobj_attribute sess_inflight_attr =
	__ATTR(inflight, 0444, sess_inflight_show, NULL);
static struct kobj_attribute sess_add_path_attr = __ATTR_WO(add_path);

static struct attribute *ibtrs_clt_sess_attrs[] = {
	&sess_state_attr.attr,
	&sess_mp_policy_attr.attr,
	&sess_ios_attr.attr.attr,
	&sess_read_bytes_attr.attr.attr,
	&sess_write_bytes_attr.attr.attr,
	&sess_inflight_attr.attr,
	&sess_msgs_attr.attr.attr,
	&sess_reg_wrs_attr.attr.attr,
	&sess_failovers_attr.attr.attr,
	&sess_reconnects_attr.attr.attr,
	&sess_add_path_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(ibtrs_clt_sess);

static const struct kobj_type ibtrs_clt_sess_ktype = {
	.sysfs_ops = &kobj_sysfs_ops,
	.release = ibtrs_clt_sess_release,
	.default_groups = ibtrs_clt_sess_groups,
};

static ssize_t path_state_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  ibtrs_clt_state_names[READ_ONCE(to_clt_path(kobj)->state)]);
}

static ssize_t path_cnt_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	const struct ibtrs_clt_cnt_attr *c = to_cnt_attr(attr);
	atomic64_t *v = (atomic64_t *)((char *)to_clt_path(kobj) + c->off);

	return sysfs_emit(buf, "%lld\n", (long long)atomic64_read(v));
}

static struct ibtrs_clt_cnt_attr path_reqs_attr = {
	.attr = __ATTR(reqs, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, reqs),
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_rsps_attr = {
	.attr = __ATTR(rsps, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, rsps),
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_msgs_attr = {
	.attr = __ATTR(msgs, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, msgs),
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_reg_wrs_attr = {
	.attr = __ATTR(reg_wrs, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, reg_wrs),
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_local_invs_attr = {
	.attr = __ATTR(local_invs, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, local_invs),
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_hb_sent_attr = {
	.attr = __ATTR(hb_sent, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, hb_sent),
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_proto_errors_attr = {
	.attr = __ATTR(proto_errors, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, proto_errors),
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_failovers_attr = {
	.attr = __ATTR(failovers, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, failovers),
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_reconnects_attr = {
	.attr = __ATTR(reconnects, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, reconnects),
	.gone = -1,
};

static ssize_t path_inflight_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&to_clt_path(kobj)->inflight));
}

static ssize_t path_lat_us_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  trs_mp_lat_us(READ_ONCE(to_clt_path(kobj)->lat_ewma)));
}

/* One line per connection: "<cid> <requests posted on it>". */
static ssize_t path_con_reqs_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	struct ibtrs_clt_path *path = to_clt_path(kobj);
	int i, n = 0;

	for (i = 0; i < path->ncons; i++)
		n += sysfs_emit_at(buf, n, "%d %lld\n", i,
				   (long long)atomic64_read(&path->cons[i].reqs));
	return n;
}

static ssize_t path_hb_rtt_us_show(struct kobject *kobj,
				   struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(to_clt_path(kobj)->hb_rtt_us));
}

static ssize_t reconnect_store(struct kobject *kobj,
			       struct kobj_attribute *attr, const char *buf,
			       size_t count)
{
	struct ibtrs_clt_path *path = to_clt_path(kobj);
	struct ibtrs_clt_sess *sess = path->sess;
	int ret = count;

	if (!sysfs_streq(buf, "1")) {
		ibtrs_clt_err(path, "reconnect: write 1\n");
		return -EINVAL;
	}
	mutex_lock(&sess->ctl_mutex);
	if (sess->closing || path->removing) {
		ret = -ENODEV;
		goto out_unlock;
	}
	switch (READ_ONCE(path->state)) {
	case IBTRS_CLT_PATH_CONNECTED:
		WRITE_ONCE(path->reco_now, true);
		ibtrs_clt_path_fail(path, "reconnect asked through sysfs");
		break;
	case IBTRS_CLT_PATH_IDLE:
		path->reco_attempt = 0;
		mod_delayed_work(ibtrs_clt_wq, &path->reco_work, 0);
		break;
	default:
		ret = -EBUSY;	/* connecting or being torn down */
	}
out_unlock:
	mutex_unlock(&sess->ctl_mutex);
	return ret;
}

static ssize_t remove_path_store(struct kobject *kobj,
				 struct kobj_attribute *attr, const char *buf,
				 size_t count)
{
	struct ibtrs_clt_path *path = to_clt_path(kobj);
	struct ibtrs_clt_sess *sess = path->sess;
	int i, others = 0, ret;

	if (!sysfs_streq(buf, "1")) {
		ibtrs_clt_err(path, "remove_path: write 1\n");
		return -EINVAL;
	}
	mutex_lock(&sess->ctl_mutex);
	if (sess->closing || path->removing) {
		ret = -ENODEV;
		goto out_unlock;
	}
	for (i = 0; i < sess->npaths; i++)
		others += sess->paths[i] && sess->paths[i] != path;
	if (!others) {
		ibtrs_clt_err(path, "remove_path: the last path of the session is not removed\n");
		ret = -EBUSY;
		goto out_unlock;
	}
	/* its IO fails over in the teardown */
	ibtrs_clt_path_stop(path);
	ibtrs_clt_path_uninstall(path);
	mutex_unlock(&sess->ctl_mutex);
	ibtrs_clt_info(path, "removed through sysfs (failovers %lld)\n",
		       atomic64_read(&path->failovers));
	sysfs_remove_file_self(kobj, &attr->attr);
	kobject_del(&path->kobj);
	kobject_put(&path->kobj);
	return count;

out_unlock:
	mutex_unlock(&sess->ctl_mutex);
	return ret;
}

static struct kobj_attribute path_state_attr =
	__ATTR(state, 0444, path_state_show, NULL);
static struct kobj_attribute path_inflight_attr =
	__ATTR(inflight, 0444, path_inflight_show, NULL);
static struct kobj_attribute path_lat_us_attr =
	__ATTR(lat_us, 0444, path_lat_us_show, NULL);
static struct kobj_attribute path_con_reqs_attr =
	__ATTR(con_reqs, 0444, path_con_reqs_show, NULL);
static struct kobj_attribute path_hb_rtt_us_attr =
	__ATTR(hb_rtt_us, 0444, path_hb_rtt_us_show, NULL);
static struct kobj_attribute path_reconnect_attr = __ATTR_WO(reconnect);
static struct kobj_attribute path_remove_path_attr = __ATTR_WO(remove_path);

static struct attribute *ibtrs_clt_path_attrs[] = {
	&path_state_attr.attr,
	&path_reqs_attr.attr.attr,
	&path_rsps_attr.attr.attr,
	&path_msgs_attr.attr.attr,
	&path_reg_wrs_attr.attr.attr,
	&path_local_invs_attr.attr.attr,
	&path_hb_sent_attr.attr.attr,
	&path_hb_rtt_us_attr.attr,
	&path_proto_errors_attr.attr.attr,
	&path_failovers_attr.attr.attr,
	&path_reconnects_attr.attr.attr,
	&path_inflight_attr.attr,
	&path_lat_us_attr.attr,
	&path_con_reqs_attr.attr,
	&path_reconnect_attr.attr,
	&path_remove_path_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(ibtrs_clt_path);

static void ibtrs_clt_path_release(struct kobject *kobj)
{
	struct ibtrs_clt_path *path = to_clt_path(kobj);

	kfree(path->cons);
	kfree(path);
}

static const struct kobj_type ibtrs_clt_path_ktype = {
	.sysfs_ops = &kobj_sysfs_ops,
	.release = ibtrs_clt_path_release,
	.default_groups = ibtrs_clt_path_groups,
};

int ibtrs_clt_parse_path(const char *s, struct ibtrs_clt_addr *addr)
{
	char buf[INET6_ADDRSTRLEN + 1 + INET6_ADDRSTRLEN + 1];
	char *at, *dst = buf;

	memset(addr, 0, sizeof(*addr));
	if (strscpy(buf, s, sizeof(buf)) < 0)
		return -EINVAL;
	at = strchr(buf, '@');
	if (at) {
		*at = '\0';
		dst = at + 1;
		if (inet_pton_with_scope(&init_net, AF_UNSPEC, buf, NULL,
					 &addr->src))
			return -EINVAL;
	}
	if (inet_pton_with_scope(&init_net, AF_UNSPEC, dst, NULL, &addr->dst))
		return -EINVAL;
	if (at && addr->src.ss_family != addr->dst.ss_family)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_parse_path);

/* ---------------------------------------------------------------- */
/* Device arrival and removal                                        */

/*
 * @path uses @dev, which goes away: fail the path (its IO fails over as
 * after any failure), wait for its teardown and for a connect in progress,
 * until nothing of the path is on @dev. Bounded: a failed path's connect
 * ends its waits at once.
 */
static void ibtrs_clt_path_release_dev(struct ibtrs_clt_path *path,
				       struct ib_device *dev)
{
	bool busy;

	for (;;) {
		ibtrs_clt_path_fail(path, "device removal");
		flush_work(&path->err_work);
		if (mutex_trylock(&path->conn_mutex)) {
			busy = READ_ONCE(path->dev) == dev;
			mutex_unlock(&path->conn_mutex);
			if (!busy)
				return;
		}
		msleep(20);
	}
}

/*
 * Called before the RDMA CM's own removal (clients go in reverse order of
 * registration): every QP, CQ, MR pool, PD and cm_id of our paths on @dev
 * is released when this returns. The paths reconnect with backoff; a path
 * on a device that is gone keeps trying until one for its address appears.
 */
static void ibtrs_clt_remove_one(struct ib_device *dev, void *client_data)
{
	struct ibtrs_clt_sess *sess;
	int i;

	mutex_lock(&ibtrs_clt_sess_mutex);
	list_for_each_entry(sess, &ibtrs_clt_sessions, list) {
		for (i = 0; i < sess->npaths; i++) {
			struct ibtrs_clt_path *path = sess->paths[i];

			if (!path || READ_ONCE(path->dev) != dev)
				continue;
			ibtrs_clt_info(path, "device %s removed\n",
				       dev_name(&dev->dev));
			ibtrs_clt_path_release_dev(path, dev);
			ibtrs_clt_info(path, "released device %s\n",
				       dev_name(&dev->dev));
		}
	}
	mutex_unlock(&ibtrs_clt_sess_mutex);
}

/* A new device may carry a path that is down: try it soon. */
static int ibtrs_clt_add_one(struct ib_device *dev)
{
	struct ibtrs_clt_sess *sess;
	int i;

	mutex_lock(&ibtrs_clt_sess_mutex);
	list_for_each_entry(sess, &ibtrs_clt_sessions, list) {
		for (i = 0; i < sess->npaths; i++) {
			struct ibtrs_clt_path *path = sess->paths[i];

			if (path && !path->removing &&
			    READ_ONCE(path->state) == IBTRS_CLT_PATH_IDLE &&
			    delayed_work_pending(&path->reco_work))
				mod_delayed_work(ibtrs_clt_wq, &path->reco_work,
						 msecs_to_jiffies(reconnect_min_ms));
		}
	}
	mutex_unlock(&ibtrs_clt_sess_mutex);
	return 0;
}

static struct ib_client ibtrs_clt_ib_client = {
	.name = "ibtrs_client",
	.add = ibtrs_clt_add_one,
	.remove = ibtrs_clt_remove_one,
};

static int __init ibtrs_clt_init(void)
{
	int ret;

	if (max_queue_depth < 1 || max_queue_depth >= TRS_MAX_QUEUE_DEPTH ||
	    !hb_interval_ms || !hb_missed_max || !reconnect_min_ms ||
	    reconnect_max_ms < reconnect_min_ms ||
	    mp_policy < 0 || mp_policy >= TRS_MP_MAX) {
		pr_err("invalid module parameter\n");
		return -EINVAL;
	}
	ibtrs_clt_wq = alloc_workqueue("ibtrs_clt", WQ_MEM_RECLAIM, 0);
	if (!ibtrs_clt_wq)
		return -ENOMEM;
	ibtrs_clt_kobj = kobject_create_and_add("ibtrs-client", kernel_kobj);
	if (!ibtrs_clt_kobj) {
		ret = -ENOMEM;
		goto out_destroy_wq;
	}
	ret = ib_register_client(&ibtrs_clt_ib_client);
	if (ret)
		goto out_put_kobj;
	return 0;

out_put_kobj:
	kobject_put(ibtrs_clt_kobj);
out_destroy_wq:
	destroy_workqueue(ibtrs_clt_wq);
	return ret;
}

static void __exit ibtrs_clt_exit(void)
{
	ib_unregister_client(&ibtrs_clt_ib_client);
	kobject_put(ibtrs_clt_kobj);
	destroy_workqueue(ibtrs_clt_wq);
}

module_init(ibtrs_clt_init);
module_exit(ibtrs_clt_exit);
MODULE_DESCRIPTION("IBTRS client transport");
MODULE_LICENSE("GPL");
