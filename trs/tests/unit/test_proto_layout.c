// SPDX-License-Identifier: GPL-2.0-or-later
/* test_proto_layout.c - the wire layout table: sizeof/offsetof of every
 * wire struct. Includes each wire header on its own first. */
#include "trs/trs_imm.h"
#include "trs/trs_proto.h"
#include "unit.h"

struct layout { const char *name; size_t got, want; };

#define SZ(t, n)	{ "sizeof(" #t ")", sizeof(t), n }
#define OFF(t, f, n)	{ "offsetof(" #t "," #f ")", offsetof(t, f), n }

static const struct layout table[] = {
	SZ(struct trs_msg_conn_req, 56),
	OFF(struct trs_msg_conn_req, __cma_version, 0),
	OFF(struct trs_msg_conn_req, __ip_version, 1),
	OFF(struct trs_msg_conn_req, magic, 2),
	OFF(struct trs_msg_conn_req, ver_major, 4),
	OFF(struct trs_msg_conn_req, ver_minor, 5),
	OFF(struct trs_msg_conn_req, cid, 6),
	OFF(struct trs_msg_conn_req, cid_num, 8),
	OFF(struct trs_msg_conn_req, recon_cnt, 10),
	OFF(struct trs_msg_conn_req, flags, 12),
	OFF(struct trs_msg_conn_req, sess_uuid, 16),
	OFF(struct trs_msg_conn_req, path_uuid, 32),
	OFF(struct trs_msg_conn_req, reserved, 48),
	SZ(struct trs_msg_conn_rsp, 56),
	OFF(struct trs_msg_conn_rsp, magic, 0),
	OFF(struct trs_msg_conn_rsp, ver_major, 2),
	OFF(struct trs_msg_conn_rsp, ver_minor, 3),
	OFF(struct trs_msg_conn_rsp, rej, 4),
	OFF(struct trs_msg_conn_rsp, queue_depth, 6),
	OFF(struct trs_msg_conn_rsp, chunk_size, 8),
	OFF(struct trs_msg_conn_rsp, max_usr_len, 12),
	OFF(struct trs_msg_conn_rsp, hdr_area, 16),
	OFF(struct trs_msg_conn_rsp, flags, 20),
	OFF(struct trs_msg_conn_rsp, reserved, 24),
	SZ(struct trs_msg_info_req, 72),
	OFF(struct trs_msg_info_req, type, 0),
	OFF(struct trs_msg_info_req, flags, 4),
	OFF(struct trs_msg_info_req, sessname, 8),
	SZ(struct trs_msg_info_rsp, 32),
	OFF(struct trs_msg_info_rsp, type, 0),
	OFF(struct trs_msg_info_rsp, status, 2),
	OFF(struct trs_msg_info_rsp, queue_depth, 4),
	OFF(struct trs_msg_info_rsp, chunk_size, 8),
	OFF(struct trs_msg_info_rsp, slot_size, 12),
	OFF(struct trs_msg_info_rsp, pool_addr, 16),
	OFF(struct trs_msg_info_rsp, pool_rkey, 24),
	OFF(struct trs_msg_info_rsp, flags, 28),
	SZ(struct trs_sg_desc, 16),
	OFF(struct trs_sg_desc, addr, 0),
	OFF(struct trs_sg_desc, rkey, 8),
	OFF(struct trs_sg_desc, len, 12),
	SZ(struct trs_msg_io_req, 48),
	OFF(struct trs_msg_io_req, type, 0),
	OFF(struct trs_msg_io_req, flags, 2),
	OFF(struct trs_msg_io_req, usr_len, 4),
	OFF(struct trs_msg_io_req, sg_cnt, 6),
	OFF(struct trs_msg_io_req, data_len, 8),
	OFF(struct trs_msg_io_req, desc, 16),
	OFF(struct trs_msg_io_req, seq, 32),
	OFF(struct trs_msg_io_req, reserved2, 40),
	SZ(struct trs_msg_io_rsp, 16),
	OFF(struct trs_msg_io_rsp, type, 0),
	OFF(struct trs_msg_io_rsp, chunk_id, 2),
	OFF(struct trs_msg_io_rsp, status, 4),
	OFF(struct trs_msg_io_rsp, flags, 8),
	OFF(struct trs_msg_io_rsp, len, 12),
};

/*
 * The whole table is one test case: most entries repeat the headers'
 * compile-time asserts (this file would not build if they failed), so they
 * count once; the table also pins the offsets the headers do not assert.
 */
static int layout_table(void)
{
	char *p = unit_why;
	size_t i, bad = 0;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		size_t left = sizeof(unit_why) - (size_t)(p - unit_why);
		int n;

		if (table[i].got == table[i].want)
			continue;
		bad++;
		n = snprintf(p, left, "%s%s = %zu, want %zu", bad > 1 ? "; " : "",
			     table[i].name, table[i].got, table[i].want);
		if (n > 0 && (size_t)n < left)
			p += n;
	}
	return bad ? -1 : 0;
}

/* Little-endian on the wire, whatever the host. */
static int layout_le_encoding(void)
{
	struct trs_msg_conn_rsp m = { 0 };
	const unsigned char *b = (const unsigned char *)&m;

	m.chunk_size = cpu_to_le32(0x11223344);
	UCHECK_EQ(b[8], 0x44);
	UCHECK_EQ(b[11], 0x11);
	return 0;
}

int main(void)
{
	URUN(layout_table);
	URUN(layout_le_encoding);
	return unit_failed ? 1 : 0;
}
