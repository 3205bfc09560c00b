/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trs_lib.h - private structures of libibtrs (userspace IBTRS).
 *
 * Objects: trs_dev (verbs context + PD, cached), trs_con (cm_id + CQ + QP
 * + receive ring), client path/session and server path/session built on
 * them. Completions carry wr_id = &obj->cqe; trs_con_poll() calls
 * cqe->done(). Pollable sources registered in a handle's epoll carry a
 * struct trs_evsrc the same way.
 */
#ifndef TRS_LIB_H
#define TRS_LIB_H

#include <endian.h>
#include <stdarg.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/queue.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "ibtrs.h"
#include "trs_common.h"

#define trs_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

#define TRS_TICK_MS		50	/* timer resolution: HB, reconnect, tmo */
#define TRS_CLT_QD_CAP		1024	/* client QPs are sized for this depth */
#define TRS_RX_EXTRA		32	/* recvs beyond the IO budget: HB, INFO */
#define TRS_ACK_TIMEOUT		14	/* 4.096us * 2^14 = 67 ms per retry */
#define TRS_RETRY_COUNT		7	/* as nvme-rdma: ~0.5 s without an ACK */
#define TRS_MAX_REGIONS		32
#define TRS_MAX_IOV		64

/* log.c */
void trs_log(enum ibtrs_log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void trs_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define trs_err(fmt, ...)	trs_log(IBTRS_LOG_ERR, fmt, ##__VA_ARGS__)
#define trs_wrn(fmt, ...)	trs_log(IBTRS_LOG_WARN, fmt, ##__VA_ARGS__)
#define trs_info(fmt, ...)	trs_log(IBTRS_LOG_INFO, fmt, ##__VA_ARGS__)
#define trs_dbg(fmt, ...)	trs_log(IBTRS_LOG_DEBUG, fmt, ##__VA_ARGS__)
uint64_t trs_now_us(void);
uint32_t trs_random32(void);
void trs_uuid_gen(uint8_t uuid[TRS_UUID_LEN]);
void trs_uuid_str(const uint8_t uuid[TRS_UUID_LEN], char out[40]);

struct trs_cqe {
	void (*done)(struct trs_cqe *cqe, struct ibv_wc *wc);
};

struct trs_evsrc {
	int fd;
	void (*handler)(struct trs_evsrc *src);
};

int trs_epoll_add(int epfd, struct trs_evsrc *src);
void trs_epoll_del(int epfd, struct trs_evsrc *src);
int trs_epoll_dispatch(int epfd, int timeout_ms);
int trs_epoll_dispatch_at(int epfd, int timeout_ms, uint64_t *now);
int trs_timerfd_create(unsigned int period_ms);
void trs_fd_drain(int fd);

/* dev.c */
struct trs_dev {
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_device_attr attr;
	int ref;
	int mw_state;		/* 0 unknown, 1 works, -1 unsupported */
	struct trs_dev *next;
};
struct trs_dev *trs_dev_get(struct ibv_context *verbs);
void trs_dev_hold(struct trs_dev *dev);
void trs_dev_put(struct trs_dev *dev);
/*
 * Device-removal watch of a client session or server context (see dev.c):
 * @sync is set when a device went away (a removal event on one of our
 * cm_ids, or a kernel uevent on @src); trs_devwatch_poll() then has
 * librdmacm drop its cached contexts of removed devices.
 */
struct trs_devwatch {
	struct trs_evsrc src;		/* kernel uevents; fd <= 0: none */
	bool sync;
};
void trs_devwatch_open(struct trs_devwatch *w, int epfd);
void trs_devwatch_close(struct trs_devwatch *w);
void trs_devwatch_poll(struct trs_devwatch *w);

/* con.c */
struct trs_rx {
	struct trs_cqe cqe;
	struct trs_con *con;
	void *buf;
	struct ibv_sge sge;
	struct ibv_recv_wr wr;		/* prepared once; chained on repost */
};

/**
 * struct trs_con_stats - verbs calls of one connection (cumulative).
 * @post_sends/@send_wrs: ibv_post_send() calls and the WRs they carried
 *	(a chain is one call: one doorbell, on rxe one write() system call).
 * @signaled: chains accounted by trs_con_sig_chain() that it signaled.
 * @post_recvs/@recv_wrs: the same for ibv_post_recv().
 * @sweeps: CQ sweeps that found completions; @cqes: completions reaped.
 * @arms: ibv_req_notify_cq() calls (on rxe a system call each);
 *	@events: completion events read from the channel (a read() each).
 */
struct trs_con_stats {
	uint64_t post_sends, send_wrs, signaled;
	uint64_t post_recvs, recv_wrs;
	uint64_t sweeps, cqes;
	uint64_t arms, events;
};

/*
 * Partial signalling of a send queue (trs_con_sig_*()). A user accounts
 * the WRs it posts unsignaled in chains; one chain in a while ends with a
 * signaled WR, whose completion retires it and every WR posted before it
 * since the previous signaled one (an RC send queue completes in order).
 * An unsignaled WR still completes when it fails (flush), so its wr_id
 * must name an object that outlives the IO it carried.
 */
struct trs_sig {
	struct trs_cqe cqe;
	struct trs_con *con;
	unsigned int wrs;	/* WRs this completion retires */
};
/* Accounted WRs between two signaled ones, at most. */
#define TRS_SIG_EVERY		16

/**
 * struct trs_con - one RDMA CM connection: cm_id, CQ (+ channel), RC QP and
 * a receive ring of TRS_MAX_RECV_MSG-byte buffers.
 * @sq_budget: send-queue WRs the partial signalling accounts (the rest are
 *	signaled control sends); @sq_used of them are posted and not known
 *	retired, @sq_unsig posted since the last signaled one.
 * @sig/@sig_next: ring of @sq_budget signaled-WR contexts (they complete in
 *	posting order; at most @sq_budget are outstanding).
 * @sq_room: called when a signaled completion retired WRs.
 */
struct trs_con {
	struct rdma_cm_id *cm_id;
	struct trs_dev *dev;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct trs_evsrc cq_src;
	int epfd;
	unsigned int cq_unacked;
	bool dead;		/* stop dispatching completions */
	bool removed;		/* its device is being removed */
	bool arm_on_sweep;	/* server: the CQ is re-armed after each sweep;
				 * client: armed only before a wait */
	bool armed;		/* armed, and no completion reaped since */
	const char *failed;	/* set by a sweep that could not repost or
				 * re-arm: the owner fails the path */
	/* receives to repost, chained, posted at the end of a sweep */
	struct ibv_recv_wr *rx_head, **rx_tail;
	unsigned int rx_n;
	struct trs_con_stats st;
	uint16_t cid;
	void *owner;		/* client or server path */

	void *msg_area;		/* rx ring + ctrl send + per-id tx slots */
	struct ibv_mr *msg_mr;
	struct trs_rx *rx;
	unsigned int nrx;
	void *ctrl_buf;		/* one ctrl SEND (INFO_*) */
	void *tx_slots;		/* ntx slots of TRS_TX_SLOT bytes */
	unsigned int ntx;
	unsigned int sq_size;
	unsigned int sq_budget, sq_used, sq_unsig;
	struct trs_sig *sig;
	unsigned int sig_next;
	void (*sq_room)(struct trs_con *con);
	void (*recv_done)(struct trs_con *con, struct trs_rx *rx,
			  struct ibv_wc *wc);
	void (*fail)(struct trs_con *con, const char *why);
	struct trs_cqe ctrl_cqe;	/* ctrl/HB/response sends */
};
#define TRS_TX_SLOT	32

struct trs_con_attr {
	struct ibv_pd *pd;	/* QP and buffers; NULL: the device's PD */
	unsigned int sq_size, rq_size, ntx;
	int epfd;
	bool arm_on_sweep;
	void (*recv_done)(struct trs_con *con, struct trs_rx *rx,
			  struct ibv_wc *wc);
	void (*send_done)(struct trs_cqe *cqe, struct ibv_wc *wc);
	void (*fail)(struct trs_con *con, const char *why);	/* fail the path */
};
int trs_con_create(struct trs_con *con, struct rdma_cm_id *cm_id,
		   const struct trs_con_attr *attr);
void trs_con_destroy(struct trs_con *con);
int trs_con_post_send(struct trs_con *con, struct ibv_send_wr *first,
		      unsigned int nwrs);
int trs_con_post_send_imm(struct trs_con *con, uint32_t imm,
			  struct trs_cqe *cqe);
int trs_con_post_ctrl(struct trs_con *con, uint32_t len);
int trs_con_sig_init(struct trs_con *con, unsigned int budget,
		     void (*room)(struct trs_con *con));
void trs_con_sig_free(struct trs_con *con);
bool trs_con_sig_chain(struct trs_con *con, struct ibv_send_wr *last,
		       unsigned int n, bool force);
/* Accounted WRs that can be posted now. */
static inline unsigned int trs_con_sig_room(const struct trs_con *con)
{
	return con->sq_budget - con->sq_used;
}
int trs_con_reap(struct trs_con *con);
int trs_con_arm(struct trs_con *con);
int trs_con_sweep(struct trs_con *con);
void trs_con_stats_sum(struct trs_con_stats *sum, const struct trs_con *con);
/*
 * Receive completions of a SEND_WITH_INV. Linux rxe (6.1) reports the
 * kernel's IB_WC_WITH_INVALIDATE bit (1 << 2) to userspace, where that bit
 * is IBV_WC_IP_CSUM_OK; the checksum flag never applies to an RC receive, so
 * either bit means "invalidated" (without immediate data), and
 * invalidated_rkey is then checked.
 */
#define TRS_WC_WITH_INV	(IBV_WC_WITH_INV | IBV_WC_IP_CSUM_OK)

/* The verbs completion as the shared receive checks (common/rx.c) see it. */
static inline void trs_rx_wc_from_ibv(const struct ibv_wc *wc,
				      struct trs_rx_wc *w)
{
	*w = (struct trs_rx_wc){
		.ok = wc->status == IBV_WC_SUCCESS,
		.op = wc->opcode == IBV_WC_RECV ? TRS_RX_OP_RECV :
		      wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM ?
		      TRS_RX_OP_RECV_RDMA_IMM : TRS_RX_OP_OTHER,
		.with_imm = !!(wc->wc_flags & IBV_WC_WITH_IMM),
		.byte_len = wc->byte_len,
	};
	/* imm_data and invalidated_rkey share a union */
	if (w->with_imm) {
		w->imm = be32toh(wc->imm_data);
		w->with_inv = !!(wc->wc_flags & IBV_WC_WITH_INV);
	} else if (wc->wc_flags & TRS_WC_WITH_INV) {
		w->with_inv = true;
		w->inv_rkey = wc->invalidated_rkey;
	}
}

/*
 * An RDMA CM event copied out of librdmacm and already acked (so that the
 * handler may destroy its cm_id): the private data is kept, cut to the
 * protocol's limit plus a little.
 */
struct trs_cm_ev {
	struct rdma_cm_id *id;
	enum rdma_cm_event_type type;
	int status;
	uint8_t rd;		/* CONNECT_REQUEST: RDMA READs the peer lets us post */
	uint8_t plen;		/* 0: no private data */
	uint8_t pdata[TRS_CONN_PRIV_MAX + 8];
};
bool trs_cm_event_next(struct rdma_event_channel *ch, struct trs_cm_ev *ev);
int trs_con_rx_begin(struct trs_con *con, struct trs_rx *rx,
		     const struct ibv_wc *wc, bool server, __u32 queue_depth,
		     struct trs_rx_msg *m, void *msg, const char **why);
const char *trs_wc_opcode_str(enum ibv_wc_opcode op);

#endif /* TRS_LIB_H */
