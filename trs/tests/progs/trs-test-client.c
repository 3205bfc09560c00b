// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trs-test-client - IBTRS test client: random reads and writes of 512 B ..
 * max IO size with data verification, then per-path counters.
 *
 * Every outstanding IO slot owns a disjoint lane of the disk, so the
 * expected content of every sector is known: the client remembers the
 * generation of the last completed write of each sector (0 = never written,
 * expect what the server had: zeros unless -k).
 *
 * --canary: every slot alternates between two buffers; a read's buffer is
 * kept as it completed while the slot's next IO runs, and checked when that
 * one completes (and at the end): any change is a remote write after the
 * read ended (a server replaying an ended key, trs-test-server -R).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibtrs.h"
#include "test_common.h"

struct slot {
	struct ibtrs_permit *permit;
	char *buf;
	char *alt;		/* --canary: the other buffer */
	char *saved;		/* --canary: the last read's data as completed */
	char *saved_buf;	/* ... and where it stays until checked */
	uint32_t saved_len;
	uint64_t lane_off;
	uint64_t offset;
	uint32_t len;
	uint32_t gen;
	enum ibtrs_dir dir;
	struct tt_hdr hdr;
	struct iovec iov[2];
};

static struct ibtrs_clt *clt;
static struct slot *slots;
static uint32_t *shadow;		/* per sector: generation */
static uint64_t disk_size = 64 << 20, lane_size;
static uint32_t min_size = 512, max_size, gen_counter;
static int rw_pct = 50, bounce, keep_unknown, canary;
static unsigned long long ios, errors, verify_errors, target_ios, canary_errors;
static double duration;
static struct timespec t0;
static volatile sig_atomic_t stop;
static int stopping;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)(ts.tv_sec - t0.tv_sec) + (double)(ts.tv_nsec - t0.tv_nsec) / 1e9;
}

static void log_fn(enum ibtrs_log_level lvl, const char *msg)
{
	static const char *const n[] = { "ERR", "WRN", "INF", "DBG" };

	fprintf(stderr, "[%8.3f] clt %s: %s\n", now_s(), n[lvl], msg);
}

static void fill(struct slot *s)
{
	uint64_t *w = (uint64_t *)s->buf;
	uint32_t sec, i;

	for (sec = 0; sec < s->len / TT_SECTOR; sec++)
		for (i = 0; i < TT_SECTOR / 8; i++)
			*w++ = tt_word(s->offset / TT_SECTOR + sec, s->gen, i);
}

static void verify(struct slot *s)
{
	const uint64_t *w = (const uint64_t *)s->buf;
	uint32_t sec, i;

	for (sec = 0; sec < s->len / TT_SECTOR; sec++) {
		uint64_t sn = s->offset / TT_SECTOR + sec;
		uint32_t g = shadow[sn];

		for (i = 0; i < TT_SECTOR / 8; i++, w++) {
			uint64_t want = g ? tt_word(sn, g, i) : 0;

			if (g == 0 && keep_unknown)
				continue;
			if (*w != want) {
				if (verify_errors++ < 10)
					fprintf(stderr, "VERIFY ERROR: sector %llu word %u: "
						"got %016llx want %016llx (gen %u)\n",
						(unsigned long long)sn, i,
						(unsigned long long)*w,
						(unsigned long long)want, g);
				w += TT_SECTOR / 8 - i;
				break;
			}
		}
	}
}

static void conf(void *priv, int err);

/* --canary: the slot's last finished read must be as it completed. */
static void canary_check(struct slot *s)
{
	uint32_t i;

	if (!s->saved_len)
		return;
	if (memcmp(s->saved_buf, s->saved, s->saved_len)) {
		for (i = 0; i < s->saved_len && s->saved_buf[i] == s->saved[i]; i++)
			;
		if (canary_errors++ < 10)
			fprintf(stderr, "CANARY: the buffer of a read that completed "
				"changed afterwards at byte %u: %02x, was %02x "
				"(a remote write after the IO ended)\n", i,
				(unsigned char)s->saved_buf[i],
				(unsigned char)s->saved[i]);
	}
	s->saved_len = 0;
}

/* --canary: keep this read's buffer as it is; the next IO uses the other. */
static void canary_keep(struct slot *s)
{
	char *b = s->buf;

	memcpy(s->saved, b, s->len);
	s->saved_buf = b;
	s->saved_len = s->len;
	s->buf = s->alt;
	s->alt = b;
}

static int issue(struct slot *s)
{
	uint32_t nsec = (max_size - min_size) / TT_SECTOR + 1;
	uint64_t lane_secs;
	int iovcnt = 1, ret;

	s->len = min_size + (uint32_t)(random() % nsec) * TT_SECTOR;
	lane_secs = (lane_size - s->len) / TT_SECTOR + 1;
	s->offset = s->lane_off + (uint64_t)(random() % lane_secs) * TT_SECTOR;
	s->dir = (random() % 100) < rw_pct ? IBTRS_WRITE : IBTRS_READ;
	if (s->dir == IBTRS_WRITE) {
		s->gen = ++gen_counter;
		fill(s);
	} else {
		memset(s->buf, 0xEE, s->len);
	}
	s->hdr.magic = TT_MAGIC;
	s->hdr.len = s->len;
	s->hdr.offset = s->offset;
	s->iov[0].iov_base = s->buf;
	s->iov[0].iov_len = s->len;
	if (bounce && s->len >= 2 * TT_SECTOR) {	/* exercise iovec staging */
		s->iov[0].iov_len = TT_SECTOR;
		s->iov[1].iov_base = s->buf + TT_SECTOR;
		s->iov[1].iov_len = s->len - TT_SECTOR;
		iovcnt = 2;
	}
	ret = ibtrs_clt_request(clt, s->dir, s->permit, &s->hdr, sizeof(s->hdr),
				s->iov, iovcnt, conf, s);
	if (ret)
		fprintf(stderr, "ibtrs_clt_request: %s\n", strerror(-ret));
	return ret;
}

static bool done(void)
{
	return stop || (target_ios && ios >= target_ios) ||
	       (duration > 0 && now_s() >= duration);
}

static int inflight;

static void conf(void *priv, int err)
{
	struct slot *s = priv;
	uint32_t i;

	inflight--;
	if (err) {
		if (errors++ < 10)
			fprintf(stderr, "IO ERROR: %s of %u at %llu: %s (%s)\n",
				s->dir == IBTRS_WRITE ? "write" : "read", s->len,
				(unsigned long long)s->offset, strerror(-err),
				ibtrs_clt_last_error(clt));
		stop = 1;
		return;
	}
	ios++;
	if (canary)
		canary_check(s);
	if (s->dir == IBTRS_WRITE)
		for (i = 0; i < s->len / TT_SECTOR; i++)
			shadow[s->offset / TT_SECTOR + i] = s->gen;
	else
		verify(s);
	if (canary && s->dir == IBTRS_READ)
		canary_keep(s);
	if (!done() && !stopping && !issue(s))
		inflight++;
}

static void print_stats(void)
{
	struct ibtrs_clt_stats st;
	unsigned long long sent = 0, recv = 0, reg = 0, n = 0, hb = 0;
	int i;

	ibtrs_clt_get_stats(clt, &st);
	for (i = 0; i < st.npaths; i++) {
		struct ibtrs_path_stats *p = &st.path[i];

		printf("path %d addr=%s state=%s reads=%llu writes=%llu "
		       "read_bytes=%llu write_bytes=%llu msgs_sent=%llu msgs_recv=%llu "
		       "reg_wrs=%llu failovers=%llu reconnects=%llu hb_sent=%llu "
		       "hb_rtt_us=%llu lat_us=%llu proto_errors=%llu inflight=%u\n",
		       i, p->addr,
		       ibtrs_path_state_name(p->state),
		       (unsigned long long)p->reads, (unsigned long long)p->writes,
		       (unsigned long long)p->read_bytes,
		       (unsigned long long)p->write_bytes,
		       (unsigned long long)p->msgs_sent, (unsigned long long)p->msgs_recv,
		       (unsigned long long)p->reg_wrs, (unsigned long long)p->failovers,
		       (unsigned long long)p->reconnects, (unsigned long long)p->hb_sent,
		       (unsigned long long)p->hb_rtt_us,
		       (unsigned long long)p->lat_us,
		       (unsigned long long)p->proto_errors, p->inflight);
		sent += p->msgs_sent;
		recv += p->msgs_recv;
		reg += p->reg_wrs;
		n += p->reads + p->writes;
		hb += p->hb_sent;
	}
	printf("total ios=%llu posted=%llu errors=%llu verify_errors=%llu "
	       "canary_errors=%llu "
	       "msgs_sent=%llu msgs_recv=%llu reg_wrs=%llu hb_sent=%llu "
	       "msgs_per_io=%.3f reg_wrs_per_io=%.3f queued_no_path=%llu "
	       "failed_no_path=%llu paths_connected=%d elapsed=%.1f\n",
	       ios, n, errors, verify_errors, canary_errors, sent, recv, reg, hb,
	       ios ? (double)(sent + recv) / (double)ios : 0.0,
	       ios ? (double)reg / (double)ios : 0.0,
	       (unsigned long long)st.queued_no_path,
	       (unsigned long long)st.failed_no_path,
	       ibtrs_clt_paths_connected(clt), now_s());
}

static void usage(const char *p)
{
	fprintf(stderr,
		"usage: %s -s PATH [-s PATH...] [options]\n"
		"  -s PATH          server address, ip or src@dst (one per path)\n"
		"  -n COUNT         stop after COUNT IOs\n"
		"  -T SECONDS       stop after SECONDS (default 5 unless -n)\n"
		"  -q DEPTH         outstanding IOs (default 16)\n"
		"  -P POLICY        round-robin|min-inflight|min-latency\n"
		"  -m MIN -M MAX    IO size range in bytes (512 .. max IO size)\n"
		"  -w PCT           percentage of writes (50)\n"
		"  -D MIB           disk size used (64)\n"
		"  -C CONS          connections per path\n"
		"  -p PORT          server port\n"
		"  -b               bounce mode: no registered buffers, 2 iovecs\n"
		"  -k               sectors never written may hold anything\n"
		"  --mr MODE        mw|reg|bounce|global;  --inval MODE remote|local|none\n"
		"  --write MODE     push|pull (how write data reaches the server)\n"
		"  --ctrl-loss-tmo MS, --hb-interval MS, --hb-missed N\n"
		"  --expect-msgs-per-io X   fail unless (msgs_sent+msgs_recv) == X*ios\n"
		"  --wait-paths N   at the end wait up to 20 s for N connected paths\n"
		"  --switch-policy  rotate the policy every second\n"
		"  --connect-timeout MS  one connection attempt\n"
		"  --canary         check that no finished read's buffer changes\n"
		"  -v               more logging\n", p);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "mr", required_argument, NULL, 1 },
		{ "inval", required_argument, NULL, 2 },
		{ "ctrl-loss-tmo", required_argument, NULL, 3 },
		{ "hb-interval", required_argument, NULL, 4 },
		{ "hb-missed", required_argument, NULL, 5 },
		{ "expect-msgs-per-io", required_argument, NULL, 6 },
		{ "wait-paths", required_argument, NULL, 7 },
		{ "switch-policy", no_argument, NULL, 8 },
		{ "connect-timeout", required_argument, NULL, 9 },
		{ "canary", no_argument, NULL, 10 },
		{ "write", required_argument, NULL, 11 },
		{ NULL, 0, NULL, 0 },
	};
	struct ibtrs_clt_opts opts = { .sessname = "trs-test" };
	const char *paths[IBTRS_MAX_PATHS];
	int npaths = 0, depth = 16, c, err = 0, verbose = 0, wait_paths = 0;
	int switch_policy = 0, rc = 0;
	double expect_mpi = -1, last_report = 0, last_switch = 0;
	unsigned long long last_ios = 0;
	unsigned int i;
	size_t bufsz, nbufs;
	char *bufs;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	srandom((unsigned int)t0.tv_nsec);
	while ((c = getopt_long(argc, argv, "s:n:T:q:P:m:M:w:D:C:p:bkv", lopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (npaths < IBTRS_MAX_PATHS)
				paths[npaths++] = optarg;
			break;
		case 'n': target_ios = strtoull(optarg, NULL, 0); break;
		case 'T': duration = atof(optarg); break;
		case 'q': depth = atoi(optarg); break;
		case 'P':
			if (ibtrs_mp_policy_parse(optarg, &opts.policy)) {
				fprintf(stderr, "bad policy %s\n", optarg);
				return 2;
			}
			break;
		case 'm': min_size = (uint32_t)atoi(optarg); break;
		case 'M': max_size = (uint32_t)atoi(optarg); break;
		case 'w': rw_pct = atoi(optarg); break;
		case 'D': disk_size = strtoull(optarg, NULL, 0) << 20; break;
		case 'C': opts.cons_per_path = (unsigned int)atoi(optarg); break;
		case 'b': bounce = 1; break;
		case 'p': opts.port = (uint16_t)atoi(optarg); break;
		case 'k': keep_unknown = 1; break;
		case 'v': verbose++; break;
		case 1:
			if (ibtrs_mr_mode_parse(optarg, &opts.mr_mode)) {
				fprintf(stderr, "%s\n", ibtrs_clt_last_error(NULL));
				return 2;
			}
			break;
		case 2:
			if (ibtrs_inval_mode_parse(optarg, &opts.inval_mode)) {
				fprintf(stderr, "%s\n", ibtrs_clt_last_error(NULL));
				return 2;
			}
			break;
		case 11:
			if (ibtrs_write_mode_parse(optarg, &opts.write_mode)) {
				fprintf(stderr, "%s\n", ibtrs_clt_last_error(NULL));
				return 2;
			}
			break;
		case 3: opts.ctrl_loss_tmo_ms = atoi(optarg); break;
		case 4: opts.hb_interval_ms = (unsigned int)atoi(optarg); break;
		case 5: opts.hb_missed_max = (unsigned int)atoi(optarg); break;
		case 6: expect_mpi = atof(optarg); break;
		case 7: wait_paths = atoi(optarg); break;
		case 8: switch_policy = 1; break;
		case 9: opts.connect_timeout_ms = (unsigned int)atoi(optarg); break;
		case 10: canary = 1; break;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	if (!npaths || depth < 1 || min_size < TT_SECTOR || min_size % TT_SECTOR) {
		usage(argv[0]);
		return 2;
	}
	if (!target_ios && duration <= 0)
		duration = 5;
	ibtrs_set_log(log_fn, verbose > 1 ? IBTRS_LOG_DEBUG :
		      verbose ? IBTRS_LOG_INFO : IBTRS_LOG_WARN);
	clt = ibtrs_clt_open(&opts, paths, npaths, &err);
	if (!clt) {
		fprintf(stderr, "ibtrs_clt_open: %s: %s\n", strerror(-err),
			ibtrs_clt_last_error(NULL));
		return 1;
	}
	if ((unsigned int)depth > ibtrs_clt_queue_depth(clt))
		depth = (int)ibtrs_clt_queue_depth(clt);
	if (!max_size || max_size > ibtrs_clt_max_io_size(clt))
		max_size = (uint32_t)ibtrs_clt_max_io_size(clt);
	max_size -= max_size % TT_SECTOR;
	if (min_size > max_size)
		min_size = max_size;
	lane_size = disk_size / (uint64_t)depth;
	lane_size -= lane_size % TT_SECTOR;
	if (lane_size < max_size) {
		fprintf(stderr, "disk too small for depth %d and IO size %u\n",
			depth, max_size);
		return 2;
	}
	printf("connected: paths=%d/%d queue_depth=%u max_io=%zu depth=%d sizes=%u..%u "
	       "policy=%s mr=%s inval=%s write=%s %s\n", ibtrs_clt_paths_connected(clt), npaths,
	       ibtrs_clt_queue_depth(clt), ibtrs_clt_max_io_size(clt), depth,
	       min_size, max_size, ibtrs_mp_policy_name(opts.policy),
	       ibtrs_mr_mode_name(opts.mr_mode), ibtrs_inval_mode_name(opts.inval_mode),
	       ibtrs_write_mode_name(opts.write_mode),
	       bounce ? "bounce" : "registered");
	fflush(stdout);
	shadow = calloc(disk_size / TT_SECTOR, sizeof(*shadow));
	slots = calloc((size_t)depth, sizeof(*slots));
	bufsz = (max_size + 4095) & ~4095u;
	nbufs = (size_t)depth * (canary ? 3 : 1);	/* buf, alt, saved */
	bufs = aligned_alloc(4096, bufsz * nbufs);
	if (!shadow || !slots || !bufs)
		return 1;
	/* saved copies (--canary) are never exposed: only 2 of 3 registered */
	if (!bounce && (err = ibtrs_clt_reg_mem(clt, bufs,
						bufsz * (size_t)depth * (canary ? 2 : 1)))) {
		fprintf(stderr, "ibtrs_clt_reg_mem: %s\n", strerror(-err));
		return 1;
	}
	signal(SIGINT, SIG_IGN);
	for (i = 0; i < (unsigned int)depth; i++) {
		slots[i].buf = bufs + bufsz * i;
		if (canary) {
			slots[i].alt = bufs + bufsz * ((size_t)depth + i);
			slots[i].saved = bufs + bufsz * (2 * (size_t)depth + i);
		}
		slots[i].lane_off = lane_size * i;
		slots[i].permit = ibtrs_clt_get_permit(clt);
		if (!slots[i].permit) {
			fprintf(stderr, "no permit for slot %u\n", i);
			return 1;
		}
		if (!issue(&slots[i]))
			inflight++;
	}
	/* the first report's second starts with the IO, not with the connect */
	last_report = now_s();
	while (inflight > 0) {
		int n = ibtrs_clt_poll(clt, 100);

		if (n < 0) {
			fprintf(stderr, "ibtrs_clt_poll: %s\n", strerror(-n));
			rc = 1;
			break;
		}
		if (done())
			stopping = 1;
		if (now_s() - last_report >= 1.0) {
			struct timespec mono;

			clock_gettime(CLOCK_MONOTONIC, &mono);
			printf("progress t=%.1f ios=%llu iops=%.0f paths_connected=%d "
			       "inflight=%d mono=%.3f\n", now_s(), ios,
			       (double)(ios - last_ios) / (now_s() - last_report),
			       ibtrs_clt_paths_connected(clt), inflight,
			       (double)mono.tv_sec + (double)mono.tv_nsec / 1e9);
			fflush(stdout);
			last_report = now_s();
			last_ios = ios;
		}
		if (switch_policy && now_s() - last_switch >= 1.0) {
			static int pol;

			pol = (pol + 1) % 3;
			ibtrs_clt_set_policy(clt, (enum ibtrs_mp_policy)pol);
			last_switch = now_s();
		}
	}
	if (wait_paths) {
		double until = now_s() + 20;

		while (ibtrs_clt_paths_connected(clt) < wait_paths && now_s() < until)
			ibtrs_clt_poll(clt, 100);
		if (ibtrs_clt_paths_connected(clt) < wait_paths) {
			fprintf(stderr, "only %d of %d paths connected at the end\n",
				ibtrs_clt_paths_connected(clt), wait_paths);
			rc = 1;
		}
	}
	if (canary) {
		double until = now_s() + 0.5;

		/* a late remote write has half a second to land */
		while (now_s() < until)
			ibtrs_clt_poll(clt, 100);
		for (i = 0; i < (unsigned int)depth; i++)
			canary_check(&slots[i]);
	}
	print_stats();
	if (expect_mpi >= 0) {
		struct ibtrs_clt_stats st;
		unsigned long long m = 0;
		int p;

		ibtrs_clt_get_stats(clt, &st);
		for (p = 0; p < st.npaths; p++)
			m += st.path[p].msgs_sent + st.path[p].msgs_recv;
		if (!ios || (double)m != expect_mpi * (double)ios) {
			fprintf(stderr, "FAIL: messages per IO %.3f, expected %.3f\n",
				ios ? (double)m / (double)ios : 0.0, expect_mpi);
			rc = 1;
		}
	}
	for (i = 0; i < (unsigned int)depth; i++)
		ibtrs_clt_put_permit(clt, slots[i].permit);
	if (!bounce)
		ibtrs_clt_unreg_mem(clt, bufs);
	ibtrs_clt_close(clt);
	if (errors || verify_errors || canary_errors)
		rc = 1;
	printf("RESULT %s\n", rc ? "FAIL" : "OK");
	return rc;
}
