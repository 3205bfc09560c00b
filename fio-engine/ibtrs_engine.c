// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibtrs_engine.c - fio ioengine "ibtrs": IBNBD block IO over userspace
 * IBTRS to an ibnbd-serverd (or any IBNBD server). The fio glue only: the
 * IBNBD client (control messages, device state, IO submission, -ESTALE
 * re-open) is ibnbd_clt.c, the option table ibtrs_opts.c.
 *
 * One IBTRS client session per fio job (thread or process), one device per
 * session. Asynchronous: ->queue() hands the io_u to ibnbd_clt_submit(),
 * which splits an IO longer than the server's max IO size into parts and
 * prepares what the permits allow (the rest waits in the client, in order)
 * with the session plugged: the work requests are staged, and ->commit()
 * (or, with "coalesce", the default, the next ->getevents(), before it
 * waits) posts the batch as one chain per connection: one doorbell.
 * ->getevents() reaps completions with ibnbd_clt_poll(), sleeping inside
 * it (the library arms the CQs and waits in epoll) or, with the "poll"
 * option, spinning on the CQs with no system call; the callbacks put the
 * io_u on a ring that ->event() hands back to fio once all its parts are
 * done.
 *
 * Built against the fio source tree of the installed fio version (the
 * ioengine ABI is checked by fio: FIO_IOOPS_VERSION).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ibtrs_engine.h"

/* Per io_u engine state. */
struct fio_ibtrs_io {
	struct ibnbd_clt_io io;
	struct fio_ibtrs_data *ld;
	struct io_u *io_u;
};

struct fio_ibtrs_data {
	struct thread_data *td;
	struct ibnbd_clt *clt;
	/*
	 * completed io_us, a ring of ev_size: nr_events of them from ev_head
	 * on; the first ev_delivered were handed to fio by the last
	 * getevents() (event(i) is ev_head + i)
	 */
	struct io_u **events;
	unsigned int ev_size, ev_head, nr_events, ev_delivered;
	bool reported_conn_loss;
	bool plugged;		/* queue() staged IO not posted yet */
	/* ios_file: completed io_us, read live by the experiment harness */
	volatile uint64_t *ios_done;
};

/*
 * The ios_file option: a shared mapping of one page holding the number of
 * completed io_us, so a measurement tool can sample the IO count at the
 * same instant as its other counters (fio's own counts are per job and
 * only reported at the end). Job k of a numjobs group counts in the k-th
 * little-endian u64 (IBTRS_IOS_SLOTS of them): readers sum the slots. The
 * file is not truncated (a job that starts later must not zero the others'
 * counts); the harness removes it before a job group.
 */
#define IBTRS_IOS_SLOTS 64
static int fio_ibtrs_map_ios_file(struct thread_data *td,
				  struct fio_ibtrs_data *ld)
{
	struct fio_ibtrs_options *o = td->eo;
	long pg = sysconf(_SC_PAGESIZE);
	void *p;
	int fd;

	if (!o->ios_file || !*o->ios_file)
		return 0;
	if (td->subjob_number >= IBTRS_IOS_SLOTS) {
		log_err("ibtrs: ios_file %s: job %u of a group: at most %d jobs count\n",
			o->ios_file, td->subjob_number, IBTRS_IOS_SLOTS);
		return 1;
	}
	fd = open(o->ios_file, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, pg)) {
		log_err("ibtrs: ios_file %s: %s\n", o->ios_file, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		log_err("ibtrs: ios_file %s: mmap: %s\n", o->ios_file, strerror(errno));
		return 1;
	}
	ld->ios_done = (volatile uint64_t *)p + td->subjob_number;
	*ld->ios_done = 0;
	return 0;
}

static void fio_ibtrs_log(void *priv, enum ibnbd_clt_log_level lvl,
			  const char *msg)
{
	if (lvl == IBNBD_CLT_LOG_ERR)
		log_err("ibtrs: %s\n", msg);
	else
		log_info("ibtrs: %s\n", msg);
}

/* An ibnbd_clt call failed with @r: say why, fail the job. */
static void fio_ibtrs_fail(struct thread_data *td, struct ibnbd_clt *clt,
			   int r, const char *what)
{
	log_err("ibtrs: %s\n", ibnbd_clt_errmsg(clt));
	td_vmsg(td, -r, ibnbd_clt_errmsg(clt), what);
}

static void fio_ibtrs_conn_lost(struct thread_data *td, struct fio_ibtrs_data *ld)
{
	if (ld->reported_conn_loss)
		return;
	ld->reported_conn_loss = true;
	log_err("ibtrs: %s: no path to the server survived and ctrl_loss_tmo expired; failing IO\n",
		ibnbd_clt_sessname(ld->clt));
	td_vmsg(td, ENOTCONN, "all paths lost (ctrl_loss_tmo expired)", "ibtrs");
}

/* Creates, connects and opens; *@out is set even on failure (destroy it). */
static int fio_ibtrs_connect(struct thread_data *td, const char *sessname,
			     enum ibnbd_access_mode mode, struct ibnbd_clt **out)
{
	struct ibnbd_clt_params p;
	struct ibnbd_clt *clt;
	int r;

	*out = NULL;
	r = fio_ibtrs_clt_params(td, &p, sessname);
	if (r)
		return r;
	p.log = fio_ibtrs_log;
	clt = ibnbd_clt_create(&p, &r);
	if (!clt) {
		fio_ibtrs_fail(td, NULL, r, "ibtrs");
		return r;
	}
	*out = clt;
	r = ibnbd_clt_connect(clt);
	if (r) {
		fio_ibtrs_fail(td, clt, r, "ibtrs connect");
		return r;
	}
	r = ibnbd_clt_dev_open(clt, mode);
	if (r) {
		fio_ibtrs_fail(td, clt, r, "ibtrs open");
		return r;
	}
	return 0;
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
		char sessname[IBTRS_SESSNAME_MAX];
		struct ibnbd_clt *clt;
		int r;

		close(p[0]);
		fio_ibtrs_make_sessname(td, sessname, sizeof(sessname));
		strncat(sessname, "-q", sizeof(sessname) - strlen(sessname) - 1);
		r = fio_ibtrs_connect(td, sessname, IBNBD_ACCESS_RO, &clt);
		if (!r && write(p[1], &ibnbd_clt_dev(clt)->size, sizeof(sz)) !=
		    sizeof(sz))
			r = -EIO;
		ibnbd_clt_destroy(clt);
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

static int fio_ibtrs_check_limits(struct thread_data *td,
				  const struct ibnbd_clt_dev *dev,
				  const char *devpath)
{
	/* No bs limit: IO above max_io (trims above max_discard) is split. */
	if (td->o.size && td->o.size + td->o.start_offset > dev->size) {
		log_err("ibtrs: size=%llu (+offset) exceeds the device size %" PRIu64 "\n",
			td->o.size, dev->size);
		td_vmsg(td, EINVAL, "size larger than the device", "ibtrs");
		return 1;
	}
	if (td_trim(td) && !(dev->flags & IBNBD_DEV_DISCARD)) {
		log_err("ibtrs: the server does not support discard (trim) on '%s'\n",
			devpath);
		td_vmsg(td, EOPNOTSUPP, "device has no discard", "ibtrs");
		return 1;
	}
	return 0;
}

static int fio_ibtrs_init(struct thread_data *td)
{
	struct fio_ibtrs_data *ld;
	const struct ibnbd_clt_dev *dev;
	enum ibnbd_access_mode mode;
	char sessname[IBTRS_SESSNAME_MAX];
	unsigned int depth = td->o.iodepth ? td->o.iodepth : 1;

	ld = calloc(1, sizeof(*ld));
	if (!ld)
		return 1;
	td->io_ops_data = ld;
	ld->td = td;
	ld->ev_size = depth + 1;
	ld->events = calloc(ld->ev_size, sizeof(*ld->events));
	if (!ld->events)
		return 1;
	if (fio_ibtrs_access_mode(td, &mode))
		return 1;
	if (fio_ibtrs_map_ios_file(td, ld))
		return 1;
	fio_ibtrs_make_sessname(td, sessname, sizeof(sessname));
	if (fio_ibtrs_connect(td, sessname, mode, &ld->clt))
		return 1;
	dev = ibnbd_clt_dev(ld->clt);
	if (fio_ibtrs_check_limits(td, dev, ibnbd_clt_devpath(ld->clt)))
		return 1;
	dprint(FD_IO, "ibtrs: %s: %s handle %#x size %" PRIu64 " lbs %u max_io %u qd %u\n",
	       ibnbd_clt_sessname(ld->clt), ibnbd_clt_devpath(ld->clt),
	       dev->handle, dev->size, dev->lbs, dev->max_io,
	       ibnbd_clt_queue_depth(ld->clt));
	return 0;
}

static int fio_ibtrs_post_init(struct thread_data *td)
{
	struct fio_ibtrs_data *ld = td->io_ops_data;

	/* Register fio's IO buffers: every io_u's xfer_buf lies in them. */
	if (!td->orig_buffer || !td->orig_buffer_size)
		return 0;
	if (ibnbd_clt_reg_mem(ld->clt, td->orig_buffer, td->orig_buffer_size))
		log_info("ibtrs: %s; IO is bounced\n", ibnbd_clt_errmsg(ld->clt));
	return 0;
}

/* Post what queue() staged: one ibv_post_send() per connection. */
static void fio_ibtrs_unplug(struct fio_ibtrs_data *ld)
{
	if (!ld->plugged)
		return;
	ld->plugged = false;
	ibtrs_clt_unplug(ibnbd_clt_trs(ld->clt));
}

/*
 * End-of-job report, one line for the client, one of verbs calls (summed
 * over the paths) and one per path (tests read these): IO split and
 * re-open counters, ibv_post_send() calls and WRs, receive posts, CQ
 * sweeps, arms and events, the transport's failovers and reconnects.
 */
static void fio_ibtrs_report(struct fio_ibtrs_data *ld)
{
	const char *sess = ibnbd_clt_sessname(ld->clt);
	struct ibtrs_clt_stats *ts;
	struct ibnbd_clt_stats st;
	struct ibtrs_path_stats v = { .post_sends = 0 };
	int i;

	ibnbd_clt_get_stats(ld->clt, &st);
	ts = calloc(1, sizeof(*ts));
	if (!ts || ibtrs_clt_get_stats(ibnbd_clt_trs(ld->clt), ts)) {
		free(ts);
		return;
	}
	for (i = 0; i < ts->npaths; i++) {
		v.post_sends += ts->path[i].post_sends;
		v.send_wrs += ts->path[i].send_wrs;
		v.post_recvs += ts->path[i].post_recvs;
		v.recv_wrs += ts->path[i].recv_wrs;
		v.cq_sweeps += ts->path[i].cq_sweeps;
		v.cqes += ts->path[i].cqes;
		v.cq_arms += ts->path[i].cq_arms;
		v.cq_events += ts->path[i].cq_events;
		v.signaled += ts->path[i].signaled;
	}
	log_info("ibtrs: %s: report: ios=%" PRIu64 " parts=%" PRIu64
		 " split=%" PRIu64 " waits=%" PRIu64 " reopens=%" PRIu64
		 " stale=%" PRIu64 " queued_no_path=%" PRIu64
		 " failed_no_path=%" PRIu64 "\n", sess, st.ios, st.parts,
		 st.split, st.waits, st.reopens, st.stale, ts->queued_no_path,
		 ts->failed_no_path);
	log_info("ibtrs: %s: report: verbs ios=%" PRIu64 " post_sends=%" PRIu64
		 " send_wrs=%" PRIu64 " post_recvs=%" PRIu64 " recv_wrs=%" PRIu64
		 " cq_sweeps=%" PRIu64 " cqes=%" PRIu64 " cq_arms=%" PRIu64
		 " cq_events=%" PRIu64 " signaled=%" PRIu64 "\n", sess, st.ios,
		 v.post_sends, v.send_wrs, v.post_recvs, v.recv_wrs, v.cq_sweeps,
		 v.cqes, v.cq_arms, v.cq_events, v.signaled);
	for (i = 0; i < ts->npaths; i++) {
		const struct ibtrs_path_stats *p = &ts->path[i];

		log_info("ibtrs: %s: report: path %d %s state=%s reads=%" PRIu64
			 " writes=%" PRIu64 " failovers=%" PRIu64
			 " reconnects=%" PRIu64 "\n", sess, i + 1, p->addr,
			 ibtrs_path_state_name(p->state), p->reads, p->writes,
			 p->failovers, p->reconnects);
	}
	free(ts);
}

static void fio_ibtrs_cleanup(struct thread_data *td)
{
	struct fio_ibtrs_data *ld = td->io_ops_data;

	if (!ld)
		return;
	if (ld->clt && ibnbd_clt_trs(ld->clt)) {
		fio_ibtrs_unplug(ld);
		fio_ibtrs_report(ld);
	}
	ibnbd_clt_destroy(ld->clt);
	if (ld->ios_done)
		munmap((void *)(ld->ios_done - ld->td->subjob_number),
		       sysconf(_SC_PAGESIZE));
	free(ld->events);
	free(ld);
	td->io_ops_data = NULL;
}

static int fio_ibtrs_open_file(struct thread_data *td, struct fio_file *f)
{
	return 0;
}

static int fio_ibtrs_close_file(struct thread_data *td, struct fio_file *f)
{
	return 0;
}

static int fio_ibtrs_io_u_init(struct thread_data *td, struct io_u *io_u)
{
	struct fio_ibtrs_data *ld = td->io_ops_data;
	struct fio_ibtrs_io *fio = calloc(1, sizeof(*fio));
	unsigned long long max_len = td_max_bs(td);

	if (!fio)
		return 1;
	if (td->o.max_bs[DDIR_TRIM] > max_len)
		max_len = td->o.max_bs[DDIR_TRIM];
	if (ibnbd_clt_io_init(ld->clt, &fio->io, max_len)) {
		free(fio);
		return 1;
	}
	fio->ld = ld;
	fio->io_u = io_u;
	io_u->engine_data = fio;
	return 0;
}

static void fio_ibtrs_io_u_free(struct thread_data *td, struct io_u *io_u)
{
	struct fio_ibtrs_io *fio = io_u->engine_data;

	if (!fio)
		return;
	ibnbd_clt_io_free(&fio->io);
	free(fio);
	io_u->engine_data = NULL;
}

/* ------------------------------------------------------------------ */
/* IO                                                                  */

static void fio_ibtrs_io_done(struct ibnbd_clt_io *io, int err)
{
	struct fio_ibtrs_io *fio = container_of(io, struct fio_ibtrs_io, io);
	struct fio_ibtrs_data *ld = fio->ld;
	struct io_u *io_u = fio->io_u;

	io_u->error = err < 0 ? -err : err;
	io_u->resid = err ? io_u->xfer_buflen : 0;
	ld->events[(ld->ev_head + ld->nr_events++) % ld->ev_size] = io_u;
	if (ld->ios_done)
		*ld->ios_done += 1;	/* x86: an aligned u64 store is atomic */
	if (err == -ENOTCONN)
		fio_ibtrs_conn_lost(ld->td, ld);
}

static enum fio_q_status fio_ibtrs_queue(struct thread_data *td,
					 struct io_u *io_u)
{
	struct fio_ibtrs_data *ld = td->io_ops_data;
	struct fio_ibtrs_options *o = td->eo;
	struct fio_ibtrs_io *fio = io_u->engine_data;
	struct ibnbd_clt_io *io = &fio->io;
	int r;

	fio_ro_check(td, io_u);

	io->offset = io_u->offset;
	io->len = io_u->xfer_buflen;
	io->buf = io_u->xfer_buf;
	/*
	 * Every IO of the engine is direct IO a job waits for: marked
	 * latency-sensitive (the kernel server submits it REQ_SYNC), as the
	 * kernel marks O_DIRECT writes and as the kernel client forwards
	 * them.
	 */
	io->flags = IBNBD_F_SYNC;
	io->done = fio_ibtrs_io_done;
	switch (io_u->ddir) {
	case DDIR_READ:
		io->op = IBNBD_OP_READ;
		break;
	case DDIR_WRITE:
		io->op = IBNBD_OP_WRITE;
		if (o->fua || td->o.sync_io)
			io->flags |= IBNBD_F_FUA;
		break;
	case DDIR_TRIM:
		io->op = IBNBD_OP_DISCARD;
		break;
	case DDIR_SYNC:
	case DDIR_DATASYNC:
		io->op = IBNBD_OP_FLUSH;
		io->offset = 0;
		io->len = 0;
		break;
	default:
		io_u->error = EINVAL;
		td_vmsg(td, EINVAL, "unsupported IO direction (sync_file_range?)", "ibtrs");
		return FIO_Q_COMPLETED;
	}
	/*
	 * Queued even when no permit is free: the client sends the parts as
	 * permits come back (fio's iodepth bounds what it holds). An outright
	 * transport rejection completes the io_u through the event ring.
	 * Staged, not posted: commit() or getevents() posts the batch.
	 */
	if (!ld->plugged) {
		ibtrs_clt_plug(ibnbd_clt_trs(ld->clt));
		ld->plugged = true;
	}
	r = ibnbd_clt_submit(ld->clt, io);
	if (!r)
		return FIO_Q_QUEUED;
	io_u->error = -r;
	log_err("ibtrs: %s\n", ibnbd_clt_errmsg(ld->clt));
	return FIO_Q_COMPLETED;
}

/*
 * fio commits after every queue() by default (iodepth_batch_submit=1) and
 * always before it waits (td_io_getevents()). With "coalesce" the batch is
 * posted by the getevents() that has to reap from the transport, so all
 * the IO fio queued while it took the completions already reaped goes in
 * one chain (as SPDK's delay_cmd_submit rings the doorbell when it next
 * processes completions); fio's sleeps (thinktime, rate) quiesce, which
 * reaps everything, first.
 */
static int fio_ibtrs_commit(struct thread_data *td)
{
	struct fio_ibtrs_data *ld = td->io_ops_data;
	struct fio_ibtrs_options *o = td->eo;

	if (!o->coalesce)
		fio_ibtrs_unplug(ld);
	return 0;
}

/* Milliseconds left of @budget_ms since @start. */
static int64_t fio_ibtrs_left_ms(const struct timespec *start, int64_t budget_ms)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return budget_ms - ((now.tv_sec - start->tv_sec) * 1000 +
			    (now.tv_nsec - start->tv_nsec) / 1000000);
}

static int fio_ibtrs_getevents(struct thread_data *td, unsigned int min,
			       unsigned int max, const struct timespec *t)
{
	struct fio_ibtrs_data *ld = td->io_ops_data;
	struct fio_ibtrs_options *o = td->eo;
	struct timespec start = { 0 };
	int64_t budget_ms = -1, left;
	unsigned int ret;
	int r, wait_ms;

	/* Drop what fio consumed through ->event() last time. */
	if (ld->ev_delivered) {
		ld->ev_head = (ld->ev_head + ld->ev_delivered) % ld->ev_size;
		ld->nr_events -= ld->ev_delivered;
		ld->ev_delivered = 0;
	}
	/*
	 * fio takes completions one by one by default
	 * (iodepth_batch_complete_max=1) and queues one IO after each. While
	 * completed io_us are waiting here, hand them out and leave what fio
	 * queued meanwhile staged: the batch goes out, as one chain, once fio
	 * has drained them and has to wait.
	 */
	if (o->coalesce && ld->nr_events && ld->nr_events >= min) {
		ret = ld->nr_events < max ? ld->nr_events : max;
		ld->ev_delivered = ret;
		return ret;
	}
	fio_ibtrs_unplug(ld);
	if (t) {
		budget_ms = t->tv_sec * 1000 + t->tv_nsec / 1000000;
		clock_gettime(CLOCK_MONOTONIC, &start);
	}

	for (;;) {
		/*
		 * Event mode: while fewer than @min are in, the library
		 * sleeps in epoll on its CQ channels (bounded, so that its
		 * timers run). With "poll" every call is one sweep of the
		 * CQs and no system call.
		 */
		wait_ms = 0;
		if (ld->nr_events < min && !o->busy_poll) {
			wait_ms = 100;
			if (budget_ms >= 0) {
				left = fio_ibtrs_left_ms(&start, budget_ms);
				wait_ms = left <= 0 ? 0 : left < 100 ? (int)left : 100;
			}
		}
		r = ibnbd_clt_poll(ld->clt, wait_ms);
		if (r < 0 && r != -EAGAIN && r != -EINTR) {
			td_vmsg(td, -r, "ibtrs_clt_poll failed", "ibtrs");
			return r;
		}
		if (ld->nr_events >= min)
			break;
		if (budget_ms >= 0 && fio_ibtrs_left_ms(&start, budget_ms) <= 0)
			break;
	}
	ret = ld->nr_events < max ? ld->nr_events : max;
	ld->ev_delivered = ret;
	return ret;
}

static struct io_u *fio_ibtrs_event(struct thread_data *td, int event)
{
	struct fio_ibtrs_data *ld = td->io_ops_data;

	return ld->events[(ld->ev_head + (unsigned int)event) % ld->ev_size];
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
	.commit			= fio_ibtrs_commit,
	.getevents		= fio_ibtrs_getevents,
	.event			= fio_ibtrs_event,
	.cleanup		= fio_ibtrs_cleanup,
	.open_file		= fio_ibtrs_open_file,
	.close_file		= fio_ibtrs_close_file,
	.io_u_init		= fio_ibtrs_io_u_init,
	.io_u_free		= fio_ibtrs_io_u_free,
	.options		= fio_ibtrs_options,
	.option_struct_size	= sizeof(struct fio_ibtrs_options),
};
