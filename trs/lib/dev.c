// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dev.c - device + protection domain cache, refcounted, keyed by context;
 * device removal: kernel uevents and librdmacm's device list.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>

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

void trs_dev_hold(struct trs_dev *dev)
{
	pthread_mutex_lock(&trs_dev_lock);
	dev->ref++;
	pthread_mutex_unlock(&trs_dev_lock);
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
		if (ibv_dealloc_pd(dev->pd))
			trs_wrn("%s: protection domain still in use at release",
				ibv_get_device_name(dev->verbs->device));
		free(dev);
	}
	pthread_mutex_unlock(&trs_dev_lock);
}

/*
 * Device removal. librdmacm opens a verbs context on every device one of
 * its cm_ids uses and keeps it open after the last cm_id is gone; it closes
 * a removed device's context only once it has refreshed its device list and
 * no cm_id uses the device. Without uverbs disassociation (rxe) the kernel's
 * removal waits until every process has closed its contexts of the device.
 * So after releasing everything on a removed device, and whenever the kernel
 * announces that an RDMA device went away (possibly one this process holds
 * no cm_id on, only librdmacm's cached context), the library has librdmacm
 * refresh its list. rdma_get_devices() does that (and opens the contexts of
 * the devices that remain).
 */
static void trs_dev_sync_removed(void)
{
	struct ibv_context **list = rdma_get_devices(NULL);

	if (list)
		rdma_free_devices(list);
}

/* A non-blocking socket on the kernel's uevents, or -errno. */
static int trs_uevent_open(void)
{
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int fd, err;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    NETLINK_KOBJECT_UEVENT);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&nl, sizeof(nl))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/*
 * Drain the uevent socket @fd. Return: true when an RDMA device or its
 * uverbs node was removed (or events were lost), false otherwise.
 */
static bool trs_uevent_rdma_removed(int fd)
{
	struct sockaddr_nl from;
	socklen_t flen;
	char buf[4096];
	bool removed = false;
	ssize_t n;

	for (;;) {
		flen = sizeof(from);
		n = recvfrom(fd, buf, sizeof(buf) - 1, 0, (struct sockaddr *)&from,
			     &flen);
		if (n < 0) {
			if (errno == ENOBUFS) {		/* overflow: assume the worst */
				removed = true;
				continue;
			}
			if (errno == EINTR)
				continue;
			break;
		}
		if (from.nl_pid != 0)
			continue;			/* only the kernel's */
		buf[n] = 0;
		/* "remove@/devices/.../infiniband_verbs/uverbs1" */
		if (!strncmp(buf, "remove@", 7) && strstr(buf, "infiniband"))
			removed = true;
	}
	return removed;
}

static void trs_devwatch_event(struct trs_evsrc *src)
{
	struct trs_devwatch *w = trs_container_of(src, struct trs_devwatch, src);

	if (trs_uevent_rdma_removed(src->fd))
		w->sync = true;
}

/*
 * Optional: without uevents, a removed device that only librdmacm still
 * holds open is released at the next removal event on one of our cm_ids
 * (or, in a client, at a reconnect attempt).
 */
void trs_devwatch_open(struct trs_devwatch *w, int epfd)
{
	w->src.handler = trs_devwatch_event;
	w->src.fd = trs_uevent_open();
	if (w->src.fd < 0)
		trs_dbg("no kernel uevents: %s", strerror(-w->src.fd));
	else if (trs_epoll_add(epfd, &w->src))
		trs_devwatch_close(w);
}

void trs_devwatch_close(struct trs_devwatch *w)
{
	if (w->src.fd > 0)
		close(w->src.fd);
	w->src.fd = -1;
}

void trs_devwatch_poll(struct trs_devwatch *w)
{
	if (w->sync) {
		w->sync = false;
		trs_dev_sync_removed();
	}
}
