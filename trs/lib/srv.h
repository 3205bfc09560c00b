/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srv.h - server context, session, path and op structures (private). */
#ifndef TRS_SRV_H
#define TRS_SRV_H

#include "trs_lib.h"

struct trs_srv_path;

/* The context of every server cm_id starts a listener or a connection. */
struct trs_srv_idctx {
	bool listener;
};

/**
 * struct trs_srv_listener - one listen address. @id is NULL while the
 * address (or its device) is gone; the tick tries again at @retry_us.
 */
struct trs_srv_listener {
	struct trs_srv_idctx ictx;
	struct ibtrs_srv_ctx *ctx;
	struct rdma_cm_id *id;
	const char *addr;
	uint64_t retry_us;
};
#define TRS_LISTEN_RETRY_MS	250

struct trs_srv_con;

/* Send-queue WRs kept for heartbeats and INFO_RSP, which are signaled. */
#define TRS_SRV_SQ_CTRL		16

/**
 * struct trs_srv_con - one server connection.
 * @txq: answers staged (plugged) or waiting for send-queue room, in order
 *	(the answers' WRs are accounted by @c's partial signalling).
 * @dirty/@dirty_next: on the context's list of connections to flush.
 */
struct trs_srv_con {
	struct trs_srv_idctx ictx;
	struct trs_con c;
	struct trs_srv_path *path;
	bool established;
	bool created;		/* trs_con_create() done */
	uint8_t pull_depth;	/* RDMA READs we may post (0: no pulls) */
	TAILQ_HEAD(, ibtrs_srv_op) txq;
	bool dirty;
	struct trs_srv_con *dirty_next;
};

enum trs_srv_op_state {
	TRS_OP_FREE,		/* chunk idle */
	TRS_OP_PULLING,		/* a pulled write's RDMA READ is out */
	TRS_OP_ACTIVE,		/* handed to rdma_ev, not answered yet */
	TRS_OP_QUEUED,		/* answered; its WRs wait on the con's txq */
};

/**
 * struct ibtrs_srv_op - the request occupying one chunk.
 * @path: the path the request came on; NULL once that path is gone (the
 *	answer is then dropped).
 * @pending_path: a retried request for this chunk that arrived (on another
 *	path) while the old one was still being served; it is started when
 *	the old one is answered.
 */
struct ibtrs_srv_op {
	struct ibtrs_srv_sess *sess;
	uint32_t id;
	enum trs_srv_op_state state;
	struct trs_srv_path *path;
	struct trs_srv_con *con;
	struct trs_srv_path *pending_path;
	struct trs_srv_con *pending_con;
	struct trs_io_req_info req;
	/*
	 * The answer: [replay_wr ->] [data_wr ->] rsp_wr from first_wr, kept
	 * until posted (TRS_OP_QUEUED); replay_wr only with the test fault
	 * IBTRS_SRV_TEST_REPLAY.
	 */
	struct ibv_send_wr replay_wr, data_wr, rsp_wr;
	struct ibv_send_wr *first_wr;
	/* chunk_mode rekey: the chunk window's new binding, chained in front */
	struct ibv_send_wr bind_wr;
	struct ibv_sge replay_sge, data_sge, rsp_sge;
	/* write_mode pull: the RDMA READ of the write's data, signaled */
	struct ibv_send_wr pull_wr;
	struct ibv_sge pull_sge;
	struct trs_cqe pull_cqe;
	unsigned int nwrs;	/* the answer's WRs, a rekey bind included */
	TAILQ_ENTRY(ibtrs_srv_op) tx_link;
	uint8_t hdr[TRS_HDR_AREA];	/* private copy of the header area */
};

struct trs_srv_path {
	struct ibtrs_srv_sess *sess;
	uint8_t uuid[TRS_UUID_LEN];
	uint16_t recon_cnt;
	unsigned int ncons;
	struct trs_srv_con *cons;
	bool joined;		/* INFO exchange done */
	bool fail_pending;
	char addr[64];
	struct trs_dev *dev;	/* held for pool_mr; all cons use it */
	struct ibv_pd *pd;	/* this path's alone: its QPs, pool_mr */
	struct ibv_mr *pool_mr;
	/*
	 * chunk_mode rekey: a type-1 window per chunk (the only remote access
	 * to the pool, whose MR then has MW_BIND, not REMOTE_WRITE), bound
	 * again before each answer; the KEYS messages of the join.
	 */
	struct ibv_mw **chunk_mw;
	struct trs_msg_keys *keys_msgs;
	struct ibv_mr *keys_mr;
	uint64_t rebinds;	/* window binds posted (join + per IO) */
	/* IBTRS_SRV_TEST_REPLAY: the pattern's MR, the previous read's key
	 * and the previous pulled write's */
	struct ibv_mr *replay_mr;
	uint64_t replay_raddr, pull_replay_raddr;
	uint32_t replay_rkey, replay_len, pull_replay_rkey, pull_replay_len;
	struct trs_hb hb;	/* heartbeat and liveness (common/hb.c) */
	uint64_t created_us;	/* first connection: the join deadline's start */
	struct trs_cqe hb_cqe;
	TAILQ_ENTRY(trs_srv_path) link;
};
TAILQ_HEAD(trs_srv_path_list, trs_srv_path);

struct ibtrs_srv_sess {
	struct ibtrs_srv_ctx *ctx;
	uint8_t uuid[TRS_UUID_LEN];
	char name[TRS_SESSNAME_MAX];
	bool named;
	bool link_up;		/* CONNECTED event delivered */
	bool dead;		/* no paths; freed when no op is active */
	void *priv;
	unsigned int active_ops;
	void *pool;		/* queue_depth slots of slot_size */
	size_t pool_len;
	struct ibtrs_srv_op *ops;
	struct trs_srv_path_list paths;
	int npaths;
	TAILQ_ENTRY(ibtrs_srv_sess) link;
};
TAILQ_HEAD(trs_srv_sess_list, ibtrs_srv_sess);

/* A user fd that ibtrs_srv_poll() waits for (ibtrs_srv_watch_fd()). */
struct trs_srv_watch {
	struct trs_evsrc src;
	void (*cb)(void *arg);
	void *arg;
};
#define TRS_SRV_WATCH_MAX	8

struct ibtrs_srv_ctx {
	struct ibtrs_srv_opts opts;
	struct ibtrs_srv_ops ops;
	void *priv;
	int epfd;
	struct rdma_event_channel *cm_ch;
	struct trs_srv_listener *listeners;
	int nlisteners;
	struct trs_evsrc cm_src, tick_src;
	struct trs_devwatch devwatch;
	struct trs_srv_sess_list sessions;
	struct trs_conn_params params;
	uint32_t slot_size;
	int ncalls;
	unsigned int plugged;		/* ibtrs_srv_plug() depth */
	uint64_t now_us;		/* at the start of this poll */
	struct trs_srv_con *dirty;	/* connections with answers to post */
	struct ibtrs_srv_stats st;	/* answers, signaled, requests */
	struct trs_con_stats con_st;	/* of connections already destroyed */
	struct trs_srv_watch watch[TRS_SRV_WATCH_MAX];
	int nwatch;
};

static inline void *trs_srv_slot(struct ibtrs_srv_sess *sess, uint32_t id)
{
	return (char *)sess->pool + (size_t)id * sess->ctx->slot_size;
}

/* srv.c */
void trs_srv_path_fail(struct trs_srv_path *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* srv_io.c */
int trs_srv_con_tx_init(struct trs_srv_con *con, unsigned int sq_size);
/* srv_rekey.c: chunk_mode rekey */
int trs_srv_rekey_setup(struct trs_srv_path *path, struct trs_srv_con *con);
struct ibv_send_wr *trs_srv_rekey_wr(struct ibtrs_srv_op *op,
				     struct ibv_send_wr *next);
void trs_srv_rekey_posted(struct ibtrs_srv_op *op);
void trs_srv_rekey_free(struct trs_srv_path *path);
void trs_srv_con_tx_drop(struct trs_srv_con *con);
void trs_srv_recv_done(struct trs_con *con, struct trs_rx *rx, struct ibv_wc *wc);
void trs_srv_hb_done(struct trs_cqe *cqe, struct ibv_wc *wc);
void trs_srv_send_done(struct trs_cqe *cqe, struct ibv_wc *wc);
void trs_srv_path_tick(struct trs_srv_path *path, uint64_t now);
void trs_srv_op_orphan(struct ibtrs_srv_op *op);
void trs_srv_op_finish(struct ibtrs_srv_op *op);
void trs_srv_sess_maybe_free(struct ibtrs_srv_sess *sess);
/* Test hook, never set by a real server: ibtrs_srv_resp() sends a successful
 * READ answer shorter than the request instead of refusing it, so that
 * trs-test-server -S raw can play a broken server and exercise
 * the client's check. */
extern bool trs_srv_test_short_read;

#endif /* TRS_SRV_H */
