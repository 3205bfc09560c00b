// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_imm.c - the 32-bit immediate data of a received message, as the
 * server and as the client decode it (trs_imm_decode_srv/_clt()).
 *
 * Input: the immediate (4 bytes, host order, as the verbs layer converted
 * it), the queue depth (2 bytes). Checks: 0, -ERANGE or -EPROTO with a
 * reason; an accepted immediate has a type valid for the direction, a
 * chunk id below the queue depth for IO, no error bits where none may be,
 * an error within TRS_IMM_MAX_ERRNO; packing the decoded fields with
 * trs_imm_pack() gives the same 32 bits back.
 */
#include "fuzz.h"
#include "trs_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in;
	__u32 imm, qd, type, id, again;
	const char *why;
	int ret, err;

	fz_in_init(&in, data, size);
	imm = fz_u32(&in);
	qd = fz_u16(&in);

	why = NULL;
	ret = trs_imm_decode_srv(imm, qd, &type, &id, &why);
	FZ_CHECK(ret == 0 || ret == -ERANGE || ret == -EPROTO);
	if (ret) {
		FZ_CHECK(why && *why);
	} else {
		FZ_CHECK(type == TRS_IMM_IO_REQ || type == TRS_IMM_HB ||
			 type == TRS_IMM_HB_ACK);
		FZ_CHECK(type != TRS_IMM_IO_REQ || id < qd);
		FZ_CHECK(!trs_imm_err(imm));
		FZ_CHECK(trs_imm_pack(type, id, 0, &again) == 0);
		FZ_CHECK(again == imm);
	}

	why = NULL;
	ret = trs_imm_decode_clt(imm, qd, &type, &id, &err, &why);
	FZ_CHECK(ret == 0 || ret == -ERANGE || ret == -EPROTO);
	if (ret) {
		FZ_CHECK(why && *why);
	} else {
		FZ_CHECK(type == TRS_IMM_IO_RSP || type == TRS_IMM_HB ||
			 type == TRS_IMM_HB_ACK);
		FZ_CHECK(type != TRS_IMM_IO_RSP || id < qd);
		FZ_CHECK(err <= 0 && err >= -TRS_IMM_MAX_ERRNO);
		FZ_CHECK(type == TRS_IMM_IO_RSP || !err);
		FZ_CHECK(trs_imm_pack(type, id, err, &again) == 0);
		FZ_CHECK(again == imm);
	}
	return 0;
}
