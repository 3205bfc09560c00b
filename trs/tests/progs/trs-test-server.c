// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trs-test-server - IBTRS test server with an in-memory disk (optionally a
 * shared file mapping, so data survives a server restart).
 * Usage: trs-test-server -a ADDR [-a ADDR...] [-p PORT] [-q QD] [-c CHUNK]
 *        [-d DISK_MIB] [-f FILE] [-t SECONDS] [-S lib|raw] [-L IP:MS]
 *        [-K static|rekey] [-R] [-v]
 * -K chunk_mode (ibtrs_srv_opts.chunk_mode); -R the rogue-server replay fault.
 * -L delays every answer to a request that came over the path from client
 * address IP by MS milliseconds: a slow path, for the policy tests (rxe
 * between two addresses of one guest bypasses every qdisc, so netem cannot).
 * -S answers every read one sector short (hostile server): "lib" through
 * ibtrs_srv_resp(), which must refuse and fail the IO; "raw" bypasses that
 * check (library test hook) so the short answer reaches the client.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include "ibtrs.h"
#include "srv.h"		/* trs_srv_test_short_read */
#include "test_common.h"

static volatile sig_atomic_t stop;
static char *disk;
static size_t disk_size;
static unsigned long long nreads, nwrites, nbad, nsess, nshort, nrefused;
static int short_read;

/* -L: answers held back until due */
#define SLOW_MAX	1024
static char slow_ip[64];
static unsigned int slow_ms;
static struct slow_rsp {
	struct ibtrs_srv_op *op;
	size_t len;
	struct timespec due;
} slow_q[SLOW_MAX];
static unsigned int slow_head, slow_n;

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static int answer(struct ibtrs_srv_op *op, size_t len)
{
	struct slow_rsp *r;

	if (!slow_ms || slow_n == SLOW_MAX || !op->path ||
	    strcmp(op->path->addr, slow_ip))
		return ibtrs_srv_resp(op, 0, len);
	r = &slow_q[(slow_head + slow_n++) % SLOW_MAX];
	r->op = op;
	r->len = len;
	clock_gettime(CLOCK_MONOTONIC, &r->due);
	r->due.tv_nsec += (long)slow_ms * 1000000;
	r->due.tv_sec += r->due.tv_nsec / 1000000000;
	r->due.tv_nsec %= 1000000000;
	return 0;
}

/* Send the held-back answers that are due (all of them if @all). */
static void answer_due(bool all)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	while (slow_n && (all || !ts_before(&now, &slow_q[slow_head].due))) {
		struct slow_rsp *r = &slow_q[slow_head];

		ibtrs_srv_resp(r->op, 0, r->len);
		slow_head = (slow_head + 1) % SLOW_MAX;
		slow_n--;
	}
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void link_ev(struct ibtrs_srv_sess *sess, enum ibtrs_srv_link_ev ev,
		    void *priv)
{
	(void)priv;
	printf("session %s %s\n", ibtrs_srv_sessname(sess),
	       ev == IBTRS_SRV_LINK_EV_CONNECTED ? "connected" : "disconnected");
	if (ev == IBTRS_SRV_LINK_EV_CONNECTED)
		nsess++;
	fflush(stdout);
}

static int rdma_ev(struct ibtrs_srv_sess *sess, void *priv,
		   struct ibtrs_srv_op *op, enum ibtrs_dir dir, void *data,
		   size_t datalen, const void *usr, size_t usrlen)
{
	struct tt_hdr h;

	(void)sess;
	(void)priv;
	if (usrlen != sizeof(h)) {
		nbad++;
		return -EINVAL;
	}
	memcpy(&h, usr, sizeof(h));
	if (h.magic != TT_MAGIC || h.offset > disk_size ||
	    h.len > disk_size - h.offset || h.len != datalen) {
		nbad++;
		return -EINVAL;
	}
	if (dir == IBTRS_WRITE) {
		memcpy(disk + h.offset, data, h.len);
		nwrites++;
	} else {
		memcpy(data, disk + h.offset, h.len);
		nreads++;
		if (short_read) {
			nshort++;
			if (ibtrs_srv_resp(op, 0, h.len - TT_SECTOR))
				nrefused++;
			return 0;
		}
	}
	return answer(op, h.len);
}

static void log_fn(enum ibtrs_log_level lvl, const char *msg)
{
	static const char *const n[] = { "ERR", "WRN", "INF", "DBG" };
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(stderr, "[%ld.%03ld] srv %s: %s\n", (long)ts.tv_sec % 1000,
		ts.tv_nsec / 1000000, n[lvl], msg);
}

int main(int argc, char **argv)
{
	const char *addrs[8], *file = NULL;
	struct ibtrs_srv_opts opts = { 0 };
	struct ibtrs_srv_ops ops = { .link_ev = link_ev, .rdma_ev = rdma_ev };
	struct ibtrs_srv_ctx *ctx;
	int naddrs = 0, c, err = 0, verbose = 0;
	unsigned long mib = 64, seconds = 0;
	time_t end;
	struct ibtrs_srv_stats st;

	while ((c = getopt(argc, argv, "a:p:q:c:d:f:t:S:L:K:Rv")) != -1) {
		switch (c) {
		case 'a':
			if (naddrs < 8)
				addrs[naddrs++] = optarg;
			break;
		case 'p': opts.port = (uint16_t)atoi(optarg); break;
		case 'q': opts.queue_depth = (unsigned int)atoi(optarg); break;
		case 'c': opts.chunk_size = (unsigned int)atoi(optarg); break;
		case 'd': mib = strtoul(optarg, NULL, 0); break;
		case 'f': file = optarg; break;
		case 't': seconds = strtoul(optarg, NULL, 0); break;
		case 'S':
			short_read = 1;
			trs_srv_test_short_read = !strcmp(optarg, "raw");
			if (!trs_srv_test_short_read && strcmp(optarg, "lib")) {
				fprintf(stderr, "-S lib|raw\n");
				return 2;
			}
			break;
		case 'L': {
			char *colon = strrchr(optarg, ':');

			if (!colon || (size_t)(colon - optarg) >= sizeof(slow_ip)) {
				fprintf(stderr, "-L IP:MS\n");
				return 2;
			}
			memcpy(slow_ip, optarg, (size_t)(colon - optarg));
			slow_ms = (unsigned int)atoi(colon + 1);
			break;
		}
		case 'R': opts.test_faults |= IBTRS_SRV_TEST_REPLAY; break;
		case 'K':
			if (ibtrs_chunk_mode_parse(optarg, &opts.chunk_mode)) {
				fprintf(stderr, "%s\n", ibtrs_clt_last_error(NULL));
				return 2;
			}
			break;
		case 'v': verbose++; break;
		default:
			fprintf(stderr, "usage: %s -a ADDR [-a ADDR] [-p PORT] [-q QD] "
				"[-c CHUNK] [-d MIB] [-f FILE] [-t SEC] [-S lib|raw] "
				"[-L IP:MS] [-K static|rekey] [-R] [-v]\n", argv[0]);
			return 2;
		}
	}
	if (!naddrs)
		addrs[naddrs++] = "0.0.0.0";
	ibtrs_set_log(log_fn, verbose > 1 ? IBTRS_LOG_DEBUG :
		      verbose ? IBTRS_LOG_INFO : IBTRS_LOG_WARN);
	disk_size = mib << 20;
	if (file) {
		int fd = open(file, O_RDWR | O_CREAT, 0600);

		if (fd < 0 || ftruncate(fd, (off_t)disk_size)) {
			perror(file);
			return 1;
		}
		disk = mmap(NULL, disk_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (disk == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
	} else {
		disk = calloc(1, disk_size);
		if (!disk) {
			perror("calloc");
			return 1;
		}
	}
	opts.addrs = addrs;
	opts.naddrs = naddrs;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	ctx = ibtrs_srv_open(&opts, &ops, NULL, &err);
	if (!ctx) {
		fprintf(stderr, "ibtrs_srv_open: %s (%s)\n", strerror(-err),
			ibtrs_clt_last_error(NULL));
		return 1;
	}
	printf("READY listening on %d address(es)\n", naddrs);
	fflush(stdout);
	end = seconds ? time(NULL) + (time_t)seconds : 0;
	while (!stop && (!end || time(NULL) < end)) {
		int n = ibtrs_srv_poll(ctx, slow_n ? 1 : 200);

		if (n < 0) {
			fprintf(stderr, "ibtrs_srv_poll: %s\n", strerror(-n));
			break;
		}
		answer_due(false);
	}
	answer_due(true);
	ibtrs_srv_get_stats(ctx, &st);
	ibtrs_srv_close(ctx);
	printf("server done: sessions=%llu reads=%llu writes=%llu bad=%llu "
	       "short_answers=%llu refused=%llu pulls=%llu\n", nsess, nreads,
	       nwrites, nbad, nshort, nrefused, (unsigned long long)st.pulls);
	return 0;
}
