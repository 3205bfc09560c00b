// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trs-test-hostile - a misbehaving IBTRS client on raw librdmacm/verbs.
 * Each case connects to the server and breaks one rule; the server must
 * reject the connection or close it, and keep running.
 * Usage: trs-test-hostile -s SRC@DST [-p PORT] [CASE...]
 * Cases: badver badmagic badcid chunk-id write-len read-len usr-len
 *        bad-type outside-pool. Prints PASS:/FAIL: per case.
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
};

static struct sockaddr_in src, dst;

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
	struct ibv_recv_wr rwr = { 0 }, *bad;
	struct ibv_sge sge;
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
	for (i = 0; i < 8; i++) {
		sge.addr = (uintptr_t)h->buf + 4096 + i * 128;
		sge.length = 128;
		sge.lkey = h->mr->lkey;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		ibv_post_recv(h->id->qp, &rwr, &bad);
	}
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
		if (wc.opcode == IBV_WC_RECV)
			return trs_info_rsp_decode(h->buf + 4096 + (wc.wr_id & 7) * 128,
						   wc.byte_len, &h->params, &h->info, NULL);
	}
	return -EIO;
}

/* Write @len bytes of buf into chunk @id at @off with IMM(id); then expect
 * the server to close the connection. */
static int hc_bad_io(struct hc *h, uint32_t imm_id, uint64_t off, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)h->buf, .length = len, .lkey = h->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	enum rdma_cm_event_type got;

	wr.imm_data = htonl(trs_to_imm(TRS_IMM_IO_REQ, imm_id, 0));
	wr.wr.rdma.remote_addr = h->info.pool_addr + off;
	wr.wr.rdma.rkey = h->info.pool_rkey;
	if (ibv_post_send(h->id->qp, &wr, &bad))
		return -EIO;
	/* the server must disconnect us */
	if (wait_ev(h, RDMA_CM_EVENT_DISCONNECTED, 10000, &got, NULL)) {
		struct ibv_wc wc;

		/* or our QP sees an error (remote access error) */
		if (!poll_cq(h, &wc, 100) && wc.status != IBV_WC_SUCCESS)
			return 0;
		return -ETIMEDOUT;
	}
	return 0;
}

static int run_case(const char *name)
{
	struct trs_msg_conn_req req;
	struct trs_io_req_info io = { .type = TRS_MSG_IO_WRITE, .data_len = 512 };
	enum rdma_cm_event_type got;
	struct hc h;
	uint32_t slot;
	int err;

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

		hc_close(&h);
		if (err == -(1000 + want)) {
			printf("PASS: hostile %s: rejected with '%s'\n", name, trs_rej_str(want));
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
	if (!strcmp(name, "chunk-id")) {
		err = hc_bad_io(&h, h.info.queue_depth, 0, 64);
	} else if (!strcmp(name, "outside-pool")) {
		err = hc_bad_io(&h, 0, (uint64_t)slot * h.info.queue_depth, 64);
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
		err = hc_bad_io(&h, 1, (uint64_t)slot + h.info.chunk_size,
				sizeof(struct trs_msg_io_req));
	}
	hc_close(&h);
	if (err) {
		printf("FAIL: hostile %s: connection not closed by the server\n", name);
		return 1;
	}
	printf("PASS: hostile %s: connection closed by the server\n", name);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const all[] = { "badver", "badmagic", "badcid", "chunk-id",
					   "write-len", "read-len", "usr-len",
					   "bad-type", "outside-pool" };
	char spec[96], *at;
	int i, c, fails = 0, port = 1234;

	srandom((unsigned int)time(NULL));
	spec[0] = 0;
	while ((c = getopt(argc, argv, "s:p:")) != -1) {
		if (c == 's')
			snprintf(spec, sizeof(spec), "%s", optarg);
		else if (c == 'p')
			port = atoi(optarg);
	}
	at = strchr(spec, '@');
	if (!at) {
		fprintf(stderr, "usage: %s -s SRC@DST [-p PORT] [case...]\n", argv[0]);
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
