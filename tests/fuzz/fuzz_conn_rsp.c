// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_conn_rsp.c - the accept (or reject) private data a client receives
 * (trs_conn_rsp_decode(), trs_conn_params_check()).
 *
 * Input: the private data, any length. Checks: 0, -ECONNREFUSED (a reject
 * code set) or -EPROTO, with a reason; accepted parameters pass the
 * server's own check (queue depth, power-of-two chunk size in range,
 * header area, max_usr_len within it, no flags), the minor is not newer
 * than ours; re-encoding reproduces the input's fields and decodes alike.
 */
#include "fuzz.h"
#include "trs_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trs_conn_params out, again;
	struct trs_msg_conn_rsp m;
	const char *why = NULL;
	void *buf = fz_dup(data, size);
	int ret;

	memset(&out, 0, sizeof(out));
	ret = trs_conn_rsp_decode(buf, (__u32)size, &out, &why);
	FZ_CHECK(ret == 0 || ret == -ECONNREFUSED || ret == -EPROTO);
	if (ret) {
		FZ_CHECK(why && *why);
		if (ret == -ECONNREFUSED)
			FZ_CHECK(out.rej != TRS_REJ_NONE);
		goto out;
	}
	FZ_CHECK(size >= sizeof(m));
	FZ_CHECK(out.rej == TRS_REJ_NONE);
	FZ_CHECK(out.ver_major == TRS_PROTO_VER_MAJOR);
	FZ_CHECK(out.ver_minor <= TRS_PROTO_VER_MINOR);
	FZ_CHECK(trs_conn_params_check(&out, &why) == 0);
	FZ_CHECK(out.queue_depth >= 1 &&
		 out.queue_depth < TRS_MAX_QUEUE_DEPTH);
	FZ_CHECK(out.chunk_size >= TRS_MIN_CHUNK_SIZE &&
		 out.chunk_size <= TRS_MAX_CHUNK_SIZE &&
		 !(out.chunk_size & (out.chunk_size - 1)));
	FZ_CHECK(out.hdr_area >= sizeof(struct trs_msg_io_req) &&
		 out.hdr_area <= TRS_HDR_AREA);
	FZ_CHECK(out.max_usr_len + sizeof(struct trs_msg_io_req) <=
		 out.hdr_area);
	FZ_CHECK(!out.flags);

	/* magic .. flags are fields; the rest is reserved */
	trs_conn_rsp_encode(&m, &out);
	FZ_CHECK(!memcmp(&m, buf, offsetof(struct trs_msg_conn_rsp, reserved)));
	memset(&again, 0, sizeof(again));
	FZ_CHECK(trs_conn_rsp_decode(&m, sizeof(m), &again, &why) == 0);
	FZ_CHECK(!memcmp(&out, &again, sizeof(out)));
out:
	free(buf);
	return 0;
}
