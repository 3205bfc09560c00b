// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_srv_opts.c - the command line of ibnbd-serverd (srv_opts_parse()
 * and srv_parse_size() of server/src/srv_opts.c).
 *
 * Input: the error buffer's size (1 byte; the buffer is exactly that big),
 * then the arguments after the program name, separated by NULs, each an
 * exactly sized heap string (at most 62). The parser runs once per input
 * in one process, as the host tests run it, so state left from one call
 * (getopt's) shows up in the next. Checks: 0, 1 (--help) or -EINVAL with
 * a terminated message fitting the buffer; accepted options are within
 * their documented ranges (port 1..65535, queue depth and max devices
 * 1..65535, chunk size a power of two in 4 KiB..16 MiB, heartbeat
 * interval and misses in range, 1..8 non-empty listen addresses, known
 * test faults); a number it accepted is the number written (no sign
 * games). Every argument also goes to srv_parse_size(), whose accepted
 * values are checked against a strict reading of the same text.
 */
#include <ctype.h>

#include "fuzz.h"
#include "ibtrs.h"
#include "srv.h"

#define MAX_ARGS	63

/*
 * Strict reading of "[0x]digits[k|m|g[i][b]]" (base as strtoull() with base
 * 0: 0x hex, leading 0 octal); false when it is not such a number or does
 * not fit in 64 bits.
 */
static bool ref_size(const char *s, unsigned long long *out)
{
	unsigned __int128 v = 0, mul = 1;
	unsigned int base = 10, d;
	const char *p = s;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
	    isxdigit((unsigned char)p[2])) {
		base = 16;
		p += 2;
	} else if (p[0] == '0') {
		base = 8;
	}
	if (!isdigit((unsigned char)*p) &&
	    !(base == 16 && isxdigit((unsigned char)*p)))
		return false;
	for (; *p; p++) {
		if (isdigit((unsigned char)*p))
			d = (unsigned int)(*p - '0');
		else if (base == 16 && isxdigit((unsigned char)*p))
			d = (unsigned int)(tolower((unsigned char)*p) - 'a' + 10);
		else
			break;
		if (d >= base)
			return false;
		v = v * base + d;
		if (v > UINT64_MAX)
			return false;
	}
	if (*p) {
		switch (tolower((unsigned char)*p)) {
		case 'k': mul = 1ULL << 10; break;
		case 'm': mul = 1ULL << 20; break;
		case 'g': mul = 1ULL << 30; break;
		default: return false;
		}
		p++;
		if (*p == 'i' || *p == 'I')
			p++;
		if (*p == 'b' || *p == 'B')
			p++;
		if (*p)
			return false;
	}
	if (v * mul > UINT64_MAX)
		return false;
	*out = (unsigned long long)(v * mul);
	return true;
}

static void check_size(const char *s)
{
	unsigned long long v = 0, want = 0;

	if (srv_parse_size(s, &v))
		return;
	FZ_CHECK(ref_size(s, &want));
	FZ_CHECK(v == want);
}

/* Short options of ibnbd-serverd that take an argument. */
static bool takes_arg(char c)
{
	return c && strchr("aprqcm", c);
}

/* Its long options that take one (the others: daemon, foreground,
 * syslog, verbose, help). */
static const char *const long_args[] = {
	"addr", "port", "root", "queue-depth", "chunk-size", "max-devices",
	"hb-interval", "hb-missed", "pidfile", "stats-file", "test-fault",
};

/* The long option taking an argument that --@name (@nl bytes, maybe
 * abbreviated) names, if exactly one does. */
static const char *long_match(const char *name, size_t nl)
{
	const char *hit = NULL;
	size_t i;

	for (i = 0; i < sizeof(long_args) / sizeof(long_args[0]); i++) {
		if (strlen(long_args[i]) == nl &&
		    !strncmp(name, long_args[i], nl))
			return long_args[i];
		if (nl < strlen(long_args[i]) &&
		    !strncmp(name, long_args[i], nl))
			hit = hit ? "" : long_args[i];
	}
	return hit && *hit ? hit : NULL;
}

/*
 * The argument of the last -x (alone, "-xV", "-x V", in a cluster such as
 * "-vxV") or --long (also abbreviated, "--long V" or "--long=V") in @argv,
 * read as getopt_long() reads a command line it accepted; NULL when the
 * option is not there.
 */
static const char *last_arg(int argc, char *const *argv, char sopt,
			    const char *lopt)
{
	const char *v = NULL, *a, *eq, *arg, *name;
	size_t nl;
	int i;

	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (!strcmp(a, "--"))
			break;
		if (a[0] != '-' || !a[1])
			continue;
		if (a[1] == '-') {
			eq = strchr(a + 2, '=');
			nl = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
			name = long_match(a + 2, nl);
			if (!name)
				continue;
			arg = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
			if (!strcmp(name, lopt))
				v = arg;
			continue;
		}
		for (a++; *a; a++) {
			if (!takes_arg(*a))
				continue;
			arg = a[1] ? a + 1 : (i + 1 < argc ? argv[++i] : NULL);
			if (*a == sopt)
				v = arg;
			break;
		}
	}
	return v;
}

/* An accepted decimal option value is digits only (a + or blanks may
 * lead, strtoull() skips those), and its number is the value taken. */
static void check_decimal(int argc, char *const *argv, char sopt,
			  const char *lopt,
			  unsigned long long val)
{
	const char *v = last_arg(argc, argv, sopt, lopt);
	unsigned __int128 n = 0;

	if (!v)
		return;	/* set through an abbreviation: not checked */
	while (isspace((unsigned char)*v))
		v++;
	if (*v == '+')
		v++;
	FZ_CHECK(isdigit((unsigned char)*v));
	for (; *v; v++) {
		FZ_CHECK(isdigit((unsigned char)*v));
		n = n * 10 + (unsigned int)(*v - '0');
		FZ_CHECK(n <= UINT64_MAX);
	}
	FZ_CHECK(n == val);
}

static void check_opts(int argc, char *const *argv, const struct srv_opts *o)
{
	int i;

	FZ_CHECK(o->naddrs >= 1 && o->naddrs <= SRV_MAX_ADDRS);
	for (i = 0; i < o->naddrs; i++)
		FZ_CHECK(o->addrs[i] && *o->addrs[i]);
	FZ_CHECK(o->port >= 1);
	FZ_CHECK(o->root && *o->root);
	FZ_CHECK(o->queue_depth <= 65535);
	FZ_CHECK(!o->chunk_size ||
		 (o->chunk_size >= 4096 && o->chunk_size <= (1U << 24) &&
		  !(o->chunk_size & (o->chunk_size - 1))));
	FZ_CHECK(o->max_devs >= 1 && o->max_devs <= 65535);
	FZ_CHECK(o->hb_interval_ms <= 3600000 && o->hb_missed_max <= 1000);
	FZ_CHECK(!(o->test_faults & ~(IBTRS_SRV_TEST_NO_INVAL |
				      IBTRS_SRV_TEST_SHORT_READ |
				      IBTRS_SRV_TEST_REPLAY |
				      IBTRS_SRV_TEST_REPLAY_PULL)));
	FZ_CHECK(o->verbose >= 0);
	check_decimal(argc, argv, 'p', "port", o->port);
	if (o->queue_depth)
		check_decimal(argc, argv, 'q', "queue-depth", o->queue_depth);
	check_decimal(argc, argv, 'm', "max-devices", o->max_devs);
	check_decimal(argc, argv, 0, "hb-interval", o->hb_interval_ms);
	check_decimal(argc, argv, 0, "hb-missed", o->hb_missed_max);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 2], *orig[MAX_ARGS + 2];
	struct srv_opts o;
	struct fz_in in;
	size_t errlen;
	int argc = 0, ret, i;
	char *err, *a;

	fz_in_init(&in, data, size);
	errlen = fz_u8(&in);
	err = fz_alloc(errlen);
	argv[argc++] = fz_dup("ibnbd-serverd", sizeof("ibnbd-serverd"));
	while (argc <= MAX_ARGS && (a = fz_field(&in)))
		argv[argc++] = a;
	argv[argc] = NULL;
	memcpy(orig, argv, sizeof(argv));

	for (i = 1; i < argc; i++)
		check_size(argv[i]);

	ret = srv_opts_parse(argc, argv, &o, err, errlen);
	FZ_CHECK(ret == 0 || ret == 1 || ret == -EINVAL);
	if (ret == -EINVAL && errlen)
		FZ_CHECK(strnlen(err, errlen) < errlen);
	if (ret == -EINVAL && errlen > 1)
		FZ_CHECK(err[0]);
	if (!ret)
		check_opts(argc, orig, &o);

	/* getopt_long() permutes argv: free what was allocated */
	for (i = 0; i < argc; i++)
		free(orig[i]);
	free(err);
	return 0;
}
