// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibtrs-srv-rekey.c - chunk_mode rekey (trs/PROTOCOL.md 5) in the kernel
 * server: every chunk of a path is reachable only through a fast-register
 * MR of its own, over exactly its slot, at the address the static pool
 * would give it (pool_addr + id * slot_size). After each IO the chunk's MR
 * is invalidated and registered again with the key's low byte incremented
 * (ib_inc_rkey()), chained in front of the IO's answer on the same send
 * queue: the key the IO used is dead before its client learns that the IO
 * ended, and the client follows the same rule to know the next key.
 * Linux 6.1 offers no memory windows to kernel ULPs, so where the library's
 * server re-binds a type-1 window (one WR) this server needs two
 * (LOCAL_INV + REG_MR), both unsignaled. The pool's own MR keeps only local
 * access: the lkey of read data and of pulled writes' RDMA READs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/scatterlist.h>

#include "ibtrs-srv-pri.h"

static void ibtrs_srv_rekey_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ibtrs_srv_path *path =
		container_of(wc->wr_cqe, struct ibtrs_srv_path, rekey_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS))
		ibtrs_srv_wr_error(path, wc, "chunk re-key");
}

/*
 * Map chunk @id's slot into @mr: its pieces in the pool's blocks (each
 * block is contiguous for the device, the slot may straddle blocks).
 */
static int ibtrs_srv_rekey_map(struct ibtrs_srv_path *path, struct ib_mr *mr,
			       u32 id, struct scatterlist *sgl,
			       unsigned int max_ents)
{
	struct ibtrs_srv_sess *sess = path->sess;
	size_t bsize = PAGE_SIZE << sess->order;
	size_t pos = (size_t)id * sess->ctx->slot_size;
	size_t end = pos + sess->ctx->slot_size;
	unsigned int n = 0;

	sg_init_table(sgl, max_ents);
	while (pos < end) {
		size_t b = pos / bsize, off = pos % bsize;
		size_t len = min(end - pos, bsize - off);

		if (n >= max_ents || b >= sess->nblocks)
			return -EINVAL;
		sg_dma_address(&sgl[n]) = path->blk_dma[b] + off;
		sg_dma_len(&sgl[n]) = len;
		n++;
		pos += len;
	}
	sg_mark_end(&sgl[n - 1]);
	if (ib_map_mr_sg(mr, sgl, n, NULL, PAGE_SIZE) != n)
		return -EINVAL;
	/*
	 * The wire addresses chunk @id where the pool MR has it; slots are
	 * page multiples, so the page offset is unchanged (0).
	 */
	mr->iova = path->mr->iova + (u64)id * sess->ctx->slot_size;
	return 0;
}

/* One MR per chunk, mapped over its slot (registered at the join). */
int ibtrs_srv_rekey_alloc(struct ibtrs_srv_path *path)
{
	struct ibtrs_srv_sess *sess = path->sess;
	u32 slot = sess->ctx->slot_size;
	unsigned int pages = DIV_ROUND_UP(slot, PAGE_SIZE);
	unsigned int ents = slot / (PAGE_SIZE << sess->order) + 2;
	struct scatterlist *sgl;
	int err = 0;
	u32 i;

	path->rekey_cqe.done = ibtrs_srv_rekey_done;
	path->chunk_mr = kcalloc(sess->queue_depth, sizeof(*path->chunk_mr),
				 GFP_KERNEL);
	sgl = kcalloc(ents, sizeof(*sgl), GFP_KERNEL);
	if (!path->chunk_mr || !sgl) {
		err = -ENOMEM;
		goto out_free_sgl;
	}
	for (i = 0; i < sess->queue_depth; i++) {
		struct ib_mr *mr = ib_alloc_mr(path->pd, IB_MR_TYPE_MEM_REG,
					       pages);

		if (IS_ERR(mr)) {
			err = PTR_ERR(mr);
			goto out_free_sgl;
		}
		path->chunk_mr[i] = mr;
		err = ibtrs_srv_rekey_map(path, mr, i, sgl, ents);
		if (err)
			goto out_free_sgl;
	}
out_free_sgl:
	kfree(sgl);
	return err;	/* the caller's unwinding frees what was made */
}

/* Before the pool MR goes (the path's QPs are gone). */
void ibtrs_srv_rekey_free(struct ibtrs_srv_path *path)
{
	u32 i;

	if (!path->chunk_mr)
		return;
	for (i = 0; i < path->sess->queue_depth; i++)
		if (path->chunk_mr[i])
			ib_dereg_mr(path->chunk_mr[i]);
	kfree(path->chunk_mr);
	path->chunk_mr = NULL;
	ibtrs_dma_buf_free(path->dev, &path->keys_buf);
}

static void ibtrs_srv_rekey_reg_wr(struct ib_reg_wr *wr, struct ib_mr *mr,
				   struct ibtrs_srv_path *path,
				   struct ib_send_wr *next)
{
	wr->wr.next = next;
	wr->wr.wr_cqe = &path->rekey_cqe;
	wr->wr.opcode = IB_WR_REG_MR;
	wr->wr.send_flags = 0;
	wr->mr = mr;
	wr->key = mr->rkey;
	wr->access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
}

/*
 * The join's work requests in front of @next (the pool's registration and
 * INFO_RSP): every chunk's first registration, then the KEYS messages
 * (unsignaled: INFO_RSP's completion retires them). The WRs are in @regs
 * (queue_depth of them, the caller's, until posted) and @sends. Returns
 * the first WR, or an ERR_PTR.
 */
struct ib_send_wr *ibtrs_srv_rekey_join(struct ibtrs_srv_path *path,
					struct ibtrs_srv_con *con,
					struct ib_reg_wr *regs,
					struct ib_send_wr *sends,
					struct ib_sge *sges,
					struct ib_send_wr *next)
{
	u32 qd = path->sess->queue_depth, first, n, i, k;
	u32 keys[TRS_KEYS_PER_MSG];
	struct ib_send_wr *tail = next;
	int err;

	if (!path->keys_buf.buf) {
		err = ibtrs_dma_buf_alloc(path->dev, &path->keys_buf,
					  ibtrs_srv_rekey_nmsgs(qd) *
					  sizeof(struct trs_msg_keys),
					  DMA_TO_DEVICE);
		if (err)
			return ERR_PTR(err);
	}
	/* the KEYS messages, last first, so that each points to the next */
	for (k = ibtrs_srv_rekey_nmsgs(qd); k-- > 0;) {
		struct trs_msg_keys *m = (struct trs_msg_keys *)path->keys_buf.buf + k;

		first = k * TRS_KEYS_PER_MSG;
		n = min_t(u32, qd - first, TRS_KEYS_PER_MSG);
		for (i = 0; i < n; i++)
			keys[i] = path->chunk_mr[first + i]->rkey;
		sges[k].addr = path->keys_buf.dma + (u64)k * sizeof(*m);
		sges[k].length = trs_keys_encode(m, first, n, keys);
		sges[k].lkey = path->pd->local_dma_lkey;
		sends[k].next = tail;
		sends[k].wr_cqe = &con->send_cqe;
		sends[k].opcode = IB_WR_SEND;
		sends[k].send_flags = 0;
		sends[k].sg_list = &sges[k];
		sends[k].num_sge = 1;
		tail = &sends[k];
	}
	ib_dma_sync_single_for_device(path->dev, path->keys_buf.dma,
				      path->keys_buf.len, DMA_TO_DEVICE);
	for (i = qd; i-- > 0;) {
		ibtrs_srv_rekey_reg_wr(&regs[i], path->chunk_mr[i], path, tail);
		tail = &regs[i].wr;
	}
	return tail;
}

/*
 * The re-key of @op's chunk on @path in front of @next (its answer, or a
 * read's data write): LOCAL_INV of the key the IO used, REG_MR with the
 * next. In an RCU read section that saw @path open; one answer of a chunk
 * at a time, so @op's WRs and the chunk's MR are ours.
 */
struct ib_send_wr *ibtrs_srv_rekey_wrs(struct ibtrs_srv_op *op,
				       struct ibtrs_srv_path *path,
				       struct ib_send_wr *next)
{
	struct ib_mr *mr = path->chunk_mr[op->id];
	struct ib_send_wr *inv = &op->inv_wr;

	inv->next = &op->reg_wr.wr;
	inv->wr_cqe = &path->rekey_cqe;
	inv->opcode = IB_WR_LOCAL_INV;
	inv->send_flags = 0;
	inv->ex.invalidate_rkey = mr->rkey;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	ibtrs_srv_rekey_reg_wr(&op->reg_wr, mr, path, next);
	this_cpu_inc(path->stats->rekeys);
	return inv;
}
