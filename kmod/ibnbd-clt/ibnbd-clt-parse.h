/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ibnbd-clt-parse.h - the map_device string of the IBNBD client, parsed
 * by ibnbd-clt-parse.c. That file uses no kernel state (strings and
 * ibtrs_clt_parse_path() only), so the host fuzzer of tests/fuzz/ builds
 * it unchanged through a small compat shim.
 */
#ifndef IBNBD_CLT_PARSE_H
#define IBNBD_CLT_PARSE_H

#include <linux/types.h>

#include "trs/ibnbd_proto.h"
#include "ibtrs-clt.h"

#define IBNBD_CLT_MAX_PATHS	8
#define IBNBD_CLT_SESSNAME_MAX	64

/**
 * struct ibnbd_clt_map_opts - a parsed map_device string.
 * @sessname: session name.
 * @path: device path on the server.
 * @mode: access mode.
 * @paths: transport paths.
 * @npaths: entries of @paths.
 */
struct ibnbd_clt_map_opts {
	char sessname[IBNBD_CLT_SESSNAME_MAX];
	char path[IBNBD_DEV_PATH_MAX];
	enum ibnbd_access_mode mode;
	struct ibtrs_clt_addr paths[IBNBD_CLT_MAX_PATHS];
	int npaths;
};

/*
 * ibnbd_clt_parse() - parse "sessname=S path=[src@]dst [path=...]
 * device_path=P [access_mode=ro|rw|migration]" (fields separated by
 * blanks or newlines) into @o, which the caller zeroed. @s is modified.
 * Return: 0, or -EINVAL with the reason logged.
 */
int ibnbd_clt_parse(char *s, struct ibnbd_clt_map_opts *o);

#endif /* IBNBD_CLT_PARSE_H */
