// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibtrs_engine.c - fio ioengine "ibtrs": IBNBD block IO over userspace
 * IBTRS to an ibnbd-serverd (or any IBNBD server).
 *
 * One IBTRS client session per fio job (thread or process), one device per
 * session. Asynchronous: ->queue() takes a permit and submits at once;
 * ->getevents() waits on ibtrs_clt_fd() with poll(2) (or spins with the
 * "poll" option) and reaps completions with ibtrs_clt_poll(), whose
 * callbacks put the io_u on a ring that ->event() hands back to fio.
 *
 * Control messages (SESS_INFO, OPEN) are IBTRS READ requests whose response
 * lands in a small buffer; they are issued synchronously at init and again
 * when the server answers an IO with -ESTALE (it restarted and forgot the
 * device handle): then the device is re-opened and the IO resubmitted.
 *
 * Built against the fio source tree of the installed fio version (the
 * ioengine ABI is checked by fio: FIO_IOOPS_VERSION).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fio.h"
#include "optgroup.h"

/*
 * fio's os.h defines cpu_to_le16() & co. as macros; the IBNBD wire header
 * (through proto_compat.h) defines them as inline functions. fio's headers
 * are done with them by now, so drop the macros before including ours.
 */
#undef cpu_to_le16
#undef cpu_to_le32
#undef cpu_to_le64
#undef le16_to_cpu
#undef le32_to_cpu
#undef le64_to_cpu
#include "ibtrs.h"
#include "trs/ibnbd_proto.h"

#define FIO_IBTRS_MAX_RETRIES	5

struct fio_ibtrs_options {
	void *pad;	/* an option's off1 must not be 0 */
	char *paths;
	unsigned int port;
	char *devpath;
	char *access_mode;
	char *sessname;
	char *mp_policy;
	unsigned int cons_per_path;
	unsigned int queue_depth;
	int ctrl_loss_tmo;
	char *mr_mode;
	char *inval_mode;
	unsigned int busy_poll;
	unsigned int hb_interval_ms;
	unsigned int connect_timeout_ms;
	unsigned int fua;
};

static struct fio_option options[] = {
	{
		.name	= "paths",
		.lname	= "IBTRS server paths",
		.type	= FIO_OPT_STR_STORE,
		.off1	= offsetof(struct fio_ibtrs_options, paths),
		.help	= "Server address per path, comma separated: ip or src_ip@dst_ip",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "port",
		.lname	= "IBTRS port",
		.type	= FIO_OPT_INT,
		.off1	= offsetof(struct fio_ibtrs_options, port),
		.def	= "1234",
		.minval	= 1,
		.maxval	= 65535,
		.help	= "RDMA CM port of the server",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "devpath",
		.lname	= "Device path on the server",
		.type	= FIO_OPT_STR_STORE,
		.off1	= offsetof(struct fio_ibtrs_options, devpath),
		.help	= "Device or file to open on the server, resolved under its search root (default: the job's filename)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "access_mode",
		.lname	= "IBNBD access mode",
		.type	= FIO_OPT_STR_STORE,
		.off1	= offsetof(struct fio_ibtrs_options, access_mode),
		.def	= "auto",
		.help	= "ro, rw, migration, or auto (ro for read-only jobs, else rw)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "sessname",
		.lname	= "IBTRS session name",
		.type	= FIO_OPT_STR_STORE,
		.off1	= offsetof(struct fio_ibtrs_options, sessname),
		.help	= "Session name prefix (default fio-<host>); job number and pid are appended to keep it unique",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "mp_policy",
		.lname	= "Multipath policy",
		.type	= FIO_OPT_STR_STORE,
		.off1	= offsetof(struct fio_ibtrs_options, mp_policy),
		.help	= "Multipath policy name as libibtrs parses it (e.g. round-robin, min-inflight, min-latency)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "cons_per_path",
		.lname	= "Connections per path",
		.type	= FIO_OPT_INT,
		.off1	= offsetof(struct fio_ibtrs_options, cons_per_path),
		.def	= "0",
		.help	= "RDMA CM connections per path (0 = library default)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "queue_depth",
		.lname	= "Session queue depth cap",
		.type	= FIO_OPT_INT,
		.off1	= offsetof(struct fio_ibtrs_options, queue_depth),
		.def	= "0",
		.help	= "Use at most this many permits (0 = as the server advertises)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "ctrl_loss_tmo",
		.lname	= "Controller loss timeout",
		.type	= FIO_OPT_INT,
		.off1	= offsetof(struct fio_ibtrs_options, ctrl_loss_tmo),
		.def	= "30",
		.minval	= -1,
		.help	= "Seconds IO waits with every path down before failing (-1 = forever)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "mr_mode",
		.lname	= "Client MR mode",
		.type	= FIO_OPT_STR_STORE,
		.off1	= offsetof(struct fio_ibtrs_options, mr_mode),
		.help	= "How READ buffers are exposed (libibtrs names, e.g. mw, global)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "inval_mode",
		.lname	= "Invalidation mode",
		.type	= FIO_OPT_STR_STORE,
		.off1	= offsetof(struct fio_ibtrs_options, inval_mode),
		.help	= "When remote access ends (libibtrs names, e.g. remote, local, none)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "poll",
		.lname	= "Busy poll",
		.type	= FIO_OPT_STR_SET,
		.off1	= offsetof(struct fio_ibtrs_options, busy_poll),
		.help	= "Busy poll for completions instead of sleeping on the event fd",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "hb_interval",
		.lname	= "Heartbeat interval (ms)",
		.type	= FIO_OPT_INT,
		.off1	= offsetof(struct fio_ibtrs_options, hb_interval_ms),
		.def	= "0",
		.help	= "Heartbeat interval per path in ms (0 = library default)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "connect_timeout",
		.lname	= "Connect timeout (ms)",
		.type	= FIO_OPT_INT,
		.off1	= offsetof(struct fio_ibtrs_options, connect_timeout_ms),
		.def	= "0",
		.help	= "One connection attempt in ms (0 = library default)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "fua",
		.lname	= "FUA writes",
		.type	= FIO_OPT_STR_SET,
		.off1	= offsetof(struct fio_ibtrs_options, fua),
		.help	= "Send every write with the FUA flag (also implied by sync=1)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= NULL,
	},
};

/* Per io_u engine state. */
struct fio_ibtrs_io {
	struct fio_ibtrs_data *ld;
	struct io_u *io_u;
	struct ibtrs_permit *permit;
	struct ibnbd_msg_io msg;
	struct iovec iov;
	enum ibtrs_dir dir;
	int retries;
};

struct fio_ibtrs_dev {
	uint32_t handle;
	uint64_t size;			/* bytes */
	uint32_t lbs;
	uint32_t max_io;		/* bytes */
	uint32_t max_discard;		/* bytes, 0 = no discard */
	uint32_t flags;
	uint8_t ver;
	enum ibnbd_access_mode mode;
};

struct fio_ibtrs_data {
	struct ibtrs_clt *clt;
	char sessname[IBTRS_SESSNAME_MAX];
	char *paths_buf;
	const char *paths[IBTRS_MAX_PATHS];
	int npaths;
	const char *devpath;
	struct fio_ibtrs_dev dev;
	bool mem_registered;
	unsigned int qd;		/* permits we use */
	unsigned int inflight;
	/* completed io_us: [0, ev_ready) for fio, delivered count at head */
	struct io_u **events;
	unsigned int nr_events, ev_delivered;
	unsigned int ev_permits_put;	/* events whose permit is put */
	/* IOs the server answered -ESTALE, resubmitted after a re-open */
	struct fio_ibtrs_io **retry;
	unsigned int nr_retry;
	bool reopening;
	bool reported_conn_loss;
};

/* ------------------------------------------------------------------ */
/* Options                                                             */

static int fio_ibtrs_split_paths(struct fio_ibtrs_data *ld, const char *paths)
{
	char *save, *tok;

	ld->paths_buf = strdup(paths);
	if (!ld->paths_buf)
		return -ENOMEM;
	for (tok = strtok_r(ld->paths_buf, ", ;", &save); tok;
	     tok = strtok_r(NULL, ", ;", &save)) {
		if (ld->npaths >= IBTRS_MAX_PATHS)
			return -E2BIG;
		ld->paths[ld->npaths++] = tok;
	}
	return ld->npaths ? 0 : -EINVAL;
}

static int fio_ibtrs_clt_opts(struct thread_data *td,
			      struct fio_ibtrs_options *o,
			      struct ibtrs_clt_opts *co, const char *sessname)
{
	memset(co, 0, sizeof(*co));
	co->sessname = sessname;
	co->port = o->port;
	co->cons_per_path = o->cons_per_path;
	co->hb_interval_ms = o->hb_interval_ms;
	co->connect_timeout_ms = o->connect_timeout_ms;
	co->ctrl_loss_tmo_ms = o->ctrl_loss_tmo < 0 ? -1 :
			       o->ctrl_loss_tmo * 1000;
	if (!o->ctrl_loss_tmo)
		co->ctrl_loss_tmo_ms = 1;	/* 0 = fail at once, not "default" */
	if (o->mp_policy && ibtrs_mp_policy_parse(o->mp_policy, &co->policy)) {
		td_vmsg(td, EINVAL, "unknown mp_policy", "ibtrs");
		log_err("ibtrs: unknown mp_policy '%s'\n", o->mp_policy);
		return -EINVAL;
	}
	if (o->mr_mode && ibtrs_mr_mode_parse(o->mr_mode, &co->mr_mode)) {
		td_vmsg(td, EINVAL, "unknown mr_mode", "ibtrs");
		log_err("ibtrs: unknown mr_mode '%s'\n", o->mr_mode);
		return -EINVAL;
	}
	if (o->inval_mode && ibtrs_inval_mode_parse(o->inval_mode, &co->inval_mode)) {
		td_vmsg(td, EINVAL, "unknown inval_mode", "ibtrs");
		log_err("ibtrs: unknown inval_mode '%s'\n", o->inval_mode);
		return -EINVAL;
	}
	return 0;
}

static int fio_ibtrs_access_mode(struct thread_data *td,
				 struct fio_ibtrs_options *o,
				 enum ibnbd_access_mode *mode)
{
	if (!o->access_mode || !strcmp(o->access_mode, "auto")) {
		*mode = (td_write(td) || td_trim(td)) ? IBNBD_ACCESS_RW :
							 IBNBD_ACCESS_RO;
		return 0;
	}
	if (ibnbd_access_mode_parse(o->access_mode, mode)) {
		log_err("ibtrs: access_mode must be ro, rw, migration or auto, not '%s'\n",
			o->access_mode);
		td_vmsg(td, EINVAL, "bad access_mode", "ibtrs");
		return -EINVAL;
	}
	return 0;
}

static const char *fio_ibtrs_devpath(struct thread_data *td,
				     struct fio_ibtrs_options *o)
{
	if (o->devpath && *o->devpath)
		return o->devpath;
	if (td->o.filename && *td->o.filename)
		return td->o.filename;
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Completion plumbing                                                 */

static void fio_ibtrs_io_conf(void *priv, int err)
{
	struct fio_ibtrs_io *io = priv;
	struct fio_ibtrs_data *ld = io->ld;
	struct io_u *io_u = io->io_u;

	if (err == -ESTALE && io->retries < FIO_IBTRS_MAX_RETRIES) {
		/* Server forgot our handle: re-open and resubmit later. */
		io->retries++;
		ld->retry[ld->nr_retry++] = io;
		return;
	}
	io_u->error = err < 0 ? -err : err;
	io_u->resid = err ? io_u->xfer_buflen : 0;
	ld->events[ld->nr_events++] = io_u;
}

/* After ibtrs_clt_poll(): give back the permits of completed IO. */
static void fio_ibtrs_put_permits(struct fio_ibtrs_data *ld)
{
	unsigned int i;

	for (i = ld->ev_permits_put; i < ld->nr_events; i++) {
		struct fio_ibtrs_io *io = ld->events[i]->engine_data;

		if (io->permit) {
			ibtrs_clt_put_permit(ld->clt, io->permit);
			io->permit = NULL;
			ld->inflight--;
		}
	}
	ld->ev_permits_put = ld->nr_events;
}

struct fio_ibtrs_ctrl {
	bool done;
	int err;
};

static void fio_ibtrs_ctrl_conf(void *priv, int err)
{
	struct fio_ibtrs_ctrl *c = priv;

	c->done = true;
	c->err = err;
}

static int fio_ibtrs_poll(struct fio_ibtrs_data *ld, int timeout_ms)
{
	int r = ibtrs_clt_poll(ld->clt, timeout_ms);

	fio_ibtrs_put_permits(ld);
	return r;
}

/* One synchronous control request whose answer lands in @rsp. */
static int fio_ibtrs_ctrl(struct fio_ibtrs_data *ld, enum ibtrs_dir dir,
			  const void *msg, size_t len, void *rsp, size_t rsplen)
{
	struct fio_ibtrs_ctrl c = { 0 };
	struct ibtrs_permit *permit;
	struct iovec iov = { rsp, rsplen };
	int r;

	while (!(permit = ibtrs_clt_get_permit(ld->clt))) {
		r = fio_ibtrs_poll(ld, 100);
		if (r < 0)
			return r;
	}
	r = ibtrs_clt_request(ld->clt, dir, permit, msg, len, &iov,
			      rsp ? 1 : 0, fio_ibtrs_ctrl_conf, &c);
	if (r) {
		ibtrs_clt_put_permit(ld->clt, permit);
		return r;
	}
	while (!c.done) {
		r = fio_ibtrs_poll(ld, 1000);
		if (r < 0 && !c.done) {
			/* The library must still run our callback; keep going. */
			if (r != -EINTR && r != -EAGAIN)
				log_err("ibtrs: %s: poll: %s\n", ld->sessname,
					strerror(-r));
		}
	}
	ibtrs_clt_put_permit(ld->clt, permit);
	return c.err;
}

/* SESS_INFO + OPEN; fills ld->dev. Returns 0 or -errno (message logged). */
static int fio_ibtrs_dev_open(struct thread_data *td, struct fio_ibtrs_data *ld,
			      enum ibnbd_access_mode mode, bool quiet_busy)
{
	struct ibnbd_msg_sess_info si;
	struct ibnbd_msg_sess_info_rsp si_rsp;
	struct ibnbd_msg_open om;
	struct ibnbd_msg_open_rsp *orsp;
	int r;

	ibnbd_init_sess_info(&si, IBNBD_PROTO_VER_MAJOR);
	memset(&si_rsp, 0, sizeof(si_rsp));
	r = fio_ibtrs_ctrl(ld, IBTRS_READ, &si, sizeof(si), &si_rsp, sizeof(si_rsp));
	if (r) {
		log_err("ibtrs: %s: SESS_INFO failed: %s\n", ld->sessname, strerror(-r));
		td_vmsg(td, -r, "IBNBD SESS_INFO failed", "ibtrs");
		return r;
	}
	r = ibnbd_validate_sess_info_rsp(&si_rsp, sizeof(si_rsp));
	if (r) {
		log_err("ibtrs: %s: bad SESS_INFO response from the server\n",
			ld->sessname);
		td_vmsg(td, EPROTO, "bad IBNBD SESS_INFO response", "ibtrs");
		return -EPROTO;
	}
	ld->dev.ver = ibnbd_negotiate_ver(si_rsp.ver);

	r = ibnbd_init_open(&om, mode, ld->devpath);
	if (r) {
		log_err("ibtrs: device path '%s' is too long or empty\n", ld->devpath);
		td_vmsg(td, -r, "bad devpath", "ibtrs");
		return r;
	}
	/* Response buffer in aligned memory of its own. */
	orsp = calloc(1, sizeof(*orsp));
	if (!orsp)
		return -ENOMEM;
	r = fio_ibtrs_ctrl(ld, IBTRS_READ, &om, sizeof(om), orsp, sizeof(*orsp));
	if (r) {
		log_err("ibtrs: %s: OPEN of '%s' failed: %s\n", ld->sessname,
			ld->devpath, strerror(-r));
		td_vmsg(td, -r, "IBNBD OPEN failed", "ibtrs");
		goto out;
	}
	r = ibnbd_validate_open_rsp(orsp, sizeof(*orsp));
	if (r) {
		log_err("ibtrs: %s: malformed OPEN response\n", ld->sessname);
		td_vmsg(td, EPROTO, "bad IBNBD OPEN response", "ibtrs");
		r = -EPROTO;
		goto out;
	}
	if (le32_to_cpu(orsp->error)) {
		int e = le32_to_cpu(orsp->error);

		if (quiet_busy && e == EBUSY) {
			r = -e;
			goto out;
		}
		log_err("ibtrs: server refused to open '%s' (%s): %s (%s)\n",
			ld->devpath, ibnbd_access_mode_name(mode),
			orsp->reason[0] ? orsp->reason : "no reason given",
			strerror(e));
		td_vmsg(td, e, orsp->reason[0] ? orsp->reason :
			"server refused to open the device", "ibtrs open");
		r = -e;
		goto out;
	}
	ld->dev.handle = le32_to_cpu(orsp->device_id);
	ld->dev.size = le64_to_cpu(orsp->nsectors) << IBNBD_SECTOR_SHIFT;
	ld->dev.lbs = le16_to_cpu(orsp->logical_block_size);
	ld->dev.max_io = le32_to_cpu(orsp->max_hw_sectors) << IBNBD_SECTOR_SHIFT;
	ld->dev.flags = le32_to_cpu(orsp->dev_flags);
	ld->dev.max_discard = le32_to_cpu(orsp->max_discard_sectors) >= (1U << 23) ?
			      0xfffffe00U :
			      le32_to_cpu(orsp->max_discard_sectors) << IBNBD_SECTOR_SHIFT;
	ld->dev.mode = orsp->access_mode;
	r = 0;
out:
	free(orsp);
	return r;
}

static int fio_ibtrs_connect(struct thread_data *td, struct fio_ibtrs_data *ld,
			     const char *sessname)
{
	struct fio_ibtrs_options *o = td->eo;
	struct ibtrs_clt_opts co;
	int err = 0, r;

	if (!o->paths || !*o->paths) {
		log_err("ibtrs: the 'paths' option (server addresses) is required\n");
		td_vmsg(td, EINVAL, "missing paths=", "ibtrs");
		return -EINVAL;
	}
	r = fio_ibtrs_split_paths(ld, o->paths);
	if (r) {
		log_err("ibtrs: bad paths '%s' (1..%d comma separated addresses)\n",
			o->paths, IBTRS_MAX_PATHS);
		td_vmsg(td, -r, "bad paths=", "ibtrs");
		return r;
	}
	ld->devpath = fio_ibtrs_devpath(td, o);
	if (!ld->devpath) {
		log_err("ibtrs: set devpath= (or filename=) to the device on the server\n");
		td_vmsg(td, EINVAL, "missing devpath=", "ibtrs");
		return -EINVAL;
	}
	snprintf(ld->sessname, sizeof(ld->sessname), "%s", sessname);
	r = fio_ibtrs_clt_opts(td, o, &co, ld->sessname);
	if (r)
		return r;
	ld->clt = ibtrs_clt_open(&co, ld->paths, ld->npaths, &err);
	if (!ld->clt) {
		const char *why = ibtrs_clt_last_error(NULL);

		if (err >= 0)	/* the library must give -errno; be robust */
			err = -ENOTCONN;
		log_err("ibtrs: cannot connect to the server at %s port %u: %s%s%s\n",
			o->paths, o->port, strerror(-err), why && *why ? ": " : "",
			why ? why : "");
		td_vmsg(td, -err, "server unreachable", "ibtrs connect");
		return err;
	}
	if (ibtrs_clt_max_usr_len(ld->clt) < IBNBD_MAX_USR_LEN) {
		log_err("ibtrs: transport user header too small (%zu < %zu)\n",
			ibtrs_clt_max_usr_len(ld->clt), (size_t)IBNBD_MAX_USR_LEN);
		td_vmsg(td, EMSGSIZE, "IBTRS user header too small", "ibtrs");
		return -EMSGSIZE;
	}
	return 0;
}

static void fio_ibtrs_free(struct fio_ibtrs_data *ld)
{
	if (!ld)
		return;
	free(ld->events);
	free(ld->retry);
	free(ld->paths_buf);
	free(ld);
}

static void fio_ibtrs_make_sessname(struct thread_data *td, char *buf,
				    size_t len)
{
	struct fio_ibtrs_options *o = td->eo;
	char host[32] = "host";

	gethostname(host, sizeof(host) - 1);
	host[sizeof(host) - 1] = 0;
	if (o->sessname && *o->sessname)
		snprintf(buf, len, "%.40s-%d-%d", o->sessname, td->thread_number,
			 (int)getpid());
	else
		snprintf(buf, len, "fio-%.24s-%d-%d", host, td->thread_number,
			 (int)getpid());
}

/* ------------------------------------------------------------------ */
/* Setup (parent process): find the device size                        */

/*
 * The parent must not touch verbs (the jobs fork after setup), so the size
 * query runs in a short-lived child that connects, opens, and writes the
 * size into a pipe.
 */
static int fio_ibtrs_query_size(struct thread_data *td, uint64_t *size)
{
	int p[2], status;
	pid_t pid;
	uint64_t sz = 0;
	ssize_t n;

	if (pipe(p))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (!pid) {
		struct fio_ibtrs_data *ld = calloc(1, sizeof(*ld));
		char sessname[IBTRS_SESSNAME_MAX];
		int r;

		close(p[0]);
		if (!ld)
			_exit(ENOMEM);
		fio_ibtrs_make_sessname(td, sessname, sizeof(sessname));
		strncat(sessname, "-q", sizeof(sessname) - strlen(sessname) - 1);
		r = fio_ibtrs_connect(td, ld, sessname);
		if (!r)
			r = fio_ibtrs_dev_open(td, ld, IBNBD_ACCESS_RO, false);
		if (!r && write(p[1], &ld->dev.size, sizeof(ld->dev.size)) !=
		    sizeof(ld->dev.size))
			r = -EIO;
		if (ld->clt)
			ibtrs_clt_close(ld->clt);
		_exit(r ? -r : 0);
	}
	close(p[1]);
	n = read(p[0], &sz, sizeof(sz));
	close(p[0]);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (n != sizeof(sz) || !WIFEXITED(status) || WEXITSTATUS(status))
		return -(WIFEXITED(status) && WEXITSTATUS(status) ?
			 WEXITSTATUS(status) : EIO);
	*size = sz;
	return 0;
}

static int fio_ibtrs_setup(struct thread_data *td)
{
	struct fio_file *f;
	uint64_t size = 0;
	int r;

	if (!td->files_index) {
		add_file(td, td->o.filename ? : "ibtrs", 0, 0);
		td->o.nr_files = td->o.nr_files ? : 1;
		td->o.open_files++;
	}
	f = td->files[0];
	if (td->o.size) {
		/* Checked against the real size once connected (init). */
		f->real_file_size = td->o.size + td->o.start_offset;
		return 0;
	}
	r = fio_ibtrs_query_size(td, &size);
	if (r) {
		log_err("ibtrs: cannot find the device size (%s); set size= to skip this query\n",
			strerror(-r));
		td_vmsg(td, -r, "cannot query the device size", "ibtrs setup");
		return 1;
	}
	f->real_file_size = size;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Job init / cleanup                                                  */

static int fio_ibtrs_init(struct thread_data *td)
{
	struct fio_ibtrs_options *o = td->eo;
	struct fio_ibtrs_data *ld;
	enum ibnbd_access_mode mode;
	char sessname[IBTRS_SESSNAME_MAX];
	unsigned int depth = td->o.iodepth ? td->o.iodepth : 1;

	ld = calloc(1, sizeof(*ld));
	if (!ld)
		return 1;
	td->io_ops_data = ld;
	ld->events = calloc(depth + 1, sizeof(*ld->events));
	ld->retry = calloc(depth + 1, sizeof(*ld->retry));
	if (!ld->events || !ld->retry)
		return 1;
	if (fio_ibtrs_access_mode(td, o, &mode))
		return 1;
	fio_ibtrs_make_sessname(td, sessname, sizeof(sessname));
	if (fio_ibtrs_connect(td, ld, sessname))
		return 1;
	if (fio_ibtrs_dev_open(td, ld, mode, false))
		return 1;

	ld->qd = ibtrs_clt_queue_depth(ld->clt);
	if (o->queue_depth && o->queue_depth < ld->qd)
		ld->qd = o->queue_depth;
	if (ld->dev.max_io > ibtrs_clt_max_io_size(ld->clt))
		ld->dev.max_io = ibtrs_clt_max_io_size(ld->clt);
	if ((td_read(td) && td->o.max_bs[DDIR_READ] > ld->dev.max_io) ||
	    (td_write(td) && td->o.max_bs[DDIR_WRITE] > ld->dev.max_io)) {
		log_err("ibtrs: block size %llu exceeds the server's max IO size %u\n",
			td_read(td) && td->o.max_bs[DDIR_READ] > ld->dev.max_io ?
			td->o.max_bs[DDIR_READ] : td->o.max_bs[DDIR_WRITE],
			ld->dev.max_io);
		td_vmsg(td, EINVAL, "bs larger than the server's max IO size", "ibtrs");
		return 1;
	}
	if (td_trim(td) && ld->dev.max_discard &&
	    td->o.max_bs[DDIR_TRIM] > (unsigned long long)ld->dev.max_discard) {
		log_err("ibtrs: trim block size %llu exceeds the server's max discard %u\n",
			td->o.max_bs[DDIR_TRIM], ld->dev.max_discard);
		td_vmsg(td, EINVAL, "trim bs larger than the server's max discard", "ibtrs");
		return 1;
	}
	if (td->o.size && td->o.size + td->o.start_offset > ld->dev.size) {
		log_err("ibtrs: size=%llu (+offset) exceeds the device size %" PRIu64 "\n",
			td->o.size, ld->dev.size);
		td_vmsg(td, EINVAL, "size larger than the device", "ibtrs");
		return 1;
	}
	if (td_trim(td) && !(ld->dev.flags & IBNBD_DEV_DISCARD)) {
		log_err("ibtrs: the server does not support discard (trim) on '%s'\n",
			ld->devpath);
		td_vmsg(td, EOPNOTSUPP, "device has no discard", "ibtrs");
		return 1;
	}
	dprint(FD_IO, "ibtrs: %s: %s handle %#x size %" PRIu64 " lbs %u max_io %u qd %u\n",
	       ld->sessname, ld->devpath, ld->dev.handle, ld->dev.size,
	       ld->dev.lbs, ld->dev.max_io, ld->qd);
	return 0;
}

static int fio_ibtrs_post_init(struct thread_data *td)
{
	struct fio_ibtrs_data *ld = td->io_ops_data;
	int r;

	/* Register fio's IO buffers: every io_u's xfer_buf lies in them. */
	if (!td->orig_buffer || !td->orig_buffer_size)
		return 0;
	r = ibtrs_clt_reg_mem(ld->clt, td->orig_buffer, td->orig_buffer_size);
	if (r) {
		log_info("ibtrs: %s: cannot register IO buffers (%s); IO is bounced\n",
			 ld->sessname, strerror(-r));
		return 0;
	}
	ld->mem_registered = true;
	return 0;
}

static void fio_ibtrs_cleanup(struct thread_data *td)
{
	struct fio_ibtrs_data *ld = td->io_ops_data;

	if (!ld)
		return;
	if (ld->clt) {
		struct timespec t0, now;

		/* Let in-flight IO finish (bounded), then say goodbye. */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (ld->inflight) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec - t0.tv_sec > 5)
				break;
			if (fio_ibtrs_poll(ld, 100) < 0)
				break;
		}
		if (!ld->inflight && ld->dev.handle && ibtrs_clt_paths_connected(ld->clt) > 0) {
			struct ibnbd_msg_close cm;

			ibnbd_init_close(&cm, ld->dev.handle);
			fio_ibtrs_ctrl(ld, IBTRS_WRITE, &cm, sizeof(cm), NULL, 0);
		}
		if (ld->mem_registered)
			ibtrs_clt_unreg_mem(ld->clt, td->orig_buffer);
		ibtrs_clt_close(ld->clt);
	}
	fio_ibtrs_free(ld);
	td->io_ops_data = NULL;
}

static int fio_ibtrs_open_file(struct thread_data *td, struct fio_file *f)
{
	(void)td;
	(void)f;
	return 0;
}

static int fio_ibtrs_close_file(struct thread_data *td, struct fio_file *f)
{
	(void)td;
	(void)f;
	return 0;
}

static int fio_ibtrs_io_u_init(struct thread_data *td, struct io_u *io_u)
{
	struct fio_ibtrs_io *io = calloc(1, sizeof(*io));

	if (!io)
		return 1;
	io->ld = td->io_ops_data;
	io->io_u = io_u;
	io_u->engine_data = io;
	return 0;
}

static void fio_ibtrs_io_u_free(struct thread_data *td, struct io_u *io_u)
{
	(void)td;
	free(io_u->engine_data);
	io_u->engine_data = NULL;
}

/* ------------------------------------------------------------------ */
/* IO                                                                  */

static int fio_ibtrs_submit(struct fio_ibtrs_data *ld, struct fio_ibtrs_io *io)
{
	int r;

	io->msg.device_id = cpu_to_le32(ld->dev.handle);
	r = ibtrs_clt_request(ld->clt, io->dir, io->permit, &io->msg,
			      sizeof(io->msg), io->iov.iov_len ? &io->iov : NULL,
			      io->iov.iov_len ? 1 : 0, fio_ibtrs_io_conf, io);
	return r;
}

static enum fio_q_status fio_ibtrs_queue(struct thread_data *td,
					 struct io_u *io_u)
{
	struct fio_ibtrs_data *ld = td->io_ops_data;
	struct fio_ibtrs_options *o = td->eo;
	struct fio_ibtrs_io *io = io_u->engine_data;
	uint32_t rw;
	uint64_t sector = io_u->offset >> IBNBD_SECTOR_SHIFT;
	uint32_t len = io_u->xfer_buflen;
	int r;

	fio_ro_check(td, io_u);

	if (ld->inflight >= ld->qd)
		return FIO_Q_BUSY;

	io->iov.iov_base = io_u->xfer_buf;
	io->iov.iov_len = 0;
	io->retries = 0;
	switch (io_u->ddir) {
	case DDIR_READ:
		rw = IBNBD_OP_READ;
		io->dir = IBTRS_READ;
		io->iov.iov_len = len;
		break;
	case DDIR_WRITE:
		rw = IBNBD_OP_WRITE;
		if (o->fua || td->o.sync_io)
			rw |= IBNBD_F_FUA;
		io->dir = IBTRS_WRITE;
		io->iov.iov_len = len;
		break;
	case DDIR_TRIM:
		rw = IBNBD_OP_DISCARD;
		io->dir = IBTRS_WRITE;
		break;
	case DDIR_SYNC:
	case DDIR_DATASYNC:
		rw = IBNBD_OP_FLUSH;
		io->dir = IBTRS_WRITE;
		sector = 0;
		len = 0;
		break;
	default:
		io_u->error = EINVAL;
		td_vmsg(td, EINVAL, "unsupported IO direction (sync_file_range?)", "ibtrs");
		return FIO_Q_COMPLETED;
	}
	if (len && ((io_u->offset | len) & (ld->dev.lbs - 1))) {
		io_u->error = EINVAL;
		log_err("ibtrs: IO at %llu len %u is not aligned to the device's %u-byte blocks\n",
			io_u->offset, len, ld->dev.lbs);
		return FIO_Q_COMPLETED;
	}
	ibnbd_init_io(&io->msg, ld->dev.handle, sector, rw, len, 0);

	io->permit = ibtrs_clt_get_permit(ld->clt);
	if (!io->permit)
		return FIO_Q_BUSY;
	r = fio_ibtrs_submit(ld, io);
	if (r) {
		ibtrs_clt_put_permit(ld->clt, io->permit);
		io->permit = NULL;
		if (r == -EAGAIN || r == -EBUSY)
			return FIO_Q_BUSY;
		io_u->error = -r;
		if (r == -ENOTCONN) {
			if (!ld->reported_conn_loss) {
				ld->reported_conn_loss = true;
				log_err("ibtrs: %s: no path to the server survived and ctrl_loss_tmo expired; failing IO\n",
					ld->sessname);
				td_vmsg(td, ENOTCONN, "all paths lost (ctrl_loss_tmo expired)",
					"ibtrs");
			}
		} else {
			log_err("ibtrs: %s: request rejected: %s (%s)\n", ld->sessname,
				strerror(-r), ibtrs_clt_last_error(ld->clt));
		}
		return FIO_Q_COMPLETED;
	}
	ld->inflight++;
	return FIO_Q_QUEUED;
}

/*
 * The server lost our handle (restart): open again, resubmit the IOs.
 * Their permits are given back first (all permits may be held by them, and
 * the OPEN needs one); they stay counted in ld->inflight meanwhile.
 */
static void fio_ibtrs_handle_retries(struct thread_data *td,
				     struct fio_ibtrs_data *ld)
{
	unsigned int i, n = ld->nr_retry;
	struct fio_ibtrs_io *ios[n ? n : 1];
	int r;

	if (!n || ld->reopening)
		return;
	memcpy(ios, ld->retry, n * sizeof(*ios));
	ld->nr_retry = 0;
	for (i = 0; i < n; i++) {
		ibtrs_clt_put_permit(ld->clt, ios[i]->permit);
		ios[i]->permit = NULL;
	}
	/*
	 * Re-open only if an IO failed with the handle we hold now; IOs sent
	 * with an older handle (in flight during an earlier re-open) are just
	 * resubmitted with the current one. Opening again in this session
	 * would be refused: the device is already ours.
	 */
	r = 0;
	for (i = 0; i < n; i++)
		if (le32_to_cpu(ios[i]->msg.device_id) == ld->dev.handle)
			break;
	if (i < n) {
		ld->reopening = true;
		log_info("ibtrs: %s: server lost device handle %#x (restarted?), re-opening %s\n",
			 ld->sessname, ld->dev.handle, ld->devpath);
		/*
		 * After a reconnect the server may not have noticed yet that
		 * our previous session is gone, and it still holds our rw
		 * claim: retry EBUSY for a while (10 s) before giving up.
		 */
		for (i = 0; i < 20; i++) {
			r = fio_ibtrs_dev_open(td, ld, ld->dev.mode, i < 19);
			if (r != -EBUSY)
				break;
			fio_ibtrs_poll(ld, 500);
		}
		ld->reopening = false;
	}
	for (i = 0; i < n; i++) {
		struct fio_ibtrs_io *io = ios[i];
		int e = r;

		if (!e) {
			io->permit = ibtrs_clt_get_permit(ld->clt);
			e = io->permit ? fio_ibtrs_submit(ld, io) : -EBUSY;
		}
		if (e) {
			if (io->permit)
				ibtrs_clt_put_permit(ld->clt, io->permit);
			io->permit = NULL;
			ld->inflight--;
			io->io_u->error = -e;
			io->io_u->resid = io->io_u->xfer_buflen;
			ld->events[ld->nr_events++] = io->io_u;
		}
	}
	fio_ibtrs_put_permits(ld);
}

static void fio_ibtrs_report(struct thread_data *td, struct fio_ibtrs_data *ld,
			     unsigned int from)
{
	unsigned int i;

	for (i = from; i < ld->nr_events; i++) {
		struct io_u *io_u = ld->events[i];

		if (io_u->error == ENOTCONN && !ld->reported_conn_loss) {
			ld->reported_conn_loss = true;
			log_err("ibtrs: %s: no path to the server survived and ctrl_loss_tmo expired; failing IO\n",
				ld->sessname);
			td_vmsg(td, ENOTCONN, "all paths lost (ctrl_loss_tmo expired)",
				"ibtrs");
		}
	}
}

static int fio_ibtrs_getevents(struct thread_data *td, unsigned int min,
			       unsigned int max, const struct timespec *t)
{
	struct fio_ibtrs_data *ld = td->io_ops_data;
	struct fio_ibtrs_options *o = td->eo;
	struct timespec start, now;
	int64_t budget_ms = -1;
	unsigned int ret, before;
	int r;

	/* Drop what fio consumed through ->event() last time. */
	if (ld->ev_delivered) {
		memmove(ld->events, ld->events + ld->ev_delivered,
			(ld->nr_events - ld->ev_delivered) * sizeof(*ld->events));
		ld->nr_events -= ld->ev_delivered;
		ld->ev_permits_put -= ld->ev_delivered;
		ld->ev_delivered = 0;
	}
	if (t)
		budget_ms = t->tv_sec * 1000 + t->tv_nsec / 1000000;
	clock_gettime(CLOCK_MONOTONIC, &start);

	for (;;) {
		before = ld->nr_events;
		r = fio_ibtrs_poll(ld, 0);
		if (r < 0 && r != -EAGAIN && r != -EINTR) {
			td_vmsg(td, -r, "ibtrs_clt_poll failed", "ibtrs");
			return r;
		}
		fio_ibtrs_handle_retries(td, ld);
		fio_ibtrs_report(td, ld, before);
		if (ld->nr_events >= min)
			break;
		if (budget_ms >= 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((now.tv_sec - start.tv_sec) * 1000 +
			    (now.tv_nsec - start.tv_nsec) / 1000000 >= budget_ms)
				break;
		}
		if (!o->busy_poll) {
			struct pollfd pfd = { .fd = ibtrs_clt_fd(ld->clt), .events = POLLIN };

			/* Bounded sleep so timers inside the library run too. */
			if (poll(&pfd, 1, budget_ms >= 0 && budget_ms < 100 ?
				 (int)budget_ms : 100) < 0 && errno != EINTR) {
				td_verror(td, errno, "poll");
				return -errno;
			}
		}
	}
	ret = ld->nr_events < max ? ld->nr_events : max;
	ld->ev_delivered = ret;
	return ret;
}

static struct io_u *fio_ibtrs_event(struct thread_data *td, int event)
{
	struct fio_ibtrs_data *ld = td->io_ops_data;

	return ld->events[event];
}

/*
 * fio looks up the symbol "ioengine" (or one named like the engine) in
 * the shared object it dlopen()s.
 */
struct ioengine_ops ioengine = {
	.name			= "ibtrs",
	.version		= FIO_IOOPS_VERSION,
	.flags			= FIO_DISKLESSIO | FIO_NOEXTEND | FIO_NODISKUTIL |
				  FIO_RAWIO | FIO_MEMALIGN,
	.setup			= fio_ibtrs_setup,
	.init			= fio_ibtrs_init,
	.post_init		= fio_ibtrs_post_init,
	.queue			= fio_ibtrs_queue,
	.getevents		= fio_ibtrs_getevents,
	.event			= fio_ibtrs_event,
	.cleanup		= fio_ibtrs_cleanup,
	.open_file		= fio_ibtrs_open_file,
	.close_file		= fio_ibtrs_close_file,
	.io_u_init		= fio_ibtrs_io_u_init,
	.io_u_free		= fio_ibtrs_io_u_free,
	.options		= options,
	.option_struct_size	= sizeof(struct fio_ibtrs_options),
};
