// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * clt_io.c - post one IO on a path: a single RDMA WRITE WITH IMM into the
 * request's server chunk (plus an unsignaled memory-window bind in front of
 * it for reads). The server's answer is the second and last message.
 */
#include <string.h>
#include <arpa/inet.h>

#include "clt.h"

static void trs_clt_send_done(struct trs_cqe *cqe, struct ibv_wc *wc)
{
	struct trs_clt_req *req = trs_container_of(cqe, struct trs_clt_req, send_cqe);

	if (wc->status != IBV_WC_SUCCESS) {
		if (req->path)
			trs_clt_path_fail(req->path, "%s of chunk %u failed: %s",
					  wc->opcode == IBV_WC_BIND_MW ? "BIND_MW" :
					  "WRITE_WITH_IMM", req->id,
					  ibv_wc_status_str(wc->status));
		return;
	}
	trs_clt_req_done_ref(req);
}

static void trs_clt_inv_done(struct trs_cqe *cqe, struct ibv_wc *wc)
{
	struct trs_clt_req *req = trs_container_of(cqe, struct trs_clt_req, inv_cqe);

	if (wc->status != IBV_WC_SUCCESS) {
		if (req->path)
			trs_clt_path_fail(req->path, "LOCAL_INV of chunk %u failed: %s",
					  req->id, ibv_wc_status_str(wc->status));
		return;
	}
	req->need_inv = false;
	trs_clt_req_done_ref(req);
}

/**
 * trs_clt_rsp_check() - the status an answer gives its IO.
 * @rsp: the IO_RSP message (validated), NULL for an answer by immediate.
 *
 * A successful READ answer must cover the whole request: an IO_RSP whose
 * len equals the request's length (PROTOCOL.md 4). Anything else would
 * hand the user a partly stale buffer as good data, so it fails the IO with
 * -EIO, for good (not re-posted on another path), and fails the path like
 * every other protocol violation.
 */
int trs_clt_rsp_check(struct trs_clt_req *req, int status, const void *rsp)
{
	struct trs_clt_path *path = req->path;
	struct trs_io_rsp_info r = { .len = 0 };

	if (req->dir != IBTRS_READ || status)
		return status;
	if (rsp && !trs_io_rsp_decode(rsp, sizeof(struct trs_msg_io_rsp),
				      UINT16_MAX + 1, &r, NULL) &&
	    r.len == req->len)
		return 0;
	path->st.proto_errors++;
	req->final_status = -EIO;
	if (rsp)
		trs_clt_path_fail(path, "protocol error: successful READ answer "
				  "of chunk %u has %u bytes, the request %zu; IO "
				  "failed with EIO", req->id, r.len, req->len);
	else
		trs_clt_path_fail(path, "protocol error: successful READ answer "
				  "of chunk %u without a length; IO failed with "
				  "EIO", req->id);
	return -EIO;
}

/**
 * trs_clt_post_req() - post @req on @path.
 * Return: 0, or -errno (nothing posted; the caller fails the path and
 * keeps the request queued).
 */
int trs_clt_post_req(struct trs_clt_path *path, struct trs_clt_req *req)
{
	struct ibtrs_clt *clt = path->clt;
	struct trs_clt_con *con = &path->cons[req->id % path->ncons];
	uint64_t slot = path->pool_addr + (uint64_t)req->id *
			(clt->params.chunk_size + clt->params.hdr_area);
	struct trs_io_req_info io = {
		.usr_len = req->usr_len, .seq = req->seq,
	};
	struct ibv_send_wr bind_wr = { 0 }, wr = { 0 }, *first = &wr, *bad;
	struct ibv_sge sge[2];
	int nsge = 0, err;
	void *hdr = trs_clt_hdr(clt, req->id);
	void *buf = NULL;
	struct ibv_mr *mr = NULL;

	req->send_cqe.done = trs_clt_send_done;
	req->inv_cqe.done = trs_clt_inv_done;
	req->need_inv = false;
	req->io_mr = NULL;
	if (req->len) {
		buf = req->bounce ? trs_clt_bounce(clt, req->id) : req->iov[0].iov_base;
		mr = req->bounce ? path->iobuf_mr : trs_clt_find_mr(path, buf, req->len);
		if (!mr)
			return -EFAULT;
	}
	if (req->dir == IBTRS_WRITE) {
		io.type = TRS_MSG_IO_WRITE;
		io.data_len = (uint32_t)req->len;
		if (req->len) {
			sge[nsge].addr = (uintptr_t)buf;
			sge[nsge].length = (uint32_t)req->len;
			sge[nsge].lkey = mr->lkey;
			nsge++;
		}
		wr.wr.rdma.remote_addr = slot + clt->params.chunk_size - req->len;
	} else {
		io.type = TRS_MSG_IO_READ;
		if (req->len) {
			err = trs_clt_req_map_read(path, req, buf, mr, &bind_wr);
			if (err)
				return err;
			io.sg_cnt = 1;
			io.raddr = (uintptr_t)buf;
			io.rkey = req->rkey;
			io.rlen = (uint32_t)req->len;
			if (req->need_inv && clt->opts.inval_mode == IBTRS_INVAL_REMOTE)
				io.flags = TRS_IO_F_NEED_INV;
			if (bind_wr.opcode == IBV_WR_BIND_MW) {
				bind_wr.wr_id = (uintptr_t)&req->send_cqe;
				bind_wr.next = &wr;
				first = &bind_wr;
			}
		}
		wr.wr.rdma.remote_addr = slot + clt->params.chunk_size;
	}
	trs_io_req_encode(hdr, &io);
	sge[nsge].addr = (uintptr_t)hdr;
	sge[nsge].length = (uint32_t)(sizeof(struct trs_msg_io_req) + req->usr_len);
	sge[nsge].lkey = path->iobuf_mr->lkey;
	nsge++;

	wr.wr_id = (uintptr_t)&req->send_cqe;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htonl(trs_to_imm(TRS_IMM_IO_REQ, req->id, 0));
	wr.wr.rdma.rkey = path->pool_rkey;
	wr.sg_list = sge;
	wr.num_sge = nsge;

	err = ibv_post_send(con->c.qp, first, &bad);
	if (err) {
		trs_clt_req_unmap(req);
		return -err;
	}
	if (first == &bind_wr) {
		/* The provider sends mw->rkey as the MW's current key with the
		 * next bind, so the consumer updates it once the bind is posted. */
		path->mw_rkey[req->id] = req->rkey;
		path->mw[req->id]->rkey = req->rkey;
		path->st.reg_wrs++;
	}
	req->path = path;
	req->con = con;
	req->refs = 2;		/* send completion + server response */
	req->post_us = trs_now_us();
	req->rsp_pending = true;
	req->status = 0;
	TAILQ_INSERT_TAIL(&path->inflight_list, req, link);
	path->inflight++;
	path->st.msgs_sent++;
	if (req->dir == IBTRS_WRITE) {
		path->st.writes++;
		path->st.write_bytes += req->len;
	} else {
		path->st.reads++;
		path->st.read_bytes += req->len;
	}
	return 0;
}
