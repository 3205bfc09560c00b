/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ibtrs-kcore.h - verbs plumbing that the kernel client and server
 * transports share: DMA-mapped message buffers, an RC QP on an RDMA CM id
 * with room for ib_drain_qp(), and one-SGE receive and send posts.
 * Compiled into each module from kmod/core/ (as trs/common/ is), never
 * exported: nothing here knows a session or a path.
 */
#ifndef IBTRS_KCORE_H
#define IBTRS_KCORE_H

#include <linux/dma-direction.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

/**
 * struct ibtrs_dma_buf - a kmalloc'ed buffer mapped for one device.
 * @buf: CPU address, NULL when not allocated.
 * @dma: its DMA address on the device it was mapped for.
 * @len: bytes.
 * @dir: DMA_TO_DEVICE (messages sent) or DMA_FROM_DEVICE (receives).
 */
struct ibtrs_dma_buf {
	void *buf;
	u64 dma;
	size_t len;
	enum dma_data_direction dir;
};

int ibtrs_dma_buf_alloc(struct ib_device *dev, struct ibtrs_dma_buf *b,
			size_t len, enum dma_data_direction dir);
void ibtrs_dma_buf_free(struct ib_device *dev, struct ibtrs_dma_buf *b);

/**
 * ibtrs_rc_qp_create() - an RC QP on @id with one CQ for both queues.
 * @sq: send work requests the user needs; @rq: receive work requests.
 *	Each is capped at the device's limit minus one, and one more of each
 *	is reserved for ib_drain_qp()'s markers.
 * @send_sge: send SGEs wanted (capped at the device's); the QP gets what
 *	the device granted, read it from @granted_sge (may be NULL).
 * Return: 0 and id->qp set, or a negative errno.
 */
int ibtrs_rc_qp_create(struct rdma_cm_id *id, struct ib_pd *pd,
		       struct ib_cq *cq, u32 sq, u32 rq, u32 send_sge,
		       void (*event_handler)(struct ib_event *, void *),
		       void *context, u32 *granted_sge);

/*
 * Undo ibtrs_rc_qp_create() and the CQ it was given: the QP first (the CQ
 * must outlive it); NULLs both, so it can run on a half-built connection.
 */
void ibtrs_qp_cq_destroy(struct rdma_cm_id *id, struct ib_qp **qp,
			 struct ib_cq **cq);

/**
 * struct ibtrs_rx_chain - receives consumed and not re-posted yet, linked
 * through their work requests' @next, so that one ib_post_recv() re-posts
 * a batch. Touched by one context only (the CQ's).
 * @first: head of the chain, NULL when empty.
 * @last: its tail.
 * @nr: receives in the chain.
 */
struct ibtrs_rx_chain {
	struct ib_recv_wr *first;
	struct ib_recv_wr *last;
	int nr;
};

/* Append @wr; true when the chain reached @batch and is due to be posted. */
static inline bool ibtrs_rx_chain_add(struct ibtrs_rx_chain *c,
				      struct ib_recv_wr *wr, int batch)
{
	wr->next = NULL;
	if (c->last)
		c->last->next = wr;
	else
		c->first = wr;
	c->last = wr;
	return ++c->nr >= batch;
}

/* The whole chain (NULL if empty), leaving it empty. */
static inline struct ib_recv_wr *ibtrs_rx_chain_take(struct ibtrs_rx_chain *c)
{
	struct ib_recv_wr *first = c->first;

	c->first = NULL;
	c->last = NULL;
	c->nr = 0;
	return first;
}

/* One receive of @len bytes at @dma (local DMA lkey of @pd). */
int ibtrs_post_recv_one(struct ib_qp *qp, struct ib_pd *pd,
			struct ib_cqe *cqe, u64 dma, u32 len);
/* One signaled SEND of @len bytes at @dma, synced for the device first. */
int ibtrs_post_send_one(struct ib_qp *qp, struct ib_pd *pd,
			struct ib_cqe *cqe, u64 dma, u32 len);

#endif /* IBTRS_KCORE_H */
