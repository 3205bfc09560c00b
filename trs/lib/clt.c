// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * clt.c - client session: open/close, permits, request submission, the
 * pending queue (failover, queueing while every path is down), the event
 * loop and timers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "clt.h"

static void trs_clt_defaults(struct ibtrs_clt_opts *o)
{
	if (!o->port)
		o->port = IBTRS_DEFAULT_PORT;
	if (!o->cons_per_path)
		o->cons_per_path = 1;
	if (!o->hb_interval_ms)
		o->hb_interval_ms = 500;
	if (!o->hb_missed_max)
		o->hb_missed_max = 3;
	if (!o->connect_timeout_ms)
		o->connect_timeout_ms = 3000;
	if (!o->reconnect_min_ms)
		o->reconnect_min_ms = 250;
	if (!o->reconnect_max_ms)
		o->reconnect_max_ms = 5000;
	if (!o->ctrl_loss_tmo_ms)
		o->ctrl_loss_tmo_ms = 30000;
}

/* Called for every accepted connection; the first one sizes the session. */
int trs_clt_setup_params(struct ibtrs_clt *clt, const struct trs_conn_params *p)
{
	unsigned int qd, i;

	if (clt->have_params) {
		if (p->queue_depth != clt->params.queue_depth ||
		    p->chunk_size != clt->params.chunk_size ||
		    p->hdr_area != clt->params.hdr_area) {
			trs_err("%s: server changed queue depth/chunk size across "
				"paths or reconnects (%u/%u -> %u/%u)", clt->sessname,
				clt->params.queue_depth, clt->params.chunk_size,
				p->queue_depth, p->chunk_size);
			return -EPROTO;
		}
		return 0;
	}
	qd = p->queue_depth < TRS_CLT_QD_CAP ? p->queue_depth : TRS_CLT_QD_CAP;
	clt->params = *p;
	clt->qd = qd;
	clt->reqs = calloc(qd, sizeof(*clt->reqs));
	clt->permits = calloc(qd, sizeof(*clt->permits));
	clt->permit_map = calloc(TRS_BITMAP_WORDS(qd), sizeof(__u64));
	clt->iobuf_len = (size_t)qd * (p->chunk_size + TRS_HDR_AREA);
	clt->iobuf = aligned_alloc(4096, clt->iobuf_len);
	if (!clt->reqs || !clt->permits || !clt->permit_map || !clt->iobuf)
		goto out_free;
	if (trs_permit_pool_init(&clt->pool, clt->permit_map,
				 TRS_BITMAP_WORDS(qd), qd))
		goto out_free;
	for (i = 0; i < qd; i++) {
		clt->permits[i].id = i;
		clt->reqs[i].id = i;
		clt->reqs[i].permit = &clt->permits[i];
	}
	clt->have_params = true;
	return 0;

out_free:
	free(clt->reqs);
	free(clt->permits);
	free(clt->permit_map);
	free(clt->iobuf);
	clt->reqs = NULL;
	clt->permits = NULL;
	clt->permit_map = NULL;
	clt->iobuf = NULL;
	return -ENOMEM;
}

static void trs_clt_complete(struct trs_clt_req *req, int status)
{
	req->active = false;
	req->conf(req->priv, status);
}

/* min-latency: a completion on @path is measured, idle paths age (mp.c). */
static void trs_clt_lat_sample(struct ibtrs_clt *clt, struct trs_clt_path *path,
			       uint64_t us)
{
	int i;

	trs_mp_lat_sample(&path->lat_ewma, us);
	for (i = 0; i < clt->npaths; i++) {
		struct trs_clt_path *p = clt->paths[i];

		if (p != path && p->state == IBTRS_PATH_CONNECTED && !p->inflight)
			trs_mp_lat_age(&p->lat_ewma);
	}
}

/* Drop one of the IO's outstanding events; the last one completes it. */
void trs_clt_req_done_ref(struct trs_clt_req *req)
{
	struct trs_clt_path *path = req->path;
	struct ibtrs_clt *clt = path->clt;

	if (--req->refs > 0)
		return;
	TAILQ_REMOVE(&path->inflight_list, req, link);
	path->inflight--;
	/* the round's clock: taken just before this reap (or wake-up) */
	trs_clt_lat_sample(clt, path, clt->now_us > req->post_us ?
			   clt->now_us - req->post_us : 0);
	trs_clt_req_unmap(req);
	req->path = NULL;
	req->con = NULL;
	if (req->dir == IBTRS_READ && req->bounce && !req->status) {
		const char *src = trs_clt_bounce(clt, req->id);
		int i;

		for (i = 0; i < req->iovcnt; i++) {
			memcpy(req->iov[i].iov_base, src, req->iov[i].iov_len);
			src += req->iov[i].iov_len;
		}
	}
	clt->ncompleted++;
	req->active = false;
	req->conf(req->priv, req->status);
}

static void trs_clt_fail_pending(struct ibtrs_clt *clt, int err)
{
	struct trs_req_list list = TAILQ_HEAD_INITIALIZER(list);
	struct trs_clt_req *req;

	/* Callbacks may submit again: fail only what is queued now. */
	TAILQ_CONCAT(&list, &clt->pending, link);
	while ((req = TAILQ_FIRST(&list))) {
		TAILQ_REMOVE(&list, req, link);
		clt->ncompleted++;
		if (err == -ENOTCONN)
			clt->failed_no_path++;
		trs_clt_complete(req, err);
	}
}

static void trs_clt_build_mp(struct ibtrs_clt *clt, struct trs_mp_path *mp)
{
	int i;

	for (i = 0; i < clt->npaths; i++) {
		struct trs_clt_path *p = clt->paths[i];

		mp[i].usable = p->state == IBTRS_PATH_CONNECTED && !p->fail_pending;
		mp[i].inflight = p->inflight;
		mp[i].lat_ewma = p->lat_ewma;
	}
}

void trs_clt_dispatch_pending(struct ibtrs_clt *clt)
{
	struct trs_mp_path mp[IBTRS_MAX_PATHS];
	struct trs_clt_req *req;

	while ((req = TAILQ_FIRST(&clt->pending))) {
		uint64_t skip = 0;
		int idx, err = -ENOTCONN;

		if (req->final_status) {
			/* failed for good on its last path (trs_clt_rsp_check) */
			TAILQ_REMOVE(&clt->pending, req, link);
			clt->ncompleted++;
			trs_clt_complete(req, req->final_status);
			continue;
		}
		trs_clt_build_mp(clt, mp);
		for (;;) {
			idx = trs_mp_select(clt->policy, mp, clt->npaths,
					    &clt->rr_cursor, skip);
			if (idx < 0)
				return;	/* stays queued */
			TAILQ_REMOVE(&clt->pending, req, link);
			err = trs_clt_post_req(clt->paths[idx], req);
			if (!err)
				break;
			TAILQ_INSERT_HEAD(&clt->pending, req, link);
			trs_clt_path_fail(clt->paths[idx], "posting IO failed: %s",
					  strerror(-err));
			skip |= 1ULL << idx;
		}
	}
}

static void trs_clt_process_failures(struct ibtrs_clt *clt)
{
	int i;

	for (i = 0; i < clt->npaths; i++)
		if (clt->paths[i]->fail_pending)
			trs_clt_path_teardown(clt->paths[i]);
}

/* A path that is not connected forgets its latency average: after a
 * reconnect it is measured afresh (and, unmeasured, tried first). */
static void trs_clt_lat_tick(struct ibtrs_clt *clt)
{
	int i;

	for (i = 0; i < clt->npaths; i++)
		if (clt->paths[i]->state != IBTRS_PATH_CONNECTED)
			clt->paths[i]->lat_ewma = 0;
}

static void trs_clt_tick(struct trs_evsrc *src)
{
	struct ibtrs_clt *clt = trs_container_of(src, struct ibtrs_clt, tick_src);
	uint64_t now = trs_now_us();
	int i;

	trs_fd_drain(src->fd);
	for (i = 0; i < clt->npaths; i++)
		trs_clt_path_tick(clt->paths[i], now);
	trs_clt_lat_tick(clt);
	if (clt->all_down_since_us && clt->opts.ctrl_loss_tmo_ms >= 0 &&
	    !ibtrs_clt_paths_connected(clt) &&
	    now - clt->all_down_since_us > clt->opts.ctrl_loss_tmo_ms * 1000ULL) {
		if (!clt->loss_expired || !TAILQ_EMPTY(&clt->pending)) {
			trs_set_error("session %s: all paths down for more than "
				      "ctrl_loss_tmo (%d ms); failing IO with "
				      "ENOTCONN", clt->sessname,
				      clt->opts.ctrl_loss_tmo_ms);
			clt->loss_expired = true;
			trs_clt_fail_pending(clt, -ENOTCONN);
		}
	}
}

/*
 * @fn on the CQ of every connection of every path still up; the sum of
 * what it returned. trs_con_reap: reap directly, no system call (on rxe);
 * trs_con_arm: before a wait, arm, and count the completions that raced in.
 */
static int trs_clt_each_cq(struct ibtrs_clt *clt, int (*fn)(struct trs_con *))
{
	unsigned int i;
	int p, n = 0;

	for (p = 0; p < clt->npaths; p++) {
		struct trs_clt_path *path = clt->paths[p];

		if (!path->cons || path->fail_pending)
			continue;
		for (i = 0; i < path->ncons; i++)
			if (path->cons[i].c.cq)
				n += fn(&path->cons[i].c);
	}
	return n;
}

/* After callbacks ran: failed paths torn down, pending IO dispatched. */
static void trs_clt_after_round(struct ibtrs_clt *clt)
{
	trs_clt_process_failures(clt);
	trs_devwatch_poll(&clt->devwatch);
	trs_clt_dispatch_pending(clt);
	ibtrs_clt_unplug(clt);
}

/*
 * One round without waiting: reap the CQs (the callbacks may submit IO: it
 * is staged and goes out in one chain per connection at the end of the
 * round); once per tick also look at the epoll fd without waiting (RDMA CM
 * events, the timer, device uevents, completion events to read): the only
 * system call of the round but the doorbells.
 */
static int trs_clt_round(struct ibtrs_clt *clt)
{
	uint64_t now;
	int err = 0;

	ibtrs_clt_plug(clt);
	now = trs_now_us();
	clt->now_us = now;
	trs_clt_each_cq(clt, trs_con_reap);
	if (now >= clt->next_tick_us) {
		clt->next_tick_us = now + TRS_TICK_MS * 1000ULL;
		err = trs_epoll_dispatch_at(clt->epfd, 0, &clt->now_us);
	}
	trs_clt_after_round(clt);
	return err;
}

/*
 * Nothing came: arm the CQs (and reap what raced in; not in busy-poll
 * mode, which only waits here while connecting), then wait up to
 * @timeout_ms on the session's epoll fd and run what is ready.
 */
static int trs_clt_wait(struct ibtrs_clt *clt, int timeout_ms)
{
	int err = 0;

	ibtrs_clt_plug(clt);
	/* busy poll (connecting): nothing is armed, the rounds reap */
	if (clt->opts.busy_poll || !trs_clt_each_cq(clt, trs_con_arm))
		err = trs_epoll_dispatch_at(clt->epfd, timeout_ms, &clt->now_us);
	clt->next_tick_us = clt->now_us + TRS_TICK_MS * 1000ULL;
	trs_clt_after_round(clt);
	return err;
}

static bool trs_clt_busy(const struct ibtrs_clt *clt)
{
	int i;

	if (!TAILQ_EMPTY(&clt->pending))
		return true;
	for (i = 0; i < clt->npaths; i++)
		if (clt->paths[i]->inflight)
			return true;
	return false;
}

/*
 * Reap first, always (no system call); only when nothing completed and the
 * caller wants to wait: busy poll spins on the CQs, event mode arms them
 * and sleeps in epoll (one round: a timer or connection event ends it, as
 * an IO does).
 */
int ibtrs_clt_poll(struct ibtrs_clt *clt, int timeout_ms)
{
	uint64_t end = 0;
	unsigned int empty = 0;
	int err;

	clt->ncompleted = 0;
	trs_clt_flush(clt);	/* never wait for IO that was not posted */
	if (timeout_ms > 0)
		end = trs_now_us() + timeout_ms * 1000ULL;
	for (;;) {
		err = trs_clt_round(clt);
		if (err)
			return err;
		if (clt->ncompleted || !timeout_ms)
			break;
		if (timeout_ms < 0 && !trs_clt_busy(clt))
			break;
		if (clt->opts.busy_poll) {
			if (timeout_ms > 0 && trs_now_us() >= end)
				break;
			if (clt->opts.busy_poll_yield &&
			    ++empty >= clt->opts.busy_poll_yield) {
				sched_yield();	/* idle: let the server run */
				empty = 0;
			}
			continue;
		}
		err = trs_clt_wait(clt, timeout_ms < 0 ? TRS_TICK_MS * 2 :
				   timeout_ms);
		if (err)
			return err;
		if (clt->ncompleted || timeout_ms > 0)
			break;
		if (!trs_clt_busy(clt))
			break;
	}
	return clt->ncompleted;
}

int ibtrs_clt_fd(const struct ibtrs_clt *clt)
{
	return clt->epfd;
}

static void trs_clt_free(struct ibtrs_clt *clt)
{
	int i;

	clt->closing = true;
	/* All down before any is freed: a teardown looks at every path. */
	for (i = 0; i < clt->npaths; i++) {
		clt->paths[i]->state = IBTRS_PATH_CLOSED;
		trs_clt_path_teardown(clt->paths[i]);
	}
	for (i = 0; i < clt->npaths; i++)
		trs_clt_path_free(clt->paths[i]);
	/* IO moved to pending by the teardowns, and never-posted IO */
	trs_clt_fail_pending(clt, -ECONNABORTED);
	if (clt->tick_src.fd > 0)
		close(clt->tick_src.fd);
	trs_devwatch_close(&clt->devwatch);
	if (clt->cm_ch)
		rdma_destroy_event_channel(clt->cm_ch);
	if (clt->epfd >= 0)
		close(clt->epfd);
	free(clt->reqs);
	free(clt->permits);
	free(clt->permit_map);
	free(clt->iobuf);
	free(clt);
}

struct ibtrs_clt *ibtrs_clt_open(const struct ibtrs_clt_opts *opts,
				 const char *const *paths, int npaths, int *err)
{
	struct ibtrs_clt *clt;
	int i, ret = -EINVAL, flags;
	const char *why = NULL;

	if (!opts || !opts->sessname || !*opts->sessname || !paths ||
	    npaths < 1 || npaths > IBTRS_MAX_PATHS) {
		trs_set_error("ibtrs_clt_open: need a session name and 1..%d paths",
			      IBTRS_MAX_PATHS);
		goto out_err;
	}
	if (strlen(opts->sessname) >= IBTRS_SESSNAME_MAX ||
	    opts->cons_per_path > TRS_MAX_CONS_PER_PATH ||
	    (unsigned int)opts->policy >= TRS_MP_MAX ||
	    (unsigned int)opts->write_mode >= TRS_WRITE_MAX) {
		trs_set_error("ibtrs_clt_open: invalid options");
		goto out_err;
	}
	if (trs_modes_check(TRS_IMPL_USER, (int)opts->mr_mode,
			    (int)opts->inval_mode, &why)) {
		trs_set_error("ibtrs_clt_open: mr_mode %s, inval_mode %s: %s",
			      ibtrs_mr_mode_name(opts->mr_mode),
			      ibtrs_inval_mode_name(opts->inval_mode), why);
		goto out_err;
	}
	ret = -ENOMEM;
	clt = calloc(1, sizeof(*clt));
	if (!clt)
		goto out_err;
	clt->opts = *opts;
	trs_clt_defaults(&clt->opts);
	snprintf(clt->sessname, sizeof(clt->sessname), "%s", opts->sessname);
	clt->opts.sessname = clt->sessname;
	clt->policy = clt->opts.policy;
	trs_uuid_gen(clt->uuid);
	TAILQ_INIT(&clt->pending);
	clt->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (clt->epfd < 0) {
		ret = -errno;
		goto out_free;
	}
	clt->cm_ch = rdma_create_event_channel();
	if (!clt->cm_ch) {
		ret = -errno;
		trs_set_error("rdma_create_event_channel: %s (no RDMA device?)",
			      strerror(errno));
		goto out_free;
	}
	flags = fcntl(clt->cm_ch->fd, F_GETFL);
	fcntl(clt->cm_ch->fd, F_SETFL, flags | O_NONBLOCK);
	clt->cm_src.fd = clt->cm_ch->fd;
	clt->cm_src.handler = trs_clt_cm_event;
	ret = trs_epoll_add(clt->epfd, &clt->cm_src);
	if (ret)
		goto out_free;
	clt->tick_src.fd = trs_timerfd_create(TRS_TICK_MS);
	if (clt->tick_src.fd < 0) {
		ret = clt->tick_src.fd;
		goto out_free;
	}
	clt->tick_src.handler = trs_clt_tick;
	ret = trs_epoll_add(clt->epfd, &clt->tick_src);
	if (ret)
		goto out_free;
	trs_devwatch_open(&clt->devwatch, clt->epfd);

	for (i = 0; i < npaths; i++) {
		ret = ibtrs_clt_add_path(clt, paths[i]);
		if (ret < 0)
			goto out_free;
	}
	/* Wait until every path is connected or has failed once. */
	for (;;) {
		bool settled = true;

		for (i = 0; i < clt->npaths; i++) {
			struct trs_clt_path *p = clt->paths[i];

			if (p->state == IBTRS_PATH_CONNECTING || p->fail_pending)
				settled = false;
		}
		if (settled)
			break;
		ret = trs_clt_round(clt);
		if (!ret && !clt->ncompleted)
			ret = trs_clt_wait(clt, clt->opts.busy_poll ? 1 : TRS_TICK_MS);
		if (ret)
			goto out_free;
	}
	if (!ibtrs_clt_paths_connected(clt)) {
		trs_set_error("session %s: no path could connect: %s", clt->sessname,
			      clt->paths[0]->fail_reason);
		ret = -ENOTCONN;
		for (i = 0; i < clt->npaths; i++)
			if (!strncmp(clt->paths[i]->fail_reason, "server rejected", 15))
				ret = -ECONNREFUSED;
		goto out_free;
	}
	return clt;

out_free:
	trs_clt_free(clt);
out_err:
	if (err)
		*err = ret;
	return NULL;
}

void ibtrs_clt_close(struct ibtrs_clt *clt)
{
	if (clt)
		trs_clt_free(clt);
}

unsigned int ibtrs_clt_queue_depth(const struct ibtrs_clt *clt)
{
	return clt->qd;
}

size_t ibtrs_clt_max_io_size(const struct ibtrs_clt *clt)
{
	return clt->params.chunk_size;
}

size_t ibtrs_clt_max_usr_len(const struct ibtrs_clt *clt)
{
	return clt->params.max_usr_len;
}

struct ibtrs_permit *ibtrs_clt_get_permit(struct ibtrs_clt *clt)
{
	int id;

	if (!clt->have_params)
		return NULL;
	id = trs_permit_get(&clt->pool);
	if (id < 0)
		return NULL;
	clt->permits[id].held = true;
	return &clt->permits[id];
}

void ibtrs_clt_put_permit(struct ibtrs_clt *clt, struct ibtrs_permit *permit)
{
	if (!permit || permit < clt->permits || permit >= clt->permits + clt->qd ||
	    clt->reqs[permit->id].active) {
		trs_err("%s: put of an invalid or busy permit", clt->sessname);
		return;
	}
	if (trs_permit_put(&clt->pool, permit->id))
		trs_err("%s: permit %u put twice", clt->sessname, permit->id);
	permit->held = false;
}

int ibtrs_clt_request(struct ibtrs_clt *clt, enum ibtrs_dir dir,
		      struct ibtrs_permit *permit, const void *usr,
		      size_t usr_len, const struct iovec *iov, int iovcnt,
		      ibtrs_conf_fn conf, void *priv)
{
	struct trs_clt_req *req;
	size_t len = 0;
	int i;

	if (!permit || permit < clt->permits || permit >= clt->permits + clt->qd ||
	    !permit->held || !conf || (dir != IBTRS_READ && dir != IBTRS_WRITE))
		return -EINVAL;
	if (clt->closing)
		return -ECONNABORTED;
	req = &clt->reqs[permit->id];
	if (req->active)
		return -EBUSY;
	if (usr_len > clt->params.max_usr_len || (usr_len && !usr))
		return -EMSGSIZE;
	if (iovcnt < 0 || iovcnt > TRS_MAX_IOV || (iovcnt && !iov))
		return -EINVAL;
	for (i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (len > clt->params.chunk_size)
		return -EMSGSIZE;
	if (clt->loss_expired && !ibtrs_clt_paths_connected(clt)) {
		trs_set_error("session %s: no path connected (ctrl_loss_tmo "
			      "expired)", clt->sessname);
		return -ENOTCONN;
	}
	req->dir = dir;
	req->usr_len = (uint16_t)usr_len;
	if (iovcnt)	/* @iov may be NULL for a request without data */
		memcpy(req->iov, iov, sizeof(*iov) * (size_t)iovcnt);
	req->iovcnt = iovcnt;
	req->len = len;
	req->conf = conf;
	req->priv = priv;
	req->seq = ++clt->seq;
	req->final_status = 0;
	/* mr_mode bounce: user memory is never handed to the NIC */
	req->bounce = true;
	if (iovcnt == 1 && clt->opts.mr_mode != IBTRS_MR_BOUNCE) {
		uintptr_t a = (uintptr_t)iov[0].iov_base;

		for (i = 0; i < clt->nregions; i++) {
			uintptr_t b = (uintptr_t)clt->regions[i].addr;

			if (a >= b && a + len <= b + clt->regions[i].len)
				req->bounce = false;
		}
	}
	if (usr_len)
		memcpy((char *)trs_clt_hdr(clt, req->id) +
		       sizeof(struct trs_msg_io_req), usr, usr_len);
	if (dir == IBTRS_WRITE && req->bounce) {
		char *dst = trs_clt_bounce(clt, req->id);

		for (i = 0; i < iovcnt; i++) {
			memcpy(dst, iov[i].iov_base, iov[i].iov_len);
			dst += iov[i].iov_len;
		}
	}
	req->active = true;
	req->path = NULL;
	TAILQ_INSERT_TAIL(&clt->pending, req, link);
	if (!ibtrs_clt_paths_connected(clt))
		clt->queued_no_path++;
	trs_clt_dispatch_pending(clt);
	return 0;
}

int ibtrs_clt_add_path(struct ibtrs_clt *clt, const char *addr)
{
	struct trs_clt_path *path;

	if (clt->npaths >= IBTRS_MAX_PATHS) {
		trs_set_error("%s: too many paths", clt->sessname);
		return -ENOSPC;
	}
	path = trs_clt_path_alloc(clt, addr);
	if (!path)
		return -EINVAL;
	path->idx = clt->npaths;
	clt->paths[clt->npaths++] = path;
	trs_clt_path_connect(path);	/* failures retry with backoff */
	return path->idx;
}

int ibtrs_clt_remove_path(struct ibtrs_clt *clt, int idx)
{
	struct trs_clt_path *path;

	if (idx < 0 || idx >= clt->npaths)
		return -EINVAL;
	path = clt->paths[idx];
	if (path->state == IBTRS_PATH_CLOSED)
		return -EALREADY;
	path->state = IBTRS_PATH_CLOSED;
	trs_clt_path_teardown(path);	/* its IO fails over */
	trs_clt_dispatch_pending(clt);
	return 0;
}

int ibtrs_clt_set_policy(struct ibtrs_clt *clt, enum ibtrs_mp_policy policy)
{
	if ((unsigned int)policy >= TRS_MP_MAX)
		return -EINVAL;
	clt->policy = policy;
	return 0;
}

int ibtrs_clt_path_count(const struct ibtrs_clt *clt)
{
	int i, n = 0;

	for (i = 0; i < clt->npaths; i++)
		n += clt->paths[i]->state != IBTRS_PATH_CLOSED;
	return n;
}

int ibtrs_clt_paths_connected(const struct ibtrs_clt *clt)
{
	int i, n = 0;

	for (i = 0; i < clt->npaths; i++)
		n += clt->paths[i]->state == IBTRS_PATH_CONNECTED &&
		     !clt->paths[i]->fail_pending;
	return n;
}

int ibtrs_clt_get_stats(const struct ibtrs_clt *clt, struct ibtrs_clt_stats *st)
{
	int i;

	memset(st, 0, sizeof(*st));
	st->npaths = clt->npaths;
	for (i = 0; i < clt->npaths; i++) {
		const struct trs_clt_path *p = clt->paths[i];
		struct trs_con_stats cs = p->con_st;
		unsigned int c;

		if (p->cons)
			for (c = 0; c < p->ncons; c++)
				trs_con_stats_sum(&cs, &p->cons[c].c);
		st->path[i] = p->st;
		st->path[i].post_sends = cs.post_sends;
		st->path[i].send_wrs = cs.send_wrs;
		st->path[i].post_recvs = cs.post_recvs;
		st->path[i].recv_wrs = cs.recv_wrs;
		st->path[i].cq_sweeps = cs.sweeps;
		st->path[i].cqes = cs.cqes;
		st->path[i].cq_arms = cs.arms;
		st->path[i].cq_events = cs.events;
		st->path[i].signaled = cs.signaled;
		snprintf(st->path[i].addr, sizeof(st->path[i].addr), "%s",
			 p->addr_str);
		st->path[i].state = p->state;
		st->path[i].inflight = p->inflight;
		st->path[i].lat_us = trs_mp_lat_us(p->lat_ewma);
	}
	st->queued_no_path = clt->queued_no_path;
	st->failed_no_path = clt->failed_no_path;
	return 0;
}
