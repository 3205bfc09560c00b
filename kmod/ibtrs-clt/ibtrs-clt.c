// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibtrs-clt.c - IBTRS client transport (ibtrs-client.ko).
 *
 * A session holds 1..IBTRS_CLT_MAX_PATHS paths to one server session whose
 * chunk pool all paths share (trs/PROTOCOL.md 2). Each path has nr_cons RC
 * connections (cid 0..nr_cons-1; cons_per_path, 0: one per online CPU) on
 * one device and PD, each with its own CQ, QP, receive ring and read MR
 * pool; INFO and heartbeats go on cid 0. An IO goes on the connection of
 * its hint (the block layer's hardware queue) of the path the policy
 * chose, and is answered there. A request is one RDMA_WRITE_WITH_IMM into the
 * chunk of its id (the caller's: ibnbd-client's block layer tag); the
 * answer is one message (section 4). Reads expose
 * the caller's pages through a fast-registration MR (REG_MR chained before
 * the request, REMOTE_WRITE for exactly the IO buffer); the server ends
 * that access with SEND_WITH_INV, else the client posts LOCAL_INV and
 * completes the IO only in its completion (section 5, the kernel's
 * equivalent of the userspace memory windows). Writes send from the
 * caller's pages with the PD's local_dma_lkey (local access only).
 *
 * Pure protocol code (encode/validate, the receive prologue, heartbeat,
 * path selection) is trs/common/, compiled unchanged.
 *
 * A failed path is torn down in process context; its unanswered IO is
 * re-posted on another path with the same chunk id (failover) and the path
 * reconnects with backoff (trs/common/backoff.c). With every path down new
 * IO gets -EAGAIN for ctrl_loss_tmo_ms, then -ENOTCONN.
 *
 * Unanswered IO of a failed path that finds no other path waits for a
 * reconnect as long as new IO does, then fails with -ENOTCONN.
 *
 * Sysfs: /sys/kernel/ibtrs-client/<sessname>/ (policy, counters,
 * add_path, per path reconnect/remove_path). Device removal: an ib_client.
 *
 * Files: ibtrs-clt.c (this one: module parameters, path failure, sessions
 * and their API, device arrival and removal, init), ibtrs-clt-conn.c
 * (connection and path set-up and teardown, reconnect), ibtrs-clt-io.c
 * (requests, receives, the end of an IO, heartbeats), ibtrs-clt-sysfs.c,
 * and the shared structures in ibtrs-clt-pri.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/cpumask.h>

#include "ibtrs-clt-pri.h"

uint ibtrs_clt_max_queue_depth = 512;
module_param_named(max_queue_depth, ibtrs_clt_max_queue_depth, uint, 0444);
MODULE_PARM_DESC(max_queue_depth, "largest server queue depth accepted (receives posted per path)");

uint ibtrs_clt_hb_interval_ms = 500;
module_param_named(hb_interval_ms, ibtrs_clt_hb_interval_ms, uint, 0444);
MODULE_PARM_DESC(hb_interval_ms, "heartbeat interval (default 500)");

uint ibtrs_clt_hb_missed_max = 3;
module_param_named(hb_missed_max, ibtrs_clt_hb_missed_max, uint, 0444);
MODULE_PARM_DESC(hb_missed_max, "silent intervals before a path fails (default 3)");

uint ibtrs_clt_reconnect_min_ms = 1000;
module_param_named(reconnect_min_ms, ibtrs_clt_reconnect_min_ms, uint, 0444);
MODULE_PARM_DESC(reconnect_min_ms, "first reconnect delay (default 1000, doubles per attempt)");

uint ibtrs_clt_reconnect_max_ms = 30000;
module_param_named(reconnect_max_ms, ibtrs_clt_reconnect_max_ms, uint, 0444);
MODULE_PARM_DESC(reconnect_max_ms, "largest reconnect delay (default 30000)");

uint ibtrs_clt_ctrl_loss_tmo_ms = 30000;
module_param_named(ctrl_loss_tmo_ms, ibtrs_clt_ctrl_loss_tmo_ms, uint, 0444);
MODULE_PARM_DESC(ctrl_loss_tmo_ms, "with every path down, new IO waits this long, then fails (default 30000)");

/*
 * 0 (default): the RC ACK timeout is the one the CM derives from the path,
 * as nvme-rdma and rnbd leave it (RoCE: packet lifetime 18, so 19 = 2.1 s
 * per retry). The heartbeat (3 x 500 ms) fails a silent path long before
 * the retries run out. A short timer (14 = 67 ms, this module's first
 * value) fires whenever the peer is slow to ACK (emulated NICs under load),
 * and rxe 6.1 then executes a finished REG_MR a second time and fails the
 * QP (trs/PROTOCOL.md section 9).
 */
uint ibtrs_clt_ack_timeout;
module_param_named(ack_timeout, ibtrs_clt_ack_timeout, uint, 0444);
MODULE_PARM_DESC(ack_timeout, "RC ACK timeout per retry, 4.096 us * 2^N, N 8-31; 0: the CM's (default)");

uint ibtrs_clt_cons_per_path;
module_param_named(cons_per_path, ibtrs_clt_cons_per_path, uint, 0444);
MODULE_PARM_DESC(cons_per_path, "connections per path (default 0: one per online CPU, at most 64)");

int ibtrs_clt_mp_policy = TRS_MP_ROUND_ROBIN;
module_param_named(mp_policy, ibtrs_clt_mp_policy, int, 0444);
MODULE_PARM_DESC(mp_policy, "path selection: 0 round-robin, 1 min-inflight, 2 min-latency");

/*
 * mr_mode and inval_mode: strings, the names of trs/common/modes.c, parsed
 * into the enum when the module is loaded (0444: never later). An unknown
 * value, or a mode of the shared set this client does not offer (mw, reg:
 * userspace's), fails the load with -EINVAL and says why.
 */
static int ibtrs_clt_mr_mode_set(const char *val, const struct kernel_param *kp)
{
	const char *why = NULL;
	int m = trs_mr_mode_parse(val, TRS_IMPL_KERNEL, &why);

	if (m < 0) {
		pr_err("mr_mode '%.*s': %s\n", val ? (int)strcspn(val, "\n") : 0,
		       val ? : "", why);
		return -EINVAL;
	}
	*(int *)kp->arg = m;
	return 0;
}

static int ibtrs_clt_mr_mode_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%s\n",
			 trs_mr_mode_name(*(int *)kp->arg));
}

static const struct kernel_param_ops ibtrs_clt_mr_mode_ops = {
	.set = ibtrs_clt_mr_mode_set,
	.get = ibtrs_clt_mr_mode_get,
};

/*
 * frwr: every read buffer is registered (REG_MR of exactly the buffer, a
 * new key per IO). global (UNSAFE, for comparisons only): the PD has
 * IB_PD_UNSAFE_GLOBAL_RKEY and a read of ONE DMA segment is sent with its
 * DMA address and pd->unsafe_global_rkey, nothing registered (as
 * nvme-rdma with register_always=N); a read of several segments is still
 * registered. The global rkey lets the server read and write all of the
 * client's memory for the life of the path. bounce: the IO's slot of a
 * per-session bounce pool is registered as frwr registers a buffer and the
 * data copied (ibtrs-clt-bounce.c): the caller's memory is never exposed.
 */
int ibtrs_clt_mr_mode = IBTRS_CLT_MR_FRWR;
module_param_cb(mr_mode, &ibtrs_clt_mr_mode_ops, &ibtrs_clt_mr_mode, 0444);
MODULE_PARM_DESC(mr_mode, "read buffers: frwr (default: REG_MR per read), bounce (REG_MR of a bounce-pool slot, data copied) or global (UNSAFE, comparison only: a one-segment read uses the PD's global rkey, all memory exposed)");

static int ibtrs_clt_inval_mode_set(const char *val,
				    const struct kernel_param *kp)
{
	const char *why = NULL;
	int m = trs_inval_mode_parse(val, &why);

	if (m < 0) {
		pr_err("inval_mode '%.*s': %s\n",
		       val ? (int)strcspn(val, "\n") : 0, val ? : "", why);
		return -EINVAL;
	}
	*(int *)kp->arg = m;
	return 0;
}

static int ibtrs_clt_inval_mode_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%s\n",
			 trs_inval_mode_name(*(int *)kp->arg));
}

static const struct kernel_param_ops ibtrs_clt_inval_mode_ops = {
	.set = ibtrs_clt_inval_mode_set,
	.get = ibtrs_clt_inval_mode_get,
};

/*
 * How the server's access to a registered read buffer ends: remote (the
 * server's SEND_WITH_INV, asked by NEED_INV), local (the client's
 * LOCAL_INV after the answer, the IO ends in its completion) or none
 * (UNSAFE, comparison only: the registration stays valid after the IO,
 * until a LOCAL_INV chained in front of the MR's next REG_MR, or the
 * path's teardown). A read with the global rkey has nothing to invalidate.
 */
int ibtrs_clt_inval_mode = IBTRS_CLT_INV_REMOTE;
module_param_cb(inval_mode, &ibtrs_clt_inval_mode_ops, &ibtrs_clt_inval_mode,
		0444);
MODULE_PARM_DESC(inval_mode, "end of a registered read buffer's exposure: remote (default: server's SEND_WITH_INV), local (client's LOCAL_INV before the IO ends) or none (UNSAFE, comparison only: stays registered after the IO)");

static int ibtrs_clt_write_mode_set(const char *val,
				    const struct kernel_param *kp)
{
	const char *why = NULL;
	int m = trs_write_mode_parse(val, TRS_IMPL_KERNEL, &why);

	if (m < 0) {
		pr_err("write_mode '%.*s': %s\n",
		       val ? (int)strcspn(val, "\n") : 0, val ? : "", why);
		return -EINVAL;
	}
	*(int *)kp->arg = m;
	return 0;
}

static int ibtrs_clt_write_mode_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%s\n",
			 trs_write_mode_name(*(int *)kp->arg));
}

static const struct kernel_param_ops ibtrs_clt_write_mode_ops = {
	.set = ibtrs_clt_write_mode_set,
	.get = ibtrs_clt_write_mode_get,
};

/*
 * How write data reaches the server: push (default: the client
 * RDMA-WRITEs it into the chunk with the request) or pull (the server
 * RDMA-READs it from the write's buffer, registered per IO like a read's
 * and invalidated as inval_mode says; trs/PROTOCOL.md 4). Taken by each
 * path when it is made.
 */
int ibtrs_clt_write_mode = TRS_WRITE_PUSH;
module_param_cb(write_mode, &ibtrs_clt_write_mode_ops, &ibtrs_clt_write_mode,
		0444);
MODULE_PARM_DESC(write_mode, "write data movement: push (default: the client writes the data into the server's chunk) or pull (the server RDMA-READs it from the write's buffer, registered per IO and invalidated as inval_mode says)");

struct workqueue_struct *ibtrs_clt_wq;

/* every open session, for the device removal (ibtrs_clt_ib_client) */
LIST_HEAD(ibtrs_clt_sessions);
/* ibtrs_clt_sessions, and a session's path slots against sysfs and removal */
DEFINE_MUTEX(ibtrs_clt_sess_mutex);

/* A path is connected. Under sess->lock. */
static bool ibtrs_clt_any_usable(const struct ibtrs_clt_sess *sess)
{
	const struct ibtrs_clt_path *p;
	int i;

	for (i = 0; i < sess->npaths; i++) {
		p = ibtrs_clt_path_at(sess, i);
		if (p && p->state == IBTRS_CLT_PATH_CONNECTED)
			return true;
	}
	return false;
}

/*
 * Fail @path: nothing more is posted on it; the error work tears it down.
 * Under sess->lock (from a context that holds it already).
 */
void ibtrs_clt_path_fail_locked(struct ibtrs_clt_path *path, const char *why)
{
	struct ibtrs_clt_sess *sess = path->sess;
	bool was_up, connecting;

	lockdep_assert_held(&sess->lock);
	was_up = path->state == IBTRS_CLT_PATH_CONNECTED;
	connecting = path->state == IBTRS_CLT_PATH_CONNECTING;
	if (path->state != IBTRS_CLT_PATH_IDLE)
		WRITE_ONCE(path->state, IBTRS_CLT_PATH_FAILED);
	if (was_up && !ibtrs_clt_any_usable(sess))
		sess->all_down_at = jiffies ? : 1;
	if (connecting) {
		int i;

		/* do not let ibtrs_clt_path_connect() wait for its timeouts */
		for (i = 0; i < path->ncons; i++) {
			struct ibtrs_clt_con *con = &path->cons[i];

			if (!completion_done(&con->cm_done)) {
				con->cm_err = -ECONNRESET;
				complete(&con->cm_done);
			}
		}
		if (!completion_done(&path->info_done)) {
			path->info_err = -ECONNRESET;
			complete(&path->info_done);
		}
	}
	if (was_up && !atomic_xchg(&path->failing, 1)) {
		ibtrs_clt_err(path, "failed: %s\n", why);
		queue_work(ibtrs_clt_wq, &path->err_work);
	}
}

/* Fail @path, from any context but one holding sess->lock. */
void ibtrs_clt_path_fail(struct ibtrs_clt_path *path, const char *why)
{
	struct ibtrs_clt_sess *sess = path->sess;
	unsigned long flags;

	spin_lock_irqsave(&sess->lock, flags);
	ibtrs_clt_path_fail_locked(path, why);
	spin_unlock_irqrestore(&sess->lock, flags);
}

/* Every failed work completion goes through here. */
void ibtrs_clt_wr_error(struct ibtrs_clt_path *path, struct ib_wc *wc,
			const char *op)
{
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		ibtrs_clt_err(path, "%s failed: %s (%d)\n", op,
			      ib_wc_status_msg(wc->status), wc->status);
	ibtrs_clt_path_fail(path, "work request failed");
}

/* ---------------------------------------------------------------- */
/* Sessions                                                          */

static void ibtrs_clt_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_clt_con *con = cq->cq_context;

	if (unlikely(wc->status != IB_WC_SUCCESS))
		ibtrs_clt_wr_error(con->path, wc, "REG_MR");
}

static struct kobject *ibtrs_clt_kobj;

const char *const ibtrs_clt_state_names[] = {
	[IBTRS_CLT_PATH_IDLE] = "idle",
	[IBTRS_CLT_PATH_CONNECTING] = "connecting",
	[IBTRS_CLT_PATH_CONNECTED] = "connected",
	[IBTRS_CLT_PATH_FAILED] = "failed",
};

const char *const ibtrs_clt_policy_names[] = {
	[TRS_MP_ROUND_ROBIN] = "round-robin",
	[TRS_MP_MIN_INFLIGHT] = "min-inflight",
	[TRS_MP_MIN_LATENCY] = "min-latency",
};

/* A path in slot @idx of @sess, its sysfs directory under paths/. */
struct ibtrs_clt_path *ibtrs_clt_path_alloc(struct ibtrs_clt_sess *sess,
					    int idx,
					    const struct ibtrs_clt_addr *addr)
{
	struct ibtrs_clt_path *path;
	int i, ret;

	path = kzalloc(sizeof(*path), GFP_KERNEL);
	if (!path)
		return ERR_PTR(-ENOMEM);
	path->ncons = sess->nr_cons + sess->nr_poll;
	path->cons = kcalloc(path->ncons, sizeof(*path->cons), GFP_KERNEL);
	path->stats = alloc_percpu(struct ibtrs_clt_stats);
	if (!path->cons || !path->stats) {
		free_percpu(path->stats);
		kfree(path->cons);
		kfree(path);
		return ERR_PTR(-ENOMEM);
	}
	for (i = 0; i < path->ncons; i++) {
		struct ibtrs_clt_con *con = &path->cons[i];

		con->path = path;
		con->cid = i;
		con->poll = i >= sess->nr_cons;
		con->ctl_cqe.done = ibtrs_clt_ctl_done;
		con->reg_cqe.done = ibtrs_clt_reg_done;
		con->req_cqe.done = ibtrs_clt_req_done;
		init_completion(&con->cm_done);
	}
	kobject_init(&path->kobj, &ibtrs_clt_path_ktype);
	path->sess = sess;
	path->idx = idx;
	path->mr_mode = ibtrs_clt_mr_mode;
	path->inval_mode = ibtrs_clt_inval_mode;
	path->write_mode = ibtrs_clt_write_mode;
	path->addr = *addr;
	if (path->addr.dst.ss_family == AF_INET)
		((struct sockaddr_in *)&path->addr.dst)->sin_port =
			htons(sess->port);
	else
		((struct sockaddr_in6 *)&path->addr.dst)->sin6_port =
			htons(sess->port);
	generate_random_uuid(path->uuid);
	spin_lock_init(&path->lock);
	mutex_init(&path->conn_mutex);
	INIT_DELAYED_WORK(&path->hb_work, ibtrs_clt_hb_work);
	INIT_WORK(&path->err_work, ibtrs_clt_err_work);
	INIT_DELAYED_WORK(&path->reco_work, ibtrs_clt_reco_work);
	if (addr->src.ss_family != AF_UNSPEC)
		ret = kobject_add(&path->kobj, sess->paths_kobj, "%pISc@%pISc",
				  &addr->src, &addr->dst);
	else
		ret = kobject_add(&path->kobj, sess->paths_kobj, "%pISc",
				  &addr->dst);
	if (ret) {
		kobject_put(&path->kobj);
		return ERR_PTR(ret);
	}
	return path;
}

/* Put @path into its slot (visible to IO selection and device events). */
void ibtrs_clt_path_install(struct ibtrs_clt_path *path)
{
	struct ibtrs_clt_sess *sess = path->sess;
	unsigned long flags;

	mutex_lock(&ibtrs_clt_sess_mutex);
	spin_lock_irqsave(&sess->lock, flags);
	rcu_assign_pointer(sess->paths[path->idx], path);
	WRITE_ONCE(sess->npaths, max(sess->npaths, path->idx + 1));
	spin_unlock_irqrestore(&sess->lock, flags);
	mutex_unlock(&ibtrs_clt_sess_mutex);
}

/*
 * Stop @path for good: no reconnect, no error work; tear it down (its
 * unanswered IO fails over). Then take it out of its slot and free it.
 * Process context; not from the path's own sysfs store unless that
 * store's file was removed first.
 */
void ibtrs_clt_path_stop(struct ibtrs_clt_path *path)
{
	mutex_lock(&ibtrs_clt_sess_mutex);	/* ibtrs_clt_add_one() sees it */
	WRITE_ONCE(path->removing, true);
	mutex_unlock(&ibtrs_clt_sess_mutex);
	cancel_delayed_work_sync(&path->reco_work);
	atomic_set(&path->failing, 1);	/* no error work from now */
	flush_work(&path->err_work);
	cancel_delayed_work_sync(&path->reco_work);
	ibtrs_clt_path_down(path);
}

void ibtrs_clt_path_uninstall(struct ibtrs_clt_path *path)
{
	struct ibtrs_clt_sess *sess = path->sess;
	unsigned long flags;

	mutex_lock(&ibtrs_clt_sess_mutex);
	sess->gone[0] += ibtrs_clt_path_sum(path, msgs);
	sess->gone[1] += ibtrs_clt_path_sum(path, reg_wrs);
	sess->gone[2] += atomic64_read(&path->failovers);
	sess->gone[3] += atomic64_read(&path->reconnects);
	spin_lock_irqsave(&sess->lock, flags);
	if (ibtrs_clt_path_at(sess, path->idx) == path)
		RCU_INIT_POINTER(sess->paths[path->idx], NULL);
	spin_unlock_irqrestore(&sess->lock, flags);
	mutex_unlock(&ibtrs_clt_sess_mutex);
	/* a request or a poller may still look at it: freed after this */
	synchronize_rcu();
}

void ibtrs_clt_sess_release(struct kobject *kobj)
{
	struct ibtrs_clt_sess *sess = container_of(kobj, struct ibtrs_clt_sess,
						   kobj);

	free_percpu(sess->stats);
	free_percpu(sess->rr_cursor);
	ibtrs_clt_bounce_free(sess);
	kfree(sess->hdrs);
	kfree(sess->ios);
	kfree(sess);
}

struct ibtrs_clt_sess *ibtrs_clt_open(const char *sessname,
				      const struct ibtrs_clt_addr *paths,
				      int npaths, u16 port, u32 max_usr_len,
				      int nr_poll)
{
	struct ibtrs_clt_sess *sess;
	int i, up = 0, ret = -ENOTCONN;

	if (npaths < 1 || npaths > IBTRS_CLT_MAX_PATHS ||
	    strlen(sessname) >= TRS_SESSNAME_MAX || !*sessname ||
	    strchr(sessname, '/') || !max_usr_len ||
	    max_usr_len > TRS_MAX_USR_LEN || nr_poll < 0 ||
	    nr_poll >= TRS_MAX_CONS_PER_PATH)
		return ERR_PTR(-EINVAL);
	sess = kzalloc(sizeof(*sess), GFP_KERNEL);
	if (!sess)
		return ERR_PTR(-ENOMEM);
	kobject_init(&sess->kobj, &ibtrs_clt_sess_ktype);
	sess->stats = alloc_percpu(struct ibtrs_clt_sess_stats);
	sess->rr_cursor = alloc_percpu(u32);
	if (!sess->stats || !sess->rr_cursor) {
		ret = -ENOMEM;
		goto out_put;
	}
	strscpy(sess->sessname, sessname, sizeof(sess->sessname));
	generate_random_uuid(sess->uuid);
	sess->port = port;
	sess->want_usr_len = max_usr_len;
	/* the connections of a path, polled ones included, fit cid_num */
	sess->nr_poll = nr_poll;
	sess->nr_cons = min_t(uint, ibtrs_clt_cons_per_path ? : num_online_cpus(),
			      TRS_MAX_CONS_PER_PATH - nr_poll);
	sess->mp_policy = ibtrs_clt_mp_policy;
	spin_lock_init(&sess->lock);
	mutex_init(&sess->ctl_mutex);
	INIT_LIST_HEAD(&sess->pending);
	INIT_DELAYED_WORK(&sess->pending_work, ibtrs_clt_pending_work);
	ret = kobject_add(&sess->kobj, ibtrs_clt_kobj, "%s", sessname);
	if (ret) {
		pr_err("sess %s: cannot create its sysfs directory: %d\n",
		       sessname, ret);
		goto out_put;
	}
	sess->paths_kobj = kobject_create_and_add("paths", &sess->kobj);
	if (!sess->paths_kobj) {
		ret = -ENOMEM;
		goto out_del;
	}
	for (i = 0; i < npaths; i++) {
		struct ibtrs_clt_path *path;

		path = ibtrs_clt_path_alloc(sess, i, &paths[i]);
		if (IS_ERR(path)) {
			ret = PTR_ERR(path);
			goto out_free_paths;
		}
		RCU_INIT_POINTER(sess->paths[i], path);
	}
	sess->npaths = npaths;
	mutex_lock(&ibtrs_clt_sess_mutex);
	list_add_tail(&sess->list, &ibtrs_clt_sessions);
	mutex_unlock(&ibtrs_clt_sess_mutex);
	for (i = 0; i < npaths; i++) {
		ret = ibtrs_clt_path_connect(ibtrs_clt_path_at(sess, i));
		if (!ret)
			up++;
	}
	if (!up) {
		ibtrs_clt_close(sess);
		return ERR_PTR(ret);
	}
	pr_info("sess %s: open, %d of %d paths connected\n", sess->sessname,
		up, npaths);
	for (i = 0; i < npaths; i++) {	/* the others keep trying */
		struct ibtrs_clt_path *path = ibtrs_clt_path_at(sess, i);

		if (READ_ONCE(path->state) == IBTRS_CLT_PATH_IDLE)
			ibtrs_clt_reco_schedule(path);
	}
	return sess;

out_free_paths:
	for (i = 0; i < npaths; i++) {
		struct ibtrs_clt_path *path = ibtrs_clt_path_at(sess, i);

		if (!path)
			continue;
		kobject_del(&path->kobj);
		kobject_put(&path->kobj);
	}
	kobject_del(sess->paths_kobj);
	kobject_put(sess->paths_kobj);
out_del:
	kobject_del(&sess->kobj);
out_put:
	kobject_put(&sess->kobj);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(ibtrs_clt_open);

void ibtrs_clt_close(struct ibtrs_clt_sess *sess)
{
	unsigned long flags;
	int i;

	mutex_lock(&ibtrs_clt_sess_mutex);	/* a device removal is done */
	list_del(&sess->list);
	mutex_unlock(&ibtrs_clt_sess_mutex);
	mutex_lock(&sess->ctl_mutex);		/* so are the sysfs controls */
	spin_lock_irqsave(&sess->lock, flags);
	sess->closing = true;
	spin_unlock_irqrestore(&sess->lock, flags);
	mutex_unlock(&sess->ctl_mutex);
	for (i = 0; i < sess->npaths; i++) {
		struct ibtrs_clt_path *path = ibtrs_clt_path_at(sess, i);

		if (!path)
			continue;
		ibtrs_clt_path_stop(path);
		kobject_del(&path->kobj);
	}
	cancel_delayed_work_sync(&sess->pending_work);
	ibtrs_clt_pending_run(sess, true);
	pr_info("sess %s: closed\n", sess->sessname);
	for (i = 0; i < sess->npaths; i++) {
		struct ibtrs_clt_path *path = ibtrs_clt_path_at(sess, i);

		if (!path)
			continue;
		ibtrs_clt_path_uninstall(path);
		kobject_put(&path->kobj);
	}
	kobject_del(sess->paths_kobj);
	kobject_put(sess->paths_kobj);
	kobject_del(&sess->kobj);
	kobject_put(&sess->kobj);
}
EXPORT_SYMBOL_GPL(ibtrs_clt_close);

int ibtrs_clt_nr_cons(const struct ibtrs_clt_sess *sess)
{
	return sess->nr_cons;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_nr_cons);

int ibtrs_clt_nr_poll(const struct ibtrs_clt_sess *sess)
{
	return sess->nr_poll;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_nr_poll);

const struct cpumask *ibtrs_clt_con_affinity(struct ibtrs_clt_sess *sess,
					     unsigned int hint)
{
	const struct cpumask *mask = NULL;
	struct ibtrs_clt_path *path;
	struct ib_device *dev;

	if (hint >= sess->nr_cons)
		return NULL;
	mutex_lock(&ibtrs_clt_sess_mutex);
	path = ibtrs_clt_path_at(sess, 0);
	dev = path ? READ_ONCE(path->dev) : NULL;
	/* ibtrs_clt_create_ib(): connection i takes vector i */
	if (dev && hint < dev->num_comp_vectors)
		mask = ib_get_vector_affinity(dev, hint);
	mutex_unlock(&ibtrs_clt_sess_mutex);
	return mask;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_con_affinity);

u32 ibtrs_clt_queue_depth(const struct ibtrs_clt_sess *sess)
{
	return sess->queue_depth;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_queue_depth);

u32 ibtrs_clt_max_io_size(const struct ibtrs_clt_sess *sess)
{
	return sess->max_io;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_max_io_size);

u32 ibtrs_clt_max_segments(const struct ibtrs_clt_sess *sess)
{
	return sess->max_segs;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_max_segments);

u32 ibtrs_clt_max_usr_len(const struct ibtrs_clt_sess *sess)
{
	return sess->max_usr_len;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_max_usr_len);

int ibtrs_clt_paths_up(const struct ibtrs_clt_sess *sess)
{
	int i, n = 0;

	mutex_lock(&ibtrs_clt_sess_mutex);
	for (i = 0; i < sess->npaths; i++) {
		const struct ibtrs_clt_path *p = ibtrs_clt_path_at(sess, i);

		n += p && READ_ONCE(p->state) == IBTRS_CLT_PATH_CONNECTED;
	}
	mutex_unlock(&ibtrs_clt_sess_mutex);
	return n;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_paths_up);

const char *ibtrs_clt_sessname(const struct ibtrs_clt_sess *sess)
{
	return sess->sessname;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_sessname);

int ibtrs_clt_paths_show(const struct ibtrs_clt_sess *sess, char *buf,
			 size_t size)
{
	int i, n = 0;

	mutex_lock(&ibtrs_clt_sess_mutex);
	for (i = 0; i < sess->npaths; i++) {
		struct ibtrs_clt_path *p = ibtrs_clt_path_at(sess, i);

		if (!p)
			continue;
		n += scnprintf(buf + n, size - n,
			       "path %pISp state=%s reqs=%lld rsps=%lld reg_wrs=%lld local_invs=%lld hb_sent=%lld hb_rtt_us=%llu proto_errors=%lld failovers=%lld reconnects=%lld inflight=%lld msgs=%lld sig_reqs=%lld poll_cqes=%lld mr_mode=%s inval_mode=%s write_mode=%s reg_mrs=%lld inv_rsps=%lld cons=%d\n",
			       &p->addr.dst,
			       ibtrs_clt_state_names[READ_ONCE(p->state)],
			       ibtrs_clt_path_sum(p, reqs),
			       ibtrs_clt_path_sum(p, rsps),
			       ibtrs_clt_path_sum(p, reg_wrs),
			       ibtrs_clt_path_sum(p, local_invs),
			       atomic64_read(&p->hb_sent), p->hb_rtt_us,
			       atomic64_read(&p->proto_errors),
			       atomic64_read(&p->failovers),
			       atomic64_read(&p->reconnects),
			       ibtrs_clt_path_sum(p, inflight),
			       ibtrs_clt_path_sum(p, msgs),
			       ibtrs_clt_path_sum(p, sig_reqs),
			       ibtrs_clt_path_sum(p, poll_cqes),
			       trs_mr_mode_name(p->mr_mode),
			       trs_inval_mode_name(p->inval_mode),
			       trs_write_mode_name(p->write_mode),
			       ibtrs_clt_path_sum(p, reg_mrs),
			       ibtrs_clt_path_sum(p, inv_rsps), p->ncons);
	}
	mutex_unlock(&ibtrs_clt_sess_mutex);
	return n;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_paths_show);

/* ---------------------------------------------------------------- */
/* Device arrival and removal                                        */

/*
 * @path uses @dev, which goes away: fail the path (its IO fails over as
 * after any failure), wait for its teardown and for a connect in progress,
 * until nothing of the path is on @dev. Bounded: a failed path's connect
 * ends its waits at once.
 */
static void ibtrs_clt_path_release_dev(struct ibtrs_clt_path *path,
				       struct ib_device *dev)
{
	bool busy;

	for (;;) {
		ibtrs_clt_path_fail(path, "device removal");
		flush_work(&path->err_work);
		if (mutex_trylock(&path->conn_mutex)) {
			busy = READ_ONCE(path->dev) == dev;
			mutex_unlock(&path->conn_mutex);
			if (!busy)
				return;
		}
		msleep(20);
	}
}

/*
 * Called before the RDMA CM's own removal (clients go in reverse order of
 * registration): every QP, CQ, MR pool, PD and cm_id of our paths on @dev
 * is released when this returns. The paths reconnect with backoff; a path
 * on a device that is gone keeps trying until one for its address appears.
 */
static void ibtrs_clt_remove_one(struct ib_device *dev, void *client_data)
{
	struct ibtrs_clt_sess *sess;
	int i;

	mutex_lock(&ibtrs_clt_sess_mutex);
	list_for_each_entry(sess, &ibtrs_clt_sessions, list) {
		for (i = 0; i < sess->npaths; i++) {
			struct ibtrs_clt_path *path = ibtrs_clt_path_at(sess, i);

			if (!path || READ_ONCE(path->dev) != dev)
				continue;
			ibtrs_clt_info(path, "device %s removed\n",
				       dev_name(&dev->dev));
			ibtrs_clt_path_release_dev(path, dev);
			ibtrs_clt_info(path, "released device %s\n",
				       dev_name(&dev->dev));
		}
	}
	mutex_unlock(&ibtrs_clt_sess_mutex);
}

/* A new device may carry a path that is down: try it soon. */
int ibtrs_clt_add_one(struct ib_device *dev)
{
	struct ibtrs_clt_sess *sess;
	int i;

	mutex_lock(&ibtrs_clt_sess_mutex);
	list_for_each_entry(sess, &ibtrs_clt_sessions, list) {
		for (i = 0; i < sess->npaths; i++) {
			struct ibtrs_clt_path *path = ibtrs_clt_path_at(sess, i);

			if (path && !path->removing &&
			    READ_ONCE(path->state) == IBTRS_CLT_PATH_IDLE &&
			    delayed_work_pending(&path->reco_work))
				mod_delayed_work(ibtrs_clt_wq, &path->reco_work,
						 msecs_to_jiffies(ibtrs_clt_reconnect_min_ms));
		}
	}
	mutex_unlock(&ibtrs_clt_sess_mutex);
	return 0;
}

static struct ib_client ibtrs_clt_ib_client = {
	.name = "ibtrs_client",
	.add = ibtrs_clt_add_one,
	.remove = ibtrs_clt_remove_one,
};

static int __init ibtrs_clt_init(void)
{
	int ret;

	if (ibtrs_clt_max_queue_depth < 1 || ibtrs_clt_max_queue_depth >= TRS_MAX_QUEUE_DEPTH ||
	    !ibtrs_clt_hb_interval_ms || !ibtrs_clt_hb_missed_max || !ibtrs_clt_reconnect_min_ms ||
	    ibtrs_clt_reconnect_max_ms < ibtrs_clt_reconnect_min_ms ||
	    (ibtrs_clt_ack_timeout && (ibtrs_clt_ack_timeout < 8 || ibtrs_clt_ack_timeout > 31)) ||
	    ibtrs_clt_mp_policy < 0 || ibtrs_clt_mp_policy >= TRS_MP_MAX) {
		pr_err("invalid module parameter\n");
		return -EINVAL;
	}
	if (ibtrs_clt_mr_mode == IBTRS_CLT_MR_GLOBAL)
		pr_warn("mr_mode=global is UNSAFE (comparison only): the server can read and write all of this host's memory through every path's global rkey\n");
	if (ibtrs_clt_inval_mode == IBTRS_CLT_INV_NONE)
		pr_warn("inval_mode=none is UNSAFE (comparison only): the server can write a read buffer after its IO ended, until its MR is registered again\n");
	ibtrs_clt_wq = alloc_workqueue("ibtrs_clt", WQ_MEM_RECLAIM, 0);
	if (!ibtrs_clt_wq)
		return -ENOMEM;
	ibtrs_clt_kobj = kobject_create_and_add("ibtrs-client", kernel_kobj);
	if (!ibtrs_clt_kobj) {
		ret = -ENOMEM;
		goto out_destroy_wq;
	}
	ret = ib_register_client(&ibtrs_clt_ib_client);
	if (ret)
		goto out_put_kobj;
	return 0;

out_put_kobj:
	kobject_put(ibtrs_clt_kobj);
out_destroy_wq:
	destroy_workqueue(ibtrs_clt_wq);
	return ret;
}

static void __exit ibtrs_clt_exit(void)
{
	ib_unregister_client(&ibtrs_clt_ib_client);
	kobject_put(ibtrs_clt_kobj);
	destroy_workqueue(ibtrs_clt_wq);
}

module_init(ibtrs_clt_init);
module_exit(ibtrs_clt_exit);
MODULE_DESCRIPTION("IBTRS client transport");
MODULE_LICENSE("GPL");

