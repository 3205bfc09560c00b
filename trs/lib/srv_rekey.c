// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * srv_rekey.c - chunk_mode rekey (trs/PROTOCOL.md 5): every chunk of a
 * path is reachable only through a type-1 memory window of its own, over
 * exactly its slot; after each IO the window is bound again, with the key's
 * low byte incremented, before the IO's answer on the same send queue, so
 * the key the IO used is dead when its client learns that the IO ended.
 * Type 1, not 2: a type-2 window serves only the QP that bound it, and a
 * chunk's next IO may come on any connection of the path (the path's own
 * PD keeps a type-1 window to the path's QPs).
 *
 * The join binds with ibv_bind_mw(), one post each. After an IO the bind is
 * an IBV_WR_BIND_MW work request chained in front of the answer, so the
 * binds and answers of one flush are one post (one doorbell): the verbs
 * providers of rxe and mlx5 implement ibv_bind_mw() of a type-1 window as
 * exactly that work request posted alone, and take it in a chain alike.
 */
#include <stdlib.h>
#include <string.h>

#include "srv.h"

/* What chunk @id's window is bound over: exactly its slot, remote write. */
static struct ibv_mw_bind_info trs_srv_rekey_info(struct trs_srv_path *path,
						  uint32_t id)
{
	return (struct ibv_mw_bind_info){
		.mr = path->pool_mr,
		.addr = (uintptr_t)trs_srv_slot(path->sess, id),
		.length = path->sess->ctx->slot_size,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
}

/* Bind chunk @id's window over its slot; the new key is in ->rkey. */
static int trs_srv_rekey_post(struct trs_srv_path *path, struct trs_srv_con *con,
			      uint32_t id)
{
	struct ibv_mw *mw = path->chunk_mw[id];
	uint32_t want = ibv_inc_rkey(mw->rkey);
	struct ibv_mw_bind bind = {
		.wr_id = (uintptr_t)&con->c.ctrl_cqe,	/* unsignaled */
		.bind_info = trs_srv_rekey_info(path, id),
	};
	int err = ibv_bind_mw(con->c.qp, mw, &bind);

	if (err)
		return -err;
	con->c.st.post_sends++;
	con->c.st.send_wrs++;
	path->rebinds++;
	/* the client follows the same rule; a provider that chose another
	 * key would desynchronize it */
	return mw->rkey == want ? 0 : -EPROTO;
}

/*
 * At the join (INFO_REQ on connection @con): allocate and bind every
 * chunk's window, then send their keys (KEYS messages, in chunk order)
 * ahead of INFO_RSP. The binds and sends are ordered on @con's send queue.
 */
int trs_srv_rekey_setup(struct trs_srv_path *path, struct trs_srv_con *con)
{
	uint32_t qd = path->sess->ctx->params.queue_depth, i, n, first;
	uint32_t nmsgs = (qd + TRS_KEYS_PER_MSG - 1) / TRS_KEYS_PER_MSG;
	uint32_t keys[TRS_KEYS_PER_MSG];
	int err;

	path->chunk_mw = calloc(qd, sizeof(*path->chunk_mw));
	path->keys_msgs = calloc(nmsgs, sizeof(*path->keys_msgs));
	if (!path->chunk_mw || !path->keys_msgs)
		return -ENOMEM;
	path->keys_mr = ibv_reg_mr(path->pd, path->keys_msgs,
				   nmsgs * sizeof(*path->keys_msgs), 0);
	if (!path->keys_mr)
		return -errno ? -errno : -ENOMEM;
	for (i = 0; i < qd; i++) {
		path->chunk_mw[i] = ibv_alloc_mw(path->pd, IBV_MW_TYPE_1);
		if (!path->chunk_mw[i])
			return -EOPNOTSUPP;
		err = trs_srv_rekey_post(path, con, i);
		if (err)
			return err;
	}
	for (first = 0; first < qd; first += n) {
		struct trs_msg_keys *m = &path->keys_msgs[first / TRS_KEYS_PER_MSG];
		struct ibv_sge sge = { .addr = (uintptr_t)m, .lkey = path->keys_mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = (uintptr_t)&con->c.ctrl_cqe,
			.sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		};

		n = qd - first < TRS_KEYS_PER_MSG ? qd - first : TRS_KEYS_PER_MSG;
		for (i = 0; i < n; i++)
			keys[i] = path->chunk_mw[first + i]->rkey;
		sge.length = trs_keys_encode(m, (uint16_t)first, (uint16_t)n, keys);
		err = trs_con_post_send(&con->c, &wr, 1);
		if (err)
			return err;
	}
	return 0;
}

/*
 * After an IO on @op's chunk: its window's next binding, a work request
 * whose ->next is @next (the answer); the key it will have is ->bind_mw.rkey,
 * made current by trs_srv_rekey_posted() once the chain is posted.
 */
struct ibv_send_wr *trs_srv_rekey_wr(struct ibtrs_srv_op *op,
				     struct ibv_send_wr *next)
{
	struct ibv_send_wr *wr = &op->bind_wr;
	struct ibv_mw *mw = op->path->chunk_mw[op->id];

	memset(wr, 0, sizeof(*wr));
	wr->wr_id = (uintptr_t)&op->con->c.ctrl_cqe;	/* unsignaled */
	wr->opcode = IBV_WR_BIND_MW;
	wr->bind_mw.mw = mw;
	wr->bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr->bind_mw.bind_info = trs_srv_rekey_info(op->path, op->id);
	wr->next = next;
	return wr;
}

/* @op's bind (trs_srv_rekey_wr) was posted: its key is the window's now. */
void trs_srv_rekey_posted(struct ibtrs_srv_op *op)
{
	op->path->chunk_mw[op->id]->rkey = op->bind_wr.bind_mw.rkey;
	op->path->rebinds++;
}

/* The path's QPs are gone: windows, then (by the caller) the pool MR. */
void trs_srv_rekey_free(struct trs_srv_path *path)
{
	uint32_t i;

	if (path->chunk_mw) {
		for (i = 0; i < path->sess->ctx->params.queue_depth; i++)
			if (path->chunk_mw[i])
				ibv_dealloc_mw(path->chunk_mw[i]);
		free(path->chunk_mw);
		path->chunk_mw = NULL;
	}
	if (path->keys_mr) {
		ibv_dereg_mr(path->keys_mr);
		path->keys_mr = NULL;
	}
	free(path->keys_msgs);
	path->keys_msgs = NULL;
}
