// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibnbd_proto.c - pure IBNBD message encode/validate helpers.
 *
 * Uses nothing but ibnbd_proto.h and proto_compat.h (no libc), so the same
 * file can be compiled into the kernel modules. Every validator checks in
 * the order: length >= sizeof, type, then fields; it never reads beyond
 * @len bytes.
 */
#include "trs/ibnbd_proto.h"

static const char *const ibnbd_type_names[] = {
	[IBNBD_MSG_SESS_INFO] = "SESS_INFO",
	[IBNBD_MSG_SESS_INFO_RSP] = "SESS_INFO_RSP",
	[IBNBD_MSG_OPEN] = "OPEN",
	[IBNBD_MSG_OPEN_RSP] = "OPEN_RSP",
	[IBNBD_MSG_CLOSE] = "CLOSE",
	[IBNBD_MSG_IO] = "IO",
};

const char *ibnbd_msg_type_name(unsigned int type)
{
	if (type >= sizeof(ibnbd_type_names) / sizeof(ibnbd_type_names[0]) ||
	    !ibnbd_type_names[type])
		return "UNKNOWN";
	return ibnbd_type_names[type];
}

const char *ibnbd_access_mode_name(unsigned int mode)
{
	switch (mode) {
	case IBNBD_ACCESS_RO:
		return "ro";
	case IBNBD_ACCESS_RW:
		return "rw";
	case IBNBD_ACCESS_MIGRATION:
		return "migration";
	}
	return "unknown";
}

static bool ibnbd_streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

int ibnbd_access_mode_parse(const char *s, enum ibnbd_access_mode *out)
{
	if (!s)
		return -EINVAL;
	if (ibnbd_streq(s, "ro"))
		*out = IBNBD_ACCESS_RO;
	else if (ibnbd_streq(s, "rw"))
		*out = IBNBD_ACCESS_RW;
	else if (ibnbd_streq(s, "migration"))
		*out = IBNBD_ACCESS_MIGRATION;
	else
		return -EINVAL;
	return 0;
}

const char *ibnbd_op_name(unsigned int op)
{
	switch (op & IBNBD_OP_MASK) {
	case IBNBD_OP_READ:
		return "READ";
	case IBNBD_OP_WRITE:
		return "WRITE";
	case IBNBD_OP_FLUSH:
		return "FLUSH";
	case IBNBD_OP_DISCARD:
		return "DISCARD";
	case IBNBD_OP_WRITE_ZEROES:
		return "WRITE_ZEROES";
	}
	return "UNKNOWN";
}

int ibnbd_msg_type(const void *msg, __kernel_size_t len)
{
	const struct ibnbd_msg_hdr *hdr = msg;
	unsigned int type;

	if (!msg || len < sizeof(*hdr))
		return -EINVAL;
	type = le16_to_cpu(hdr->type);
	if (type < IBNBD_MSG_SESS_INFO || type > IBNBD_MSG_IO)
		return -EINVAL;
	return type;
}

static void ibnbd_zero(void *p, __kernel_size_t len)
{
	unsigned char *c = p;

	while (len--)
		*c++ = 0;
}

static void ibnbd_init_hdr(struct ibnbd_msg_hdr *hdr, enum ibnbd_msg_type type)
{
	hdr->type = cpu_to_le16(type);
	hdr->__padding = cpu_to_le16(0);
}

void ibnbd_init_sess_info(struct ibnbd_msg_sess_info *msg, __u8 ver)
{
	ibnbd_zero(msg, sizeof(*msg));
	ibnbd_init_hdr(&msg->hdr, IBNBD_MSG_SESS_INFO);
	msg->ver = ver;
}

void ibnbd_init_sess_info_rsp(struct ibnbd_msg_sess_info_rsp *rsp, __u8 ver)
{
	ibnbd_zero(rsp, sizeof(*rsp));
	ibnbd_init_hdr(&rsp->hdr, IBNBD_MSG_SESS_INFO_RSP);
	rsp->ver = ver;
}

int ibnbd_init_open(struct ibnbd_msg_open *msg, enum ibnbd_access_mode mode,
		    const char *path)
{
	__kernel_size_t i;

	ibnbd_zero(msg, sizeof(*msg));
	if (mode > IBNBD_ACCESS_MIGRATION || !path || !path[0])
		return -EINVAL;
	for (i = 0; path[i]; i++) {
		if (i >= IBNBD_DEV_PATH_MAX - 1) {
			ibnbd_zero(msg, sizeof(*msg));
			return -ENAMETOOLONG;
		}
		msg->dev_path[i] = path[i];
	}
	ibnbd_init_hdr(&msg->hdr, IBNBD_MSG_OPEN);
	msg->access_mode = mode;
	return 0;
}

void ibnbd_init_open_rsp_err(struct ibnbd_msg_open_rsp *rsp, int err,
			     const char *reason)
{
	__kernel_size_t i;

	ibnbd_zero(rsp, sizeof(*rsp));
	ibnbd_init_hdr(&rsp->hdr, IBNBD_MSG_OPEN_RSP);
	rsp->error = cpu_to_le32(err < 0 ? -err : err);
	for (i = 0; reason && reason[i] && i < IBNBD_REASON_MAX - 1; i++)
		rsp->reason[i] = reason[i];
}

void ibnbd_init_close(struct ibnbd_msg_close *msg, __u32 device_id)
{
	ibnbd_zero(msg, sizeof(*msg));
	ibnbd_init_hdr(&msg->hdr, IBNBD_MSG_CLOSE);
	msg->device_id = cpu_to_le32(device_id);
}

void ibnbd_init_io(struct ibnbd_msg_io *msg, __u32 device_id, __u64 sector,
		   __u32 rw, __u32 bi_size, __u16 prio)
{
	ibnbd_zero(msg, sizeof(*msg));
	ibnbd_init_hdr(&msg->hdr, IBNBD_MSG_IO);
	msg->device_id = cpu_to_le32(device_id);
	msg->sector = cpu_to_le64(sector);
	msg->rw = cpu_to_le32(rw);
	msg->bi_size = cpu_to_le32(bi_size);
	msg->prio = cpu_to_le16(prio);
}

static int ibnbd_check_hdr(const void *msg, __kernel_size_t len,
			   __kernel_size_t size, enum ibnbd_msg_type type)
{
	if (!msg || len < size)
		return -EINVAL;
	if (ibnbd_msg_type(msg, len) != (int)type)
		return -EINVAL;
	return 0;
}

int ibnbd_validate_sess_info(const void *msg, __kernel_size_t len)
{
	int ret = ibnbd_check_hdr(msg, len, sizeof(struct ibnbd_msg_sess_info),
				  IBNBD_MSG_SESS_INFO);

	if (ret)
		return ret;
	/* A client older than anything we speak cannot be served. */
	if (((const struct ibnbd_msg_sess_info *)msg)->ver < IBNBD_PROTO_VER_MIN)
		return -EPROTO;
	return 0;
}

int ibnbd_validate_sess_info_rsp(const void *msg, __kernel_size_t len)
{
	const struct ibnbd_msg_sess_info_rsp *rsp = msg;
	int ret = ibnbd_check_hdr(msg, len, sizeof(*rsp),
				  IBNBD_MSG_SESS_INFO_RSP);

	if (ret)
		return ret;
	if (rsp->ver < IBNBD_PROTO_VER_MIN)
		return -EPROTO;
	return 0;
}

int ibnbd_validate_open(const void *msg, __kernel_size_t len)
{
	const struct ibnbd_msg_open *open = msg;
	__kernel_size_t i;
	int ret = ibnbd_check_hdr(msg, len, sizeof(*open), IBNBD_MSG_OPEN);

	if (ret)
		return ret;
	if (open->access_mode > IBNBD_ACCESS_MIGRATION)
		return -EINVAL;
	if (!open->dev_path[0])
		return -EINVAL;
	for (i = 0; i < IBNBD_DEV_PATH_MAX; i++) {
		unsigned char c = open->dev_path[i];

		if (!c)
			return 0;
		if (c < 0x20 || c == 0x7f)	/* control characters */
			return -EINVAL;
	}
	return -ENAMETOOLONG;	/* no NUL inside the field */
}

static bool ibnbd_is_pow2(__u32 x)
{
	return x && !(x & (x - 1));
}

int ibnbd_validate_open_rsp(const void *msg, __kernel_size_t len)
{
	const struct ibnbd_msg_open_rsp *rsp = msg;
	__u32 lbs, pbs;
	int ret = ibnbd_check_hdr(msg, len, sizeof(*rsp), IBNBD_MSG_OPEN_RSP);

	if (ret)
		return ret;
	if (rsp->reason[IBNBD_REASON_MAX - 1])
		return -EINVAL;	/* reason not terminated */
	if (le32_to_cpu(rsp->error))
		return 0;	/* a refusal: geometry is not looked at */
	lbs = le16_to_cpu(rsp->logical_block_size);
	pbs = le16_to_cpu(rsp->physical_block_size);
	if (lbs < IBNBD_SECTOR_SIZE || !ibnbd_is_pow2(lbs))
		return -EINVAL;
	if (pbs && (pbs < lbs || !ibnbd_is_pow2(pbs)))
		return -EINVAL;
	if (le32_to_cpu(rsp->max_hw_sectors) < (lbs >> IBNBD_SECTOR_SHIFT))
		return -EINVAL;
	if (le32_to_cpu(rsp->dev_flags) & ~IBNBD_DEV_ALL)
		return -EINVAL;
	if (rsp->access_mode > IBNBD_ACCESS_MIGRATION)
		return -EINVAL;
	return 0;
}

int ibnbd_validate_close(const void *msg, __kernel_size_t len)
{
	return ibnbd_check_hdr(msg, len, sizeof(struct ibnbd_msg_close),
			       IBNBD_MSG_CLOSE);
}

int ibnbd_validate_io(const void *msg, __kernel_size_t len, bool is_write,
		      __kernel_size_t datalen)
{
	const struct ibnbd_msg_io *io = msg;
	__u32 rw, op, flags, size;
	__u64 sector;
	int ret = ibnbd_check_hdr(msg, len, sizeof(*io), IBNBD_MSG_IO);

	if (ret)
		return ret;
	rw = le32_to_cpu(io->rw);
	op = rw & IBNBD_OP_MASK;
	flags = rw & ~IBNBD_OP_MASK;
	size = le32_to_cpu(io->bi_size);
	sector = le64_to_cpu(io->sector);

	if (flags & ~IBNBD_F_ALL)
		return -EINVAL;
	if (size & (IBNBD_SECTOR_SIZE - 1))
		return -EINVAL;
	/* Byte offset of the end must fit in 64 bits. */
	if (sector > (~0ULL >> IBNBD_SECTOR_SHIFT) - (size >> IBNBD_SECTOR_SHIFT))
		return -EINVAL;

	switch (op) {
	case IBNBD_OP_READ:
		if (is_write || flags & (IBNBD_F_FUA | IBNBD_F_PREFLUSH |
					 IBNBD_F_NOUNMAP))
			return -EINVAL;
		if (!size || size != datalen)
			return -EINVAL;
		return 0;
	case IBNBD_OP_WRITE:
		if (!is_write || flags & IBNBD_F_NOUNMAP)
			return -EINVAL;
		if (!size || size != datalen)
			return -EINVAL;
		return 0;
	case IBNBD_OP_FLUSH:
		if (flags & ~IBNBD_F_SYNC)
			return -EINVAL;
		if (size || sector || datalen)
			return -EINVAL;
		return 0;
	case IBNBD_OP_DISCARD:
		if (flags & ~IBNBD_F_SYNC)
			return -EINVAL;
		if (!size || datalen)
			return -EINVAL;
		return 0;
	case IBNBD_OP_WRITE_ZEROES:
		if (flags & IBNBD_F_PREFLUSH)
			return -EINVAL;
		if (!size || datalen)
			return -EINVAL;
		return 0;
	}
	return -EOPNOTSUPP;
}

int ibnbd_check_io_limits(const struct ibnbd_msg_io *msg,
			  const struct ibnbd_dev_limits *lim)
{
	__u32 op = le32_to_cpu(msg->rw) & IBNBD_OP_MASK;
	__u32 size = le32_to_cpu(msg->bi_size);
	__u64 sector = le64_to_cpu(msg->sector);
	__u64 nsect = size >> IBNBD_SECTOR_SHIFT;
	__u32 lbs_sect = lim->logical_block_size >> IBNBD_SECTOR_SHIFT;

	if (op == IBNBD_OP_FLUSH)
		return 0;
	if (op != IBNBD_OP_READ && lim->read_only)
		return -EROFS;
	if (sector > lim->nsectors || nsect > lim->nsectors - sector)
		return -ERANGE;
	if (lbs_sect > 1 && ((sector | nsect) & (lbs_sect - 1)))
		return -EINVAL;
	switch (op) {
	case IBNBD_OP_READ:
	case IBNBD_OP_WRITE:
		if (size > lim->max_io_bytes)
			return -EINVAL;
		return 0;
	case IBNBD_OP_DISCARD:
		if (!lim->max_discard_sectors)
			return -EOPNOTSUPP;
		if (nsect > lim->max_discard_sectors)
			return -EINVAL;
		return 0;
	case IBNBD_OP_WRITE_ZEROES:
		if (!lim->max_write_zeroes_sectors)
			return -EOPNOTSUPP;
		if (nsect > lim->max_write_zeroes_sectors)
			return -EINVAL;
		return 0;
	}
	return -EOPNOTSUPP;
}

int ibnbd_access_check(unsigned int mode, unsigned int writers)
{
	switch (mode) {
	case IBNBD_ACCESS_RO:
		return 0;
	case IBNBD_ACCESS_RW:
		return writers ? -EBUSY : 0;
	case IBNBD_ACCESS_MIGRATION:
		return writers >= 2 ? -EBUSY : 0;
	}
	return -EINVAL;
}
