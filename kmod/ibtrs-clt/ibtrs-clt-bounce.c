// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibtrs-clt-bounce.c - mr_mode bounce: a read (or a pulled write) goes
 * through a slot of the session's bounce pool, never through the caller's
 * pages. The slot of chunk id N is the pool's N-th, page aligned; it is
 * exposed exactly as frwr exposes a caller's buffer (a REG_MR of the slot's
 * pages from the connection's MR of the chunk id, the key ended as
 * inval_mode says), so the server can reach the pool only, never the
 * caller's memory, and a late write lands in a slot, not in a page the
 * block layer has handed on. The price is a copy: out of the slot when a
 * read ends, into it before a pulled write is posted.
 */
#include <linux/vmalloc.h>
#include <linux/scatterlist.h>

#include "ibtrs-clt-pri.h"

/*
 * The pool of @sess (being sized: @ios and max_io set; @queue_depth ids):
 * one slot of max_io bytes (whole pages) per chunk id, and one
 * scatterlist per slot.
 */
int ibtrs_clt_bounce_alloc(struct ibtrs_clt_sess *sess, u32 queue_depth)
{
	u32 i;

	sess->bounce_pages = DIV_ROUND_UP(sess->max_io, PAGE_SIZE);
	sess->bounce_stride = sess->bounce_pages * PAGE_SIZE;
	sess->bounce = vzalloc(array_size(queue_depth,
					  sess->bounce_stride));
	sess->bounce_sg = kvcalloc(array_size(queue_depth,
					      sess->bounce_pages),
				   sizeof(*sess->bounce_sg), GFP_KERNEL);
	if (!sess->bounce || !sess->bounce_sg) {
		ibtrs_clt_bounce_free(sess);
		return -ENOMEM;
	}
	for (i = 0; i < queue_depth; i++)
		sess->ios[i].bsg = sess->bounce_sg +
				   (size_t)i * sess->bounce_pages;
	return 0;
}

void ibtrs_clt_bounce_free(struct ibtrs_clt_sess *sess)
{
	vfree(sess->bounce);
	kvfree(sess->bounce_sg);
	sess->bounce = NULL;
	sess->bounce_sg = NULL;
}

static void *ibtrs_clt_bounce_slot(const struct ibtrs_clt_io *io)
{
	return io->sess->bounce + (size_t)io->id * io->sess->bounce_stride;
}

/*
 * The scatterlist of @io's slot for its @datalen bytes (page entries, the
 * last one short), to be mapped and registered in place of the caller's;
 * a pulled write's data is copied in first. Returns the entries.
 */
unsigned int ibtrs_clt_bounce_prep(struct ibtrs_clt_io *io,
				   struct ibtrs_clt_path *path)
{
	u8 *buf = ibtrs_clt_bounce_slot(io);
	u32 left = io->datalen, len;
	unsigned int n = 0;

	sg_init_table(io->bsg, DIV_ROUND_UP(left, PAGE_SIZE));
	while (left) {
		len = min_t(u32, left, PAGE_SIZE);
		sg_set_page(&io->bsg[n++], vmalloc_to_page(buf), len, 0);
		buf += len;
		left -= len;
	}
	if (io->dir == IBTRS_CLT_WRITE) {
		sg_copy_to_buffer(io->sg, io->sg_cnt,
				  ibtrs_clt_bounce_slot(io), io->datalen);
		this_cpu_add(path->stats->bounce_bytes, io->datalen);
	}
	io->bounced = true;
	return n;
}

/*
 * @io ends with @status (its slot unmapped): a successful read's data goes
 * from the slot to the caller's pages.
 */
void ibtrs_clt_bounce_end(struct ibtrs_clt_io *io, int status)
{
	io->bounced = false;
	if (status || io->dir != IBTRS_CLT_READ)
		return;
	sg_copy_from_buffer(io->sg, io->sg_cnt, ibtrs_clt_bounce_slot(io),
			    io->datalen);
	this_cpu_add(io->path->stats->bounce_bytes, io->datalen);
}
