/* SPDX-License-Identifier: GPL-2.0-or-later */
/* kshim: no modules on the host. */
#ifndef KSHIM_LINUX_MODULE_H
#define KSHIM_LINUX_MODULE_H

#include <linux/printk.h>

#define EXPORT_SYMBOL(sym)
#define EXPORT_SYMBOL_GPL(sym)

#endif
