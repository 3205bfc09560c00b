// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibtrs-clt-io.c - the client's request path: requests posted on a
 * connection of the chosen path, receives (every message through
 * trs/common/rx.c), the end of an IO (one answer, remote or local
 * invalidation), polling, heartbeats.
 *
 * The fast path takes no lock with the round-robin policy (the default):
 * the request object of a chunk is claimed by a cmpxchg of its state, the
 * path is chosen and the request posted inside one RCU read section (the
 * teardown sets the path FAILED, then waits for a grace period before it
 * drains, so no post lands behind the drain marker), the answer claims the
 * object by a cmpxchg, counters are per CPU. DMA mappings are made outside
 * any lock; the request headers are mapped once per path and synced.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "ibtrs-clt-pri.h"

/* ---------------------------------------------------------------- */
/* IO end                                                            */

static enum dma_data_direction ibtrs_clt_io_dma_dir(const struct ibtrs_clt_io *io)
{
	return io->dir == IBTRS_CLT_READ ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
}

/*
 * Undo the data mapping of a posted @io (ibtrs_clt_io_post()); once: a
 * read whose invalidation was deferred is unmapped before its path's
 * device goes, and not again when it ends. Its MR stays its connection's.
 */
void ibtrs_clt_io_unmap(struct ibtrs_clt_io *io)
{
	if (io->nents)
		ib_dma_unmap_sg(io->path->dev, io->map_sg, io->map_cnt,
				ibtrs_clt_io_dma_dir(io));
	io->nents = 0;
	io->mr = NULL;
}

/*
 * min-inflight and min-latency: @io leaves its path's count; min-latency
 * also takes its latency sample and ages the idle paths (under the
 * session lock: only with that policy).
 */
static void ibtrs_clt_mp_end(struct ibtrs_clt_io *io)
{
	struct ibtrs_clt_sess *sess = io->sess;
	struct ibtrs_clt_path *path = io->path, *p;
	unsigned long flags;
	u64 now;
	int i;

	io->mp_counted = false;
	atomic_dec(&path->mp_inflight);
	if (READ_ONCE(sess->mp_policy) != TRS_MP_MIN_LATENCY)
		return;
	now = ibtrs_clt_now_us();
	spin_lock_irqsave(&sess->lock, flags);
	trs_mp_lat_sample(&path->lat_ewma, now > io->start_us ?
			  now - io->start_us : 0);
	for (i = 0; i < sess->npaths; i++) {
		p = ibtrs_clt_path_at(sess, i);
		if (p && p != path && !atomic_read(&p->mp_inflight))
			trs_mp_lat_age(&p->lat_ewma);
	}
	spin_unlock_irqrestore(&sess->lock, flags);
}

/*
 * @io is done (answered, invalidated, or given up): its chunk id is the
 * caller's again, then its completion runs. @batch: ibtrs_clt_poll()'s.
 */
void ibtrs_clt_io_end(struct ibtrs_clt_io *io, void *batch)
{
	struct ibtrs_clt_sess *sess = io->sess;
	ibtrs_clt_conf_fn conf = io->conf;
	void *priv = io->priv;
	int status = io->status;

	ibtrs_clt_io_unmap(io);
	if (unlikely(io->bounced))
		ibtrs_clt_bounce_end(io, status);
	if (unlikely(io->mp_counted))
		ibtrs_clt_mp_end(io);
	this_cpu_dec(io->path->stats->inflight);
	this_cpu_dec(sess->stats->inflight);
	/* the fields above are read; the id may be reused from here on */
	atomic_set_release(&io->state, IBTRS_CLT_IO_IDLE);
	conf(priv, status, batch);
}

/*
 * @io (BUSY, ours, not on a path: nothing of it is posted or mapped) ends
 * with @status.
 */
void ibtrs_clt_io_abort(struct ibtrs_clt_io *io, int status)
{
	ibtrs_clt_conf_fn conf = io->conf;
	void *priv = io->priv;

	this_cpu_dec(io->sess->stats->inflight);
	atomic_set_release(&io->state, IBTRS_CLT_IO_IDLE);
	conf(priv, status, NULL);
}

/* The batch of the poller that reaps @con now, or NULL. */
static void *ibtrs_clt_batch(struct ibtrs_clt_con *con)
{
	return con->poll ? con->poll_batch : NULL;
}

/* Request WRs: only errors and the periodic signaled one come here. */
void ibtrs_clt_req_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_clt_con *con = container_of(wc->wr_cqe,
						 struct ibtrs_clt_con, req_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS))
		ibtrs_clt_wr_error(con->path, wc, "request");
}

void ibtrs_clt_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_clt_io *io = container_of(wc->wr_cqe, struct ibtrs_clt_io,
					       inv_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		/*
		 * Not invalidated: the server may still reach the buffer
		 * through the path's QPs until they are gone. The teardown
		 * (the path fails now) ends the IO after that.
		 */
		io->inv_deferred = true;
		ibtrs_clt_wr_error(io->path, wc, "LOCAL_INV");
		return;
	}
	io->mr->need_inval = false;
	ibtrs_clt_io_end(io, ibtrs_clt_batch(io->con));
}

void ibtrs_clt_ctl_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_clt_con *con = cq->cq_context;

	if (unlikely(wc->status != IB_WC_SUCCESS))
		ibtrs_clt_wr_error(con->path, wc, "control send");
}

/* ---------------------------------------------------------------- */
/* Receive                                                           */

int ibtrs_clt_post_recv(struct ibtrs_clt_iu *iu)
{
	struct ibtrs_clt_con *con = iu->con;

	return ibtrs_post_recv_one(con->qp, con->path->pd, &iu->cqe, iu->b.dma,
				   TRS_MAX_RECV_MSG);
}

/*
 * Post the chain of consumed receives of @con. Only the CQ's own context
 * calls it (softirq polling runs one handler at a time per CQ, and a
 * polled connection has one poller).
 */
void ibtrs_clt_recv_flush(struct ibtrs_clt_con *con)
{
	struct ib_recv_wr *first = ibtrs_rx_chain_take(&con->rx_chain);

	if (first && ib_post_recv(con->qp, first, NULL))
		ibtrs_clt_path_fail(con->path, "cannot repost receives");
}

/* @iu is consumed: re-post it with the next IBTRS_CLT_RX_BATCH - 1. */
static void ibtrs_clt_recv_again(struct ibtrs_clt_iu *iu)
{
	struct ibtrs_clt_con *con = iu->con;

	if (ibtrs_rx_chain_add(&con->rx_chain, &iu->wr, IBTRS_CLT_RX_BATCH))
		ibtrs_clt_recv_flush(con);
}

/*
 * A send of a control message while @path is up, in an RCU read section:
 * ibtrs_clt_path_down() waits for it before it drains, so it is never
 * posted behind the drain marker.
 */
static int ibtrs_clt_post_imm(struct ibtrs_clt_con *con, u32 imm)
{
	struct ibtrs_clt_path *path = con->path;
	struct ib_send_wr wr = {};
	int ret = 0;

	wr.wr_cqe = &con->ctl_cqe;
	wr.opcode = IB_WR_SEND_WITH_IMM;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.ex.imm_data = cpu_to_be32(imm);
	rcu_read_lock();
	if (READ_ONCE(path->state) == IBTRS_CLT_PATH_CONNECTED) {
		ret = ib_post_send(con->qp, &wr, NULL) ? -EIO : 0;
		if (!ret)
			this_cpu_inc(path->stats->msgs);
	}
	rcu_read_unlock();
	return ret;
}

static void ibtrs_clt_info_rsp(struct ibtrs_clt_path *path, const void *buf,
			       u32 len)
{
	u32 qd = READ_ONCE(path->sess->queue_depth);
	const char *why = "";
	bool rekey;
	int err;

	if (READ_ONCE(path->state) != IBTRS_CLT_PATH_CONNECTING ||
	    completion_done(&path->info_done)) {
		ibtrs_clt_path_fail(path, "unexpected INFO_RSP");
		return;
	}
	err = trs_info_rsp_decode(buf, len, &path->params, &path->info, &why);
	rekey = !err && (path->info.flags & TRS_INFO_F_REKEY);
	if (err) {
		ibtrs_clt_err(path, "bad INFO_RSP: %s\n", why);
	} else if (rekey != !!path->keys_got ||
		   (rekey && path->keys_got != qd)) {
		/* chunk_mode rekey: every chunk's key first, and only then */
		ibtrs_clt_err(path, "INFO_RSP %s chunk_mode rekey after keys of %u of %u chunks: not joining\n",
			      rekey ? "announces" : "does not announce",
			      path->keys_got, qd);
		err = -EPROTO;
	} else if (path->write_mode == TRS_WRITE_PULL &&
		   !(path->info.flags & TRS_INFO_F_PULL)) {
		ibtrs_clt_err(path, "write_mode pull: the server does not pull writes: not joining\n");
		err = -EOPNOTSUPP;
	}
	path->rekey = rekey && !err;
	path->info_err = err;
	complete(&path->info_done);
}

/*
 * KEYS (chunk_mode rekey), before INFO_RSP on cid 0: the first keys of the
 * chunks, in chunk order; anything else fails the join.
 */
static void ibtrs_clt_keys(struct ibtrs_clt_path *path, const void *buf,
			   u32 len)
{
	u32 qd = READ_ONCE(path->sess->queue_depth);
	u32 keys[TRS_KEYS_PER_MSG], first, n;
	const char *why = "";
	int err;

	if (READ_ONCE(path->state) != IBTRS_CLT_PATH_CONNECTING ||
	    completion_done(&path->info_done)) {
		ibtrs_clt_path_fail(path, "unexpected KEYS");
		return;
	}
	err = trs_keys_decode(buf, len, qd, &first, &n, keys, &why);
	if (!err && first != path->keys_got) {
		why = "KEYS out of chunk order";
		err = -EPROTO;
	}
	if (!err && !path->chunk_rkey) {
		/* GFP_ATOMIC: a CQ's context; the session's depth never changes */
		path->chunk_rkey = kcalloc(qd, sizeof(u32), GFP_ATOMIC);
		if (!path->chunk_rkey) {
			why = "no memory for the chunks' keys";
			err = -ENOMEM;
		}
	}
	if (err) {
		ibtrs_clt_err(path, "bad KEYS: %s (chunk %u, expected %u): not joining\n",
			      why, first, path->keys_got);
		path->info_err = err;
		complete(&path->info_done);
		return;
	}
	memcpy(&path->chunk_rkey[first], keys, n * sizeof(*keys));
	path->keys_got += n;
}

/* A LOCAL_INV of @io's MR, then the IO ends in its completion. */
static void ibtrs_clt_local_inv(struct ibtrs_clt_io *io)
{
	struct ibtrs_clt_con *con = io->con;
	struct ibtrs_clt_path *path = con->path;
	struct ib_send_wr wr = {};
	int err = -ENOTCONN;

	wr.opcode = IB_WR_LOCAL_INV;
	wr.ex.invalidate_rkey = io->mr->rkey;
	wr.wr_cqe = &io->inv_cqe;
	wr.send_flags = IB_SEND_SIGNALED;
	/* never behind the drain marker: see ibtrs_clt_post_imm() */
	rcu_read_lock();
	if (READ_ONCE(path->state) == IBTRS_CLT_PATH_CONNECTED)
		err = ib_post_send(con->qp, &wr, NULL);
	rcu_read_unlock();
	if (err) {
		/*
		 * The server may still write the buffer until the path's QPs
		 * and MRs are gone: the teardown ends the IO then.
		 */
		io->inv_deferred = true;
		ibtrs_clt_path_fail(path, "cannot post LOCAL_INV");
		return;
	}
	this_cpu_inc(path->stats->reg_wrs);
	this_cpu_inc(path->stats->local_invs);
}

/*
 * The answer of chunk @m->id on @con. @is_msg: an IO_RSP message (@rsp_len
 * its length field), else an immediate.
 */
static void ibtrs_clt_io_answer(struct ibtrs_clt_con *con,
				const struct trs_rx_msg *m, bool is_msg,
				u32 rsp_len)
{
	struct ibtrs_clt_path *path = con->path;
	struct ibtrs_clt_sess *sess = path->sess;
	struct ibtrs_clt_io *io = &sess->ios[m->id];
	const char *proto = NULL;
	bool local_inv = false;
	int status = m->status;
	struct ib_mr *mr;

	/*
	 * Only the answer of a request posted on this connection may take
	 * it; of two answers (or an answer racing a re-post) one wins.
	 */
	if (atomic_read_acquire(&io->state) != IBTRS_CLT_IO_POSTED ||
	    READ_ONCE(io->con) != con ||
	    atomic_cmpxchg(&io->state, IBTRS_CLT_IO_POSTED,
			   IBTRS_CLT_IO_ANSWERED) != IBTRS_CLT_IO_POSTED) {
		atomic64_inc(&path->proto_errors);
		ibtrs_clt_path_fail(path, "protocol error: no request on the answer's connection");
		return;
	}
	this_cpu_inc(path->stats->rsps);
	if (m->inv)
		this_cpu_inc(path->stats->inv_rsps);
	/* chunk_mode rekey: the server re-keyed the chunk before answering */
	if (path->rekey)
		path->chunk_rkey[io->id] = ib_inc_rkey(path->chunk_rkey[io->id]);

	if (io->dir == IBTRS_CLT_READ) {
		if (!is_msg) {
			proto = "READ answered by an immediate";
			status = -EIO;
		} else if (!status && rsp_len != io->datalen) {
			proto = "successful READ answer shorter or longer than the request";
			status = -EIO;
		}
	}
	if (io->ri.sg_cnt) {
		/* a read's buffer or a pulled write's was exposed */
		mr = io->mr;
		/*
		 * Only a request that asked NEED_INV (inval_mode remote, a
		 * registered buffer) may be answered with an invalidation: a
		 * buffer sent with the global rkey never (the server would
		 * kill the PD's global key), local and none do not ask.
		 */
		if (m->inv && !(io->ri.flags & TRS_IO_F_NEED_INV)) {
			proto = "answer invalidated an rkey the request did not ask to";
			status = -EIO;
		} else if (m->inv && m->inv_rkey != mr->rkey) {
			proto = "invalidated rkey is not the request's";
			status = -EIO;
		} else if (m->inv) {
			mr->need_inval = false;
		}
		/*
		 * A registration still valid ends with a LOCAL_INV, and the IO
		 * in its completion: remote without the server's invalidation,
		 * local always, none only after a protocol error (the path
		 * fails; none leaves it valid for the next REG_MR's LOCAL_INV).
		 */
		if (mr && mr->need_inval &&
		    (path->inval_mode != IBTRS_CLT_INV_NONE || proto))
			local_inv = true;
	} else if (m->inv) {
		proto = "answer invalidated an rkey, the request exposed none";
		status = -EIO;
	}
	io->status = status;
	if (proto) {
		atomic64_inc(&path->proto_errors);
		ibtrs_clt_err(path, "protocol error: chunk %u: %s\n", io->id,
			      proto);
		ibtrs_clt_path_fail(path, "protocol error");
	}
	if (local_inv)
		ibtrs_clt_local_inv(io);
	else
		ibtrs_clt_io_end(io, ibtrs_clt_batch(con));
}

/*
 * A message that is not an answer (INFO_RSP, KEYS: on cid 0): copied out of its
 * buffer before the buffer is posted again. Not inlined: its copy's stack
 * (zeroed by the kernel's INIT_STACK_ALL_ZERO) stays off the IO path.
 */
static noinline void ibtrs_clt_recv_msg(struct ibtrs_clt_iu *iu,
					const struct trs_rx_msg *m)
{
	struct ibtrs_clt_con *con = iu->con;
	struct ibtrs_clt_path *path = con->path;
	u8 msg[TRS_MAX_RECV_MSG];

	memcpy(msg, iu->b.buf, m->len);
	ib_dma_sync_single_for_device(path->dev, iu->b.dma, TRS_MAX_RECV_MSG,
				      DMA_FROM_DEVICE);
	ibtrs_clt_recv_again(iu);
	ibtrs_clt_recv_flush(con);
	if (con->cid)
		ibtrs_clt_path_fail(path, "INFO_RSP not on connection 0");
	else if (m->msg_type == TRS_MSG_KEYS)
		ibtrs_clt_keys(path, msg, m->len);
	else
		ibtrs_clt_info_rsp(path, msg, m->len);
}

/* A heartbeat or its ack. */
static noinline void ibtrs_clt_recv_hb(struct ibtrs_clt_con *con,
				       const struct trs_rx_msg *m)
{
	struct ibtrs_clt_path *path = con->path;
	unsigned long flags;
	u64 rtt;

	if (m->kind == TRS_RX_HB) {
		if (ibtrs_clt_post_imm(con, trs_to_imm(TRS_IMM_HB_ACK, m->id, 0)))
			ibtrs_clt_path_fail(path, "cannot answer a heartbeat");
	} else {
		spin_lock_irqsave(&path->lock, flags);
		if (!trs_hb_on_ack(&path->hb, m->id, ibtrs_clt_now_us(), &rtt))
			path->hb_rtt_us = rtt;
		spin_unlock_irqrestore(&path->lock, flags);
	}
	ibtrs_clt_recv_flush(con);
}

void ibtrs_clt_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_clt_iu *iu = container_of(wc->wr_cqe, struct ibtrs_clt_iu,
					       cqe);
	struct ibtrs_clt_con *con = iu->con;
	struct ibtrs_clt_path *path = con->path;
	struct ibtrs_clt_sess *sess = path->sess;
	struct trs_rx_wc w;
	struct trs_rx_msg m;
	const char *why = "";
	int err;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		ibtrs_clt_wr_error(path, wc, "receive");
		return;
	}
	if (READ_ONCE(path->state) == IBTRS_CLT_PATH_FAILED)
		return;
	w.ok = true;
	w.op = wc->opcode == IB_WC_RECV ? TRS_RX_OP_RECV :
	       wc->opcode == IB_WC_RECV_RDMA_WITH_IMM ?
	       TRS_RX_OP_RECV_RDMA_IMM : TRS_RX_OP_OTHER;
	w.with_imm = wc->wc_flags & IB_WC_WITH_IMM;
	w.imm = w.with_imm ? be32_to_cpu(wc->ex.imm_data) : 0;
	w.with_inv = wc->wc_flags & IB_WC_WITH_INVALIDATE;
	w.inv_rkey = w.with_inv ? wc->ex.invalidate_rkey : 0;
	w.byte_len = wc->byte_len;
	ib_dma_sync_single_for_cpu(path->dev, iu->b.dma, TRS_MAX_RECV_MSG,
				   DMA_FROM_DEVICE);
	/* an IO_RSP message is decoded there too (m.rsp_len) */
	err = trs_rx_decode_clt(&w, iu->b.buf, READ_ONCE(sess->queue_depth), &m,
				&why);
	if (err) {
		atomic64_inc(&path->proto_errors);
		ibtrs_clt_err(path, "bad receive: %s (opcode %d, %u bytes)\n",
			      why, wc->opcode, wc->byte_len);
		ibtrs_clt_path_fail(path, "protocol error");
		return;
	}
	/* any receive is life; the heartbeat tick reads it */
	WRITE_ONCE(con->last_rx, jiffies);
	if (unlikely(m.kind == TRS_RX_MSG)) {
		ibtrs_clt_recv_msg(iu, &m);
		return;
	}
	ib_dma_sync_single_for_device(path->dev, iu->b.dma, TRS_MAX_RECV_MSG,
				      DMA_FROM_DEVICE);
	ibtrs_clt_recv_again(iu);

	switch (m.kind) {
	case TRS_RX_IO_RSP:
		ibtrs_clt_io_answer(con, &m, !w.with_imm, m.rsp_len);
		break;
	case TRS_RX_HB:
	case TRS_RX_HB_ACK:
		ibtrs_clt_recv_hb(con, &m);
		break;
	default:
		ibtrs_clt_path_fail(path, "unexpected receive");
	}
}

/* ---------------------------------------------------------------- */
/* Polling                                                           */

/* Reap polled connection @con unless another caller does. */
static int ibtrs_clt_poll_con(struct ibtrs_clt_con *con, void *batch)
{
	int got = 0;

	if (!test_and_set_bit_lock(IBTRS_CLT_POLLING, &con->poll_flags)) {
		if (con->poll_live) {
			con->poll_batch = batch;
			got = ib_process_cq_direct(con->cq, -1);
			ibtrs_clt_recv_flush(con);
			con->poll_batch = NULL;
		}
		clear_bit_unlock(IBTRS_CLT_POLLING, &con->poll_flags);
	}
	if (got > 0)
		this_cpu_add(con->path->stats->poll_cqes, got);
	return max(got, 0);
}

int ibtrs_clt_poll(struct ibtrs_clt_sess *sess, unsigned int hint,
		   void *batch)
{
	struct ibtrs_clt_path *path;
	int i, n = 0;

	if (hint < sess->nr_cons || hint >= sess->nr_cons + sess->nr_poll)
		return 0;
	rcu_read_lock();
	for (i = 0; i < READ_ONCE(sess->npaths); i++) {
		path = rcu_dereference(sess->paths[i]);
		if (path)
			n += ibtrs_clt_poll_con(&path->cons[hint], batch);
	}
	rcu_read_unlock();
	return n;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_poll);

/* ---------------------------------------------------------------- */
/* Heartbeat                                                         */

/* The newest receive of any connection of @path, in microseconds. */
static u64 ibtrs_clt_last_rx_us(struct ibtrs_clt_path *path, u64 now)
{
	unsigned long newest = READ_ONCE(path->cons[0].last_rx), j;
	int i;

	for (i = 1; i < path->ncons; i++) {
		j = READ_ONCE(path->cons[i].last_rx);
		if (time_after(j, newest))
			newest = j;
	}
	/* capped: a path is dead long before that */
	j = min_t(unsigned long, jiffies - newest, 1000 * HZ);
	return now - min_t(u64, now, jiffies_to_usecs(j));
}

void ibtrs_clt_hb_work(struct work_struct *work)
{
	struct ibtrs_clt_path *path = container_of(to_delayed_work(work),
						   struct ibtrs_clt_path,
						   hb_work);
	u64 now = ibtrs_clt_now_us();
	const char *why = NULL;
	unsigned long flags;
	bool due = false;
	u16 seq;

	if (READ_ONCE(path->state) != IBTRS_CLT_PATH_CONNECTED)
		return;
	spin_lock_irqsave(&path->lock, flags);
	trs_hb_on_rx(&path->hb, ibtrs_clt_last_rx_us(path, now));
	if (trs_hb_timed_out(&path->hb, now))
		why = "heartbeat timeout";
	else
		due = trs_hb_due(&path->hb, now, &seq);
	spin_unlock_irqrestore(&path->lock, flags);
	if (due) {
		if (ibtrs_clt_post_imm(&path->cons[0],
				       trs_to_imm(TRS_IMM_HB, seq, 0)))
			why = "cannot post a heartbeat";
		else
			atomic64_inc(&path->hb_sent);
	}
	if (why) {
		ibtrs_clt_path_fail(path, why);
		return;
	}
	queue_delayed_work(ibtrs_clt_wq, &path->hb_work, IBTRS_CLT_HB_TICK);
}

/* ---------------------------------------------------------------- */
/* Requests                                                          */

/*
 * The path for a new request, in an RCU read section, or NULL when none is
 * up. Round-robin keeps one cursor per CPU and reads nothing another CPU
 * writes per IO; min-inflight and min-latency count the IO on the path
 * (@io->mp_counted).
 */
/* min-inflight and min-latency: trs/common/mp.c on a copy of the paths. */
static noinline struct ibtrs_clt_path *
ibtrs_clt_pick_mp(struct ibtrs_clt_sess *sess, int policy, int n)
{
	struct trs_mp_path mp[IBTRS_CLT_MAX_PATHS];
	struct ibtrs_clt_path *p;
	u32 cur = this_cpu_read(*sess->rr_cursor);
	int i;

	for (i = 0; i < n; i++) {
		p = rcu_dereference(sess->paths[i]);
		mp[i].usable = p &&
			       READ_ONCE(p->state) == IBTRS_CLT_PATH_CONNECTED;
		mp[i].inflight = p ? atomic_read(&p->mp_inflight) : 0;
		mp[i].lat_ewma = p ? READ_ONCE(p->lat_ewma) : 0;
	}
	i = trs_mp_select(policy, mp, n, &cur, 0);
	if (i < 0)
		return NULL;
	this_cpu_write(*sess->rr_cursor, cur);
	return rcu_dereference(sess->paths[i]);
}

/*
 * The path for a new request, in an RCU read section, or NULL when none is
 * up. Round-robin keeps one cursor per CPU and reads nothing another CPU
 * writes per IO; min-inflight and min-latency count the IO on the path
 * (@io->mp_counted).
 */
static __always_inline struct ibtrs_clt_path *
ibtrs_clt_pick(struct ibtrs_clt_sess *sess, struct ibtrs_clt_io *io)
{
	int policy = READ_ONCE(sess->mp_policy);
	int n = READ_ONCE(sess->npaths), i, k;
	struct ibtrs_clt_path *p;
	u32 cur;

	if (n == 1) {
		p = rcu_dereference(sess->paths[0]);
		if (!p || READ_ONCE(p->state) != IBTRS_CLT_PATH_CONNECTED)
			return NULL;
		if (policy == TRS_MP_ROUND_ROBIN)
			return p;
	} else if (policy != TRS_MP_ROUND_ROBIN) {
		p = ibtrs_clt_pick_mp(sess, policy, n);
		if (!p)
			return NULL;
	} else {
		cur = this_cpu_read(*sess->rr_cursor);
		for (k = 1; k <= n; k++) {
			i = (cur + k) % n;
			p = rcu_dereference(sess->paths[i]);
			if (p && READ_ONCE(p->state) == IBTRS_CLT_PATH_CONNECTED) {
				this_cpu_write(*sess->rr_cursor, i);
				return p;
			}
		}
		return NULL;
	}
	atomic_inc(&p->mp_inflight);
	io->mp_counted = true;
	io->start_us = ibtrs_clt_now_us();
	return p;
}

/* Undo ibtrs_clt_pick()'s count of @io (it was not posted there). */
static void ibtrs_clt_unpick(struct ibtrs_clt_io *io)
{
	if (io->mp_counted) {
		io->mp_counted = false;
		atomic_dec(&io->path->mp_inflight);
	}
}

/*
 * Map and post @io (BUSY, ours) on @con of @path, in an RCU read section.
 * 0: posted (POSTED; the answer ends it). -EAGAIN: the path is not up (or
 * out of send queue): nothing was posted, try another. Another error:
 * nothing was posted either.
 */
static int ibtrs_clt_io_post(struct ibtrs_clt_io *io,
			     struct ibtrs_clt_path *path,
			     struct ibtrs_clt_con *con)
{
	struct ibtrs_clt_stats __percpu *st = path->stats;
	struct ibtrs_clt_sess *sess = io->sess;
	struct ib_device *dev = path->dev;
	struct trs_io_req_info *ri = &io->ri;
	struct ib_rdma_wr *wr = &io->wr;
	const struct ib_send_wr *first = &wr->wr;
	u64 slot = path->info.pool_addr + (u64)io->id * sess->slot_size;
	u64 hdr_dma = path->hdr_dma + (u64)io->id * sess->hdr_stride;
	bool reg = false, inv_first = false;
	/*
	 * A read's buffer, and under write_mode pull a write's, is exposed
	 * to the server by its own key (the global rkey under mr_mode
	 * global); a pushed write's data goes with the request.
	 */
	bool pull = io->dir == IBTRS_CLT_WRITE &&
		    path->write_mode == TRS_WRITE_PULL;
	u32 push_len = 0;
	int nsge = 0, i, n, ret;

	io->path = path;
	io->con = con;
	io->nents = 0;
	io->mr = NULL;
	io->map_sg = io->sg;
	io->map_cnt = io->sg_cnt;
	if (path->mr_mode == IBTRS_CLT_MR_BOUNCE && io->sg_cnt &&
	    (io->dir == IBTRS_CLT_READ || pull)) {
		/* the slot's pages are mapped and registered, not the caller's */
		io->map_cnt = ibtrs_clt_bounce_prep(io, path);
		io->map_sg = io->bsg;
	}
	if (io->map_cnt) {
		n = ib_dma_map_sg(dev, io->map_sg, io->map_cnt,
				  ibtrs_clt_io_dma_dir(io));
		if (!n) {
			ret = -ENOMEM;
			goto out_unmap;
		}
		io->nents = n;
	}
	/* every field of ri and of the work requests is set below */
	ri->type = io->dir == IBTRS_CLT_READ ? TRS_MSG_IO_READ :
		   TRS_MSG_IO_WRITE;
	ri->usr_len = io->usrlen;
	ri->seq = ++io->seq;
	ri->flags = 0;
	ri->sg_cnt = 0;
	ri->data_len = 0;
	ri->raddr = 0;
	ri->rkey = 0;
	ri->rlen = 0;
	if (pull)
		ri->data_len = io->datalen;
	if ((io->dir == IBTRS_CLT_READ || pull) && io->nents &&
	    path->mr_mode == IBTRS_CLT_MR_GLOBAL && io->nents == 1) {
		/*
		 * mr_mode global (UNSAFE): a read (or pulled write) of ONE DMA
		 * segment goes out with its DMA address and the PD's global
		 * rkey, nothing is registered, so nothing is invalidated, and
		 * never NEED_INV (the server would invalidate the PD's key).
		 * One of several segments is registered below, as nvme-rdma
		 * does with register_always=N.
		 */
		if (sg_dma_len(io->sg) != io->datalen) {
			ret = -EINVAL;
			goto out_unmap;
		}
		ri->flags = pull ? TRS_IO_F_PULL : 0;
		ri->sg_cnt = 1;
		ri->raddr = sg_dma_address(io->sg);
		ri->rkey = path->pd->unsafe_global_rkey;
		ri->rlen = io->datalen;
	} else if ((io->dir == IBTRS_CLT_READ || pull) && io->nents) {
		struct ib_reg_wr *reg_wr = &io->reg_wr;
		struct ib_send_wr *inv_wr = &io->inv_wr;

		io->mr = con->mrs[io->id];
		n = ib_map_mr_sg(io->mr, io->map_sg, io->nents, NULL, PAGE_SIZE);
		if (n != io->nents || io->mr->length != io->datalen) {
			ret = -EINVAL;
			goto out_unmap;
		}
		reg_wr->wr.next = &wr->wr;
		first = &reg_wr->wr;
		/*
		 * An MR that is still valid (inval_mode none left it so) must
		 * be invalidated before it is registered again (rxe refuses a
		 * REG_MR of a valid MR): a LOCAL_INV of its current key in
		 * front, unsignaled (errors only), as iSER and rdma_rw do.
		 */
		if (io->mr->need_inval) {
			inv_wr->next = &reg_wr->wr;
			inv_wr->wr_cqe = &con->reg_cqe;
			inv_wr->sg_list = NULL;
			inv_wr->num_sge = 0;
			inv_wr->opcode = IB_WR_LOCAL_INV;
			inv_wr->send_flags = 0;
			inv_wr->ex.invalidate_rkey = io->mr->rkey;
			first = inv_wr;
			inv_first = true;
		}
		ib_update_fast_reg_key(io->mr, ib_inc_rkey(io->mr->rkey));
		reg_wr->wr.wr_cqe = &con->reg_cqe;
		reg_wr->wr.sg_list = NULL;
		reg_wr->wr.num_sge = 0;
		reg_wr->wr.opcode = IB_WR_REG_MR;
		reg_wr->wr.send_flags = 0;
		reg_wr->mr = io->mr;
		reg_wr->key = io->mr->rkey;
		/*
		 * Exactly the IO buffer: a read's writable by the server, a
		 * pulled write's readable only.
		 */
		reg_wr->access = pull ? IB_ACCESS_REMOTE_READ :
			IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
		/*
		 * Valid from its REG_MR until the answer's invalidation or a
		 * LOCAL_INV. If nothing goes out below, the path is failing:
		 * its MRs are freed in its teardown, the flag with them.
		 */
		io->mr->need_inval = true;
		reg = true;
		if (path->inval_mode == IBTRS_CLT_INV_REMOTE)
			ri->flags = TRS_IO_F_NEED_INV;
		if (pull)
			ri->flags |= TRS_IO_F_PULL;
		ri->sg_cnt = 1;
		ri->raddr = io->mr->iova;
		ri->rkey = io->mr->rkey;
		ri->rlen = io->datalen;
	} else if (io->dir == IBTRS_CLT_WRITE && !pull) {
		struct scatterlist *sg;

		ri->data_len = io->datalen;
		push_len = io->datalen;
		for_each_sg(io->sg, sg, io->nents, i) {
			io->sge[nsge].addr = sg_dma_address(sg);
			io->sge[nsge].length = sg_dma_len(sg);
			io->sge[nsge].lkey = path->pd->local_dma_lkey;
			nsge++;
		}
	}
	trs_io_req_encode(io->hdr, ri);
	io->hdr_len = sizeof(struct trs_msg_io_req) + io->usrlen;
	ib_dma_sync_single_for_device(dev, hdr_dma, io->hdr_len,
				      DMA_TO_DEVICE);
	io->sge[nsge].addr = hdr_dma;
	io->sge[nsge].length = io->hdr_len;
	io->sge[nsge].lkey = path->pd->local_dma_lkey;
	nsge++;

	wr->wr.next = NULL;
	wr->wr.wr_cqe = &con->req_cqe;
	wr->wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	wr->wr.send_flags = 0;
	wr->wr.ex.imm_data = cpu_to_be32(trs_to_imm(TRS_IMM_IO_REQ, io->id, 0));
	wr->wr.sg_list = io->sge;
	wr->wr.num_sge = nsge;
	/* pushed data right-aligned before the header: one WRITE for both */
	wr->remote_addr = slot + sess->chunk_size - push_len;
	wr->rkey = path->rekey ? path->chunk_rkey[io->id] : path->info.pool_rkey;
	if (nsge > path->max_sge) {
		struct ib_rdma_wr *data_wr = &io->data_wr;

		/*
		 * More data segments than fit beside the header (a 128 KiB
		 * write of 4 KiB pages on a 32-SGE device): the data goes in an
		 * unsignaled RDMA_WRITE chained in front, the header alone in
		 * the WRITE_WITH_IMM. RC places the data before the server
		 * sees the immediate. One more WR, not one more IO.
		 */
		data_wr->wr.next = &wr->wr;
		data_wr->wr.wr_cqe = &con->req_cqe;
		data_wr->wr.opcode = IB_WR_RDMA_WRITE;
		data_wr->wr.send_flags = 0;
		data_wr->wr.sg_list = io->sge;
		data_wr->wr.num_sge = nsge - 1;
		data_wr->remote_addr = wr->remote_addr;
		data_wr->rkey = wr->rkey;
		wr->wr.sg_list = &io->sge[nsge - 1];
		wr->wr.num_sge = 1;
		wr->remote_addr = slot + sess->chunk_size;
		first = &data_wr->wr;
	}
	/*
	 * Unsignaled: the IO ends at its answer, which the server sends only
	 * after it took the request (as RTRS does). One request in
	 * IBTRS_CLT_SIG_EVERY is signaled so that the device can retire the
	 * send queue entries before it (the queue is sized for that).
	 */
	if (!(atomic64_inc_return(&con->reqs) & (IBTRS_CLT_SIG_EVERY - 1))) {
		wr->wr.send_flags = IB_SEND_SIGNALED;
		this_cpu_inc(st->sig_reqs);
	}

	/*
	 * The answer may come as soon as it is posted. The teardown waits
	 * for this RCU read section once the path is FAILED: a post seen as
	 * CONNECTED here is ahead of its drain marker.
	 */
	atomic_set_release(&io->state, IBTRS_CLT_IO_POSTED);
	if (READ_ONCE(path->state) != IBTRS_CLT_PATH_CONNECTED) {
		ret = -EAGAIN;
		goto out_unpost;
	}
	ret = ib_post_send(con->qp, first, NULL);
	if (ret) {
		ibtrs_clt_path_fail(path, "cannot post a request");
		ret = -EAGAIN;
		goto out_unpost;
	}
	this_cpu_inc(st->reqs);
	this_cpu_inc(st->msgs);
	this_cpu_inc(st->inflight);
	/* not io->mr: the answer may have ended the IO already */
	if (reg) {
		this_cpu_inc(st->reg_wrs);
		this_cpu_inc(st->reg_mrs);
	}
	if (inv_first) {
		this_cpu_inc(st->reg_wrs);
		this_cpu_inc(st->local_invs);
	}
	return 0;

out_unpost:
	/*
	 * Nothing went out. A peer that answers a request it never got
	 * (only a hostile one can) wins the object: it ends the IO, as if
	 * it had been posted.
	 */
	if (atomic_cmpxchg(&io->state, IBTRS_CLT_IO_POSTED,
			   IBTRS_CLT_IO_BUSY) != IBTRS_CLT_IO_POSTED) {
		this_cpu_inc(st->inflight);
		return 0;
	}
out_unmap:
	ibtrs_clt_io_unmap(io);
	io->bounced = false;
	return ret;
}

/* The connection of @path that carries an IO of hint @hint. */
struct ibtrs_clt_con *ibtrs_clt_con_of(struct ibtrs_clt_path *path,
				       unsigned int hint)
{
	struct ibtrs_clt_sess *sess = path->sess;

	if (hint >= sess->nr_cons + sess->nr_poll)
		hint %= sess->nr_cons;
	return &path->cons[hint];
}

/*
 * Post @io (BUSY, ours) on a path that is up. 0: posted. -ENOTCONN: no
 * path is up. -EAGAIN: the paths tried could not take it now (one went
 * down meanwhile). Another errno: it cannot be sent.
 */
int ibtrs_clt_io_start(struct ibtrs_clt_io *io)
{
	struct ibtrs_clt_sess *sess = io->sess;
	struct ibtrs_clt_path *path;
	int tries, ret = -ENOTCONN;

	rcu_read_lock();
	for (tries = 0; tries < IBTRS_CLT_MAX_PATHS; tries++) {
		path = ibtrs_clt_pick(sess, io);
		if (!path) {
			if (tries)
				ret = -EAGAIN;
			break;
		}
		ret = ibtrs_clt_io_post(io, path, ibtrs_clt_con_of(path, io->hint));
		if (ret != -EAGAIN)
			break;
		ibtrs_clt_unpick(io);
	}
	if (ret)
		ibtrs_clt_unpick(io);
	rcu_read_unlock();
	return ret;
}

int ibtrs_clt_request(struct ibtrs_clt_sess *sess, enum ibtrs_clt_dir dir,
		      int id, unsigned int hint, const void *usr,
		      size_t usrlen,
		      struct scatterlist *sg, unsigned int sg_cnt,
		      u32 datalen, ibtrs_clt_conf_fn conf, void *priv)
{
	struct ibtrs_clt_io *io;
	int ret;

	if (id < 0 || id >= sess->queue_depth ||
	    usrlen > sess->max_usr_len || datalen > sess->max_io ||
	    sg_cnt > sess->max_segs || (!sg_cnt != !datalen))
		return -EINVAL;
	io = &sess->ios[id];
	if (WARN_ON_ONCE(atomic_cmpxchg(&io->state, IBTRS_CLT_IO_IDLE,
					IBTRS_CLT_IO_BUSY) != IBTRS_CLT_IO_IDLE))
		return -EBUSY;
	io->dir = dir;
	io->sg = sg;
	io->sg_cnt = sg_cnt;
	io->datalen = datalen;
	io->usrlen = usrlen;
	io->conf = conf;
	io->priv = priv;
	io->hint = hint;
	io->status = 0;
	io->expired = false;
	io->inv_deferred = false;
	io->mp_counted = false;
	io->bounced = false;
	memcpy(io->hdr + sizeof(struct trs_msg_io_req), usr, usrlen);

	ret = ibtrs_clt_io_start(io);
	if (ret) {
		if (ret == -ENOTCONN) {
			unsigned long flags;

			/* every path down: wait for a reconnect (ctrl_loss_tmo_ms) */
			spin_lock_irqsave(&sess->lock, flags);
			if (ibtrs_clt_may_wait(sess))
				ret = -EAGAIN;
			spin_unlock_irqrestore(&sess->lock, flags);
		}
		atomic_set_release(&io->state, IBTRS_CLT_IO_IDLE);
		return ret;
	}
	this_cpu_inc(sess->stats->ios);
	this_cpu_inc(sess->stats->inflight);
	if (dir == IBTRS_CLT_READ)
		this_cpu_add(sess->stats->read_bytes, datalen);
	else
		this_cpu_add(sess->stats->write_bytes, datalen);
	return 0;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_request);

void ibtrs_clt_request_timeout(struct ibtrs_clt_sess *sess, int id,
			       void *priv, bool final)
{
	const char *why = NULL;
	struct ibtrs_clt_path *path;
	struct ibtrs_clt_io *io;
	unsigned long flags;
	int state;

	if (id < 0 || id >= sess->queue_depth)
		return;
	io = &sess->ios[id];
	spin_lock_irqsave(&sess->lock, flags);
	state = atomic_read_acquire(&io->state);
	if (state == IBTRS_CLT_IO_IDLE || io->priv != priv) {
		spin_unlock_irqrestore(&sess->lock, flags);
		return;		/* ended meanwhile */
	}
	if (final)
		io->expired = true;
	path = READ_ONCE(io->path);
	if (path) {
		/* the teardown re-posts it or (expired) ends it */
		if (state == IBTRS_CLT_IO_ANSWERED)
			why = "request timeout (answered, its LOCAL_INV pending)";
		else if (state == IBTRS_CLT_IO_POSTED)
			why = "request timeout";
		if (why)
			ibtrs_clt_path_fail_locked(path, why);
		spin_unlock_irqrestore(&sess->lock, flags);
		return;
	}
	/* no path: it waits in sess->pending for one */
	if (!final || list_empty(&io->pending)) {
		spin_unlock_irqrestore(&sess->lock, flags);
		return;
	}
	list_del_init(&io->pending);
	spin_unlock_irqrestore(&sess->lock, flags);
	ibtrs_clt_io_abort(io, -ETIMEDOUT);
}
EXPORT_SYMBOL_GPL(ibtrs_clt_request_timeout);
