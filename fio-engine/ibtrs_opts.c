// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibtrs_opts.c - the option table of the fio ioengine "ibtrs" and its
 * interpretation: job options -> struct ibnbd_clt_params, access mode,
 * session name.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ibtrs_engine.h"
#include "trs/trs_proto.h"

struct fio_option fio_ibtrs_options[] = {
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
		.maxval	= INT_MAX / 1000,	/* in ms it is an int */
		.help	= "Seconds IO waits with every path down before failing (-1 = forever)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "mr_mode",
		.lname	= "Client MR mode",
		.type	= FIO_OPT_STR_STORE,
		.off1	= offsetof(struct fio_ibtrs_options, mr_mode),
		.help	= "How READ buffers are exposed: mw (default), reg, bounce, global (UNSAFE)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "inval_mode",
		.lname	= "Invalidation mode",
		.type	= FIO_OPT_STR_STORE,
		.off1	= offsetof(struct fio_ibtrs_options, inval_mode),
		.help	= "When remote access ends: remote (default), local, none (UNSAFE)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "write_mode",
		.lname	= "Write data movement",
		.type	= FIO_OPT_STR_STORE,
		.off1	= offsetof(struct fio_ibtrs_options, write_mode),
		.help	= "How write data reaches the server: push (default; the client RDMA-WRITEs it), pull (the server RDMA-READs it)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "poll",
		.lname	= "Busy poll",
		.type	= FIO_OPT_STR_SET,
		.off1	= offsetof(struct fio_ibtrs_options, busy_poll),
		.help	= "Busy poll: reap completions from the CQs without system calls and never sleep (no CQ arming, no poll/epoll/read on the data path)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "poll_yield",
		.lname	= "Busy poll: yield when idle",
		.type	= FIO_OPT_INT,
		.off1	= offsetof(struct fio_ibtrs_options, poll_yield),
		.def	= "0",
		.help	= "With poll: sched_yield() after this many sweeps in a row found nothing (0 = never; a system call on the idle path only, for a server that shares the CPU)",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= "coalesce",
		.lname	= "Coalesce doorbells",
		.type	= FIO_OPT_BOOL,
		.off1	= offsetof(struct fio_ibtrs_options, coalesce),
		.def	= "1",
		.help	= "Post the IOs fio queued when it next reaps (getevents), as one chain per connection, instead of at every commit (fio's default iodepth_batch_submit=1 commits every IO)",
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
		.name	= "ios_file",
		.lname	= "Completed-IO counter file",
		.type	= FIO_OPT_STR_STORE,
		.off1	= offsetof(struct fio_ibtrs_options, ios_file),
		.help	= "Keep a live count of completed IOs in this file (shared mapping; a little-endian u64 per job of a numjobs group, job k at offset 8k; readers sum them) for measurement tools that sample it",
		.category = FIO_OPT_C_ENGINE,
		.group	= FIO_OPT_G_INVALID,
	},
	{
		.name	= NULL,
	},
};

static const char *fio_ibtrs_devpath(struct thread_data *td,
				     struct fio_ibtrs_options *o)
{
	if (o->devpath && *o->devpath)
		return o->devpath;
	if (td->o.filename && *td->o.filename)
		return td->o.filename;
	return NULL;
}

/* The server refuses an INFO_REQ whose name has another character. */
static bool fio_ibtrs_sessname_ok(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (!trs_sessname_char_ok(*s))
			return false;
	return true;
}

/* Job options -> client parameters (log callback left to the caller). */
int fio_ibtrs_clt_params(struct thread_data *td, struct ibnbd_clt_params *p,
			 const char *sessname)
{
	struct fio_ibtrs_options *o = td->eo;
	struct ibtrs_clt_opts *co = &p->trs;

	memset(p, 0, sizeof(*p));
	if (!o->paths || !*o->paths) {
		log_err("ibtrs: the 'paths' option (server addresses) is required\n");
		td_vmsg(td, EINVAL, "missing paths=", "ibtrs");
		return -EINVAL;
	}
	p->paths = o->paths;
	p->devpath = fio_ibtrs_devpath(td, o);
	if (!p->devpath) {
		log_err("ibtrs: set devpath= (or filename=) to the device on the server\n");
		td_vmsg(td, EINVAL, "missing devpath=", "ibtrs");
		return -EINVAL;
	}
	if (!fio_ibtrs_sessname_ok(sessname)) {
		log_err("ibtrs: session name '%s': printable ASCII but '/' only\n",
			sessname ? sessname : "");
		td_vmsg(td, EINVAL, "bad sessname", "ibtrs");
		return -EINVAL;
	}
	p->sessname = sessname;
	p->queue_depth = o->queue_depth;

	co->port = o->port;
	co->cons_per_path = o->cons_per_path;
	co->hb_interval_ms = o->hb_interval_ms;
	co->connect_timeout_ms = o->connect_timeout_ms;
	if (o->ctrl_loss_tmo > INT_MAX / 1000) {
		log_err("ibtrs: ctrl_loss_tmo %d s is more than %d s\n",
			o->ctrl_loss_tmo, INT_MAX / 1000);
		td_vmsg(td, EINVAL, "ctrl_loss_tmo too large", "ibtrs");
		return -EINVAL;
	}
	co->busy_poll = o->busy_poll;
	co->busy_poll_yield = o->poll_yield;
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
		td_vmsg(td, EINVAL, "bad mr_mode", "ibtrs");
		log_err("ibtrs: %s\n", ibtrs_clt_last_error(NULL));
		return -EINVAL;
	}
	if (o->inval_mode && ibtrs_inval_mode_parse(o->inval_mode, &co->inval_mode)) {
		td_vmsg(td, EINVAL, "bad inval_mode", "ibtrs");
		log_err("ibtrs: %s\n", ibtrs_clt_last_error(NULL));
		return -EINVAL;
	}
	if (o->write_mode && ibtrs_write_mode_parse(o->write_mode, &co->write_mode)) {
		td_vmsg(td, EINVAL, "bad write_mode", "ibtrs");
		log_err("ibtrs: %s\n", ibtrs_clt_last_error(NULL));
		return -EINVAL;
	}
	return 0;
}

int fio_ibtrs_access_mode(struct thread_data *td, enum ibnbd_access_mode *mode)
{
	struct fio_ibtrs_options *o = td->eo;

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

/* Unique per job: <prefix>-<job number>-<pid>. */
void fio_ibtrs_make_sessname(struct thread_data *td, char *buf, size_t len)
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
