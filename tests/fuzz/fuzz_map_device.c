// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_map_device.c - the string written to the kernel client's
 * /sys/class/ibnbd-client/ctl/map_device (ibnbd_clt_parse() of
 * kmod/ibnbd-clt/ibnbd-clt-parse.c) and a session's add_path
 * (ibtrs_clt_parse_path() of kmod/ibtrs-clt/ibtrs-clt-addr.c), built from
 * the module's own source files through kshim/.
 *
 * Input: what a user writes, any bytes; as map_device_store() does
 * (kstrndup()), the parser gets a NUL-terminated copy up to the first NUL,
 * exactly sized, and a zeroed options struct on the heap. Checks: 0 or
 * -EINVAL; accepted options have a terminated non-empty session name and
 * device path within their arrays, 1..IBNBD_CLT_MAX_PATHS paths each with
 * an IPv4 or IPv6 destination and a source of the same family or none,
 * a known access mode, a session name the server accepts in INFO_REQ; the options written back as a map_device string
 * parse to the same options. The whole input also goes to the path parser
 * alone (add_path), whose accepted addresses obey the same rules.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>

#include "fuzz.h"
#include "ibnbd-clt-parse.h"
#include "trs_common.h"

static void check_addr(const struct ibtrs_clt_addr *a)
{
	FZ_CHECK(a->dst.ss_family == AF_INET || a->dst.ss_family == AF_INET6);
	FZ_CHECK(a->src.ss_family == AF_UNSPEC ||
		 a->src.ss_family == a->dst.ss_family);
}

/* "[src@]dst" of @a, as the client's sysfs prints it */
static int print_addr(char *buf, size_t len, const struct ibtrs_clt_addr *a)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	const void *sa, *da;
	int af = a->dst.ss_family;

	if (af == AF_INET) {
		sa = &((const struct sockaddr_in *)&a->src)->sin_addr;
		da = &((const struct sockaddr_in *)&a->dst)->sin_addr;
	} else {
		sa = &((const struct sockaddr_in6 *)&a->src)->sin6_addr;
		da = &((const struct sockaddr_in6 *)&a->dst)->sin6_addr;
	}
	FZ_CHECK(inet_ntop(af, da, d, sizeof(d)));
	if (a->src.ss_family == AF_UNSPEC)
		return snprintf(buf, len, "%s", d);
	FZ_CHECK(inet_ntop(af, sa, s, sizeof(s)));
	return snprintf(buf, len, "%s@%s", s, d);
}

static void append(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
	va_end(ap);
	FZ_CHECK(n >= 0 && (size_t)n < len - *pos);
	*pos += (size_t)n;
}

static bool same_addr(const struct ibtrs_clt_addr *a,
		      const struct ibtrs_clt_addr *b)
{
	char x[2 * INET6_ADDRSTRLEN + 2], y[2 * INET6_ADDRSTRLEN + 2];

	print_addr(x, sizeof(x), a);
	print_addr(y, sizeof(y), b);
	return !strcmp(x, y);
}

static void check_opts(const struct ibnbd_clt_map_opts *o)
{
	static const char *const modes[] = { "ro", "rw", "migration" };
	struct ibnbd_clt_map_opts *again;
	char buf[2048], addr[2 * INET6_ADDRSTRLEN + 2];
	char name[TRS_SESSNAME_MAX];
	struct trs_msg_info_req m;
	size_t pos = 0;
	int i;

	FZ_CHECK(strnlen(o->sessname, sizeof(o->sessname)) >= 1 &&
		 strnlen(o->sessname, sizeof(o->sessname)) <
		 sizeof(o->sessname));
	/* it goes to the server in INFO_REQ, which must accept it */
	trs_info_req_encode(&m, o->sessname);
	FZ_CHECK(trs_info_req_decode(&m, sizeof(m), name, NULL) == 0);
	FZ_CHECK(!strcmp(name, o->sessname));
	FZ_CHECK(strnlen(o->path, sizeof(o->path)) >= 1 &&
		 strnlen(o->path, sizeof(o->path)) < sizeof(o->path));
	FZ_CHECK(o->npaths >= 1 && o->npaths <= IBNBD_CLT_MAX_PATHS);
	FZ_CHECK(o->mode <= IBNBD_ACCESS_MIGRATION);
	for (i = 0; i < o->npaths; i++)
		check_addr(&o->paths[i]);

	append(buf, sizeof(buf), &pos, "sessname=%s device_path=%s",
	       o->sessname, o->path);
	for (i = 0; i < o->npaths; i++) {
		print_addr(addr, sizeof(addr), &o->paths[i]);
		append(buf, sizeof(buf), &pos, " path=%s", addr);
	}
	append(buf, sizeof(buf), &pos, " access_mode=%s\n", modes[o->mode]);

	again = calloc(1, sizeof(*again));
	FZ_CHECK(again);
	FZ_CHECK(ibnbd_clt_parse(buf, again) == 0);
	FZ_CHECK(!strcmp(again->sessname, o->sessname));
	FZ_CHECK(!strcmp(again->path, o->path));
	FZ_CHECK(again->mode == o->mode && again->npaths == o->npaths);
	for (i = 0; i < o->npaths; i++)
		FZ_CHECK(same_addr(&again->paths[i], &o->paths[i]));
	free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ibnbd_clt_map_opts *o;
	struct ibtrs_clt_addr *a;
	struct fz_in in;
	char *s, *t;
	int ret;

	fz_in_init(&in, data, size);
	s = fz_rest_str(&in);
	t = fz_dup(s, strlen(s) + 1);

	o = calloc(1, sizeof(*o));
	FZ_CHECK(o);
	ret = ibnbd_clt_parse(s, o);
	FZ_CHECK(ret == 0 || ret == -EINVAL);
	if (!ret)
		check_opts(o);
	free(o);

	a = fz_alloc(sizeof(*a));
	ret = ibtrs_clt_parse_path(t, a);
	FZ_CHECK(ret == 0 || ret == -EINVAL);
	if (!ret)
		check_addr(a);
	free(a);
	free(t);
	free(s);
	return 0;
}
