// SPDX-License-Identifier: GPL-2.0
/*
 * callsplit-nic.c - the "NIC" half of the caller-attribution test program
 * (callsplit.c): a shared library whose file a user rule names "nic".
 * nic_entry() calls the program's shared helper through a pointer and
 * libc's memcpy through the PLT, as rxe calls memcpy and the allocators.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

uint64_t nic_entry(uint64_t (*helper)(uint64_t), uint64_t n, void *dst, const void *src,
		   size_t len)
{
	uint64_t r = helper(n);

	memcpy(dst, src, len);
	return r + ((unsigned char *)dst)[len - 1];
}
