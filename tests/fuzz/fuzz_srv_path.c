// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_srv_path.c - a client's device path (the dev_path of an OPEN) as
 * ibnbd-serverd turns it into a path relative to its search root before
 * openat2(RESOLVE_BENEATH) (srv_path_rel() of server/src/srv_path.c).
 *
 * Input: the size of the output buffer (2 bytes, mod 1024; the buffer is
 * exactly that big), the search root up to a NUL, the client's path (the
 * rest, up to a NUL), each an exactly sized heap string. Checks: 0 with
 * no reason, or -EINVAL, -EACCES or -ENAMETOOLONG with one; an accepted
 * path is non-empty, relative (no leading '/'), fits the buffer and is the
 * client's path with its root prefix and leading slashes removed, where
 * that prefix is the root itself ending at a '/' or at the end (not a
 * longer name starting with the same characters); a relative client path
 * only loses its leading slashes.
 */
#include "fuzz.h"
#include "srv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *reason = (const char *)1, *p;
	char *root, *path, *rel;
	size_t rellen, rlen;
	struct fz_in in;
	int ret;

	fz_in_init(&in, data, size);
	rellen = fz_u16(&in) % 1024;
	root = fz_field(&in);
	if (!root)
		root = fz_dup("/dev", sizeof("/dev"));
	path = fz_rest_str(&in);
	rel = fz_alloc(rellen);

	ret = srv_path_rel(root, path, rel, rellen, &reason);
	if (ret) {
		FZ_CHECK(ret == -EINVAL || ret == -EACCES ||
			 ret == -ENAMETOOLONG);
		FZ_CHECK(reason && reason != (const char *)1 && *reason);
		goto out;
	}
	FZ_CHECK(!reason);
	FZ_CHECK(strnlen(rel, rellen) < rellen);
	FZ_CHECK(rel[0] && rel[0] != '/');
	/* rel is path without its root prefix and the slashes after it */
	FZ_CHECK(strlen(rel) <= strlen(path));
	p = path + strlen(path) - strlen(rel);
	FZ_CHECK(!strcmp(p, rel));
	while (p > path && p[-1] == '/')
		p--;
	if (path[0] != '/') {
		FZ_CHECK(p == path);
		goto out;
	}
	rlen = strlen(root);
	while (rlen > 1 && root[rlen - 1] == '/')
		rlen--;
	if (rlen == 1 && root[0] == '/') {
		FZ_CHECK(p == path);
	} else {
		FZ_CHECK(!strncmp(path, root, rlen));
		FZ_CHECK(path[rlen] == '/' || !path[rlen]);
		FZ_CHECK(p == path + rlen);
	}
out:
	free(rel);
	free(path);
	free(root);
	return 0;
}
