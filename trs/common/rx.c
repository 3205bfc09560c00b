// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rx.c - the receive prologue: what both sides check on a receive
 * completion before dispatching it (status, opcode, immediate, length,
 * message type). Pure: the verbs layer fills a struct trs_rx_wc.
 */
#include "trs_common.h"

static int trs_rx_fail(const char **why, const char *reason, int err)
{
	if (why)
		*why = reason;
	return err;
}

int trs_rx_decode_srv(const struct trs_rx_wc *wc, const void *buf,
		      __u32 queue_depth, struct trs_rx_msg *out,
		      const char **why)
{
	__u32 type, id;
	int err;

	if (!wc->ok)
		return trs_rx_fail(why, "receive completed with an error", -EIO);
	if (wc->op == TRS_RX_OP_OTHER)
		return trs_rx_fail(why, "not a receive opcode", -EPROTO);
	if (wc->with_inv)
		return trs_rx_fail(why, "a client never invalidates", -EPROTO);
	out->inv = false;
	out->inv_rkey = 0;
	out->status = 0;
	out->msg_type = 0;
	out->len = 0;
	out->rsp_len = 0;
	if (wc->with_imm) {
		err = trs_imm_decode_srv(wc->imm, queue_depth, &type, &id, why);
		if (err)
			return err;
		out->id = id;
		if (type == TRS_IMM_HB || type == TRS_IMM_HB_ACK) {
			out->kind = type == TRS_IMM_HB ? TRS_RX_HB : TRS_RX_HB_ACK;
			return 0;
		}
		/* TRS_IMM_IO_REQ: the header was written into the chunk */
		if (wc->op != TRS_RX_OP_RECV_RDMA_IMM)
			return trs_rx_fail(why, "IO request not an RDMA write",
					   -EPROTO);
		out->kind = TRS_RX_IO_REQ;
		return 0;
	}
	if (wc->op != TRS_RX_OP_RECV)
		return trs_rx_fail(why, "RDMA write without immediate", -EPROTO);
	if (wc->byte_len > TRS_MAX_RECV_MSG)
		return trs_rx_fail(why, "message longer than a receive buffer",
				   -EMSGSIZE);
	if (wc->byte_len < 2)
		return trs_rx_fail(why, "runt message", -EPROTO);
	out->kind = TRS_RX_MSG;
	out->id = 0;
	out->len = wc->byte_len;
	out->msg_type = trs_get_unaligned_le16(buf);
	if (out->msg_type != TRS_MSG_INFO_REQ)
		return trs_rx_fail(why, "unexpected message type", -EPROTO);
	return 0;
}

int trs_rx_decode_clt(const struct trs_rx_wc *wc, const void *buf,
		      __u32 queue_depth, struct trs_rx_msg *out,
		      const char **why)
{
	struct trs_io_rsp_info r;
	__u32 type, id;
	int err, st;

	if (!wc->ok)
		return trs_rx_fail(why, "receive completed with an error", -EIO);
	/* the client exposes no memory for RDMA_WRITE_WITH_IMM */
	if (wc->op != TRS_RX_OP_RECV)
		return trs_rx_fail(why, "not a SEND receive", -EPROTO);
	if (wc->byte_len > TRS_MAX_RECV_MSG)
		return trs_rx_fail(why, "message longer than a receive buffer",
				   -EMSGSIZE);
	out->inv = wc->with_inv;
	out->inv_rkey = wc->with_inv ? wc->inv_rkey : 0;
	out->status = 0;
	out->msg_type = 0;
	out->len = 0;
	out->rsp_len = 0;
	if (wc->with_imm) {
		if (wc->with_inv)
			return trs_rx_fail(why, "immediate and invalidation",
					   -EPROTO);
		err = trs_imm_decode_clt(wc->imm, queue_depth, &type, &id, &st,
					 why);
		if (err)
			return err;
		out->id = id;
		out->status = st;
		if (type == TRS_IMM_HB)
			out->kind = TRS_RX_HB;
		else if (type == TRS_IMM_HB_ACK)
			out->kind = TRS_RX_HB_ACK;
		else
			out->kind = TRS_RX_IO_RSP;
		return 0;
	}
	if (wc->byte_len < 2)
		return trs_rx_fail(why, "runt message", -EPROTO);
	out->id = 0;
	out->len = wc->byte_len;
	out->msg_type = trs_get_unaligned_le16(buf);
	switch (out->msg_type) {
	case TRS_MSG_INFO_RSP:
	case TRS_MSG_KEYS:
		if (wc->with_inv)
			return trs_rx_fail(why, "control message with invalidation",
					   -EPROTO);
		out->kind = TRS_RX_MSG;
		return 0;
	case TRS_MSG_IO_RSP:
		err = trs_io_rsp_decode(buf, wc->byte_len, queue_depth, &r, why);
		if (err)
			return err;
		if (!!(r.flags & TRS_RSP_F_INVALIDATED) != wc->with_inv)
			return trs_rx_fail(why, "IO_RSP invalidation flag does "
					   "not match the completion", -EPROTO);
		out->kind = TRS_RX_IO_RSP;
		out->id = r.chunk_id;
		out->status = r.status;
		out->rsp_len = r.len;
		return 0;
	}
	return trs_rx_fail(why, "unexpected message type", -EPROTO);
}
