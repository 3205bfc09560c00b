// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * con.c - one RDMA CM connection: completion channel + CQ + RC QP on a
 * cm_id, a ring of receive buffers, and the CQ sweep that dispatches every
 * completion through its embedded struct trs_cqe and reposts the receives
 * in one chain. The server re-arms the CQ after every sweep; the client
 * reaps without system calls and arms only when it is about to wait (not
 * at all in busy-poll mode). Every verbs call of the data path is counted
 * (struct trs_con_stats).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "trs_lib.h"

static void trs_con_rx_done(struct trs_cqe *cqe, struct ibv_wc *wc)
{
	struct trs_rx *rx = trs_container_of(cqe, struct trs_rx, cqe);

	rx->con->recv_done(rx->con, rx, wc);
}

/*
 * The channel of the CQ is readable: one event per readiness (a read()
 * each; more queued ones keep the fd readable), acked in bulk, then a
 * sweep that re-arms (server), or a reap only (client: it arms when it is
 * about to wait, trs_con_arm()).
 */
static void trs_con_cq_event(struct trs_evsrc *src)
{
	struct trs_con *con = trs_container_of(src, struct trs_con, cq_src);
	struct ibv_cq *cq;
	void *ctx;

	if (!ibv_get_cq_event(con->ch, &cq, &ctx)) {
		con->cq_unacked++;
		con->st.events++;
		con->armed = false;
	}
	if (con->cq_unacked >= 64) {
		ibv_ack_cq_events(con->cq, con->cq_unacked);
		con->cq_unacked = 0;
	}
	if (con->arm_on_sweep)
		trs_con_sweep(con);
	else
		trs_con_reap(con);
}

/* Receives reposted in one chain (on rxe a receive post is no syscall,
 * but it takes the queue's lock once per call). */
static int trs_con_rx_flush(struct trs_con *con)
{
	struct ibv_recv_wr *bad;
	int err;

	if (!con->rx_n)
		return 0;
	*con->rx_tail = NULL;
	err = ibv_post_recv(con->qp, con->rx_head, &bad);
	con->st.post_recvs++;
	con->st.recv_wrs += con->rx_n;
	con->rx_head = NULL;
	con->rx_tail = &con->rx_head;
	con->rx_n = 0;
	if (err)
		con->failed = "reposting receives failed";
	return -err;
}

/* Queue @rx for reposting; a long sweep posts every 16. */
static void trs_con_rx_queue(struct trs_con *con, struct trs_rx *rx)
{
	*con->rx_tail = &rx->wr;
	con->rx_tail = &rx->wr.next;
	if (++con->rx_n >= 16)
		trs_con_rx_flush(con);
}

/**
 * trs_con_create() - set up CQ, QP and receive ring on @cm_id.
 * Context: after ADDR_RESOLVED (client) or on CONNECT_REQUEST (server).
 */
int trs_con_create(struct trs_con *con, struct rdma_cm_id *cm_id,
		   const struct trs_con_attr *attr)
{
	struct ibv_qp_init_attr qp_attr = { 0 };
	size_t area;
	unsigned int i;
	int flags, err = -ENOMEM;

	con->cm_id = cm_id;
	con->epfd = attr->epfd;
	con->recv_done = attr->recv_done;
	con->fail = attr->fail;
	con->ctrl_cqe.done = attr->send_done;
	con->sq_size = attr->sq_size;
	con->dev = trs_dev_get(cm_id->verbs);
	if (!con->dev)
		return -ENODEV;

	con->ch = ibv_create_comp_channel(cm_id->verbs);
	if (!con->ch) {
		err = -errno;
		goto out_put_dev;
	}
	flags = fcntl(con->ch->fd, F_GETFL);
	fcntl(con->ch->fd, F_SETFL, flags | O_NONBLOCK);
	/* every send and every receive may complete: sq + rq entries */
	con->cq = ibv_create_cq(cm_id->verbs, (int)(attr->sq_size + attr->rq_size),
				con, con->ch, 0);
	if (!con->cq) {
		err = -errno;
		goto out_destroy_ch;
	}
	con->arm_on_sweep = attr->arm_on_sweep;
	if (con->arm_on_sweep) {
		if (ibv_req_notify_cq(con->cq, 0)) {
			err = -EIO;
			goto out_destroy_cq;
		}
		con->armed = true;
		con->st.arms++;
	}

	qp_attr.qp_context = con;
	qp_attr.send_cq = con->cq;
	qp_attr.recv_cq = con->cq;
	qp_attr.qp_type = IBV_QPT_RC;
	qp_attr.cap.max_send_wr = attr->sq_size;
	qp_attr.cap.max_recv_wr = attr->rq_size;
	qp_attr.cap.max_send_sge = 2;	/* write: data + header */
	qp_attr.cap.max_recv_sge = 1;
	if (rdma_create_qp(cm_id, attr->pd ? attr->pd : con->dev->pd, &qp_attr)) {
		err = -errno;
		goto out_destroy_cq;
	}
	con->qp = cm_id->qp;

	con->nrx = attr->rq_size;
	con->ntx = attr->ntx;
	area = (size_t)con->nrx * TRS_MAX_RECV_MSG + TRS_MAX_RECV_MSG +
	       (size_t)con->ntx * TRS_TX_SLOT;
	con->msg_area = aligned_alloc(4096, (area + 4095) & ~(size_t)4095);
	if (!con->msg_area)
		goto out_destroy_qp;
	memset(con->msg_area, 0, area);
	con->ctrl_buf = (char *)con->msg_area + (size_t)con->nrx * TRS_MAX_RECV_MSG;
	con->tx_slots = (char *)con->ctrl_buf + TRS_MAX_RECV_MSG;
	con->msg_mr = ibv_reg_mr(attr->pd ? attr->pd : con->dev->pd, con->msg_area, area,
				 IBV_ACCESS_LOCAL_WRITE);
	if (!con->msg_mr) {
		err = -errno;
		goto out_free_area;
	}
	con->rx = calloc(con->nrx, sizeof(*con->rx));
	if (!con->rx)
		goto out_dereg_msg;
	con->rx_head = NULL;
	con->rx_tail = &con->rx_head;
	con->rx_n = 0;
	for (i = 0; i < con->nrx; i++) {
		struct trs_rx *rx = &con->rx[i];

		rx->cqe.done = trs_con_rx_done;
		rx->con = con;
		rx->buf = (char *)con->msg_area + (size_t)i * TRS_MAX_RECV_MSG;
		rx->sge.addr = (uintptr_t)rx->buf;
		rx->sge.length = TRS_MAX_RECV_MSG;
		rx->sge.lkey = con->msg_mr->lkey;
		rx->wr.wr_id = (uintptr_t)&rx->cqe;
		rx->wr.sg_list = &rx->sge;
		rx->wr.num_sge = 1;
		*con->rx_tail = &rx->wr;
		con->rx_tail = &rx->wr.next;
		con->rx_n++;
	}
	err = trs_con_rx_flush(con);
	if (err)
		goto out_free_rx;
	con->cq_src.fd = con->ch->fd;
	con->cq_src.handler = trs_con_cq_event;
	err = trs_epoll_add(con->epfd, &con->cq_src);
	if (err)
		goto out_free_rx;
	return 0;

out_free_rx:
	free(con->rx);
	con->rx = NULL;
out_dereg_msg:
	ibv_dereg_mr(con->msg_mr);
	con->msg_mr = NULL;
out_free_area:
	free(con->msg_area);
	con->msg_area = NULL;
out_destroy_qp:
	rdma_destroy_qp(cm_id);
	con->qp = NULL;
out_destroy_cq:
	ibv_destroy_cq(con->cq);
	con->cq = NULL;
out_destroy_ch:
	ibv_destroy_comp_channel(con->ch);
	con->ch = NULL;
out_put_dev:
	trs_dev_put(con->dev);
	con->dev = NULL;
	return err;
}

/* Tear down what trs_con_create() built; the cm_id stays (owner's). */
void trs_con_destroy(struct trs_con *con)
{
	con->dead = true;
	trs_con_sig_free(con);
	if (con->cq_src.fd > 0) {
		trs_epoll_del(con->epfd, &con->cq_src);
		con->cq_src.fd = -1;
	}
	if (con->qp) {
		rdma_destroy_qp(con->cm_id);
		con->qp = NULL;
	}
	if (con->msg_mr) {
		ibv_dereg_mr(con->msg_mr);
		con->msg_mr = NULL;
	}
	free(con->msg_area);
	con->msg_area = NULL;
	free(con->rx);
	con->rx = NULL;
	if (con->cq) {
		ibv_ack_cq_events(con->cq, con->cq_unacked);
		con->cq_unacked = 0;
		ibv_destroy_cq(con->cq);
		con->cq = NULL;
	}
	if (con->ch) {
		ibv_destroy_comp_channel(con->ch);
		con->ch = NULL;
	}
	trs_dev_put(con->dev);
	con->dev = NULL;
}

/*
 * Post a chain of @nwrs send WRs with one ibv_post_send() (one doorbell).
 * Return: 0 or -errno (then some of the chain may have been posted: the
 * owner fails the connection).
 */
int trs_con_post_send(struct trs_con *con, struct ibv_send_wr *first,
		      unsigned int nwrs)
{
	struct ibv_send_wr *bad;

	con->st.post_sends++;
	con->st.send_wrs += nwrs;
	return -ibv_post_send(con->qp, first, &bad);
}

static void trs_con_sig_done(struct trs_cqe *cqe, struct ibv_wc *wc)
{
	struct trs_sig *s = trs_container_of(cqe, struct trs_sig, cqe);
	struct trs_con *con = s->con;
	char why[80];

	if (wc->status != IBV_WC_SUCCESS) {
		snprintf(why, sizeof(why), "send failed: %s",
			 ibv_wc_status_str(wc->status));
		con->fail(con, why);
		return;
	}
	con->sq_used -= s->wrs;
	if (con->sq_room)
		con->sq_room(con);
}

/**
 * trs_con_sig_init() - partial signalling of @con's send queue: @budget WRs
 * of it are accounted; @room (may be NULL) runs when WRs were retired.
 * Return: 0 or -ENOMEM.
 */
int trs_con_sig_init(struct trs_con *con, unsigned int budget,
		     void (*room)(struct trs_con *con))
{
	unsigned int i;

	con->sq_budget = budget;
	con->sq_used = 0;
	con->sq_unsig = 0;
	con->sig_next = 0;
	con->sq_room = room;
	con->sig = calloc(budget, sizeof(*con->sig));
	if (!con->sig)
		return -ENOMEM;
	for (i = 0; i < budget; i++) {
		con->sig[i].cqe.done = trs_con_sig_done;
		con->sig[i].con = con;
	}
	return 0;
}

void trs_con_sig_free(struct trs_con *con)
{
	free(con->sig);
	con->sig = NULL;
}

/**
 * trs_con_sig_chain() - account a chain of @n WRs about to be posted on
 * @con (its caller checked trs_con_sig_room()), whose last WR is @last,
 * and signal @last when @force, when TRS_SIG_EVERY accounted WRs would go
 * unsignaled, or when more than half the budget would be in use (so that a
 * signaled WR is outstanding whenever room runs short).
 * Return: whether @last was signaled (its wr_id is then the ring's).
 */
bool trs_con_sig_chain(struct trs_con *con, struct ibv_send_wr *last,
		       unsigned int n, bool force)
{
	bool sig = force || con->sq_unsig + n >= TRS_SIG_EVERY ||
		   con->sq_used + n > con->sq_budget / 2;

	if (sig) {
		struct trs_sig *s = &con->sig[con->sig_next++ % con->sq_budget];

		s->wrs = con->sq_unsig + n;
		last->wr_id = (uintptr_t)&s->cqe;
		last->send_flags |= IBV_SEND_SIGNALED;
		con->sq_unsig = 0;
		con->st.signaled++;
	} else {
		last->send_flags &= ~(unsigned int)IBV_SEND_SIGNALED;
		con->sq_unsig += n;
	}
	con->sq_used += n;
	return sig;
}

int trs_con_post_send_imm(struct trs_con *con, uint32_t imm,
			  struct trs_cqe *cqe)
{
	struct ibv_send_wr wr = {
		.wr_id = (uintptr_t)cqe,
		.opcode = IBV_WR_SEND_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(imm),
	};

	return trs_con_post_send(con, &wr, 1);
}

int trs_con_post_ctrl(struct trs_con *con, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)con->ctrl_buf, .length = len,
		.lkey = con->msg_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = (uintptr_t)&con->ctrl_cqe,
		.sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};

	return trs_con_post_send(con, &wr, 1);
}

/* Reap until the CQ is empty; the number of completions. */
static int trs_con_drain(struct trs_con *con)
{
	struct ibv_wc wc[32];
	int n, i, total = 0;

	do {
		n = ibv_poll_cq(con->cq, 32, wc);
		for (i = 0; i < n && !con->dead; i++) {
			struct trs_cqe *cqe = (struct trs_cqe *)(uintptr_t)wc[i].wr_id;

			cqe->done(cqe, &wc[i]);
		}
		if (n > 0)
			total += n;
	} while (n == 32 && !con->dead);
	return total;
}

/* After a drain: repost the receives, report a failure, count. */
static int trs_con_reaped(struct trs_con *con, int total)
{
	if (!con->dead)
		trs_con_rx_flush(con);
	if (con->failed && !con->dead)
		con->fail(con, con->failed);
	if (total) {
		con->st.sweeps++;
		con->st.cqes += total;
	}
	return total;
}

/*
 * Arm the CQ of @con, unless it is armed (nothing reaped since the last
 * arm), then drain it once more: a completion that arrived before the arm
 * raises no event. Return: the completions of that drain.
 */
static int trs_con_arm_drain(struct trs_con *con)
{
	int n;

	if (con->armed || con->dead)
		return 0;
	trs_con_rx_flush(con);
	if (ibv_req_notify_cq(con->cq, 0)) {
		con->failed = "arming the CQ failed";
		return 0;
	}
	con->armed = true;
	con->st.arms++;
	n = trs_con_drain(con);
	if (n)
		con->armed = false;	/* its event fired (read later) */
	return n;
}

/**
 * trs_con_reap() - reap every completion of @con and repost the receives
 * in one chain; no system call (on rxe). A CQ that was armed and had
 * completions has fired its one event (read later from the channel): it
 * counts as not armed. A done() callback never frees the connection; it
 * may mark it dead, after which the rest is left to the (deferred)
 * teardown.
 * Return: the completions reaped.
 */
int trs_con_reap(struct trs_con *con)
{
	int total;

	if (con->dead)
		return 0;
	total = trs_con_drain(con);
	if (total && con->armed)
		con->armed = false;
	return trs_con_reaped(con, total);
}

/**
 * trs_con_arm() - before waiting for @con's events: arm its CQ (if it is
 * not) and drain once more. Return: the completions that drain reaped (the
 * caller must not sleep when > 0).
 */
int trs_con_arm(struct trs_con *con)
{
	return trs_con_reaped(con, trs_con_arm_drain(con));
}

/**
 * trs_con_sweep() - reap, then leave the CQ armed: drain, arm, drain once
 * more, until a drain after the arm finds nothing, for owners that sleep
 * on the fd after every sweep (the server's users).
 * Return: the completions reaped.
 */
int trs_con_sweep(struct trs_con *con)
{
	int n, total;

	if (con->dead)
		return 0;
	total = trs_con_drain(con);
	if (total && con->armed)
		con->armed = false;
	while (!con->armed && !con->dead && !con->failed) {
		n = trs_con_arm_drain(con);
		total += n;
		if (!n && !con->armed)
			break;		/* arming failed */
	}
	return trs_con_reaped(con, total);
}

void trs_con_stats_sum(struct trs_con_stats *sum, const struct trs_con *con)
{
	sum->post_sends += con->st.post_sends;
	sum->send_wrs += con->st.send_wrs;
	sum->signaled += con->st.signaled;
	sum->post_recvs += con->st.post_recvs;
	sum->recv_wrs += con->st.recv_wrs;
	sum->sweeps += con->st.sweeps;
	sum->cqes += con->st.cqes;
	sum->arms += con->st.arms;
	sum->events += con->st.events;
}

/**
 * trs_con_rx_begin() - the receive prologue of both sides: validate @wc and
 * the buffer of @rx with the shared rules (common/rx.c), copy a payload
 * message into @msg (TRS_MAX_RECV_MSG bytes) and queue the receive for the
 * sweep's one repost chain.
 * Return: 0 and *m filled, or -errno with *why set (the caller fails the
 * path; the receive is then not reposted).
 */
int trs_con_rx_begin(struct trs_con *con, struct trs_rx *rx,
		     const struct ibv_wc *wc, bool server, __u32 queue_depth,
		     struct trs_rx_msg *m, void *msg, const char **why)
{
	struct trs_rx_wc w;
	int err;

	trs_rx_wc_from_ibv(wc, &w);
	err = server ? trs_rx_decode_srv(&w, rx->buf, queue_depth, m, why) :
		       trs_rx_decode_clt(&w, rx->buf, queue_depth, m, why);
	if (err) {
		if (!w.ok)
			*why = ibv_wc_status_str(wc->status);
		return err;
	}
	if (m->kind == TRS_RX_MSG || m->msg_type == TRS_MSG_IO_RSP)
		memcpy(msg, rx->buf, m->len);	/* IO_RSP: the client checks len */
	trs_con_rx_queue(con, rx);	/* reposted at the end of the sweep */
	return 0;
}

/* Next event of @ch, copied and acked; false when there is none. */
bool trs_cm_event_next(struct rdma_event_channel *ch, struct trs_cm_ev *ev)
{
	struct rdma_cm_event *e;

	if (rdma_get_cm_event(ch, &e))
		return false;
	ev->id = e->id;
	ev->type = e->event;
	ev->status = e->status;
	/* the CM reports a request's depths from our side: the peer's
	 * responder resources are our initiator depth (as nvmet-rdma reads) */
	ev->rd = e->param.conn.initiator_depth;
	ev->plen = 0;
	if (e->param.conn.private_data && e->param.conn.private_data_len) {
		ev->plen = e->param.conn.private_data_len;
		if (ev->plen > sizeof(ev->pdata))
			ev->plen = sizeof(ev->pdata);
		memcpy(ev->pdata, e->param.conn.private_data, ev->plen);
	}
	rdma_ack_cm_event(e);
	return true;
}

const char *trs_wc_opcode_str(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND:		return "SEND";
	case IBV_WC_RDMA_WRITE:		return "RDMA_WRITE";
	case IBV_WC_RDMA_READ:		return "RDMA_READ";
	case IBV_WC_BIND_MW:		return "BIND_MW";
	case IBV_WC_LOCAL_INV:		return "LOCAL_INV";
	case IBV_WC_RECV:		return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM:	return "RECV_RDMA_WITH_IMM";
	default:			return "OTHER";
	}
}
