// SPDX-License-Identifier: GPL-2.0-or-later
/* test_imm.c - immediate data round trips and bit-budget limits. */
#include "trs_common.h"
#include "unit.h"

static int imm_roundtrip_all_types(void)
{
	static const int types[] = { TRS_IMM_IO_REQ, TRS_IMM_IO_RSP, TRS_IMM_HB,
				     TRS_IMM_HB_ACK };
	static const __u32 ids[] = { 0, 1, 511, 0x7fff, TRS_IMM_ID_MASK };
	static const int errs[] = { 0, -1, -EIO, -ENOSPC, -TRS_IMM_MAX_ERRNO };
	size_t t, i, e;

	for (t = 0; t < 4; t++)
		for (i = 0; i < 5; i++)
			for (e = 0; e < 5; e++) {
				__u32 imm;

				UCHECK_EQ(trs_imm_pack(types[t], ids[i], errs[e], &imm), 0);
				UCHECK_EQ(trs_imm_type(imm), types[t]);
				UCHECK_EQ(trs_imm_id(imm), ids[i]);
				UCHECK_EQ(trs_imm_err(imm), errs[e]);
			}
	return 0;
}

static int imm_positive_err_is_abs(void)
{
	__u32 imm;

	UCHECK_EQ(trs_imm_pack(TRS_IMM_IO_RSP, 3, EIO, &imm), 0);
	UCHECK_EQ(trs_imm_err(imm), -EIO);
	return 0;
}

static int imm_limits_rejected(void)
{
	__u32 imm = 0xdeadbeef;

	UCHECK_EQ(trs_imm_pack(TRS_IMM_IO_REQ, TRS_IMM_ID_MASK + 1, 0, &imm), -ERANGE);
	UCHECK_EQ(trs_imm_pack(TRS_IMM_IO_RSP, 0, -(TRS_IMM_MAX_ERRNO + 1), &imm), -ERANGE);
	UCHECK_EQ(trs_imm_pack(TRS_IMM_INVALID, 0, 0, &imm), -ERANGE);
	UCHECK_EQ(trs_imm_pack(TRS_IMM_TYPE_MAX, 0, 0, &imm), -ERANGE);
	UCHECK_EQ(imm, 0xdeadbeef);	/* untouched on failure */
	return 0;
}

static int imm_fields_do_not_overlap(void)
{
	UCHECK_EQ(trs_to_imm(TRS_IMM_TYPE_MASK, 0, 0), 0xF0000000u);
	UCHECK_EQ(trs_to_imm(0, 0, TRS_IMM_ERR_MASK), 0x0FFF0000u);
	UCHECK_EQ(trs_to_imm(0, TRS_IMM_ID_MASK, 0), 0x0000FFFFu);
	UCHECK_EQ(TRS_IMM_TYPE_BITS + TRS_IMM_ERR_BITS + TRS_IMM_ID_BITS, 32);
	UCHECK(TRS_MAX_QUEUE_DEPTH - 1 <= TRS_IMM_ID_MASK);
	return 0;
}

static int imm_decode_srv(void)
{
	__u32 type, id;
	const char *why;

	UCHECK_EQ(trs_imm_decode_srv(trs_to_imm(TRS_IMM_IO_REQ, 127, 0), 128,
				     &type, &id, &why), 0);
	UCHECK_EQ(id, 127);
	/* the classic off-by-one: id == queue_depth must be rejected */
	UCHECK_EQ(trs_imm_decode_srv(trs_to_imm(TRS_IMM_IO_REQ, 128, 0), 128,
				     &type, &id, &why), -ERANGE);
	UCHECK_EQ(trs_imm_decode_srv(trs_to_imm(TRS_IMM_IO_REQ, 0xffff, 0), 128,
				     &type, &id, &why), -ERANGE);
	UCHECK_EQ(trs_imm_decode_srv(trs_to_imm(TRS_IMM_IO_RSP, 1, 0), 128,
				     &type, &id, &why), -EPROTO);
	UCHECK_EQ(trs_imm_decode_srv(0, 128, &type, &id, &why), -EPROTO);
	UCHECK_EQ(trs_imm_decode_srv(trs_to_imm(TRS_IMM_IO_REQ, 1, 5), 128,
				     &type, &id, &why), -EPROTO);
	UCHECK_EQ(trs_imm_decode_srv(trs_to_imm(15, 1, 0), 128, &type, &id, &why),
		  -EPROTO);
	UCHECK_EQ(trs_imm_decode_srv(trs_to_imm(TRS_IMM_HB, 77, 0), 128,
				     &type, &id, &why), 0);
	UCHECK_EQ(type, TRS_IMM_HB);
	return 0;
}

static int imm_decode_clt(void)
{
	__u32 type, id;
	int err;
	const char *why;

	UCHECK_EQ(trs_imm_decode_clt(trs_to_imm(TRS_IMM_IO_RSP, 5, EIO), 8,
				     &type, &id, &err, &why), 0);
	UCHECK_EQ(err, -EIO);
	UCHECK_EQ(id, 5);
	UCHECK_EQ(trs_imm_decode_clt(trs_to_imm(TRS_IMM_IO_RSP, 8, 0), 8,
				     &type, &id, &err, &why), -ERANGE);
	UCHECK_EQ(trs_imm_decode_clt(trs_to_imm(TRS_IMM_IO_REQ, 1, 0), 8,
				     &type, &id, &err, &why), -EPROTO);
	UCHECK_EQ(trs_imm_decode_clt(trs_to_imm(TRS_IMM_HB_ACK, 1, 3), 8,
				     &type, &id, &err, &why), -EPROTO);
	return 0;
}

int main(void)
{
	URUN(imm_roundtrip_all_types);
	URUN(imm_positive_err_is_abs);
	URUN(imm_limits_rejected);
	URUN(imm_fields_do_not_overlap);
	URUN(imm_decode_srv);
	URUN(imm_decode_clt);
	return unit_failed ? 1 : 0;
}
