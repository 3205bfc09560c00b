// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibtrs-clt-addr.c - "[src@]dst" path addresses of the client transport
 * (map_device of ibnbd-client, add_path of the session's sysfs). Strings
 * only, no state: tests/fuzz/ builds this file for the host too.
 */
#include <linux/module.h>
#include <linux/inet.h>
#include <linux/string.h>
#include <net/net_namespace.h>

#include "ibtrs-clt.h"

int ibtrs_clt_parse_path(const char *s, struct ibtrs_clt_addr *addr)
{
	char buf[INET6_ADDRSTRLEN + 1 + INET6_ADDRSTRLEN + 1];
	char *at, *dst = buf;

	memset(addr, 0, sizeof(*addr));
	if (strscpy(buf, s, sizeof(buf)) < 0)
		return -EINVAL;
	at = strchr(buf, '@');
	if (at) {
		*at = '\0';
		dst = at + 1;
		if (inet_pton_with_scope(&init_net, AF_UNSPEC, buf, NULL,
					 &addr->src))
			return -EINVAL;
	}
	if (inet_pton_with_scope(&init_net, AF_UNSPEC, dst, NULL, &addr->dst))
		return -EINVAL;
	if (at && addr->src.ss_family != addr->dst.ss_family)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_GPL(ibtrs_clt_parse_path);
