/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kshim: ibtrs-clt.h names struct scatterlist in prototypes only. */
#ifndef KSHIM_LINUX_SCATTERLIST_H
#define KSHIM_LINUX_SCATTERLIST_H

struct scatterlist;

#endif
