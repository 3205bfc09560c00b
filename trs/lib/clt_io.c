// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * clt_io.c - post one IO on a path: a single RDMA WRITE WITH IMM into the
 * request's server chunk (plus a memory-window bind in front of it for
 * reads, and for writes in write_mode pull, whose data the server reads). The server's answer is the second and last message, and what
 * completes the IO: the request's WRs are unsignaled, but for one chain in
 * TRS_SIG_EVERY WRs whose completion retires the send queue's entries.
 * While the session is plugged the WRs are staged per connection and go
 * out as one chain, with one ibv_post_send(), at the unplug.
 */
#include <string.h>
#include <arpa/inet.h>

#include "clt.h"

/* Send-queue WRs of @req: [BIND_MW +] WRITE_WITH_IMM. */
static unsigned int trs_clt_req_wrs(const struct trs_clt_req *req)
{
	return req->bind ? 2 : 1;
}

/* An unsignaled WR of a request failed (flushed): its path is dead. */
void trs_clt_req_send_done(struct trs_cqe *cqe, struct ibv_wc *wc)
{
	struct trs_clt_con *con = trs_container_of(cqe, struct trs_clt_con, req_cqe);

	if (wc->status != IBV_WC_SUCCESS)
		trs_clt_path_fail(con->path, "%s failed: %s",
				  wc->opcode == IBV_WC_BIND_MW ? "BIND_MW" :
				  "WRITE_WITH_IMM",
				  ibv_wc_status_str(wc->status));
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

/* After the WRs of @req went out: the bookkeeping of a posted request. */
static void trs_clt_req_posted(struct trs_clt_req *req)
{
	struct trs_clt_path *path = req->path;

	if (req->bind) {
		/* The provider sends mw->rkey as the MW's current key with the
		 * next bind, so the consumer updates it once the bind is posted. */
		path->mw_rkey[req->id] = req->rkey;
		path->mw[req->id]->rkey = req->rkey;
		path->st.reg_wrs++;
	}
}

/*
 * Post the staged requests of @con that the send queue has room for, in
 * order, as one chain with one ibv_post_send(); the rest stay staged until
 * a signaled completion retires WRs (trs_clt_con_room()). A failed post
 * fails the path: its teardown moves every request of the path, staged or
 * posted, back to the pending queue.
 */
static void trs_clt_con_flush(struct trs_clt_con *con)
{
	struct trs_clt_path *path = con->path;
	struct trs_clt_req *req, *first = con->staged, *last = NULL;
	unsigned int room = trs_con_sig_room(&con->c), nwrs = 0, w;
	int err;

	if (!first || path->fail_pending || con->c.dead)
		return;		/* the teardown re-queues them */
	for (req = first; req; req = req->stage_next) {
		w = trs_clt_req_wrs(req);
		if (nwrs + w > room)
			break;
		nwrs += w;
		last = req;
		path->clt->nstaged--;
	}
	if (!last)
		return;		/* no room: a signaled WR is outstanding */
	con->staged = last->stage_next;
	if (!con->staged)
		con->staged_tail = &con->staged;
	con->staged_wrs -= nwrs;
	last->stage_next = NULL;
	last->wr.next = NULL;
	trs_con_sig_chain(&con->c, &last->wr, nwrs, false);
	err = trs_con_post_send(&con->c, first->bind ? &first->bind_wr :
				&first->wr, nwrs);
	if (err) {
		trs_clt_path_fail(path, "posting %u work requests failed: %s",
				  nwrs, strerror(-err));
		return;
	}
	for (req = first; req; req = req->stage_next)
		trs_clt_req_posted(req);
}

/* Signaled WRs of @c retired entries: post what waited for room. */
void trs_clt_con_room(struct trs_con *c)
{
	struct trs_clt_con *con = trs_container_of(c, struct trs_clt_con, c);

	if (con->staged && !con->path->clt->plugged)
		trs_clt_con_flush(con);
}

/* Forget @con's staged requests (its path is being torn down). */
void trs_clt_con_drop_staged(struct trs_clt_con *con)
{
	struct trs_clt_req *req;

	for (req = con->staged; req; req = req->stage_next)
		con->path->clt->nstaged--;
	con->staged = NULL;
	con->staged_tail = &con->staged;
	con->staged_wrs = 0;
}

/* Post every connection's staged chain. */
void trs_clt_flush(struct ibtrs_clt *clt)
{
	unsigned int i;
	int p;

	for (p = 0; p < clt->npaths && clt->nstaged; p++) {
		struct trs_clt_path *path = clt->paths[p];

		if (!path->cons)
			continue;
		for (i = 0; i < path->ncons; i++)
			if (path->cons[i].staged)
				trs_clt_con_flush(&path->cons[i]);
	}
}

void ibtrs_clt_plug(struct ibtrs_clt *clt)
{
	clt->plugged++;
}

void ibtrs_clt_unplug(struct ibtrs_clt *clt)
{
	if (clt->plugged && --clt->plugged)
		return;
	trs_clt_flush(clt);
}

/* Append @req's WRs to @con's staged chain. */
static void trs_clt_con_stage(struct trs_clt_con *con, struct trs_clt_req *req)
{
	struct ibv_send_wr *head = req->bind ? &req->bind_wr : &req->wr;

	if (con->staged) {
		struct trs_clt_req *last = trs_container_of(con->staged_tail,
					struct trs_clt_req, stage_next);

		last->wr.next = head;
	}
	req->wr.next = NULL;
	req->stage_next = NULL;
	*con->staged_tail = req;
	con->staged_tail = &req->stage_next;
	con->staged_wrs += trs_clt_req_wrs(req);
	con->path->clt->nstaged++;
}

/**
 * trs_clt_post_req() - post @req on @path, or stage it while the session is
 * plugged (posted by the unplug, in order, in one chain per connection).
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
	struct ibv_send_wr *wr = &req->wr;
	struct ibv_sge *sge = req->sge;
	int nsge = 0, err;
	void *hdr = trs_clt_hdr(clt, req->id);
	void *buf = NULL;
	struct ibv_mr *mr = NULL;
	bool stage, pull;

	req->inv_cqe.done = trs_clt_inv_done;
	req->need_inv = false;
	req->io_mr = NULL;
	req->bind = false;
	memset(wr, 0, sizeof(*wr));
	memset(&req->bind_wr, 0, sizeof(req->bind_wr));
	if (req->len) {
		buf = req->bounce ? trs_clt_bounce(clt, req->id) : req->iov[0].iov_base;
		mr = req->bounce ? path->iobuf_mr : trs_clt_find_mr(path, buf, req->len);
		if (!mr)
			return -EFAULT;
	}
	pull = req->dir == IBTRS_WRITE && req->len &&
	       clt->opts.write_mode == IBTRS_WRITE_PULL;
	if (req->dir == IBTRS_WRITE) {
		io.type = TRS_MSG_IO_WRITE;
		io.data_len = (uint32_t)req->len;
	} else {
		io.type = TRS_MSG_IO_READ;
	}
	if (req->dir == IBTRS_WRITE && !pull) {
		/* push: the data goes in front of the header, in this WR */
		if (req->len) {
			sge[nsge].addr = (uintptr_t)buf;
			sge[nsge].length = (uint32_t)req->len;
			sge[nsge].lkey = mr->lkey;
			nsge++;
		}
		wr->wr.rdma.remote_addr = slot + clt->params.chunk_size - req->len;
	} else {
		/* a read's buffer, or a pulled write's: exposed by its own key */
		if (req->len) {
			err = trs_clt_req_map(path, req, buf, mr, &req->bind_wr,
					      pull ? IBV_ACCESS_REMOTE_READ :
					      IBV_ACCESS_REMOTE_WRITE);
			if (err)
				return err;
			io.sg_cnt = 1;
			io.raddr = (uintptr_t)buf;
			io.rkey = req->rkey;
			io.rlen = (uint32_t)req->len;
			if (req->need_inv && clt->opts.inval_mode == IBTRS_INVAL_REMOTE)
				io.flags = TRS_IO_F_NEED_INV;
			if (pull)
				io.flags |= TRS_IO_F_PULL;
			if (req->bind_wr.opcode == IBV_WR_BIND_MW) {
				req->bind_wr.wr_id = (uintptr_t)&con->req_cqe;
				req->bind_wr.next = wr;
				req->bind = true;
			}
		}
		wr->wr.rdma.remote_addr = slot + clt->params.chunk_size;
	}
	trs_io_req_encode(hdr, &io);
	sge[nsge].addr = (uintptr_t)hdr;
	sge[nsge].length = (uint32_t)(sizeof(struct trs_msg_io_req) + req->usr_len);
	sge[nsge].lkey = path->iobuf_mr->lkey;
	nsge++;

	wr->wr_id = (uintptr_t)&con->req_cqe;
	wr->opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr->imm_data = htonl(trs_to_imm(TRS_IMM_IO_REQ, req->id, 0));
	wr->wr.rdma.rkey = path->chunk_rkey ? path->chunk_rkey[req->id] : path->pool_rkey;
	wr->sg_list = sge;
	wr->num_sge = nsge;

	stage = clt->plugged || con->staged ||
		trs_con_sig_room(&con->c) < trs_clt_req_wrs(req);
	if (!stage) {
		/* not plugged: straight out, one post for this request */
		trs_con_sig_chain(&con->c, wr, trs_clt_req_wrs(req), false);
		err = trs_con_post_send(&con->c, req->bind ? &req->bind_wr : wr,
					trs_clt_req_wrs(req));
		if (err) {
			trs_clt_req_unmap(req);
			return err;
		}
	}
	req->path = path;
	req->con = con;
	req->refs = 1;		/* the server's response */
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
	if (stage) {
		trs_clt_con_stage(con, req);
		if (!clt->plugged)
			trs_clt_con_flush(con);
	} else {
		trs_clt_req_posted(req);
	}
	return 0;
}
