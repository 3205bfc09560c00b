// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kshim.c - host stand-ins for the kernel functions the string-only kernel
 * sources of the map_device parser call (kshim/ headers).
 *
 * inet_pton_with_scope() is the kernel's address parser, not ours: this
 * version keeps its interface, its length limits (16 characters for IPv4,
 * 48 for IPv6), AF_UNSPEC trying IPv4 then IPv6, and a "%scope" suffix
 * that counts (numeric only: the shim's namespace has no devices) only on
 * a link-local IPv6 address; the digits themselves go to the C library's
 * inet_pton(), which is stricter than the kernel's in4_pton() about
 * leading zeros. What is fuzzed is our code around it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/inet.h>
#include <linux/printk.h>
#include <net/net_namespace.h>

#include "../fuzz.h"

struct net init_net;

int kshim_printk(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = fz_format(fmt, ap);
	va_end(ap);
	return n;
}

static int kshim_inet4(const char *src, unsigned short port,
		       struct sockaddr_storage *addr)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)addr;

	if (strlen(src) > INET_ADDRSTRLEN)
		return -EINVAL;
	if (inet_pton(AF_INET, src, &in4->sin_addr) != 1)
		return -EINVAL;
	in4->sin_family = AF_INET;
	in4->sin_port = htons(port);
	return 0;
}

static int kshim_inet6(const char *src, unsigned short port,
		       struct sockaddr_storage *addr)
{
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)addr;
	char buf[INET6_ADDRSTRLEN + 1];
	const char *scope;
	size_t srclen = strlen(src), alen;
	unsigned long id;
	char *end;

	if (srclen > INET6_ADDRSTRLEN)
		return -EINVAL;
	scope = strchr(src, '%');
	alen = scope ? (size_t)(scope - src) : srclen;
	memcpy(buf, src, alen);
	buf[alen] = '\0';
	if (inet_pton(AF_INET6, buf, &in6->sin6_addr) != 1)
		return -EINVAL;
	if (scope && IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr) && scope[1]) {
		errno = 0;
		id = strtoul(scope + 1, &end, 0);
		if (errno || end == scope + 1 || (*end && strcmp(end, "\n")) ||
		    id > 0xffffffffUL)
			return -EINVAL;
		in6->sin6_scope_id = (uint32_t)id;
	}
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(port);
	return 0;
}

int inet_pton_with_scope(struct net *net, unsigned short af, const char *src,
			 const char *port, struct sockaddr_storage *addr)
{
	unsigned long p = 0;
	char *end;
	int ret;

	(void)net;
	if (port) {
		errno = 0;
		p = strtoul(port, &end, 0);
		if (errno || end == port || *end || p > 0xffff)
			return -EINVAL;
	}
	memset(addr, 0, sizeof(*addr));
	switch (af) {
	case AF_INET:
		return kshim_inet4(src, (unsigned short)p, addr);
	case AF_INET6:
		return kshim_inet6(src, (unsigned short)p, addr);
	case AF_UNSPEC:
		ret = kshim_inet4(src, (unsigned short)p, addr);
		if (ret)
			ret = kshim_inet6(src, (unsigned short)p, addr);
		return ret;
	}
	return -EAFNOSUPPORT;
}
