// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_rx.c - the receive prologue both sides run on every receive
 * completion (trs_rx_decode_srv/_clt(), through them the immediate and the
 * IO_RSP decoders).
 *
 * Input: a flags byte (bit 0: status ok, 1: with immediate, 2: with
 * invalidation, 3: client side, else server side), the opcode byte
 * (enum trs_rx_op, any value), the immediate and the invalidated rkey
 * (4 bytes each), the queue depth (2 bytes), then the received message:
 * byte_len is its length and the buffer holds exactly those bytes, so the
 * prologue reading beyond byte_len is a heap-buffer-overflow (a receive
 * buffer is TRS_MAX_RECV_MSG bytes; a longer message must be refused
 * unread). Checks: -errno with a reason, or a result whose kind fits the
 * completion (immediate or not, opcode, direction), ids below the queue
 * depth, statuses within TRS_IMM_MAX_ERRNO, the invalidation reported as
 * the completion had it, and the same id as the immediate decoder gives.
 */
#include "fuzz.h"
#include "trs_common.h"

static void check_srv(const struct trs_rx_wc *wc, const struct trs_rx_msg *m,
		      __u32 qd)
{
	__u32 type, id;

	FZ_CHECK(wc->ok && wc->op != TRS_RX_OP_OTHER && !wc->with_inv);
	FZ_CHECK(!m->inv && !m->inv_rkey && !m->status);
	switch (m->kind) {
	case TRS_RX_HB:
	case TRS_RX_HB_ACK:
	case TRS_RX_IO_REQ:
		FZ_CHECK(wc->with_imm);
		FZ_CHECK(trs_imm_decode_srv(wc->imm, qd, &type, &id, NULL) == 0);
		FZ_CHECK(m->id == id);
		FZ_CHECK(m->kind != TRS_RX_IO_REQ ||
			 (type == TRS_IMM_IO_REQ && id < qd &&
			  wc->op == TRS_RX_OP_RECV_RDMA_IMM));
		FZ_CHECK(m->kind != TRS_RX_HB || type == TRS_IMM_HB);
		FZ_CHECK(m->kind != TRS_RX_HB_ACK || type == TRS_IMM_HB_ACK);
		break;
	case TRS_RX_MSG:
		FZ_CHECK(!wc->with_imm && wc->op == TRS_RX_OP_RECV);
		FZ_CHECK(m->len == wc->byte_len);
		FZ_CHECK(m->len >= 2 && m->len <= TRS_MAX_RECV_MSG);
		FZ_CHECK(m->msg_type == TRS_MSG_INFO_REQ);
		break;
	default:
		FZ_CHECK(!"server: unexpected kind");
	}
}

static void check_clt(const struct trs_rx_wc *wc, const struct trs_rx_msg *m,
		      __u32 qd)
{
	__u32 type, id;
	int err;

	FZ_CHECK(wc->ok && wc->op == TRS_RX_OP_RECV);
	FZ_CHECK(wc->byte_len <= TRS_MAX_RECV_MSG);
	FZ_CHECK(m->inv == wc->with_inv);
	FZ_CHECK(m->inv_rkey == (wc->with_inv ? wc->inv_rkey : 0));
	FZ_CHECK(m->status <= 0 && m->status >= -TRS_IMM_MAX_ERRNO);
	if (wc->with_imm) {
		FZ_CHECK(!wc->with_inv);
		FZ_CHECK(trs_imm_decode_clt(wc->imm, qd, &type, &id, &err,
					    NULL) == 0);
		FZ_CHECK(m->id == id && m->status == err);
		FZ_CHECK(m->kind == (type == TRS_IMM_HB ? TRS_RX_HB :
				     type == TRS_IMM_HB_ACK ? TRS_RX_HB_ACK :
				     TRS_RX_IO_RSP));
		return;
	}
	FZ_CHECK(m->len == wc->byte_len && m->len >= 2);
	switch (m->kind) {
	case TRS_RX_IO_RSP:
		FZ_CHECK(m->msg_type == TRS_MSG_IO_RSP);
		FZ_CHECK(m->len >= sizeof(struct trs_msg_io_rsp));
		FZ_CHECK(m->id < qd);
		break;
	case TRS_RX_MSG:
		FZ_CHECK((m->msg_type == TRS_MSG_INFO_RSP ||
			  m->msg_type == TRS_MSG_KEYS) && !wc->with_inv);
		break;
	default:
		FZ_CHECK(!"client: unexpected kind");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trs_rx_wc wc;
	struct trs_rx_msg m;
	struct fz_in in;
	const char *why = NULL;
	__u8 flags;
	size_t len;
	__u32 qd;
	void *buf;
	int ret;

	fz_in_init(&in, data, size);
	flags = fz_u8(&in);
	memset(&wc, 0, sizeof(wc));
	wc.ok = flags & 1;
	wc.with_imm = flags & 2;
	wc.with_inv = flags & 4;
	wc.op = fz_u8(&in);
	wc.imm = fz_u32(&in);
	wc.inv_rkey = fz_u32(&in);
	qd = fz_u16(&in);
	buf = fz_rest(&in, &len);
	wc.byte_len = (__u32)len;

	memset(&m, 0xa5, sizeof(m));
	if (flags & 8)
		ret = trs_rx_decode_clt(&wc, buf, qd, &m, &why);
	else
		ret = trs_rx_decode_srv(&wc, buf, qd, &m, &why);
	if (ret) {
		FZ_CHECK(ret < 0);
		FZ_CHECK(why && *why);
		FZ_CHECK(wc.ok || ret == -EIO);
	} else if (flags & 8) {
		check_clt(&wc, &m, qd);
	} else {
		check_srv(&wc, &m, qd);
	}
	free(buf);
	return 0;
}
