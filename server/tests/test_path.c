// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_path.c - device path resolution beneath the search root: normal
 * opens, and every escape attempt refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "srv.h"
#include "test.h"

static char root[256], outside[300];
static int root_fd = -1;

static void mkfile(const char *dir, const char *name, size_t size)
{
	char p[512];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, size)) {
		perror(p);
		exit(2);
	}
	close(fd);
}

static void setup(void)
{
	char p[512];

	snprintf(root, sizeof(root), "/tmp/ibnbd-path-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		exit(2);
	}
	snprintf(outside, sizeof(outside), "%s.outside", root);
	mkfile("/tmp", outside + 5, 4096);	/* /tmp/ibnbd-path-XXXXXX.outside */
	mkfile(root, "disk0", 1 << 20);
	snprintf(p, sizeof(p), "%s/sub", root);
	mkdir(p, 0700);
	mkfile(p, "disk1", 1 << 20);
	snprintf(p, sizeof(p), "%s/abs-out", root);
	if (symlink(outside, p))
		exit(2);
	snprintf(p, sizeof(p), "%s/rel-out", root);
	if (symlink("../", p))
		exit(2);
	snprintf(p, sizeof(p), "%s/rel-out2", root);
	if (symlink(outside + 5, p) && 0)	/* unused */
		exit(2);
	snprintf(p, sizeof(p), "%s/sub/up-in", root);
	if (symlink("../disk0", p))		/* stays inside: allowed */
		exit(2);
	snprintf(p, sizeof(p), "%s/sub/up-out", root);
	{
		char tgt[400];

		snprintf(tgt, sizeof(tgt), "../../%s", outside + 5);
		if (symlink(tgt, p))
			exit(2);
	}
	snprintf(p, sizeof(p), "%s/fifo", root);
	if (mkfifo(p, 0600))
		exit(2);
	snprintf(p, sizeof(p), "%s/null", root);
	if (symlink("/dev/null", p))
		exit(2);
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		exit(2);
}

static void cleanup(void)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", root, outside);
	if (system(cmd))
		fprintf(stderr, "cleanup failed\n");
}

static int try_open(const char *path, struct srv_open_result *r, const char **reason)
{
	int ret = srv_path_open(root_fd, root, path, O_RDWR, r, reason);

	if (!ret)
		close(r->fd);
	return ret;
}

static void rel_lexical(void)
{
	char rel[64];
	const char *why;

	T_EQ(srv_path_rel("/dev", "/dev/nullb0", rel, sizeof(rel), &why), 0);
	T_CHECK(!strcmp(rel, "nullb0"));
	T_EQ(srv_path_rel("/dev/", "/dev/nullb0", rel, sizeof(rel), &why), 0);
	T_CHECK(!strcmp(rel, "nullb0"));
	T_EQ(srv_path_rel("/dev", "nullb0", rel, sizeof(rel), &why), 0);
	T_CHECK(!strcmp(rel, "nullb0"));
	T_EQ(srv_path_rel("/dev", "//dev//disk/by-id/x", rel, sizeof(rel), &why), -EACCES);
	T_EQ(srv_path_rel("/dev", "/dev//disk/by-id/x", rel, sizeof(rel), &why), 0);
	T_CHECK(!strcmp(rel, "disk/by-id/x"));
	T_EQ(srv_path_rel("/", "/tmp/x", rel, sizeof(rel), &why), 0);
	T_CHECK(!strcmp(rel, "tmp/x"));
	/* Prefix that is not a path component. */
	T_EQ(srv_path_rel("/dev", "/devil/x", rel, sizeof(rel), &why), -EACCES);
	T_CHECK(why != NULL);
	T_EQ(srv_path_rel("/dev", "/etc/passwd", rel, sizeof(rel), &why), -EACCES);
	T_EQ(srv_path_rel("/dev", "/dev", rel, sizeof(rel), &why), -EINVAL);
	T_EQ(srv_path_rel("/dev", "/dev/", rel, sizeof(rel), &why), -EINVAL);
	T_EQ(srv_path_rel("/dev", "", rel, sizeof(rel), &why), -EINVAL);
	T_EQ(srv_path_rel("/dev", "0123456789012345678901234567890123456789012345678901234567890123456789",
			  rel, sizeof(rel), &why), -ENAMETOOLONG);
}

static void open_allowed(void)
{
	struct srv_open_result r;
	const char *why;
	char abs[512];

	T_EQ(try_open("disk0", &r, &why), 0);
	T_CHECK(!r.is_blk);
	T_EQ(try_open("sub/disk1", &r, &why), 0);
	T_EQ(try_open("sub/up-in", &r, &why), 0);	/* symlink staying inside */
	snprintf(abs, sizeof(abs), "%s/disk0", root);
	T_EQ(try_open(abs, &r, &why), 0);
	T_CHECK(strstr(r.resolved, "disk0") != NULL);
	T_EQ(try_open("sub/../disk0", &r, &why), 0);	/* .. staying inside */
}

static void open_escapes_refused(void)
{
	struct srv_open_result r;
	const char *why = NULL;
	char p[600];

	T_EQ(try_open("../etc/passwd", &r, &why), -EACCES);
	T_CHECK(why && strstr(why, "escapes"));
	T_EQ(try_open("sub/../../etc/passwd", &r, &why), -EACCES);
	T_EQ(try_open("abs-out", &r, &why), -EACCES);	/* absolute symlink */
	T_EQ(try_open("rel-out/etc/passwd", &r, &why), -EACCES);
	T_EQ(try_open("sub/up-out", &r, &why), -EACCES);
	T_EQ(try_open("null", &r, &why), -EACCES);	/* -> /dev/null, absolute */
	T_EQ(try_open("/etc/passwd", &r, &why), -EACCES);
	snprintf(p, sizeof(p), "%s/../%s", root, outside + 5);
	T_EQ(try_open(p, &r, &why), -EACCES);
	T_EQ(r.fd, -1);
}

static void open_wrong_types(void)
{
	struct srv_open_result r;
	const char *why = NULL;

	T_EQ(try_open("fifo", &r, &why), -EINVAL);	/* must not block */
	T_CHECK(why && strstr(why, "block device or regular file"));
	T_EQ(try_open("sub", &r, &why), -EINVAL);
	T_EQ(try_open("missing", &r, &why), -ENOENT);
	T_EQ(try_open("disk0/x", &r, &why), -ENOENT);
	T_EQ(try_open("", &r, &why), -EINVAL);
}

static void open_dev_root(void)
{
	struct srv_open_result r;
	const char *why = NULL;
	int fd = open("/dev", O_PATH | O_DIRECTORY);
	int ret;

	T_CHECK(fd >= 0);
	/* /dev/null is a character device: refused. */
	ret = srv_path_open(fd, "/dev", "/dev/null", O_RDONLY, &r, &why);
	close(fd);
	T_EQ(ret, -EINVAL);
}

int main(void)
{
	setup();
	T_RUN(rel_lexical);
	T_RUN(open_allowed);
	T_RUN(open_escapes_refused);
	T_RUN(open_wrong_types);
	T_RUN(open_dev_root);
	cleanup();
	T_EXIT();
}
