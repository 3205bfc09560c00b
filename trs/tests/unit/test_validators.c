// SPDX-License-Identifier: GPL-2.0-or-later
/* test_validators.c - every decoder fed valid and malformed input; one case
 * per rejection rule. */
#include "trs_common.h"
#include "unit.h"

#define QD	128
#define CHUNK	(128 * 1024)

static const char *why;

/* ---- conn_req ---- */
static void good_conn_req(struct trs_msg_conn_req *m)
{
	struct trs_conn_req_info in = {
		.ver_major = TRS_PROTO_VER_MAJOR, .ver_minor = TRS_PROTO_VER_MINOR,
		.cid = 1, .cid_num = 2, .recon_cnt = 7, .flags = TRS_CONN_F_FIRST,
	};

	memset(in.sess_uuid, 0xaa, TRS_UUID_LEN);
	memset(in.path_uuid, 0xbb, TRS_UUID_LEN);
	trs_conn_req_encode(m, &in);
}

static int conn_req_valid(void)
{
	struct trs_msg_conn_req m;
	struct trs_conn_req_info o;

	good_conn_req(&m);
	UCHECK_EQ(trs_conn_req_decode(&m, sizeof(m), &o, &why), TRS_REJ_NONE);
	UCHECK_EQ(o.cid, 1);
	UCHECK_EQ(o.cid_num, 2);
	UCHECK_EQ(o.recon_cnt, 7);
	UCHECK_EQ(o.flags, TRS_CONN_F_FIRST);
	UCHECK_EQ(o.sess_uuid[15], 0xaa);
	UCHECK_EQ(o.path_uuid[0], 0xbb);
	return 0;
}

static int conn_req_reject(int (*mut)(struct trs_msg_conn_req *, __u32 *),
			   int want)
{
	struct trs_msg_conn_req m;
	struct trs_conn_req_info o;
	__u32 len = sizeof(m);

	good_conn_req(&m);
	mut(&m, &len);
	UCHECK_EQ(trs_conn_req_decode(&m, len, &o, &why), want);
	UCHECK(why && *why);
	return 0;
}

static int m_short(struct trs_msg_conn_req *m, __u32 *l) { (void)m; *l = 55; return 0; }
static int m_magic(struct trs_msg_conn_req *m, __u32 *l) { (void)l; m->magic = cpu_to_le16(0x1bbd); return 0; }
static int m_major(struct trs_msg_conn_req *m, __u32 *l) { (void)l; m->ver_major++; return 0; }
static int m_cidnum0(struct trs_msg_conn_req *m, __u32 *l) { (void)l; m->cid_num = 0; m->cid = 0; return 0; }
static int m_cidnum_big(struct trs_msg_conn_req *m, __u32 *l) { (void)l; m->cid_num = cpu_to_le16(TRS_MAX_CONS_PER_PATH + 1); return 0; }
static int m_cid_eq(struct trs_msg_conn_req *m, __u32 *l) { (void)l; m->cid = m->cid_num; return 0; }
static int m_flags(struct trs_msg_conn_req *m, __u32 *l) { (void)l; m->flags = cpu_to_le32(0x80); return 0; }

static int conn_req_null(void)
{
	struct trs_conn_req_info o;

	UCHECK_EQ(trs_conn_req_decode(NULL, 0, &o, &why), TRS_REJ_BAD_PRIV);
	return 0;
}

static int version_negotiation(void)
{
	__u8 minor = 0xff;

	UCHECK_EQ(trs_negotiate_version(TRS_PROTO_VER_MAJOR, TRS_PROTO_VER_MINOR + 5,
					&minor), TRS_REJ_NONE);
	UCHECK_EQ(minor, TRS_PROTO_VER_MINOR);
	UCHECK_EQ(trs_negotiate_version(TRS_PROTO_VER_MAJOR, 0, &minor), TRS_REJ_NONE);
	UCHECK_EQ(minor, 0);
	UCHECK_EQ(trs_negotiate_version(TRS_PROTO_VER_MAJOR + 1, 0, &minor),
		  TRS_REJ_VERSION);
	return 0;
}

static int rej_str_all(void)
{
	int i;

	for (i = 0; i < TRS_REJ_MAX; i++)
		UCHECK(strcmp(trs_rej_str(i), "unknown reject code") != 0);
	UCHECK(!strcmp(trs_rej_str(TRS_REJ_MAX), "unknown reject code"));
	UCHECK(!strcmp(trs_rej_str(-1), "unknown reject code"));
	return 0;
}

/* ---- conn_rsp ---- */
static struct trs_conn_params good_params(void)
{
	struct trs_conn_params p = {
		.ver_major = TRS_PROTO_VER_MAJOR, .ver_minor = TRS_PROTO_VER_MINOR,
		.queue_depth = QD, .chunk_size = CHUNK, .hdr_area = TRS_HDR_AREA,
		.max_usr_len = 512,
	};
	return p;
}

static int conn_rsp_case(void (*mut)(struct trs_conn_params *), int want)
{
	struct trs_conn_params p = good_params(), o;
	struct trs_msg_conn_rsp m;

	if (mut)
		mut(&p);
	trs_conn_rsp_encode(&m, &p);
	UCHECK_EQ(trs_conn_rsp_decode(&m, sizeof(m), &o, &why), want);
	if (!want) {
		UCHECK_EQ(o.queue_depth, QD);
		UCHECK_EQ(o.chunk_size, CHUNK);
		UCHECK_EQ(o.max_usr_len, 512);
	}
	return 0;
}

static void p_rej(struct trs_conn_params *p) { p->rej = TRS_REJ_VERSION; }
static void p_qd0(struct trs_conn_params *p) { p->queue_depth = 0; }
static void p_chunk_npow2(struct trs_conn_params *p) { p->chunk_size = 100000; }
static void p_chunk_small(struct trs_conn_params *p) { p->chunk_size = 2048; }
static void p_usr_big(struct trs_conn_params *p) { p->max_usr_len = TRS_HDR_AREA; }
static void p_hdr_small(struct trs_conn_params *p) { p->hdr_area = 16; p->max_usr_len = 0; }
static void p_flags(struct trs_conn_params *p) { p->flags = 0x100; }
/* bit 0 was a re-keying flag once; every server flag is reserved now */
static void p_flags_bit0(struct trs_conn_params *p) { p->flags = 1; }
static void p_major(struct trs_conn_params *p) { p->ver_major = 9; }
static void p_minor(struct trs_conn_params *p) { p->ver_minor = TRS_PROTO_VER_MINOR + 1; }

static int conn_rsp_short(void)
{
	struct trs_msg_conn_rsp m;
	struct trs_conn_params p = good_params(), o;

	trs_conn_rsp_encode(&m, &p);
	UCHECK_EQ(trs_conn_rsp_decode(&m, 10, &o, &why), -EPROTO);
	m.magic = 0;
	UCHECK_EQ(trs_conn_rsp_decode(&m, sizeof(m), &o, &why), -EPROTO);
	return 0;
}

/*
 * CM private data arrives at any address (librdmacm hands out a pointer into
 * its event, our event copy may place it oddly): decoding it at an odd
 * address must be defined behaviour (UBSan in this build checks).
 */
static int conn_unaligned(void)
{
	union {
		__u64 align;
		__u8 b[1 + sizeof(struct trs_msg_conn_req) +
			sizeof(struct trs_msg_conn_rsp)];
	} u;
	struct trs_msg_conn_req req;
	struct trs_msg_conn_rsp rsp;
	struct trs_conn_params p = good_params(), po;
	struct trs_conn_req_info o;

	good_conn_req(&req);
	memcpy(u.b + 1, &req, sizeof(req));
	UCHECK_EQ(trs_conn_req_decode(u.b + 1, sizeof(req), &o, &why),
		  TRS_REJ_NONE);
	UCHECK_EQ(o.cid_num, 2);
	trs_conn_rsp_encode(&rsp, &p);
	memcpy(u.b + 1, &rsp, sizeof(rsp));
	UCHECK_EQ(trs_conn_rsp_decode(u.b + 1, sizeof(rsp), &po, &why), 0);
	UCHECK_EQ(po.chunk_size, CHUNK);
	return 0;
}

/* ---- trs_io_req_copy ---- */
static int io_req_copy_cases(void)
{
	const __u32 n = sizeof(struct trs_msg_io_req);
	__u8 area[TRS_HDR_AREA], dst[TRS_HDR_AREA];
	struct trs_io_req_info in = { .type = TRS_MSG_IO_WRITE, .usr_len = 24 };
	struct trs_io_req_info out;
	__u32 len;

	memset(area, 0xab, sizeof(area));
	trs_io_req_encode((void *)area, &in);
	memset(dst, 0, sizeof(dst));
	len = trs_io_req_copy(dst, area, sizeof(area), 64);
	UCHECK_EQ(len, n + 24);
	UCHECK(!memcmp(dst, area, n + 24));
	UCHECK_EQ(dst[n + 24], 0);		/* nothing past the user header */
	UCHECK_EQ(trs_io_req_decode(dst, len, 1 << 17, 64, &out, &why), 0);
	UCHECK_EQ(out.usr_len, 24);
	/* a usr_len above max_usr_len: max + 1 copied, the decoder refuses */
	in.usr_len = 1000;
	trs_io_req_encode((void *)area, &in);
	len = trs_io_req_copy(dst, area, sizeof(area), 64);
	UCHECK_EQ(len, n + 65);
	UCHECK_EQ(trs_io_req_decode(dst, len, 1 << 17, 64, &out, &why), -EMSGSIZE);
	UCHECK(strstr(why, "max_usr_len"));
	/* within max_usr_len but past the area: never read past it */
	in.usr_len = 200;
	trs_io_req_encode((void *)area, &in);
	len = trs_io_req_copy(dst, area, 128, 4096);
	UCHECK_EQ(len, 128);
	UCHECK_EQ(trs_io_req_decode(dst, len, 1 << 17, 4096, &out, &why), -EMSGSIZE);
	UCHECK(strstr(why, "header area"));
	/* an area smaller than the header */
	UCHECK_EQ(trs_io_req_copy(dst, area, 16, 64), 16);
	return 0;
}

/* ---- info ---- */
static int info_req_cases(void)
{
	struct trs_msg_info_req m;
	char name[TRS_SESSNAME_MAX];

	trs_info_req_encode(&m, "sess-A");
	UCHECK_EQ(trs_info_req_decode(&m, sizeof(m), name, &why), 0);
	UCHECK(!strcmp(name, "sess-A"));
	UCHECK_EQ(trs_info_req_decode(&m, sizeof(m) - 1, name, &why), -EPROTO);
	memset(m.sessname, 'x', sizeof(m.sessname));
	UCHECK_EQ(trs_info_req_decode(&m, sizeof(m), name, &why), -EPROTO);
	trs_info_req_encode(&m, "");
	UCHECK_EQ(trs_info_req_decode(&m, sizeof(m), name, &why), -EPROTO);
	trs_info_req_encode(&m, "a");
	m.type = cpu_to_le16(TRS_MSG_INFO_RSP);
	UCHECK_EQ(trs_info_req_decode(&m, sizeof(m), name, &why), -EPROTO);
	trs_info_req_encode(&m, "a");
	m.flags = cpu_to_le32(1);
	UCHECK_EQ(trs_info_req_decode(&m, sizeof(m), name, &why), -EPROTO);
	/* names reach logs and sysfs: printable ASCII without '/' only */
	{
		static const char *const bad[] = {
			"a\nb", "esc\033[2J", "tab\there", "sl/ash", "\x7f",
			"hi\xc3\xa9",
		};
		unsigned int k;

		for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			trs_info_req_encode(&m, bad[k]);
			UCHECK_EQ(trs_info_req_decode(&m, sizeof(m), name, &why),
				  -EPROTO);
			UCHECK(strstr(why, "session name"));
		}
		trs_info_req_encode(&m, "fio-tb_guest.1-263:x@y ~");
		UCHECK_EQ(trs_info_req_decode(&m, sizeof(m), name, &why), 0);
	}
	/* long names are truncated, still terminated */
	memset(name, 'y', sizeof(name));
	name[TRS_SESSNAME_MAX - 1] = 0;
	{
		char longname[100];

		memset(longname, 'z', 99);
		longname[99] = 0;
		trs_info_req_encode(&m, longname);
		UCHECK_EQ(trs_info_req_decode(&m, sizeof(m), name, &why), 0);
		UCHECK_EQ(strlen(name), TRS_SESSNAME_MAX - 1);
	}
	return 0;
}

static int info_rsp_cases(void)
{
	struct trs_conn_params p = good_params();
	struct trs_info in = {
		.queue_depth = QD, .chunk_size = CHUNK,
		.slot_size = CHUNK + TRS_HDR_AREA, .pool_addr = 0x10000,
		.pool_rkey = 0x1234,
	}, o, bad;
	struct trs_msg_info_rsp m;

	trs_info_rsp_encode(&m, &in);
	UCHECK_EQ(trs_info_rsp_decode(&m, sizeof(m), &p, &o, &why), 0);
	UCHECK_EQ(o.pool_rkey, 0x1234);
	UCHECK_EQ(o.pool_addr, 0x10000);
	UCHECK_EQ(trs_info_rsp_decode(&m, sizeof(m) - 1, &p, &o, &why), -EPROTO);

	bad = in; bad.status = TRS_REJ_NOMEM;
	trs_info_rsp_encode(&m, &bad);
	UCHECK_EQ(trs_info_rsp_decode(&m, sizeof(m), &p, &o, &why), -ECONNREFUSED);
	bad = in; bad.queue_depth = QD + 1;
	trs_info_rsp_encode(&m, &bad);
	UCHECK_EQ(trs_info_rsp_decode(&m, sizeof(m), &p, &o, &why), -EPROTO);
	bad = in; bad.slot_size = CHUNK;
	trs_info_rsp_encode(&m, &bad);
	UCHECK_EQ(trs_info_rsp_decode(&m, sizeof(m), &p, &o, &why), -EPROTO);
	bad = in; bad.pool_addr = ~0ULL - 100;
	trs_info_rsp_encode(&m, &bad);
	UCHECK_EQ(trs_info_rsp_decode(&m, sizeof(m), &p, &o, &why), -EPROTO);
	bad = in; bad.flags = 0x8;
	trs_info_rsp_encode(&m, &bad);
	UCHECK_EQ(trs_info_rsp_decode(&m, sizeof(m), &p, &o, &why), -EPROTO);
	bad = in; bad.flags = TRS_INFO_F_REKEY;	/* chunk_mode rekey */
	trs_info_rsp_encode(&m, &bad);
	UCHECK_EQ(trs_info_rsp_decode(&m, sizeof(m), &p, &o, &why), 0);
	UCHECK_EQ(o.flags, TRS_INFO_F_REKEY);
	bad = in; bad.flags = TRS_INFO_F_PULL | TRS_INFO_F_REKEY;	/* pulls writes */
	trs_info_rsp_encode(&m, &bad);
	UCHECK_EQ(trs_info_rsp_decode(&m, sizeof(m), &p, &o, &why), 0);
	UCHECK_EQ(o.flags, TRS_INFO_F_PULL | TRS_INFO_F_REKEY);
	bad = in; bad.flags = 4;
	trs_info_rsp_encode(&m, &bad);
	UCHECK_EQ(trs_info_rsp_decode(&m, sizeof(m), &p, &o, &why), -EPROTO);
	trs_info_rsp_encode(&m, &in);
	m.type = cpu_to_le16(TRS_MSG_INFO_REQ);
	UCHECK_EQ(trs_info_rsp_decode(&m, sizeof(m), &p, &o, &why), -EPROTO);
	return 0;
}

/* ---- KEYS (chunk_mode rekey) ---- */
static int keys_cases(void)
{
	__u32 keys[TRS_KEYS_PER_MSG], out[TRS_KEYS_PER_MSG], first, count, len, i;
	struct trs_msg_keys m;

	for (i = 0; i < TRS_KEYS_PER_MSG; i++)
		keys[i] = 0x100 * (i + 1) + i;
	len = trs_keys_encode(&m, 4, 28, keys);
	UCHECK_EQ(len, sizeof(m));
	UCHECK_EQ(trs_keys_decode(&m, len, 32, &first, &count, out, &why), 0);
	UCHECK_EQ(first, 4);
	UCHECK_EQ(count, 28);
	UCHECK_EQ(out[27], keys[27]);
	/* the last chunk alone */
	len = trs_keys_encode(&m, 31, 1, keys);
	UCHECK_EQ(len, 12);
	UCHECK_EQ(trs_keys_decode(&m, len, 32, &first, &count, out, &why), 0);
	UCHECK_EQ(out[0], keys[0]);
	/* beyond the queue depth, short, wrong count, wrong type, reserved */
	len = trs_keys_encode(&m, 30, 3, keys);
	UCHECK_EQ(trs_keys_decode(&m, len, 32, &first, &count, out, &why), -EPROTO);
	UCHECK(strstr(why, "queue depth"));
	len = trs_keys_encode(&m, 0, 4, keys);
	UCHECK_EQ(trs_keys_decode(&m, len - 1, 32, &first, &count, out, &why), -EPROTO);
	UCHECK_EQ(trs_keys_decode(&m, 7, 32, &first, &count, out, &why), -EPROTO);
	m.count = cpu_to_le16(0);
	UCHECK_EQ(trs_keys_decode(&m, len, 32, &first, &count, out, &why), -EPROTO);
	m.count = cpu_to_le16(TRS_KEYS_PER_MSG + 1);
	UCHECK_EQ(trs_keys_decode(&m, sizeof(m), 64, &first, &count, out, &why), -EPROTO);
	len = trs_keys_encode(&m, 0, 4, keys);
	m.reserved = cpu_to_le16(1);
	UCHECK_EQ(trs_keys_decode(&m, len, 32, &first, &count, out, &why), -EPROTO);
	len = trs_keys_encode(&m, 0, 4, keys);
	m.type = cpu_to_le16(TRS_MSG_INFO_RSP);
	UCHECK_EQ(trs_keys_decode(&m, len, 32, &first, &count, out, &why), -EPROTO);
	/* no queue: no chunk */
	len = trs_keys_encode(&m, 0, 1, keys);
	UCHECK_EQ(trs_keys_decode(&m, len, 0, &first, &count, out, &why), -EPROTO);
	return 0;
}

/* ---- io_req ---- */
static unsigned char area[TRS_HDR_AREA];

static struct trs_io_req_info good_write(void)
{
	struct trs_io_req_info r = { .type = TRS_MSG_IO_WRITE, .usr_len = 32,
				     .data_len = 4096, .seq = 9 };
	return r;
}

static struct trs_io_req_info good_pull(void)
{
	struct trs_io_req_info r = { .type = TRS_MSG_IO_WRITE, .usr_len = 32,
				     .data_len = 8192, .sg_cnt = 1,
				     .flags = TRS_IO_F_PULL | TRS_IO_F_NEED_INV,
				     .raddr = 0x7f0000002000ULL, .rkey = 0x43,
				     .rlen = 8192 };
	return r;
}

static struct trs_io_req_info good_read(void)
{
	struct trs_io_req_info r = { .type = TRS_MSG_IO_READ, .usr_len = 32,
				     .sg_cnt = 1, .flags = TRS_IO_F_NEED_INV,
				     .raddr = 0x7f0000001000ULL, .rkey = 0x42,
				     .rlen = CHUNK };
	return r;
}

static int io_case(struct trs_io_req_info r, __u32 hdr_len, int want)
{
	struct trs_io_req_info o;

	memset(area, 0, sizeof(area));
	trs_io_req_encode((struct trs_msg_io_req *)area, &r);
	UCHECK_EQ(trs_io_req_decode(area, hdr_len, CHUNK, 512, &o, &why), want);
	if (want)
		UCHECK(why && *why);
	else {
		UCHECK_EQ(o.type, r.type);
		UCHECK_EQ(o.data_len, r.data_len);
		UCHECK_EQ(o.rkey, r.rkey);
		UCHECK_EQ(o.raddr, r.raddr);
		UCHECK_EQ(o.rlen, r.rlen);
		UCHECK_EQ(o.usr_len, r.usr_len);
	}
	return 0;
}

#define IOCASE(name, base, field_assign, len, want) \
static int name(void) { struct trs_io_req_info r = base(); field_assign; \
			return io_case(r, len, want); }

IOCASE(io_write_valid, good_write, (void)0, TRS_HDR_AREA, 0)
IOCASE(io_write_full_chunk, good_write, r.data_len = CHUNK, TRS_HDR_AREA, 0)
IOCASE(io_write_zero_len, good_write, r.data_len = 0, TRS_HDR_AREA, 0)
IOCASE(io_read_valid, good_read, (void)0, TRS_HDR_AREA, 0)
IOCASE(io_read_no_buffer, good_read, (r.sg_cnt = 0, r.flags = 0, r.raddr = 0,
	r.rkey = 0, r.rlen = 0), TRS_HDR_AREA, 0)
IOCASE(io_rej_short_area, good_write, (void)0, sizeof(struct trs_msg_io_req) - 1, -EPROTO)
IOCASE(io_rej_type_zero, good_write, r.type = 0, TRS_HDR_AREA, -EBADMSG)
IOCASE(io_rej_type_rsp, good_write, r.type = TRS_MSG_IO_RSP, TRS_HDR_AREA, -EBADMSG)
IOCASE(io_rej_type_big, good_write, r.type = 0xffff, TRS_HDR_AREA, -EBADMSG)
IOCASE(io_rej_flags, good_read, r.flags = 0x8000, TRS_HDR_AREA, -EBADMSG)
IOCASE(io_rej_usr_len_max, good_write, r.usr_len = 513, TRS_HDR_AREA, -EMSGSIZE)
IOCASE(io_rej_usr_len_area, good_write, r.usr_len = 100, sizeof(struct trs_msg_io_req) + 99, -EMSGSIZE)
IOCASE(io_rej_write_sg, good_write, r.sg_cnt = 1, TRS_HDR_AREA, -EBADMSG)
IOCASE(io_rej_write_flags, good_write, r.flags = TRS_IO_F_NEED_INV, TRS_HDR_AREA, -EBADMSG)
IOCASE(io_rej_write_len, good_write, r.data_len = CHUNK + 1, TRS_HDR_AREA, -EMSGSIZE)
IOCASE(io_rej_write_len_huge, good_write, r.data_len = 0xffffffff, TRS_HDR_AREA, -EMSGSIZE)
IOCASE(io_pull_valid, good_pull, (void)0, TRS_HDR_AREA, 0)
IOCASE(io_pull_local_inv, good_pull, r.flags = TRS_IO_F_PULL, TRS_HDR_AREA, 0)
IOCASE(io_pull_full_chunk, good_pull, (r.data_len = CHUNK, r.rlen = CHUNK), TRS_HDR_AREA, 0)
IOCASE(io_rej_pull_no_sg, good_pull, r.sg_cnt = 0, TRS_HDR_AREA, -EBADMSG)
IOCASE(io_rej_pull_sg2, good_pull, r.sg_cnt = 2, TRS_HDR_AREA, -EBADMSG)
IOCASE(io_rej_pull_len_differs, good_pull, r.rlen = 4096, TRS_HDR_AREA, -EBADMSG)
IOCASE(io_rej_pull_zero, good_pull, (r.data_len = 0, r.rlen = 0), TRS_HDR_AREA, -EBADMSG)
IOCASE(io_rej_pull_len, good_pull, (r.data_len = CHUNK + 1, r.rlen = CHUNK + 1), TRS_HDR_AREA, -EMSGSIZE)
IOCASE(io_rej_pull_wrap, good_pull, r.raddr = ~0ULL - 10, TRS_HDR_AREA, -EBADMSG)
IOCASE(io_rej_read_pull, good_read, r.flags = TRS_IO_F_PULL, TRS_HDR_AREA, -EBADMSG)
IOCASE(io_rej_read_data_len, good_read, r.data_len = 1, TRS_HDR_AREA, -EBADMSG)
IOCASE(io_rej_read_sg2, good_read, r.sg_cnt = 2, TRS_HDR_AREA, -EBADMSG)
IOCASE(io_rej_read_sg_huge, good_read, r.sg_cnt = 0xffff, TRS_HDR_AREA, -EBADMSG)
IOCASE(io_rej_read_len, good_read, r.rlen = CHUNK + 1, TRS_HDR_AREA, -EMSGSIZE)
IOCASE(io_rej_read_wrap, good_read, r.raddr = ~0ULL - 10, TRS_HDR_AREA, -EBADMSG)
IOCASE(io_rej_read_nobuf_desc, good_read, (r.sg_cnt = 0, r.flags = 0), TRS_HDR_AREA, -EBADMSG)
IOCASE(io_rej_read_nobuf_inv, good_read, (r.sg_cnt = 0, r.raddr = 0, r.rkey = 0,
	r.rlen = 0), TRS_HDR_AREA, -EBADMSG)

/* ---- io_rsp ---- */
static int io_rsp_cases(void)
{
	struct trs_io_rsp_info in = { .chunk_id = QD - 1, .status = -EIO,
				      .flags = TRS_RSP_F_INVALIDATED, .len = 4096 }, o;
	struct trs_msg_io_rsp m;

	trs_io_rsp_encode(&m, &in);
	UCHECK_EQ(trs_io_rsp_decode(&m, sizeof(m), QD, &o, &why), 0);
	UCHECK_EQ(o.status, -EIO);
	UCHECK_EQ(o.chunk_id, QD - 1);
	UCHECK_EQ(o.len, 4096);
	UCHECK_EQ(trs_io_rsp_decode(&m, sizeof(m) - 1, QD, &o, &why), -EPROTO);
	UCHECK_EQ(trs_io_rsp_decode(&m, sizeof(m), QD - 1, &o, &why), -ERANGE);
	m.status = cpu_to_le32(TRS_IMM_MAX_ERRNO + 1);
	UCHECK_EQ(trs_io_rsp_decode(&m, sizeof(m), QD, &o, &why), -EPROTO);
	trs_io_rsp_encode(&m, &in);
	m.flags = cpu_to_le32(2);
	UCHECK_EQ(trs_io_rsp_decode(&m, sizeof(m), QD, &o, &why), -EPROTO);
	trs_io_rsp_encode(&m, &in);
	m.type = cpu_to_le16(TRS_MSG_IO_READ);
	UCHECK_EQ(trs_io_rsp_decode(&m, sizeof(m), QD, &o, &why), -EPROTO);
	return 0;
}

/* ---- the answer a server may send (trs_io_resp_check) ---- */
static int resp_check_case(__u16 type, __u16 sg_cnt, __u32 rlen, int st_in,
			   __u32 len_in, int want_ret, int want_st,
			   __u32 want_len)
{
	struct trs_io_req_info r = { .type = type, .sg_cnt = sg_cnt,
				     .rlen = rlen };
	int st = st_in;
	__u32 len = len_in;

	UCHECK_EQ(trs_io_resp_check(&r, &st, &len), want_ret);
	UCHECK_EQ(st, want_st);
	UCHECK_EQ(len, want_len);
	return 0;
}

static int io_resp_check(void)
{
	const __u16 R = TRS_MSG_IO_READ, W = TRS_MSG_IO_WRITE;

	/* reads: exact length, short only with an error, never longer */
	UCHECK_EQ(resp_check_case(R, 1, 4096, 0, 4096, 0, 0, 4096), 0);
	UCHECK_EQ(resp_check_case(R, 1, 4096, 0, 4095, -EINVAL, -EIO, 0), 0);
	UCHECK_EQ(resp_check_case(R, 1, 4096, 0, 0, -EINVAL, -EIO, 0), 0);
	UCHECK_EQ(resp_check_case(R, 1, 4096, -ENOSPC, 100, 0, -ENOSPC, 100), 0);
	UCHECK_EQ(resp_check_case(R, 1, 4096, -EIO, 4097, -EINVAL, -EIO, 0), 0);
	UCHECK_EQ(resp_check_case(R, 1, 4096, 0, 4097, -EINVAL, -EIO, 0), 0);
	/* a read without a buffer answers no data */
	UCHECK_EQ(resp_check_case(R, 0, 0, 0, 0, 0, 0, 0), 0);
	UCHECK_EQ(resp_check_case(R, 0, 0, 0, 1, -EINVAL, -EIO, 0), 0);
	/* writes carry no data back; statuses of either sign, capped */
	UCHECK_EQ(resp_check_case(W, 0, 0, 0, 512, 0, 0, 0), 0);
	UCHECK_EQ(resp_check_case(W, 0, 0, EROFS, 0, 0, -EROFS, 0), 0);
	UCHECK_EQ(resp_check_case(W, 0, 0, -(TRS_IMM_MAX_ERRNO + 1), 0, 0,
				  -EIO, 0), 0);
	UCHECK_EQ(resp_check_case(W, 0, 0, -TRS_IMM_MAX_ERRNO, 0, 0,
				  -TRS_IMM_MAX_ERRNO, 0), 0);
	return 0;
}

int main(void)
{
	URUN(conn_req_valid);
	URUN(keys_cases);
	URUN_NAMED("conn_req_rej_short", conn_req_reject(m_short, TRS_REJ_BAD_PRIV));
	URUN_NAMED("conn_req_rej_magic", conn_req_reject(m_magic, TRS_REJ_BAD_MAGIC));
	URUN_NAMED("conn_req_rej_major", conn_req_reject(m_major, TRS_REJ_VERSION));
	URUN_NAMED("conn_req_rej_cid_num_0", conn_req_reject(m_cidnum0, TRS_REJ_BAD_CID));
	URUN_NAMED("conn_req_rej_cid_num_big", conn_req_reject(m_cidnum_big, TRS_REJ_BAD_CID));
	URUN_NAMED("conn_req_rej_cid_eq_num", conn_req_reject(m_cid_eq, TRS_REJ_BAD_CID));
	URUN_NAMED("conn_req_rej_flags", conn_req_reject(m_flags, TRS_REJ_BAD_FLAGS));
	URUN(conn_req_null);
	URUN(version_negotiation);
	URUN(rej_str_all);
	URUN_NAMED("conn_rsp_valid", conn_rsp_case(NULL, 0));
	URUN_NAMED("conn_rsp_reject_code", conn_rsp_case(p_rej, -ECONNREFUSED));
	URUN_NAMED("conn_rsp_rej_qd0", conn_rsp_case(p_qd0, -EPROTO));
	URUN_NAMED("conn_rsp_rej_chunk_npow2", conn_rsp_case(p_chunk_npow2, -EPROTO));
	URUN_NAMED("conn_rsp_rej_chunk_small", conn_rsp_case(p_chunk_small, -EPROTO));
	URUN_NAMED("conn_rsp_rej_usr_big", conn_rsp_case(p_usr_big, -EPROTO));
	URUN_NAMED("conn_rsp_rej_hdr_small", conn_rsp_case(p_hdr_small, -EPROTO));
	URUN_NAMED("conn_rsp_rej_flags", conn_rsp_case(p_flags, -EPROTO));
	URUN_NAMED("conn_rsp_rej_flags_bit0", conn_rsp_case(p_flags_bit0, -EPROTO));
	URUN_NAMED("conn_rsp_rej_major", conn_rsp_case(p_major, -EPROTO));
	URUN_NAMED("conn_rsp_rej_minor_newer", conn_rsp_case(p_minor, -EPROTO));
	URUN(conn_rsp_short);
	URUN(conn_unaligned);
	URUN(io_req_copy_cases);
	URUN(info_req_cases);
	URUN(info_rsp_cases);
	URUN(io_write_valid);
	URUN(io_write_full_chunk);
	URUN(io_write_zero_len);
	URUN(io_read_valid);
	URUN(io_read_no_buffer);
	URUN(io_rej_short_area);
	URUN(io_rej_type_zero);
	URUN(io_rej_type_rsp);
	URUN(io_rej_type_big);
	URUN(io_rej_flags);
	URUN(io_rej_usr_len_max);
	URUN(io_rej_usr_len_area);
	URUN(io_rej_write_sg);
	URUN(io_rej_write_flags);
	URUN(io_rej_write_len);
	URUN(io_rej_write_len_huge);
	URUN(io_pull_valid);
	URUN(io_pull_local_inv);
	URUN(io_pull_full_chunk);
	URUN(io_rej_pull_no_sg);
	URUN(io_rej_pull_sg2);
	URUN(io_rej_pull_len_differs);
	URUN(io_rej_pull_zero);
	URUN(io_rej_pull_len);
	URUN(io_rej_pull_wrap);
	URUN(io_rej_read_pull);
	URUN(io_rej_read_data_len);
	URUN(io_rej_read_sg2);
	URUN(io_rej_read_sg_huge);
	URUN(io_rej_read_len);
	URUN(io_rej_read_wrap);
	URUN(io_rej_read_nobuf_desc);
	URUN(io_rej_read_nobuf_inv);
	URUN(io_rsp_cases);
	URUN(io_resp_check);
	return unit_failed ? 1 : 0;
}
