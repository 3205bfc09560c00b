/* SPDX-License-Identifier: GPL-2.0-or-later */
/* clt.h - client session, path and request structures (private). */
#ifndef TRS_CLT_H
#define TRS_CLT_H

#include <sys/socket.h>
#include "trs_lib.h"

struct trs_clt_path;

struct trs_clt_req;

/*
 * @staged/@staged_tail: requests whose WRs wait, chained, for the session's
 * unplug (ibtrs_clt_plug()); @staged_wrs counts their WRs.
 */
struct trs_clt_con {
	struct trs_con c;
	struct trs_clt_path *path;
	bool established;
	uint8_t stage;		/* last RDMA CM step done: TRS_STAGE_* */
	struct trs_clt_req *staged, **staged_tail;
	unsigned int staged_wrs;
	/* wr_id of the requests' unsignaled WRs: only a failure completes one */
	struct trs_cqe req_cqe;
};
enum { TRS_STAGE_ID, TRS_STAGE_ADDR, TRS_STAGE_ROUTE, TRS_STAGE_EST };

/**
 * struct trs_clt_req - one IO; exactly one per permit (chunk id).
 * @refs: events still to come before the IO completes: the server's
 *	response, and a LOCAL_INV completion when the client has to
 *	invalidate itself. The request's own WRs are unsignaled (partial
 *	signalling, trs_con_sig_chain()): the answer proves the server has
 *	what they carried, so nothing of the IO waits for their completion.
 */
struct trs_clt_req {
	struct ibtrs_permit *permit;
	uint32_t id;
	struct trs_cqe inv_cqe;		/* LOCAL_INV */
	enum ibtrs_dir dir;
	uint16_t usr_len;
	struct iovec iov[TRS_MAX_IOV];
	int iovcnt;
	size_t len;
	ibtrs_conf_fn conf;
	void *priv;

	struct trs_clt_path *path;	/* set while posted */
	struct trs_clt_con *con;
	int refs;
	int status;
	int final_status;		/* complete with it, never re-post */
	bool active;			/* between request() and conf() */
	bool bounce;			/* data staged in the bounce buffer */
	bool need_inv;			/* rkey still valid remotely */
	bool rsp_pending;		/* posted, no response yet */
	uint32_t rkey;			/* rkey sent to the server */
	struct ibv_mr *io_mr;		/* per-IO registration (fallback) */
	/* the posted WRs: [bind_wr ->] wr, kept until posted (staging) */
	struct ibv_send_wr bind_wr, wr;
	struct ibv_sge sge[2];
	bool bind;			/* bind_wr in front of wr */
	struct trs_clt_req *stage_next;	/* con's staged list */
	uint64_t seq;
	uint64_t post_us;		/* posted on its path (latency sample) */
	TAILQ_ENTRY(trs_clt_req) link;	/* pending queue or path inflight */
};
TAILQ_HEAD(trs_req_list, trs_clt_req);

struct ibtrs_permit {
	uint32_t id;
	bool held;
};

struct trs_region {
	void *addr;
	size_t len;
	struct ibv_mr *mr[IBTRS_MAX_PATHS];	/* per path index */
};

struct trs_clt_path {
	struct ibtrs_clt *clt;
	int idx;
	enum ibtrs_path_state state;
	char addr_str[96];
	struct sockaddr_storage src, dst;
	bool has_src;
	uint8_t uuid[TRS_UUID_LEN];
	uint16_t recon_cnt;
	unsigned int ncons;
	struct trs_clt_con *cons;
	unsigned int nestablished;
	bool info_sent;
	bool fail_pending;	/* torn down after the current poll batch */
	char fail_reason[128];
	uint64_t deadline_us;	/* connect timeout */
	uint64_t reconnect_at_us;
	unsigned int attempts;	/* failed attempts since last success */
	struct trs_dev *dev;	/* of con 0; MRs and MWs are on its PD */
	struct ibv_mr *iobuf_mr;
	struct ibv_mw **mw;	/* per chunk id (MW mode) */
	uint32_t *mw_rkey;
	bool use_mw;
	uint64_t pool_addr;
	uint32_t pool_rkey;
	/* chunk_mode rekey (TRS_INFO_F_REKEY): each chunk's current key on
	 * this path; the KEYS messages received so far at the join */
	uint32_t *chunk_rkey;
	uint32_t keys_got;
	struct trs_req_list inflight_list;
	unsigned int inflight;
	__u64 lat_ewma;		/* min-latency: IO latency average (mp.c) */
	struct trs_hb hb;	/* heartbeat and liveness (common/hb.c) */
	struct trs_cqe hb_cqe;
	struct ibtrs_path_stats st;
	struct trs_con_stats con_st;	/* of connections already destroyed */
};

struct ibtrs_clt {
	struct ibtrs_clt_opts opts;
	char sessname[IBTRS_SESSNAME_MAX];
	uint8_t uuid[TRS_UUID_LEN];
	int epfd;
	struct rdma_event_channel *cm_ch;
	struct trs_evsrc cm_src, tick_src;
	struct trs_devwatch devwatch;
	struct trs_clt_path *paths[IBTRS_MAX_PATHS];
	int npaths;
	enum ibtrs_mp_policy policy;
	uint32_t rr_cursor;

	/* session parameters, fixed by the first path that connects */
	bool have_params;
	struct trs_conn_params params;
	unsigned int qd;		/* usable depth: min(server, cap) */
	struct trs_clt_req *reqs;
	struct ibtrs_permit *permits;
	__u64 *permit_map;
	struct trs_permit_pool pool;
	void *iobuf;			/* qd * (chunk bounce + header) */
	size_t iobuf_len;

	struct trs_region regions[TRS_MAX_REGIONS];
	int nregions;

	struct trs_req_list pending;	/* waiting for a path */
	uint64_t all_down_since_us;	/* 0 while some path is up */
	bool loss_expired;
	uint64_t queued_no_path, failed_no_path;
	uint64_t seq;
	int ncompleted;			/* callbacks run in this poll */
	bool closing;
	unsigned int plugged;		/* ibtrs_clt_plug() depth */
	unsigned int nstaged;		/* requests staged on connections */
	uint64_t next_tick_us;		/* next look at the epoll fd */
	uint64_t now_us;		/* clock at the start of this round */
};

static inline void *trs_clt_bounce(struct ibtrs_clt *clt, uint32_t id)
{
	return (char *)clt->iobuf + (size_t)id * clt->params.chunk_size;
}

static inline void *trs_clt_hdr(struct ibtrs_clt *clt, uint32_t id)
{
	return (char *)clt->iobuf + (size_t)clt->qd * clt->params.chunk_size +
	       (size_t)id * TRS_HDR_AREA;
}

/* clt.c */
void trs_clt_req_done_ref(struct trs_clt_req *req);
void trs_clt_dispatch_pending(struct ibtrs_clt *clt);
int trs_clt_setup_params(struct ibtrs_clt *clt, const struct trs_conn_params *p);

/* clt_path.c */
struct trs_clt_path *trs_clt_path_alloc(struct ibtrs_clt *clt, const char *addr);
void trs_clt_path_free(struct trs_clt_path *path);
int trs_clt_path_connect(struct trs_clt_path *path);
void trs_clt_path_fail(struct trs_clt_path *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void trs_clt_path_teardown(struct trs_clt_path *path);
void trs_clt_cm_event(struct trs_evsrc *src);
void trs_clt_path_tick(struct trs_clt_path *path, uint64_t now);
void trs_clt_recv_done(struct trs_con *con, struct trs_rx *rx, struct ibv_wc *wc);

/* clt_io.c */
int trs_clt_post_req(struct trs_clt_path *path, struct trs_clt_req *req);
void trs_clt_flush(struct ibtrs_clt *clt);
void trs_clt_con_drop_staged(struct trs_clt_con *con);
void trs_clt_con_room(struct trs_con *c);
void trs_clt_req_send_done(struct trs_cqe *cqe, struct ibv_wc *wc);
int trs_clt_rsp_check(struct trs_clt_req *req, int status, const void *rsp);

/* mem.c */
int trs_clt_path_mem_setup(struct trs_clt_path *path);
void trs_clt_path_mem_free(struct trs_clt_path *path);
struct ibv_mr *trs_clt_find_mr(struct trs_clt_path *path, void *addr, size_t len);
int trs_clt_req_map(struct trs_clt_path *path, struct trs_clt_req *req,
		    void *buf, struct ibv_mr *mr, struct ibv_send_wr *bind_wr,
		    unsigned int access);
void trs_clt_req_unmap(struct trs_clt_req *req);

#endif /* TRS_CLT_H */
