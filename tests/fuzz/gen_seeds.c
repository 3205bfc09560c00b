// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * gen_seeds.c - writes the seed corpus of every harness into
 * <dir>/<harness>/<seed>: valid messages built by the real encoders of
 * trs/common/ (the bytes a peer sends), option strings as a user writes
 * them, and edge cases next to each rule (one byte short, one past a
 * limit, a reserved field set). `make -C tests/fuzz seeds` regenerates
 * tests/fuzz/corpus/; tests/fuzz/run.sh --check fails when the committed
 * corpus differs from this program's output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trs_common.h"
#include "trs/ibnbd_proto.h"

static const char *top;
static const char *cur;

static void set_dir(const char *harness)
{
	char path[512];

	cur = harness;
	snprintf(path, sizeof(path), "%s/%s", top, harness);
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		exit(1);
	}
}

/* A seed made of several byte ranges, written in order. */
struct seed {
	unsigned char b[8192];
	size_t n;
};

static void put(struct seed *s, const void *p, size_t len)
{
	if (!len)
		return;
	if (s->n + len > sizeof(s->b)) {
		fprintf(stderr, "gen_seeds: seed too big\n");
		exit(1);
	}
	memcpy(s->b + s->n, p, len);
	s->n += len;
}

static void put_le(struct seed *s, unsigned long long v, unsigned int bytes)
{
	unsigned char b[8];
	unsigned int i;

	for (i = 0; i < bytes; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	put(s, b, bytes);
}

/* A string with its NUL (a field of the string harnesses). */
static void put_str(struct seed *s, const char *str)
{
	put(s, str, strlen(str) + 1);
}

static void emit(const char *name, const struct seed *s)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", top, cur, name);
	f = fopen(path, "wb");
	if (!f || fwrite(s->b, 1, s->n, f) != s->n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void emit_bytes(const char *name, const void *p, size_t len)
{
	struct seed s = { .n = 0 };

	put(&s, p, len);
	emit(name, &s);
}

/* ---- IBTRS ---------------------------------------------------------- */

static void conn_req(const char *name, __u16 cid, __u16 cid_num, __u16 recon,
		     __u32 flags, __u32 len)
{
	struct trs_conn_req_info in = {
		.ver_major = TRS_PROTO_VER_MAJOR,
		.ver_minor = TRS_PROTO_VER_MINOR,
		.cid = cid, .cid_num = cid_num, .recon_cnt = recon,
		.flags = flags,
	};
	unsigned char buf[64];

	memset(in.sess_uuid, 0x5e, sizeof(in.sess_uuid));
	memset(in.path_uuid, 0xa7, sizeof(in.path_uuid));
	memset(buf, 0, sizeof(buf));
	trs_conn_req_encode((struct trs_msg_conn_req *)buf, &in);
	emit_bytes(name, buf, len);
}

static void gen_conn_req(void)
{
	struct trs_msg_conn_req m;
	struct trs_conn_req_info in = {
		.ver_major = TRS_PROTO_VER_MAJOR, .cid_num = 1,
	};

	set_dir("conn_req");
	conn_req("first-path", 0, 1, 0, TRS_CONN_F_FIRST, sizeof(m));
	conn_req("cid1-of-2-recon3", 1, 2, 3, 0, sizeof(m));
	conn_req("cid63-of-64", 63, 64, 0xffff, TRS_CONN_F_FIRST, sizeof(m));
	conn_req("cid-eq-cidnum", 2, 2, 0, 0, sizeof(m));
	conn_req("cidnum-65", 0, 65, 0, 0, sizeof(m));
	conn_req("flags-unknown", 0, 1, 0, 0x2, sizeof(m));
	conn_req("one-byte-short", 0, 1, 0, TRS_CONN_F_FIRST, sizeof(m) - 1);
	conn_req("ib-private-data-len", 0, 1, 0, TRS_CONN_F_FIRST, 56);
	trs_conn_req_encode(&m, &in);
	m.magic = cpu_to_le16(TRS_MAGIC ^ 0x100);
	emit_bytes("bad-magic", &m, sizeof(m));
	trs_conn_req_encode(&m, &in);
	m.ver_major = TRS_PROTO_VER_MAJOR + 1;
	emit_bytes("major-2", &m, sizeof(m));
}

static const struct trs_conn_params accept_128k = {
	.ver_major = TRS_PROTO_VER_MAJOR, .ver_minor = TRS_PROTO_VER_MINOR,
	.queue_depth = 128, .chunk_size = 128 * 1024,
	.max_usr_len = TRS_MAX_USR_LEN, .hdr_area = TRS_HDR_AREA,
};

static void gen_conn_rsp(void)
{
	struct trs_conn_params p;
	struct trs_msg_conn_rsp m;

	set_dir("conn_rsp");
	trs_conn_rsp_encode(&m, &accept_128k);
	emit_bytes("accept-qd128-128k", &m, sizeof(m));
	emit_bytes("accept-one-byte-short", &m, sizeof(m) - 1);
	p = accept_128k;
	p.queue_depth = TRS_MAX_QUEUE_DEPTH - 1;
	p.chunk_size = TRS_MAX_CHUNK_SIZE;
	trs_conn_rsp_encode(&m, &p);
	emit_bytes("accept-qd65535-16m", &m, sizeof(m));
	p = accept_128k;
	p.queue_depth = 1;
	p.chunk_size = TRS_MIN_CHUNK_SIZE;
	p.hdr_area = sizeof(struct trs_msg_io_req);
	p.max_usr_len = 0;
	trs_conn_rsp_encode(&m, &p);
	emit_bytes("accept-qd1-4k-no-usr", &m, sizeof(m));
	p = accept_128k;
	p.chunk_size = 3 * 4096;
	trs_conn_rsp_encode(&m, &p);
	emit_bytes("chunk-not-pow2", &m, sizeof(m));
	p = accept_128k;
	p.max_usr_len = TRS_MAX_USR_LEN + 1;
	trs_conn_rsp_encode(&m, &p);
	emit_bytes("max-usr-past-area", &m, sizeof(m));
	p = accept_128k;
	p.ver_minor = TRS_PROTO_VER_MINOR + 1;
	trs_conn_rsp_encode(&m, &p);
	emit_bytes("newer-minor", &m, sizeof(m));
	memset(&p, 0, sizeof(p));
	p.ver_major = TRS_PROTO_VER_MAJOR;
	p.rej = TRS_REJ_NO_SESS;
	trs_conn_rsp_encode(&m, &p);
	emit_bytes("reject-no-sess", &m, sizeof(m));
}

static void gen_info_req(void)
{
	struct trs_msg_info_req m;

	set_dir("info_req");
	trs_info_req_encode(&m, "fio-host-1-4242");
	emit_bytes("name", &m, sizeof(m));
	emit_bytes("one-byte-short", &m, sizeof(m) - 1);
	trs_info_req_encode(&m, "012345678901234567890123456789012345678901234567890123456789012");
	emit_bytes("name-63", &m, sizeof(m));
	memset(m.sessname, 'x', sizeof(m.sessname));
	emit_bytes("name-unterminated", &m, sizeof(m));
	trs_info_req_encode(&m, "a/b");
	emit_bytes("name-slash", &m, sizeof(m));
	trs_info_req_encode(&m, "");
	emit_bytes("name-empty", &m, sizeof(m));
	trs_info_req_encode(&m, "s");
	m.flags = cpu_to_le32(1);
	emit_bytes("flags", &m, sizeof(m));
}

static void info_rsp(const char *name, const struct trs_conn_params *p,
		     const struct trs_info *in, size_t cut)
{
	struct trs_msg_conn_rsp c;
	struct trs_msg_info_rsp m;
	struct seed s = { .n = 0 };

	trs_conn_rsp_encode(&c, p);
	trs_info_rsp_encode(&m, in);
	put(&s, &c, sizeof(c));
	put(&s, &m, sizeof(m) - cut);
	emit(name, &s);
}

static void gen_info_rsp(void)
{
	struct trs_conn_params p = accept_128k;
	struct trs_info in = {
		.queue_depth = 128, .chunk_size = 128 * 1024,
		.slot_size = 128 * 1024 + TRS_HDR_AREA,
		.pool_addr = 0x7f3a12340000ULL, .pool_rkey = 0x1234,
	};
	struct trs_info i2;

	set_dir("info_rsp");
	info_rsp("pool", &p, &in, 0);
	info_rsp("one-byte-short", &p, &in, 1);
	i2 = in;
	i2.pool_addr = ~0ULL - (__u64)in.slot_size * in.queue_depth;
	info_rsp("pool-at-the-top", &p, &i2, 0);
	i2.pool_addr++;
	info_rsp("pool-wraps", &p, &i2, 0);
	i2 = in;
	i2.queue_depth = 64;
	info_rsp("qd-differs", &p, &i2, 0);
	i2 = in;
	i2.slot_size += 1;
	info_rsp("slot-size-off", &p, &i2, 0);
	i2 = in;
	i2.status = TRS_REJ_NOMEM;
	info_rsp("status-nomem", &p, &i2, 0);
	p.queue_depth = TRS_MAX_QUEUE_DEPTH - 1;
	p.chunk_size = TRS_MAX_CHUNK_SIZE;
	i2 = in;
	i2.queue_depth = p.queue_depth;
	i2.chunk_size = p.chunk_size;
	i2.slot_size = p.chunk_size + p.hdr_area;
	info_rsp("qd65535-16m", &p, &i2, 0);
}

static void imm(const char *name, enum trs_imm_type type, __u32 id, int err,
		__u16 qd)
{
	struct seed s = { .n = 0 };

	put_le(&s, trs_to_imm(type, id, (__u32)(err < 0 ? -err : err)), 4);
	put_le(&s, qd, 2);
	emit(name, &s);
}

static void gen_imm(void)
{
	set_dir("imm");
	imm("io-req-0", TRS_IMM_IO_REQ, 0, 0, 128);
	imm("io-req-qd-1", TRS_IMM_IO_REQ, 127, 0, 128);
	imm("io-req-eq-qd", TRS_IMM_IO_REQ, 128, 0, 128);
	imm("io-rsp-eio", TRS_IMM_IO_RSP, 7, -EIO, 128);
	imm("io-rsp-max-errno", TRS_IMM_IO_RSP, 65534, -TRS_IMM_MAX_ERRNO, 65535);
	imm("hb", TRS_IMM_HB, 0xffff, 0, 0);
	imm("hb-ack-err", TRS_IMM_HB_ACK, 1, -EIO, 0);
	imm("type-0", TRS_IMM_INVALID, 0, 0, 128);
	imm("type-15", (enum trs_imm_type)15, 0, 0, 128);
}

enum { RX_OK = 1, RX_IMM = 2, RX_INV = 4, RX_CLT = 8 };

static void rx(const char *name, __u8 flags, __u8 op, __u32 imm_v, __u32 rkey,
	       __u16 qd, const void *msg, size_t len)
{
	struct seed s = { .n = 0 };

	put_le(&s, flags, 1);
	put_le(&s, op, 1);
	put_le(&s, imm_v, 4);
	put_le(&s, rkey, 4);
	put_le(&s, qd, 2);
	put(&s, msg, len);
	emit(name, &s);
}

static void gen_rx(void)
{
	struct trs_info in = {
		.queue_depth = 128, .chunk_size = 128 * 1024,
		.slot_size = 128 * 1024 + TRS_HDR_AREA, .pool_addr = 0x10000,
	};
	struct trs_io_rsp_info r = {
		.chunk_id = 5, .flags = TRS_RSP_F_INVALIDATED, .len = 4096,
	};
	struct trs_msg_info_req ireq;
	struct trs_msg_info_rsp irsp;
	struct trs_msg_io_rsp io;
	unsigned char big[TRS_MAX_RECV_MSG + 1];

	set_dir("rx");
	rx("srv-io-req", RX_OK | RX_IMM, TRS_RX_OP_RECV_RDMA_IMM,
	   trs_to_imm(TRS_IMM_IO_REQ, 3, 0), 0, 128, NULL, 0);
	rx("srv-io-req-as-send", RX_OK | RX_IMM, TRS_RX_OP_RECV,
	   trs_to_imm(TRS_IMM_IO_REQ, 3, 0), 0, 128, NULL, 0);
	rx("srv-hb", RX_OK | RX_IMM, TRS_RX_OP_RECV,
	   trs_to_imm(TRS_IMM_HB, 9, 0), 0, 0, NULL, 0);
	trs_info_req_encode(&ireq, "sess");
	rx("srv-info-req", RX_OK, TRS_RX_OP_RECV, 0, 0, 0, &ireq, sizeof(ireq));
	rx("srv-runt", RX_OK, TRS_RX_OP_RECV, 0, 0, 0, &ireq, 1);
	memset(big, 0, sizeof(big));
	memcpy(big, &ireq, sizeof(ireq));
	rx("srv-too-long", RX_OK, TRS_RX_OP_RECV, 0, 0, 0, big, sizeof(big));
	rx("srv-failed", 0, TRS_RX_OP_RECV, 0, 0, 0, &ireq, sizeof(ireq));
	rx("clt-io-rsp-imm", RX_CLT | RX_OK | RX_IMM, TRS_RX_OP_RECV,
	   trs_to_imm(TRS_IMM_IO_RSP, 127, EIO), 0, 128, NULL, 0);
	trs_io_rsp_encode(&io, &r);
	rx("clt-io-rsp-inv", RX_CLT | RX_OK | RX_INV, TRS_RX_OP_RECV, 0,
	   0xabcd, 128, &io, sizeof(io));
	rx("clt-io-rsp-inv-missing", RX_CLT | RX_OK, TRS_RX_OP_RECV, 0, 0, 128,
	   &io, sizeof(io));
	rx("clt-io-rsp-short", RX_CLT | RX_OK | RX_INV, TRS_RX_OP_RECV, 0,
	   0xabcd, 128, &io, sizeof(io) - 1);
	trs_info_rsp_encode(&irsp, &in);
	rx("clt-info-rsp", RX_CLT | RX_OK, TRS_RX_OP_RECV, 0, 0, 0, &irsp,
	   sizeof(irsp));
	rx("clt-hb-ack", RX_CLT | RX_OK | RX_IMM, TRS_RX_OP_RECV,
	   trs_to_imm(TRS_IMM_HB_ACK, 9, 0), 0, 0, NULL, 0);
	rx("clt-rdma-write", RX_CLT | RX_OK | RX_IMM, TRS_RX_OP_RECV_RDMA_IMM,
	   trs_to_imm(TRS_IMM_IO_RSP, 1, 0), 0, 128, NULL, 0);
}

/* chunk 128 KiB (4 KiB << 5), max_usr_len TRS_MAX_USR_LEN */
static void io_req(const char *name, const struct trs_io_req_info *in,
		   const void *usr, size_t usr_len, int status, __u32 len)
{
	struct trs_msg_io_req m;
	struct seed s = { .n = 0 };

	put_le(&s, 5, 1);
	put_le(&s, TRS_MAX_USR_LEN, 2);
	put_le(&s, (__u32)status, 4);
	put_le(&s, len, 4);
	trs_io_req_encode(&m, in);
	put(&s, &m, sizeof(m));
	put(&s, usr, usr_len);
	emit(name, &s);
}

static void gen_io_req(void)
{
	struct trs_io_req_info w = {
		.type = TRS_MSG_IO_WRITE, .data_len = 4096,
		.usr_len = sizeof(struct ibnbd_msg_io), .seq = 77,
	};
	struct trs_io_req_info r = {
		.type = TRS_MSG_IO_READ, .flags = TRS_IO_F_NEED_INV,
		.usr_len = sizeof(struct ibnbd_msg_io), .sg_cnt = 1,
		.raddr = 0x7f0000001000ULL, .rkey = 0x4411, .rlen = 8192,
	};
	struct trs_io_req_info o = {
		.type = TRS_MSG_IO_READ, .usr_len = sizeof(struct ibnbd_msg_open),
	};
	struct ibnbd_msg_io io;
	struct ibnbd_msg_open open;
	struct trs_io_req_info x;

	set_dir("io_req");
	ibnbd_init_io(&io, 1, 8, IBNBD_OP_WRITE, 4096, 0);
	io_req("write-4k", &w, &io, sizeof(io), 0, 0);
	ibnbd_init_io(&io, 1, 8, IBNBD_OP_READ, 8192, 0);
	io_req("read-8k-inv", &r, &io, sizeof(io), 0, 8192);
	io_req("read-8k-short-answer", &r, &io, sizeof(io), 0, 4096);
	io_req("read-8k-error-answer", &r, &io, sizeof(io), -EIO, 0);
	ibnbd_init_open(&open, IBNBD_ACCESS_RW, "/dev/nullb0");
	io_req("read-no-buffer-open", &o, &open, sizeof(open), 0, 0);
	x = w;
	x.usr_len = sizeof(io) + 1;
	io_req("usr-past-area", &x, &io, sizeof(io), 0, 0);
	x = w;
	x.data_len = 128 * 1024 + 1;
	io_req("write-past-chunk", &x, &io, sizeof(io), 0, 0);
	x = r;
	x.raddr = ~0ULL - 100;
	io_req("read-wraps", &x, &io, sizeof(io), 0, 0);
	x = w;
	x.usr_len = 0;
	io_req("write-no-usr", &x, NULL, 0, 0, 0);
}

static void io_rsp(const char *name, __u16 qd, __u16 id, int status,
		   __u32 flags, __u32 len, size_t cut)
{
	struct trs_io_rsp_info in = {
		.chunk_id = id, .status = status, .flags = flags, .len = len,
	};
	struct trs_msg_io_rsp m;
	struct seed s = { .n = 0 };

	put_le(&s, qd, 2);
	trs_io_rsp_encode(&m, &in);
	put(&s, &m, sizeof(m) - cut);
	emit(name, &s);
}

static void gen_io_rsp(void)
{
	set_dir("io_rsp");
	io_rsp("read-done-inv", 128, 3, 0, TRS_RSP_F_INVALIDATED, 4096, 0);
	io_rsp("read-eio", 128, 127, -EIO, 0, 0, 0);
	io_rsp("id-eq-qd", 128, 128, 0, 0, 0, 0);
	io_rsp("max-errno", 65535, 65534, -TRS_IMM_MAX_ERRNO, 0, 0, 0);
	io_rsp("one-byte-short", 128, 1, 0, 0, 0, 1);
}

/* ---- IBNBD ---------------------------------------------------------- */

/* is_write, datalen; a 1 GiB device of 512-byte blocks, 128 KiB IO,
 * discard and write-zeroes of up to 1 MiB; an RW opener, one writer. */
static void ibnbd(const char *name, __u8 flags, __u32 datalen,
		  const void *msg, size_t len)
{
	struct seed s = { .n = 0 };

	put_le(&s, flags, 1);
	put_le(&s, datalen, 4);
	put_le(&s, 2097152, 8);
	put_le(&s, 0, 1);
	put_le(&s, 128 * 1024, 4);
	put_le(&s, 2048, 4);
	put_le(&s, 2048, 4);
	put_le(&s, IBNBD_ACCESS_RW, 1);
	put_le(&s, 1, 1);
	put(&s, msg, len);
	emit(name, &s);
}

static void gen_ibnbd(void)
{
	struct ibnbd_msg_sess_info si;
	struct ibnbd_msg_sess_info_rsp sir;
	struct ibnbd_msg_open open;
	struct ibnbd_msg_open_rsp rsp;
	struct ibnbd_msg_close close;
	struct ibnbd_msg_io io;

	set_dir("ibnbd");
	ibnbd_init_sess_info(&si, IBNBD_PROTO_VER_MAJOR);
	ibnbd("sess-info", 0, 0, &si, sizeof(si));
	ibnbd_init_sess_info_rsp(&sir, IBNBD_PROTO_VER_MAJOR);
	ibnbd("sess-info-rsp", 0, 0, &sir, sizeof(sir));
	ibnbd_init_open(&open, IBNBD_ACCESS_MIGRATION, "/dev/nullb0");
	ibnbd("open-migration", 0, 0, &open, sizeof(open));
	ibnbd("open-one-byte-short", 0, 0, &open, sizeof(open) - 1);
	memset(open.dev_path, 'a', sizeof(open.dev_path));
	ibnbd("open-unterminated", 0, 0, &open, sizeof(open));
	ibnbd_init_open_rsp_err(&rsp, -EBUSY, "device has a writer");
	ibnbd("open-rsp-ebusy", 0, 0, &rsp, sizeof(rsp));
	ibnbd_init_open_rsp_err(&rsp, 0, NULL);
	rsp.device_id = cpu_to_le32(7);
	rsp.nsectors = cpu_to_le64(2097152);
	rsp.max_hw_sectors = cpu_to_le32(256);
	rsp.max_discard_sectors = cpu_to_le32(2048);
	rsp.dev_flags = cpu_to_le32(IBNBD_DEV_DISCARD | IBNBD_DEV_FLUSH);
	rsp.logical_block_size = cpu_to_le16(4096);
	rsp.physical_block_size = cpu_to_le16(4096);
	rsp.max_segments = cpu_to_le16(32);
	rsp.access_mode = IBNBD_ACCESS_RW;
	ibnbd("open-rsp-4k", 0, 0, &rsp, sizeof(rsp));
	ibnbd_init_close(&close, 7);
	ibnbd("close", 1, 0, &close, sizeof(close));
	ibnbd_init_io(&io, 7, 2097152 - 8, IBNBD_OP_READ | IBNBD_F_SYNC,
		      4096, 0);
	ibnbd("io-read-last-4k", 0, 4096, &io, sizeof(io));
	ibnbd_init_io(&io, 7, 2097152 - 7, IBNBD_OP_READ, 4096, 0);
	ibnbd("io-read-past-end", 0, 4096, &io, sizeof(io));
	ibnbd_init_io(&io, 7, 0, IBNBD_OP_WRITE | IBNBD_F_FUA, 128 * 1024, 0);
	ibnbd("io-write-fua-128k", 1, 128 * 1024, &io, sizeof(io));
	ibnbd("io-write-read-only", 3, 128 * 1024, &io, sizeof(io));
	ibnbd_init_io(&io, 7, 0, IBNBD_OP_FLUSH, 0, 0);
	ibnbd("io-flush", 1, 0, &io, sizeof(io));
	ibnbd_init_io(&io, 7, 2048, IBNBD_OP_DISCARD, 1 << 20, 0);
	ibnbd("io-discard-1m", 1, 0, &io, sizeof(io));
	ibnbd_init_io(&io, 7, 2048, IBNBD_OP_WRITE_ZEROES | IBNBD_F_NOUNMAP,
		      1 << 20, 0);
	ibnbd("io-write-zeroes-1m", 1, 0, &io, sizeof(io));
	ibnbd_init_io(&io, 7, ~0ULL >> IBNBD_SECTOR_SHIFT, IBNBD_OP_READ,
		      512, 0);
	ibnbd("io-sector-overflow", 0, 512, &io, sizeof(io));
}

/* ---- strings -------------------------------------------------------- */

static void text(const char *name, const char *s)
{
	emit_bytes(name, s, strlen(s));
}

static void gen_map_device(void)
{
	set_dir("map_device");
	text("one-path", "sessname=s1 path=10.99.1.1 device_path=/dev/nullb0\n");
	text("two-paths-src-ro",
	     "sessname=host-a path=10.99.1.2@10.99.1.1 path=10.99.2.2@10.99.2.1 device_path=nullb1 access_mode=ro\n");
	text("ipv6-scope", "sessname=v6\tpath=fe80::2%2@fe80::1%2\tpath=::1 device_path=/dev/ram0 access_mode=migration");
	text("nine-paths",
	     "sessname=s path=1.1.1.1 path=1.1.1.2 path=1.1.1.3 path=1.1.1.4 path=1.1.1.5 path=1.1.1.6 path=1.1.1.7 path=1.1.1.8 path=1.1.1.9 device_path=d");
	text("mixed-families", "sessname=s path=10.0.0.1@::1 device_path=d");
	text("longest-address",
	     "sessname=s path=ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255@ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255 device_path=d");
	text("sessname-64",
	     "sessname=0123456789012345678901234567890123456789012345678901234567890123 path=1.2.3.4 device_path=d");
	text("no-value", "sessname path=1.2.3.4 device_path=d");
	text("unknown-field", "sessname=s path=1.2.3.4 device_path=d queue_depth=8");
}

static void gen_srv_opts(void)
{
	struct seed s = { .n = 0 };

	set_dir("srv_opts");
	put_le(&s, 255, 1);
	put_str(&s, "-a");
	put_str(&s, "10.99.1.1");
	put_str(&s, "--addr");
	put_str(&s, "10.99.2.1");
	put_str(&s, "-p");
	put_str(&s, "4000");
	put_str(&s, "--root=/srv/disks");
	put_str(&s, "-q");
	put_str(&s, "64");
	put_str(&s, "--chunk-size");
	put_str(&s, "512KiB");
	put_str(&s, "-m8");
	put_str(&s, "--hb-interval");
	put_str(&s, "250");
	put_str(&s, "--hb-missed=5");
	put_str(&s, "-vvs");
	put_str(&s, "--stats-file");
	put_str(&s, "/tmp/stats");
	put_str(&s, "--test-fault");
	put_str(&s, "short-read");
	emit("everything", &s);

	/* every number at its documented limit */
	s.n = 0;
	put_le(&s, 128, 1);
	put_str(&s, "--port=65535");
	put_str(&s, "-q65535");
	put_str(&s, "-m");
	put_str(&s, "65535");
	put_str(&s, "--chunk-size");
	put_str(&s, "16m");
	put_str(&s, "--hb-interval");
	put_str(&s, "3600000");
	put_str(&s, "--hb-missed");
	put_str(&s, "1000");
	emit("limits", &s);

	s.n = 0;
	put_le(&s, 16, 1);
	put_str(&s, "-c");
	put_str(&s, "0x1000");
	put_str(&s, "-dfp");
	put_str(&s, "65535");
	put_str(&s, "--max-dev");
	put_str(&s, "65535");
	put_str(&s, "--test-fault=no-inval");
	emit("hex-cluster-abbrev", &s);

	s.n = 0;
	put_le(&s, 64, 1);
	put_str(&s, "-c");
	put_str(&s, "16m");
	put_str(&s, "-p");
	emit("missing-arg", &s);

	s.n = 0;
	put_le(&s, 0, 1);
	put_str(&s, "-hv");
	emit("help-cluster-no-err", &s);

	s.n = 0;
	put_le(&s, 8, 1);
	put_str(&s, "--bogus");
	put_str(&s, "stray");
	emit("unknown-short-err", &s);
}

static void gen_srv_path(void)
{
	struct seed s = { .n = 0 };

	set_dir("srv_path");
	put_le(&s, 512, 2);
	put_str(&s, "/dev");
	put(&s, "/dev/nullb0", 11);
	emit("dev-absolute", &s);

	s.n = 0;
	put_le(&s, 512, 2);
	put_str(&s, "/");
	put(&s, "//srv//disk.img", 15);
	emit("root-slash", &s);

	s.n = 0;
	put_le(&s, 512, 2);
	put_str(&s, "/srv/disks//");
	put(&s, "/srv/disks/a/../b", 17);
	emit("root-trailing-slashes", &s);

	s.n = 0;
	put_le(&s, 512, 2);
	put_str(&s, "/dev");
	put(&s, "/device", 7);
	emit("prefix-not-dir", &s);

	s.n = 0;
	put_le(&s, 7, 2);
	put_str(&s, "/dev");
	put(&s, "nullb0", 6);
	emit("relative-fits-7", &s);

	s.n = 0;
	put_le(&s, 6, 2);
	put_str(&s, "/dev");
	put(&s, "nullb0", 6);
	emit("relative-too-long", &s);
}

/* flags (TD_DDIR_*), port, cons, qd, ctrl_loss_tmo, hb, connect, sesslen */
static void engine(struct seed *s, __u8 flags, __u16 port, int tmo,
		   __u8 sesslen)
{
	s->n = 0;
	put_le(s, flags, 1);
	put_le(s, port, 2);
	put_le(s, 1, 1);
	put_le(s, 0, 2);
	put_le(s, (__u32)tmo, 4);
	put_le(s, 500, 2);
	put_le(s, 3000, 2);
	put_le(s, sesslen, 1);
}

static void gen_engine_opts(void)
{
	struct seed s;

	set_dir("engine_opts");
	engine(&s, 3, 1234, 30, 64);
	put_str(&s, "10.99.1.1,10.99.2.1");
	put_str(&s, "/dev/nullb0");
	put_str(&s, "");
	put_str(&s, "auto");
	put_str(&s, "fio-job");
	put_str(&s, "min-latency");
	put_str(&s, "mw");
	put_str(&s, "remote");
	emit("randrw-two-paths", &s);

	engine(&s, 1, 4000, -1, 16);
	put_str(&s, "10.99.1.2@10.99.1.1; fe80::2@fe80::1 ::1");
	put_str(&s, "");
	put_str(&s, "nullb1");
	put_str(&s, "ro");
	put_str(&s, "");
	put_str(&s, "rr");
	put_str(&s, "global");
	put_str(&s, "none");
	emit("read-src-ipv6-filename", &s);

	engine(&s, 2, 1, 0, 0);
	put_str(&s, "1.1.1.1,1.1.1.2,1.1.1.3,1.1.1.4,1.1.1.5,1.1.1.6,1.1.1.7,1.1.1.8,1.1.1.9");
	put_str(&s, "d");
	put_str(&s, "");
	put_str(&s, "migration");
	emit("nine-paths", &s);

	engine(&s, 4, 1234, 2147483, 1);
	put_str(&s, ",;, ");
	put_str(&s, "d");
	emit("no-path-max-tmo", &s);

	engine(&s, 2, 1234, 30, 64);
	put_str(&s, "10.0.0.1");
	put_str(&s, "d");
	put_str(&s, "");
	put_str(&s, "rw");
	put_str(&s, "0123456789012345678901234567890123456789xyz");
	put_str(&s, "latency");
	put_str(&s, "MW");
	put_str(&s, "local");
	emit("long-sessname", &s);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	top = argv[1];
	if (mkdir(top, 0755) && errno != EEXIST) {
		perror(top);
		return 1;
	}
	gen_conn_req();
	gen_conn_rsp();
	gen_info_req();
	gen_info_rsp();
	gen_imm();
	gen_rx();
	gen_io_req();
	gen_io_rsp();
	gen_ibnbd();
	gen_map_device();
	gen_srv_opts();
	gen_srv_path();
	gen_engine_opts();
	return 0;
}
