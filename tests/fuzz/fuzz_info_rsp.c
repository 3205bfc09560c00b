// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_info_rsp.c - the INFO_RSP message a client receives, checked
 * against the parameters of the accept (trs_info_rsp_decode()).
 *
 * Input: 56 bytes of accept private data, then the INFO_RSP message. When
 * the accept does not decode, the library defaults stand in for it (queue
 * depth 128, 128 KiB chunks, 4 KiB header area), as a client only ever
 * checks an INFO_RSP against an accept it took. Checks: 0, -ECONNREFUSED
 * or -EPROTO with a reason; an accepted answer repeats the accept's queue
 * depth and chunk size, its slot size is chunk + header area, the pool does
 * not wrap the address space, only known flags (TRS_INFO_F_REKEY);
 * re-encoding reproduces the input's fields and decodes alike. The same
 * input is then read as a KEYS message (trs_keys_decode()) for the accept's
 * queue depth: a decoded message stays inside the queue depth and its
 * count, and re-encodes to the bytes it was read from.
 */
#include "fuzz.h"
#include "trs_common.h"

#define CONN_RSP_LEN	sizeof(struct trs_msg_conn_rsp)

static void fz_keys(const void *buf, __u32 len, __u32 queue_depth)
{
	__u32 rkeys[TRS_KEYS_PER_MSG];
	struct trs_msg_keys k;
	const char *why = NULL;
	__u32 first, count, n;

	if (trs_keys_decode(buf, len, queue_depth, &first, &count, rkeys,
			    &why)) {
		FZ_CHECK(why && *why);
		return;
	}
	FZ_CHECK(count >= 1 && count <= TRS_KEYS_PER_MSG);
	FZ_CHECK(first < queue_depth && count <= queue_depth - first);
	n = trs_keys_encode(&k, (__u16)first, (__u16)count, rkeys);
	FZ_CHECK(n <= len);
	FZ_CHECK(!memcmp(&k, buf, n));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trs_conn_params p = {
		.ver_major = TRS_PROTO_VER_MAJOR,
		.queue_depth = 128,
		.chunk_size = 128 * 1024,
		.hdr_area = TRS_HDR_AREA,
		.max_usr_len = TRS_MAX_USR_LEN,
	};
	struct trs_info out, again;
	struct trs_msg_info_rsp m;
	const char *why = NULL;
	struct trs_conn_params acc;
	size_t len;
	void *buf;
	int ret;

	if (size >= CONN_RSP_LEN &&
	    !trs_conn_rsp_decode(data, CONN_RSP_LEN, &acc, &why))
		p = acc;
	len = size > CONN_RSP_LEN ? size - CONN_RSP_LEN : 0;
	buf = fz_dup(data + (size - len), len);

	memset(&out, 0, sizeof(out));
	why = NULL;
	ret = trs_info_rsp_decode(buf, (__u32)len, &p, &out, &why);
	FZ_CHECK(ret == 0 || ret == -ECONNREFUSED || ret == -EPROTO);
	if (ret) {
		FZ_CHECK(why && *why);
		if (ret == -ECONNREFUSED)
			FZ_CHECK(out.status != TRS_REJ_NONE);
		goto out;
	}
	FZ_CHECK(len >= sizeof(m));
	FZ_CHECK(out.status == TRS_REJ_NONE);
	FZ_CHECK(out.queue_depth == p.queue_depth);
	FZ_CHECK(out.chunk_size == p.chunk_size);
	FZ_CHECK(out.slot_size == p.chunk_size + p.hdr_area);
	FZ_CHECK((unsigned __int128)out.pool_addr +
		 (unsigned __int128)out.slot_size * out.queue_depth <=
		 (unsigned __int128)UINT64_MAX);
	FZ_CHECK(!(out.flags & ~TRS_INFO_F_ALL));

	/* every field but the reserved one */
	trs_info_rsp_encode(&m, &out);
	FZ_CHECK(!memcmp(&m, buf, offsetof(struct trs_msg_info_rsp, reserved)));
	FZ_CHECK(!memcmp(&m.chunk_size, (const __u8 *)buf +
			 offsetof(struct trs_msg_info_rsp, chunk_size),
			 sizeof(m) - offsetof(struct trs_msg_info_rsp,
					      chunk_size)));
	memset(&again, 0, sizeof(again));
	FZ_CHECK(trs_info_rsp_decode(&m, sizeof(m), &p, &again, &why) == 0);
	FZ_CHECK(!memcmp(&out, &again, sizeof(out)));
out:
	fz_keys(buf, (__u32)len, p.queue_depth);
	free(buf);
	return 0;
}
