// SPDX-License-Identifier: GPL-2.0-or-later
/* test_rx.c - the receive prologue (common/rx.c), both directions. */
#include "trs_common.h"
#include "unit.h"

#define QD	128

static __u8 buf[TRS_MAX_RECV_MSG];
static struct trs_rx_msg m;
static const char *why;

static struct trs_rx_wc imm_wc(enum trs_rx_op op, __u32 imm)
{
	struct trs_rx_wc wc = { .ok = true, .op = op, .with_imm = true,
				.imm = imm };
	return wc;
}

static struct trs_rx_wc msg_wc(__u16 type, __u32 len)
{
	struct trs_rx_wc wc = { .ok = true, .op = TRS_RX_OP_RECV,
				.byte_len = len };

	memset(buf, 0, sizeof(buf));
	buf[0] = (__u8)type;
	buf[1] = (__u8)(type >> 8);
	return wc;
}

static int srv(const struct trs_rx_wc *wc)
{
	why = NULL;
	memset(&m, 0xa5, sizeof(m));
	return trs_rx_decode_srv(wc, buf, QD, &m, &why);
}

static int clt(const struct trs_rx_wc *wc)
{
	why = NULL;
	memset(&m, 0xa5, sizeof(m));
	return trs_rx_decode_clt(wc, buf, QD, &m, &why);
}

static int rx_srv_valid(void)
{
	struct trs_rx_wc wc;

	wc = imm_wc(TRS_RX_OP_RECV_RDMA_IMM, trs_to_imm(TRS_IMM_IO_REQ, QD - 1, 0));
	wc.byte_len = 65536;	/* the data written: not bounded here */
	UCHECK_EQ(srv(&wc), 0);
	UCHECK_EQ(m.kind, TRS_RX_IO_REQ);
	UCHECK_EQ(m.id, QD - 1);
	wc = imm_wc(TRS_RX_OP_RECV, trs_to_imm(TRS_IMM_HB, 4242, 0));
	UCHECK_EQ(srv(&wc), 0);
	UCHECK_EQ(m.kind, TRS_RX_HB);
	UCHECK_EQ(m.id, 4242);
	wc = imm_wc(TRS_RX_OP_RECV, trs_to_imm(TRS_IMM_HB_ACK, 7, 0));
	UCHECK_EQ(srv(&wc), 0);
	UCHECK_EQ(m.kind, TRS_RX_HB_ACK);
	UCHECK_EQ(m.id, 7);
	wc = msg_wc(TRS_MSG_INFO_REQ, sizeof(struct trs_msg_info_req));
	UCHECK_EQ(srv(&wc), 0);
	UCHECK_EQ(m.kind, TRS_RX_MSG);
	UCHECK_EQ(m.msg_type, TRS_MSG_INFO_REQ);
	UCHECK_EQ(m.len, sizeof(struct trs_msg_info_req));
	wc = msg_wc(TRS_MSG_INFO_REQ, TRS_MAX_RECV_MSG);
	UCHECK_EQ(srv(&wc), 0);
	return 0;
}

static int rx_srv_reject(void)
{
	struct trs_rx_wc wc;

	wc = imm_wc(TRS_RX_OP_RECV, trs_to_imm(TRS_IMM_HB, 1, 0));
	wc.ok = false;
	UCHECK_EQ(srv(&wc), -EIO);
	UCHECK(why);
	wc = imm_wc(TRS_RX_OP_OTHER, trs_to_imm(TRS_IMM_HB, 1, 0));
	UCHECK_EQ(srv(&wc), -EPROTO);
	/* an IO request must come with the RDMA write, not as a SEND */
	wc = imm_wc(TRS_RX_OP_RECV, trs_to_imm(TRS_IMM_IO_REQ, 1, 0));
	UCHECK_EQ(srv(&wc), -EPROTO);
	/* chunk id == queue depth */
	wc = imm_wc(TRS_RX_OP_RECV_RDMA_IMM, trs_to_imm(TRS_IMM_IO_REQ, QD, 0));
	UCHECK_EQ(srv(&wc), -ERANGE);
	/* client-bound immediate */
	wc = imm_wc(TRS_RX_OP_RECV, trs_to_imm(TRS_IMM_IO_RSP, 1, 0));
	UCHECK_EQ(srv(&wc), -EPROTO);
	/* an RDMA write without immediate never completes a receive */
	wc = msg_wc(TRS_MSG_INFO_REQ, 72);
	wc.op = TRS_RX_OP_RECV_RDMA_IMM;
	UCHECK_EQ(srv(&wc), -EPROTO);
	wc = msg_wc(TRS_MSG_INFO_REQ, TRS_MAX_RECV_MSG + 1);
	UCHECK_EQ(srv(&wc), -EMSGSIZE);
	wc = msg_wc(TRS_MSG_INFO_REQ, 1);
	UCHECK_EQ(srv(&wc), -EPROTO);
	wc = msg_wc(TRS_MSG_INFO_RSP, 32);
	UCHECK_EQ(srv(&wc), -EPROTO);
	wc = msg_wc(TRS_MSG_INFO_REQ, 72);
	wc.with_inv = true;
	UCHECK_EQ(srv(&wc), -EPROTO);
	return 0;
}

static int rx_clt_valid(void)
{
	struct trs_msg_io_rsp rsp;
	struct trs_io_rsp_info ri = { .chunk_id = 9, .status = -ENOSPC,
				      .flags = TRS_RSP_F_INVALIDATED, .len = 4096 };
	struct trs_rx_wc wc;

	wc = imm_wc(TRS_RX_OP_RECV, trs_to_imm(TRS_IMM_IO_RSP, QD - 1, EIO));
	UCHECK_EQ(clt(&wc), 0);
	UCHECK_EQ(m.kind, TRS_RX_IO_RSP);
	UCHECK_EQ(m.id, QD - 1);
	UCHECK_EQ(m.status, -EIO);
	UCHECK(!m.inv);
	wc = imm_wc(TRS_RX_OP_RECV, trs_to_imm(TRS_IMM_HB, 3, 0));
	UCHECK_EQ(clt(&wc), 0);
	UCHECK_EQ(m.kind, TRS_RX_HB);
	UCHECK_EQ(m.id, 3);
	wc = imm_wc(TRS_RX_OP_RECV, trs_to_imm(TRS_IMM_HB_ACK, 65535, 0));
	UCHECK_EQ(clt(&wc), 0);
	UCHECK_EQ(m.kind, TRS_RX_HB_ACK);
	UCHECK_EQ(m.id, 65535);
	wc = msg_wc(TRS_MSG_INFO_RSP, sizeof(struct trs_msg_info_rsp));
	UCHECK_EQ(clt(&wc), 0);
	UCHECK_EQ(m.kind, TRS_RX_MSG);
	UCHECK_EQ(m.msg_type, TRS_MSG_INFO_RSP);
	/* a read answer by SEND_WITH_INV */
	wc = msg_wc(0, sizeof(rsp));
	trs_io_rsp_encode(&rsp, &ri);
	memcpy(buf, &rsp, sizeof(rsp));
	wc.with_inv = true;
	wc.inv_rkey = 0x1234;
	UCHECK_EQ(clt(&wc), 0);
	UCHECK_EQ(m.kind, TRS_RX_IO_RSP);
	UCHECK_EQ(m.id, 9);
	UCHECK_EQ(m.status, -ENOSPC);
	UCHECK(m.inv);
	UCHECK_EQ(m.inv_rkey, 0x1234);
	return 0;
}

static int rx_clt_reject(void)
{
	struct trs_msg_io_rsp rsp;
	struct trs_io_rsp_info ri = { .chunk_id = 9, .flags = 0 };
	struct trs_rx_wc wc;

	wc = imm_wc(TRS_RX_OP_RECV, trs_to_imm(TRS_IMM_IO_RSP, 1, 0));
	wc.ok = false;
	UCHECK_EQ(clt(&wc), -EIO);
	/* nothing may RDMA-write into the client with an immediate */
	wc = imm_wc(TRS_RX_OP_RECV_RDMA_IMM, trs_to_imm(TRS_IMM_IO_RSP, 1, 0));
	UCHECK_EQ(clt(&wc), -EPROTO);
	wc = imm_wc(TRS_RX_OP_RECV, trs_to_imm(TRS_IMM_IO_RSP, QD, 0));
	UCHECK_EQ(clt(&wc), -ERANGE);
	/* before the session is sized no chunk id is valid */
	wc = imm_wc(TRS_RX_OP_RECV, trs_to_imm(TRS_IMM_IO_RSP, 0, 0));
	UCHECK_EQ(trs_rx_decode_clt(&wc, buf, 0, &m, &why), -ERANGE);
	wc = imm_wc(TRS_RX_OP_RECV, trs_to_imm(TRS_IMM_IO_REQ, 1, 0));
	UCHECK_EQ(clt(&wc), -EPROTO);
	wc = imm_wc(TRS_RX_OP_RECV, trs_to_imm(TRS_IMM_HB, 1, 5));
	UCHECK_EQ(clt(&wc), -EPROTO);
	wc = imm_wc(TRS_RX_OP_RECV, trs_to_imm(TRS_IMM_HB, 1, 0));
	wc.with_inv = true;
	UCHECK_EQ(clt(&wc), -EPROTO);
	wc = msg_wc(TRS_MSG_INFO_RSP, TRS_MAX_RECV_MSG + 1);
	UCHECK_EQ(clt(&wc), -EMSGSIZE);
	wc = msg_wc(TRS_MSG_INFO_RSP, 1);
	UCHECK_EQ(clt(&wc), -EPROTO);
	wc = msg_wc(TRS_MSG_INFO_REQ, 72);
	UCHECK_EQ(clt(&wc), -EPROTO);
	wc = msg_wc(TRS_MSG_INFO_RSP, 32);
	wc.with_inv = true;
	UCHECK_EQ(clt(&wc), -EPROTO);
	/* IO_RSP: the flag and the completion must agree, both ways */
	wc = msg_wc(0, sizeof(rsp));
	trs_io_rsp_encode(&rsp, &ri);
	memcpy(buf, &rsp, sizeof(rsp));
	wc.with_inv = true;
	UCHECK_EQ(clt(&wc), -EPROTO);
	ri.flags = TRS_RSP_F_INVALIDATED;
	trs_io_rsp_encode(&rsp, &ri);
	memcpy(buf, &rsp, sizeof(rsp));
	wc.with_inv = false;
	UCHECK_EQ(clt(&wc), -EPROTO);
	/* IO_RSP contents are validated (chunk id) */
	ri.chunk_id = QD;
	trs_io_rsp_encode(&rsp, &ri);
	memcpy(buf, &rsp, sizeof(rsp));
	wc.with_inv = true;
	UCHECK_EQ(clt(&wc), -ERANGE);
	/* short IO_RSP */
	wc.byte_len = sizeof(rsp) - 1;
	UCHECK_EQ(clt(&wc), -EPROTO);
	return 0;
}

/* The message type is read byte-wise: an odd buffer address is fine. */
static int rx_type_unaligned(void)
{
	static __u8 raw[TRS_MAX_RECV_MSG + 1];
	struct trs_rx_wc wc = { .ok = true, .op = TRS_RX_OP_RECV, .byte_len = 72 };

	raw[1] = TRS_MSG_INFO_REQ;
	raw[2] = 0;
	UCHECK_EQ(trs_rx_decode_srv(&wc, raw + 1, QD, &m, &why), 0);
	UCHECK_EQ(m.msg_type, TRS_MSG_INFO_REQ);
	raw[2] = 1;	/* high byte: 0x0101 is no type */
	UCHECK_EQ(trs_rx_decode_srv(&wc, raw + 1, QD, &m, &why), -EPROTO);
	return 0;
}

int main(void)
{
	URUN(rx_srv_valid);
	URUN(rx_srv_reject);
	URUN(rx_clt_valid);
	URUN(rx_clt_reject);
	URUN(rx_type_unaligned);
	return unit_failed ? 1 : 0;
}
