// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_io_req.c - a request header in a chunk's header area, as the
 * server copies it out (trs_io_req_copy()), validates the copy
 * (trs_io_req_decode()) and later checks the answer it may send
 * (trs_io_resp_check()).
 *
 * Input: the chunk size as a power of two (1 byte: 4 KiB << (b % 13)),
 * max_usr_len (2 bytes, up to TRS_MAX_USR_LEN), the user's answer status
 * (4 bytes, signed) and length (4 bytes), then the header area (exactly
 * that many bytes on the heap; the peer writes it, so it may be short).
 * Checks: the copy never reads past the area nor writes more than the
 * header plus max_usr_len + 1 user bytes, and copies the area faithfully;
 * decoding the copy gives the same verdict and values as decoding the
 * whole area (the copy loses nothing the decoder needs); an accepted
 * header keeps every rule of PROTOCOL.md 7 (type, flags, user header
 * within max_usr_len and the copy, write: no descriptor and data within
 * the chunk, or pulled: one descriptor of exactly its data, within the
 * chunk, that does not wrap; read: no data, no pull flag, at most one
 * descriptor within the chunk that does not wrap); re-encoding reproduces its fields and decodes alike; the
 * answer check only lets a status within TRS_IMM_MAX_ERRNO and a length
 * the request allows through.
 */
#include "fuzz.h"
#include "trs_common.h"

#define HDR	sizeof(struct trs_msg_io_req)

static void check_req(const struct trs_io_req_info *o, __u32 n, __u32 chunk,
		      __u32 max_usr)
{
	FZ_CHECK(o->type == TRS_MSG_IO_WRITE || o->type == TRS_MSG_IO_READ);
	FZ_CHECK(!(o->flags & ~TRS_IO_F_ALL));
	FZ_CHECK(o->usr_len <= max_usr && HDR + o->usr_len <= n);
	if (o->type == TRS_MSG_IO_WRITE && (o->flags & TRS_IO_F_PULL)) {
		/* pulled: one buffer of exactly the data, within the chunk */
		FZ_CHECK(o->sg_cnt == 1 && o->data_len && o->rlen == o->data_len);
		FZ_CHECK(o->data_len <= chunk);
		FZ_CHECK(o->raddr + o->rlen >= o->raddr);
		return;
	}
	if (o->type == TRS_MSG_IO_WRITE) {
		FZ_CHECK(!o->sg_cnt && !o->flags && o->data_len <= chunk);
		return;
	}
	FZ_CHECK(!(o->flags & TRS_IO_F_PULL));
	FZ_CHECK(!o->data_len && o->sg_cnt <= TRS_MAX_SG);
	if (!o->sg_cnt) {
		FZ_CHECK(!o->flags && !o->rlen && !o->rkey && !o->raddr);
		return;
	}
	FZ_CHECK(o->rlen <= chunk);
	FZ_CHECK(o->raddr + o->rlen >= o->raddr);
}

static void check_resp(const struct trs_io_req_info *o, int status, __u32 len)
{
	__u32 want = o->type == TRS_MSG_IO_READ && o->sg_cnt ? o->rlen : 0;
	int st = status;
	__u32 l = len;
	int ret;

	ret = trs_io_resp_check(o, &st, &l);
	FZ_CHECK(ret == 0 || ret == -EINVAL);
	FZ_CHECK(st <= 0 && st >= -TRS_IMM_MAX_ERRNO);
	if (o->type != TRS_MSG_IO_READ) {
		FZ_CHECK(!ret && !l);
		return;
	}
	if (ret) {
		FZ_CHECK(st == -EIO && !l);
		return;
	}
	FZ_CHECK(l == len && l <= want);
	FZ_CHECK(st || l == want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trs_io_req_info o1, o2, o3;
	const char *why1 = NULL, *why2 = NULL;
	__u32 chunk, max_usr, rlen, n;
	__u8 *copy, *area, *enc;
	struct fz_in in;
	size_t area_len;
	int status, r1, r2;

	fz_in_init(&in, data, size);
	chunk = TRS_MIN_CHUNK_SIZE << (fz_u8(&in) % 13);
	max_usr = fz_u16(&in) % (TRS_MAX_USR_LEN + 1);
	status = (int)fz_u32(&in);
	rlen = fz_u32(&in);
	area = fz_rest(&in, &area_len);

	copy = fz_alloc(HDR + max_usr + 1);
	n = trs_io_req_copy(copy, area, (__u32)area_len, max_usr);
	FZ_CHECK(n <= area_len && n <= HDR + max_usr + 1);
	FZ_CHECK(!memcmp(copy, area, n));

	memset(&o1, 0, sizeof(o1));
	memset(&o2, 0, sizeof(o2));
	r1 = trs_io_req_decode(copy, n, chunk, max_usr, &o1, &why1);
	r2 = trs_io_req_decode(area, (__u32)area_len, chunk, max_usr, &o2,
			       &why2);
	FZ_CHECK(r1 == r2);
	if (r1) {
		FZ_CHECK(r1 == -EPROTO || r1 == -EBADMSG || r1 == -EMSGSIZE);
		FZ_CHECK(why1 && why2 && !strcmp(why1, why2));
		goto out;
	}
	FZ_CHECK(!memcmp(&o1, &o2, sizeof(o1)));
	check_req(&o1, n, chunk, max_usr);
	check_resp(&o1, status, rlen);

	/* every field but reserved (12..16) and reserved2 (40..48) */
	enc = fz_alloc(HDR + o1.usr_len);
	trs_io_req_encode((struct trs_msg_io_req *)enc, &o1);
	memcpy(enc + HDR, copy + HDR, o1.usr_len);
	FZ_CHECK(!memcmp(enc, copy, offsetof(struct trs_msg_io_req, reserved)));
	FZ_CHECK(!memcmp(enc + offsetof(struct trs_msg_io_req, desc),
			 copy + offsetof(struct trs_msg_io_req, desc),
			 offsetof(struct trs_msg_io_req, reserved2) -
			 offsetof(struct trs_msg_io_req, desc)));
	memset(&o3, 0, sizeof(o3));
	FZ_CHECK(trs_io_req_decode(enc, HDR + o1.usr_len, chunk, max_usr, &o3,
				   &why1) == 0);
	FZ_CHECK(!memcmp(&o1, &o3, sizeof(o1)));
	free(enc);
out:
	free(copy);
	free(area);
	return 0;
}
