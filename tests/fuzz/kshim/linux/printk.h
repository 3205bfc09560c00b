/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kshim: pr_err() and friends format into a buffer and drop it, so that
 * the arguments are read (AddressSanitizer sees a %s past its buffer)
 * without the fuzzer's output filling with messages.
 */
#ifndef KSHIM_LINUX_PRINTK_H
#define KSHIM_LINUX_PRINTK_H

#ifndef pr_fmt
#define pr_fmt(fmt) fmt
#endif

int kshim_printk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define pr_err(fmt, ...)	kshim_printk(pr_fmt(fmt), ##__VA_ARGS__)
#define pr_warn(fmt, ...)	kshim_printk(pr_fmt(fmt), ##__VA_ARGS__)
#define pr_info(fmt, ...)	kshim_printk(pr_fmt(fmt), ##__VA_ARGS__)

#endif
