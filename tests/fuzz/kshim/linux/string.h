/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kshim: the C library's string functions plus the kernel's strscpy(). */
#ifndef KSHIM_LINUX_STRING_H
#define KSHIM_LINUX_STRING_H

#include <errno.h>
#include <string.h>
#include <linux/types.h>

/*
 * strscpy() - as the kernel's: copy at most @size - 1 characters, always
 * terminate (when @size > 0); the length copied, or -E2BIG when @src did
 * not fit. Never reads @src past its NUL or its first @size bytes.
 */
static inline ssize_t strscpy(char *dst, const char *src, size_t size)
{
	size_t i;

	if (!size)
		return -E2BIG;
	for (i = 0; i < size; i++) {
		dst[i] = src[i];
		if (!src[i])
			return (ssize_t)i;
	}
	dst[size - 1] = '\0';
	return -E2BIG;
}

#endif
