// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * srv_main.c - ibnbd-serverd: serves block devices and files found beneath
 * a search root to IBNBD clients over IBTRS.
 *
 * One wait, in ibtrs_srv_poll(), over the IBTRS server context and,
 * watched by it (ibtrs_srv_watch_fd()), the io_uring completion queue, a
 * signalfd, and the eventfd of the BLKDISCARD worker thread (srv_discard.c,
 * the only other thread). Requests
 * arrive in srv_rdma_ev() (srv_sess.c, inside ibtrs_srv_poll); IO is queued
 * to io_uring and answered when its completion is reaped (srv_io.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "srvd.h"

/*
 * The daemon's one wait: IBTRS's epoll fd watches the io_uring, the
 * signalfd and the discard worker's eventfd too (ibtrs_srv_watch_fd()), so
 * a wake-up costs one epoll_wait(); their callbacks run inside the poll.
 */
static void srv_poll_ibtrs(struct srvd *d, int timeout_ms)
{
	int r;

	d->in_poll = true;
	r = ibtrs_srv_poll(d->ctx, timeout_ms);
	d->in_poll = false;
	if (r < 0 && r != -EAGAIN && r != -EINTR)
		srv_wrn("ibtrs_srv_poll: %s", strerror(-r));
	srv_flush_deferred(d);
}

static void srv_ring_ready(void *arg)
{
	(void)arg;	/* srv_run_io() reaps, right after the poll */
}

static void srv_discard_ready(void *arg)
{
	srv_discard_reap(arg);
}

static void srv_handle_signal(void *arg)
{
	struct srvd *d = arg;
	struct signalfd_siginfo si;

	while (read(d->sigfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			if (!d->stopping) {
				srv_info("%s: shutting down, %u IOs in flight",
					 strsignal(si.ssi_signo), d->inflight);
				d->stop_inflight = d->inflight;
			}
			d->stopping = true;
			break;
		case SIGUSR1:
			srv_stats_report(d);
			break;
		case SIGHUP:
			srv_info("SIGHUP ignored (no configuration to reload)");
			break;
		}
	}
}

static int srv_loop(struct srvd *d)
{
	struct timespec stop_at = { 0 };

	for (;;) {
		int timeout = -1;

		/* the requests of the last wake-up: submit, reap, answer */
		srv_run_io(d);
		if (d->stopping) {
			struct timespec now;

			clock_gettime(CLOCK_MONOTONIC, &now);
			if (d->inflight) {
				stop_at = now;
				stop_at.tv_nsec += 300 * 1000000L;	/* grace */
				if (stop_at.tv_nsec >= 1000000000L) {
					stop_at.tv_sec++;
					stop_at.tv_nsec -= 1000000000L;
				}
			} else if (!stop_at.tv_sec) {
				stop_at = now;	/* nothing in flight: stop now */
			}
			if (!d->inflight &&
			    (now.tv_sec > stop_at.tv_sec ||
			     (now.tv_sec == stop_at.tv_sec &&
			      now.tv_nsec >= stop_at.tv_nsec)))
				return 0;
			timeout = 50;
		}
		srv_poll_ibtrs(d, timeout);
	}
}

static int srv_daemonize(int *ready_fd)
{
	int p[2];
	pid_t pid;
	char c = 0;

	if (pipe(p))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1 || c != 'R')
			_exit(1);
		_exit(0);
	}
	close(p[0]);
	if (setsid() < 0)
		return -errno;
	if (chdir("/"))
		return -errno;
	*ready_fd = p[1];
	return 0;
}

static void srv_ready(int ready_fd)
{
	int fd;

	if (ready_fd < 0)
		return;
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	if (write(ready_fd, "R", 1) != 1)
		srv_wrn("cannot notify the parent process");
	close(ready_fd);
}

int main(int argc, char **argv)
{
	static struct srvd dd;
	struct srvd *d = &dd;
	struct ibtrs_srv_opts so = { 0 };
	char err[256];
	sigset_t mask;
	int ready_fd = -1, ret;
	unsigned int entries;
	struct srv_sess *s;
	struct srv_io *io;

	ret = srv_opts_parse(argc, argv, &d->o, err, sizeof(err));
	if (ret == 1)
		return 0;
	if (ret) {
		fprintf(stderr, "ibnbd-serverd: %s\n", err);
		srv_opts_usage(stderr, argv[0]);
		return 2;
	}
	srvd_global = d;
	d->deferred_tail = &d->deferred;
	d->start = time(NULL);
	if (d->o.daemon || d->o.use_syslog)
		openlog("ibnbd-serverd", LOG_PID | (d->o.daemon ? 0 : LOG_PERROR),
			LOG_DAEMON);
	srv_log_setup(d->o.verbose ? SRV_LOG_DEBUG : SRV_LOG_INFO,
		      d->o.daemon || d->o.use_syslog);
	ibtrs_set_log(srv_ibtrs_log, d->o.verbose > 1 ? IBTRS_LOG_DEBUG :
		      d->o.verbose ? IBTRS_LOG_INFO : IBTRS_LOG_WARN);

	if (!realpath(d->o.root, d->root)) {
		srv_err("search root %s: %m", d->o.root);
		return 1;
	}
	d->root_fd = open(d->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (d->root_fd < 0) {
		srv_err("search root %s: %m", d->root);
		return 1;
	}
	if (getrandom(&d->gen, sizeof(d->gen), 0) != sizeof(d->gen))
		d->gen = (uint16_t)(getpid() ^ time(NULL));
	if (!d->gen)
		d->gen = 1;

	/* Fork before any RDMA or io_uring resource exists. */
	if (d->o.daemon && srv_daemonize(&ready_fd)) {
		srv_err("cannot daemonize: %m");
		return 1;
	}
	if (d->o.pidfile) {
		FILE *f = fopen(d->o.pidfile, "w");

		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f)) {
			srv_err("pidfile %s: %m", d->o.pidfile);
			return 1;
		}
	}

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	d->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d->sigfd < 0) {
		srv_err("signalfd: %m");
		return 1;
	}

	so.addrs = d->o.addrs;
	so.naddrs = d->o.naddrs;
	so.port = d->o.port;
	so.queue_depth = d->o.queue_depth;
	so.chunk_size = d->o.chunk_size;
	so.hb_interval_ms = d->o.hb_interval_ms;
	so.hb_missed_max = d->o.hb_missed_max;
	so.test_faults = d->o.test_faults;
	so.chunk_mode = (enum ibtrs_chunk_mode)d->o.chunk_mode;
	if (so.chunk_mode != IBTRS_CHUNK_STATIC)
		srv_info("chunk_mode %s", ibtrs_chunk_mode_name(so.chunk_mode));
	if (so.test_faults)
		srv_wrn("test faults %#x: this server breaks the protocol on purpose (client tests only)",
			 so.test_faults);
	d->chunk_size = d->o.chunk_size ? d->o.chunk_size : 128 * 1024;

	entries = d->o.queue_depth ? d->o.queue_depth : 128;
	entries = entries < 64 ? 128 : entries * 2;
	if (entries > 4096)
		entries = 4096;
	ret = io_uring_queue_init(entries, &d->ring, 0);
	if (ret) {
		srv_err("io_uring_queue_init(%u): %s", entries, strerror(-ret));
		return 1;
	}

	srv_fixed_init(d);
	d->ctx = ibtrs_srv_open(&so, &srv_ops, d, &ret);
	if (!d->ctx) {
		srv_err("cannot listen on port %u: %s", d->o.port, strerror(-ret));
		return 1;
	}

	if (ibtrs_srv_watch_fd(d->ctx, d->ring.ring_fd, srv_ring_ready, d) ||
	    ibtrs_srv_watch_fd(d->ctx, d->sigfd, srv_handle_signal, d))
		goto epoll_err;
	ret = srv_discard_start(&d->discard);
	if (ret) {
		srv_err("cannot start the discard thread: %s", strerror(-ret));
		return 1;
	}
	if (ibtrs_srv_watch_fd(d->ctx, d->discard.efd, srv_discard_ready, d))
		goto epoll_err;

	{
		char addrs[256] = "";
		int i;

		for (i = 0; i < d->o.naddrs; i++)
			snprintf(addrs + strlen(addrs), sizeof(addrs) - strlen(addrs),
				 "%s%s", i ? "," : "", d->o.addrs[i]);
		srv_info("listening on %s port %u, root %s, queue depth %u, chunk %u",
			 addrs, d->o.port, d->root,
			 d->o.queue_depth ? d->o.queue_depth : 128, d->chunk_size);
	}
	srv_ready(ready_fd);

	ret = srv_loop(d);
	srv_discard_stop(&d->discard);	/* idle: nothing is in flight */

	srv_info("shutdown: %u IOs in flight at the signal, %llu answered since, %u still in flight; closing sessions (%llu requests left unanswered)",
		 d->stop_inflight, (unsigned long long)d->stop_answered,
		 d->inflight, (unsigned long long)d->parked);
	srv_stats_report(d);
	/* Devices first (all IO is answered), then the transport. */
	for (s = d->sessions; s; s = s->next) {
		unsigned int i;

		for (i = 0; i < s->max_devs; i++)
			if (s->devs[i])
				srv_sd_close(s, s->devs[i], "server shutdown");
	}
	ibtrs_srv_close(d->ctx);	/* may call link_ev(DISCONNECTED) */
	while ((s = d->sessions)) {
		s->inflight = 0;	/* loop ended with d->inflight == 0 */
		srv_sess_kill(d, s, "server shutdown");
	}
	srv_fixed_exit(d);
	io_uring_queue_exit(&d->ring);
	while ((io = d->io_cache)) {
		d->io_cache = io->next;
		free(io);
	}
	if (d->o.pidfile)
		unlink(d->o.pidfile);
	srv_info("exited cleanly");
	return ret ? 1 : 0;

epoll_err:
	srv_err("cannot watch the daemon's fds in the transport's epoll: %m");
	return 1;
}
