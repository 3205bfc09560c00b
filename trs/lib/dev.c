// SPDX-License-Identifier: GPL-2.0-or-later
/* dev.c - device + protection domain cache, refcounted, keyed by context. */
#include <stdlib.h>
#include <string.h>

#include "trs_lib.h"

/* One list per process; handles are single-threaded but several handles
 * may live in different threads, so the list is locked. */
#include <pthread.h>
static pthread_mutex_t trs_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct trs_dev *trs_dev_list;

struct trs_dev *trs_dev_get(struct ibv_context *verbs)
{
	struct trs_dev *dev;

	pthread_mutex_lock(&trs_dev_lock);
	for (dev = trs_dev_list; dev; dev = dev->next)
		if (dev->verbs == verbs) {
			dev->ref++;
			goto out_unlock;
		}
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		goto out_unlock;
	if (ibv_query_device(verbs, &dev->attr))
		goto out_free_dev;
	dev->pd = ibv_alloc_pd(verbs);
	if (!dev->pd)
		goto out_free_dev;
	dev->verbs = verbs;
	dev->ref = 1;
	dev->next = trs_dev_list;
	trs_dev_list = dev;
	goto out_unlock;

out_free_dev:
	free(dev);
	dev = NULL;
out_unlock:
	pthread_mutex_unlock(&trs_dev_lock);
	return dev;
}

void trs_dev_put(struct trs_dev *dev)
{
	struct trs_dev **pp;

	if (!dev)
		return;
	pthread_mutex_lock(&trs_dev_lock);
	if (--dev->ref == 0) {
		for (pp = &trs_dev_list; *pp; pp = &(*pp)->next)
			if (*pp == dev) {
				*pp = dev->next;
				break;
			}
		ibv_dealloc_pd(dev->pd);
		free(dev);
	}
	pthread_mutex_unlock(&trs_dev_lock);
}
