// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trs-test-hostile - a misbehaving IBTRS client on raw librdmacm/verbs.
 * Each case connects to the server and breaks one rule; the server must
 * reject the connection or close it, and keep running. Joined connections
 * answer the server's heartbeats, so only validation can close them: a
 * connection still open after -w MS (default 3000, twice the server's
 * default heartbeat timeout) fails the case. The control case "idle" joins
 * and breaks nothing: the server must keep it for the whole wait.
 * Usage: trs-test-hostile -s SRC@DST [-p PORT] [-w MS] [CASE...]
 * Cases: badver badmagic badcid chunk-id write-len read-len usr-len
 *        bad-type outside-pool idle. Prints PASS:/FAIL: per case with the
 *        time from the offending message to the server's reaction.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "trs_common.h"

struct hc {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char buf[8192];
	struct trs_conn_params params;
	struct trs_info info;
	unsigned int hb_acked;		/* heartbeats answered */
	int wc_err;			/* first failed completion status */
};

#define HC_NRECV	8
static struct sockaddr_in src, dst;
static int wait_ms = 3000;

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
		if ((wc[i].wc_flags & IBV_WC_WITH_IMM) &&
		    trs_imm_type(imm) == TRS_IMM_HB) {
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

/* Connect with @req; returns the event seen after rdma_connect. */
static int hc_connect(struct hc *h, struct trs_msg_conn_req *req,
		      enum rdma_cm_event_type *got)
{
	struct ibv_qp_init_attr qa = { 0 };
	struct rdma_conn_param cp = { .private_data = req,
				      .private_data_len = sizeof(*req),
				      .retry_count = 3, .rnr_retry_count = 7 };
	struct trs_msg_conn_rsp rsp = { 0 };
	int i, err;

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
	h->mr = ibv_reg_mr(h->pd, h->buf, sizeof(h->buf), IBV_ACCESS_LOCAL_WRITE);
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
	if (rdma_connect(h->id, &cp))
		return -errno;
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
	int i;

	trs_info_req_encode((void *)h->buf, "hostile");
	if (ibv_post_send(h->id->qp, &wr, &bad))
		return -EIO;
	for (i = 0; i < 2; i++) {
		if (poll_cq(h, &wc, 5000) || wc.status)
			return -EIO;
		if (wc.opcode == IBV_WC_RECV) {
			hc_post_recv(h, (unsigned int)wc.wr_id % HC_NRECV);
			return trs_info_rsp_decode(h->buf + 4096 +
						   (wc.wr_id % HC_NRECV) * 128,
						   wc.byte_len, &h->params, &h->info, NULL);
		}
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
	wr.wr.rdma.rkey = h->info.pool_rkey;
	if (ibv_post_send(h->id->qp, &wr, &bad))
		return -1;
	return hc_wait_closed(h, t0);
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
	good_req(&req);
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

		ms = hc_now_ms() - t0;
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
	while ((c = getopt(argc, argv, "s:p:w:")) != -1) {
		if (c == 's')
			snprintf(spec, sizeof(spec), "%s", optarg);
		else if (c == 'p')
			port = atoi(optarg);
		else if (c == 'w')
			wait_ms = atoi(optarg);
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
