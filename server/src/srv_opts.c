// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * srv_opts.c - command line of ibnbd-serverd.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibtrs.h"	/* IBTRS_SRV_TEST_* */
#include "trs_common.h"	/* the shared mode names */
#include "srv.h"

void srv_opts_usage(FILE *f, const char *prog)
{
	fprintf(f,
"Usage: %s [options]\n"
"Serve IBNBD (block devices and files) over userspace IBTRS.\n"
"  -a, --addr ADDR         listen address, repeat for several paths (default 0.0.0.0)\n"
"  -p, --port PORT         RDMA CM port (default 1234)\n"
"  -r, --root DIR          device search root; client paths resolve beneath it\n"
"                          (default /dev); '..' or symlinks leaving it are refused\n"
"  -q, --queue-depth N     IBTRS chunks per session (default: library, 128)\n"
"  -c, --chunk-size SIZE   bytes per chunk = max IO size, power of two (default 128k)\n"
"  -m, --max-devices N     devices one session may open (default %d)\n"
"      --hb-interval MS    heartbeat interval; --hb-missed N: misses before failing\n"
"      --chunk-mode M      static (default: one key per path for the chunk pool)\n"
"                          or rekey (a key per chunk, replaced after every IO)\n"
"  -d, --daemon            run in the background (logs go to syslog)\n"
"  -s, --syslog            log to syslog also in the foreground\n"
"      --pidfile FILE      write the daemon's pid\n"
"      --stats-file FILE   write statistics there on SIGUSR1 and at exit\n"
"  -v, --verbose           debug logging\n"
"      --test-fault F      FOR CLIENT TESTS ONLY, breaks the protocol on purpose:\n"
"                          no-inval (answer reads without remote invalidation),\n"
"                          short-read (answer reads > 4 KiB 512 bytes short),\n"
"                          replay (a rogue server: write a pattern into the\n"
"                          previous read's buffer with its ended key, and\n"
"                          read the previous pulled write's buffer so),\n"
"                          replay-pull (only the pulled writes' replay)\n"
"  -h, --help              this text\n"
"Signals: SIGTERM/SIGINT clean shutdown (in-flight IO completes); SIGUSR1 dumps stats.\n",
		prog, SRV_DEFAULT_MAX_DEVS);
}

int srv_parse_size(const char *s, unsigned long long *out)
{
	unsigned long long v, mul = 1;
	char *end;

	/* a digit first: strtoull() would skip blanks and negate a '-' */
	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	if (*end) {
		switch (*end) {
		case 'k': case 'K': mul = 1ULL << 10; break;
		case 'm': case 'M': mul = 1ULL << 20; break;
		case 'g': case 'G': mul = 1ULL << 30; break;
		default: return -EINVAL;
		}
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
		if (*end == 'b' || *end == 'B')
			end++;
		if (*end)
			return -EINVAL;
	}
	if (v && mul > ULLONG_MAX / v)
		return -EINVAL;
	*out = v * mul;
	return 0;
}

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

enum { OPT_PIDFILE = 256, OPT_STATS, OPT_HB_INT, OPT_HB_MISS, OPT_TEST_FAULT,
       OPT_CHUNK_MODE };

static const struct option long_opts[] = {
	{ "addr", required_argument, NULL, 'a' },
	{ "port", required_argument, NULL, 'p' },
	{ "root", required_argument, NULL, 'r' },
	{ "queue-depth", required_argument, NULL, 'q' },
	{ "chunk-size", required_argument, NULL, 'c' },
	{ "max-devices", required_argument, NULL, 'm' },
	{ "hb-interval", required_argument, NULL, OPT_HB_INT },
	{ "hb-missed", required_argument, NULL, OPT_HB_MISS },
	{ "daemon", no_argument, NULL, 'd' },
	{ "foreground", no_argument, NULL, 'f' },
	{ "syslog", no_argument, NULL, 's' },
	{ "pidfile", required_argument, NULL, OPT_PIDFILE },
	{ "stats-file", required_argument, NULL, OPT_STATS },
	{ "test-fault", required_argument, NULL, OPT_TEST_FAULT },
	{ "chunk-mode", required_argument, NULL, OPT_CHUNK_MODE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

#define BAD(...) do { snprintf(err, errlen, __VA_ARGS__); return -EINVAL; } while (0)

int srv_opts_parse(int argc, char **argv, struct srv_opts *o, char *err,
		   size_t errlen)
{
	unsigned long long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->port = 1234;
	o->root = SRV_DEFAULT_ROOT;
	o->max_devs = SRV_DEFAULT_MAX_DEVS;
	if (errlen)
		err[0] = 0;

	/*
	 * 0, not 1: a full reset (glibc, musl). After a parse that returned
	 * inside a cluster ("-hv" returns at the h), getopt would otherwise
	 * go on inside the previous command line.
	 */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":a:p:r:q:c:m:dfsvh", long_opts,
				NULL)) != -1) {
		switch (c) {
		case 'a':
			if (!*optarg)
				BAD("empty --addr");
			if (o->naddrs >= SRV_MAX_ADDRS)
				BAD("too many --addr (max %d)", SRV_MAX_ADDRS);
			o->addrs[o->naddrs++] = optarg;
			break;
		case 'p':
			if (parse_uint(optarg, 65535, &v) || !v)
				BAD("bad --port '%s'", optarg);
			o->port = v;
			break;
		case 'r':
			if (!*optarg)
				BAD("empty --root");
			o->root = optarg;
			break;
		case 'q':
			if (parse_uint(optarg, 65535, &v) || !v)
				BAD("bad --queue-depth '%s' (1..65535)", optarg);
			o->queue_depth = v;
			break;
		case 'c':
			if (srv_parse_size(optarg, &v) || v < 4096 ||
			    v > (1ULL << 24) || (v & (v - 1)))
				BAD("bad --chunk-size '%s' (power of two, 4k..16m)",
				    optarg);
			o->chunk_size = v;
			break;
		case 'm':
			if (parse_uint(optarg, 65535, &v) || !v)
				BAD("bad --max-devices '%s' (1..65535)", optarg);
			o->max_devs = v;
			break;
		case OPT_HB_INT:
			if (parse_uint(optarg, 3600000, &v))
				BAD("bad --hb-interval '%s'", optarg);
			o->hb_interval_ms = v;
			break;
		case OPT_HB_MISS:
			if (parse_uint(optarg, 1000, &v))
				BAD("bad --hb-missed '%s'", optarg);
			o->hb_missed_max = v;
			break;
		case 'd':
			o->daemon = true;
			break;
		case 'f':
			o->daemon = false;
			break;
		case 's':
			o->use_syslog = true;
			break;
		case OPT_PIDFILE:
			o->pidfile = optarg;
			break;
		case OPT_STATS:
			o->stats_file = optarg;
			break;
		case OPT_CHUNK_MODE: {
			const char *why = "";
			int m = trs_chunk_mode_parse(optarg, TRS_IMPL_USER, &why);

			if (m < 0)
				BAD("bad --chunk-mode '%s': %s", optarg, why);
			o->chunk_mode = m;
			break;
		}
		case OPT_TEST_FAULT:
			if (!strcmp(optarg, "no-inval"))
				o->test_faults |= IBTRS_SRV_TEST_NO_INVAL;
			else if (!strcmp(optarg, "short-read"))
				o->test_faults |= IBTRS_SRV_TEST_SHORT_READ;
			else if (!strcmp(optarg, "replay"))
				o->test_faults |= IBTRS_SRV_TEST_REPLAY;
			else if (!strcmp(optarg, "replay-pull"))
				o->test_faults |= IBTRS_SRV_TEST_REPLAY_PULL;
			else
				BAD("bad --test-fault '%s' (no-inval, short-read, replay or replay-pull)",
				    optarg);
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			srv_opts_usage(stdout, argv[0]);
			return 1;
		case ':':
			BAD("option '%s' needs an argument", argv[optind - 1]);
		default:
			BAD("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		BAD("unexpected argument '%s'", argv[optind]);
	if (!o->naddrs)
		o->addrs[o->naddrs++] = "0.0.0.0";
	return 0;
}
