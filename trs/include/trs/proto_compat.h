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

/*
 * Byte order without <endian.h> (whose htole16() & co. need _DEFAULT_SOURCE
 * from the includer): the compiler's own byte-order macro and builtins, so
 * a strict -std=c11 program can include the wire headers. The shims carry a
 * trs_ prefix; the kernel names are aliases defined only when the includer
 * (fio's os.h, for one) has not defined its own.
 */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define __trs_le16(x)	((__u16)(x))
#define __trs_le32(x)	((__u32)(x))
#define __trs_le64(x)	((__u64)(x))
#elif __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define __trs_le16(x)	__builtin_bswap16(x)
#define __trs_le32(x)	__builtin_bswap32(x)
#define __trs_le64(x)	__builtin_bswap64(x)
#else
#error "proto_compat.h: unknown byte order"
#endif

static inline __le16 trs_cpu_to_le16(__u16 x) { return (__force __le16)__trs_le16(x); }
static inline __le32 trs_cpu_to_le32(__u32 x) { return (__force __le32)__trs_le32(x); }
static inline __le64 trs_cpu_to_le64(__u64 x) { return (__force __le64)__trs_le64(x); }
static inline __u16 trs_le16_to_cpu(__le16 x) { return __trs_le16((__force __u16)x); }
static inline __u32 trs_le32_to_cpu(__le32 x) { return __trs_le32((__force __u32)x); }
static inline __u64 trs_le64_to_cpu(__le64 x) { return __trs_le64((__force __u64)x); }

#ifndef cpu_to_le16
#define cpu_to_le16(x)	trs_cpu_to_le16(x)
#endif
#ifndef cpu_to_le32
#define cpu_to_le32(x)	trs_cpu_to_le32(x)
#endif
#ifndef cpu_to_le64
#define cpu_to_le64(x)	trs_cpu_to_le64(x)
#endif
#ifndef le16_to_cpu
#define le16_to_cpu(x)	trs_le16_to_cpu(x)
#endif
#ifndef le32_to_cpu
#define le32_to_cpu(x)	trs_le32_to_cpu(x)
#endif
#ifndef le64_to_cpu
#define le64_to_cpu(x)	trs_le64_to_cpu(x)
#endif
#endif /* __KERNEL__ */

/*
 * Little-endian fields at any address (a received buffer, a message type in
 * front of a payload): byte by byte, the same in both worlds, no alignment
 * or aliasing assumption (kernel: get_unaligned_le16() & co.).
 */
static inline __u16 trs_get_unaligned_le16(const void *p)
{
	const __u8 *b = (const __u8 *)p;

	return (__u16)(b[0] | b[1] << 8);
}

static inline __u32 trs_get_unaligned_le32(const void *p)
{
	const __u8 *b = (const __u8 *)p;

	return (__u32)b[0] | (__u32)b[1] << 8 | (__u32)b[2] << 16 |
	       (__u32)b[3] << 24;
}

/* Pin a wire struct's size and (where it matters) a field's offset. */
#define TRS_ASSERT_SIZE(type, size) \
	TRS_STATIC_ASSERT(sizeof(type) == (size), #type " must be " #size " bytes")
#define TRS_ASSERT_OFFSET(type, field, off) \
	TRS_STATIC_ASSERT(offsetof(type, field) == (off), \
			  #type "." #field " must be at offset " #off)

#endif /* TRS_PROTO_COMPAT_H */
