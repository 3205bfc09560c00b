// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trs-test-hostile - a misbehaving IBTRS client on raw librdmacm/verbs.
 * Each case connects to the server and breaks one rule; the server must
 * reject the connection or close it, and keep running. Joined connections
 * answer the server's heartbeats, so only validation can close them: a
 * connection still open after -w MS (default 3000, twice the server's
 * default heartbeat timeout) fails the case. The control case "idle" joins
 * and breaks nothing: the server must keep it for the whole wait.
 * Usage: trs-test-hostile -s SRC@DST [-p PORT] [-w MS] [-d DEV] [-r ROUNDS]
 *        [-c CONS] [-n N] [-k K] [CASE...]
 * Cases: badver badmagic badcid chunk-id write-len read-len usr-len
 *        bad-type outside-pool idle (the default list); prints PASS:/FAIL:
 *        per case with the time from the offending message to the server's
 *        reaction. Opt-in cases (named only), for the kernel server's
 *        review findings:
 *   close-as-read  OPEN device DEV (-d, default nullb0) read-only, then send
 *                  its CLOSE as an IBTRS read: exactly one answer must come
 *                  (a second answer, or none, fails), and a proper CLOSE on
 *                  the same chunk afterwards gets exactly one answer too.
 *   connect-race   ROUNDS (-r, default 20) times: a path of CONS (-c,
 *                  default 8) connections joins with connection 0, then
 *                  connections 1..CONS-1 connect while connection 0 breaks
 *                  a rule; then every connection of every round must end
 *                  (rejected, or disconnected by the server: the failed
 *                  path's teardown, or the join timeout of a new path the
 *                  late ones started) within -w MS.
 *   info-race      ROUNDS times: a 2-connection path sends INFO_REQ on
 *                  connection 0 while connection 1 breaks a rule: both must
 *                  be closed by the server within 10 s.
 *   hb-only        a path that sends heartbeats but never joins: the server
 *                  must drop it within -w MS.
 *   sess-flood     N (-n, default 8) connections, each a new session, none
 *                  joining: K (-k) must be accepted and the rest rejected
 *                  with TRS_REJ_LIMIT (without -k: any split, reported).
 *   chunk-replay   an IO on chunk 1 (an OPEN of DEV), answered; then the
 *                  same key writes chunk 1 again: with static chunks it
 *                  lands (the exposure is shown; PASS says so), with
 *                  chunk_mode rekey it is refused and the new key lands.
 *   cross-session  two joined sessions A and B: an RDMA WRITE into A's pool
 *                  with A's key must work through A (control) and fail
 *                  through B; after A's path reconnects, A's old key must
 *                  fail through the new connection.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "trs_common.h"
#include "trs/ibnbd_proto.h"

#define HC_CHUNKS	64	/* chunk ids the opt-in cases use */

struct hc {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char buf[16384];	/* send 0..4K, receives 4K.., read target 8K.. */
	struct trs_conn_params params;
	struct trs_info info;
	unsigned int hb_acked;		/* heartbeats answered */
	int wc_err;			/* first failed completion status */
	struct trs_msg_conn_req req;	/* what hc_start() sends */
	double t_connect;		/* when hc_start() sent it */
	unsigned int answers[HC_CHUNKS];	/* IO answers per chunk */
	int status[HC_CHUNKS];		/* the last answer's status */
	/* chunk_mode rekey (TRS_INFO_F_REKEY): each chunk's current key */
	uint32_t keys[TRS_MAX_QUEUE_DEPTH];
	unsigned int nkeys;
};

/* The key that writes chunk @id now. */
static uint32_t hc_key(const struct hc *h, uint32_t id)
{
	return (h->info.flags & TRS_INFO_F_REKEY) && id < h->nkeys ?
	       h->keys[id] : h->info.pool_rkey;
}

/* An answer for chunk @id came: a rekeying server bound it anew first. */
static void hc_answered(struct hc *h, uint32_t id)
{
	if (id < h->nkeys)
		h->keys[id] = ibv_inc_rkey(h->keys[id]);
	if (id < HC_CHUNKS)
		h->answers[id]++;
}

#define HC_NRECV	8
#define HC_READ_OFF	8192	/* where read answers land in buf */
static struct sockaddr_in src, dst;
static int wait_ms = 3000;
static const char *dev_path = "nullb0";
static int rounds = 20, race_cons = 8, flood_n = 8, flood_ok = -1;

static double hc_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void hc_post_recv(struct hc *h, unsigned int i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)h->buf + 4096 + i * 128,
			       .length = 128, .lkey = h->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	ibv_post_recv(h->id->qp, &rwr, &bad);
}

/*
 * Reap completions: answer every heartbeat with HB_ACK (as a real client
 * does) and repost the receive; remember the first failed completion.
 */
static void hc_service(struct hc *h)
{
	struct ibv_wc wc[8];
	int n, i;

	n = ibv_poll_cq(h->cq, 8, wc);
	for (i = 0; i < n; i++) {
		uint32_t imm = ntohl(wc[i].imm_data);

		if (wc[i].status != IBV_WC_SUCCESS) {
			if (!h->wc_err)
				h->wc_err = wc[i].status;
			continue;
		}
		if (wc[i].opcode != IBV_WC_RECV)
			continue;
		hc_post_recv(h, (unsigned int)wc[i].wr_id % HC_NRECV);
		if (!(wc[i].wc_flags & IBV_WC_WITH_IMM)) {
			/* an IO_RSP message (a read's answer) */
			struct trs_io_rsp_info ri;

			if (!trs_io_rsp_decode(h->buf + 4096 +
					       (wc[i].wr_id % HC_NRECV) * 128,
					       wc[i].byte_len,
					       h->info.queue_depth ?: 1, &ri,
					       NULL)) {
				hc_answered(h, ri.chunk_id);
				if (ri.chunk_id < HC_CHUNKS)
					h->status[ri.chunk_id] = ri.status;
			}
			continue;
		}
		if (trs_imm_type(imm) == TRS_IMM_IO_RSP) {
			hc_answered(h, trs_imm_id(imm));
			if (trs_imm_id(imm) < HC_CHUNKS)
				h->status[trs_imm_id(imm)] = trs_imm_err(imm);
			continue;
		}
		if (trs_imm_type(imm) == TRS_IMM_HB) {
			struct ibv_send_wr wr = {
				.opcode = IBV_WR_SEND_WITH_IMM,
				.send_flags = IBV_SEND_SIGNALED,
				.imm_data = htonl(trs_to_imm(TRS_IMM_HB_ACK,
							     trs_imm_id(imm), 0)),
			}, *bad;

			if (!ibv_post_send(h->id->qp, &wr, &bad))
				h->hb_acked++;
		}
	}
}

static int wait_ev(struct hc *h, enum rdma_cm_event_type want, int ms,
		   enum rdma_cm_event_type *got, struct trs_msg_conn_rsp *rsp)
{
	struct pollfd pfd = { .fd = h->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, ms) <= 0)
		return -ETIMEDOUT;
	if (rdma_get_cm_event(h->ch, &ev))
		return -errno;
	*got = ev->event;
	if (rsp && ev->param.conn.private_data &&
	    ev->param.conn.private_data_len >= sizeof(*rsp))
		memcpy(rsp, ev->param.conn.private_data, sizeof(*rsp));
	rdma_ack_cm_event(ev);
	return *got == want ? 0 : -EPROTO;
}

static void hc_close(struct hc *h)
{
	if (h->id && h->id->qp)
		rdma_destroy_qp(h->id);
	if (h->mr)
		ibv_dereg_mr(h->mr);
	if (h->cq)
		ibv_destroy_cq(h->cq);
	if (h->pd)
		ibv_dealloc_pd(h->pd);
	if (h->id)
		rdma_destroy_id(h->id);
	if (h->ch)
		rdma_destroy_event_channel(h->ch);
	memset(h, 0, sizeof(*h));
}

static int poll_cq(struct hc *h, struct ibv_wc *wc, int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = ibv_poll_cq(h->cq, 1, wc);

		if (n)
			return n < 0 ? -EIO : 0;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return -ETIMEDOUT;
	}
}

/*
 * Everything of a connection but the connect itself: cm_id, resolved
 * address and route, PD, CQ, MR (the server may write answers into it),
 * QP with posted receives. @req is kept for hc_start().
 */
static int hc_prepare(struct hc *h, const struct trs_msg_conn_req *req,
		      enum rdma_cm_event_type *got)
{
	struct ibv_qp_init_attr qa = { 0 };
	int i;

	h->req = *req;
	h->ch = rdma_create_event_channel();
	if (!h->ch || rdma_create_id(h->ch, &h->id, NULL, RDMA_PS_TCP))
		return -errno;
	if (rdma_resolve_addr(h->id, (struct sockaddr *)&src, (struct sockaddr *)&dst, 5000) ||
	    wait_ev(h, RDMA_CM_EVENT_ADDR_RESOLVED, 10000, got, NULL))
		return -EHOSTUNREACH;
	if (rdma_resolve_route(h->id, 5000) ||
	    wait_ev(h, RDMA_CM_EVENT_ROUTE_RESOLVED, 10000, got, NULL))
		return -EHOSTUNREACH;
	h->pd = ibv_alloc_pd(h->id->verbs);
	h->cq = ibv_create_cq(h->id->verbs, 64, NULL, NULL, 0);
	h->mr = ibv_reg_mr(h->pd, h->buf, sizeof(h->buf),
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!h->pd || !h->cq || !h->mr)
		return -ENOMEM;
	qa.send_cq = qa.recv_cq = h->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 16;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(h->id, h->pd, &qa))
		return -errno;
	for (i = 0; i < HC_NRECV; i++)
		hc_post_recv(h, (unsigned int)i);
	return 0;
}

/* Send the connect request; the answer comes as a CM event. */
static int hc_start(struct hc *h)
{
	struct rdma_conn_param cp = { .private_data = &h->req,
				      .private_data_len = sizeof(h->req),
				      .retry_count = 3, .rnr_retry_count = 7 };

	h->t_connect = hc_now_ms();
	return rdma_connect(h->id, &cp) ? -errno : 0;
}

/* The server's answer to hc_start(): 0, -(1000 + reject code), -errno. */
static int hc_connected(struct hc *h, enum rdma_cm_event_type *got)
{
	struct trs_msg_conn_rsp rsp = { 0 };
	int err;

	err = wait_ev(h, RDMA_CM_EVENT_ESTABLISHED, 10000, got, &rsp);
	if (*got == RDMA_CM_EVENT_REJECTED) {
		const char *why;

		if (trs_conn_rsp_decode(&rsp, sizeof(rsp), &h->params, &why) == -ECONNREFUSED)
			return -(1000 + h->params.rej);
		return -ECONNREFUSED;
	}
	if (err)
		return err;
	return trs_conn_rsp_decode(&rsp, sizeof(rsp), &h->params, NULL);
}

/* Connect with @req; returns the event seen after rdma_connect. */
static int hc_connect(struct hc *h, struct trs_msg_conn_req *req,
		      enum rdma_cm_event_type *got)
{
	int err = hc_prepare(h, req, got);

	if (!err)
		err = hc_start(h);
	return err ? err : hc_connected(h, got);
}

static void good_req(struct trs_msg_conn_req *m)
{
	struct trs_conn_req_info in = { .ver_major = TRS_PROTO_VER_MAJOR,
					.ver_minor = TRS_PROTO_VER_MINOR,
					.cid = 0, .cid_num = 1, .recon_cnt = 1,
					.flags = TRS_CONN_F_FIRST };
	int i;

	for (i = 0; i < TRS_UUID_LEN; i++) {
		in.sess_uuid[i] = (uint8_t)random();
		in.path_uuid[i] = (uint8_t)random();
	}
	trs_conn_req_encode(m, &in);
}

/* Join the session: INFO_REQ / INFO_RSP. */
static int hc_join(struct hc *h)
{
	struct ibv_sge sge = { .addr = (uintptr_t)h->buf, .length = sizeof(struct trs_msg_info_req),
			       .lkey = h->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	unsigned int i;

	trs_info_req_encode((void *)h->buf, "hostile");
	if (ibv_post_send(h->id->qp, &wr, &bad))
		return -EIO;
	/* the send's completion, KEYS messages (chunk_mode rekey), INFO_RSP */
	for (i = 0; i < 2 + TRS_MAX_QUEUE_DEPTH / TRS_KEYS_PER_MSG; i++) {
		const char *msg;
		__u32 first, n;

		if (poll_cq(h, &wc, 5000) || wc.status)
			return -EIO;
		if (wc.opcode != IBV_WC_RECV)
			continue;
		msg = h->buf + 4096 + (wc.wr_id % HC_NRECV) * 128;
		if (trs_get_unaligned_le16(msg) == TRS_MSG_KEYS) {
			if (trs_keys_decode(msg, wc.byte_len, h->params.queue_depth,
					    &first, &n, &h->keys[h->nkeys], NULL) ||
			    first != h->nkeys)
				return -EPROTO;
			h->nkeys += n;
			hc_post_recv(h, (unsigned int)wc.wr_id % HC_NRECV);
			continue;
		}
		hc_post_recv(h, (unsigned int)wc.wr_id % HC_NRECV);
		return trs_info_rsp_decode(msg, wc.byte_len, &h->params, &h->info, NULL);
	}
	return -EIO;
}

/*
 * Keep the connection alive (answer heartbeats) for up to wait_ms, until
 * the server disconnects us. Returns the milliseconds from @t0 to the
 * DISCONNECTED event, or -1 if it did not come.
 */
static double hc_wait_closed(struct hc *h, double t0)
{
	struct pollfd pfd = { .fd = h->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	while (hc_now_ms() - t0 < wait_ms) {
		hc_service(h);
		if (poll(&pfd, 1, 1) <= 0 || rdma_get_cm_event(h->ch, &ev))
			continue;
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED) {
			rdma_ack_cm_event(ev);
			return hc_now_ms() - t0;
		}
		rdma_ack_cm_event(ev);
	}
	return -1;
}

/* Write @len bytes of buf into chunk @id at @off with IMM(id); returns
 * hc_wait_closed() from the post. */
static double hc_bad_io(struct hc *h, uint32_t imm_id, uint64_t off, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)h->buf, .length = len, .lkey = h->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	double t0 = hc_now_ms();

	wr.imm_data = htonl(trs_to_imm(TRS_IMM_IO_REQ, imm_id, 0));
	wr.wr.rdma.remote_addr = h->info.pool_addr + off;
	wr.wr.rdma.rkey = hc_key(h, imm_id);
	if (ibv_post_send(h->id->qp, &wr, &bad))
		return -1;
	return hc_wait_closed(h, t0);
}

/* ---- opt-in cases ---- */

static void conn_req(struct trs_msg_conn_req *m, const uint8_t *sess,
		     const uint8_t *path, uint16_t cid, uint16_t cid_num)
{
	struct trs_conn_req_info in = { .ver_major = TRS_PROTO_VER_MAJOR,
					.ver_minor = TRS_PROTO_VER_MINOR,
					.cid = cid, .cid_num = cid_num,
					.recon_cnt = 1,
					.flags = TRS_CONN_F_FIRST };

	memcpy(in.sess_uuid, sess, TRS_UUID_LEN);
	memcpy(in.path_uuid, path, TRS_UUID_LEN);
	trs_conn_req_encode(m, &in);
}

static void rand_uuid(uint8_t *u)
{
	int i;

	for (i = 0; i < TRS_UUID_LEN; i++)
		u[i] = (uint8_t)random();
}

/*
 * A request on chunk @id: the IBTRS header + @usr (@usrlen bytes) into the
 * chunk's header area. @rlen > 0 makes it a read whose answer lands at
 * buf + HC_READ_OFF (no NEED_INV: an MR's rkey cannot be invalidated).
 */
static int hc_req(struct hc *h, uint32_t id, const void *usr, uint16_t usrlen,
		  uint32_t rlen)
{
	struct trs_io_req_info io = { .type = TRS_MSG_IO_WRITE,
				      .usr_len = usrlen };
	struct ibv_sge sge = { .addr = (uintptr_t)h->buf, .lkey = h->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (rlen) {
		io.type = TRS_MSG_IO_READ;
		io.sg_cnt = 1;
		io.raddr = (uintptr_t)h->buf + HC_READ_OFF;
		io.rkey = h->mr->rkey;
		io.rlen = rlen;
	}
	trs_io_req_encode((void *)h->buf, &io);
	memcpy(h->buf + sizeof(struct trs_msg_io_req), usr, usrlen);
	sge.length = sizeof(struct trs_msg_io_req) + usrlen;
	wr.imm_data = htonl(trs_to_imm(TRS_IMM_IO_REQ, id, 0));
	wr.wr.rdma.remote_addr = h->info.pool_addr +
				 (uint64_t)id * h->info.slot_size +
				 h->info.chunk_size;
	wr.wr.rdma.rkey = hc_key(h, id);
	return ibv_post_send(h->id->qp, &wr, &bad) ? -EIO : 0;
}

/* Serve the connection for @ms; false if the server disconnected it. */
static bool hc_serve(struct hc *h, int ms)
{
	struct pollfd pfd = { .fd = h->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	double t0 = hc_now_ms();
	bool up = true;

	while (hc_now_ms() - t0 < ms) {
		hc_service(h);
		if (poll(&pfd, 1, 1) <= 0 || rdma_get_cm_event(h->ch, &ev))
			continue;
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED)
			up = false;
		rdma_ack_cm_event(ev);
	}
	hc_service(h);
	return up;
}

static int case_close_as_read(struct hc *h)
{
	struct ibnbd_msg_open om;
	struct ibnbd_msg_close cm;
	const struct ibnbd_msg_open_rsp *rsp =
		(const void *)(h->buf + HC_READ_OFF);
	uint32_t handle;
	int first;

	if (ibnbd_init_open(&om, IBNBD_ACCESS_RO, dev_path) ||
	    hc_req(h, 1, &om, sizeof(om), sizeof(*rsp))) {
		printf("FAIL: hostile close-as-read: cannot send OPEN\n");
		return 1;
	}
	if (!hc_serve(h, 2000) || h->answers[1] != 1 || h->status[1] ||
	    ibnbd_validate_open_rsp(rsp, sizeof(*rsp)) || rsp->error) {
		printf("FAIL: hostile close-as-read: OPEN of %s: %u answers, status %d, error %d\n",
		       dev_path, h->answers[1], h->status[1],
		       (int)le32_to_cpu(rsp->error));
		return 1;
	}
	handle = le32_to_cpu(rsp->device_id);
	ibnbd_init_close(&cm, handle);
	if (hc_req(h, 2, &cm, sizeof(cm), 512) || !hc_serve(h, 1500)) {
		printf("FAIL: hostile close-as-read: connection lost after the CLOSE as a read\n");
		return 1;
	}
	if (h->answers[2] != 1) {
		printf("FAIL: hostile close-as-read: the CLOSE sent as a read got %u answers (want 1)\n",
		       h->answers[2]);
		return 1;
	}
	first = h->status[2];
	printf("hostile close-as-read: the CLOSE as a read: one answer, status %d\n",
	       first);
	/* the chunk is free again: a proper CLOSE (a write, no data) */
	if (hc_req(h, 2, &cm, sizeof(cm), 0) || !hc_serve(h, 1500) ||
	    h->answers[2] != 2) {
		printf("FAIL: hostile close-as-read: the proper CLOSE after it got %u answers in all (want 2)\n",
		       h->answers[2]);
		return 1;
	}
	printf("PASS: hostile close-as-read: one answer each (status %d, then %d for the proper CLOSE of handle %#x)\n",
	       first, h->status[2], handle);
	return 0;
}

/* Wait (<= @ms) until every connection of @hs ended; returns how many did not. */
static int hc_wait_all_closed(struct hc *hs, int n, const bool *live, int ms)
{
	bool *done = calloc((size_t)n, sizeof(*done));
	double t0 = hc_now_ms();
	int i, left;

	if (!done)
		return n;
	for (;;) {
		left = 0;
		for (i = 0; i < n; i++) {
			struct rdma_cm_event *ev;

			if (done[i] || !live[i])
				continue;
			hc_service(&hs[i]);
			if (!rdma_get_cm_event(hs[i].ch, &ev)) {
				if (ev->event == RDMA_CM_EVENT_DISCONNECTED ||
				    ev->event == RDMA_CM_EVENT_REJECTED ||
				    ev->event == RDMA_CM_EVENT_UNREACHABLE ||
				    ev->event == RDMA_CM_EVENT_CONNECT_ERROR)
					done[i] = true;
				rdma_ack_cm_event(ev);
			}
			left += !done[i];
		}
		if (!left || hc_now_ms() - t0 > ms) {
			free(done);
			return left;
		}
		usleep(1000);
	}
}

static void hc_nonblock(struct hc *h)
{
	int fl = fcntl(h->ch->fd, F_GETFL);

	fcntl(h->ch->fd, F_SETFL, fl | O_NONBLOCK);
}

/*
 * One round of connect-race on @hs (@n connections): connection 0 joins;
 * 1..n-1 connect while 0 sends a request for a chunk id beyond the queue
 * depth (the path fails). The connections stay for the final wait: one
 * that came after the failure may start a new path of the same UUID,
 * which never joins and is dropped by the join timeout.
 */
static int race_round(struct hc *hs, bool *live, int n, int round)
{
	uint8_t su[TRS_UUID_LEN], pu[TRS_UUID_LEN];
	struct trs_msg_conn_req req;
	enum rdma_cm_event_type got;
	int i;

	rand_uuid(su);
	rand_uuid(pu);
	conn_req(&req, su, pu, 0, (uint16_t)n);
	if (hc_connect(&hs[0], &req, &got) || hc_join(&hs[0])) {
		printf("FAIL: hostile connect-race: round %d: connection 0 did not join\n",
		       round);
		return 1;
	}
	for (i = 1; i < n; i++) {
		conn_req(&req, su, pu, (uint16_t)i, (uint16_t)n);
		if (hc_prepare(&hs[i], &req, &got)) {
			printf("FAIL: hostile connect-race: round %d: cannot prepare connection %d\n",
			       round, i);
			return 1;
		}
	}
	for (i = 1; i < n; i++)
		live[i] = !hc_start(&hs[i]);
	live[0] = true;
	/* now break a rule on connection 0: a chunk id past the queue depth */
	{
		struct ibv_sge sge = { .addr = (uintptr_t)hs[0].buf, .length = 64,
				       .lkey = hs[0].mr->lkey };
		struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM }, *bad;

		wr.imm_data = htonl(trs_to_imm(TRS_IMM_IO_REQ,
					       hs[0].info.queue_depth, 0));
		wr.wr.rdma.remote_addr = hs[0].info.pool_addr;
		wr.wr.rdma.rkey = hs[0].info.pool_rkey;
		ibv_post_send(hs[0].id->qp, &wr, &bad);
	}
	for (i = 0; i < n; i++)
		hc_nonblock(&hs[i]);
	return 0;
}

static int case_connect_race(void)
{
	int r, i, n = race_cons, left, fails = 0;
	double t0 = hc_now_ms();
	struct hc *hs;
	bool *live;

	if (n < 2 || n > 64 || rounds < 1 || rounds > 64) {
		printf("FAIL: hostile connect-race: -c must be 2..64, -r 1..64\n");
		return 1;
	}
	hs = calloc((size_t)(rounds * n), sizeof(*hs));
	live = calloc((size_t)(rounds * n), sizeof(*live));
	if (!hs || !live)
		return 1;
	for (r = 0; r < rounds && !fails; r++)
		fails += race_round(hs + r * n, live + r * n, n, r);
	/* the join timeout (1.5 s + 10 s by default) bounds the slowest */
	left = fails ? 0 : hc_wait_all_closed(hs, rounds * n, live, wait_ms);
	for (i = 0; i < rounds * n; i++)
		hc_close(&hs[i]);
	free(hs);
	free(live);
	if (fails)
		return 1;
	if (left) {
		printf("FAIL: hostile connect-race: %d of %d connections still open %d ms after the violations\n",
		       left, rounds * n, wait_ms);
		return 1;
	}
	printf("PASS: hostile connect-race: %d rounds of %d connections, every one ended (%.0f ms)\n",
	       rounds, n, hc_now_ms() - t0);
	return 0;
}

static int case_info_race(void)
{
	double t0 = hc_now_ms();
	int r;

	for (r = 0; r < rounds; r++) {
		struct hc hs[2];
		bool live[2] = { true, true };
		uint8_t su[TRS_UUID_LEN], pu[TRS_UUID_LEN];
		struct trs_msg_conn_req req;
		enum rdma_cm_event_type got;
		struct ibv_sge sge;
		struct ibv_send_wr wr = { 0 }, bwr = { 0 }, *bad;
		int i, left;

		memset(hs, 0, sizeof(hs));
		rand_uuid(su);
		rand_uuid(pu);
		for (i = 0; i < 2; i++) {
			conn_req(&req, su, pu, (uint16_t)i, 2);
			if (hc_connect(&hs[i], &req, &got)) {
				printf("FAIL: hostile info-race: round %d: connection %d not accepted\n",
				       r, i);
				hc_close(&hs[0]);
				hc_close(&hs[1]);
				return 1;
			}
		}
		trs_info_req_encode((void *)hs[0].buf, "hostile-race");
		sge = (struct ibv_sge){ .addr = (uintptr_t)hs[0].buf,
					.length = sizeof(struct trs_msg_info_req),
					.lkey = hs[0].mr->lkey };
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		/* an IO request as a SEND: a bad receive on connection 1 */
		bwr.opcode = IBV_WR_SEND_WITH_IMM;
		bwr.imm_data = htonl(trs_to_imm(TRS_IMM_IO_REQ, 0, 0));
		ibv_post_send(hs[1].id->qp, &bwr, &bad);
		ibv_post_send(hs[0].id->qp, &wr, &bad);
		hc_nonblock(&hs[0]);
		hc_nonblock(&hs[1]);
		left = hc_wait_all_closed(hs, 2, live, 10000);
		hc_close(&hs[0]);
		hc_close(&hs[1]);
		if (left) {
			printf("FAIL: hostile info-race: round %d: %d connection(s) still open 10 s after the violation\n",
			       r, left);
			return 1;
		}
	}
	printf("PASS: hostile info-race: %d rounds, both connections closed by the server each time (%.0f ms)\n",
	       rounds, hc_now_ms() - t0);
	return 0;
}

static int case_hb_only(struct hc *h)
{
	struct pollfd pfd = { .fd = h->ch->fd, .events = POLLIN };
	double t0 = hc_now_ms(), last = 0;
	unsigned int seq = 0;

	while (hc_now_ms() - t0 < wait_ms) {
		struct rdma_cm_event *ev;

		if (hc_now_ms() - last >= 200) {
			struct ibv_send_wr wr = { .opcode = IBV_WR_SEND_WITH_IMM }, *bad;

			wr.imm_data = htonl(trs_to_imm(TRS_IMM_HB, seq++ & 0xffff, 0));
			ibv_post_send(h->id->qp, &wr, &bad);
			last = hc_now_ms();
		}
		hc_service(h);
		if (poll(&pfd, 1, 5) <= 0 || rdma_get_cm_event(h->ch, &ev))
			continue;
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED) {
			rdma_ack_cm_event(ev);
			printf("PASS: hostile hb-only: the unjoined path was dropped after %.0f ms (%u heartbeats sent)\n",
			       hc_now_ms() - t0, seq);
			return 0;
		}
		rdma_ack_cm_event(ev);
	}
	printf("FAIL: hostile hb-only: a path that never joined was kept %d ms (%u heartbeats sent)\n",
	       wait_ms, seq);
	return 1;
}

static int case_sess_flood(void)
{
	struct hc *hs = calloc((size_t)flood_n, sizeof(*hs));
	int i, ok = 0, limit = 0, other = 0;

	if (!hs)
		return 1;
	for (i = 0; i < flood_n; i++) {
		struct trs_msg_conn_req req;
		enum rdma_cm_event_type got;
		int err;

		good_req(&req);
		err = hc_connect(&hs[i], &req, &got);
		if (!err)
			ok++;
		else if (err == -(1000 + TRS_REJ_LIMIT))
			limit++;
		else
			other++;
	}
	for (i = 0; i < flood_n; i++)
		hc_close(&hs[i]);
	free(hs);
	if (other || (flood_ok >= 0 && ok != flood_ok)) {
		printf("FAIL: hostile sess-flood: %d sessions: %d accepted, %d refused for the session limit, %d other failures (want %d accepted)\n",
		       flood_n, ok, limit, other, flood_ok);
		return 1;
	}
	printf("PASS: hostile sess-flood: %d new sessions: %d accepted, %d refused with '%s'\n",
	       flood_n, ok, limit, trs_rej_str(TRS_REJ_LIMIT));
	return 0;
}

/*
 * A plain RDMA WRITE of 64 bytes through @h's QP into the first chunk of
 * @victim's pool with @victim's key; the send completion's status
 * (IBV_WC_SUCCESS: the bytes landed), or -1 when none came in 5 s.
 */
#define HC_FOREIGN_WR	0xF0F0F0F0ULL
static int hc_write_foreign(struct hc *h, const struct trs_info *victim)
{
	struct ibv_sge sge = { .addr = (uintptr_t)h->buf, .length = 64, .lkey = h->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = HC_FOREIGN_WR, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	double t0 = hc_now_ms();
	struct ibv_wc wc;

	memset(h->buf, 0xEE, 64);
	wr.wr.rdma.remote_addr = victim->pool_addr;
	wr.wr.rdma.rkey = victim->pool_rkey;
	if (ibv_post_send(h->id->qp, &wr, &bad))
		return -1;
	while (hc_now_ms() - t0 < 5000) {
		if (ibv_poll_cq(h->cq, 1, &wc) <= 0)
			continue;
		if (wc.wr_id == HC_FOREIGN_WR)
			return wc.status;
		if (wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV)
			hc_post_recv(h, (unsigned int)wc.wr_id % HC_NRECV);
	}
	return -1;
}

/*
 * chunk-replay: chunk 1 carries an IO (an OPEN of DEV, answered); after the
 * answer, the key that IO used writes into chunk 1 again. With static
 * chunks (the pool registered once per path, IBTRS's design) the write
 * lands: the exposure is shown, not assumed (trs/PROTOCOL.md 5 argues why
 * it is acceptable: the chunk belongs to this client's own session). With
 * chunk_mode rekey the NIC refuses it, and the chunk's new key (the old one
 * with its low byte incremented) writes it: the control.
 */
static int case_chunk_replay(struct hc *h)
{
	bool rekey = h->info.flags & TRS_INFO_F_REKEY;
	struct ibnbd_msg_open om;
	struct trs_info chunk1 = h->info;
	int st, ctl = IBV_WC_SUCCESS;
	uint32_t old = hc_key(h, 1);

	if (ibnbd_init_open(&om, IBNBD_ACCESS_RO, dev_path) ||
	    hc_req(h, 1, &om, sizeof(om), sizeof(struct ibnbd_msg_open_rsp)) ||
	    !hc_serve(h, 2000) || h->answers[1] != 1) {
		printf("FAIL: hostile chunk-replay: the IO on chunk 1 got %u answers\n",
		       h->answers[1]);
		return 1;
	}
	chunk1.pool_addr += h->info.slot_size;
	chunk1.pool_rkey = hc_key(h, 1);
	if (rekey)	/* the new key first: a refused write ends the QP */
		ctl = hc_write_foreign(h, &chunk1);
	chunk1.pool_rkey = old;
	st = hc_write_foreign(h, &chunk1);
	if (!rekey && st != IBV_WC_SUCCESS) {
		printf("FAIL: hostile chunk-replay: chunk 1 refused the ended IO's key 0x%x (%s); "
		       "static chunks stay writable\n", old,
		       st < 0 ? "no completion" : ibv_wc_status_str(st));
		return 1;
	}
	if (rekey && (st == IBV_WC_SUCCESS || ctl != IBV_WC_SUCCESS)) {
		printf("FAIL: hostile chunk-replay: chunk_mode rekey: the ended IO's key 0x%x: %s; "
		       "the new key 0x%x: %s\n", old,
		       st < 0 ? "no completion" : ibv_wc_status_str(st), hc_key(h, 1),
		       ctl < 0 ? "no completion" : ibv_wc_status_str(ctl));
		return 1;
	}
	if (rekey)
		printf("PASS: hostile chunk-replay: chunk_mode rekey: the ended IO's key 0x%x "
		       "is refused (%s), the chunk's new key 0x%x writes it\n", old,
		       st < 0 ? "no completion" : ibv_wc_status_str(st), hc_key(h, 1));
	else
		printf("PASS: hostile chunk-replay: exposure shown: chunk 1 still writable "
		       "with its key 0x%x after its IO was answered (static chunks)\n", old);
	return 0;
}

/*
 * cross-session: a key of one session's pool must work on that session's
 * own connections only. Sessions A and B are joined; a write into A's pool
 * with A's key works through A (the control: the write itself is good) and
 * fails through B. Then A's path reconnects (same session and path, the
 * old connection destroyed): through the new connection, A's old key must
 * fail as well (nothing of a destroyed QP's path stays writable).
 */
static int case_cross_session(void)
{
	struct trs_msg_conn_req ra, rb;
	struct trs_conn_req_info in;
	enum rdma_cm_event_type got;
	struct hc a, b, a2;
	struct trs_info old;
	const char *why = "";
	int own = -2, cross = -2, stale = -2, fails = 0;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&a2, 0, sizeof(a2));
	good_req(&ra);
	good_req(&rb);
	if (hc_connect(&a, &ra, &got) || hc_join(&a) ||
	    hc_connect(&b, &rb, &got) || hc_join(&b)) {
		printf("FAIL: hostile cross-session: could not connect/join two sessions\n");
		fails = 1;
		goto out;
	}
	old = a.info;
	old.pool_rkey = hc_key(&a, 0);	/* chunk 0's key (rekey: its own) */
	own = hc_write_foreign(&a, &old);
	cross = hc_write_foreign(&b, &old);
	hc_close(&a);
	usleep(200000);
	if (trs_conn_req_decode(&ra, sizeof(ra), &in, &why) != TRS_REJ_NONE) {
		printf("FAIL: hostile cross-session: own request: %s\n", why);
		fails = 1;
		goto out;
	}
	in.recon_cnt++;
	trs_conn_req_encode(&ra, &in);
	if (hc_connect(&a2, &ra, &got) || hc_join(&a2)) {
		printf("FAIL: hostile cross-session: A's path did not reconnect\n");
		fails = 1;
		goto out;
	}
	stale = hc_write_foreign(&a2, &old);
	printf("hostile cross-session: A's key through A: %s; through B: %s; "
	       "A's old key after A's reconnect: %s (keys 0x%x, then 0x%x)\n",
	       own < 0 ? "no completion" : ibv_wc_status_str(own),
	       cross < 0 ? "no completion" : ibv_wc_status_str(cross),
	       stale < 0 ? "no completion" : ibv_wc_status_str(stale),
	       old.pool_rkey, a2.info.pool_rkey);
	if (own != IBV_WC_SUCCESS) {
		printf("FAIL: hostile cross-session: the control write through A failed\n");
		fails = 1;
	}
	if (cross == IBV_WC_SUCCESS) {
		printf("FAIL: hostile cross-session: B wrote into A's pool\n");
		fails = 1;
	}
	if (stale == IBV_WC_SUCCESS) {
		printf("FAIL: hostile cross-session: A's old key still writes after its path reconnected\n");
		fails = 1;
	}
	if (!fails)
		printf("PASS: hostile cross-session: another session's key and a "
		       "reconnected path's old key are refused by the NIC\n");
out:
	hc_close(&a);
	hc_close(&b);
	hc_close(&a2);
	return fails;
}

static int run_case(const char *name)
{
	struct trs_msg_conn_req req;
	struct trs_io_req_info io = { .type = TRS_MSG_IO_WRITE, .data_len = 512 };
	enum rdma_cm_event_type got;
	struct hc h;
	uint32_t slot;
	double t0 = hc_now_ms(), ms;
	unsigned int acked;
	int err, wc_err;

	memset(&h, 0, sizeof(h));
	if (!strcmp(name, "connect-race"))
		return case_connect_race();
	if (!strcmp(name, "info-race"))
		return case_info_race();
	if (!strcmp(name, "sess-flood"))
		return case_sess_flood();
	if (!strcmp(name, "cross-session"))
		return case_cross_session();
	good_req(&req);
	if (!strcmp(name, "hb-only")) {
		err = hc_connect(&h, &req, &got);
		if (err) {
			printf("FAIL: hostile hb-only: not accepted (%d)\n", err);
			hc_close(&h);
			return 1;
		}
		err = case_hb_only(&h);
		hc_close(&h);
		return err;
	}
	if (!strcmp(name, "badver"))
		req.ver_major = TRS_PROTO_VER_MAJOR + 1;
	else if (!strcmp(name, "badmagic"))
		req.magic = cpu_to_le16(0x1BBD);
	else if (!strcmp(name, "badcid"))
		req.cid = cpu_to_le16(5);
	err = hc_connect(&h, &req, &got);
	if (!strcmp(name, "badver") || !strcmp(name, "badmagic") || !strcmp(name, "badcid")) {
		int want = !strcmp(name, "badver") ? TRS_REJ_VERSION :
			   !strcmp(name, "badmagic") ? TRS_REJ_BAD_MAGIC : TRS_REJ_BAD_CID;

		/* from the connect request, not the address resolution */
		ms = hc_now_ms() - (h.t_connect ? h.t_connect : t0);
		hc_close(&h);
		if (err == -(1000 + want)) {
			printf("PASS: hostile %s: rejected with '%s' after %.0f ms "
			       "(connect to reject)\n", name, trs_rej_str(want), ms);
			return 0;
		}
		printf("FAIL: hostile %s: got %d, want reject code %d\n", name, err, want);
		return 1;
	}
	if (err || hc_join(&h)) {
		printf("FAIL: hostile %s: could not connect/join (%d)\n", name, err);
		hc_close(&h);
		return 1;
	}
	slot = h.info.slot_size;
	if (!strcmp(name, "close-as-read")) {
		err = case_close_as_read(&h);
		hc_close(&h);
		return err;
	}
	if (!strcmp(name, "chunk-replay")) {
		err = case_chunk_replay(&h);
		hc_close(&h);
		return err;
	}
	if (!strcmp(name, "idle")) {
		ms = hc_wait_closed(&h, hc_now_ms());
		acked = h.hb_acked;
		hc_close(&h);
		if (ms >= 0 || !acked) {
			printf("FAIL: hostile idle: closed after %.0f ms, %u heartbeats "
			       "answered\n", ms, acked);
			return 1;
		}
		printf("PASS: hostile idle: kept for %d ms, %u heartbeats answered\n",
		       wait_ms, acked);
		return 0;
	}
	if (!strcmp(name, "chunk-id")) {
		ms = hc_bad_io(&h, h.info.queue_depth, 0, 64);
	} else if (!strcmp(name, "outside-pool")) {
		ms = hc_bad_io(&h, 0, (uint64_t)slot * h.info.queue_depth, 64);
	} else {
		if (!strcmp(name, "write-len"))
			io.data_len = h.info.chunk_size + 1;
		else if (!strcmp(name, "read-len"))
			io = (struct trs_io_req_info){ .type = TRS_MSG_IO_READ, .sg_cnt = 1,
						       .raddr = 0x1000, .rkey = 1,
						       .rlen = h.info.chunk_size * 2 };
		else if (!strcmp(name, "usr-len"))
			io.usr_len = 0xffff;
		else if (!strcmp(name, "bad-type"))
			io.type = 77;
		else {
			printf("FAIL: hostile %s: unknown case\n", name);
			hc_close(&h);
			return 1;
		}
		trs_io_req_encode((void *)h.buf, &io);
		ms = hc_bad_io(&h, 1, (uint64_t)slot + h.info.chunk_size,
			       sizeof(struct trs_msg_io_req));
	}
	acked = h.hb_acked;
	wc_err = h.wc_err;
	hc_close(&h);
	if (ms < 0) {
		printf("FAIL: hostile %s: connection not closed by the server within "
		       "%d ms (%u heartbeats answered, completion status %d)\n",
		       name, wait_ms, acked, wc_err);
		return 1;
	}
	printf("PASS: hostile %s: connection closed by the server after %.0f ms "
	       "(%u heartbeats answered, completion status %d)\n", name, ms,
	       acked, wc_err);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const all[] = { "badver", "badmagic", "badcid", "chunk-id",
					   "write-len", "read-len", "usr-len",
					   "bad-type", "outside-pool", "idle" };
	char spec[96], *at;
	int i, c, fails = 0, port = 1234;

	srandom((unsigned int)time(NULL));
	spec[0] = 0;
	while ((c = getopt(argc, argv, "s:p:w:d:r:c:n:k:")) != -1) {
		if (c == 's')
			snprintf(spec, sizeof(spec), "%s", optarg);
		else if (c == 'p')
			port = atoi(optarg);
		else if (c == 'w')
			wait_ms = atoi(optarg);
		else if (c == 'd')
			dev_path = optarg;
		else if (c == 'r')
			rounds = atoi(optarg);
		else if (c == 'c')
			race_cons = atoi(optarg);
		else if (c == 'n')
			flood_n = atoi(optarg);
		else if (c == 'k')
			flood_ok = atoi(optarg);
	}
	at = strchr(spec, '@');
	if (!at) {
		fprintf(stderr, "usage: %s -s SRC@DST [-p PORT] [-w MS] [case...]\n",
			argv[0]);
		return 2;
	}
	*at = 0;
	src.sin_family = dst.sin_family = AF_INET;
	inet_pton(AF_INET, spec, &src.sin_addr);
	inet_pton(AF_INET, at + 1, &dst.sin_addr);
	dst.sin_port = htons((uint16_t)port);
	if (optind < argc)
		for (i = optind; i < argc; i++)
			fails += run_case(argv[i]);
	else
		for (i = 0; i < (int)(sizeof(all) / sizeof(all[0])); i++)
			fails += run_case(all[i]);
	return fails ? 1 : 0;
}
