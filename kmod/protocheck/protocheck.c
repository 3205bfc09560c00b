// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * protocheck.c - proves that the shared wire headers (trs/include/trs/) and
 * the pure protocol logic (trs/common/) build unchanged as kernel code: this
 * module links them in and, when loaded, runs one IMM round trip and one
 * connection-request round trip. Built by tests/host/kernel-build.sh; the
 * real modules (a later issue) build the same sources the same way.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "trs_common.h"
#include "trs/trs_imm.h"
#include "trs/ibnbd_proto.h"

/* Heartbeat timing and the receive prologue, as a kernel path would use them. */
static int __init trs_protocheck_hb_rx(void)
{
	struct trs_rx_wc wc = { .ok = true, .op = TRS_RX_OP_RECV_RDMA_IMM,
				.with_imm = true };
	struct trs_rx_msg m;
	struct trs_hb hb = { 0 };
	const char *why = NULL;
	__u64 rtt = 0;
	__u16 seq = 0;

	trs_hb_start(&hb, 500, 3, 1000000);
	if (!trs_hb_due(&hb, 1000000, &seq) ||
	    trs_hb_on_ack(&hb, seq, 1000250, &rtt) || rtt != 250 ||
	    trs_hb_timed_out(&hb, 2500000) || !trs_hb_timed_out(&hb, 2500001)) {
		pr_err("trs_protocheck: heartbeat state machine failed\n");
		return -EINVAL;
	}
	wc.imm = trs_to_imm(TRS_IMM_IO_REQ, 7, 0);
	if (trs_rx_decode_srv(&wc, NULL, 128, &m, &why) ||
	    m.kind != TRS_RX_IO_REQ || m.id != 7) {
		pr_err("trs_protocheck: receive prologue failed: %s\n",
		       why ? why : "?");
		return -EINVAL;
	}
	return 0;
}

/* An IBNBD IO message (ibnbd_proto.c) encoded and validated. */
static int __init trs_protocheck_ibnbd(void)
{
	struct ibnbd_msg_io io;

	ibnbd_init_io(&io, 3, 8, IBNBD_OP_READ, 4096, 0);
	if (ibnbd_msg_type(&io, sizeof(io)) != IBNBD_MSG_IO ||
	    le32_to_cpu(io.device_id) != 3) {
		pr_err("trs_protocheck: IBNBD IO message round trip failed\n");
		return -EINVAL;
	}
	return 0;
}

static int __init trs_protocheck_init(void)
{
	struct trs_msg_conn_req req;
	struct trs_conn_req_info in = { .cid = 3, .cid_num = 4 }, out;
	const char *why = NULL;
	__u32 type, id;
	int rej;

	/* A server-bound IO request for chunk 5 of 128, and one out of range. */
	if (trs_imm_decode_srv(trs_to_imm(TRS_IMM_IO_REQ, 5, 0), 128, &type, &id, &why) ||
	    type != TRS_IMM_IO_REQ || id != 5 ||
	    trs_imm_decode_srv(trs_to_imm(TRS_IMM_IO_REQ, 128, 0), 128, &type, &id, &why) != -ERANGE) {
		pr_err("trs_protocheck: IMM round trip failed\n");
		return -EINVAL;
	}

	in.ver_major = TRS_PROTO_VER_MAJOR;
	in.ver_minor = TRS_PROTO_VER_MINOR;
	trs_conn_req_encode(&req, &in);
	rej = trs_conn_req_decode(&req, sizeof(req), &out, &why);
	if (rej != TRS_REJ_NONE || out.cid != 3 || out.cid_num != 4) {
		pr_err("trs_protocheck: conn req round trip failed: %s\n", why ? why : "?");
		return -EINVAL;
	}
	if (trs_protocheck_hb_rx() || trs_protocheck_ibnbd())
		return -EINVAL;
	pr_info("trs_protocheck: wire format and common logic OK\n");
	return 0;
}

static void __exit trs_protocheck_exit(void)
{
}

module_init(trs_protocheck_init);
module_exit(trs_protocheck_exit);
MODULE_DESCRIPTION("IBTRS shared protocol code, kernel build check");
MODULE_LICENSE("GPL");
