// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trs-test-server - IBTRS test server with an in-memory disk (optionally a
 * shared file mapping, so data survives a server restart).
 * Usage: trs-test-server -a ADDR [-a ADDR...] [-p PORT] [-q QD] [-c CHUNK]
 *        [-d DISK_MIB] [-f FILE] [-t SECONDS] [-v]
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
#include "test_common.h"

static volatile sig_atomic_t stop;
static char *disk;
static size_t disk_size;
static unsigned long long nreads, nwrites, nbad, nsess;

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
	}
	return ibtrs_srv_resp(op, 0, h.len);
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

	while ((c = getopt(argc, argv, "a:p:q:c:d:f:t:v")) != -1) {
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
		case 'v': verbose++; break;
		default:
			fprintf(stderr, "usage: %s -a ADDR [-a ADDR] [-p PORT] [-q QD] "
				"[-c CHUNK] [-d MIB] [-f FILE] [-t SEC] [-v]\n", argv[0]);
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
		int n = ibtrs_srv_poll(ctx, 200);

		if (n < 0) {
			fprintf(stderr, "ibtrs_srv_poll: %s\n", strerror(-n));
			break;
		}
	}
	ibtrs_srv_close(ctx);
	printf("server done: sessions=%llu reads=%llu writes=%llu bad=%llu\n",
	       nsess, nreads, nwrites, nbad);
	return 0;
}
