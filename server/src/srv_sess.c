// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * srv_sess.c - IBNBD sessions of ibnbd-serverd: the IBTRS callbacks
 * (link_ev: a session came or went; rdma_ev: a request), SESS_INFO, OPEN
 * and CLOSE, and the table of devices each session has open.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srvd.h"

struct srvd *srvd_global;

/*
 * The last IO of a closed device is done: give up its access-mode claim
 * and close the fd.
 */
static void srv_sd_free(struct srv_sess_dev *sd)
{
	struct srvd *d = srvd_global;

	if (sd->closing) {
		srv_dev_drain_end(sd->dev, sd->mode);
		srv_info("sess %s: %s (handle %#x): in-flight IO drained, %s claim released",
			 sd->sess->name, sd->path, sd->handle,
			 ibnbd_access_mode_name(sd->mode));
	}
	srv_dev_put(&d->reg, sd->dev, sd->mode);
	close(sd->fd);
	free(sd);
}

/*
 * Take @sd out of the handle table; close the fd and give up its
 * access-mode claim now or when its in-flight IO completes. Keeping the
 * claim fences new writers (e.g. the same client, reconnected in a new
 * session, re-sending the same writes) from the device until the old
 * writes have landed: otherwise an old write still queued in io_uring
 * could overwrite a newer one. A new rw OPEN meanwhile gets -EBUSY, which
 * the client retries.
 */
void srv_sd_close(struct srv_sess *s, struct srv_sess_dev *sd,
		  const char *why)
{
	char line[512];

	s->devs[sd->slot] = NULL;
	srv_stats_line(line, sizeof(line), &sd->st);
	srv_info("sess %s: closed %s (handle %#x, %s, %u IOs in flight): %s",
		 s->name, sd->path, sd->handle, why, sd->inflight, line);
	if (!sd->inflight) {
		srv_sd_free(sd);
		return;
	}
	sd->closing = true;
	srv_dev_drain_begin(sd->dev, sd->mode);
	sd->next_closing = s->closing;
	s->closing = sd;
}

void srv_sd_reap_closing(struct srv_sess *s)
{
	struct srv_sess_dev **pp = &s->closing, *sd;

	while ((sd = *pp)) {
		if (sd->inflight) {
			pp = &sd->next_closing;
			continue;
		}
		*pp = sd->next_closing;
		srv_sd_free(sd);
	}
}

struct srv_sess_dev *srv_sd_lookup(struct srv_sess *s, uint32_t handle)
{
	struct srvd *d = srvd_global;
	unsigned int slot = handle & 0xffff;
	struct srv_sess_dev *sd;

	if ((handle >> 16) != d->gen || slot >= s->max_devs)
		return NULL;
	sd = s->devs[slot];
	return sd && sd->handle == handle ? sd : NULL;
}

static int srv_handle_sess_info(struct srv_sess *s, struct ibtrs_srv_op *op,
				enum ibtrs_dir dir, void *data, size_t datalen,
				const void *usr, size_t usrlen)
{
	const struct ibnbd_msg_sess_info *m = usr;
	struct ibnbd_msg_sess_info_rsp *rsp = data;
	int ret = ibnbd_validate_sess_info(usr, usrlen);

	if (ret)
		return ret;
	if (dir != IBTRS_READ || datalen < sizeof(*rsp))
		return -EINVAL;
	s->ver = ibnbd_negotiate_ver(m->ver);
	{
		struct ibnbd_msg_sess_info_rsp r;

		ibnbd_init_sess_info_rsp(&r, s->ver);
		memcpy(rsp, &r, sizeof(r));	/* @data may be unaligned */
	}
	srv_info("sess %s: protocol version %u (client offered %u)", s->name,
		 s->ver, m->ver);
	return ibtrs_srv_resp(op, 0, sizeof(*rsp)) ? -EIO : 0;
}

static void srv_fill_open_rsp(struct ibnbd_msg_open_rsp *rsp,
			      const struct srv_sess_dev *sd)
{
	const struct srv_geom *g = &sd->geom;

	ibnbd_init_open_rsp_err(rsp, 0, NULL);
	rsp->device_id = cpu_to_le32(sd->handle);
	rsp->nsectors = cpu_to_le64(g->nsectors);
	rsp->max_hw_sectors = cpu_to_le32(g->max_io_bytes >> 9);
	rsp->max_discard_sectors = cpu_to_le32(g->max_discard_sectors);
	rsp->discard_granularity = cpu_to_le32(g->discard_granularity);
	rsp->discard_alignment = cpu_to_le32(0);
	rsp->max_write_zeroes_sectors = cpu_to_le32(g->max_write_zeroes_sectors);
	rsp->dev_flags = cpu_to_le32(g->flags |
		(sd->mode == IBNBD_ACCESS_RO ? IBNBD_DEV_READ_ONLY : 0));
	rsp->logical_block_size = cpu_to_le16(g->lbs);
	rsp->physical_block_size = cpu_to_le16(g->pbs > 32768 ? g->lbs : g->pbs);
	rsp->max_segments = cpu_to_le16(1);
	rsp->access_mode = sd->mode;
}

static int srv_handle_open(struct srvd *d, struct srv_sess *s,
			   struct ibtrs_srv_op *op, enum ibtrs_dir dir,
			   void *data, size_t datalen, const void *usr,
			   size_t usrlen)
{
	const struct ibnbd_msg_open *m = usr;
	struct ibnbd_msg_open_rsp rsp_buf, *rsp = &rsp_buf;
	struct srv_open_result res;
	struct srv_sess_dev *sd = NULL;
	const char *reason = NULL;
	struct srv_dev *dev;
	unsigned int slot;
	int ret;

	if (dir != IBTRS_READ || datalen < sizeof(*rsp))
		return -EINVAL;
	ret = ibnbd_validate_open(usr, usrlen);
	if (ret) {
		reason = "malformed OPEN message";
		goto refuse_nolog;
	}
	if (d->stopping) {
		ret = -ESHUTDOWN;
		reason = "server is shutting down";
		goto refuse;
	}
	for (slot = 0; slot < s->max_devs; slot++)
		if (!s->devs[slot])
			break;
	if (slot == s->max_devs) {
		ret = -EMFILE;
		reason = "too many devices open in this session";
		goto refuse;
	}
	ret = srv_path_open(d->root_fd, d->root, m->dev_path,
			    m->access_mode == IBNBD_ACCESS_RO ? O_RDONLY : O_RDWR,
			    &res, &reason);
	if (ret)
		goto refuse;
	ret = srv_dev_get(&d->reg, res.is_blk,
			  res.is_blk ? res.st_rdev : res.st_dev, res.st_ino,
			  res.resolved, m->access_mode, &dev, &reason);
	if (ret) {
		close(res.fd);
		goto refuse;
	}
	if (ibnbd_access_is_writer(m->access_mode)) {
		ret = srv_dev_claim_excl(dev, res.fd, &reason);
		if (ret)
			goto put_dev;
	}
	sd = calloc(1, sizeof(*sd));
	if (!sd) {
		ret = -ENOMEM;
		reason = "out of memory";
		goto put_dev;
	}
	ret = srv_backend_probe(res.fd, res.is_blk, res.buffered, res.st_rdev,
				d->chunk_size, &sd->geom);
	if (ret) {
		reason = "cannot query device geometry";
		goto put_dev;
	}
	sd->sess = s;
	sd->dev = dev;
	sd->slot = slot;
	sd->handle = ((uint32_t)d->gen << 16) | slot;
	sd->mode = m->access_mode;
	sd->fd = res.fd;
	sd->is_blk = res.is_blk;
	sd->buffered = res.buffered;
	snprintf(sd->path, sizeof(sd->path), "%s", res.resolved);
	sd->lim.nsectors = sd->geom.nsectors;
	sd->lim.logical_block_size = sd->geom.lbs;
	sd->lim.max_io_bytes = sd->geom.max_io_bytes;
	sd->lim.max_discard_sectors = sd->geom.max_discard_sectors;
	sd->lim.max_write_zeroes_sectors = sd->geom.max_write_zeroes_sectors;
	sd->lim.read_only = sd->mode == IBNBD_ACCESS_RO;
	s->devs[slot] = sd;
	srv_fill_open_rsp(rsp, sd);
	srv_info("sess %s: opened %s (%s, %s%s) handle %#x: %llu sectors, lbs %u, flags %#x",
		 s->name, sd->path, ibnbd_access_mode_name(sd->mode),
		 sd->is_blk ? "block device" : "file",
		 sd->buffered ? ", buffered: no O_DIRECT" : "", sd->handle,
		 (unsigned long long)sd->geom.nsectors, sd->geom.lbs,
		 sd->geom.flags);
	memcpy(data, rsp, sizeof(*rsp));
	return ibtrs_srv_resp(op, 0, sizeof(*rsp)) ? -EIO : 0;

put_dev:
	srv_dev_put(&d->reg, dev, m->access_mode);
	close(res.fd);
	free(sd);
refuse:
	srv_wrn("sess %s: refused open of '%s' (%s): %s (%s)", s->name,
		m->dev_path, ibnbd_access_mode_name(m->access_mode), reason,
		strerror(-ret));
refuse_nolog:
	if (!reason || ret == -EINVAL)
		s->bad_msgs++;
	ibnbd_init_open_rsp_err(rsp, ret, reason);
	memcpy(data, rsp, sizeof(*rsp));
	return ibtrs_srv_resp(op, 0, sizeof(*rsp)) ? -EIO : 0;
}

static int srv_handle_close(struct srv_sess *s, const void *usr, size_t usrlen)
{
	const struct ibnbd_msg_close *m = usr;
	struct srv_sess_dev *sd;
	int ret = ibnbd_validate_close(usr, usrlen);

	if (ret)
		return ret;
	sd = srv_sd_lookup(s, le32_to_cpu(m->device_id));
	if (!sd)
		return -ESTALE;
	srv_sd_close(s, sd, "closed by client");
	return 0;
}

int srv_rdma_ev(struct ibtrs_srv_sess *ts, void *priv,
		       struct ibtrs_srv_op *op, enum ibtrs_dir dir, void *data,
		       size_t datalen, const void *usr, size_t usrlen)
{
	struct srvd *d = srvd_global;
	struct srv_sess *s = priv;
	union {
		struct ibnbd_msg_hdr hdr;
		struct ibnbd_msg_sess_info si;
		struct ibnbd_msg_open open;
		struct ibnbd_msg_close close;
		struct ibnbd_msg_io io;
	} msg;
	int type, ret;

	(void)ts;
	if (!s || s->dead)
		return -ENOTCONN;
	/*
	 * Work on an aligned copy of the header: the user header's place in
	 * the chunk is the transport's business. Bytes beyond the largest
	 * message are never looked at.
	 */
	if (usrlen > sizeof(msg))
		usrlen = sizeof(msg);
	if (usr && usrlen)
		memcpy(&msg, usr, usrlen);
	usr = usr ? (const void *)&msg : NULL;
	type = ibnbd_msg_type(usr, usrlen);
	if (d->stopping && type == IBNBD_MSG_IO) {
		/* Left unanswered: ibtrs_srv_close() drops it, the client's
		 * transport retries it after reconnecting. */
		d->parked++;
		return 0;
	}
	switch (type) {
	case IBNBD_MSG_SESS_INFO:
		ret = srv_handle_sess_info(s, op, dir, data, datalen, usr, usrlen);
		break;
	case IBNBD_MSG_OPEN:
		ret = srv_handle_open(d, s, op, dir, data, datalen, usr, usrlen);
		break;
	case IBNBD_MSG_CLOSE:
		ret = srv_handle_close(s, usr, usrlen);
		if (!ret)
			ret = ibtrs_srv_resp(op, 0, 0) ? -EIO : 0;
		break;
	case IBNBD_MSG_IO:
		ret = srv_handle_io(d, s, op, dir, data, datalen, usr, usrlen);
		break;
	default:
		ret = -EINVAL;
		break;
	}
	if (ret == -EINVAL || ret == -EOPNOTSUPP || ret == -EPROTO) {
		s->bad_msgs++;
		/* Rate limit: first few, then every 1000th. */
		if (s->bad_msgs <= 5 || !(s->bad_msgs % 1000))
			srv_wrn("sess %s: rejected %s message (%zu bytes, dir %s): %s",
				s->name, type > 0 ? ibnbd_msg_type_name(type) : "malformed",
				usrlen, dir == IBTRS_READ ? "read" : "write",
				strerror(-ret));
	}
	return ret;
}

/* ------------------------------------------------------------------ */
/* Sessions                                                            */

void srv_sess_destroy(struct srvd *d, struct srv_sess *s)
{
	struct srv_sess **pp;
	char line[512];

	srv_sd_reap_closing(s);
	for (pp = &d->sessions; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	srv_stats_line(line, sizeof(line), &s->st);
	srv_info("sess %s: gone: %s", s->name, line);
	srv_fixed_detach(d, s);
	free(s->devs);
	free(s);
}

/* The session is gone: close its devices; free it once its IO is answered. */
void srv_sess_kill(struct srvd *d, struct srv_sess *s, const char *why)
{
	unsigned int i;

	if (!s->dead) {
		s->dead = true;
		srv_info("sess %s: %s (%u IOs in flight)", s->name, why,
			 s->inflight);
		for (i = 0; i < s->max_devs; i++)
			if (s->devs[i])
				srv_sd_close(s, s->devs[i], why);
	}
	if (!s->inflight)
		srv_sess_destroy(d, s);
}

void srv_link_ev(struct ibtrs_srv_sess *ts, enum ibtrs_srv_link_ev ev,
			void *priv)
{
	struct srvd *d = srvd_global;
	struct srv_sess *s = priv;

	switch (ev) {
	case IBTRS_SRV_LINK_EV_CONNECTED:
		s = calloc(1, sizeof(*s));
		if (s)
			s->devs = calloc(d->o.max_devs, sizeof(*s->devs));
		if (!s || !s->devs) {
			srv_err("sess %s: out of memory", ibtrs_srv_sessname(ts));
			free(s);
			ibtrs_srv_set_sess_priv(ts, NULL);
			return;
		}
		s->ts = ts;
		s->fixed = -1;
		s->max_devs = d->o.max_devs;
		s->ver = IBNBD_PROTO_VER_MAJOR;
		snprintf(s->name, sizeof(s->name), "%s", ibtrs_srv_sessname(ts));
		s->next = d->sessions;
		d->sessions = s;
		ibtrs_srv_set_sess_priv(ts, s);
		srv_fixed_attach(d, s);
		srv_info("sess %s: connected (%d path%s)", s->name,
			 ibtrs_srv_sess_paths(ts),
			 ibtrs_srv_sess_paths(ts) == 1 ? "" : "s");
		break;
	case IBTRS_SRV_LINK_EV_DISCONNECTED:
		if (!s)
			return;
		ibtrs_srv_set_sess_priv(ts, NULL);
		srv_sess_kill(d, s, "disconnected");
		break;
	}
}

const struct ibtrs_srv_ops srv_ops = {
	.link_ev = srv_link_ev,
	.rdma_ev = srv_rdma_ev,
};
