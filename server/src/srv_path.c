// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * srv_path.c - resolve a client's device path beneath the search root.
 *
 * The client names a device ("/dev/nullb0" or "nullb0"); the server opens it
 * with openat2(root_fd, rel, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), so
 * "..", absolute symlinks and relative symlinks that climb out of the root
 * are refused by the kernel (EXDEV), race-free. Only block devices and
 * regular files are served: character devices, FIFOs, sockets and
 * directories are refused before they are opened for IO.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "srv.h"

static int sys_openat2(int dfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (unsigned long long)flags,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	long r = syscall(SYS_openat2, dfd, path, &how, sizeof(how));

	return r < 0 ? -errno : (int)r;
}

int srv_path_rel(const char *root, const char *path, char *rel, size_t rellen,
		 const char **reason)
{
	size_t rlen;
	const char *p = path;

	*reason = NULL;
	if (!path || !*path) {
		*reason = "empty device path";
		return -EINVAL;
	}
	if (path[0] == '/') {
		rlen = strlen(root);
		while (rlen > 1 && root[rlen - 1] == '/')
			rlen--;
		if (rlen == 1 && root[0] == '/') {
			p = path;
		} else if (!strncmp(path, root, rlen) &&
			   (path[rlen] == '/' || path[rlen] == 0)) {
			p = path + rlen;
		} else {
			*reason = "absolute path outside the search root";
			return -EACCES;
		}
	}
	while (*p == '/')
		p++;
	if (!*p) {
		*reason = "path names the search root itself";
		return -EINVAL;
	}
	if (strlen(p) >= rellen) {
		*reason = "device path too long";
		return -ENAMETOOLONG;
	}
	strcpy(rel, p);
	return 0;
}

int srv_path_open(int root_fd, const char *root, const char *path, int flags,
		  struct srv_open_result *res, const char **reason)
{
	char rel[512];
	struct stat st, st2;
	int fd, ret;

	memset(res, 0, sizeof(*res));
	res->fd = -1;
	ret = srv_path_rel(root, path, rel, sizeof(rel), reason);
	if (ret)
		return ret;

	/* Look first (O_PATH opens nothing: no FIFO blocking, no side effects). */
	fd = sys_openat2(root_fd, rel, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		switch (fd) {
		case -ENOENT:
		case -ENOTDIR:
			*reason = "no such device under the search root";
			return -ENOENT;
		case -EXDEV:
		case -ELOOP:
			*reason = "path escapes the search root";
			return -EACCES;
		case -ENOSYS:
			*reason = "kernel lacks openat2 (needs Linux >= 5.6)";
			return -ENOSYS;
		default:
			*reason = "cannot resolve device path";
			return fd;
		}
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		close(fd);
		*reason = "cannot stat device";
		return ret;
	}
	close(fd);
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
		*reason = "not a block device or regular file";
		return -EINVAL;
	}

	/* Now open for IO, still beneath the root, and check it is the same. */
	fd = sys_openat2(root_fd, rel, flags | O_DIRECT | O_CLOEXEC);
	if (fd == -EINVAL && S_ISREG(st.st_mode)) {
		/* e.g. tmpfs before Linux 6.6 has no O_DIRECT */
		fd = sys_openat2(root_fd, rel, flags | O_CLOEXEC);
		res->buffered = fd >= 0;
	}
	if (fd < 0) {
		switch (fd) {
		case -EACCES:
		case -EPERM:
		case -EROFS:
			*reason = "permission denied opening device";
			return fd;
		case -EXDEV:
		case -ELOOP:
			*reason = "path escapes the search root";
			return -EACCES;
		case -EBUSY:
			*reason = "device busy (exclusively opened)";
			return fd;
		default:
			*reason = "cannot open device";
			return fd;
		}
	}
	if (fstat(fd, &st2) || st2.st_dev != st.st_dev ||
	    st2.st_ino != st.st_ino || (st2.st_mode & S_IFMT) != (st.st_mode & S_IFMT)) {
		close(fd);
		*reason = "device changed while opening";
		return -EAGAIN;
	}
	res->fd = fd;
	res->is_blk = S_ISBLK(st.st_mode);
	res->st_dev = st.st_dev;
	res->st_ino = st.st_ino;
	res->st_rdev = st.st_rdev;
	snprintf(res->resolved, sizeof(res->resolved), "%s/%s",
		 strcmp(root, "/") ? root : "", rel);
	return 0;
}
