// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibnbd-clt-parse.c - the map_device string of the IBNBD client (see
 * ibnbd-clt-parse.h). Strings only, no kernel state: tests/fuzz/ builds
 * this file for the host too.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/printk.h>
#include <linux/string.h>

#include "trs/trs_proto.h"
#include "ibnbd-clt-parse.h"

/* The name reaches the server in INFO_REQ, which takes no other. */
static bool ibnbd_clt_sessname_ok(const char *s)
{
	for (; *s; s++)
		if (!trs_sessname_char_ok(*s))
			return false;
	return true;
}

int ibnbd_clt_parse(char *s, struct ibnbd_clt_map_opts *o)
{
	char *tok, *val;

	o->mode = IBNBD_ACCESS_RW;
	while ((tok = strsep(&s, " \t\n")) != NULL) {
		if (!*tok)
			continue;
		val = strchr(tok, '=');
		if (!val) {
			pr_err("map_device: field '%s' has no value\n", tok);
			return -EINVAL;
		}
		*val++ = '\0';
		if (!strcmp(tok, "sessname")) {
			if (!*val || strscpy(o->sessname, val,
					     sizeof(o->sessname)) < 0 ||
			    !ibnbd_clt_sessname_ok(val)) {
				pr_err("map_device: bad sessname '%s' (1..%d printable ASCII characters but '/')\n",
				       val, IBNBD_CLT_SESSNAME_MAX - 1);
				return -EINVAL;
			}
		} else if (!strcmp(tok, "path")) {
			if (o->npaths == IBNBD_CLT_MAX_PATHS) {
				pr_err("map_device: more than %d path fields\n",
				       IBNBD_CLT_MAX_PATHS);
				return -EINVAL;
			}
			if (ibtrs_clt_parse_path(val, &o->paths[o->npaths])) {
				pr_err("map_device: bad path '%s' ([src@]dst, IP addresses)\n",
				       val);
				return -EINVAL;
			}
			o->npaths++;
		} else if (!strcmp(tok, "device_path")) {
			if (!*val || strscpy(o->path, val, sizeof(o->path)) < 0) {
				pr_err("map_device: bad device_path '%s'\n",
				       val);
				return -EINVAL;
			}
		} else if (!strcmp(tok, "access_mode")) {
			if (ibnbd_access_mode_parse(val, &o->mode)) {
				pr_err("map_device: bad access_mode '%s' (ro, rw or migration)\n",
				       val);
				return -EINVAL;
			}
		} else {
			pr_err("map_device: unknown field '%s'\n", tok);
			return -EINVAL;
		}
	}
	if (!o->sessname[0]) {
		pr_err("map_device: sessname missing\n");
		return -EINVAL;
	}
	if (!o->npaths) {
		pr_err("map_device: path missing\n");
		return -EINVAL;
	}
	if (!o->path[0]) {
		pr_err("map_device: device_path missing\n");
		return -EINVAL;
	}
	return 0;
}
