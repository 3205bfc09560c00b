/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kshim: struct sockaddr_storage and AF_* from the C library. */
#ifndef KSHIM_LINUX_SOCKET_H
#define KSHIM_LINUX_SOCKET_H

#include <sys/socket.h>

#endif
