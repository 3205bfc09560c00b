// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * proto.c - encode and validate every IBTRS message. Pure code, shared with
 * the kernel modules: no libc, buffers in, -errno out.
 */
#include "trs_common.h"

/*
 * The compiler's builtins: inlined for constant sizes, else the
 * environment's memcpy/memset (libc, or the kernel's), which exist in
 * both. A byte loop here cost ~5 instructions per byte of every request
 * header the servers copy (trs_io_req_copy(): ~420 per 4k IO measured).
 */
static void trs_bytes_copy(void *dst, const void *src, __u32 len)
{
	__builtin_memcpy(dst, src, len);
}

static void trs_bytes_zero(void *dst, __u32 len)
{
	__builtin_memset(dst, 0, len);
}

static int trs_fail(const char **why, const char *reason, int err)
{
	if (why)
		*why = reason;
	return err;
}

static bool trs_is_pow2(__u32 x)
{
	return x && !(x & (x - 1));
}

const char *trs_rej_str(int rej)
{
	switch (rej) {
	case TRS_REJ_NONE:	return "accepted";
	case TRS_REJ_BAD_PRIV:	return "malformed connection private data";
	case TRS_REJ_BAD_MAGIC:	return "bad magic (not an IBTRS peer)";
	case TRS_REJ_VERSION:	return "unsupported protocol major version";
	case TRS_REJ_BAD_CID:	return "connection index out of range";
	case TRS_REJ_NO_SESS:	return "no such session on the server";
	case TRS_REJ_NOMEM:	return "server out of resources";
	case TRS_REJ_BUSY:	return "path already connected";
	case TRS_REJ_CLOSING:	return "server shutting down";
	case TRS_REJ_BAD_FLAGS:	return "unknown connection flags";
	case TRS_REJ_LIMIT:	return "server's session limit reached";
	}
	return "unknown reject code";
}

const char *trs_msg_type_str(int type)
{
	switch (type) {
	case TRS_MSG_INFO_REQ:	return "INFO_REQ";
	case TRS_MSG_INFO_RSP:	return "INFO_RSP";
	case TRS_MSG_IO_WRITE:	return "IO_WRITE";
	case TRS_MSG_IO_READ:	return "IO_READ";
	case TRS_MSG_IO_RSP:	return "IO_RSP";
	}
	return "UNKNOWN";
}

int trs_negotiate_version(__u8 peer_major, __u8 peer_minor, __u8 *minor_out)
{
	int ours = TRS_PROTO_VER_MINOR;

	if (peer_major != TRS_PROTO_VER_MAJOR)
		return TRS_REJ_VERSION;
	*minor_out = (__u8)((int)peer_minor < ours ? (int)peer_minor : ours);
	return TRS_REJ_NONE;
}

void trs_conn_req_encode(struct trs_msg_conn_req *m,
			 const struct trs_conn_req_info *in)
{
	trs_bytes_zero(m, sizeof(*m));
	m->magic = cpu_to_le16(TRS_MAGIC);
	m->ver_major = in->ver_major;
	m->ver_minor = in->ver_minor;
	m->cid = cpu_to_le16(in->cid);
	m->cid_num = cpu_to_le16(in->cid_num);
	m->recon_cnt = cpu_to_le16(in->recon_cnt);
	m->flags = cpu_to_le32(in->flags);
	trs_bytes_copy(m->sess_uuid, in->sess_uuid, TRS_UUID_LEN);
	trs_bytes_copy(m->path_uuid, in->path_uuid, TRS_UUID_LEN);
}

int trs_conn_req_decode(const void *buf, __u32 len,
			struct trs_conn_req_info *out, const char **why)
{
	struct trs_msg_conn_req copy;
	const struct trs_msg_conn_req *m = &copy;

	/* CM private data has no alignment guarantee: decode a copy. */
	if (!buf || len < sizeof(copy))
		return trs_fail(why, "private data shorter than conn_req",
				TRS_REJ_BAD_PRIV);
	trs_bytes_copy(&copy, buf, sizeof(copy));
	if (le16_to_cpu(m->magic) != TRS_MAGIC)
		return trs_fail(why, "bad magic", TRS_REJ_BAD_MAGIC);
	if (m->ver_major != TRS_PROTO_VER_MAJOR)
		return trs_fail(why, "major version mismatch", TRS_REJ_VERSION);
	out->ver_major = m->ver_major;
	out->ver_minor = m->ver_minor;
	out->cid = le16_to_cpu(m->cid);
	out->cid_num = le16_to_cpu(m->cid_num);
	out->recon_cnt = le16_to_cpu(m->recon_cnt);
	out->flags = le32_to_cpu(m->flags);
	if (out->cid_num == 0 || out->cid_num > TRS_MAX_CONS_PER_PATH)
		return trs_fail(why, "cid_num out of range", TRS_REJ_BAD_CID);
	if (out->cid >= out->cid_num)
		return trs_fail(why, "cid >= cid_num", TRS_REJ_BAD_CID);
	if (out->flags & ~TRS_CONN_F_ALL)
		return trs_fail(why, "unknown flags", TRS_REJ_BAD_FLAGS);
	trs_bytes_copy(out->sess_uuid, m->sess_uuid, TRS_UUID_LEN);
	trs_bytes_copy(out->path_uuid, m->path_uuid, TRS_UUID_LEN);
	return TRS_REJ_NONE;
}

int trs_conn_params_check(const struct trs_conn_params *p, const char **why)
{
	if (p->queue_depth == 0 || p->queue_depth > TRS_MAX_QUEUE_DEPTH - 1)
		return trs_fail(why, "queue_depth out of range", -EINVAL);
	if (!trs_is_pow2(p->chunk_size) || p->chunk_size < TRS_MIN_CHUNK_SIZE ||
	    p->chunk_size > TRS_MAX_CHUNK_SIZE)
		return trs_fail(why, "chunk_size not a power of two in range",
				-EINVAL);
	if (p->hdr_area < sizeof(struct trs_msg_io_req) ||
	    p->hdr_area > TRS_HDR_AREA)
		return trs_fail(why, "hdr_area out of range", -EINVAL);
	if (p->max_usr_len > p->hdr_area - sizeof(struct trs_msg_io_req))
		return trs_fail(why, "max_usr_len exceeds header area", -EINVAL);
	if (p->flags)	/* none defined yet */
		return trs_fail(why, "unknown server flags", -EINVAL);
	return 0;
}

void trs_conn_rsp_encode(struct trs_msg_conn_rsp *m,
			 const struct trs_conn_params *in)
{
	trs_bytes_zero(m, sizeof(*m));
	m->magic = cpu_to_le16(TRS_MAGIC);
	m->ver_major = in->ver_major;
	m->ver_minor = in->ver_minor;
	m->rej = cpu_to_le16(in->rej);
	m->queue_depth = cpu_to_le16((__u16)in->queue_depth);
	m->chunk_size = cpu_to_le32(in->chunk_size);
	m->max_usr_len = cpu_to_le32(in->max_usr_len);
	m->hdr_area = cpu_to_le32(in->hdr_area);
	m->flags = cpu_to_le32(in->flags);
}

int trs_conn_rsp_decode(const void *buf, __u32 len,
			struct trs_conn_params *out, const char **why)
{
	struct trs_msg_conn_rsp copy;
	const struct trs_msg_conn_rsp *m = &copy;

	/* CM private data has no alignment guarantee: decode a copy. */
	if (!buf || len < sizeof(copy))
		return trs_fail(why, "private data shorter than conn_rsp",
				-EPROTO);
	trs_bytes_copy(&copy, buf, sizeof(copy));
	if (le16_to_cpu(m->magic) != TRS_MAGIC)
		return trs_fail(why, "bad magic", -EPROTO);
	out->ver_major = m->ver_major;
	out->ver_minor = m->ver_minor;
	out->rej = le16_to_cpu(m->rej);
	out->queue_depth = le16_to_cpu(m->queue_depth);
	out->chunk_size = le32_to_cpu(m->chunk_size);
	out->max_usr_len = le32_to_cpu(m->max_usr_len);
	out->hdr_area = le32_to_cpu(m->hdr_area);
	out->flags = le32_to_cpu(m->flags);
	if (out->rej != TRS_REJ_NONE)
		return trs_fail(why, trs_rej_str(out->rej), -ECONNREFUSED);
	if (m->ver_major != TRS_PROTO_VER_MAJOR)
		return trs_fail(why, "major version mismatch", -EPROTO);
	if (m->ver_minor > TRS_PROTO_VER_MINOR)
		return trs_fail(why, "server chose a newer minor", -EPROTO);
	if (trs_conn_params_check(out, why))
		return -EPROTO;
	return 0;
}

void trs_info_req_encode(struct trs_msg_info_req *m, const char *sessname)
{
	__u32 i;

	trs_bytes_zero(m, sizeof(*m));
	m->type = cpu_to_le16(TRS_MSG_INFO_REQ);
	for (i = 0; i < TRS_SESSNAME_MAX - 1 && sessname[i]; i++)
		m->sessname[i] = sessname[i];
}

int trs_info_req_decode(const void *buf, __u32 len, char *name,
			const char **why)
{
	const struct trs_msg_info_req *m = buf;
	__u32 i;

	if (len < sizeof(*m))
		return trs_fail(why, "INFO_REQ too short", -EPROTO);
	if (le16_to_cpu(m->type) != TRS_MSG_INFO_REQ)
		return trs_fail(why, "not an INFO_REQ", -EPROTO);
	if (le32_to_cpu(m->flags))
		return trs_fail(why, "INFO_REQ unknown flags", -EPROTO);
	for (i = 0; i < TRS_SESSNAME_MAX; i++) {
		name[i] = (char)m->sessname[i];
		if (!m->sessname[i])
			break;
		/* it goes to logs and sysfs: printable ASCII, no '/' */
		if (!trs_sessname_char_ok(m->sessname[i])) {
			name[0] = '\0';
			return trs_fail(why, "session name has a control, non-ASCII or '/' character",
					-EPROTO);
		}
	}
	if (i == TRS_SESSNAME_MAX)
		return trs_fail(why, "session name not terminated", -EPROTO);
	if (i == 0)
		return trs_fail(why, "empty session name", -EPROTO);
	return 0;
}

void trs_info_rsp_encode(struct trs_msg_info_rsp *m, const struct trs_info *in)
{
	trs_bytes_zero(m, sizeof(*m));
	m->type = cpu_to_le16(TRS_MSG_INFO_RSP);
	m->status = cpu_to_le16(in->status);
	m->queue_depth = cpu_to_le16((__u16)in->queue_depth);
	m->chunk_size = cpu_to_le32(in->chunk_size);
	m->slot_size = cpu_to_le32(in->slot_size);
	m->pool_addr = cpu_to_le64(in->pool_addr);
	m->pool_rkey = cpu_to_le32(in->pool_rkey);
	m->flags = cpu_to_le32(in->flags);
}

int trs_info_rsp_decode(const void *buf, __u32 len,
			const struct trs_conn_params *p, struct trs_info *out,
			const char **why)
{
	const struct trs_msg_info_rsp *m = buf;
	__u64 span;

	if (len < sizeof(*m))
		return trs_fail(why, "INFO_RSP too short", -EPROTO);
	if (le16_to_cpu(m->type) != TRS_MSG_INFO_RSP)
		return trs_fail(why, "not an INFO_RSP", -EPROTO);
	out->status = le16_to_cpu(m->status);
	out->queue_depth = le16_to_cpu(m->queue_depth);
	out->chunk_size = le32_to_cpu(m->chunk_size);
	out->slot_size = le32_to_cpu(m->slot_size);
	out->pool_addr = le64_to_cpu(m->pool_addr);
	out->pool_rkey = le32_to_cpu(m->pool_rkey);
	out->flags = le32_to_cpu(m->flags);
	if (out->status != TRS_REJ_NONE)
		return trs_fail(why, trs_rej_str(out->status), -ECONNREFUSED);
	if (out->queue_depth != p->queue_depth ||
	    out->chunk_size != p->chunk_size)
		return trs_fail(why, "INFO_RSP disagrees with the accept",
				-EPROTO);
	if (out->slot_size != p->chunk_size + p->hdr_area)
		return trs_fail(why, "INFO_RSP slot size inconsistent", -EPROTO);
	span = (__u64)out->slot_size * out->queue_depth;
	if (out->pool_addr + span < out->pool_addr)
		return trs_fail(why, "INFO_RSP pool wraps the address space",
				-EPROTO);
	if (out->flags & ~TRS_INFO_F_ALL)
		return trs_fail(why, "INFO_RSP unknown flags", -EPROTO);
	return 0;
}

/* Returns the bytes to send. */
__u32 trs_keys_encode(struct trs_msg_keys *m, __u16 first, __u16 count,
		      const __u32 *rkeys)
{
	__u16 i;

	trs_bytes_zero(m, sizeof(*m));
	if (count > TRS_KEYS_PER_MSG)
		count = TRS_KEYS_PER_MSG;
	m->type = cpu_to_le16(TRS_MSG_KEYS);
	m->first = cpu_to_le16(first);
	m->count = cpu_to_le16(count);
	for (i = 0; i < count; i++)
		m->rkey[i] = cpu_to_le32(rkeys[i]);
	return (__u32)offsetof(struct trs_msg_keys, rkey) + 4U * count;
}

int trs_keys_decode(const void *buf, __u32 len, __u32 queue_depth,
		    __u32 *first, __u32 *count, __u32 *rkeys, const char **why)
{
	const struct trs_msg_keys *m = buf;
	__u32 i, f, n;

	if (len < offsetof(struct trs_msg_keys, rkey))
		return trs_fail(why, "KEYS too short", -EPROTO);
	if (le16_to_cpu(m->type) != TRS_MSG_KEYS)
		return trs_fail(why, "not a KEYS message", -EPROTO);
	f = le16_to_cpu(m->first);
	n = le16_to_cpu(m->count);
	if (!n || n > TRS_KEYS_PER_MSG)
		return trs_fail(why, "KEYS count out of range", -EPROTO);
	if (len < offsetof(struct trs_msg_keys, rkey) + 4 * n)
		return trs_fail(why, "KEYS shorter than its count", -EPROTO);
	if (f >= queue_depth || n > queue_depth - f)
		return trs_fail(why, "KEYS beyond the queue depth", -EPROTO);
	if (m->reserved)
		return trs_fail(why, "KEYS reserved field set", -EPROTO);
	for (i = 0; i < n; i++)
		rkeys[i] = le32_to_cpu(m->rkey[i]);
	*first = f;
	*count = n;
	return 0;
}

void trs_io_req_encode(struct trs_msg_io_req *m,
		       const struct trs_io_req_info *in)
{
	trs_bytes_zero(m, sizeof(*m));
	m->type = cpu_to_le16(in->type);
	m->flags = cpu_to_le16(in->flags);
	m->usr_len = cpu_to_le16(in->usr_len);
	m->sg_cnt = cpu_to_le16(in->sg_cnt);
	m->data_len = cpu_to_le32(in->data_len);
	m->desc.addr = cpu_to_le64(in->raddr);
	m->desc.rkey = cpu_to_le32(in->rkey);
	m->desc.len = cpu_to_le32(in->rlen);
	m->seq = cpu_to_le64(in->seq);
}

__u32 trs_io_req_copy(void *dst, const void *area, __u32 area_len,
		      __u32 max_usr_len)
{
	const __u32 n = sizeof(struct trs_msg_io_req);
	__u32 ulen;

	if (area_len < n) {
		trs_bytes_copy(dst, area, area_len);
		return area_len;
	}
	trs_bytes_copy(dst, area, n);
	/* from the copy: the peer may change the area meanwhile */
	ulen = le16_to_cpu(((const struct trs_msg_io_req *)dst)->usr_len);
	if (ulen > max_usr_len)
		ulen = max_usr_len + 1;	/* enough for the decoder to refuse */
	if (ulen > area_len - n)
		ulen = area_len - n;
	trs_bytes_copy((__u8 *)dst + n, (const __u8 *)area + n, ulen);
	return n + ulen;
}

int trs_io_req_decode(const void *hdr, __u32 hdr_len, __u32 chunk_size,
		      __u32 max_usr_len, struct trs_io_req_info *out,
		      const char **why)
{
	const struct trs_msg_io_req *m = hdr;

	if (hdr_len < sizeof(*m))
		return trs_fail(why, "header area too small", -EPROTO);
	out->type = le16_to_cpu(m->type);
	out->flags = le16_to_cpu(m->flags);
	out->usr_len = le16_to_cpu(m->usr_len);
	out->sg_cnt = le16_to_cpu(m->sg_cnt);
	out->data_len = le32_to_cpu(m->data_len);
	out->raddr = le64_to_cpu(m->desc.addr);
	out->rkey = le32_to_cpu(m->desc.rkey);
	out->rlen = le32_to_cpu(m->desc.len);
	out->seq = le64_to_cpu(m->seq);

	if (out->type != TRS_MSG_IO_WRITE && out->type != TRS_MSG_IO_READ)
		return trs_fail(why, "unknown request type", -EBADMSG);
	if (out->flags & ~TRS_IO_F_ALL)
		return trs_fail(why, "unknown request flags", -EBADMSG);
	if (out->usr_len > max_usr_len)
		return trs_fail(why, "user header longer than max_usr_len",
				-EMSGSIZE);
	if ((__u64)sizeof(*m) + out->usr_len > hdr_len)
		return trs_fail(why, "user header exceeds the header area",
				-EMSGSIZE);
	if (out->type == TRS_MSG_IO_WRITE && (out->flags & TRS_IO_F_PULL)) {
		if (out->sg_cnt != 1)
			return trs_fail(why, "pulled write without one buffer",
					-EBADMSG);
		if (!out->data_len || out->rlen != out->data_len)
			return trs_fail(why, "pulled write's buffer length is not "
					"its data_len", -EBADMSG);
		if (out->data_len > chunk_size)
			return trs_fail(why, "write data_len exceeds chunk",
					-EMSGSIZE);
		if (out->raddr + out->rlen < out->raddr)
			return trs_fail(why, "write buffer wraps the address space",
					-EBADMSG);
		return 0;
	}
	if (out->type == TRS_MSG_IO_WRITE) {
		if (out->sg_cnt != 0)
			return trs_fail(why, "write with sg_cnt != 0", -EBADMSG);
		if (out->flags)
			return trs_fail(why, "write with read flags", -EBADMSG);
		if (out->data_len > chunk_size)
			return trs_fail(why, "write data_len exceeds chunk",
					-EMSGSIZE);
		return 0;
	}
	/* read */
	if (out->flags & TRS_IO_F_PULL)
		return trs_fail(why, "read with the pull flag", -EBADMSG);
	if (out->data_len != 0)
		return trs_fail(why, "read with data_len != 0", -EBADMSG);
	if (out->sg_cnt > TRS_MAX_SG)
		return trs_fail(why, "read sg_cnt too large", -EBADMSG);
	if (out->sg_cnt == 0) {
		if (out->flags || out->rlen || out->rkey || out->raddr)
			return trs_fail(why, "read without buffer has a descriptor",
					-EBADMSG);
		return 0;
	}
	if (out->rlen > chunk_size)
		return trs_fail(why, "read length exceeds chunk", -EMSGSIZE);
	if (out->raddr + out->rlen < out->raddr)
		return trs_fail(why, "read buffer wraps the address space",
				-EBADMSG);
	return 0;
}

int trs_io_resp_check(const struct trs_io_req_info *req, int *status,
		      __u32 *len)
{
	__u32 want;

	if (*status > 0)
		*status = -*status;
	if (*status < -TRS_IMM_MAX_ERRNO)
		*status = -EIO;
	if (req->type != TRS_MSG_IO_READ) {
		*len = 0;
		return 0;
	}
	want = req->sg_cnt ? req->rlen : 0;
	if (*len > want || (!*status && *len != want)) {
		*status = -EIO;
		*len = 0;
		return -EINVAL;
	}
	return 0;
}

void trs_io_rsp_encode(struct trs_msg_io_rsp *m,
		       const struct trs_io_rsp_info *in)
{
	int st = in->status < 0 ? -in->status : in->status;

	trs_bytes_zero(m, sizeof(*m));
	m->type = cpu_to_le16(TRS_MSG_IO_RSP);
	m->chunk_id = cpu_to_le16(in->chunk_id);
	m->status = cpu_to_le32((__u32)st);
	m->flags = cpu_to_le32(in->flags);
	m->len = cpu_to_le32(in->len);
}

int trs_io_rsp_decode(const void *buf, __u32 len, __u32 queue_depth,
		      struct trs_io_rsp_info *out, const char **why)
{
	const struct trs_msg_io_rsp *m = buf;
	__u32 st;

	if (len < sizeof(*m))
		return trs_fail(why, "IO_RSP too short", -EPROTO);
	if (le16_to_cpu(m->type) != TRS_MSG_IO_RSP)
		return trs_fail(why, "not an IO_RSP", -EPROTO);
	out->chunk_id = le16_to_cpu(m->chunk_id);
	if (out->chunk_id >= queue_depth)
		return trs_fail(why, "IO_RSP chunk id >= queue depth", -ERANGE);
	st = le32_to_cpu(m->status);
	if (st > TRS_IMM_MAX_ERRNO)
		return trs_fail(why, "IO_RSP status out of range", -EPROTO);
	out->status = -(int)st;
	out->flags = le32_to_cpu(m->flags);
	if (out->flags & ~TRS_RSP_F_INVALIDATED)
		return trs_fail(why, "IO_RSP unknown flags", -EPROTO);
	out->len = le32_to_cpu(m->len);
	return 0;
}

int trs_imm_decode_srv(__u32 imm, __u32 queue_depth, __u32 *type_out,
		       __u32 *id_out, const char **why)
{
	__u32 type = trs_imm_type(imm), id = trs_imm_id(imm);

	switch (type) {
	case TRS_IMM_IO_REQ:
		if (id >= queue_depth)
			return trs_fail(why, "chunk id >= queue depth", -ERANGE);
		fallthrough;
	case TRS_IMM_HB:
	case TRS_IMM_HB_ACK:
		if (trs_imm_err(imm))
			return trs_fail(why, "error bits set in a request",
					-EPROTO);
		break;
	default:
		return trs_fail(why, "immediate type not valid towards a server",
				-EPROTO);
	}
	*type_out = type;
	*id_out = id;
	return 0;
}

int trs_imm_decode_clt(__u32 imm, __u32 queue_depth, __u32 *type_out,
		       __u32 *id_out, int *err_out, const char **why)
{
	__u32 type = trs_imm_type(imm), id = trs_imm_id(imm);

	switch (type) {
	case TRS_IMM_IO_RSP:
		if (id >= queue_depth)
			return trs_fail(why, "chunk id >= queue depth", -ERANGE);
		break;
	case TRS_IMM_HB:
	case TRS_IMM_HB_ACK:
		if (trs_imm_err(imm))
			return trs_fail(why, "error bits set in a heartbeat",
					-EPROTO);
		break;
	default:
		return trs_fail(why, "immediate type not valid towards a client",
				-EPROTO);
	}
	*type_out = type;
	*id_out = id;
	*err_out = trs_imm_err(imm);
	return 0;
}
