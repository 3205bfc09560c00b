// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * srv.c - server context: listeners, RDMA CM events, sessions (one chunk
 * pool each) and the paths that join them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/epoll.h>

#include "srv.h"

void trs_srv_path_fail(struct trs_srv_path *path, const char *fmt, ...)
{
	char why[160];
	va_list ap;
	unsigned int i;

	if (path->fail_pending)
		return;
	path->fail_pending = true;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	trs_wrn("session %s: closing path from %s: %s",
		path->sess->named ? path->sess->name : "(unnamed)", path->addr, why);
	for (i = 0; i < path->ncons; i++)
		path->cons[i].c.dead = true;
}

static void trs_srv_con_fail(struct trs_con *con, const char *why)
{
	struct trs_srv_con *scon = trs_container_of(con, struct trs_srv_con, c);

	trs_srv_path_fail(scon->path, "%s", why);
}

static struct ibtrs_srv_sess *trs_srv_sess_create(struct ibtrs_srv_ctx *ctx,
						  const uint8_t *uuid)
{
	struct ibtrs_srv_sess *sess;
	uint32_t i;

	sess = calloc(1, sizeof(*sess));
	if (!sess)
		return NULL;
	sess->ops = calloc(ctx->params.queue_depth, sizeof(*sess->ops));
	if (!sess->ops)
		goto out_free_sess;
	sess->pool_len = (size_t)ctx->params.queue_depth * ctx->slot_size;
	sess->pool = aligned_alloc(4096, sess->pool_len);
	if (!sess->pool)
		goto out_free_ops;
	memset(sess->pool, 0, sess->pool_len);
	for (i = 0; i < ctx->params.queue_depth; i++) {
		sess->ops[i].sess = sess;
		sess->ops[i].id = i;
	}
	sess->ctx = ctx;
	memcpy(sess->uuid, uuid, TRS_UUID_LEN);
	TAILQ_INIT(&sess->paths);
	TAILQ_INSERT_TAIL(&ctx->sessions, sess, link);
	return sess;

out_free_ops:
	free(sess->ops);
out_free_sess:
	free(sess);
	return NULL;
}

static void trs_srv_sess_free(struct ibtrs_srv_sess *sess)
{
	TAILQ_REMOVE(&sess->ctx->sessions, sess, link);
	free(sess->pool);
	free(sess->ops);
	free(sess);
}

void trs_srv_sess_maybe_free(struct ibtrs_srv_sess *sess)
{
	if (sess->dead && !sess->active_ops)
		trs_srv_sess_free(sess);
}

static void trs_srv_path_teardown(struct trs_srv_path *path)
{
	struct ibtrs_srv_sess *sess = path->sess;
	struct ibtrs_srv_ctx *ctx = sess->ctx;
	uint64_t t0 = trs_now_us();
	unsigned int i;

	/* answers still queued on the path go nowhere */
	for (i = 0; i < path->ncons; i++)
		if (path->cons[i].created)
			trs_srv_con_tx_drop(&path->cons[i]);
	for (i = 0; i < ctx->params.queue_depth; i++) {
		struct ibtrs_srv_op *op = &sess->ops[i];

		if (op->pending_path == path) {
			op->pending_path = NULL;
			op->pending_con = NULL;
		}
		if (op->path == path && op->state != TRS_OP_PULLING)
			trs_srv_op_orphan(op);
	}
	/*
	 * QPs and CQs, then the pool MR and the PD, then the cm_ids: when the
	 * device is being removed, librdmacm closes its context with the last
	 * cm_id on it, so nothing of ours may be left on the device by then.
	 */
	for (i = 0; i < path->ncons; i++) {
		struct trs_srv_con *con = &path->cons[i];

		if (!con->c.cm_id)
			continue;
		if (con->established && !con->c.removed)
			rdma_disconnect(con->c.cm_id);
		if (con->created) {
			trs_con_stats_sum(&ctx->con_st, &con->c);
			trs_con_destroy(&con->c);
		}
	}
	/*
	 * A pulled write whose RDMA READ was out never completes now: with
	 * the QPs gone nothing more lands in its chunk, which is free again
	 * (a retry of the write waiting for it starts).
	 */
	for (i = 0; i < ctx->params.queue_depth; i++)
		if (sess->ops[i].path == path &&
		    sess->ops[i].state == TRS_OP_PULLING)
			trs_srv_op_finish(&sess->ops[i]);
	trs_srv_rekey_free(path);	/* windows before the MR they are bound to */
	if (path->pool_mr)
		ibv_dereg_mr(path->pool_mr);
	if (path->replay_mr)
		ibv_dereg_mr(path->replay_mr);
	if (path->pd)
		ibv_dealloc_pd(path->pd);
	trs_dev_put(path->dev);
	for (i = 0; i < path->ncons; i++)
		if (path->cons[i].c.cm_id)
			rdma_destroy_id(path->cons[i].c.cm_id);
	if (trs_now_us() - t0 > 200000)
		trs_wrn("slow teardown of the path from %s: %llu ms", path->addr,
			(unsigned long long)(trs_now_us() - t0) / 1000);
	TAILQ_REMOVE(&sess->paths, path, link);
	sess->npaths--;
	free(path->cons);
	free(path);
	if (!sess->npaths) {
		sess->dead = true;
		if (sess->link_up && ctx->ops.link_ev)
			ctx->ops.link_ev(sess, IBTRS_SRV_LINK_EV_DISCONNECTED,
					 sess->priv);
		trs_srv_sess_maybe_free(sess);
	}
}

static void trs_srv_process_failures(struct ibtrs_srv_ctx *ctx)
{
	struct ibtrs_srv_sess *sess, *snext;
	struct trs_srv_path *path, *pnext;

	for (sess = TAILQ_FIRST(&ctx->sessions); sess; sess = snext) {
		snext = TAILQ_NEXT(sess, link);
		for (path = TAILQ_FIRST(&sess->paths); path; path = pnext) {
			pnext = TAILQ_NEXT(path, link);
			if (path->fail_pending) {
				bool last = sess->npaths == 1;

				trs_srv_path_teardown(path);
				if (last)
					break;	/* sess may be freed */
			}
		}
	}
}

static void trs_srv_reject(struct rdma_cm_id *id, int code, const char *why)
{
	struct trs_msg_conn_rsp rsp;
	struct trs_conn_params p = { .ver_major = TRS_PROTO_VER_MAJOR,
				     .ver_minor = TRS_PROTO_VER_MINOR,
				     .rej = (uint16_t)code };

	trs_wrn("rejecting connection: %s (%s)", trs_rej_str(code), why);
	trs_conn_rsp_encode(&rsp, &p);
	rdma_reject(id, &rsp, sizeof(rsp));
	rdma_destroy_id(id);
}

static void trs_srv_addr_str(struct rdma_cm_id *id, char *out, size_t len)
{
	struct sockaddr *sa = rdma_get_peer_addr(id);
	char ip[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, ip, sizeof(ip));
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr, ip, sizeof(ip));
	snprintf(out, len, "%s", ip);
}

static struct trs_srv_path *trs_srv_path_create(struct ibtrs_srv_sess *sess,
						const struct trs_conn_req_info *in,
						struct rdma_cm_id *id)
{
	struct trs_srv_path *path = calloc(1, sizeof(*path));

	if (!path)
		return NULL;
	path->cons = calloc(in->cid_num, sizeof(*path->cons));
	if (!path->cons) {
		free(path);
		return NULL;
	}
	path->sess = sess;
	path->ncons = in->cid_num;
	path->recon_cnt = in->recon_cnt;
	memcpy(path->uuid, in->path_uuid, TRS_UUID_LEN);
	/* silence is counted from now on, also before the path joins */
	/* before the join too: an unjoined path answers heartbeats (its
	 * HB_ACK's completion called a NULL handler: a segfault any peer could
	 * cause by sending a heartbeat before INFO_REQ) */
	path->hb_cqe.done = trs_srv_hb_done;
	path->created_us = trs_now_us();
	trs_hb_start(&path->hb, sess->ctx->opts.hb_interval_ms,
		     sess->ctx->opts.hb_missed_max, path->created_us);
	trs_srv_addr_str(id, path->addr, sizeof(path->addr));
	TAILQ_INSERT_TAIL(&sess->paths, path, link);
	sess->npaths++;
	return path;
}

/* @rd: the client's responder resources (RDMA READs it lets us post) */
static void trs_srv_connect_request(struct ibtrs_srv_ctx *ctx,
				    struct rdma_cm_id *id, const void *pdata,
				    uint8_t plen, uint8_t rd)
{
	struct trs_conn_req_info in;
	struct ibtrs_srv_sess *sess;
	struct trs_srv_path *path = NULL, *p;
	struct trs_srv_con *con;
	struct trs_msg_conn_rsp rsp;
	struct trs_conn_params params = ctx->params;
	struct rdma_conn_param cp = {
		.private_data = &rsp, .private_data_len = sizeof(rsp),
		.responder_resources = 0, .initiator_depth = 0,
		.rnr_retry_count = 7,
	};
	struct trs_con_attr attr = {
		/*
		 * per IO: RDMA_WRITE of read data + the answer, mostly
		 * unsignaled, so retired only by a later signaled one: twice
		 * that; + HB and INFO_RSP; + a pulled write's RDMA READ per
		 * IO (signaled, outside the answers' accounting)
		 */
		.sq_size = 5 * ctx->params.queue_depth + TRS_SRV_SQ_CTRL,
		/* per IO: the client's WRITE_WITH_IMM; + HB, INFO_REQ */
		.rq_size = ctx->params.queue_depth + TRS_RX_EXTRA,
		.ntx = ctx->params.queue_depth,
		.epfd = ctx->epfd,
		.arm_on_sweep = true,	/* the daemon sleeps on our fd */
		.recv_done = trs_srv_recv_done,
		.send_done = trs_srv_send_done,
		.fail = trs_srv_con_fail,
	};
	uint8_t tmo = TRS_ACK_TIMEOUT;
	const char *why = "";
	char why_buf[64];
	int rej, err;

	trs_srv_addr_str(id, why_buf, sizeof(why_buf));
	trs_info("connect request from %s", why_buf);
	rej = trs_conn_req_decode(pdata, plen, &in, &why);
	if (rej) {
		trs_srv_reject(id, rej, why);
		return;
	}
	rej = trs_negotiate_version(in.ver_major, in.ver_minor, &params.ver_minor);
	if (rej) {
		trs_srv_reject(id, rej, "version");
		return;
	}
	TAILQ_FOREACH(sess, &ctx->sessions, link)
		if (!sess->dead && !memcmp(sess->uuid, in.sess_uuid, TRS_UUID_LEN))
			break;
	if (!sess) {
		if (!(in.flags & TRS_CONN_F_FIRST)) {
			trs_srv_reject(id, TRS_REJ_NO_SESS, "unknown session");
			return;
		}
		sess = trs_srv_sess_create(ctx, in.sess_uuid);
		if (!sess) {
			trs_srv_reject(id, TRS_REJ_NOMEM, "session allocation");
			return;
		}
	}
	TAILQ_FOREACH(p, &sess->paths, link) {
		if (p->fail_pending || memcmp(p->uuid, in.path_uuid, TRS_UUID_LEN))
			continue;
		if (p->recon_cnt != in.recon_cnt) {
			/* The client reconnected before we noticed: drop the stale path. */
			trs_srv_path_fail(p, "replaced by reconnect %u", in.recon_cnt);
			continue;
		}
		path = p;
	}
	if (path && (path->ncons != in.cid_num || path->cons[in.cid].c.cm_id)) {
		trs_srv_reject(id, path->ncons != in.cid_num ? TRS_REJ_BAD_CID :
			       TRS_REJ_BUSY, "connection index");
		return;
	}
	if (!path) {
		path = trs_srv_path_create(sess, &in, id);
		if (!path) {
			trs_srv_reject(id, TRS_REJ_NOMEM, "path allocation");
			if (!sess->npaths) {
				sess->dead = true;
				trs_srv_sess_maybe_free(sess);
			}
			return;
		}
	}
	con = &path->cons[in.cid];
	con->path = path;
	con->c.cid = in.cid;
	con->c.owner = path;
	con->c.cm_id = id;
	id->context = &con->ictx;
	/*
	 * A protection domain per path, as the kernel server has: a key of
	 * this path's pool works on this path's QPs only, never on another
	 * session's (a shared PD would let any client that guesses or saw
	 * another session's pool key write into its chunks).
	 */
	if (!path->pd) {
		path->pd = ibv_alloc_pd(id->verbs);
		if (!path->pd) {
			err = -ENOMEM;
			goto out_fail;
		}
	} else if (path->pd->context != id->verbs) {
		err = -EXDEV;	/* all connections of a path use one device */
		goto out_fail;
	}
	attr.pd = path->pd;
	err = trs_con_create(&con->c, id, &attr);
	if (err)
		goto out_fail;
	con->created = true;
	err = trs_srv_con_tx_init(con, attr.sq_size);
	if (err)
		goto out_fail;
	/* write_mode pull: as many RDMA READs as the client and NIC allow */
	cp.initiator_depth = rd < TRS_PULL_READS ? rd : TRS_PULL_READS;
	if (cp.initiator_depth > con->c.dev->attr.max_qp_init_rd_atom)
		cp.initiator_depth = (uint8_t)con->c.dev->attr.max_qp_init_rd_atom;
	con->pull_depth = cp.initiator_depth;
	if (!path->dev) {
		path->dev = con->c.dev;
		trs_dev_hold(path->dev);
		/* rekey: remote access only through the chunks' windows */
		path->pool_mr = ibv_reg_mr(path->pd, sess->pool, sess->pool_len,
					   IBV_ACCESS_LOCAL_WRITE |
					   (ctx->opts.chunk_mode == IBTRS_CHUNK_REKEY ?
					    IBV_ACCESS_MW_BIND :
					    IBV_ACCESS_REMOTE_WRITE));
		if (!path->pool_mr) {
			err = -errno;
			goto out_fail;
		}
	}
	/*
	 * chunk_mode rekey leaves the ACK timeout to the CM: on rxe a
	 * retransmission executes a finished re-bind again, which the window
	 * refuses (its key moved on) and the path fails (PROTOCOL.md 9); the
	 * CM's longer timeout makes spurious retries rare, as for the kernel
	 * client. The heartbeat still detects a dead path.
	 */
	if (ctx->opts.chunk_mode != IBTRS_CHUNK_REKEY)
		rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
				&tmo, sizeof(tmo));
	trs_conn_rsp_encode(&rsp, &params);
	if (rdma_accept(id, &cp)) {
		err = -errno;
		goto out_fail;
	}
	return;

out_fail:
	/* The cm_id belongs to the path now; reject and let teardown free it. */
	trs_conn_rsp_encode(&rsp, &(struct trs_conn_params){
		.ver_major = TRS_PROTO_VER_MAJOR, .rej = TRS_REJ_NOMEM });
	rdma_reject(id, &rsp, sizeof(rsp));
	trs_srv_path_fail(path, "setting up connection %u failed: %s", in.cid,
			  strerror(-err));
}

static int trs_srv_listen(struct trs_srv_listener *l, bool report);

/*
 * A listener bound to an address loses it when the netdev goes away or
 * changes, or when its RDMA device is removed; the tick re-creates it until
 * that works again (the device may come back under a new name or index).
 */
static void trs_srv_listener_event(struct trs_srv_listener *l,
				   enum rdma_cm_event_type type)
{
	trs_wrn("listener on %s: %s; listening again", l->addr,
		rdma_event_str(type));
	rdma_destroy_id(l->id);	/* the event is acked already */
	l->id = NULL;
	l->retry_us = trs_now_us();
	if (type == RDMA_CM_EVENT_DEVICE_REMOVAL)
		l->ctx->devwatch.sync = true;
}

/* The device of @con is going away: close its path (teardown releases the
 * path's QPs, CQs, pool MR and device reference after this poll batch). */
static void trs_srv_con_removed(struct trs_srv_con *con)
{
	con->c.removed = true;
	con->path->sess->ctx->devwatch.sync = true;
	trs_srv_path_fail(con->path, "RDMA device removed");
}

static void trs_srv_cm_event(struct trs_evsrc *src)
{
	struct ibtrs_srv_ctx *ctx = trs_container_of(src, struct ibtrs_srv_ctx, cm_src);
	struct trs_cm_ev ev;

	while (trs_cm_event_next(ctx->cm_ch, &ev)) {
		enum rdma_cm_event_type type = ev.type;
		struct rdma_cm_id *id = ev.id;
		struct trs_srv_idctx *ictx = id->context;
		struct trs_srv_con *con;
		int status = ev.status;

		if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			id->context = NULL;	/* inherited from the listener */
			trs_srv_connect_request(ctx, id, ev.plen ? ev.pdata : NULL,
						ev.plen,
						ev.rd);
			continue;
		}
		if (!ictx) {
			trs_dbg("event %s on an unknown id", rdma_event_str(type));
			continue;
		}
		if (ictx->listener) {
			trs_srv_listener_event(trs_container_of(ictx,
					struct trs_srv_listener, ictx), type);
			continue;
		}
		con = trs_container_of(ictx, struct trs_srv_con, ictx);
		if (type == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			trs_srv_con_removed(con);
			continue;
		}
		if (con->c.dead || con->path->fail_pending)
			continue;
		switch (type) {
		case RDMA_CM_EVENT_ESTABLISHED:
			con->established = true;
			break;
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
			break;
		default:
			trs_srv_path_fail(con->path, "%s (status %d)",
					  rdma_event_str(type), status);
		}
	}
}

static void trs_srv_tick(struct trs_evsrc *src)
{
	struct ibtrs_srv_ctx *ctx = trs_container_of(src, struct ibtrs_srv_ctx, tick_src);
	struct ibtrs_srv_sess *sess;
	struct trs_srv_path *path;
	uint64_t now = trs_now_us();

	int i;

	trs_fd_drain(src->fd);
	for (i = 0; i < ctx->nlisteners; i++) {
		struct trs_srv_listener *l = &ctx->listeners[i];

		if (l->id || now < l->retry_us)
			continue;
		if (!trs_srv_listen(l, false))
			trs_wrn("listening on %s again", l->addr);
		else
			l->retry_us = now + TRS_LISTEN_RETRY_MS * 1000ULL;
	}
	TAILQ_FOREACH(sess, &ctx->sessions, link)
		TAILQ_FOREACH(path, &sess->paths, link)
			trs_srv_path_tick(path, now);
}

static int trs_srv_listen(struct trs_srv_listener *l, bool report)
{
	struct ibtrs_srv_ctx *ctx = l->ctx;
	const char *addr = l->addr;
	struct sockaddr_storage ss;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	struct rdma_cm_id *id;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(ctx->opts.port);
	} else if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(ctx->opts.port);
	} else {
		trs_set_error("cannot parse listen address '%s'", addr);
		return -EINVAL;
	}
	if (rdma_create_id(ctx->cm_ch, &id, &l->ictx, RDMA_PS_TCP))
		return -errno;
	if (rdma_bind_addr(id, (struct sockaddr *)&ss) || rdma_listen(id, 64)) {
		int err = -errno;

		if (report)	/* at open time */
			trs_set_error("listening on %s:%u: %s", addr,
				      ctx->opts.port, strerror(errno));
		rdma_destroy_id(id);
		return err;
	}
	l->id = id;
	return 0;
}

void ibtrs_srv_close(struct ibtrs_srv_ctx *ctx)
{
	struct ibtrs_srv_sess *sess;
	struct trs_srv_path *path;
	int i;

	if (!ctx)
		return;
	for (i = 0; i < ctx->nlisteners; i++)
		if (ctx->listeners[i].id)
			rdma_destroy_id(ctx->listeners[i].id);
	TAILQ_FOREACH(sess, &ctx->sessions, link)
		TAILQ_FOREACH(path, &sess->paths, link)
			trs_srv_path_fail(path, "server closing");
	trs_srv_process_failures(ctx);
	while ((sess = TAILQ_FIRST(&ctx->sessions)))
		trs_srv_sess_free(sess);	/* unanswered ops are dropped */
	if (ctx->tick_src.fd > 0)
		close(ctx->tick_src.fd);
	trs_devwatch_close(&ctx->devwatch);
	if (ctx->cm_ch)
		rdma_destroy_event_channel(ctx->cm_ch);
	if (ctx->epfd >= 0)
		close(ctx->epfd);
	free(ctx->listeners);
	free(ctx);
}

struct ibtrs_srv_ctx *ibtrs_srv_open(const struct ibtrs_srv_opts *opts,
				     const struct ibtrs_srv_ops *ops,
				     void *ctx_priv, int *err)
{
	struct ibtrs_srv_ctx *ctx;
	const char *why = "";
	int i, ret = -EINVAL, flags;

	if (!opts || !ops || !ops->rdma_ev || !opts->addrs || opts->naddrs < 1) {
		trs_set_error("ibtrs_srv_open: need addresses and an rdma_ev callback");
		goto out_err;
	}
	ret = -ENOMEM;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		goto out_err;
	ctx->epfd = -1;
	ctx->opts = *opts;
	ctx->ops = *ops;
	ctx->priv = ctx_priv;
	TAILQ_INIT(&ctx->sessions);
	if (!ctx->opts.port)
		ctx->opts.port = IBTRS_DEFAULT_PORT;
	if (!ctx->opts.queue_depth)
		ctx->opts.queue_depth = 128;
	if (!ctx->opts.chunk_size)
		ctx->opts.chunk_size = 128 * 1024;
	if (!ctx->opts.hb_interval_ms)
		ctx->opts.hb_interval_ms = 500;
	if (!ctx->opts.hb_missed_max)
		ctx->opts.hb_missed_max = 3;
	if ((unsigned int)ctx->opts.chunk_mode > IBTRS_CHUNK_REKEY) {
		trs_set_error("ibtrs_srv_open: unknown chunk_mode %d",
			      (int)ctx->opts.chunk_mode);
		ret = -EINVAL;
		goto out_close;
	}
	ctx->params = (struct trs_conn_params){
		.ver_major = TRS_PROTO_VER_MAJOR, .ver_minor = TRS_PROTO_VER_MINOR,
		.queue_depth = ctx->opts.queue_depth,
		.chunk_size = ctx->opts.chunk_size,
		.hdr_area = TRS_HDR_AREA,
		.max_usr_len = TRS_MAX_USR_LEN,
	};
	ctx->slot_size = ctx->params.chunk_size + ctx->params.hdr_area;
	if (trs_conn_params_check(&ctx->params, &why)) {
		trs_set_error("ibtrs_srv_open: %s", why);
		ret = -EINVAL;
		goto out_close;
	}
	ctx->epfd = epoll_create1(EPOLL_CLOEXEC);
	ctx->listeners = calloc((size_t)opts->naddrs, sizeof(*ctx->listeners));
	if (ctx->epfd < 0 || !ctx->listeners)
		goto out_close;
	ctx->cm_ch = rdma_create_event_channel();
	if (!ctx->cm_ch) {
		ret = -errno;
		trs_set_error("rdma_create_event_channel: %s (no RDMA device?)",
			      strerror(errno));
		goto out_close;
	}
	flags = fcntl(ctx->cm_ch->fd, F_GETFL);
	fcntl(ctx->cm_ch->fd, F_SETFL, flags | O_NONBLOCK);
	ctx->cm_src.fd = ctx->cm_ch->fd;
	ctx->cm_src.handler = trs_srv_cm_event;
	ret = trs_epoll_add(ctx->epfd, &ctx->cm_src);
	if (ret)
		goto out_close;
	ctx->tick_src.fd = trs_timerfd_create(TRS_TICK_MS);
	if (ctx->tick_src.fd < 0) {
		ret = ctx->tick_src.fd;
		goto out_close;
	}
	ctx->tick_src.handler = trs_srv_tick;
	ret = trs_epoll_add(ctx->epfd, &ctx->tick_src);
	if (ret)
		goto out_close;
	trs_devwatch_open(&ctx->devwatch, ctx->epfd);
	for (i = 0; i < opts->naddrs; i++) {
		struct trs_srv_listener *l = &ctx->listeners[i];

		l->ictx.listener = true;
		l->ctx = ctx;
		l->addr = opts->addrs[i];
		ret = trs_srv_listen(l, true);
		if (ret)
			goto out_close;
		ctx->nlisteners++;
	}
	return ctx;

out_close:
	ibtrs_srv_close(ctx);
out_err:
	if (err)
		*err = ret;
	return NULL;
}

int ibtrs_srv_fd(const struct ibtrs_srv_ctx *ctx)
{
	return ctx->epfd;
}

static void trs_srv_watch_ready(struct trs_evsrc *src)
{
	struct trs_srv_watch *w = trs_container_of(src, struct trs_srv_watch, src);

	w->cb(w->arg);
}

int ibtrs_srv_watch_fd(struct ibtrs_srv_ctx *ctx, int fd, void (*cb)(void *arg),
		       void *arg)
{
	struct trs_srv_watch *w;
	int err;

	if (fd < 0 || !cb)
		return -EINVAL;
	if (ctx->nwatch >= TRS_SRV_WATCH_MAX)
		return -ENOSPC;
	w = &ctx->watch[ctx->nwatch];
	w->src.fd = fd;
	w->src.handler = trs_srv_watch_ready;
	w->cb = cb;
	w->arg = arg;
	err = trs_epoll_add(ctx->epfd, &w->src);
	if (!err)
		ctx->nwatch++;
	return err;
}

int ibtrs_srv_poll(struct ibtrs_srv_ctx *ctx, int timeout_ms)
{
	int err;

	ctx->ncalls = 0;
	ibtrs_srv_plug(ctx);	/* answers given in rdma_ev go out in chains */
	/* the clock once the wait is over: the liveness of every receive */
	err = trs_epoll_dispatch_at(ctx->epfd, timeout_ms, &ctx->now_us);
	ibtrs_srv_unplug(ctx);
	if (err)
		return err;
	trs_srv_process_failures(ctx);
	trs_devwatch_poll(&ctx->devwatch);
	return ctx->ncalls;
}

const char *ibtrs_srv_sessname(const struct ibtrs_srv_sess *sess)
{
	return sess->name;
}

void ibtrs_srv_sess_pool(const struct ibtrs_srv_sess *sess, void **addr,
			 size_t *len)
{
	*addr = sess->pool;
	*len = sess->pool_len;
}

void ibtrs_srv_set_sess_priv(struct ibtrs_srv_sess *sess, void *priv)
{
	sess->priv = priv;
}

void *ibtrs_srv_ctx_priv(const struct ibtrs_srv_ctx *ctx)
{
	return ctx->priv;
}

int ibtrs_srv_sess_paths(const struct ibtrs_srv_sess *sess)
{
	const struct trs_srv_path *p;
	int n = 0;

	TAILQ_FOREACH(p, &sess->paths, link)
		n += p->joined && !p->fail_pending;
	return n;
}

void ibtrs_srv_get_stats(const struct ibtrs_srv_ctx *ctx,
			 struct ibtrs_srv_stats *st)
{
	struct trs_con_stats cs = ctx->con_st;
	const struct ibtrs_srv_sess *sess;
	const struct trs_srv_path *path;
	unsigned int i;

	TAILQ_FOREACH(sess, &ctx->sessions, link)
		TAILQ_FOREACH(path, &sess->paths, link)
			for (i = 0; i < path->ncons; i++)
				if (path->cons[i].created)
					trs_con_stats_sum(&cs, &path->cons[i].c);
	*st = ctx->st;
	st->post_sends = cs.post_sends;
	st->send_wrs = cs.send_wrs;
	st->post_recvs = cs.post_recvs;
	st->recv_wrs = cs.recv_wrs;
	st->cq_sweeps = cs.sweeps;
	st->cqes = cs.cqes;
	st->cq_arms = cs.arms;
	st->cq_events = cs.events;
}
