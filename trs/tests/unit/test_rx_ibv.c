// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_rx_ibv.c - the library's mapping of an ibv_wc onto the shared
 * receive checks (trs_rx_wc_from_ibv() in lib/trs_lib.h), rxe quirk included.
 */
#include "trs_lib.h"
#include "unit.h"

static struct trs_rx_wc w;

/* Byte order of imm_data (network order on the wire) and the opcodes. */
static int ibv_imm_and_opcodes(void)
{
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV,
			     .wc_flags = IBV_WC_WITH_IMM, .byte_len = 0 };

	wc.imm_data = htobe32(trs_to_imm(TRS_IMM_HB, 0x1234, 0));
	trs_rx_wc_from_ibv(&wc, &w);
	UCHECK(w.ok && w.with_imm && !w.with_inv);
	UCHECK_EQ(w.op, TRS_RX_OP_RECV);
	UCHECK_EQ(w.imm, trs_to_imm(TRS_IMM_HB, 0x1234, 0));
	wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	wc.byte_len = 4096;
	trs_rx_wc_from_ibv(&wc, &w);
	UCHECK_EQ(w.op, TRS_RX_OP_RECV_RDMA_IMM);
	UCHECK_EQ(w.byte_len, 4096);
	wc.opcode = IBV_WC_RDMA_WRITE;
	trs_rx_wc_from_ibv(&wc, &w);
	UCHECK_EQ(w.op, TRS_RX_OP_OTHER);
	wc.status = IBV_WC_REM_ACCESS_ERR;
	trs_rx_wc_from_ibv(&wc, &w);
	UCHECK(!w.ok);
	return 0;
}

/*
 * SEND_WITH_INV: the standard flag, and rxe's IBV_WC_IP_CSUM_OK, both mean
 * invalidated (with the rkey); the checksum flag next to an immediate does
 * not (imm_data and invalidated_rkey share a union).
 */
static int ibv_invalidation(void)
{
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV,
			     .byte_len = 16 };

	wc.wc_flags = IBV_WC_WITH_INV;
	wc.invalidated_rkey = 0xabcd;
	trs_rx_wc_from_ibv(&wc, &w);
	UCHECK(w.with_inv && !w.with_imm);
	UCHECK_EQ(w.inv_rkey, 0xabcd);
	wc.wc_flags = IBV_WC_IP_CSUM_OK;
	trs_rx_wc_from_ibv(&wc, &w);
	UCHECK(w.with_inv);
	UCHECK_EQ(w.inv_rkey, 0xabcd);
	wc.wc_flags = 0;
	trs_rx_wc_from_ibv(&wc, &w);
	UCHECK(!w.with_inv);
	UCHECK_EQ(w.inv_rkey, 0);
	wc.wc_flags = IBV_WC_WITH_IMM | IBV_WC_IP_CSUM_OK;
	wc.imm_data = htobe32(trs_to_imm(TRS_IMM_IO_RSP, 3, 0));
	trs_rx_wc_from_ibv(&wc, &w);
	UCHECK(w.with_imm && !w.with_inv);
	UCHECK_EQ(w.inv_rkey, 0);
	return 0;
}

int main(void)
{
	URUN(ibv_imm_and_opcodes);
	URUN(ibv_invalidation);
	return unit_failed ? 1 : 0;
}
