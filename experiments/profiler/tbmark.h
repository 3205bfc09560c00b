/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tbmark.h - measurement-window markers between a guest program and the
 * testbed's TCG profiler plugin (experiments/profiler/tbprof.c).
 *
 * A marker is one 7-byte x86-64 instruction, "nopl disp32(%rax)"
 * (0f 1f 80 + a 32-bit displacement), whose displacement is a magic value.
 * It is a no-op for the CPU: without the plugin (MTTCG, KVM, real hardware)
 * executing it costs nothing and changes nothing. The plugin recognises the
 * bytes at translation time and acts when the instruction executes:
 *
 *   TBMARK_START  open a measurement window: remember every counter
 *   TBMARK_STOP   close it: write instructions per translation block
 *                 executed since the matching START, as window N
 *                 (N = 0, 1, ... in the order the windows close)
 *   TBMARK_CONF   (re)read the NIC ranges file (nic=PATH, written by
 *                 build/profiler/tbnic, which executes this marker) and
 *                 retranslate all code with the new ranges
 *
 * Compilers never emit these displacements for a nop, so a marker cannot
 * occur by accident in other code.
 */
#ifndef TBMARK_H
#define TBMARK_H

#define TBMARK_OPCODE0	0x0f
#define TBMARK_OPCODE1	0x1f
#define TBMARK_MODRM	0x80
#define TBMARK_LEN	7
#define TBMARK_START	0x31534254u	/* "TBS1" little-endian */
#define TBMARK_STOP	0x30534254u	/* "TBS0" little-endian */
#define TBMARK_CONF	0x32534254u	/* "TBS2" little-endian */

#if defined(__x86_64__)
#define tbmark_start() \
	__asm__ __volatile__(".byte 0x0f, 0x1f, 0x80; .long 0x31534254" ::: "memory")
#define tbmark_stop() \
	__asm__ __volatile__(".byte 0x0f, 0x1f, 0x80; .long 0x30534254" ::: "memory")
#define tbmark_conf() \
	__asm__ __volatile__(".byte 0x0f, 0x1f, 0x80; .long 0x32534254" ::: "memory")
#else
#define tbmark_start() do { } while (0)
#define tbmark_stop() do { } while (0)
#define tbmark_conf() do { } while (0)
#endif

#endif /* TBMARK_H */
