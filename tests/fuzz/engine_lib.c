// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine_lib.c - part of the fio engine's option harness (engine_fuzz.h):
 * libibtrs's parser of one path address, trs_clt_path_alloc() of
 * trs/lib/clt_path.c, on a client that was never opened (it reads only
 * the port from it).
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "clt.h"
#include "fuzz.h"
#include "engine_fuzz.h"

void fz_lib_path(const char *addr, uint16_t port)
{
	static struct ibtrs_clt clt;
	struct trs_clt_path *path;
	const struct sockaddr_in *d4;

	memset(&clt, 0, sizeof(clt));
	clt.opts.port = port;
	path = trs_clt_path_alloc(&clt, addr);
	if (!path) {
		FZ_CHECK(*ibtrs_clt_last_error(NULL));
		return;
	}
	FZ_CHECK(path->clt == &clt);
	FZ_CHECK(strlen(addr) < sizeof(path->addr_str) &&
		 !strcmp(path->addr_str, addr));
	FZ_CHECK(path->dst.ss_family == AF_INET ||
		 path->dst.ss_family == AF_INET6);
	/* sin_port and sin6_port are at the same offset */
	d4 = (const struct sockaddr_in *)&path->dst;
	FZ_CHECK(ntohs(d4->sin_port) == port);
	FZ_CHECK(path->has_src == (strchr(addr, '@') != NULL));
	if (path->has_src)
		FZ_CHECK(path->src.ss_family == AF_INET ||
			 path->src.ss_family == AF_INET6);
	else
		FZ_CHECK(path->src.ss_family == AF_UNSPEC);
	trs_clt_path_free(path);
}
