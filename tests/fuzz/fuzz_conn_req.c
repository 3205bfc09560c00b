// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_conn_req.c - the connect private data a server receives
 * (trs_conn_req_decode(), trs_negotiate_version()).
 *
 * Input: the private data, any length (the RDMA CM hands over what the
 * peer sent). Checks: the verdict is a known reject code with a reason;
 * an accepted request has the documented ranges (major, 1 <= cid_num <=
 * 64, cid < cid_num, known flags); re-encoding it reproduces the fields of
 * the input and decodes to the same values.
 */
#include "fuzz.h"
#include "trs_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trs_conn_req_info out, again;
	struct trs_msg_conn_req m;
	const char *why = NULL;
	void *buf = fz_dup(data, size);
	__u8 minor;
	int ret;

	memset(&out, 0, sizeof(out));
	ret = trs_conn_req_decode(buf, (__u32)size, &out, &why);
	FZ_CHECK(ret >= TRS_REJ_NONE && ret < TRS_REJ_MAX);
	FZ_CHECK(strcmp(trs_rej_str(ret), "unknown reject code"));
	if (ret != TRS_REJ_NONE) {
		FZ_CHECK(why && *why);
		goto out;
	}
	FZ_CHECK(size >= sizeof(m));
	FZ_CHECK(out.ver_major == TRS_PROTO_VER_MAJOR);
	FZ_CHECK(out.cid_num >= 1 && out.cid_num <= TRS_MAX_CONS_PER_PATH);
	FZ_CHECK(out.cid < out.cid_num);
	FZ_CHECK(!(out.flags & ~TRS_CONN_F_ALL));
	FZ_CHECK(trs_negotiate_version(out.ver_major, out.ver_minor,
				       &minor) == TRS_REJ_NONE);
	FZ_CHECK(minor <= out.ver_minor && minor <= TRS_PROTO_VER_MINOR);

	/* magic .. path_uuid are fields; the rest is reserved (zero) */
	trs_conn_req_encode(&m, &out);
	FZ_CHECK(!memcmp((__u8 *)&m + 2, (const __u8 *)buf + 2,
			 offsetof(struct trs_msg_conn_req, reserved) - 2));
	FZ_CHECK(!m.__cma_version && !m.__ip_version);
	memset(&again, 0, sizeof(again));
	FZ_CHECK(trs_conn_req_decode(&m, sizeof(m), &again, &why) ==
		 TRS_REJ_NONE);
	FZ_CHECK(!memcmp(&out, &again, sizeof(out)));
out:
	free(buf);
	return 0;
}
