// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_ibnbd.c - every IBNBD message validator (trs/common/ibnbd_proto.c):
 * what the server checks of SESS_INFO, OPEN, CLOSE and IO and of an IO
 * against its device, and what a client checks of SESS_INFO_RSP and
 * OPEN_RSP.
 *
 * Input: a flags byte (bit 0: the IBTRS request is a write, 1: the handle
 * is read-only), the IBTRS data length (4 bytes), the device (sectors: 8
 * bytes, logical block size 512 << (b % 4): 1 byte, max IO bytes, max
 * discard and max write-zeroes sectors: 4 bytes each), the access mode and
 * writer count for the open arbitration (1 byte each), then the message
 * (exactly its length on the heap). Every validator sees every message.
 * Checks: at most one validator accepts, and only a message of its type;
 * an accepted message keeps its rules (version, access mode, a terminated
 * non-empty path without control characters, a terminated reason, sane
 * geometry, op and flag combinations, sector range, data length); the
 * message rebuilt by the matching ibnbd_init_*() from the decoded values
 * carries the same fields and validates again; an IO within the device's
 * limits stays inside the device, aligned and within the size limits and
 * writes only through a writable handle; the open arbitration follows the
 * access modes.
 */
#include "fuzz.h"
#include "trs/ibnbd_proto.h"

static void check_open(const struct ibnbd_msg_open *m)
{
	struct ibnbd_msg_open again;
	enum ibnbd_access_mode mode;
	size_t len = strnlen(m->dev_path, IBNBD_DEV_PATH_MAX);
	size_t i;

	FZ_CHECK(len >= 1 && len < IBNBD_DEV_PATH_MAX);
	for (i = 0; i < len; i++)
		FZ_CHECK((unsigned char)m->dev_path[i] >= 0x20 &&
			 m->dev_path[i] != 0x7f);
	FZ_CHECK(m->access_mode <= IBNBD_ACCESS_MIGRATION);
	FZ_CHECK(!ibnbd_access_mode_parse(ibnbd_access_mode_name(m->access_mode),
					  &mode));
	FZ_CHECK(mode == m->access_mode);
	FZ_CHECK(!ibnbd_init_open(&again, mode, m->dev_path));
	FZ_CHECK(!ibnbd_validate_open(&again, sizeof(again)));
	FZ_CHECK(!memcmp(again.dev_path, m->dev_path, len + 1));
}

static void check_open_rsp(const struct ibnbd_msg_open_rsp *r)
{
	__u32 lbs = le16_to_cpu(r->logical_block_size);
	__u32 pbs = le16_to_cpu(r->physical_block_size);

	FZ_CHECK(strnlen(r->reason, IBNBD_REASON_MAX) < IBNBD_REASON_MAX);
	if (le32_to_cpu(r->error))
		return;
	FZ_CHECK(lbs >= IBNBD_SECTOR_SIZE && !(lbs & (lbs - 1)));
	FZ_CHECK(!pbs || (pbs >= lbs && !(pbs & (pbs - 1))));
	FZ_CHECK(le32_to_cpu(r->max_hw_sectors) >= lbs / IBNBD_SECTOR_SIZE);
	FZ_CHECK(!(le32_to_cpu(r->dev_flags) & ~IBNBD_DEV_ALL));
	FZ_CHECK(r->access_mode <= IBNBD_ACCESS_MIGRATION);
}

static void check_io(const struct ibnbd_msg_io *m, bool is_write,
		     __u32 datalen, const struct ibnbd_dev_limits *lim)
{
	__u32 rw = le32_to_cpu(m->rw), op = rw & IBNBD_OP_MASK;
	__u32 flags = rw & ~IBNBD_OP_MASK, size = le32_to_cpu(m->bi_size);
	__u64 sector = le64_to_cpu(m->sector), nsect = size / IBNBD_SECTOR_SIZE;
	struct ibnbd_msg_io again;
	int ret;

	FZ_CHECK(op <= IBNBD_OP_WRITE_ZEROES && !(flags & ~IBNBD_F_ALL));
	FZ_CHECK(strcmp(ibnbd_op_name(op), "UNKNOWN"));
	FZ_CHECK(!(size % IBNBD_SECTOR_SIZE));
	FZ_CHECK(sector + nsect >= sector &&
		 sector + nsect <= UINT64_MAX / IBNBD_SECTOR_SIZE);
	if (op == IBNBD_OP_READ || op == IBNBD_OP_WRITE)
		FZ_CHECK(size && size == datalen &&
			 is_write == (op == IBNBD_OP_WRITE));
	else
		FZ_CHECK(!datalen);
	if (op == IBNBD_OP_FLUSH)
		FZ_CHECK(!size && !sector);

	/* device_id .. prio are fields, header padding and reserved not */
	ibnbd_init_io(&again, le32_to_cpu(m->device_id), sector, rw, size,
		      le16_to_cpu(m->prio));
	FZ_CHECK(!ibnbd_validate_io(&again, sizeof(again), is_write, datalen));
	FZ_CHECK(!memcmp(&again.device_id, &m->device_id,
			 offsetof(struct ibnbd_msg_io, reserved) -
			 offsetof(struct ibnbd_msg_io, device_id)));

	ret = ibnbd_check_io_limits(m, lim);
	FZ_CHECK(ret == 0 || ret == -EROFS || ret == -ERANGE ||
		 ret == -EINVAL || ret == -EOPNOTSUPP);
	if (ret || op == IBNBD_OP_FLUSH)
		return;
	FZ_CHECK(op == IBNBD_OP_READ || !lim->read_only);
	FZ_CHECK(sector <= lim->nsectors && nsect <= lim->nsectors - sector);
	FZ_CHECK(!(sector % (lim->logical_block_size / IBNBD_SECTOR_SIZE)));
	FZ_CHECK(!(nsect % (lim->logical_block_size / IBNBD_SECTOR_SIZE)));
	if (op == IBNBD_OP_READ || op == IBNBD_OP_WRITE)
		FZ_CHECK(size <= lim->max_io_bytes);
	if (op == IBNBD_OP_DISCARD)
		FZ_CHECK(nsect && nsect <= lim->max_discard_sectors);
	if (op == IBNBD_OP_WRITE_ZEROES)
		FZ_CHECK(nsect && nsect <= lim->max_write_zeroes_sectors);
}

static void check_access(unsigned int mode, unsigned int writers)
{
	int ret = ibnbd_access_check(mode, writers);

	switch (mode) {
	case IBNBD_ACCESS_RO:
		FZ_CHECK(!ret);
		break;
	case IBNBD_ACCESS_RW:
		FZ_CHECK(ret == (writers ? -EBUSY : 0));
		break;
	case IBNBD_ACCESS_MIGRATION:
		FZ_CHECK(ret == (writers >= 2 ? -EBUSY : 0));
		break;
	default:
		FZ_CHECK(ret == -EINVAL);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ibnbd_dev_limits lim;
	struct fz_in in;
	__u32 datalen;
	bool is_write;
	int type, oks = 0, ok_type = 0;
	size_t len;
	__u8 flags, mode, writers;
	void *msg;

	fz_in_init(&in, data, size);
	flags = fz_u8(&in);
	is_write = flags & 1;
	datalen = fz_u32(&in);
	memset(&lim, 0, sizeof(lim));
	lim.read_only = flags & 2;
	lim.nsectors = fz_u64(&in);
	lim.logical_block_size = IBNBD_SECTOR_SIZE << (fz_u8(&in) % 4);
	lim.max_io_bytes = fz_u32(&in);
	lim.max_discard_sectors = fz_u32(&in);
	lim.max_write_zeroes_sectors = fz_u32(&in);
	mode = fz_u8(&in);
	writers = fz_u8(&in);
	msg = fz_rest(&in, &len);

	check_access(mode, writers);
	type = ibnbd_msg_type(msg, len);
	FZ_CHECK(type == -EINVAL ||
		 (type >= IBNBD_MSG_SESS_INFO && type <= IBNBD_MSG_IO));
	FZ_CHECK(type < 0 || strcmp(ibnbd_msg_type_name(type), "UNKNOWN"));

	if (!ibnbd_validate_sess_info(msg, len)) {
		struct ibnbd_msg_sess_info again;
		__u8 ver = ((const struct ibnbd_msg_sess_info *)msg)->ver;

		oks++;
		ok_type = IBNBD_MSG_SESS_INFO;
		FZ_CHECK(ver >= IBNBD_PROTO_VER_MIN);
		FZ_CHECK(ibnbd_negotiate_ver(ver) <= IBNBD_PROTO_VER_MAJOR &&
			 ibnbd_negotiate_ver(ver) <= ver);
		ibnbd_init_sess_info(&again, ver);
		FZ_CHECK(!ibnbd_validate_sess_info(&again, sizeof(again)));
	}
	if (!ibnbd_validate_sess_info_rsp(msg, len)) {
		struct ibnbd_msg_sess_info_rsp again;
		__u8 ver = ((const struct ibnbd_msg_sess_info_rsp *)msg)->ver;

		oks++;
		ok_type = IBNBD_MSG_SESS_INFO_RSP;
		FZ_CHECK(ver >= IBNBD_PROTO_VER_MIN);
		ibnbd_init_sess_info_rsp(&again, ver);
		FZ_CHECK(!ibnbd_validate_sess_info_rsp(&again, sizeof(again)));
	}
	if (!ibnbd_validate_open(msg, len)) {
		oks++;
		ok_type = IBNBD_MSG_OPEN;
		check_open(msg);
	}
	if (!ibnbd_validate_open_rsp(msg, len)) {
		oks++;
		ok_type = IBNBD_MSG_OPEN_RSP;
		check_open_rsp(msg);
	}
	if (!ibnbd_validate_close(msg, len)) {
		struct ibnbd_msg_close again;
		__u32 id = le32_to_cpu(((const struct ibnbd_msg_close *)msg)->device_id);

		oks++;
		ok_type = IBNBD_MSG_CLOSE;
		ibnbd_init_close(&again, id);
		FZ_CHECK(!ibnbd_validate_close(&again, sizeof(again)));
		FZ_CHECK(le32_to_cpu(again.device_id) == id);
	}
	if (!ibnbd_validate_io(msg, len, is_write, datalen)) {
		oks++;
		ok_type = IBNBD_MSG_IO;
		check_io(msg, is_write, datalen, &lim);
	}
	FZ_CHECK(oks <= 1);
	FZ_CHECK(!oks || ok_type == type);
	free(msg);
	return 0;
}
