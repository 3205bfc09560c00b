/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tests/fuzz/kshim - just enough of the kernel's headers for the host
 * fuzzer to build kernel sources that use strings only (kmod/ibnbd-clt/
 * ibnbd-clt-parse.c, kmod/ibtrs-clt/ibtrs-clt-addr.c) unchanged. The uapi
 * <linux/types.h> plus the kernel's short integer names.
 */
#ifndef KSHIM_LINUX_TYPES_H
#define KSHIM_LINUX_TYPES_H

#include_next <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;

#endif
