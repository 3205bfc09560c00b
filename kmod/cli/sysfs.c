// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sysfs.c - reading and writing the ibnbd-client sysfs attributes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sysfs.h"

const char *sysfs_root(void)
{
	static char root[4096];
	const char *env;
	size_t n;

	if (root[0])
		return root;
	env = getenv("IBNBD_SYSFS_ROOT");
	if (!env || !*env)
		env = "/sys";
	snprintf(root, sizeof(root), "%s", env);
	n = strlen(root);
	while (n > 1 && root[n - 1] == '/')
		root[--n] = '\0';
	return root;
}

int sysfs_is_fake(void)
{
	const char *env = getenv("IBNBD_SYSFS_ROOT");

	return env && *env;
}

int sysfs_path(char *buf, size_t size, const char *rel)
{
	int n = snprintf(buf, size, "%s/%s", sysfs_root(), rel);

	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int sysfs_read(const char *rel, char *buf, size_t size)
{
	char path[4096];
	ssize_t r;
	size_t n = 0;
	int fd, e;

	if (sysfs_path(path, sizeof(path), rel))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (n + 1 < size) {
		r = read(fd, buf + n, size - 1 - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (!r)
			break;
		n += r;
	}
	close(fd);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return (int)n;
}

int sysfs_write(const char *rel, const char *s)
{
	char path[4096];
	size_t len = strlen(s);
	ssize_t r;
	int fd, e;

	if (sysfs_path(path, sizeof(path), rel))
		return -1;
	/* sysfs takes one write; O_TRUNC only matters for a fake tree */
	fd = open(path, O_WRONLY | O_CLOEXEC | (sysfs_is_fake() ? O_TRUNC : 0));
	if (fd < 0)
		return -1;
	r = write(fd, s, len);
	e = errno;
	if (close(fd) && r >= 0) {
		e = errno;
		r = -1;
	}
	if (r < 0) {
		errno = e;
		return -1;
	}
	if ((size_t)r != len) {
		errno = EIO;
		return -1;
	}
	return 0;
}

int sysfs_exists(const char *rel)
{
	char path[4096];
	struct stat st;

	if (sysfs_path(path, sizeof(path), rel))
		return 0;
	return !stat(path, &st);
}

static int dev_filter(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

int sysfs_dev_names(char ***names)
{
	struct dirent **ents;
	char path[4096];
	char **out;
	int i, n;

	*names = NULL;
	if (sysfs_path(path, sizeof(path), IBNBD_DEVS))
		return -1;
	n = scandir(path, &ents, dev_filter, versionsort);
	if (n < 0)
		return errno == ENOENT ? 0 : -1;
	out = calloc(n ? n : 1, sizeof(*out));
	if (!out) {
		for (i = 0; i < n; i++)
			free(ents[i]);
		free(ents);
		return -1;
	}
	for (i = 0; i < n; i++) {
		out[i] = strdup(ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	for (i = 0; i < n; i++) {
		if (!out[i]) {
			sysfs_free_names(out, n);
			errno = ENOMEM;
			return -1;
		}
	}
	*names = out;
	return n;
}

void sysfs_free_names(char **names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
