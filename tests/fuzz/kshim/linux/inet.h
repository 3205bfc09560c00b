/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kshim: the kernel's address-length constants (which differ from the C
 * library's: INET6_ADDRSTRLEN is 48 in the kernel, 46 in glibc) and
 * inet_pton_with_scope(), implemented in kshim.c on the C library's
 * inet_pton() with the kernel's length limits.
 */
#ifndef KSHIM_LINUX_INET_H
#define KSHIM_LINUX_INET_H

#include <linux/socket.h>

#undef INET_ADDRSTRLEN
#undef INET6_ADDRSTRLEN
#define INET_ADDRSTRLEN		16
#define INET6_ADDRSTRLEN	48

struct net;

int inet_pton_with_scope(struct net *net, unsigned short af, const char *src,
			 const char *port, struct sockaddr_storage *addr);

#endif
