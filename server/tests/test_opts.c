// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_opts.c - ibnbd-serverd command line parsing.
 */
#include <errno.h>
#include <stdarg.h>

#include "srv.h"
#include "test.h"

static int parse(struct srv_opts *o, char *err, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;
	char *a;

	argv[argc++] = "ibnbd-serverd";
	va_start(ap, err);
	while ((a = va_arg(ap, char *)) && argc < 31)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	return srv_opts_parse(argc, argv, o, err, 256);
}

/* --chunk-mode: the shared names (trs/common/modes.c); default static */
static void chunk_mode(void)
{
	struct srv_opts o;
	char err[256];

	T_EQ(parse(&o, err, NULL), 0);
	T_EQ(o.chunk_mode, 0);
	T_EQ(parse(&o, err, "--chunk-mode", "rekey", NULL), 0);
	T_EQ(o.chunk_mode, 1);
	T_EQ(parse(&o, err, "--chunk-mode", "static", NULL), 0);
	T_EQ(o.chunk_mode, 0);
	T_EQ(parse(&o, err, "--chunk-mode", "rekeyed", NULL), -EINVAL);
	T_CHECK(strstr(err, "chunk_mode is static or rekey") != NULL);
}

static void defaults(void)
{
	struct srv_opts o;
	char err[256];

	T_EQ(parse(&o, err, NULL), 0);
	T_EQ(o.port, 1234);
	T_CHECK(!strcmp(o.root, "/dev"));
	T_EQ(o.naddrs, 1);
	T_CHECK(!strcmp(o.addrs[0], "0.0.0.0"));
	T_CHECK(!o.daemon);
	T_EQ(o.queue_depth, 0);
	T_EQ(o.max_devs, SRV_DEFAULT_MAX_DEVS);
}

static void full(void)
{
	struct srv_opts o;
	char err[256];

	T_EQ(parse(&o, err, "-a", "10.0.0.1", "--addr", "10.0.1.1", "-p", "4000",
		   "--root", "/tmp/x", "-q", "64", "--chunk-size", "64k",
		   "--stats-file", "/tmp/s", "--daemon", "--pidfile", "/run/p",
		   "-v", "-v", "-m", "8",
		   "--hb-interval", "200", "--hb-missed", "5", NULL), 0);
	T_EQ(o.naddrs, 2);
	T_CHECK(!strcmp(o.addrs[1], "10.0.1.1"));
	T_EQ(o.port, 4000);
	T_CHECK(!strcmp(o.root, "/tmp/x"));
	T_EQ(o.queue_depth, 64);
	T_EQ(o.chunk_size, 65536);
	T_CHECK(o.daemon);
	T_EQ(o.verbose, 2);
	T_EQ(o.max_devs, 8);
	T_EQ(o.hb_interval_ms, 200);
	T_EQ(o.hb_missed_max, 5);
	T_CHECK(!strcmp(o.stats_file, "/tmp/s"));
}

static void rejects(void)
{
	struct srv_opts o;
	char err[256];

	T_EQ(parse(&o, err, "-p", "0", NULL), -EINVAL);
	T_CHECK(strstr(err, "port"));
	T_EQ(parse(&o, err, "-p", "65536", NULL), -EINVAL);
	T_EQ(parse(&o, err, "-p", "12x", NULL), -EINVAL);
	T_EQ(parse(&o, err, "-p", "-5", NULL), -EINVAL);
	T_EQ(parse(&o, err, "-q", "0", NULL), -EINVAL);
	T_EQ(parse(&o, err, "-c", "3000", NULL), -EINVAL);	/* not pow2 */
	T_EQ(parse(&o, err, "-c", "1k", NULL), -EINVAL);	/* too small */
	T_EQ(parse(&o, err, "-c", "1g", NULL), -EINVAL);	/* too big */
	T_EQ(parse(&o, err, "-c", "64q", NULL), -EINVAL);
	T_EQ(parse(&o, err, "--root", "", NULL), -EINVAL);
	T_EQ(parse(&o, err, "--bogus", NULL), -EINVAL);
	T_CHECK(strstr(err, "unknown option"));
	/* No chunk re-keying exists yet: the option is gone, not ignored. */
	T_EQ(parse(&o, err, "--inval-mode", "none", NULL), -EINVAL);
	T_CHECK(strstr(err, "unknown option"));
	T_EQ(parse(&o, err, "-p", NULL), -EINVAL);
	T_CHECK(strstr(err, "needs an argument"));
	T_EQ(parse(&o, err, "stray", NULL), -EINVAL);
	T_EQ(parse(&o, err, "-a", "1", "-a", "2", "-a", "3", "-a", "4", "-a", "5",
		   "-a", "6", "-a", "7", "-a", "8", "-a", "9", NULL), -EINVAL);
	T_CHECK(strstr(err, "too many"));
}

static void sizes(void)
{
	unsigned long long v;

	T_EQ(srv_parse_size("4096", &v), 0);
	T_EQ(v, 4096);
	T_EQ(srv_parse_size("128k", &v), 0);
	T_EQ(v, 131072);
	T_EQ(srv_parse_size("1MiB", &v), 0);
	T_EQ(v, 1 << 20);
	T_EQ(srv_parse_size("2G", &v), 0);
	T_EQ(v, 2ULL << 30);
	T_EQ(srv_parse_size("", &v), -EINVAL);
	T_EQ(srv_parse_size("-1", &v), -EINVAL);
	T_EQ(srv_parse_size("1kx", &v), -EINVAL);
	T_EQ(srv_parse_size("99999999999999999999", &v), -EINVAL);
	T_EQ(srv_parse_size("99999999999999g", &v), -EINVAL);
}

/*
 * Regression (tests/fuzz/fuzz_srv_opts: its strict reading of the numbers
 * taken): strtoull() skips blanks and negates after a '-', so "\n4096",
 * "+5" and " -0" got through the "no leading '-'" check, and so did
 * " -18446744073709486081" (2^64 - 65535) as port 65535.
 */
static void signs(void)
{
	struct srv_opts o;
	unsigned long long v;
	char err[256];

	T_EQ(parse(&o, err, "-p", " -18446744073709486081", NULL), -EINVAL);
	T_EQ(parse(&o, err, "-p", "+5", NULL), -EINVAL);
	T_EQ(parse(&o, err, "--hb-interval", " -0", NULL), -EINVAL);
	T_EQ(parse(&o, err, "-m", " 8", NULL), -EINVAL);
	T_EQ(parse(&o, err, "-c", "\n4096", NULL), -EINVAL);
	T_EQ(srv_parse_size(" -18446744073709547520", &v), -EINVAL);
	T_EQ(srv_parse_size("+4k", &v), -EINVAL);
	T_EQ(srv_parse_size("0x1000", &v), 0);
	T_EQ(v, 4096);
}

/*
 * Regression (tests/fuzz/fuzz_srv_opts, heap-use-after-free): a parse that
 * returned inside a cluster of short options ("-hv" returns at the h) left
 * getopt inside that argument, and the next parse carried on from there:
 * it took the previous command line's -v (reading it after the fuzzer had
 * freed it) and skipped its own first argument.
 */
static void reparse(void)
{
	FILE *saved = stdout;
	struct srv_opts o;
	char err[256];
	int ret;

	stdout = fopen("/dev/null", "w");
	ret = parse(&o, err, "-hv", NULL);
	fclose(stdout);
	stdout = saved;
	T_EQ(ret, 1);
	T_EQ(parse(&o, err, "-d", NULL), 0);
	T_EQ(o.verbose, 0);
	T_CHECK(o.daemon);
}

static void help(void)
{
	struct srv_opts o;
	char err[256];
	FILE *saved = stdout;
	int ret;

	stdout = fopen("/dev/null", "w");
	ret = parse(&o, err, "--help", NULL);
	fclose(stdout);
	stdout = saved;
	T_EQ(ret, 1);
}

int main(void)
{
	T_RUN(chunk_mode);
	T_RUN(defaults);
	T_RUN(full);
	T_RUN(rejects);
	T_RUN(sizes);
	T_RUN(help);
	T_RUN(signs);
	T_RUN(reparse);
	T_EXIT();
}
