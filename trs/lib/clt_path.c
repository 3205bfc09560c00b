// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * clt_path.c - a client path: connect its RDMA CM connections, join the
 * server session (INFO_REQ/INFO_RSP), heartbeat, fail, reconnect.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "clt.h"

static int trs_parse_ip(const char *s, uint16_t port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		return 0;
	}
	if (inet_pton(AF_INET6, s, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		return 0;
	}
	return -EINVAL;
}

struct trs_clt_path *trs_clt_path_alloc(struct ibtrs_clt *clt, const char *addr)
{
	struct trs_clt_path *path;
	char buf[96], *at;

	if (strlen(addr) >= sizeof(buf)) {
		trs_set_error("path address too long: %s", addr);
		return NULL;
	}
	path = calloc(1, sizeof(*path));
	if (!path)
		return NULL;
	path->clt = clt;
	snprintf(path->addr_str, sizeof(path->addr_str), "%s", addr);
	snprintf(buf, sizeof(buf), "%s", addr);
	at = strchr(buf, '@');
	if (at) {
		*at = 0;
		if (trs_parse_ip(buf, 0, &path->src))
			goto out_bad;
		path->has_src = true;
		at++;
	} else {
		at = buf;
	}
	if (trs_parse_ip(at, clt->opts.port, &path->dst))
		goto out_bad;
	trs_uuid_gen(path->uuid);
	path->ncons = clt->opts.cons_per_path;
	path->state = IBTRS_PATH_CONNECTING;
	TAILQ_INIT(&path->inflight_list);
	return path;

out_bad:
	trs_set_error("cannot parse path address '%s' (want ip or src_ip@dst_ip)",
		      addr);
	free(path);
	return NULL;
}

void trs_clt_path_free(struct trs_clt_path *path)
{
	free(path);
}

static void trs_clt_ctrl_send_done(struct trs_cqe *cqe, struct ibv_wc *wc)
{
	struct trs_con *con = trs_container_of(cqe, struct trs_con, ctrl_cqe);
	struct trs_clt_con *ccon = trs_container_of(con, struct trs_clt_con, c);

	if (wc->status != IBV_WC_SUCCESS)
		trs_clt_path_fail(ccon->path, "control send failed: %s",
				  ibv_wc_status_str(wc->status));
}

static void trs_clt_con_fail(struct trs_con *con, const char *why)
{
	struct trs_clt_con *ccon = trs_container_of(con, struct trs_clt_con, c);

	trs_clt_path_fail(ccon->path, "%s", why);
}

static void trs_clt_hb_done(struct trs_cqe *cqe, struct ibv_wc *wc)
{
	struct trs_clt_path *path = trs_container_of(cqe, struct trs_clt_path, hb_cqe);

	if (wc->status != IBV_WC_SUCCESS)
		trs_clt_path_fail(path, "heartbeat send failed: %s",
				  ibv_wc_status_str(wc->status));
}

int trs_clt_path_connect(struct trs_clt_path *path)
{
	struct ibtrs_clt *clt = path->clt;
	unsigned int i;
	int err;

	path->state = IBTRS_PATH_CONNECTING;
	path->recon_cnt++;
	path->nestablished = 0;
	path->info_sent = false;
	path->fail_pending = false;
	path->deadline_us = trs_now_us() + clt->opts.connect_timeout_ms * 1000ULL;
	path->hb_cqe.done = trs_clt_hb_done;
	path->cons = calloc(path->ncons, sizeof(*path->cons));
	if (!path->cons)
		return -ENOMEM;
	for (i = 0; i < path->ncons; i++) {
		struct trs_clt_con *con = &path->cons[i];

		con->path = path;
		con->c.cid = (uint16_t)i;
		con->c.owner = path;
		con->staged_tail = &con->staged;
		if (rdma_create_id(clt->cm_ch, &con->c.cm_id, con, RDMA_PS_TCP)) {
			err = -errno;
			trs_clt_path_fail(path, "rdma_create_id: %s", strerror(errno));
			return err;
		}
		if (rdma_resolve_addr(con->c.cm_id,
				      path->has_src ? (struct sockaddr *)&path->src : NULL,
				      (struct sockaddr *)&path->dst,
				      (int)clt->opts.connect_timeout_ms)) {
			err = -errno;
			trs_clt_path_fail(path, "rdma_resolve_addr: %s", strerror(errno));
			return err;
		}
	}
	return 0;
}

void trs_clt_path_fail(struct trs_clt_path *path, const char *fmt, ...)
{
	va_list ap;
	unsigned int i;

	if (path->fail_pending || path->state == IBTRS_PATH_CLOSED ||
	    path->state == IBTRS_PATH_RECONNECTING)
		return;
	path->fail_pending = true;
	va_start(ap, fmt);
	vsnprintf(path->fail_reason, sizeof(path->fail_reason), fmt, ap);
	va_end(ap);
	trs_wrn("%s: path %s failed: %s", path->clt->sessname, path->addr_str,
		path->fail_reason);
	if (path->cons)
		for (i = 0; i < path->ncons; i++)
			path->cons[i].c.dead = true;
}

/*
 * Release every connection and registration of @path and move its IO to
 * the session's pending queue (failover). Runs outside completion context.
 */
void trs_clt_path_teardown(struct trs_clt_path *path)
{
	struct ibtrs_clt *clt = path->clt;
	struct trs_clt_req *req;
	unsigned int i;
	uint64_t now = trs_now_us();

	/* Reverse walk + insert at head keeps the original order. */
	while ((req = TAILQ_LAST(&path->inflight_list, trs_req_list))) {
		TAILQ_REMOVE(&path->inflight_list, req, link);
		trs_clt_req_unmap(req);
		req->path = NULL;
		req->con = NULL;
		req->need_inv = false;
		TAILQ_INSERT_HEAD(&clt->pending, req, link);
		path->st.failovers++;
	}
	path->inflight = 0;
	/* Memory windows first: a bound type-2 MW holds a reference on its
	 * QP, and rxe's destroy_qp waits for it (for a long time). */
	now = trs_now_us();
	trs_clt_path_mem_free(path);
	free(path->chunk_rkey);		/* the next join brings new keys */
	path->chunk_rkey = NULL;
	path->keys_got = 0;
	if (trs_now_us() - now > 200000)
		trs_wrn("%s: slow release of memory of path %s: %llu ms",
			clt->sessname, path->addr_str,
			(unsigned long long)(trs_now_us() - now) / 1000);
	if (path->cons) {
		for (i = 0; i < path->ncons; i++) {
			struct trs_clt_con *con = &path->cons[i];

			trs_clt_con_drop_staged(con);	/* re-queued above */
			if (!con->c.cm_id)
				continue;
			uint64_t t0 = trs_now_us(), t1, t2;

			if (con->established && !con->c.removed)
				rdma_disconnect(con->c.cm_id);
			t1 = trs_now_us();
			trs_con_stats_sum(&path->con_st, &con->c);
			if (con->c.qp || con->c.cq)
				trs_con_destroy(&con->c);
			t2 = trs_now_us();
			rdma_destroy_id(con->c.cm_id);
			if (trs_now_us() - t0 > 200000)
				trs_wrn("%s: slow teardown of path %s: disconnect %llu ms, "
					"destroy qp/cq %llu ms, destroy id %llu ms",
					clt->sessname, path->addr_str,
					(unsigned long long)(t1 - t0) / 1000,
					(unsigned long long)(t2 - t1) / 1000,
					(unsigned long long)(trs_now_us() - t2) / 1000);
		}
		free(path->cons);
		path->cons = NULL;
	}
	path->dev = NULL;
	path->fail_pending = false;
	if (path->state != IBTRS_PATH_CLOSED) {
		uint32_t delay = trs_backoff_ms(path->attempts,
						clt->opts.reconnect_min_ms,
						clt->opts.reconnect_max_ms,
						trs_random32());

		path->state = IBTRS_PATH_RECONNECTING;
		path->attempts++;
		path->reconnect_at_us = now + delay * 1000ULL;
		trs_info("%s: path %s reconnects in %u ms", clt->sessname,
			 path->addr_str, delay);
	}
	if (!ibtrs_clt_paths_connected(clt) && !clt->all_down_since_us)
		clt->all_down_since_us = now;
}

static void trs_clt_con_addr_resolved(struct trs_clt_con *con)
{
	struct trs_clt_path *path = con->path;
	struct ibtrs_clt *clt = path->clt;
	struct trs_con_attr attr = {
		/* per IO: bind + write_with_imm + local_inv; + HB/INFO */
		.sq_size = 3 * TRS_CLT_QD_CAP + 16,
		/* one response per IO + heartbeats + INFO_RSP */
		.rq_size = TRS_CLT_QD_CAP + TRS_RX_EXTRA,
		.epfd = clt->epfd,
		.recv_done = trs_clt_recv_done,
		.send_done = trs_clt_ctrl_send_done,
		.fail = trs_clt_con_fail,
	};
	uint8_t tmo = TRS_ACK_TIMEOUT;
	int err;

	if (attr.sq_size > (unsigned int)0 && con->c.cm_id->verbs) {
		struct ibv_device_attr da;

		if (!ibv_query_device(con->c.cm_id->verbs, &da) &&
		    attr.sq_size > (unsigned int)da.max_qp_wr)
			attr.sq_size = (unsigned int)da.max_qp_wr;
	}
	err = trs_con_create(&con->c, con->c.cm_id, &attr);
	if (!err)
		/* a request's WRs, bind + WRITE_WITH_IMM: 2 of the 3 per IO
		 * (a LOCAL_INV and control sends are signaled, outside it) */
		err = trs_con_sig_init(&con->c, (attr.sq_size - 16) / 3 * 2,
				       trs_clt_con_room);
	if (err) {
		trs_clt_path_fail(path, "creating QP/CQ failed: %s", strerror(-err));
		return;
	}
	con->req_cqe.done = trs_clt_req_send_done;
	if (con->c.cid == 0)
		path->dev = con->c.dev;
	if (rdma_set_option(con->c.cm_id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
			    &tmo, sizeof(tmo)))
		trs_dbg("rdma_set_option(ACK_TIMEOUT) failed: %s", strerror(errno));
	if (rdma_resolve_route(con->c.cm_id, (int)clt->opts.connect_timeout_ms))
		trs_clt_path_fail(path, "rdma_resolve_route: %s", strerror(errno));
}

static void trs_clt_con_route_resolved(struct trs_clt_con *con)
{
	struct trs_clt_path *path = con->path;
	struct trs_msg_conn_req msg;
	struct trs_conn_req_info in = {
		.ver_major = TRS_PROTO_VER_MAJOR,
		.ver_minor = TRS_PROTO_VER_MINOR,
		.cid = con->c.cid,
		.cid_num = (uint16_t)path->ncons,
		.recon_cnt = path->recon_cnt,
		.flags = TRS_CONN_F_FIRST,
	};
	struct rdma_conn_param param = {
		.private_data = &msg,
		.private_data_len = sizeof(msg),
		/* the server RDMA-READs pulled writes only (write_mode pull) */
		.responder_resources = path->clt->opts.write_mode ==
				       IBTRS_WRITE_PULL ? TRS_PULL_READS : 0,
		.initiator_depth = 0,
		.retry_count = TRS_RETRY_COUNT,
		.rnr_retry_count = 7,
	};

	memcpy(in.sess_uuid, path->clt->uuid, TRS_UUID_LEN);
	memcpy(in.path_uuid, path->uuid, TRS_UUID_LEN);
	trs_conn_req_encode(&msg, &in);
	if (rdma_connect(con->c.cm_id, &param))
		trs_clt_path_fail(path, "rdma_connect: %s", strerror(errno));
}

static void trs_clt_con_established(struct trs_clt_con *con, const void *pdata,
				    uint8_t plen)
{
	struct trs_clt_path *path = con->path;
	struct ibtrs_clt *clt = path->clt;
	struct trs_conn_params p;
	const char *why = "";
	int err;

	err = trs_conn_rsp_decode(pdata, plen, &p, &why);
	if (err) {
		trs_clt_path_fail(path, "bad accept from server: %s", why);
		return;
	}
	err = trs_clt_setup_params(clt, &p);
	if (err) {
		trs_clt_path_fail(path, "server parameters unusable: %s",
				  strerror(-err));
		return;
	}
	con->established = true;
	if (++path->nestablished < path->ncons)
		return;
	trs_info_req_encode(path->cons[0].c.ctrl_buf, clt->sessname);
	err = trs_con_post_ctrl(&path->cons[0].c, sizeof(struct trs_msg_info_req));
	if (err)
		trs_clt_path_fail(path, "posting INFO_REQ: %s", strerror(-err));
	path->info_sent = true;
}

static void trs_clt_con_rejected(struct trs_clt_con *con, int status,
				 const void *pdata, uint8_t plen)
{
	struct trs_conn_params p;
	const char *why = NULL;

	if (pdata && plen >= sizeof(struct trs_msg_conn_rsp) &&
	    trs_conn_rsp_decode(pdata, plen, &p, &why) == -ECONNREFUSED)
		trs_clt_path_fail(con->path, "server rejected connection: %s (code %u)",
				  trs_rej_str(p.rej), p.rej);
	else
		trs_clt_path_fail(con->path, "connection rejected (status %d%s)",
				  status, status == 28 ? "" : ", no listener?");
}

/*
 * The device of @con is going away (in any state of the path): fail the path
 * now; its teardown, after this poll batch, releases everything it holds on
 * the device, and the session then lets librdmacm close the device.
 */
static void trs_clt_con_removed(struct trs_clt_con *con)
{
	struct trs_clt_path *path = con->path;

	con->c.removed = true;
	path->clt->devwatch.sync = true;
	trs_clt_path_fail(path, "RDMA device removed");
}

void trs_clt_cm_event(struct trs_evsrc *src)
{
	struct ibtrs_clt *clt = trs_container_of(src, struct ibtrs_clt, cm_src);
	struct trs_cm_ev ev;

	while (trs_cm_event_next(clt->cm_ch, &ev)) {
		struct trs_clt_con *con = ev.id->context;
		enum rdma_cm_event_type type = ev.type;
		int status = ev.status;
		uint8_t *pdata = ev.pdata;
		uint8_t plen = ev.plen;

		if (!con)
			continue;
		if (type == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			trs_clt_con_removed(con);
			continue;
		}
		if (con->c.dead || con->path->fail_pending)
			continue;
		trs_dbg("%s: path %s cid %u: %s", clt->sessname, con->path->addr_str,
			con->c.cid, rdma_event_str(type));
		switch (type) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			con->stage = TRS_STAGE_ADDR;
			trs_clt_con_addr_resolved(con);
			break;
		case RDMA_CM_EVENT_ROUTE_RESOLVED:
			con->stage = TRS_STAGE_ROUTE;
			trs_clt_con_route_resolved(con);
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			trs_clt_con_established(con, plen ? pdata : NULL, plen);
			break;
		case RDMA_CM_EVENT_REJECTED:
			trs_clt_con_rejected(con, status, plen ? pdata : NULL, plen);
			break;
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
			break;
		default:
			trs_clt_path_fail(con->path, "%s (status %d)",
					  rdma_event_str(type), status);
			break;
		}
	}
}

/*
 * KEYS (chunk_mode rekey), before INFO_RSP: the first keys of the chunks,
 * in chunk order, each chunk once.
 */
static void trs_clt_keys(struct trs_clt_path *path, const void *buf,
			 uint32_t len)
{
	struct ibtrs_clt *clt = path->clt;
	uint32_t keys[TRS_KEYS_PER_MSG], first, n;
	const char *why = "";

	if (path->state != IBTRS_PATH_CONNECTING || !path->info_sent) {
		trs_clt_path_fail(path, "unexpected KEYS");
		return;
	}
	if (trs_keys_decode(buf, len, clt->qd, &first, &n, keys, &why)) {
		trs_clt_path_fail(path, "bad KEYS: %s", why);
		return;
	}
	if (first != path->keys_got) {
		trs_clt_path_fail(path, "KEYS for chunk %u, expected chunk %u",
				  first, path->keys_got);
		return;
	}
	if (!path->chunk_rkey) {
		path->chunk_rkey = calloc(clt->qd, sizeof(*path->chunk_rkey));
		if (!path->chunk_rkey) {
			trs_clt_path_fail(path, "no memory for the chunks' keys");
			return;
		}
	}
	memcpy(&path->chunk_rkey[first], keys, n * sizeof(*keys));
	path->keys_got += n;
}

static void trs_clt_info_rsp(struct trs_clt_path *path, const void *buf,
			     uint32_t len)
{
	struct ibtrs_clt *clt = path->clt;
	struct trs_info info;
	const char *why = "";
	int err;

	if (path->state != IBTRS_PATH_CONNECTING || !path->info_sent) {
		trs_clt_path_fail(path, "unexpected INFO_RSP");
		return;
	}
	if (trs_info_rsp_decode(buf, len, &clt->params, &info, &why)) {
		trs_clt_path_fail(path, "bad INFO_RSP: %s", why);
		return;
	}
	/* chunk_mode rekey: every chunk's key came first, and only then */
	if (!!(info.flags & TRS_INFO_F_REKEY) != !!path->keys_got ||
	    ((info.flags & TRS_INFO_F_REKEY) && path->keys_got != clt->qd)) {
		trs_clt_path_fail(path, "INFO_RSP %s chunk_mode rekey after keys "
				  "of %u of %u chunks",
				  info.flags & TRS_INFO_F_REKEY ? "announces" :
				  "does not announce", path->keys_got, clt->qd);
		return;
	}
	if (clt->opts.write_mode == IBTRS_WRITE_PULL &&
	    !(info.flags & TRS_INFO_F_PULL)) {
		trs_clt_path_fail(path, "write_mode pull: the server does not "
				  "pull writes");
		return;
	}
	path->pool_addr = info.pool_addr;
	path->pool_rkey = info.pool_rkey;
	err = trs_clt_path_mem_setup(path);
	if (err) {
		trs_clt_path_fail(path, "memory registration failed: %s",
				  strerror(-err));
		return;
	}
	if (path->attempts || path->st.reconnects || path->recon_cnt > 1)
		path->st.reconnects++;
	path->attempts = 0;
	path->state = IBTRS_PATH_CONNECTED;
	trs_hb_start(&path->hb, clt->opts.hb_interval_ms, clt->opts.hb_missed_max,
		     trs_now_us());
	clt->all_down_since_us = 0;
	clt->loss_expired = false;
	trs_info("%s: path %s connected (%u connection%s, %s, chunk_mode %s, "
		 "write_mode %s)", clt->sessname, path->addr_str, path->ncons,
		 path->ncons > 1 ? "s" : "",
		 path->use_mw ? "memory windows" : "no memory windows",
		 trs_chunk_mode_name(path->chunk_rkey ? TRS_CHUNK_REKEY :
				     TRS_CHUNK_STATIC),
		 trs_write_mode_name((int)clt->opts.write_mode));
}

static void trs_clt_io_rsp(struct trs_clt_path *path, uint32_t id, int status,
			   bool invalidated, uint32_t inv_rkey, const void *rsp)
{
	struct ibtrs_clt *clt = path->clt;
	struct trs_clt_req *req = &clt->reqs[id];

	if (!req->active || req->path != path || !req->rsp_pending) {
		trs_clt_path_fail(path, "response for chunk %u that has no request"
				  " on this path", id);
		return;
	}
	/* chunk_mode rekey: the server bound the chunk anew before answering */
	if (path->chunk_rkey)
		path->chunk_rkey[id] = ibv_inc_rkey(path->chunk_rkey[id]);
	if (invalidated) {
		if (!req->need_inv || inv_rkey != req->rkey) {
			trs_clt_path_fail(path, "server invalidated rkey 0x%x, "
					  "expected 0x%x", inv_rkey, req->rkey);
			return;
		}
		req->need_inv = false;
	}
	req->rsp_pending = false;
	req->status = trs_clt_rsp_check(req, status, rsp);
	path->st.msgs_recv++;
	if (req->need_inv) {
		/* The server did not invalidate: do it before completing. */
		struct ibv_send_wr wr = {
			.wr_id = (uintptr_t)&req->inv_cqe,
			.opcode = IBV_WR_LOCAL_INV,
			.send_flags = IBV_SEND_SIGNALED,
			.invalidate_rkey = req->rkey,
		};
		int err = trs_con_post_send(&req->con->c, &wr, 1);

		if (err) {
			trs_clt_path_fail(path, "LOCAL_INV post failed: %s",
					  strerror(-err));
			return;
		}
		path->st.reg_wrs++;
		req->refs++;
	}
	trs_clt_req_done_ref(req);
}

void trs_clt_recv_done(struct trs_con *con, struct trs_rx *rx, struct ibv_wc *wc)
{
	struct trs_clt_con *ccon = trs_container_of(con, struct trs_clt_con, c);
	struct trs_clt_path *path = ccon->path;
	struct ibtrs_clt *clt = path->clt;
	uint8_t msg[TRS_MAX_RECV_MSG];
	struct trs_rx_msg m;
	uint64_t now;
	__u64 rtt;
	const char *why = "";

	if (trs_con_rx_begin(con, rx, wc, false, clt->have_params ? clt->qd : 0,
			     &m, msg, &why)) {
		trs_clt_path_fail(path, "bad receive: %s", why);
		return;
	}
	/* life: the round's clock is close enough (the timeout is 1.5 s) */
	trs_hb_on_rx(&path->hb, clt->now_us);
	switch (m.kind) {
	case TRS_RX_HB:
		if (trs_con_post_send_imm(&path->cons[0].c,
					  trs_to_imm(TRS_IMM_HB_ACK, m.id, 0),
					  &path->hb_cqe))
			trs_clt_path_fail(path, "cannot answer heartbeat");
		break;
	case TRS_RX_HB_ACK:
		now = trs_now_us();	/* a round trip: the clock now */
		if (!trs_hb_on_ack(&path->hb, (uint16_t)m.id, now, &rtt))
			path->st.hb_rtt_us = rtt;
		break;
	case TRS_RX_IO_RSP:
		if (path->state != IBTRS_PATH_CONNECTED) {
			trs_clt_path_fail(path, "IO response before the path joined");
			break;
		}
		trs_clt_io_rsp(path, m.id, m.status, m.inv, m.inv_rkey,
			       m.msg_type == TRS_MSG_IO_RSP ? msg : NULL);
		break;
	case TRS_RX_MSG:	/* KEYS or INFO_RSP (trs_rx_decode_clt()) */
		if (m.msg_type == TRS_MSG_KEYS)
			trs_clt_keys(path, msg, m.len);
		else
			trs_clt_info_rsp(path, msg, m.len);
		break;
	default:
		trs_clt_path_fail(path, "unexpected receive kind %d", m.kind);
	}
}

void trs_clt_path_tick(struct trs_clt_path *path, uint64_t now)
{
	struct ibtrs_clt *clt = path->clt;
	uint16_t seq;

	if (path->fail_pending)
		return;
	switch (path->state) {
	case IBTRS_PATH_CONNECTING:
		if (now > path->deadline_us) {
			unsigned int i, qps = 0, routes = 0;

			for (i = 0; i < path->ncons; i++) {
				qps += path->cons[i].stage >= TRS_STAGE_ADDR;
				routes += path->cons[i].stage >= TRS_STAGE_ROUTE;
			}
			trs_clt_path_fail(path, "connect timeout (%u ms): of %u "
					  "connections %u addr resolved, %u route "
					  "resolved, %u established, INFO %s",
					  clt->opts.connect_timeout_ms, path->ncons, qps,
					  routes, path->nestablished,
					  path->info_sent ? "sent" : "not sent");
		}
		break;
	case IBTRS_PATH_CONNECTED:
		if (trs_hb_timed_out(&path->hb, now)) {
			trs_clt_path_fail(path, "heartbeat timeout: nothing received "
					  "for %llu ms", (unsigned long long)
					  trs_hb_idle_us(&path->hb, now) / 1000);
			break;
		}
		if (trs_hb_due(&path->hb, now, &seq)) {
			if (trs_con_post_send_imm(&path->cons[0].c,
						  trs_to_imm(TRS_IMM_HB, seq, 0),
						  &path->hb_cqe))
				trs_clt_path_fail(path, "cannot post heartbeat");
			else
				path->st.hb_sent++;
		}
		break;
	case IBTRS_PATH_RECONNECTING:
		if (now >= path->reconnect_at_us) {
			trs_info("%s: path %s reconnecting (attempt %u)",
				 clt->sessname, path->addr_str, path->attempts);
			if (clt->devwatch.src.fd < 0)
				clt->devwatch.sync = true;	/* see dev.c */
			trs_clt_path_connect(path);
		}
		break;
	case IBTRS_PATH_CLOSED:
		break;
	}
}
