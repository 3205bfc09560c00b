/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ibtrs-clt-pri.h - the client transport's own structures, parameters and
 * the functions its files share (see ibtrs-clt.c). Users of the module see
 * ibtrs-clt.h only.
 */
#ifndef IBTRS_CLT_PRI_H
#define IBTRS_CLT_PRI_H

#include <linux/slab.h>
#include <linux/inet.h>
#include <linux/uuid.h>
#include <linux/random.h>
#include <linux/workqueue.h>
#include <linux/delay.h>
#include <linux/rcupdate.h>
#include <linux/percpu.h>
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
/*
 * Receives are re-posted in chains of this many (one post, one doorbell
 * on a real HCA); the receive queue holds that many more.
 */
#define IBTRS_CLT_RX_BATCH	16
/*
 * Requests are posted unsignaled but every IBTRS_CLT_SIG_EVERY-th of a
 * connection: an IO ends at its answer, and a signaled completion lets the
 * device retire the send queue entries before it (power of 2).
 */
#define IBTRS_CLT_SIG_EVERY	16
/* request headers are this aligned (one chunk's, one cache line or more) */
#define IBTRS_CLT_HDR_ALIGN	64

/* module parameters (ibtrs-clt.c) */
extern uint ibtrs_clt_max_queue_depth;
extern uint ibtrs_clt_hb_interval_ms;
extern uint ibtrs_clt_ack_timeout;
extern uint ibtrs_clt_hb_missed_max;
extern uint ibtrs_clt_reconnect_min_ms;
extern uint ibtrs_clt_reconnect_max_ms;
extern uint ibtrs_clt_ctrl_loss_tmo_ms;
extern uint ibtrs_clt_cons_per_path;
extern int ibtrs_clt_mp_policy;
extern int ibtrs_clt_mr_mode;
extern int ibtrs_clt_inval_mode;
extern int ibtrs_clt_write_mode;

/**
 * enum ibtrs_clt_mr_mode - how a read buffer is exposed to the server
 *	(module parameter mr_mode; the values and names are the shared ones
 *	of trs/common/modes.c, whose other modes, userspace's, this client
 *	refuses by name).
 * @IBTRS_CLT_MR_FRWR: fast registration of exactly the IO buffer in the
 *	connection's MR of the chunk id, a new key per IO (default).
 * @IBTRS_CLT_MR_GLOBAL: UNSAFE, comparison only: the PD's unsafe global
 *	rkey (all of the client's memory, remote read and write, for the
 *	path's life) for a read of one DMA segment; a read of several
 *	segments is registered as with @IBTRS_CLT_MR_FRWR (nvme-rdma with
 *	register_always=N).
 * @IBTRS_CLT_MR_BOUNCE: the IO's slot of the session's bounce pool is
 *	registered as @IBTRS_CLT_MR_FRWR registers a buffer, and the data
 *	copied (out after a read, in before a pulled write): the caller's
 *	memory is never exposed (ibtrs-clt-bounce.c).
 */
enum ibtrs_clt_mr_mode {
	IBTRS_CLT_MR_FRWR = TRS_MR_FRWR,
	IBTRS_CLT_MR_GLOBAL = TRS_MR_GLOBAL,
	IBTRS_CLT_MR_BOUNCE = TRS_MR_BOUNCE,
};

/**
 * enum ibtrs_clt_inval_mode - how the server's access to a registered read
 *	buffer ends (module parameter inval_mode).
 * @IBTRS_CLT_INV_REMOTE: the request asks NEED_INV, the server answers
 *	with SEND_WITH_INV of the IO's rkey (default); an answer without it
 *	falls back to a LOCAL_INV.
 * @IBTRS_CLT_INV_LOCAL: no NEED_INV; the client posts a LOCAL_INV after
 *	the answer and ends the IO in its completion.
 * @IBTRS_CLT_INV_NONE: UNSAFE, comparison only: no NEED_INV and no
 *	LOCAL_INV at the answer; the MR keeps the buffer reachable after the
 *	IO, until the MR's next registration (a LOCAL_INV chained in front of
 *	it) or the path's teardown.
 * @IBTRS_CLT_INV_MAX: number of modes.
 */
enum ibtrs_clt_inval_mode {
	IBTRS_CLT_INV_REMOTE,
	IBTRS_CLT_INV_LOCAL,
	IBTRS_CLT_INV_NONE,
	IBTRS_CLT_INV_MAX,
};

extern struct workqueue_struct *ibtrs_clt_wq;
extern struct list_head ibtrs_clt_sessions;
extern struct mutex ibtrs_clt_sess_mutex;

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

/**
 * enum ibtrs_clt_io_state - who owns a request object (&ibtrs_clt_io.state).
 * @IBTRS_CLT_IO_IDLE: nobody: its chunk id is the caller's to use.
 * @IBTRS_CLT_IO_BUSY: the request path or the failover fills it in, or it
 *	waits for a path in sess->pending; an answer for it is a protocol
 *	error.
 * @IBTRS_CLT_IO_POSTED: posted on io->con; the answer may come.
 * @IBTRS_CLT_IO_ANSWERED: the answer (or its LOCAL_INV) ends it.
 *
 * IDLE -> BUSY by the caller's ibtrs_clt_request(), POSTED -> ANSWERED by
 * the answer, both with a cmpxchg; the other transitions are made by the
 * one context that owns the object then (a release store). So two
 * answers of one chunk, or an answer racing a re-post, cannot both win,
 * and the fast path needs no lock.
 */
enum ibtrs_clt_io_state {
	IBTRS_CLT_IO_IDLE,
	IBTRS_CLT_IO_BUSY,
	IBTRS_CLT_IO_POSTED,
	IBTRS_CLT_IO_ANSWERED,
};

struct ibtrs_clt_path;
struct ibtrs_clt_con;

/* Bits of &ibtrs_clt_con.poll_flags */
enum {
	IBTRS_CLT_POLLING,	/* a poller reaps the connection */
};

/**
 * struct ibtrs_clt_iu - a receive buffer.
 * @cqe: completion of its receive.
 * @con: owner.
 * @b: TRS_MAX_RECV_MSG bytes, mapped from the device.
 * @wr: its receive work request (chained with others to re-post).
 * @sge: the one SGE of @wr.
 */
struct ibtrs_clt_iu {
	struct ib_cqe cqe;
	struct ibtrs_clt_con *con;
	struct ibtrs_dma_buf b;
	struct ib_recv_wr wr;
	struct ib_sge sge;
};

/**
 * struct ibtrs_clt_stats - IO counters of a path, one per CPU (summed when
 * read): the fast path writes no cache line another CPU writes.
 * @reqs: IO requests posted (re-posts of a failover included).
 * @rsps: answers received.
 * @msgs: messages posted: requests, heartbeats and acks, INFO_REQ.
 * @reg_wrs: REG_MR and LOCAL_INV posted.
 * @reg_mrs: REG_MRs posted.
 * @local_invs: LOCAL_INVs posted: after an answer without remote
 *	invalidation, and (inval_mode none) in front of the REG_MR of an MR
 *	that is still valid.
 * @inv_rsps: answers received with remote invalidation
 *	(IB_WC_WITH_INVALIDATE).
 * @sig_reqs: requests posted signaled (one in IBTRS_CLT_SIG_EVERY).
 * @poll_cqes: completions reaped by ibtrs_clt_poll().
 * @bounce_bytes: bytes copied between the caller's pages and the bounce
 *	pool (mr_mode bounce: a read's after its answer, a pulled write's
 *	before its request).
 * @inflight: requests posted minus requests ended on this CPU (only the
 *	sum over the CPUs means something).
 */
struct ibtrs_clt_stats {
	u64 reqs;
	u64 rsps;
	u64 msgs;
	u64 reg_wrs;
	u64 reg_mrs;
	u64 local_invs;
	u64 inv_rsps;
	u64 sig_reqs;
	u64 poll_cqes;
	u64 bounce_bytes;
	s64 inflight;
};

/**
 * struct ibtrs_clt_sess_stats - IO counters of a session, per CPU.
 * @ios: requests taken by ibtrs_clt_request().
 * @read_bytes: bytes of those reads.
 * @write_bytes: bytes of those writes.
 * @inflight: taken minus ended (also those waiting for a path).
 */
struct ibtrs_clt_sess_stats {
	u64 ios;
	u64 read_bytes;
	u64 write_bytes;
	s64 inflight;
};

/**
 * struct ibtrs_clt_con - one RC connection of a path.
 * @path: owner.
 * @cid: index in the path.
 * @poll: a polled connection (cid >= nr_cons): its CQ is IB_POLL_DIRECT,
 *	reaped by ibtrs_clt_poll() only.
 * @cm_id: RDMA CM id.
 * @cq: one CQ for sends and receives (softirq polling, comp vector
 *	@cid % num_comp_vectors; or direct polling).
 * @qp: the QP (@cm_id's).
 * @mrs: one read registration per chunk id: an IO of chunk i on this
 *	connection uses @mrs[i] (no pool, no lock); NULL entries unallocated.
 *	Its need_inval: still valid (registered and not invalidated since),
 *	so its next REG_MR needs a LOCAL_INV in front; read and written only
 *	by the owner of chunk i's request object.
 * @nr_mrs: entries of @mrs.
 * @rx: receive buffers.
 * @rx_num: entries of @rx.
 * @rx_chain: receives consumed and not re-posted yet; touched only by the
 *	CQ's own context.
 * @ctl_cqe: completion of control sends (INFO_REQ, heartbeats, acks).
 * @reg_cqe: completion (errors only) of unsignaled REG_MRs.
 * @req_cqe: completion of request WRs: errors, and the periodic signaled
 *	one (nothing of an IO waits for it).
 * @cm_done: a CM step finished (@cm_err).
 * @cm_err: its result.
 * @params: the server's accept of this connection.
 * @max_sge: send SGEs of @qp.
 * @cm_dead: a failed connect unwinds: the CM handler ignores its events
 *	(set under the cm_id's handler lock, so none runs any more).
 * @reqs: requests posted on this connection; its count also picks the
 *	signaled ones.
 * @last_rx: jiffies of the last receive (any receive is life).
 * @poll_flags: IBTRS_CLT_POLLING: one poller of a polled connection at a
 *	time (a bit lock: pollers never wait, the teardown does).
 * @poll_live: a polled connection may be polled (under IBTRS_CLT_POLLING;
 *	cleared before its teardown drains it).
 * @poll_batch: the caller's batch while ibtrs_clt_poll() reaps (under
 *	IBTRS_CLT_POLLING).
 */
struct ibtrs_clt_con {
	struct ibtrs_clt_path *path;
	int cid;
	bool poll;
	struct rdma_cm_id *cm_id;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_mr **mrs;
	u32 nr_mrs;
	struct ibtrs_clt_iu *rx;
	int rx_num;
	struct ibtrs_rx_chain rx_chain;
	struct ib_cqe ctl_cqe;
	struct ib_cqe reg_cqe;
	struct ib_cqe req_cqe;
	struct completion cm_done;
	int cm_err;
	struct trs_conn_params params;
	u32 max_sge;
	bool cm_dead;
	atomic64_t reqs;
	unsigned long last_rx;
	unsigned long poll_flags;
	bool poll_live;
	void *poll_batch;
};

/**
 * struct ibtrs_clt_io - the request on one chunk (one per chunk id).
 * @sess: owner.
 * @id: chunk id.
 * @state: &enum ibtrs_clt_io_state.
 * @inv_cqe: completion of a LOCAL_INV.
 * @path: the path the request went on.
 * @con: its connection there (the answer must come on it).
 * @hint: the caller's connection hint.
 * @mr: the buffer's registration (@con's @mrs[@id]) of a read or a
 *	pulled write; NULL for pushed writes and for a buffer sent with the
 *	global rkey.
 * @hdr: request header + user header (the session's header buffer,
 *	mapped once per path: the DMA source of the header SGE).
 * @hdr_len: bytes of @hdr sent.
 * @seq: requests sent on this chunk (the header's sequence number).
 * @sg: the caller's data.
 * @sg_cnt: entries of @sg.
 * @nents: mapped entries of @map_sg (0: not mapped).
 * @map_sg: what is DMA-mapped for the IO: @sg, or (mr_mode bounce, a
 *	read or a pulled write) @bsg.
 * @map_cnt: entries of @map_sg.
 * @bsg: the scatterlist of the IO's bounce slot (mr_mode bounce only).
 * @bounced: the data goes through the bounce slot (set when it is
 *	posted, cleared when it ends: a read's data is copied out then).
 * @dir: &enum ibtrs_clt_dir.
 * @datalen: bytes of data.
 * @usrlen: bytes of user header in @hdr.
 * @status: result given to @conf.
 * @start_us: when the request was posted (min-latency only).
 * @conf: the caller's completion.
 * @priv: its argument.
 * @sge: SGEs of the request (data, then the header).
 * @ri: the request header's fields (encoded into @hdr).
 * @wr: the request's RDMA_WRITE_WITH_IMM.
 * @data_wr: the data's RDMA_WRITE when it does not fit beside the header.
 * @reg_wr: a read's REG_MR.
 * @inv_wr: a LOCAL_INV chained in front of @reg_wr when the MR is still
 *	valid (inval_mode none).
 *	The work requests live here, not on the stack: the kernel zeroes
 *	every stack variable (INIT_STACK_ALL_ZERO), 200 bytes per IO.
 * @pending: in sess->pending while it waits for a path (@path NULL), or
 *	in the teardown's list of deferred ends.
 * @expired: the caller gave up on it (ibtrs_clt_request_timeout() final):
 *	it is not re-posted after its path's teardown but ends -ETIMEDOUT.
 * @inv_deferred: answered, but its path failed before the LOCAL_INV of
 *	its read MR could be posted or complete: it ends after the path's
 *	teardown (QPs and MRs gone), when the server can no longer write its
 *	buffer.
 * @mp_counted: counted in its path's mp_inflight (a policy that needs
 *	it was on when it was posted).
 */
struct ibtrs_clt_io {
	struct ibtrs_clt_sess *sess;
	u32 id;
	atomic_t state;
	struct ib_cqe inv_cqe;
	struct ibtrs_clt_path *path;
	struct ibtrs_clt_con *con;
	unsigned int hint;
	struct ib_mr *mr;
	void *hdr;
	u32 hdr_len;
	u32 seq;
	struct scatterlist *sg;
	unsigned int sg_cnt;
	int nents;
	struct scatterlist *map_sg;
	unsigned int map_cnt;
	struct scatterlist *bsg;
	bool bounced;
	enum ibtrs_clt_dir dir;
	u32 datalen;
	u32 usrlen;
	int status;
	u64 start_us;
	ibtrs_clt_conf_fn conf;
	void *priv;
	struct ib_sge sge[IBTRS_CLT_MAX_SGE + 1];
	struct trs_io_req_info ri;
	struct ib_rdma_wr wr;
	struct ib_rdma_wr data_wr;
	struct ib_reg_wr reg_wr;
	struct ib_send_wr inv_wr;
	struct list_head pending;
	bool expired;
	bool inv_deferred;
	bool mp_counted;
};

/**
 * struct ibtrs_clt_path - one path: @ncons RC connections to the server.
 * @sess: owner.
 * @idx: index in the session.
 * @addr: its two ends.
 * @uuid: path_uuid (stable across reconnects).
 * @recon_cnt: reconnects so far.
 * @state: &enum ibtrs_clt_path_state, changed under sess->lock, read
 *	without it (an RCU read section posts only while it is CONNECTED;
 *	the teardown waits for those after setting FAILED).
 * @ncons: connections (the session's nr_cons + nr_poll).
 * @cons: the connections; cid 0 carries INFO and heartbeats; the last
 *	nr_poll are polled.
 * @dev: the RDMA device of every connection.
 * @pd: protection domain of every connection (with the unsafe global
 *	rkey under mr_mode global).
 * @mr_mode: &enum ibtrs_clt_mr_mode (the module parameter when the path
 *	was made).
 * @inval_mode: &enum ibtrs_clt_inval_mode (likewise).
 * @write_mode: TRS_WRITE_PUSH or TRS_WRITE_PULL (likewise): under pull a
 *	write's buffer is registered and exposed for reading like a read's
 *	for writing, and the server reads the data.
 * @txb: the INFO_REQ buffer (sent on cid 0).
 * @hdr_dma: the session's request headers mapped for @dev (0: not).
 * @info_done: INFO_RSP arrived (@info_err).
 * @info_err: its result.
 * @params: the server's accept.
 * @info: the server's INFO_RSP.
 * @rekey: the server re-keys its chunks per IO (chunk_mode rekey, this
 *	join's INFO_RSP had TRS_INFO_F_REKEY): chunk i is written with
 *	@chunk_rkey[i], which every answer of chunk i on this path replaces
 *	with ib_inc_rkey() of it.
 * @chunk_rkey: queue_depth keys (allocated at the first rekey join); an
 *	entry is written by the answer of its chunk and read by the chunk's
 *	next request, ordered by the chunk's release in between.
 * @keys_got: chunks whose first key the KEYS messages of this join gave.
 * @max_sge: send SGEs every connection has.
 * @lock: @hb, @hb_rtt_us, @lat_ewma.
 * @hb: heartbeat state (trs/common/hb.c).
 * @hb_rtt_us: last heartbeat round trip.
 * @lat_ewma: IO latency average (trs/common/mp.c; min-latency only).
 * @hb_work: heartbeat tick.
 * @err_work: tears a failed path down (process context).
 * @reco_work: reconnects a path that is down.
 * @reco_attempt: reconnect attempts since the path was last up.
 * @conn_mutex: held while the path connects or is torn down, so that the
 *	device removal can wait for either.
 * @failing: the error work was queued.
 * @stats: IO counters, per CPU.
 * @mp_inflight: IOs in flight on the path that a min-inflight or
 *	min-latency choice counted (&ibtrs_clt_io.mp_counted).
 * @hb_sent: heartbeats sent.
 * @proto_errors: protocol violations seen.
 * @failovers: IOs re-posted on another path after this one failed.
 * @reconnects: successful reconnects.
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
	int mr_mode;
	int inval_mode;
	int write_mode;
	struct ibtrs_dma_buf txb;
	u64 hdr_dma;
	struct completion info_done;
	int info_err;
	struct trs_conn_params params;
	struct trs_info info;
	bool rekey;
	u32 *chunk_rkey;
	u32 keys_got;
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
	struct ibtrs_clt_stats __percpu *stats;
	atomic_t mp_inflight;
	atomic64_t hb_sent;
	atomic64_t proto_errors;
	atomic64_t failovers;
	atomic64_t reconnects;
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
 * @nr_cons: interrupt-driven connections per path (fixed at open).
 * @nr_poll: polled connections per path (fixed at open).
 * @want_usr_len: the largest user header the caller sends.
 * @npaths: slots of @paths in use (removed paths leave NULL).
 * @paths: the paths; changed under ibtrs_clt_sess_mutex and @lock, read
 *	in RCU read sections (a removed path is freed after a grace period);
 *	an index stays a path's for its life.
 * @sized: the first accept sized the session (the fields below).
 * @queue_depth: chunks = request ids.
 * @chunk_size: bytes per chunk, the largest IO.
 * @max_usr_len: largest user header (the server's, capped by
 *	@want_usr_len).
 * @hdr_area: bytes of a chunk's header area (every path must agree).
 * @slot_size: chunk stride of the pool.
 * @max_segs: data segments per IO.
 * @mr_pages: pages of a read registration (ib_map_mr_sg() maps pages, a
 *	segment may span several).
 * @max_io: largest IO: the chunk, or what @mr_pages can map.
 * @bounce: mr_mode bounce: the pool, @queue_depth slots of @bounce_stride
 *	bytes (vmalloc'ed; NULL in the other modes).
 * @bounce_sg: @bounce_pages scatterlist entries per slot.
 * @bounce_stride: bytes per slot (@max_io in whole pages).
 * @bounce_pages: pages per slot.
 * @lock: path states, @pending, and the min-latency bookkeeping; not
 *	taken per IO otherwise.
 * @ios: one request object per chunk.
 * @hdrs: the request headers of @ios, @hdr_stride apart.
 * @hdrs_len: bytes of @hdrs.
 * @hdr_stride: bytes per header (aligned).
 * @rr_cursor: round-robin cursor, one per CPU.
 * @closing: ibtrs_clt_close() runs: no reconnects.
 * @all_down_at: jiffies when the last usable path went down, 0 while one
 *	is up (ctrl_loss_tmo_ms).
 * @pending: IO of failed paths waiting for a path (under @lock).
 * @pending_work: fails @pending after ctrl_loss_tmo_ms.
 * @kobj: /sys/kernel/ibtrs-client/<sessname>/ (owns the struct).
 * @paths_kobj: its paths/ directory.
 * @ctl_mutex: serializes add_path, remove_path, reconnect and the close.
 * @mp_policy: &enum trs_mp_policy (written under @lock, read without).
 * @stats: IO counters, per CPU.
 * @gone: counters of removed paths (msgs, reg_wrs, failovers,
 *	reconnects), under ibtrs_clt_sess_mutex.
 */
struct ibtrs_clt_sess {
	struct list_head list;
	char sessname[TRS_SESSNAME_MAX];
	u8 uuid[TRS_UUID_LEN];
	u16 port;
	int nr_cons;
	int nr_poll;
	u32 want_usr_len;
	int npaths;
	struct ibtrs_clt_path __rcu *paths[IBTRS_CLT_MAX_PATHS];
	bool sized;
	u32 queue_depth;
	u32 chunk_size;
	u32 max_usr_len;
	u32 hdr_area;
	u32 slot_size;
	u32 max_segs;
	u32 mr_pages;
	u32 max_io;
	void *bounce;
	struct scatterlist *bounce_sg;
	u32 bounce_stride;
	u32 bounce_pages;
	spinlock_t lock;	/* path states, pending, min-latency */
	struct ibtrs_clt_io *ios;
	void *hdrs;
	size_t hdrs_len;
	u32 hdr_stride;
	u32 __percpu *rr_cursor;
	bool closing;
	unsigned long all_down_at;
	struct list_head pending;
	struct delayed_work pending_work;
	struct kobject kobj;
	struct kobject *paths_kobj;
	struct mutex ctl_mutex;	/* add_path, remove_path, reconnect, close */
	int mp_policy;
	struct ibtrs_clt_sess_stats __percpu *stats;
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

static inline u64 ibtrs_clt_now_us(void)
{
	return div_u64(ktime_get_ns(), NSEC_PER_USEC);
}

/*
 * Path @i of @sess for a caller that keeps it from going away: it holds
 * ibtrs_clt_sess_mutex, sess->ctl_mutex or sess->lock, or it is the open
 * or the close of the session (only ibtrs_clt_path_uninstall() removes a
 * path, under the first and the last).
 */
static inline struct ibtrs_clt_path *
ibtrs_clt_path_at(const struct ibtrs_clt_sess *sess, int i)
{
	return rcu_dereference_protected(sess->paths[i], true);
}

/* Sum over the CPUs of the 64-bit counter at @off of per-CPU @base. */
static inline s64 ibtrs_clt_pcpu_sum(const void __percpu *base, size_t off)
{
	s64 n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += *(const s64 *)((const char *)per_cpu_ptr(base, cpu) + off);
	return n;
}

/* Counter @field of a path's (ibtrs_clt_stats) or session's IO counters. */
#define ibtrs_clt_path_sum(path, field)	\
	ibtrs_clt_pcpu_sum((path)->stats, offsetof(struct ibtrs_clt_stats, field))
#define ibtrs_clt_sess_sum(sess, field)	\
	ibtrs_clt_pcpu_sum((sess)->stats,	\
			   offsetof(struct ibtrs_clt_sess_stats, field))

/* ibtrs-clt.c */
extern const char *const ibtrs_clt_state_names[];
extern const char *const ibtrs_clt_policy_names[];
int ibtrs_clt_add_one(struct ib_device *dev);
struct ibtrs_clt_path *ibtrs_clt_path_alloc(struct ibtrs_clt_sess *sess,
					    int idx,
					    const struct ibtrs_clt_addr *addr);
void ibtrs_clt_path_fail(struct ibtrs_clt_path *path, const char *why);
void ibtrs_clt_path_fail_locked(struct ibtrs_clt_path *path, const char *why);
void ibtrs_clt_path_install(struct ibtrs_clt_path *path);
void ibtrs_clt_path_stop(struct ibtrs_clt_path *path);
void ibtrs_clt_path_uninstall(struct ibtrs_clt_path *path);
void ibtrs_clt_sess_release(struct kobject *kobj);
void ibtrs_clt_wr_error(struct ibtrs_clt_path *path, struct ib_wc *wc,
			const char *op);
/* ibtrs-clt-sysfs.c */
extern const struct kobj_type ibtrs_clt_sess_ktype;
extern const struct kobj_type ibtrs_clt_path_ktype;
/* ibtrs-clt-conn.c */
struct ibtrs_clt_con *ibtrs_clt_con_of(struct ibtrs_clt_path *path,
				       unsigned int hint);
void ibtrs_clt_err_work(struct work_struct *work);
int ibtrs_clt_path_connect(struct ibtrs_clt_path *path);
void ibtrs_clt_path_down(struct ibtrs_clt_path *path);
void ibtrs_clt_poll_stop(struct ibtrs_clt_path *path);
bool ibtrs_clt_may_wait(struct ibtrs_clt_sess *sess);
void ibtrs_clt_pending_run(struct ibtrs_clt_sess *sess, bool force);
void ibtrs_clt_pending_work(struct work_struct *work);
void ibtrs_clt_reco_schedule(struct ibtrs_clt_path *path);
void ibtrs_clt_reco_work(struct work_struct *work);
/* ibtrs-clt-io.c */
void ibtrs_clt_ctl_done(struct ib_cq *cq, struct ib_wc *wc);
void ibtrs_clt_req_done(struct ib_cq *cq, struct ib_wc *wc);
void ibtrs_clt_hb_work(struct work_struct *work);
void ibtrs_clt_inv_done(struct ib_cq *cq, struct ib_wc *wc);
int ibtrs_clt_io_start(struct ibtrs_clt_io *io);
void ibtrs_clt_io_unmap(struct ibtrs_clt_io *io);
int ibtrs_clt_bounce_alloc(struct ibtrs_clt_sess *sess, u32 queue_depth);
void ibtrs_clt_bounce_free(struct ibtrs_clt_sess *sess);
unsigned int ibtrs_clt_bounce_prep(struct ibtrs_clt_io *io,
				   struct ibtrs_clt_path *path);
void ibtrs_clt_bounce_end(struct ibtrs_clt_io *io, int status);
void ibtrs_clt_io_end(struct ibtrs_clt_io *io, void *batch);
void ibtrs_clt_io_abort(struct ibtrs_clt_io *io, int status);
int ibtrs_clt_post_recv(struct ibtrs_clt_iu *iu);
void ibtrs_clt_recv_flush(struct ibtrs_clt_con *con);
void ibtrs_clt_recv_done(struct ib_cq *cq, struct ib_wc *wc);
#endif /* IBTRS_CLT_PRI_H */
