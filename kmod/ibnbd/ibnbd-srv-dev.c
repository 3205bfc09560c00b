// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibnbd-srv-dev.c - which block device a client names (beneath the search
 * path only) and the registry of backing devices across sessions, for the
 * access modes: any number of "ro" openers, one "rw" writer, or up to two
 * writers with "migration". A writer closed with IO in flight keeps its
 * claim until that IO is done (drain_begin/drain_end).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/namei.h>
#include <linux/dcache.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "ibnbd-srv.h"

/* the registry list and every entry's counters */
DEFINE_MUTEX(ibnbd_srv_devs_mutex);
static LIST_HEAD(ibnbd_srv_devs);

/**
 * ibnbd_srv_resolve() - the block device a client names.
 * @root: the search path (a directory).
 * @name: "nullb0" (relative to @root) or "/dev/nullb0" (absolute).
 * @devt: the device number.
 * @resolved: the resolved path, for the log.
 * @len: bytes at @resolved.
 * @reason: why the name was refused.
 *
 * The name is looked up once, symbolic links followed; the result must lie
 * beneath @root (path_is_under(): ".." or a link leading out is refused)
 * and be a block device. The device is opened by number afterwards, so a
 * rename after the check cannot redirect the open.
 *
 * Return: 0, or -errno with *reason set. Context: process, may sleep.
 */
int ibnbd_srv_resolve(const char *root, const char *name, dev_t *devt,
		      char *resolved, size_t len, const char **reason)
{
	struct path root_path, p;
	struct inode *inode;
	char *full, *s;
	int ret;

	if (name[0] == '/')
		full = kstrdup(name, GFP_KERNEL);
	else
		full = kasprintf(GFP_KERNEL, "%s/%s", root, name);
	if (!full) {
		*reason = "out of memory";
		return -ENOMEM;
	}
	ret = kern_path(root, LOOKUP_FOLLOW | LOOKUP_DIRECTORY, &root_path);
	if (ret) {
		*reason = "the server's dev_search_path does not exist";
		goto out_free_full;
	}
	ret = kern_path(full, LOOKUP_FOLLOW, &p);
	if (ret) {
		*reason = "no such device";
		goto out_put_root;
	}
	if (!path_is_under(&p, &root_path)) {
		ret = -EACCES;
		*reason = "path escapes the search root";
		goto out_put_path;
	}
	inode = d_backing_inode(p.dentry);
	if (!S_ISBLK(inode->i_mode)) {
		ret = -ENOTBLK;
		*reason = "not a block device";
		goto out_put_path;
	}
	*devt = inode->i_rdev;
	s = d_path(&p, resolved, len);
	if (IS_ERR(s))
		strscpy(resolved, full, len);
	else
		memmove(resolved, s, strlen(s) + 1);
	ret = 0;
out_put_path:
	path_put(&p);
out_put_root:
	path_put(&root_path);
out_free_full:
	kfree(full);
	return ret;
}

/**
 * ibnbd_srv_dev_get() - admit an opener to a device.
 * @devt: the device.
 * @mode: &enum ibnbd_access_mode of the opener.
 * @out: the device's registry entry.
 * @reason: why the opener was refused.
 *
 * Return: 0 and *out (a registry entry), or -errno with *reason set.
 */
int ibnbd_srv_dev_get(dev_t devt, unsigned int mode,
		      struct ibnbd_srv_dev **out, const char **reason)
{
	struct ibnbd_srv_dev *d;
	int ret;

	mutex_lock(&ibnbd_srv_devs_mutex);
	list_for_each_entry(d, &ibnbd_srv_devs, link)
		if (d->devt == devt)
			goto found;
	d = NULL;
found:
	ret = ibnbd_access_check(mode, d ? d->writers : 0);
	if (ret == -EBUSY && d->draining) {
		*reason = "device's previous writer closed, its IO still in flight; retry";
		goto out_unlock;
	}
	if (ret == -EBUSY) {
		*reason = mode == IBNBD_ACCESS_RW ?
			"device already opened for writing (rw) by another session" :
			"device already has two writers (migration)";
		goto out_unlock;
	}
	if (ret) {
		*reason = "unknown access mode";
		goto out_unlock;
	}
	if (!d) {
		d = kzalloc(sizeof(*d), GFP_KERNEL);
		if (!d) {
			*reason = "out of memory";
			ret = -ENOMEM;
			goto out_unlock;
		}
		d->devt = devt;
		list_add(&d->link, &ibnbd_srv_devs);
	}
	d->openers++;
	if (ibnbd_access_is_writer(mode))
		d->writers++;
	*out = d;
out_unlock:
	mutex_unlock(&ibnbd_srv_devs_mutex);
	return ret;
}

void ibnbd_srv_dev_put(struct ibnbd_srv_dev *d, unsigned int mode)
{
	mutex_lock(&ibnbd_srv_devs_mutex);
	if (ibnbd_access_is_writer(mode) && !WARN_ON(!d->writers))
		d->writers--;
	if (!--d->openers) {
		list_del(&d->link);
		kfree(d);
	}
	mutex_unlock(&ibnbd_srv_devs_mutex);
}

void ibnbd_srv_dev_drain_begin(struct ibnbd_srv_dev *d)
{
	mutex_lock(&ibnbd_srv_devs_mutex);
	d->draining++;
	mutex_unlock(&ibnbd_srv_devs_mutex);
}

void ibnbd_srv_dev_drain_end(struct ibnbd_srv_dev *d)
{
	mutex_lock(&ibnbd_srv_devs_mutex);
	if (!WARN_ON(!d->draining))
		d->draining--;
	mutex_unlock(&ibnbd_srv_devs_mutex);
}
