// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibtrs-clt-conn.c - the client's connections and paths: RDMA CM steps,
 * per-connection CQ, QP, receive ring and MR pool (kmod/core helpers), the
 * INFO exchange, a failed path's teardown and failover, reconnect.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "ibtrs-clt-pri.h"

/* ---------------------------------------------------------------- */
/* Connection set-up and teardown                                    */

static void ibtrs_clt_qp_event(struct ib_event *ev, void *ctx)
{
	struct ibtrs_clt_con *con = ctx;
	struct ibtrs_clt_path *path = con->path;

	if (ev->event == IB_EVENT_COMM_EST)
		return;
	ibtrs_clt_err(path, "connection %d: QP event %s (%d)\n", con->cid,
		      ib_event_msg(ev->event), ev->event);
	ibtrs_clt_path_fail(path, "QP event");
}

static void ibtrs_clt_free_rx(struct ibtrs_clt_con *con)
{
	int i;

	for (i = 0; i < con->rx_num; i++)
		ibtrs_dma_buf_free(con->path->dev, &con->rx[i].b);
	kfree(con->rx);
	con->rx = NULL;
	con->rx_num = 0;
}

static int ibtrs_clt_alloc_rx(struct ibtrs_clt_con *con, int n)
{
	int i, ret;

	con->rx = kcalloc(n, sizeof(*con->rx), GFP_KERNEL);
	if (!con->rx)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct ibtrs_clt_iu *iu = &con->rx[i];

		iu->con = con;
		iu->cqe.done = ibtrs_clt_recv_done;
		ret = ibtrs_dma_buf_alloc(con->path->dev, &iu->b,
					  TRS_MAX_RECV_MSG, DMA_FROM_DEVICE);
		if (ret)
			goto out_free_rx;
		iu->sge.addr = iu->b.dma;
		iu->sge.length = TRS_MAX_RECV_MSG;
		iu->sge.lkey = con->path->pd->local_dma_lkey;
		iu->wr.wr_cqe = &iu->cqe;
		iu->wr.sg_list = &iu->sge;
		iu->wr.num_sge = 1;
		con->rx_num = i + 1;
	}
	ibtrs_rx_chain_take(&con->rx_chain);
	return 0;

out_free_rx:
	ibtrs_clt_free_rx(con);
	return ret;
}

/*
 * Called from the CM handler once the address of @con is resolved. The
 * first connection of the path allocates the PD and the INFO buffer; the
 * others must be on the same device. On an error, what was made stays for
 * the connect's unwinding (drain, then ibtrs_clt_destroy_ib()): receives
 * may be posted already.
 */
static int ibtrs_clt_create_ib(struct ibtrs_clt_con *con)
{
	struct ibtrs_clt_path *path = con->path;
	struct ib_device *dev = con->cm_id->device;
	int sq, rq, i, ret;

	if (con->cid == 0) {
		WRITE_ONCE(path->dev, dev);
		/* mr_mode global: one-segment reads use its unsafe global rkey */
		path->pd = ib_alloc_pd(dev, path->mr_mode == IBTRS_CLT_MR_GLOBAL ?
				       IB_PD_UNSAFE_GLOBAL_RKEY : 0);
		if (IS_ERR(path->pd)) {
			ret = PTR_ERR(path->pd);
			path->pd = NULL;
			return ret;
		}
		ret = ibtrs_dma_buf_alloc(dev, &path->txb, TRS_MAX_RECV_MSG,
					  DMA_TO_DEVICE);
		if (ret)
			return ret;
	} else if (dev != path->dev || !path->pd) {
		ibtrs_clt_err(path, "connection %d resolved to another device\n",
			      con->cid);
		return -EXDEV;
	}
	/*
	 * Per chunk LOCAL_INV + MR + request (a read; the LOCAL_INV comes
	 * before the MR under inval_mode none, after the answer otherwise)
	 * or data + request (a
	 * write of more segments than fit beside the header); the entries of
	 * answered requests not retired yet (a signaled one in
	 * IBTRS_CLT_SIG_EVERY retires them); heartbeats, acks, INFO_REQ.
	 */
	sq = 3 * (ibtrs_clt_max_queue_depth + IBTRS_CLT_SIG_EVERY) +
	     IBTRS_CLT_RX_EXTRA;
	/* an answer per chunk, heartbeats and their acks, a repost batch */
	rq = ibtrs_clt_max_queue_depth + IBTRS_CLT_RX_EXTRA + IBTRS_CLT_RX_BATCH;

	/*
	 * +2: drain WRs of both queues. Interrupt-driven connection i takes
	 * completion vector i, which .map_queues of the block layer aligns
	 * with the hardware queue i (ibtrs_clt_con_affinity()); a polled one
	 * is reaped by its poller only.
	 */
	con->cq = ib_alloc_cq(dev, con, sq + rq + 2,
			      con->cid % dev->num_comp_vectors,
			      con->poll ? IB_POLL_DIRECT : IB_POLL_SOFTIRQ);
	if (IS_ERR(con->cq)) {
		ret = PTR_ERR(con->cq);
		con->cq = NULL;
		return ret;
	}
	ret = ibtrs_rc_qp_create(con->cm_id, path->pd, con->cq, sq, rq,
				 IBTRS_CLT_MAX_SGE + 1, ibtrs_clt_qp_event, con,
				 &con->max_sge);
	if (ret)
		return ret;
	con->qp = con->cm_id->qp;
	ret = ibtrs_clt_alloc_rx(con, rq);
	if (ret)
		return ret;
	con->last_rx = jiffies;
	for (i = 0; i < con->rx_num; i++) {
		ret = ibtrs_clt_post_recv(&con->rx[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* The read registrations of @con, one per chunk id. */
static int ibtrs_clt_alloc_mrs(struct ibtrs_clt_con *con)
{
	struct ibtrs_clt_path *path = con->path;
	struct ibtrs_clt_sess *sess = path->sess;
	u32 i;

	con->mrs = kcalloc(sess->queue_depth, sizeof(*con->mrs), GFP_KERNEL);
	if (!con->mrs)
		return -ENOMEM;
	con->nr_mrs = sess->queue_depth;
	for (i = 0; i < con->nr_mrs; i++) {
		struct ib_mr *mr = ib_alloc_mr(path->pd, IB_MR_TYPE_MEM_REG,
					       sess->mr_pages);

		if (IS_ERR(mr))
			return PTR_ERR(mr);
		con->mrs[i] = mr;
	}
	return 0;
}

static void ibtrs_clt_free_mrs(struct ibtrs_clt_con *con)
{
	u32 i;

	for (i = 0; con->mrs && i < con->nr_mrs; i++)
		if (con->mrs[i])
			ib_dereg_mr(con->mrs[i]);
	kfree(con->mrs);
	con->mrs = NULL;
	con->nr_mrs = 0;
}

/* Undo ibtrs_clt_create_ib() of every connection and the cm_ids; drained. */
static void ibtrs_clt_destroy_ib(struct ibtrs_clt_path *path)
{
	struct ibtrs_clt_sess *sess = path->sess;
	int i;

	for (i = 0; i < path->ncons; i++) {
		struct ibtrs_clt_con *con = &path->cons[i];

		ibtrs_clt_free_mrs(con);
		ibtrs_qp_cq_destroy(con->cm_id, &con->qp, &con->cq);
		if (con->rx)
			ibtrs_clt_free_rx(con);
	}
	if (path->hdr_dma) {
		ib_dma_unmap_single(path->dev, path->hdr_dma, sess->hdrs_len,
				    DMA_TO_DEVICE);
		path->hdr_dma = 0;
	}
	ibtrs_dma_buf_free(path->dev, &path->txb);
	if (path->pd) {
		ib_dealloc_pd(path->pd);
		path->pd = NULL;
	}
	for (i = 0; i < path->ncons; i++) {
		struct ibtrs_clt_con *con = &path->cons[i];

		if (con->cm_id) {
			rdma_destroy_id(con->cm_id);
			con->cm_id = NULL;
		}
	}
	WRITE_ONCE(path->dev, NULL);
}

static int ibtrs_clt_route_resolved(struct ibtrs_clt_con *con)
{
	struct ibtrs_clt_path *path = con->path;
	struct rdma_conn_param param = {};
	struct trs_msg_conn_req req;
	struct trs_conn_req_info ri = {};

	ri.ver_major = TRS_PROTO_VER_MAJOR;
	ri.ver_minor = TRS_PROTO_VER_MINOR;
	ri.cid = con->cid;
	ri.cid_num = path->ncons;
	ri.recon_cnt = path->recon_cnt;
	ri.flags = TRS_CONN_F_FIRST;
	memcpy(ri.sess_uuid, path->sess->uuid, TRS_UUID_LEN);
	memcpy(ri.path_uuid, path->uuid, TRS_UUID_LEN);
	trs_conn_req_encode(&req, &ri);
	param.private_data = &req;
	param.private_data_len = sizeof(req);
	param.retry_count = 7;	/* as nvme-rdma: ~0.5 s without an ACK */
	param.rnr_retry_count = 7;
	/* the server RDMA-READs pulled writes only (write_mode pull) */
	if (path->write_mode == TRS_WRITE_PULL)
		param.responder_resources =
			min_t(u32, TRS_PULL_READS,
			      con->cm_id->device->attrs.max_qp_rd_atom);
	return rdma_connect_locked(con->cm_id, &param);
}

static void ibtrs_clt_cm_step_done(struct ibtrs_clt_con *con, int err)
{
	con->cm_err = err;
	complete(&con->cm_done);
}

static int ibtrs_clt_cm_handler(struct rdma_cm_id *cm_id,
				struct rdma_cm_event *ev)
{
	struct ibtrs_clt_con *con = cm_id->context;
	struct ibtrs_clt_path *path = con->path;
	const char *why = "";
	int err;

	if (READ_ONCE(con->cm_dead))
		return 0;	/* the connect unwinds and destroys us */
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		err = ibtrs_clt_create_ib(con);
		if (!err)
			err = rdma_resolve_route(cm_id, IBTRS_CLT_CM_TMO_MS);
		if (err)
			ibtrs_clt_cm_step_done(con, err);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		err = ibtrs_clt_route_resolved(con);
		if (err)
			ibtrs_clt_cm_step_done(con, err);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		err = trs_conn_rsp_decode(ev->param.conn.private_data,
					  ev->param.conn.private_data_len,
					  &con->params, &why);
		if (err)
			ibtrs_clt_err(path, "bad accept: %s\n", why);
		ibtrs_clt_cm_step_done(con, err);
		break;
	case RDMA_CM_EVENT_REJECTED:
		err = trs_conn_rsp_decode(ev->param.conn.private_data,
					  ev->param.conn.private_data_len,
					  &con->params, &why);
		ibtrs_clt_err(path, "connection %d rejected: %s (%s)\n", con->cid,
			      err == -ECONNREFUSED ? why : "no IBTRS reject",
			      rdma_reject_msg(cm_id, ev->status));
		ibtrs_clt_cm_step_done(con, -ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		ibtrs_clt_err(path, "connection %d: CM event %s (%d)\n", con->cid,
			      rdma_event_msg(ev->event), ev->status);
		ibtrs_clt_cm_step_done(con, -EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		/* any connection's end fails the whole path */
		ibtrs_clt_path_fail(path, rdma_event_msg(ev->event));
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		ibtrs_clt_err(path, "unexpected CM event %s (%d)\n",
			      rdma_event_msg(ev->event), ev->status);
		ibtrs_clt_path_fail(path, "unexpected CM event");
		break;
	}
	return 0;
}

/* The accept of the first path sizes the session; later ones must agree. */
static int ibtrs_clt_sess_size(struct ibtrs_clt_path *path)
{
	struct ibtrs_clt_sess *sess = path->sess;
	const struct trs_conn_params *p = &path->params;
	u32 pages, hdr_len, i;
	int ret;

	if (p->queue_depth > ibtrs_clt_max_queue_depth) {
		ibtrs_clt_err(path, "server queue depth %u > ibtrs_clt_max_queue_depth %u\n",
			      p->queue_depth, ibtrs_clt_max_queue_depth);
		return -EINVAL;
	}
	if (p->max_usr_len < sess->want_usr_len) {
		ibtrs_clt_err(path, "server max_usr_len %u < %u\n",
			      p->max_usr_len, sess->want_usr_len);
		return -EINVAL;
	}
	pages = min_t(u32, p->chunk_size / PAGE_SIZE + 1,
		      path->dev->attrs.max_fast_reg_page_list_len);
	if (pages < 2 || path->max_sge < 2) {
		ibtrs_clt_err(path, "device lacks fast registration or SGEs\n");
		return -EOPNOTSUPP;
	}
	if (sess->sized) {
		if (p->queue_depth != sess->queue_depth ||
		    p->chunk_size != sess->chunk_size ||
		    min(p->max_usr_len, sess->want_usr_len) != sess->max_usr_len ||
		    p->hdr_area != sess->hdr_area) {
			ibtrs_clt_err(path, "accept differs from the session's (queue depth %u, chunk %u, header area %u)\n",
				      sess->queue_depth, sess->chunk_size,
				      sess->hdr_area);
			return -EINVAL;
		}
		if (path->mr_mode == IBTRS_CLT_MR_BOUNCE && !sess->bounce) {
			ibtrs_clt_err(path, "mr_mode bounce on a session sized without a bounce pool\n");
			return -EINVAL;
		}
		if (path->max_sge < sess->max_segs || pages < sess->mr_pages) {
			ibtrs_clt_err(path, "device takes fewer segments than the session's %u\n",
				      sess->max_segs);
			return -EINVAL;
		}
		return 0;
	}
	/*
	 * One request header per chunk, sized for the user's largest user
	 * header, mapped once per path (ibtrs_clt_path_map_hdrs()).
	 */
	sess->max_usr_len = min(p->max_usr_len, sess->want_usr_len);
	hdr_len = sizeof(struct trs_msg_io_req) + sess->max_usr_len;
	sess->hdr_stride = ALIGN(hdr_len, IBTRS_CLT_HDR_ALIGN);
	sess->hdrs_len = (size_t)p->queue_depth * sess->hdr_stride;
	sess->hdrs = kzalloc(sess->hdrs_len, GFP_KERNEL);
	sess->ios = kcalloc(p->queue_depth, sizeof(*sess->ios), GFP_KERNEL);
	if (!sess->hdrs || !sess->ios) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < p->queue_depth; i++) {
		struct ibtrs_clt_io *io = &sess->ios[i];

		io->sess = sess;
		io->id = i;
		atomic_set(&io->state, IBTRS_CLT_IO_IDLE);
		INIT_LIST_HEAD(&io->pending);
		io->hdr = sess->hdrs + (size_t)i * sess->hdr_stride;
		io->inv_cqe.done = ibtrs_clt_inv_done;
	}
	sess->chunk_size = p->chunk_size;
	sess->hdr_area = p->hdr_area;
	sess->slot_size = p->chunk_size + p->hdr_area;
	sess->mr_pages = pages;
	/*
	 * Up to max_sge data segments: beside the header SGE in one
	 * WRITE_WITH_IMM when they fit, else in a WRITE of their own
	 * (ibtrs_clt_io_post()). A read's buffer is one MR of @pages.
	 */
	sess->max_segs = min3(path->max_sge, pages, (u32)IBTRS_CLT_MAX_SGE);
	/* an unaligned buffer of n pages spans n + 1 */
	sess->max_io = min_t(u32, p->chunk_size, (pages - 1) * PAGE_SIZE);
	if (path->mr_mode == IBTRS_CLT_MR_BOUNCE) {
		ret = ibtrs_clt_bounce_alloc(sess, p->queue_depth);
		if (ret) {
			ibtrs_clt_err(path, "no memory for a bounce pool of %u x %u bytes\n",
				      p->queue_depth, sess->max_io);
			goto out_free;
		}
	}
	WRITE_ONCE(sess->queue_depth, p->queue_depth);
	sess->sized = true;
	return 0;

out_free:
	kfree(sess->hdrs);
	kfree(sess->ios);
	sess->hdrs = NULL;
	sess->ios = NULL;
	return ret;
}

static int ibtrs_clt_send_info_req(struct ibtrs_clt_path *path)
{
	struct ibtrs_clt_con *con = &path->cons[0];

	trs_info_req_encode(path->txb.buf, path->sess->sessname);
	if (ibtrs_post_send_one(con->qp, path->pd, &con->ctl_cqe,
				path->txb.dma, sizeof(struct trs_msg_info_req)))
		return -EIO;
	this_cpu_inc(path->stats->msgs);
	return 0;
}

/* Start the CM steps of @con: a cm_id, then the address resolution. */
static int ibtrs_clt_con_start(struct ibtrs_clt_con *con)
{
	struct ibtrs_clt_path *path = con->path;
	struct sockaddr *src = NULL;
	int ret;

	con->cm_id = rdma_create_id(&init_net, ibtrs_clt_cm_handler, con,
				    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(con->cm_id)) {
		ret = PTR_ERR(con->cm_id);
		con->cm_id = NULL;
		return ret;
	}
	if (ibtrs_clt_ack_timeout) {
		ret = rdma_set_ack_timeout(con->cm_id, ibtrs_clt_ack_timeout);
		if (ret)
			return ret;
	}
	if (path->addr.src.ss_family != AF_UNSPEC)
		src = (struct sockaddr *)&path->addr.src;
	return rdma_resolve_addr(con->cm_id, src,
				 (struct sockaddr *)&path->addr.dst,
				 IBTRS_CLT_CM_TMO_MS);
}

/*
 * Connect connections @from..@to-1 of @path: start them all, then wait for
 * each to be established (or to fail).
 */
static int ibtrs_clt_cons_connect(struct ibtrs_clt_path *path, int from,
				  int to)
{
	int i, ret;

	for (i = from; i < to; i++) {
		ret = ibtrs_clt_con_start(&path->cons[i]);
		if (ret)
			return ret;
	}
	for (i = from; i < to; i++) {
		struct ibtrs_clt_con *con = &path->cons[i];

		if (!wait_for_completion_timeout(&con->cm_done,
						 msecs_to_jiffies(3 * IBTRS_CLT_CM_TMO_MS)))
			return -ETIMEDOUT;
		if (con->cm_err)
			return con->cm_err;
	}
	return 0;
}

/* Every accept of the path must agree; the path's is cid 0's. */
static int ibtrs_clt_cons_check(struct ibtrs_clt_path *path)
{
	const struct trs_conn_params *p0 = &path->cons[0].params;
	int i;

	path->params = *p0;
	path->max_sge = path->cons[0].max_sge;
	for (i = 1; i < path->ncons; i++) {
		const struct ibtrs_clt_con *con = &path->cons[i];

		if (con->params.queue_depth != p0->queue_depth ||
		    con->params.chunk_size != p0->chunk_size ||
		    con->params.max_usr_len != p0->max_usr_len ||
		    con->params.hdr_area != p0->hdr_area) {
			ibtrs_clt_err(path, "accept of connection %d differs from connection 0's\n",
				      i);
			return -EINVAL;
		}
		path->max_sge = min(path->max_sge, con->max_sge);
	}
	return 0;
}

/* Let pollers reap polled connection @con (@live), or wait for them. */
static void ibtrs_clt_poll_set(struct ibtrs_clt_con *con, bool live)
{
	while (test_and_set_bit_lock(IBTRS_CLT_POLLING, &con->poll_flags))
		usleep_range(10, 20);
	con->poll_live = live;
	clear_bit_unlock(IBTRS_CLT_POLLING, &con->poll_flags);
}

/* No poller reaps the polled connections of @path from now on. */
void ibtrs_clt_poll_stop(struct ibtrs_clt_path *path)
{
	int i;

	for (i = path->sess->nr_cons; i < path->ncons; i++)
		ibtrs_clt_poll_set(&path->cons[i], false);
}

/* Connect @path and join the session; process context, conn_mutex held. */
static int __ibtrs_clt_path_connect(struct ibtrs_clt_path *path)
{
	struct ibtrs_clt_sess *sess = path->sess;
	unsigned long flags;
	int i, ret;

	init_completion(&path->info_done);
	/* chunk_mode rekey: this join's KEYS and INFO_RSP say */
	path->rekey = false;
	path->keys_got = 0;
	atomic_set(&path->failing, 0);
	for (i = 0; i < path->ncons; i++) {
		struct ibtrs_clt_con *con = &path->cons[i];

		init_completion(&con->cm_done);
		con->cm_err = -ETIMEDOUT;
		WRITE_ONCE(con->cm_dead, false);
	}
	spin_lock_irqsave(&sess->lock, flags);
	WRITE_ONCE(path->state, IBTRS_CLT_PATH_CONNECTING);
	spin_unlock_irqrestore(&sess->lock, flags);

	/* cid 0 makes the PD on the device; the others then join it */
	ret = ibtrs_clt_cons_connect(path, 0, 1);
	if (!ret)
		ret = ibtrs_clt_cons_connect(path, 1, path->ncons);
	if (!ret)
		ret = ibtrs_clt_cons_check(path);
	if (ret)
		goto out_disconnect;

	ret = ibtrs_clt_sess_size(path);
	if (ret)
		goto out_disconnect;
	for (i = 0; i < path->ncons; i++) {
		ret = ibtrs_clt_alloc_mrs(&path->cons[i]);
		if (ret)
			goto out_disconnect;
	}
	/* the request headers: mapped once, synced per IO */
	path->hdr_dma = ib_dma_map_single(path->dev, sess->hdrs, sess->hdrs_len,
					  DMA_TO_DEVICE);
	if (ib_dma_mapping_error(path->dev, path->hdr_dma)) {
		path->hdr_dma = 0;
		ret = -ENOMEM;
		goto out_disconnect;
	}

	/* every connection is established: INFO_REQ on cid 0 */
	ret = ibtrs_clt_send_info_req(path);
	if (ret)
		goto out_disconnect;
	if (!wait_for_completion_timeout(&path->info_done,
					 msecs_to_jiffies(IBTRS_CLT_CM_TMO_MS)))
		ret = -ETIMEDOUT;
	else
		ret = path->info_err;
	if (ret)
		goto out_disconnect;

	spin_lock_irqsave(&path->lock, flags);
	trs_hb_start(&path->hb, ibtrs_clt_hb_interval_ms, ibtrs_clt_hb_missed_max,
		     ibtrs_clt_now_us());
	path->lat_ewma = 0;
	spin_unlock_irqrestore(&path->lock, flags);
	for (i = sess->nr_cons; i < path->ncons; i++)
		ibtrs_clt_poll_set(&path->cons[i], true);
	spin_lock_irqsave(&sess->lock, flags);
	if (path->state == IBTRS_CLT_PATH_CONNECTING) {
		atomic_set(&path->mp_inflight, 0);
		WRITE_ONCE(path->state, IBTRS_CLT_PATH_CONNECTED);
		sess->all_down_at = 0;
	} else {
		ret = -ECONNRESET;
	}
	spin_unlock_irqrestore(&sess->lock, flags);
	if (ret) {
		ibtrs_clt_poll_stop(path);
		goto out_disconnect;
	}
	queue_delayed_work(ibtrs_clt_wq, &path->hb_work, 0);
	ibtrs_clt_pending_run(sess, false);
	ibtrs_clt_info(path, "connected (%d connections, queue depth %u, chunk %u, %d segments)\n",
		       path->ncons, sess->queue_depth, sess->chunk_size,
		       sess->max_segs);
	return 0;

out_disconnect:
	/*
	 * A path failure ends the waits above while a CM step may still run
	 * (creating the QP, connecting): wait for it, and ignore later ones.
	 */
	for (i = 0; i < path->ncons; i++) {
		struct ibtrs_clt_con *con = &path->cons[i];

		if (!con->cm_id)
			continue;
		rdma_lock_handler(con->cm_id);
		WRITE_ONCE(con->cm_dead, true);
		rdma_unlock_handler(con->cm_id);
		rdma_disconnect(con->cm_id);
		if (con->qp)
			ib_drain_qp(con->qp);
	}
	ibtrs_clt_destroy_ib(path);
	spin_lock_irqsave(&sess->lock, flags);
	WRITE_ONCE(path->state, IBTRS_CLT_PATH_IDLE);
	spin_unlock_irqrestore(&sess->lock, flags);
	ibtrs_clt_err(path, "cannot connect: %d\n", ret);
	return ret;
}

int ibtrs_clt_path_connect(struct ibtrs_clt_path *path)
{
	int ret;

	mutex_lock(&path->conn_mutex);
	ret = __ibtrs_clt_path_connect(path);
	mutex_unlock(&path->conn_mutex);
	return ret;
}

/* Every path down for less than ibtrs_clt_ctrl_loss_tmo_ms. Under sess->lock. */
bool ibtrs_clt_may_wait(struct ibtrs_clt_sess *sess)
{
	return !sess->closing && sess->all_down_at &&
	       time_before(jiffies, sess->all_down_at +
			   msecs_to_jiffies(ibtrs_clt_ctrl_loss_tmo_ms));
}

/*
 * Re-post the IO waiting in sess->pending (a path is back), or fail it
 * with -ENOTCONN when nothing can carry it and waiting is over (@force:
 * the session closes). The posts run without the session lock (a failed
 * post takes it to fail its path); an IO being posted is off the list
 * meanwhile.
 */
void ibtrs_clt_pending_run(struct ibtrs_clt_sess *sess, bool force)
{
	struct ibtrs_clt_io *io, *tmp;
	unsigned long flags;
	LIST_HEAD(failed);
	int ret;

	spin_lock_irqsave(&sess->lock, flags);
	while (!list_empty(&sess->pending)) {
		io = list_first_entry(&sess->pending, struct ibtrs_clt_io,
				      pending);
		list_del_init(&io->pending);
		if (force || sess->closing) {
			ret = -ENOTCONN;
		} else {
			spin_unlock_irqrestore(&sess->lock, flags);
			ret = ibtrs_clt_io_start(io);
			spin_lock_irqsave(&sess->lock, flags);
		}
		if (!ret)
			continue;
		io->path = NULL;
		/* a path went down meanwhile, or a reconnect may come */
		if (!force && (ret != -ENOTCONN || ibtrs_clt_may_wait(sess))) {
			list_add(&io->pending, &sess->pending);
			break;
		}
		list_add_tail(&io->pending, &failed);
	}
	if (!list_empty(&sess->pending) && !force)
		mod_delayed_work(ibtrs_clt_wq, &sess->pending_work,
				 msecs_to_jiffies(100));
	spin_unlock_irqrestore(&sess->lock, flags);
	list_for_each_entry_safe(io, tmp, &failed, pending) {
		list_del_init(&io->pending);
		ibtrs_clt_io_abort(io, -ENOTCONN);
	}
}

void ibtrs_clt_pending_work(struct work_struct *work)
{
	struct ibtrs_clt_sess *sess = container_of(to_delayed_work(work),
						   struct ibtrs_clt_sess,
						   pending_work);

	ibtrs_clt_pending_run(sess, false);
}

/*
 * @io was posted on @old, which failed and is drained: no completion of it
 * comes any more. Re-post it on another path with the same chunk id (the
 * server serves it once the original, if it still runs there, is done);
 * with no path up it waits in sess->pending for a reconnect (at most
 * ibtrs_clt_ctrl_loss_tmo_ms), else it ends with -EIO.
 */
static void ibtrs_clt_io_failover(struct ibtrs_clt_io *io,
				  struct ibtrs_clt_path *old)
{
	struct ibtrs_clt_sess *sess = io->sess;
	unsigned long flags;
	int ret;

	ibtrs_clt_io_unmap(io);
	if (io->mp_counted) {
		io->mp_counted = false;
		atomic_dec(&old->mp_inflight);
	}
	this_cpu_dec(old->stats->inflight);
	atomic_set(&io->state, IBTRS_CLT_IO_BUSY);
	/* the caller gave up on it (a second block layer timeout) */
	ret = io->expired ? -ETIMEDOUT : READ_ONCE(sess->closing) ?
	      -ENOTCONN : ibtrs_clt_io_start(io);
	if (!ret) {
		atomic64_inc(&old->failovers);
		return;
	}
	spin_lock_irqsave(&sess->lock, flags);
	io->path = NULL;
	if (!io->expired && !sess->closing &&
	    (ret != -ENOTCONN || ibtrs_clt_may_wait(sess))) {
		/* waits for a path (ibtrs_clt_pending_run()) */
		list_add_tail(&io->pending, &sess->pending);
		mod_delayed_work(ibtrs_clt_wq, &sess->pending_work,
				 msecs_to_jiffies(100));
		atomic64_inc(&old->failovers);
		ret = 0;
	}
	spin_unlock_irqrestore(&sess->lock, flags);
	if (ret)
		ibtrs_clt_io_abort(io, io->expired ? -ETIMEDOUT : -EIO);
}

/*
 * After the teardown of @path (its QPs and MRs gone): end the reads whose
 * answer came but whose LOCAL_INV could not be posted or did not complete
 * (ibtrs_clt_io_answer()); their buffers are out of the server's reach
 * now. Their mappings were undone before the device went (@deferred).
 */
static void ibtrs_clt_end_deferred(struct ibtrs_clt_path *path,
				   struct list_head *deferred)
{
	struct ibtrs_clt_io *io, *tmp;

	list_for_each_entry_safe(io, tmp, deferred, pending) {
		list_del_init(&io->pending);
		io->inv_deferred = false;
		ibtrs_clt_io_end(io, NULL);
	}
}

/*
 * Tear a failed (or closing) path down: disconnect, drain, move the IO
 * that will never be answered to another path, free. Process context.
 */
void ibtrs_clt_path_down(struct ibtrs_clt_path *path)
{
	struct ibtrs_clt_sess *sess = path->sess;
	LIST_HEAD(deferred_ios);
	struct ibtrs_clt_io *io;
	unsigned long flags, gp;
	u32 i;

	mutex_lock(&path->conn_mutex);
	spin_lock_irqsave(&sess->lock, flags);
	WRITE_ONCE(path->state, IBTRS_CLT_PATH_FAILED);
	spin_unlock_irqrestore(&sess->lock, flags);
	/*
	 * Posts happen in RCU read sections that saw the path CONNECTED:
	 * after a grace period none is running, and none starts. So nothing
	 * is posted behind the drain markers, and the IO objects of this
	 * path stay as the scan below finds them. The grace period runs
	 * while the connections are disconnected.
	 */
	gp = start_poll_synchronize_rcu();
	cancel_delayed_work_sync(&path->hb_work);
	if (!path->dev)
		goto out_idle;
	/* a polled connection is drained by ib_drain_qp() alone */
	ibtrs_clt_poll_stop(path);
	for (i = 0; i < path->ncons; i++)
		if (path->cons[i].cm_id)
			rdma_disconnect(path->cons[i].cm_id);
	cond_synchronize_rcu(gp);
	for (i = 0; i < path->ncons; i++)
		if (path->cons[i].qp)
			ib_drain_qp(path->cons[i].qp);
	/* all completions of every QP are in: no answer comes any more */
	for (i = 0; sess->ios && i < sess->queue_depth; i++) {
		int state;

		io = &sess->ios[i];
		state = atomic_read_acquire(&io->state);
		if (io->path != path)
			continue;
		if (state == IBTRS_CLT_IO_POSTED) {
			ibtrs_clt_io_failover(io, path);
		} else if (state == IBTRS_CLT_IO_ANSWERED && io->inv_deferred) {
			/* unmapped now: the device goes */
			ibtrs_clt_io_unmap(io);
			list_add_tail(&io->pending, &deferred_ios);
		}
	}
	ibtrs_clt_destroy_ib(path);
	ibtrs_clt_end_deferred(path, &deferred_ios);
	WARN_ON_ONCE(ibtrs_clt_path_sum(path, inflight));
out_idle:
	spin_lock_irqsave(&sess->lock, flags);
	WRITE_ONCE(path->state, IBTRS_CLT_PATH_IDLE);
	spin_unlock_irqrestore(&sess->lock, flags);
	mutex_unlock(&path->conn_mutex);
}

void ibtrs_clt_reco_schedule(struct ibtrs_clt_path *path)
{
	u32 ms = trs_backoff_ms(path->reco_attempt++, ibtrs_clt_reconnect_min_ms,
				ibtrs_clt_reconnect_max_ms, get_random_u32());

	if (READ_ONCE(path->sess->closing) || READ_ONCE(path->removing))
		return;
	if (xchg(&path->reco_now, false)) {
		path->reco_attempt = 0;
		ibtrs_clt_info(path, "reconnect now (asked through sysfs)\n");
		queue_delayed_work(ibtrs_clt_wq, &path->reco_work, 0);
		return;
	}
	ibtrs_clt_info(path, "reconnect in %u ms\n", ms);
	queue_delayed_work(ibtrs_clt_wq, &path->reco_work,
			   msecs_to_jiffies(ms));
}

void ibtrs_clt_err_work(struct work_struct *work)
{
	struct ibtrs_clt_path *path = container_of(work, struct ibtrs_clt_path,
						   err_work);

	ibtrs_clt_path_down(path);
	ibtrs_clt_info(path, "closed (reqs %lld, answers %lld, local invalidations %lld, failovers %lld)\n",
		       ibtrs_clt_path_sum(path, reqs),
		       ibtrs_clt_path_sum(path, rsps),
		       ibtrs_clt_path_sum(path, local_invs),
		       atomic64_read(&path->failovers));
	ibtrs_clt_reco_schedule(path);
}

void ibtrs_clt_reco_work(struct work_struct *work)
{
	struct ibtrs_clt_path *path = container_of(to_delayed_work(work),
						   struct ibtrs_clt_path,
						   reco_work);

	/* also queued early by a device's arrival (ibtrs_clt_add_one()) */
	if (READ_ONCE(path->sess->closing) || READ_ONCE(path->removing) ||
	    READ_ONCE(path->state) != IBTRS_CLT_PATH_IDLE)
		return;
	path->recon_cnt++;
	if (ibtrs_clt_path_connect(path)) {
		ibtrs_clt_reco_schedule(path);
		return;
	}
	path->reco_attempt = 0;
	atomic64_inc(&path->reconnects);
}

