// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_proto.c - IBNBD wire layout table and every validator rejection.
 * Includes the header on its own first, so a missing include shows here.
 */
#include "trs/ibnbd_proto.h"
#include "test.h"

#include <stddef.h>
#include <stdint.h>

struct layout_row {
	const char *what;
	size_t got, want;
};

#define ROW(type, field, off) { #type "." #field, offsetof(type, field), off }
#define SZ(type, size) { "sizeof " #type, sizeof(type), size }

static const struct layout_row layout[] = {
	SZ(struct ibnbd_msg_hdr, 4),
	ROW(struct ibnbd_msg_hdr, type, 0),
	ROW(struct ibnbd_msg_hdr, __padding, 2),
	SZ(struct ibnbd_msg_sess_info, 32),
	ROW(struct ibnbd_msg_sess_info, ver, 4),
	ROW(struct ibnbd_msg_sess_info, reserved, 5),
	SZ(struct ibnbd_msg_sess_info_rsp, 32),
	ROW(struct ibnbd_msg_sess_info_rsp, ver, 4),
	SZ(struct ibnbd_msg_open, 264),
	ROW(struct ibnbd_msg_open, access_mode, 4),
	ROW(struct ibnbd_msg_open, reserved, 5),
	ROW(struct ibnbd_msg_open, dev_path, 8),
	SZ(struct ibnbd_msg_open_rsp, 128),
	ROW(struct ibnbd_msg_open_rsp, device_id, 4),
	ROW(struct ibnbd_msg_open_rsp, nsectors, 8),
	ROW(struct ibnbd_msg_open_rsp, max_hw_sectors, 16),
	ROW(struct ibnbd_msg_open_rsp, max_discard_sectors, 20),
	ROW(struct ibnbd_msg_open_rsp, discard_granularity, 24),
	ROW(struct ibnbd_msg_open_rsp, discard_alignment, 28),
	ROW(struct ibnbd_msg_open_rsp, max_write_zeroes_sectors, 32),
	ROW(struct ibnbd_msg_open_rsp, dev_flags, 36),
	ROW(struct ibnbd_msg_open_rsp, logical_block_size, 40),
	ROW(struct ibnbd_msg_open_rsp, physical_block_size, 42),
	ROW(struct ibnbd_msg_open_rsp, max_segments, 44),
	ROW(struct ibnbd_msg_open_rsp, access_mode, 46),
	ROW(struct ibnbd_msg_open_rsp, reserved1, 47),
	ROW(struct ibnbd_msg_open_rsp, error, 48),
	ROW(struct ibnbd_msg_open_rsp, reserved2, 52),
	ROW(struct ibnbd_msg_open_rsp, reason, 64),
	SZ(struct ibnbd_msg_close, 8),
	ROW(struct ibnbd_msg_close, device_id, 4),
	SZ(struct ibnbd_msg_io, 32),
	ROW(struct ibnbd_msg_io, device_id, 4),
	ROW(struct ibnbd_msg_io, sector, 8),
	ROW(struct ibnbd_msg_io, rw, 16),
	ROW(struct ibnbd_msg_io, bi_size, 20),
	ROW(struct ibnbd_msg_io, prio, 24),
	ROW(struct ibnbd_msg_io, reserved, 26),
};

static void layout_table(void)
{
	size_t i;

	for (i = 0; i < sizeof(layout) / sizeof(layout[0]); i++) {
		if (layout[i].got != layout[i].want) {
			printf("FAIL: layout_table: %s is %zu, expected %zu\n",
			       layout[i].what, layout[i].got, layout[i].want);
			t_cur_failed = 1;
			return;
		}
	}
}

/* The encoders write little-endian bytes regardless of host order. */
static void io_encoding_bytes(void)
{
	struct ibnbd_msg_io io;
	const uint8_t *b = (const uint8_t *)&io;

	memset(&io, 0xaa, sizeof(io));
	ibnbd_init_io(&io, 0x01020304, 0x1122334455667788ULL,
		      IBNBD_OP_WRITE | IBNBD_F_FUA, 0x1000, 7);
	T_EQ(b[0], IBNBD_MSG_IO);
	T_EQ(b[1], 0);
	T_EQ(b[2], 0);
	T_EQ(b[4], 0x04);
	T_EQ(b[7], 0x01);
	T_EQ(b[8], 0x88);
	T_EQ(b[15], 0x11);
	T_EQ(b[16], IBNBD_OP_WRITE);
	T_EQ(b[17], 0x02);	/* FUA is bit 9 */
	T_EQ(b[21], 0x10);
	T_EQ(b[24], 7);
	for (int i = 26; i < 32; i++)
		T_EQ(b[i], 0);
}

static void msg_type_rejects(void)
{
	struct ibnbd_msg_hdr h = { 0 };

	T_EQ(ibnbd_msg_type(NULL, 4), -EINVAL);
	T_EQ(ibnbd_msg_type(&h, 3), -EINVAL);	/* short */
	T_EQ(ibnbd_msg_type(&h, 4), -EINVAL);	/* type 0 */
	h.type = cpu_to_le16(7);
	T_EQ(ibnbd_msg_type(&h, 4), -EINVAL);
	h.type = cpu_to_le16(0xffff);
	T_EQ(ibnbd_msg_type(&h, 4), -EINVAL);
	h.type = cpu_to_le16(IBNBD_MSG_IO);
	T_EQ(ibnbd_msg_type(&h, 4), IBNBD_MSG_IO);
	T_CHECK(!strcmp(ibnbd_msg_type_name(IBNBD_MSG_OPEN), "OPEN"));
	T_CHECK(!strcmp(ibnbd_msg_type_name(0), "UNKNOWN"));
	T_CHECK(!strcmp(ibnbd_msg_type_name(99), "UNKNOWN"));
}

static void sess_info_rejects(void)
{
	struct ibnbd_msg_sess_info m;
	struct ibnbd_msg_sess_info_rsp r;

	ibnbd_init_sess_info(&m, IBNBD_PROTO_VER_MAJOR);
	T_EQ(ibnbd_validate_sess_info(&m, sizeof(m)), 0);
	T_EQ(ibnbd_validate_sess_info(&m, sizeof(m) + 100), 0);
	T_EQ(ibnbd_validate_sess_info(&m, sizeof(m) - 1), -EINVAL);
	T_EQ(ibnbd_validate_sess_info(NULL, sizeof(m)), -EINVAL);
	m.hdr.type = cpu_to_le16(IBNBD_MSG_OPEN);
	T_EQ(ibnbd_validate_sess_info(&m, sizeof(m)), -EINVAL);
	ibnbd_init_sess_info(&m, IBNBD_PROTO_VER_MIN - 1);
	T_EQ(ibnbd_validate_sess_info(&m, sizeof(m)), -EPROTO);
	/* A newer client is fine; negotiation picks the minimum. */
	ibnbd_init_sess_info(&m, 200);
	T_EQ(ibnbd_validate_sess_info(&m, sizeof(m)), 0);
	T_EQ(ibnbd_negotiate_ver(200), IBNBD_PROTO_VER_MAJOR);
	T_EQ(ibnbd_negotiate_ver(IBNBD_PROTO_VER_MIN), IBNBD_PROTO_VER_MIN);

	ibnbd_init_sess_info_rsp(&r, IBNBD_PROTO_VER_MAJOR);
	T_EQ(ibnbd_validate_sess_info_rsp(&r, sizeof(r)), 0);
	T_EQ(ibnbd_validate_sess_info_rsp(&r, 4), -EINVAL);
	T_EQ(ibnbd_validate_sess_info(&r, sizeof(r)), -EINVAL);	/* wrong type */
	r.ver = 0;
	T_EQ(ibnbd_validate_sess_info_rsp(&r, sizeof(r)), -EPROTO);
}

static void open_rejects(void)
{
	struct ibnbd_msg_open m;
	char longp[IBNBD_DEV_PATH_MAX + 1];

	T_EQ(ibnbd_init_open(&m, IBNBD_ACCESS_RW, "nullb0"), 0);
	T_EQ(ibnbd_validate_open(&m, sizeof(m)), 0);
	T_EQ(ibnbd_validate_open(&m, sizeof(m) - 1), -EINVAL);
	T_EQ(ibnbd_validate_open(&m, 4), -EINVAL);

	/* Bad access mode. */
	m.access_mode = 3;
	T_EQ(ibnbd_validate_open(&m, sizeof(m)), -EINVAL);
	m.access_mode = 0xff;
	T_EQ(ibnbd_validate_open(&m, sizeof(m)), -EINVAL);
	m.access_mode = IBNBD_ACCESS_RO;

	/* Empty path. */
	m.dev_path[0] = 0;
	T_EQ(ibnbd_validate_open(&m, sizeof(m)), -EINVAL);

	/* No NUL inside the field. */
	memset(m.dev_path, 'a', sizeof(m.dev_path));
	T_EQ(ibnbd_validate_open(&m, sizeof(m)), -ENAMETOOLONG);

	/* Control characters. */
	T_EQ(ibnbd_init_open(&m, IBNBD_ACCESS_RO, "a\nb"), 0);
	T_EQ(ibnbd_validate_open(&m, sizeof(m)), -EINVAL);
	T_EQ(ibnbd_init_open(&m, IBNBD_ACCESS_RO, "a\x7f"), 0);
	T_EQ(ibnbd_validate_open(&m, sizeof(m)), -EINVAL);

	/* Wrong type. */
	T_EQ(ibnbd_init_open(&m, IBNBD_ACCESS_RO, "x"), 0);
	m.hdr.type = cpu_to_le16(IBNBD_MSG_CLOSE);
	T_EQ(ibnbd_validate_open(&m, sizeof(m)), -EINVAL);

	/* Encoder refusals. */
	memset(longp, 'p', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = 0;
	T_EQ(ibnbd_init_open(&m, IBNBD_ACCESS_RO, longp), -ENAMETOOLONG);
	longp[IBNBD_DEV_PATH_MAX - 1] = 0;	/* 255 chars: fits */
	T_EQ(ibnbd_init_open(&m, IBNBD_ACCESS_RO, longp), 0);
	T_EQ(ibnbd_validate_open(&m, sizeof(m)), 0);
	T_EQ(ibnbd_init_open(&m, IBNBD_ACCESS_RO, ""), -EINVAL);
	T_EQ(ibnbd_init_open(&m, IBNBD_ACCESS_RO, NULL), -EINVAL);
	T_EQ(ibnbd_init_open(&m, 5, "x"), -EINVAL);
}

static void fill_good_rsp(struct ibnbd_msg_open_rsp *r)
{
	ibnbd_init_open_rsp_err(r, 0, NULL);
	r->device_id = cpu_to_le32(1);
	r->nsectors = cpu_to_le64(2048);
	r->max_hw_sectors = cpu_to_le32(256);
	r->logical_block_size = cpu_to_le16(512);
	r->physical_block_size = cpu_to_le16(4096);
	r->dev_flags = cpu_to_le32(IBNBD_DEV_FLUSH | IBNBD_DEV_DISCARD);
	r->access_mode = IBNBD_ACCESS_RW;
}

static void open_rsp_rejects(void)
{
	struct ibnbd_msg_open_rsp r;

	fill_good_rsp(&r);
	T_EQ(ibnbd_validate_open_rsp(&r, sizeof(r)), 0);
	T_EQ(ibnbd_validate_open_rsp(&r, sizeof(r) - 1), -EINVAL);
	r.logical_block_size = cpu_to_le16(0);
	T_EQ(ibnbd_validate_open_rsp(&r, sizeof(r)), -EINVAL);
	r.logical_block_size = cpu_to_le16(1000);
	T_EQ(ibnbd_validate_open_rsp(&r, sizeof(r)), -EINVAL);
	r.logical_block_size = cpu_to_le16(256);
	T_EQ(ibnbd_validate_open_rsp(&r, sizeof(r)), -EINVAL);
	fill_good_rsp(&r);
	r.physical_block_size = cpu_to_le16(256);
	T_EQ(ibnbd_validate_open_rsp(&r, sizeof(r)), -EINVAL);
	fill_good_rsp(&r);
	r.max_hw_sectors = cpu_to_le32(0);
	T_EQ(ibnbd_validate_open_rsp(&r, sizeof(r)), -EINVAL);
	fill_good_rsp(&r);
	r.dev_flags = cpu_to_le32(0x80000000);
	T_EQ(ibnbd_validate_open_rsp(&r, sizeof(r)), -EINVAL);
	fill_good_rsp(&r);
	r.access_mode = 9;
	T_EQ(ibnbd_validate_open_rsp(&r, sizeof(r)), -EINVAL);
	fill_good_rsp(&r);
	r.reason[IBNBD_REASON_MAX - 1] = 'x';
	T_EQ(ibnbd_validate_open_rsp(&r, sizeof(r)), -EINVAL);
	fill_good_rsp(&r);
	r.hdr.type = cpu_to_le16(IBNBD_MSG_OPEN);
	T_EQ(ibnbd_validate_open_rsp(&r, sizeof(r)), -EINVAL);

	/* A refusal is valid without geometry, and carries its reason. */
	ibnbd_init_open_rsp_err(&r, -EBUSY, "device has a writer");
	T_EQ(ibnbd_validate_open_rsp(&r, sizeof(r)), 0);
	T_EQ(le32_to_cpu(r.error), EBUSY);
	T_CHECK(!strcmp(r.reason, "device has a writer"));
	/* An over-long reason is truncated and terminated. */
	{
		char big[200];

		memset(big, 'r', sizeof(big) - 1);
		big[sizeof(big) - 1] = 0;
		ibnbd_init_open_rsp_err(&r, EACCES, big);
		T_EQ(strlen(r.reason), IBNBD_REASON_MAX - 1);
		T_EQ(ibnbd_validate_open_rsp(&r, sizeof(r)), 0);
	}
}

static void close_rejects(void)
{
	struct ibnbd_msg_close c;

	ibnbd_init_close(&c, 42);
	T_EQ(ibnbd_validate_close(&c, sizeof(c)), 0);
	T_EQ(le32_to_cpu(c.device_id), 42);
	T_EQ(ibnbd_validate_close(&c, sizeof(c) - 1), -EINVAL);
	T_EQ(ibnbd_validate_close(NULL, 8), -EINVAL);
	c.hdr.type = cpu_to_le16(IBNBD_MSG_IO);
	T_EQ(ibnbd_validate_close(&c, sizeof(c)), -EINVAL);
}

static int vio(__u32 rw, __u64 sector, __u32 size, bool is_write, size_t datalen)
{
	struct ibnbd_msg_io io;

	ibnbd_init_io(&io, 1, sector, rw, size, 0);
	return ibnbd_validate_io(&io, sizeof(io), is_write, datalen);
}

static void io_rejects(void)
{
	struct ibnbd_msg_io io;

	/* Accepted forms. */
	T_EQ(vio(IBNBD_OP_READ, 8, 4096, false, 4096), 0);
	T_EQ(vio(IBNBD_OP_READ | IBNBD_F_SYNC, 8, 512, false, 512), 0);
	T_EQ(vio(IBNBD_OP_WRITE | IBNBD_F_FUA | IBNBD_F_PREFLUSH, 0, 4096, true, 4096), 0);
	T_EQ(vio(IBNBD_OP_FLUSH, 0, 0, true, 0), 0);
	T_EQ(vio(IBNBD_OP_FLUSH, 0, 0, false, 0), 0);
	T_EQ(vio(IBNBD_OP_DISCARD, 8, 1 << 20, true, 0), 0);
	T_EQ(vio(IBNBD_OP_WRITE_ZEROES | IBNBD_F_NOUNMAP | IBNBD_F_FUA, 8, 8192, true, 0), 0);

	/* Short and wrong type. */
	ibnbd_init_io(&io, 1, 0, IBNBD_OP_READ, 512, 0);
	T_EQ(ibnbd_validate_io(&io, sizeof(io) - 1, false, 512), -EINVAL);
	T_EQ(ibnbd_validate_io(NULL, sizeof(io), false, 512), -EINVAL);
	io.hdr.type = cpu_to_le16(IBNBD_MSG_OPEN);
	T_EQ(ibnbd_validate_io(&io, sizeof(io), false, 512), -EINVAL);

	/* Unknown op and unknown flag bits. */
	T_EQ(vio(5, 0, 512, true, 0), -EOPNOTSUPP);
	T_EQ(vio(0xff, 0, 512, true, 0), -EOPNOTSUPP);
	T_EQ(vio(IBNBD_OP_READ | (1U << 12), 0, 512, false, 512), -EINVAL);
	T_EQ(vio(IBNBD_OP_WRITE | 0x80000000U, 0, 512, true, 512), -EINVAL);

	/* Direction must match the op. */
	T_EQ(vio(IBNBD_OP_READ, 0, 512, true, 512), -EINVAL);
	T_EQ(vio(IBNBD_OP_WRITE, 0, 512, false, 512), -EINVAL);

	/* Data length must match bi_size; no zero-length READ/WRITE. */
	T_EQ(vio(IBNBD_OP_READ, 0, 4096, false, 512), -EINVAL);
	T_EQ(vio(IBNBD_OP_WRITE, 0, 512, true, 4096), -EINVAL);
	T_EQ(vio(IBNBD_OP_READ, 0, 0, false, 0), -EINVAL);
	T_EQ(vio(IBNBD_OP_WRITE, 0, 0, true, 0), -EINVAL);

	/* Sector alignment of the size. */
	T_EQ(vio(IBNBD_OP_READ, 0, 4095, false, 4095), -EINVAL);
	T_EQ(vio(IBNBD_OP_DISCARD, 0, 100, true, 0), -EINVAL);

	/* Flag/op combinations. */
	T_EQ(vio(IBNBD_OP_READ | IBNBD_F_FUA, 0, 512, false, 512), -EINVAL);
	T_EQ(vio(IBNBD_OP_READ | IBNBD_F_PREFLUSH, 0, 512, false, 512), -EINVAL);
	T_EQ(vio(IBNBD_OP_WRITE | IBNBD_F_NOUNMAP, 0, 512, true, 512), -EINVAL);
	T_EQ(vio(IBNBD_OP_FLUSH | IBNBD_F_FUA, 0, 0, true, 0), -EINVAL);
	T_EQ(vio(IBNBD_OP_DISCARD | IBNBD_F_FUA, 0, 512, true, 0), -EINVAL);
	T_EQ(vio(IBNBD_OP_WRITE_ZEROES | IBNBD_F_PREFLUSH, 0, 512, true, 0), -EINVAL);

	/* Data-less ops with data or with a range where none is allowed. */
	T_EQ(vio(IBNBD_OP_FLUSH, 0, 512, true, 0), -EINVAL);
	T_EQ(vio(IBNBD_OP_FLUSH, 8, 0, true, 0), -EINVAL);
	T_EQ(vio(IBNBD_OP_FLUSH, 0, 0, true, 512), -EINVAL);
	T_EQ(vio(IBNBD_OP_DISCARD, 0, 512, true, 512), -EINVAL);
	T_EQ(vio(IBNBD_OP_DISCARD, 0, 0, true, 0), -EINVAL);
	T_EQ(vio(IBNBD_OP_WRITE_ZEROES, 0, 512, true, 512), -EINVAL);
	T_EQ(vio(IBNBD_OP_WRITE_ZEROES, 0, 0, true, 0), -EINVAL);

	/* 64-bit byte offset overflow. */
	T_EQ(vio(IBNBD_OP_READ, ~0ULL, 512, false, 512), -EINVAL);
	T_EQ(vio(IBNBD_OP_READ, (~0ULL >> 9), 512, false, 512), -EINVAL);
	T_EQ(vio(IBNBD_OP_READ, (~0ULL >> 9) - 1, 512, false, 512), 0);
}

static void io_limits(void)
{
	struct ibnbd_dev_limits lim = {
		.nsectors = 2048, .logical_block_size = 4096,
		.max_io_bytes = 128 * 1024, .max_discard_sectors = 1024,
		.max_write_zeroes_sectors = 0, .read_only = false,
	};
	struct ibnbd_msg_io io;

#define LIM(rw, sect, size) \
	(ibnbd_init_io(&io, 1, sect, rw, size, 0), ibnbd_check_io_limits(&io, &lim))
	T_EQ(LIM(IBNBD_OP_READ, 0, 4096), 0);
	T_EQ(LIM(IBNBD_OP_READ, 2040, 4096), 0);		/* last block */
	T_EQ(LIM(IBNBD_OP_READ, 2048, 4096), -ERANGE);		/* past end */
	T_EQ(LIM(IBNBD_OP_READ, 4, 4096), -EINVAL);		/* misaligned */
	T_EQ(LIM(IBNBD_OP_READ, 2044, 4096), -ERANGE);
	T_EQ(LIM(IBNBD_OP_WRITE, 2040, 8192), -ERANGE);		/* crosses end */
	T_EQ(LIM(IBNBD_OP_WRITE, ~0ULL >> 9, 4096), -ERANGE);
	T_EQ(LIM(IBNBD_OP_WRITE, 8, 512), -EINVAL);		/* < lbs */
	T_EQ(LIM(IBNBD_OP_WRITE, 0, 256 * 1024), -EINVAL);	/* > max io */
	T_EQ(LIM(IBNBD_OP_WRITE, 0, 4 * 1024 * 1024), -ERANGE);	/* > device */
	T_EQ(LIM(IBNBD_OP_DISCARD, 2040, 8 * 512), 0);
	T_EQ(LIM(IBNBD_OP_DISCARD, 2040, 16 * 512), -ERANGE);
	lim.nsectors = 1 << 20;
	T_EQ(LIM(IBNBD_OP_WRITE, 0, 128 * 1024), 0);
	T_EQ(LIM(IBNBD_OP_DISCARD, 0, 1024 * 512), 0);
	T_EQ(LIM(IBNBD_OP_DISCARD, 0, 1032 * 512), -EINVAL);
	T_EQ(LIM(IBNBD_OP_WRITE_ZEROES, 0, 4096), -EOPNOTSUPP);
	lim.max_discard_sectors = 0;
	T_EQ(LIM(IBNBD_OP_DISCARD, 0, 4096), -EOPNOTSUPP);
	T_EQ(LIM(IBNBD_OP_FLUSH, 0, 0), 0);
	lim.read_only = true;
	T_EQ(LIM(IBNBD_OP_WRITE, 0, 4096), -EROFS);
	T_EQ(LIM(IBNBD_OP_DISCARD, 0, 4096), -EROFS);
	T_EQ(LIM(IBNBD_OP_READ, 0, 4096), 0);
	T_EQ(LIM(IBNBD_OP_FLUSH, 0, 0), 0);
#undef LIM
}

static void access_arbitration(void)
{
	T_EQ(ibnbd_access_check(IBNBD_ACCESS_RO, 0), 0);
	T_EQ(ibnbd_access_check(IBNBD_ACCESS_RO, 2), 0);
	T_EQ(ibnbd_access_check(IBNBD_ACCESS_RW, 0), 0);
	T_EQ(ibnbd_access_check(IBNBD_ACCESS_RW, 1), -EBUSY);
	T_EQ(ibnbd_access_check(IBNBD_ACCESS_MIGRATION, 0), 0);
	T_EQ(ibnbd_access_check(IBNBD_ACCESS_MIGRATION, 1), 0);
	T_EQ(ibnbd_access_check(IBNBD_ACCESS_MIGRATION, 2), -EBUSY);
	T_EQ(ibnbd_access_check(3, 0), -EINVAL);
	T_CHECK(!ibnbd_access_is_writer(IBNBD_ACCESS_RO));
	T_CHECK(ibnbd_access_is_writer(IBNBD_ACCESS_RW));
	T_CHECK(ibnbd_access_is_writer(IBNBD_ACCESS_MIGRATION));
}

static void names_and_parse(void)
{
	enum ibnbd_access_mode m;

	T_EQ(ibnbd_access_mode_parse("ro", &m), 0);
	T_EQ(m, IBNBD_ACCESS_RO);
	T_EQ(ibnbd_access_mode_parse("rw", &m), 0);
	T_EQ(m, IBNBD_ACCESS_RW);
	T_EQ(ibnbd_access_mode_parse("migration", &m), 0);
	T_EQ(m, IBNBD_ACCESS_MIGRATION);
	T_EQ(ibnbd_access_mode_parse("RW", &m), -EINVAL);
	T_EQ(ibnbd_access_mode_parse("rwx", &m), -EINVAL);
	T_EQ(ibnbd_access_mode_parse("", &m), -EINVAL);
	T_EQ(ibnbd_access_mode_parse(NULL, &m), -EINVAL);
	T_CHECK(!strcmp(ibnbd_access_mode_name(IBNBD_ACCESS_MIGRATION), "migration"));
	T_CHECK(!strcmp(ibnbd_access_mode_name(7), "unknown"));
	T_CHECK(!strcmp(ibnbd_op_name(IBNBD_OP_DISCARD | IBNBD_F_SYNC), "DISCARD"));
	T_CHECK(!strcmp(ibnbd_op_name(9), "UNKNOWN"));
}

int main(void)
{
	T_RUN(layout_table);
	T_RUN(io_encoding_bytes);
	T_RUN(msg_type_rejects);
	T_RUN(sess_info_rejects);
	T_RUN(open_rejects);
	T_RUN(open_rsp_rejects);
	T_RUN(close_rejects);
	T_RUN(io_rejects);
	T_RUN(io_limits);
	T_RUN(access_arbitration);
	T_RUN(names_and_parse);
	T_EXIT();
}
