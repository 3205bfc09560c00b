// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_io_rsp.c - the IO_RSP message (answer header) a client receives
 * for a read (trs_io_rsp_decode()).
 *
 * Input: the queue depth (2 bytes), then the message (exactly its length
 * on the heap). Checks: 0, -EPROTO or -ERANGE with a reason; an accepted
 * answer names a chunk below the queue depth, carries a status within
 * TRS_IMM_MAX_ERRNO (as 0 or -errno) and only the INVALIDATED flag;
 * re-encoding reproduces the 16 bytes of the message (it has no reserved
 * field) and decodes alike.
 */
#include "fuzz.h"
#include "trs_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trs_io_rsp_info out, again;
	struct trs_msg_io_rsp m;
	const char *why = NULL;
	struct fz_in in;
	size_t len;
	__u32 qd;
	void *buf;
	int ret;

	fz_in_init(&in, data, size);
	qd = fz_u16(&in);
	buf = fz_rest(&in, &len);

	memset(&out, 0, sizeof(out));
	ret = trs_io_rsp_decode(buf, (__u32)len, qd, &out, &why);
	FZ_CHECK(ret == 0 || ret == -EPROTO || ret == -ERANGE);
	if (ret) {
		FZ_CHECK(why && *why);
		goto out;
	}
	FZ_CHECK(len >= sizeof(m));
	FZ_CHECK(out.chunk_id < qd);
	FZ_CHECK(out.status <= 0 && out.status >= -TRS_IMM_MAX_ERRNO);
	FZ_CHECK(!(out.flags & ~TRS_RSP_F_INVALIDATED));

	trs_io_rsp_encode(&m, &out);
	FZ_CHECK(!memcmp(&m, buf, sizeof(m)));
	memset(&again, 0, sizeof(again));
	FZ_CHECK(trs_io_rsp_decode(&m, sizeof(m), qd, &again, &why) == 0);
	FZ_CHECK(!memcmp(&out, &again, sizeof(out)));
out:
	free(buf);
	return 0;
}
