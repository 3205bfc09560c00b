// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * srv_io.c - server data path: receive and validate requests, hand them to
 * the user, send the answer (RDMA WRITE of read data + one message), and
 * the server side of the heartbeat and INFO exchange.
 */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "srv.h"

void trs_srv_send_done(struct trs_cqe *cqe, struct ibv_wc *wc)
{
	struct trs_con *con = trs_container_of(cqe, struct trs_con, ctrl_cqe);
	struct trs_srv_con *scon = trs_container_of(con, struct trs_srv_con, c);

	if (wc->status != IBV_WC_SUCCESS)
		trs_srv_path_fail(scon->path, "send failed: %s",
				  ibv_wc_status_str(wc->status));
}

void trs_srv_hb_done(struct trs_cqe *cqe, struct ibv_wc *wc)
{
	struct trs_srv_path *path = trs_container_of(cqe, struct trs_srv_path, hb_cqe);

	if (wc->status != IBV_WC_SUCCESS)
		trs_srv_path_fail(path, "heartbeat send failed: %s",
				  ibv_wc_status_str(wc->status));
}

void trs_srv_op_orphan(struct ibtrs_srv_op *op)
{
	op->path = NULL;
	op->con = NULL;
}

static void trs_srv_op_start(struct ibtrs_srv_op *op, struct trs_srv_path *path,
			     struct trs_srv_con *con)
{
	struct ibtrs_srv_sess *sess = op->sess;
	struct ibtrs_srv_ctx *ctx = sess->ctx;
	char *slot = trs_srv_slot(sess, op->id);
	const char *why = "";
	__u32 hdr_len;
	void *data;
	size_t datalen;
	int ret;

	/* Copy first: the client can still write the chunk while we look. */
	hdr_len = trs_io_req_copy(op->hdr, slot + ctx->params.chunk_size,
				  ctx->params.hdr_area, ctx->params.max_usr_len);
	if (trs_io_req_decode(op->hdr, hdr_len, ctx->params.chunk_size,
			      ctx->params.max_usr_len, &op->req, &why)) {
		trs_srv_path_fail(path, "invalid request in chunk %u: %s", op->id, why);
		return;
	}
	op->state = TRS_OP_ACTIVE;
	op->path = path;
	op->con = con;
	sess->active_ops++;
	if (op->req.type == TRS_MSG_IO_WRITE) {
		datalen = op->req.data_len;
		data = slot + ctx->params.chunk_size - datalen;
	} else {
		datalen = op->req.sg_cnt ? op->req.rlen : 0;
		data = slot;
	}
	ctx->ncalls++;
	ret = ctx->ops.rdma_ev(sess, sess->priv, op,
			       op->req.type == TRS_MSG_IO_WRITE ? IBTRS_WRITE :
			       IBTRS_READ, data, datalen,
			       op->hdr + sizeof(struct trs_msg_io_req),
			       op->req.usr_len);
	if (ret)
		ibtrs_srv_resp(op, ret < 0 ? ret : -ret, 0);
}

static void trs_srv_io_req(struct trs_srv_path *path, struct trs_srv_con *con,
			   uint32_t id)
{
	struct ibtrs_srv_op *op = &path->sess->ops[id];

	if (op->state == TRS_OP_ACTIVE) {
		if (op->path == path || op->pending_path) {
			trs_srv_path_fail(path, "request for chunk %u which is busy",
					  id);
			return;
		}
		/* A failed-over retry overtook the original's answer. */
		op->pending_path = path;
		op->pending_con = con;
		return;
	}
	trs_srv_op_start(op, path, con);
}

static int trs_srv_post_resp(struct ibtrs_srv_op *op, int status, size_t len)
{
	struct trs_srv_path *path = op->path;
	struct trs_srv_con *con = op->con;
	struct ibtrs_srv_sess *sess = op->sess;
	struct ibv_send_wr data_wr = { 0 }, rsp_wr = { 0 }, *first = &rsp_wr, *bad;
	struct ibv_sge data_sge, rsp_sge;
	struct trs_msg_io_rsp *rsp;
	uint32_t imm;

	if (op->req.type == TRS_MSG_IO_READ && !status && len) {
		data_sge.addr = (uintptr_t)trs_srv_slot(sess, op->id);
		data_sge.length = (uint32_t)len;
		data_sge.lkey = path->pool_mr->lkey;
		data_wr.wr_id = (uintptr_t)&con->c.ctrl_cqe;
		data_wr.opcode = IBV_WR_RDMA_WRITE;
		data_wr.sg_list = &data_sge;
		data_wr.num_sge = 1;
		data_wr.wr.rdma.remote_addr = op->req.raddr;
		data_wr.wr.rdma.rkey = op->req.rkey;
		data_wr.next = &rsp_wr;
		first = &data_wr;
	}
	rsp_wr.wr_id = (uintptr_t)&con->c.ctrl_cqe;
	rsp_wr.send_flags = IBV_SEND_SIGNALED;
	if (op->req.type == TRS_MSG_IO_READ || (op->req.flags & TRS_IO_F_NEED_INV)) {
		/* A read's answer carries its length, so the client can check it
		 * covers the request; SEND_WITH_INV also ends the client's rkey. */
		bool inv = (op->req.flags & TRS_IO_F_NEED_INV) &&
			   !(sess->ctx->opts.test_faults & IBTRS_SRV_TEST_NO_INVAL);
		struct trs_io_rsp_info ri = {
			.chunk_id = (uint16_t)op->id, .status = status,
			.flags = inv ? TRS_RSP_F_INVALIDATED : 0, .len = (uint32_t)len,
		};

		rsp = (void *)((char *)con->c.tx_slots + (size_t)op->id * TRS_TX_SLOT);
		trs_io_rsp_encode(rsp, &ri);
		rsp_sge.addr = (uintptr_t)rsp;
		rsp_sge.length = sizeof(*rsp);
		rsp_sge.lkey = con->c.msg_mr->lkey;
		rsp_wr.opcode = inv ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND;
		rsp_wr.invalidate_rkey = inv ? op->req.rkey : 0;
		rsp_wr.sg_list = &rsp_sge;
		rsp_wr.num_sge = 1;
	} else {
		if (trs_imm_pack(TRS_IMM_IO_RSP, op->id, status, &imm))
			imm = trs_to_imm(TRS_IMM_IO_RSP, op->id, EIO);
		rsp_wr.opcode = IBV_WR_SEND_WITH_IMM;
		rsp_wr.imm_data = htonl(imm);
	}
	return -ibv_post_send(con->c.qp, first, &bad);
}

bool trs_srv_test_short_read;

int ibtrs_srv_resp(struct ibtrs_srv_op *op, int status, size_t len)
{
	struct ibtrs_srv_sess *sess;
	struct trs_srv_path *path, *next_path;
	struct trs_srv_con *next_con;
	bool raw_short;
	__u32 rlen;
	int err = 0;

	if (!op || op->state != TRS_OP_ACTIVE)
		return -EINVAL;
	sess = op->sess;
	path = op->path;
	rlen = len > UINT32_MAX ? UINT32_MAX : (__u32)len;
	/* test fault: a large successful read answered 512 bytes short */
	if ((sess->ctx->opts.test_faults & IBTRS_SRV_TEST_SHORT_READ) &&
	    !status && op->req.type == TRS_MSG_IO_READ && rlen > 4096)
		rlen -= 512;
	/* test hook (trs-test-server --short-read raw, test_faults): a short,
	 * successful read answer goes out as the user gave it */
	raw_short = (trs_srv_test_short_read ||
		     (sess->ctx->opts.test_faults & IBTRS_SRV_TEST_SHORT_READ)) &&
		    !status && op->req.type == TRS_MSG_IO_READ &&
		    op->req.sg_cnt && rlen < op->req.rlen;
	/* A read answer must cover the request (trs/common/proto.c). */
	if (!raw_short && trs_io_resp_check(&op->req, &status, &rlen)) {
		trs_err("session %s: read answer of chunk %u has %zu bytes, "
			"the request %u; failing the IO with EIO", sess->name,
			op->id, len, op->req.sg_cnt ? op->req.rlen : 0);
		err = -EINVAL;
	}
	len = rlen;
	if (path && !path->fail_pending) {
		int perr = trs_srv_post_resp(op, status, len);

		if (perr)
			trs_srv_path_fail(path, "posting answer: %s", strerror(-perr));
	}
	op->state = TRS_OP_FREE;
	op->path = NULL;
	op->con = NULL;
	sess->active_ops--;
	next_path = op->pending_path;
	next_con = op->pending_con;
	op->pending_path = NULL;
	op->pending_con = NULL;
	if (next_path && !next_path->fail_pending)
		trs_srv_op_start(op, next_path, next_con);
	trs_srv_sess_maybe_free(sess);
	return err;
}

static void trs_srv_info_req(struct trs_srv_path *path, struct trs_srv_con *con,
			     const void *msg, uint32_t len)
{
	struct ibtrs_srv_sess *sess = path->sess;
	struct ibtrs_srv_ctx *ctx = sess->ctx;
	char name[TRS_SESSNAME_MAX];
	struct trs_info info = {
		.queue_depth = ctx->params.queue_depth,
		.chunk_size = ctx->params.chunk_size,
		.slot_size = ctx->slot_size,
		.pool_addr = (uintptr_t)sess->pool,
		.pool_rkey = path->pool_mr->rkey,
	};
	const char *why = "";
	int err;

	if (con->c.cid != 0 || path->joined) {
		trs_srv_path_fail(path, "unexpected INFO_REQ");
		return;
	}
	if (trs_info_req_decode(msg, len, name, &why)) {
		trs_srv_path_fail(path, "bad INFO_REQ: %s", why);
		return;
	}
	if (sess->named && strcmp(name, sess->name))
		trs_wrn("session %s: path from %s names itself '%s'", sess->name,
			path->addr, name);
	trs_info_rsp_encode(con->c.ctrl_buf, &info);
	err = trs_con_post_ctrl(&con->c, sizeof(struct trs_msg_info_rsp));
	if (err) {
		trs_srv_path_fail(path, "posting INFO_RSP: %s", strerror(-err));
		return;
	}
	path->joined = true;
	trs_hb_start(&path->hb, ctx->opts.hb_interval_ms, ctx->opts.hb_missed_max,
		     trs_now_us());
	if (!sess->named) {
		snprintf(sess->name, sizeof(sess->name), "%s", name);
		sess->named = true;
	}
	trs_info("session %s: path from %s joined (%d path%s)", sess->name,
		 path->addr, ibtrs_srv_sess_paths(sess),
		 ibtrs_srv_sess_paths(sess) > 1 ? "s" : "");
	if (!sess->link_up) {
		sess->link_up = true;
		if (ctx->ops.link_ev)
			ctx->ops.link_ev(sess, IBTRS_SRV_LINK_EV_CONNECTED, sess->priv);
	}
}

void trs_srv_recv_done(struct trs_con *con, struct trs_rx *rx, struct ibv_wc *wc)
{
	struct trs_srv_con *scon = trs_container_of(con, struct trs_srv_con, c);
	struct trs_srv_path *path = scon->path;
	struct ibtrs_srv_ctx *ctx = path->sess->ctx;
	uint8_t msg[TRS_MAX_RECV_MSG];
	struct trs_rx_msg m;
	const char *why = "";

	if (trs_con_rx_begin(con, rx, wc, true, ctx->params.queue_depth, &m, msg,
			     &why)) {
		trs_srv_path_fail(path, "bad receive: %s (%s, %u bytes)", why,
				  trs_wc_opcode_str(wc->opcode), wc->byte_len);
		return;
	}
	trs_hb_on_rx(&path->hb, trs_now_us());
	switch (m.kind) {
	case TRS_RX_HB:
		if (trs_con_post_send_imm(&path->cons[0].c,
					  trs_to_imm(TRS_IMM_HB_ACK, m.id, 0),
					  &path->hb_cqe))
			trs_srv_path_fail(path, "cannot answer heartbeat");
		break;
	case TRS_RX_HB_ACK:	/* only life; the server keeps no RTT */
		break;
	case TRS_RX_IO_REQ:
		if (!path->joined) {
			trs_srv_path_fail(path, "IO request before the path joined");
			break;
		}
		trs_srv_io_req(path, scon, m.id);
		break;
	case TRS_RX_MSG:	/* INFO_REQ, the only valid message */
		trs_srv_info_req(path, scon, msg, m.len);
		break;
	default:
		trs_srv_path_fail(path, "unexpected receive kind %d", m.kind);
	}
}

void trs_srv_path_tick(struct trs_srv_path *path, uint64_t now)
{
	uint64_t tmo = trs_hb_timeout_us(&path->hb);
	uint16_t seq;

	if (path->fail_pending)
		return;
	if (!path->joined) {
		/* a path that never joins is dropped, counted from its first
		 * connection: heartbeats do not keep it (and its pool) */
		if (now - path->created_us > tmo + 10000000ULL)
			trs_srv_path_fail(path, "did not join within %llu ms",
					  (unsigned long long)(tmo / 1000 + 10000));
		return;
	}
	if (trs_hb_timed_out(&path->hb, now)) {
		trs_srv_path_fail(path, "heartbeat timeout: nothing received for "
				  "%llu ms", (unsigned long long)
				  trs_hb_idle_us(&path->hb, now) / 1000);
		return;
	}
	if (trs_hb_due(&path->hb, now, &seq) &&
	    trs_con_post_send_imm(&path->cons[0].c, trs_to_imm(TRS_IMM_HB, seq, 0),
				  &path->hb_cqe))
		trs_srv_path_fail(path, "cannot post heartbeat");
}
