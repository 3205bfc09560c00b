/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sysfs.h - file helpers of the ibnbd tool: every path is taken relative to
 * the sysfs root (/sys, or $IBNBD_SYSFS_ROOT for tests against a fake tree).
 */
#ifndef IBNBD_CLI_SYSFS_H
#define IBNBD_CLI_SYSFS_H

#include <stddef.h>

#define IBNBD_CTL	"class/ibnbd-client/ctl"
#define IBNBD_DEVS	IBNBD_CTL "/devices"

/* The sysfs root, without a trailing slash. */
const char *sysfs_root(void);
/* 1 when IBNBD_SYSFS_ROOT redirects the tool to a fake tree. */
int sysfs_is_fake(void);
/* Builds "<root>/<rel>" into @buf; -1 if it does not fit. */
int sysfs_path(char *buf, size_t size, const char *rel);
/*
 * Reads a whole attribute into @buf (NUL-terminated, trailing newline
 * removed); returns its length or -1 with errno set.
 */
int sysfs_read(const char *rel, char *buf, size_t size);
/* Writes @s to an attribute in one write(); 0 or -1 with errno set. */
int sysfs_write(const char *rel, const char *s);
/* 1 if "<root>/<rel>" exists. */
int sysfs_exists(const char *rel);
/*
 * The names of the mapped devices (entries of IBNBD_DEVS), sorted in
 * version order; returns their number (0 when the folder is missing) or
 * -1. Free with sysfs_free_names().
 */
int sysfs_dev_names(char ***names);
void sysfs_free_names(char **names, int n);

#endif
