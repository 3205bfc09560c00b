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

/* module parameters (ibtrs-clt.c) */
extern uint ibtrs_clt_max_queue_depth;
extern uint ibtrs_clt_hb_interval_ms;
extern uint ibtrs_clt_hb_missed_max;
extern uint ibtrs_clt_reconnect_min_ms;
extern uint ibtrs_clt_reconnect_max_ms;
extern uint ibtrs_clt_ctrl_loss_tmo_ms;
extern uint ibtrs_clt_cons_per_path;
extern int ibtrs_clt_mp_policy;

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
 * @expired: the caller gave up on it (ibtrs_clt_request_timeout() final):
 *	it is not re-posted after its path's teardown but ends -ETIMEDOUT.
 * @inv_deferred: answered, but its path failed before the LOCAL_INV of
 *	its read MR could be posted: it ends after the path's teardown (QPs
 *	and MRs gone), when the server can no longer write its buffer.
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
	bool expired;
	bool inv_deferred;
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
 * @hdr_area: bytes of a chunk's header area (every path must agree).
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
	u32 hdr_area;
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

static inline u64 ibtrs_clt_now_us(void)
{
	return div_u64(ktime_get_ns(), NSEC_PER_USEC);
}

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
void ibtrs_clt_pending_run(struct ibtrs_clt_sess *sess, bool force);
void ibtrs_clt_pending_work(struct work_struct *work);
void ibtrs_clt_reco_schedule(struct ibtrs_clt_path *path);
void ibtrs_clt_reco_work(struct work_struct *work);
/* ibtrs-clt-io.c */
void ibtrs_clt_ctl_done(struct ib_cq *cq, struct ib_wc *wc);
void ibtrs_clt_hb_work(struct work_struct *work);
void ibtrs_clt_inv_done(struct ib_cq *cq, struct ib_wc *wc);
int ibtrs_clt_io_post(struct ibtrs_clt_io *io,
		      struct ibtrs_clt_con *con, size_t usrlen);
void ibtrs_clt_io_unmap(struct ibtrs_clt_io *io);
void ibtrs_clt_io_put(struct ibtrs_clt_io *io);
int ibtrs_clt_post_recv(struct ibtrs_clt_iu *iu);
void ibtrs_clt_recv_done(struct ib_cq *cq, struct ib_wc *wc);
void ibtrs_clt_send_done(struct ib_cq *cq, struct ib_wc *wc);
#endif /* IBTRS_CLT_PRI_H */
