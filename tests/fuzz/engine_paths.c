// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine_paths.c - part of the fio engine's option harness (engine_fuzz.h):
 * the engine's client library compiled in, to reach the split of the
 * paths option that ibnbd_clt_create() does (a static function).
 */
#include "ibnbd_clt.c"	/* fio-engine/, on the include path */

#include "fuzz.h"
#include "engine_fuzz.h"

int fz_engine_paths(const struct ibnbd_clt_params *p)
{
	struct ibnbd_clt *c;
	int err = 0, i, n;

	c = ibnbd_clt_create(p, &err);
	if (!c) {
		FZ_CHECK(err == -EINVAL || err == -E2BIG);
		FZ_CHECK(*ibnbd_clt_errmsg(NULL));
		return err;
	}
	FZ_CHECK(c->npaths >= 1 && c->npaths <= IBTRS_MAX_PATHS);
	FZ_CHECK(!strcmp(c->paths_str, p->paths));
	FZ_CHECK(!strcmp(c->sessname, p->sessname));
	for (i = 0; i < c->npaths; i++) {
		FZ_CHECK(*c->paths[i]);
		FZ_CHECK(!strpbrk(c->paths[i], ", ;"));
		FZ_CHECK(strstr(p->paths, c->paths[i]));
		fz_lib_path(c->paths[i], c->trs_opts.port);
	}
	n = c->npaths;
	ibnbd_clt_destroy(c);
	return n;
}
