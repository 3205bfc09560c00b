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
