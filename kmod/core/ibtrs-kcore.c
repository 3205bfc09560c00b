// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibtrs-kcore.c - verbs plumbing shared by ibtrs-client and ibtrs-server
 * (ibtrs-kcore.h).
 */
#include <linux/slab.h>

#include "ibtrs-kcore.h"

int ibtrs_dma_buf_alloc(struct ib_device *dev, struct ibtrs_dma_buf *b,
			size_t len, enum dma_data_direction dir)
{
	b->buf = kzalloc(len, GFP_KERNEL);
	if (!b->buf)
		return -ENOMEM;
	b->dma = ib_dma_map_single(dev, b->buf, len, dir);
	if (ib_dma_mapping_error(dev, b->dma)) {
		kfree(b->buf);
		b->buf = NULL;
		return -ENOMEM;
	}
	b->len = len;
	b->dir = dir;
	return 0;
}

void ibtrs_dma_buf_free(struct ib_device *dev, struct ibtrs_dma_buf *b)
{
	if (!b->buf)
		return;
	ib_dma_unmap_single(dev, b->dma, b->len, b->dir);
	kfree(b->buf);
	b->buf = NULL;
}

int ibtrs_rc_qp_create(struct rdma_cm_id *id, struct ib_pd *pd,
		       struct ib_cq *cq, u32 sq, u32 rq, u32 send_sge,
		       void (*event_handler)(struct ib_event *, void *),
		       void *context, u32 *granted_sge)
{
	struct ib_device *dev = pd->device;
	struct ib_qp_init_attr attr = {};
	int err;

	attr.event_handler = event_handler;
	attr.qp_context = context;
	attr.send_cq = cq;
	attr.recv_cq = cq;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	/* +1 each: ib_drain_qp() posts a marker on both queues */
	attr.cap.max_send_wr = min_t(u32, sq, dev->attrs.max_qp_wr - 1) + 1;
	attr.cap.max_recv_wr = min_t(u32, rq, dev->attrs.max_qp_wr - 1) + 1;
	attr.cap.max_send_sge = min_t(u32, send_sge, dev->attrs.max_send_sge);
	attr.cap.max_recv_sge = 1;
	err = rdma_create_qp(id, pd, &attr);
	if (err)
		return err;
	if (granted_sge)
		*granted_sge = attr.cap.max_send_sge;
	return 0;
}

void ibtrs_qp_cq_destroy(struct rdma_cm_id *id, struct ib_qp **qp,
			 struct ib_cq **cq)
{
	if (*qp) {
		rdma_destroy_qp(id);
		*qp = NULL;
	}
	if (*cq) {
		ib_free_cq(*cq);
		*cq = NULL;
	}
}

int ibtrs_post_recv_one(struct ib_qp *qp, struct ib_pd *pd,
			struct ib_cqe *cqe, u64 dma, u32 len)
{
	struct ib_sge sge = {
		.addr = dma,
		.length = len,
		.lkey = pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	return ib_post_recv(qp, &wr, NULL);
}

int ibtrs_post_send_one(struct ib_qp *qp, struct ib_pd *pd,
			struct ib_cqe *cqe, u64 dma, u32 len)
{
	struct ib_sge sge = {
		.addr = dma,
		.length = len,
		.lkey = pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe = cqe,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = &sge,
		.num_sge = 1,
	};

	ib_dma_sync_single_for_device(pd->device, dma, len, DMA_TO_DEVICE);
	return ib_post_send(qp, &wr, NULL);
}
