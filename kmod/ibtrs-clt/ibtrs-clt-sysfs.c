// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibtrs-clt-sysfs.c - /sys/kernel/ibtrs-client/<sessname>/ and its
 * per-path directories.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "ibtrs-clt-pri.h"

/* ---------------------------------------------------------------- */
/* sysfs: /sys/kernel/ibtrs-client/<sessname>/[paths/<[src@]dst>/]   */

#define to_clt_sess(k) container_of(k, struct ibtrs_clt_sess, kobj)
#define to_clt_path(k) container_of(k, struct ibtrs_clt_path, kobj)

static ssize_t sess_state_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	struct ibtrs_clt_sess *sess = to_clt_sess(kobj);
	int up = ibtrs_clt_paths_up(sess);

	return sysfs_emit(buf, "%s\n", up ? "connected" : "disconnected");
}

static ssize_t mp_policy_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  ibtrs_clt_policy_names[READ_ONCE(to_clt_sess(kobj)->mp_policy)]);
}

static ssize_t mp_policy_store(struct kobject *kobj,
			       struct kobj_attribute *attr, const char *buf,
			       size_t count)
{
	struct ibtrs_clt_sess *sess = to_clt_sess(kobj);
	unsigned long flags;
	int i;

	for (i = 0; i < TRS_MP_MAX; i++)
		if (sysfs_streq(buf, ibtrs_clt_policy_names[i]))
			break;
	if (i == TRS_MP_MAX) {
		pr_err("sess %s: ibtrs_clt_mp_policy: unknown policy '%.*s' (round-robin, min-inflight or min-latency)\n",
		       sess->sessname, (int)strcspn(buf, "\n"), buf);
		return -EINVAL;
	}
	spin_lock_irqsave(&sess->lock, flags);
	WRITE_ONCE(sess->mp_policy, i);
	spin_unlock_irqrestore(&sess->lock, flags);
	pr_info("sess %s: ibtrs_clt_mp_policy %s\n", sess->sessname,
		ibtrs_clt_policy_names[i]);
	return count;
}

/**
 * struct ibtrs_clt_cnt_attr - a read-only counter file.
 * @attr: the file.
 * @off: offset of its counter: in the path's or session's per-CPU
 *	counters (@pcpu), else of an atomic64_t in the path or session.
 * @pcpu: a per-CPU counter (&struct ibtrs_clt_stats or
 *	&struct ibtrs_clt_sess_stats).
 * @gone: for a session sum of path counters, index in sess->gone; -1 for
 *	a counter of the object itself.
 */
struct ibtrs_clt_cnt_attr {
	struct kobj_attribute attr;
	size_t off;
	bool pcpu;
	int gone;
};

#define to_cnt_attr(a) container_of(a, struct ibtrs_clt_cnt_attr, attr)

/* A path counter described by @c. */
static u64 ibtrs_clt_path_cnt(struct ibtrs_clt_path *path,
			      const struct ibtrs_clt_cnt_attr *c)
{
	if (c->pcpu)
		return ibtrs_clt_pcpu_sum(path->stats, c->off);
	return atomic64_read((atomic64_t *)((char *)path + c->off));
}

/* Sum of a path counter over the session's paths, removed ones included. */
static u64 ibtrs_clt_paths_total(struct ibtrs_clt_sess *sess,
				 const struct ibtrs_clt_cnt_attr *c)
{
	struct ibtrs_clt_path *path;
	u64 n;
	int i;

	mutex_lock(&ibtrs_clt_sess_mutex);
	n = sess->gone[c->gone];
	for (i = 0; i < sess->npaths; i++) {
		path = ibtrs_clt_path_at(sess, i);
		if (path)
			n += ibtrs_clt_path_cnt(path, c);
	}
	mutex_unlock(&ibtrs_clt_sess_mutex);
	return n;
}

static ssize_t sess_cnt_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	struct ibtrs_clt_sess *sess = to_clt_sess(kobj);
	const struct ibtrs_clt_cnt_attr *c = to_cnt_attr(attr);

	if (c->gone < 0)
		return sysfs_emit(buf, "%llu\n",
				  ibtrs_clt_pcpu_sum(sess->stats, c->off));
	return sysfs_emit(buf, "%llu\n", ibtrs_clt_paths_total(sess, c));
}

static struct ibtrs_clt_cnt_attr sess_ios_attr = {
	.attr = __ATTR(ios, 0444, sess_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_sess_stats, ios),
	.pcpu = true,
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr sess_read_bytes_attr = {
	.attr = __ATTR(read_bytes, 0444, sess_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_sess_stats, read_bytes),
	.pcpu = true,
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr sess_write_bytes_attr = {
	.attr = __ATTR(write_bytes, 0444, sess_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_sess_stats, write_bytes),
	.pcpu = true,
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr sess_msgs_attr = {
	.attr = __ATTR(msgs, 0444, sess_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_stats, msgs),
	.pcpu = true,
	.gone = 0,
};

static struct ibtrs_clt_cnt_attr sess_reg_wrs_attr = {
	.attr = __ATTR(reg_wrs, 0444, sess_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_stats, reg_wrs),
	.pcpu = true,
	.gone = 1,
};

static struct ibtrs_clt_cnt_attr sess_failovers_attr = {
	.attr = __ATTR(failovers, 0444, sess_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, failovers),
	.pcpu = false,
	.gone = 2,
};

static struct ibtrs_clt_cnt_attr sess_reconnects_attr = {
	.attr = __ATTR(reconnects, 0444, sess_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, reconnects),
	.pcpu = false,
	.gone = 3,
};

static ssize_t sess_inflight_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  ibtrs_clt_sess_sum(to_clt_sess(kobj), inflight));
}

/* Same family and address (ports aside); two AF_UNSPEC are the same. */
static bool ibtrs_clt_same_ip(const struct sockaddr_storage *a,
			      const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return ipv6_addr_equal(&((const struct sockaddr_in6 *)a)->sin6_addr,
				       &((const struct sockaddr_in6 *)b)->sin6_addr);
	return true;
}

static ssize_t add_path_store(struct kobject *kobj, struct kobj_attribute *attr,
			      const char *buf, size_t count)
{
	struct ibtrs_clt_sess *sess = to_clt_sess(kobj);
	struct ibtrs_clt_path *path;
	struct ibtrs_clt_addr addr;
	char str[2 * INET6_ADDRSTRLEN + 2];
	int i, idx = -1, ret;

	if (count >= sizeof(str) || !count) {
		pr_err("sess %s: add_path: bad path (want [src@]dst)\n",
		       sess->sessname);
		return -EINVAL;
	}
	memcpy(str, buf, count);
	str[count] = '\0';
	str[strcspn(str, "\n")] = '\0';
	if (ibtrs_clt_parse_path(str, &addr)) {
		pr_err("sess %s: add_path: bad path '%s' ([src@]dst, IP addresses)\n",
		       sess->sessname, str);
		return -EINVAL;
	}
	mutex_lock(&sess->ctl_mutex);
	if (sess->closing) {
		ret = -ENODEV;
		goto out_unlock;
	}
	for (i = 0; i < IBTRS_CLT_MAX_PATHS; i++) {
		struct ibtrs_clt_path *p = ibtrs_clt_path_at(sess, i);

		if (!p) {
			if (idx < 0)
				idx = i;
			continue;
		}
		if (ibtrs_clt_same_ip(&p->addr.dst, &addr.dst) &&
		    ibtrs_clt_same_ip(&p->addr.src, &addr.src)) {
			pr_err("sess %s: add_path: path '%s' exists\n",
			       sess->sessname, str);
			ret = -EEXIST;
			goto out_unlock;
		}
	}
	if (idx < 0) {
		pr_err("sess %s: add_path: %d paths already\n", sess->sessname,
		       IBTRS_CLT_MAX_PATHS);
		ret = -ENOSPC;
		goto out_unlock;
	}
	path = ibtrs_clt_path_alloc(sess, idx, &addr);
	if (IS_ERR(path)) {
		ret = PTR_ERR(path);
		goto out_unlock;
	}
	ibtrs_clt_path_install(path);
	ret = ibtrs_clt_path_connect(path);
	if (ret) {
		ibtrs_clt_path_stop(path);
		ibtrs_clt_path_uninstall(path);
		kobject_del(&path->kobj);
		kobject_put(&path->kobj);
		goto out_unlock;
	}
	ibtrs_clt_info(path, "added through sysfs\n");
	ret = count;
out_unlock:
	mutex_unlock(&sess->ctl_mutex);
	return ret;
}

static struct kobj_attribute sess_state_attr =
	__ATTR(state, 0444, sess_state_show, NULL);
static struct kobj_attribute sess_mp_policy_attr = __ATTR_RW(mp_policy);
static struct kobj_attribute sess_inflight_attr =
	__ATTR(inflight, 0444, sess_inflight_show, NULL);
static struct kobj_attribute sess_add_path_attr = __ATTR_WO(add_path);

static struct attribute *ibtrs_clt_sess_attrs[] = {
	&sess_state_attr.attr,
	&sess_mp_policy_attr.attr,
	&sess_ios_attr.attr.attr,
	&sess_read_bytes_attr.attr.attr,
	&sess_write_bytes_attr.attr.attr,
	&sess_inflight_attr.attr,
	&sess_msgs_attr.attr.attr,
	&sess_reg_wrs_attr.attr.attr,
	&sess_failovers_attr.attr.attr,
	&sess_reconnects_attr.attr.attr,
	&sess_add_path_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(ibtrs_clt_sess);

const struct kobj_type ibtrs_clt_sess_ktype = {
	.sysfs_ops = &kobj_sysfs_ops,
	.release = ibtrs_clt_sess_release,
	.default_groups = ibtrs_clt_sess_groups,
};

static ssize_t path_state_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  ibtrs_clt_state_names[READ_ONCE(to_clt_path(kobj)->state)]);
}

static ssize_t path_cnt_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  ibtrs_clt_path_cnt(to_clt_path(kobj),
					     to_cnt_attr(attr)));
}

static struct ibtrs_clt_cnt_attr path_reqs_attr = {
	.attr = __ATTR(reqs, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_stats, reqs),
	.pcpu = true,
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_rsps_attr = {
	.attr = __ATTR(rsps, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_stats, rsps),
	.pcpu = true,
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_msgs_attr = {
	.attr = __ATTR(msgs, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_stats, msgs),
	.pcpu = true,
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_reg_wrs_attr = {
	.attr = __ATTR(reg_wrs, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_stats, reg_wrs),
	.pcpu = true,
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_reg_mrs_attr = {
	.attr = __ATTR(reg_mrs, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_stats, reg_mrs),
	.pcpu = true,
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_inv_rsps_attr = {
	.attr = __ATTR(inv_rsps, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_stats, inv_rsps),
	.pcpu = true,
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_local_invs_attr = {
	.attr = __ATTR(local_invs, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_stats, local_invs),
	.pcpu = true,
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_bounce_bytes_attr = {
	.attr = __ATTR(bounce_bytes, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_stats, bounce_bytes),
	.pcpu = true,
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_sig_reqs_attr = {
	.attr = __ATTR(sig_reqs, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_stats, sig_reqs),
	.pcpu = true,
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_poll_cqes_attr = {
	.attr = __ATTR(poll_cqes, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_stats, poll_cqes),
	.pcpu = true,
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_hb_sent_attr = {
	.attr = __ATTR(hb_sent, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, hb_sent),
	.pcpu = false,
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_proto_errors_attr = {
	.attr = __ATTR(proto_errors, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, proto_errors),
	.pcpu = false,
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_failovers_attr = {
	.attr = __ATTR(failovers, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, failovers),
	.pcpu = false,
	.gone = -1,
};

static struct ibtrs_clt_cnt_attr path_reconnects_attr = {
	.attr = __ATTR(reconnects, 0444, path_cnt_show, NULL),
	.off = offsetof(struct ibtrs_clt_path, reconnects),
	.pcpu = false,
	.gone = -1,
};

static ssize_t path_inflight_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  ibtrs_clt_path_sum(to_clt_path(kobj), inflight));
}

static ssize_t path_lat_us_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  trs_mp_lat_us(READ_ONCE(to_clt_path(kobj)->lat_ewma)));
}

/* One line per connection: "<cid> <requests posted on it>". */
static ssize_t path_con_reqs_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	struct ibtrs_clt_path *path = to_clt_path(kobj);
	int i, n = 0;

	for (i = 0; i < path->ncons; i++)
		n += sysfs_emit_at(buf, n, "%d %lld\n", i,
				   (long long)atomic64_read(&path->cons[i].reqs));
	return n;
}

static ssize_t path_mr_mode_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  trs_mr_mode_name(to_clt_path(kobj)->mr_mode));
}

static ssize_t path_inval_mode_show(struct kobject *kobj,
				    struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  trs_inval_mode_name(to_clt_path(kobj)->inval_mode));
}

static ssize_t path_write_mode_show(struct kobject *kobj,
				    struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  trs_write_mode_name(to_clt_path(kobj)->write_mode));
}

/* the server's chunk exposure on this path's last join (static or rekey) */
static ssize_t path_chunk_mode_show(struct kobject *kobj,
				    struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  trs_chunk_mode_name(READ_ONCE(to_clt_path(kobj)->rekey) ?
					      TRS_CHUNK_REKEY : TRS_CHUNK_STATIC));
}

static ssize_t path_hb_rtt_us_show(struct kobject *kobj,
				   struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(to_clt_path(kobj)->hb_rtt_us));
}

static ssize_t reconnect_store(struct kobject *kobj,
			       struct kobj_attribute *attr, const char *buf,
			       size_t count)
{
	struct ibtrs_clt_path *path = to_clt_path(kobj);
	struct ibtrs_clt_sess *sess = path->sess;
	int ret = count;

	if (!sysfs_streq(buf, "1")) {
		ibtrs_clt_err(path, "reconnect: write 1\n");
		return -EINVAL;
	}
	mutex_lock(&sess->ctl_mutex);
	if (sess->closing || path->removing) {
		ret = -ENODEV;
		goto out_unlock;
	}
	switch (READ_ONCE(path->state)) {
	case IBTRS_CLT_PATH_CONNECTED:
		WRITE_ONCE(path->reco_now, true);
		ibtrs_clt_path_fail(path, "reconnect asked through sysfs");
		break;
	case IBTRS_CLT_PATH_IDLE:
		path->reco_attempt = 0;
		mod_delayed_work(ibtrs_clt_wq, &path->reco_work, 0);
		break;
	default:
		ret = -EBUSY;	/* connecting or being torn down */
	}
out_unlock:
	mutex_unlock(&sess->ctl_mutex);
	return ret;
}

static ssize_t remove_path_store(struct kobject *kobj,
				 struct kobj_attribute *attr, const char *buf,
				 size_t count)
{
	struct ibtrs_clt_path *path = to_clt_path(kobj);
	struct ibtrs_clt_sess *sess = path->sess;
	int i, others = 0, ret;

	if (!sysfs_streq(buf, "1")) {
		ibtrs_clt_err(path, "remove_path: write 1\n");
		return -EINVAL;
	}
	mutex_lock(&sess->ctl_mutex);
	if (sess->closing || path->removing) {
		ret = -ENODEV;
		goto out_unlock;
	}
	for (i = 0; i < sess->npaths; i++) {
		struct ibtrs_clt_path *p = ibtrs_clt_path_at(sess, i);

		others += p && p != path;
	}
	if (!others) {
		ibtrs_clt_err(path, "remove_path: the last path of the session is not removed\n");
		ret = -EBUSY;
		goto out_unlock;
	}
	/* its IO fails over in the teardown */
	ibtrs_clt_path_stop(path);
	ibtrs_clt_path_uninstall(path);
	mutex_unlock(&sess->ctl_mutex);
	ibtrs_clt_info(path, "removed through sysfs (failovers %lld)\n",
		       atomic64_read(&path->failovers));
	sysfs_remove_file_self(kobj, &attr->attr);
	kobject_del(&path->kobj);
	kobject_put(&path->kobj);
	return count;

out_unlock:
	mutex_unlock(&sess->ctl_mutex);
	return ret;
}

static struct kobj_attribute path_state_attr =
	__ATTR(state, 0444, path_state_show, NULL);
static struct kobj_attribute path_inflight_attr =
	__ATTR(inflight, 0444, path_inflight_show, NULL);
static struct kobj_attribute path_lat_us_attr =
	__ATTR(lat_us, 0444, path_lat_us_show, NULL);
static struct kobj_attribute path_con_reqs_attr =
	__ATTR(con_reqs, 0444, path_con_reqs_show, NULL);
static struct kobj_attribute path_hb_rtt_us_attr =
	__ATTR(hb_rtt_us, 0444, path_hb_rtt_us_show, NULL);
static struct kobj_attribute path_mr_mode_attr =
	__ATTR(mr_mode, 0444, path_mr_mode_show, NULL);
static struct kobj_attribute path_inval_mode_attr =
	__ATTR(inval_mode, 0444, path_inval_mode_show, NULL);
static struct kobj_attribute path_write_mode_attr =
	__ATTR(write_mode, 0444, path_write_mode_show, NULL);
static struct kobj_attribute path_chunk_mode_attr =
	__ATTR(chunk_mode, 0444, path_chunk_mode_show, NULL);
static struct kobj_attribute path_reconnect_attr = __ATTR_WO(reconnect);
static struct kobj_attribute path_remove_path_attr = __ATTR_WO(remove_path);

static struct attribute *ibtrs_clt_path_attrs[] = {
	&path_state_attr.attr,
	&path_reqs_attr.attr.attr,
	&path_rsps_attr.attr.attr,
	&path_msgs_attr.attr.attr,
	&path_reg_wrs_attr.attr.attr,
	&path_reg_mrs_attr.attr.attr,
	&path_local_invs_attr.attr.attr,
	&path_inv_rsps_attr.attr.attr,
	&path_bounce_bytes_attr.attr.attr,
	&path_mr_mode_attr.attr,
	&path_inval_mode_attr.attr,
	&path_write_mode_attr.attr,
	&path_chunk_mode_attr.attr,
	&path_sig_reqs_attr.attr.attr,
	&path_poll_cqes_attr.attr.attr,
	&path_hb_sent_attr.attr.attr,
	&path_hb_rtt_us_attr.attr,
	&path_proto_errors_attr.attr.attr,
	&path_failovers_attr.attr.attr,
	&path_reconnects_attr.attr.attr,
	&path_inflight_attr.attr,
	&path_lat_us_attr.attr,
	&path_con_reqs_attr.attr,
	&path_reconnect_attr.attr,
	&path_remove_path_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(ibtrs_clt_path);

static void ibtrs_clt_path_release(struct kobject *kobj)
{
	struct ibtrs_clt_path *path = to_clt_path(kobj);

	free_percpu(path->stats);
	kfree(path->chunk_rkey);
	kfree(path->cons);
	kfree(path);
}

const struct kobj_type ibtrs_clt_path_ktype = {
	.sysfs_ops = &kobj_sysfs_ops,
	.release = ibtrs_clt_path_release,
	.default_groups = ibtrs_clt_path_groups,
};
