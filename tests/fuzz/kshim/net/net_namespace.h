/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kshim: one network namespace, which has no devices. */
#ifndef KSHIM_NET_NET_NAMESPACE_H
#define KSHIM_NET_NET_NAMESPACE_H

struct net {
	int unused;
};

extern struct net init_net;

#endif
