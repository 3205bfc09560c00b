/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proto_compat.h - the one place where the shared wire headers branch on
 * __KERNEL__. Everything the wire headers need beyond <linux/types.h>:
 * byte-order conversion, compile-time asserts, offsetof, inline helpers.
 *
 * Wire headers include only this file and <linux/types.h>; they compile
 * unchanged in the kernel modules (kmod/) and in userspace (trs/, server/,
 * fio-engine/). Under sparse (__CHECKER__) __le16/32/64 are __bitwise, so a
 * missing conversion is a warning on both sides.
 */
#ifndef TRS_PROTO_COMPAT_H
#define TRS_PROTO_COMPAT_H

#include <linux/types.h>

#ifdef __KERNEL__
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <linux/errno.h>
#include <asm/byteorder.h>

#define TRS_STATIC_ASSERT(cond, msg)	static_assert(cond, msg)
#else /* userspace */
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdbool.h>

#ifdef __CHECKER__
#define __trs_force	__attribute__((force))
#else
#define __trs_force
#endif
#ifndef __force
#define __force		__trs_force
#endif

#define TRS_STATIC_ASSERT(cond, msg)	_Static_assert(cond, msg)

/* The kernel's pseudo-keyword (<linux/compiler_attributes.h>). */
#ifndef fallthrough
#define fallthrough	__attribute__((__fallthrough__))
#endif

static inline __le16 cpu_to_le16(__u16 x) { return (__force __le16)htole16(x); }
static inline __le32 cpu_to_le32(__u32 x) { return (__force __le32)htole32(x); }
static inline __le64 cpu_to_le64(__u64 x) { return (__force __le64)htole64(x); }
static inline __u16 le16_to_cpu(__le16 x) { return le16toh((__force __u16)x); }
static inline __u32 le32_to_cpu(__le32 x) { return le32toh((__force __u32)x); }
static inline __u64 le64_to_cpu(__le64 x) { return le64toh((__force __u64)x); }
#endif /* __KERNEL__ */

/* Pin a wire struct's size and (where it matters) a field's offset. */
#define TRS_ASSERT_SIZE(type, size) \
	TRS_STATIC_ASSERT(sizeof(type) == (size), #type " must be " #size " bytes")
#define TRS_ASSERT_OFFSET(type, field, off) \
	TRS_STATIC_ASSERT(offsetof(type, field) == (off), \
			  #type "." #field " must be at offset " #off)

#endif /* TRS_PROTO_COMPAT_H */
