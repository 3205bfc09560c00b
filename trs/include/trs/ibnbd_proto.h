/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ibnbd_proto.h - IBNBD block protocol wire format, shared by the kernel
 * modules (kmod/) and userspace (server/, fio-engine/).
 *
 * Every IBNBD message travels as the IBTRS "user header" of one IBTRS
 * request. All integers are little-endian; padding is explicit (zeroed by
 * the sender, ignored by the receiver); there are no bitfields. Every
 * message size is pinned with TRS_ASSERT_SIZE below.
 *
 * Flows:
 *  - SESS_INFO, OPEN: sent as IBTRS READ requests; the server writes the
 *    response message (SESS_INFO_RSP, OPEN_RSP) into the chunk and answers
 *    with status 0, so the response lands in the client's read buffer. An
 *    OPEN that is refused still answers status 0 with an OPEN_RSP whose
 *    @error/@reason say why; a negative IBTRS status means the request
 *    itself was malformed (-EINVAL) or the server could not serve it.
 *  - CLOSE: an IBTRS WRITE without data (or a READ whose buffer is ignored).
 *  - IO: READ data rides as IBTRS READ (server -> client), WRITE data as
 *    IBTRS WRITE; FLUSH, DISCARD and WRITE_ZEROES carry no data and are sent
 *    as IBTRS WRITE. The IBTRS status is 0 or a negative errno; -ESTALE
 *    means "unknown device handle" (e.g. the server restarted): the client
 *    re-sends SESS_INFO and OPEN and retries the IO with the new handle.
 *
 * Validation helpers live in trs/common/ibnbd_proto.c; they use nothing
 * but this header and proto_compat.h so they build in the kernel too.
 */
#ifndef TRS_IBNBD_PROTO_H
#define TRS_IBNBD_PROTO_H

#include <linux/types.h>
#include "proto_compat.h"

#define IBNBD_PROTO_VER_MAJOR	2
#define IBNBD_PROTO_VER_MIN	2	/* oldest version this code speaks */

/* Device path in OPEN, including the terminating NUL. */
#define IBNBD_DEV_PATH_MAX	256
/* Human-readable refusal reason in OPEN_RSP, including the NUL. */
#define IBNBD_REASON_MAX	64

#define IBNBD_SECTOR_SHIFT	9
#define IBNBD_SECTOR_SIZE	(1U << IBNBD_SECTOR_SHIFT)

/**
 * enum ibnbd_msg_type - value of &struct ibnbd_msg_hdr.type.
 * @IBNBD_MSG_SESS_INFO: client -> server, version offer.
 * @IBNBD_MSG_SESS_INFO_RSP: server -> client, version answer.
 * @IBNBD_MSG_OPEN: client -> server, open a device by path.
 * @IBNBD_MSG_OPEN_RSP: server -> client, handle and geometry, or refusal.
 * @IBNBD_MSG_CLOSE: client -> server, drop a device handle.
 * @IBNBD_MSG_IO: client -> server, one block IO.
 *
 * Zero is deliberately not a valid type, so a zeroed buffer is rejected.
 */
enum ibnbd_msg_type {
	IBNBD_MSG_SESS_INFO = 1,
	IBNBD_MSG_SESS_INFO_RSP = 2,
	IBNBD_MSG_OPEN = 3,
	IBNBD_MSG_OPEN_RSP = 4,
	IBNBD_MSG_CLOSE = 5,
	IBNBD_MSG_IO = 6,
};

/**
 * enum ibnbd_access_mode - how a client opens a device.
 * @IBNBD_ACCESS_RO: read only; any number of readers.
 * @IBNBD_ACCESS_RW: read-write; refused if the device has any writer.
 * @IBNBD_ACCESS_MIGRATION: read-write; allowed while the device has at most
 *	one other writer (live migration of a VM between two hosts).
 */
enum ibnbd_access_mode {
	IBNBD_ACCESS_RO = 0,
	IBNBD_ACCESS_RW = 1,
	IBNBD_ACCESS_MIGRATION = 2,
};

/**
 * enum ibnbd_io_op - operation, the low 8 bits of &struct ibnbd_msg_io.rw.
 * @IBNBD_OP_READ: read @bi_size bytes at @sector (IBTRS READ).
 * @IBNBD_OP_WRITE: write @bi_size bytes at @sector (IBTRS WRITE).
 * @IBNBD_OP_FLUSH: make completed writes durable; @sector and @bi_size 0.
 * @IBNBD_OP_DISCARD: deallocate @bi_size bytes at @sector; no data.
 * @IBNBD_OP_WRITE_ZEROES: zero @bi_size bytes at @sector; no data.
 */
enum ibnbd_io_op {
	IBNBD_OP_READ = 0,
	IBNBD_OP_WRITE = 1,
	IBNBD_OP_FLUSH = 2,
	IBNBD_OP_DISCARD = 3,
	IBNBD_OP_WRITE_ZEROES = 4,
};

#define IBNBD_OP_BITS		8
#define IBNBD_OP_MASK		((1U << IBNBD_OP_BITS) - 1)
/* Flags, above the op bits of &struct ibnbd_msg_io.rw. */
#define IBNBD_F_SYNC		(1U << 8)	/* hint: latency sensitive */
#define IBNBD_F_FUA		(1U << 9)	/* WRITE/WRITE_ZEROES durable on completion */
#define IBNBD_F_PREFLUSH	(1U << 10)	/* flush the cache before this WRITE */
#define IBNBD_F_NOUNMAP		(1U << 11)	/* WRITE_ZEROES: keep blocks allocated */
#define IBNBD_F_ALL		(IBNBD_F_SYNC | IBNBD_F_FUA | IBNBD_F_PREFLUSH | \
				 IBNBD_F_NOUNMAP)

/* Device capability flags of &struct ibnbd_msg_open_rsp.dev_flags. */
#define IBNBD_DEV_ROTATIONAL	(1U << 0)
#define IBNBD_DEV_DISCARD	(1U << 1)	/* DISCARD is served */
#define IBNBD_DEV_FLUSH		(1U << 2)	/* volatile cache: FLUSH is meaningful */
#define IBNBD_DEV_FUA		(1U << 3)	/* FUA honoured natively */
#define IBNBD_DEV_WRITE_ZEROES	(1U << 4)	/* WRITE_ZEROES is served */
#define IBNBD_DEV_READ_ONLY	(1U << 5)	/* the handle refuses writes */
#define IBNBD_DEV_FILE		(1U << 6)	/* backed by a regular file */
#define IBNBD_DEV_ALL		0x7fU

/**
 * struct ibnbd_msg_hdr - common header of every IBNBD message.
 * @type: &enum ibnbd_msg_type.
 * @__padding: zero.
 */
struct ibnbd_msg_hdr {
	__le16 type;
	__le16 __padding;
};

/**
 * struct ibnbd_msg_sess_info - version offer, first message of a session.
 * @hdr: type IBNBD_MSG_SESS_INFO.
 * @ver: highest protocol version the client speaks.
 * @reserved: zero.
 */
struct ibnbd_msg_sess_info {
	struct ibnbd_msg_hdr hdr;
	__u8 ver;
	__u8 reserved[27];
};

/**
 * struct ibnbd_msg_sess_info_rsp - version answer.
 * @hdr: type IBNBD_MSG_SESS_INFO_RSP.
 * @ver: version both sides use: min(client's @ver, server's highest).
 * @reserved: zero.
 */
struct ibnbd_msg_sess_info_rsp {
	struct ibnbd_msg_hdr hdr;
	__u8 ver;
	__u8 reserved[27];
};

/**
 * struct ibnbd_msg_open - open a device by path.
 * @hdr: type IBNBD_MSG_OPEN.
 * @access_mode: &enum ibnbd_access_mode.
 * @reserved: zero.
 * @dev_path: NUL-terminated path, resolved by the server under its search
 *	root; must not be empty and must contain a NUL within the field.
 */
struct ibnbd_msg_open {
	struct ibnbd_msg_hdr hdr;
	__u8 access_mode;
	__u8 reserved[3];
	char dev_path[IBNBD_DEV_PATH_MAX];
};

/**
 * struct ibnbd_msg_open_rsp - result of OPEN.
 * @hdr: type IBNBD_MSG_OPEN_RSP.
 * @device_id: handle for CLOSE and IO (valid when @error is 0).
 * @nsectors: device size in 512-byte sectors.
 * @max_hw_sectors: largest IO in sectors (already capped by the server's
 *	IBTRS chunk size).
 * @max_discard_sectors: largest DISCARD in sectors, 0 if unsupported.
 * @discard_granularity: bytes.
 * @discard_alignment: bytes.
 * @max_write_zeroes_sectors: largest WRITE_ZEROES, 0 if unsupported.
 * @dev_flags: IBNBD_DEV_* capability flags.
 * @logical_block_size: bytes; IO offsets and lengths are multiples of it.
 * @physical_block_size: bytes.
 * @max_segments: largest number of data segments per IO.
 * @access_mode: the granted &enum ibnbd_access_mode.
 * @reserved1: zero.
 * @error: 0 if the device was opened, else a positive errno (ENOENT: no such
 *	device, EACCES: outside the search root or not permitted, EBUSY:
 *	access mode conflict, EMFILE: too many devices ...).
 * @reserved2: zero.
 * @reason: NUL-terminated human-readable text for @error (may be empty).
 */
struct ibnbd_msg_open_rsp {
	struct ibnbd_msg_hdr hdr;
	__le32 device_id;
	__le64 nsectors;
	__le32 max_hw_sectors;
	__le32 max_discard_sectors;
	__le32 discard_granularity;
	__le32 discard_alignment;
	__le32 max_write_zeroes_sectors;
	__le32 dev_flags;
	__le16 logical_block_size;
	__le16 physical_block_size;
	__le16 max_segments;
	__u8 access_mode;
	__u8 reserved1;
	__le32 error;
	__u8 reserved2[12];
	char reason[IBNBD_REASON_MAX];
};

/**
 * struct ibnbd_msg_close - drop a device handle.
 * @hdr: type IBNBD_MSG_CLOSE.
 * @device_id: handle from OPEN_RSP.
 */
struct ibnbd_msg_close {
	struct ibnbd_msg_hdr hdr;
	__le32 device_id;
};

/**
 * struct ibnbd_msg_io - one block IO.
 * @hdr: type IBNBD_MSG_IO.
 * @device_id: handle from OPEN_RSP.
 * @sector: first 512-byte sector.
 * @rw: &enum ibnbd_io_op in the low 8 bits, IBNBD_F_* flags above.
 * @bi_size: length in bytes; equals the IBTRS data length for READ/WRITE.
 * @prio: IO priority hint (ioprio value), may be ignored.
 * @reserved: zero.
 */
struct ibnbd_msg_io {
	struct ibnbd_msg_hdr hdr;
	__le32 device_id;
	__le64 sector;
	__le32 rw;
	__le32 bi_size;
	__le16 prio;
	__u8 reserved[6];
};

TRS_ASSERT_SIZE(struct ibnbd_msg_hdr, 4);
TRS_ASSERT_SIZE(struct ibnbd_msg_sess_info, 32);
TRS_ASSERT_SIZE(struct ibnbd_msg_sess_info_rsp, 32);
TRS_ASSERT_SIZE(struct ibnbd_msg_open, 264);
TRS_ASSERT_OFFSET(struct ibnbd_msg_open, dev_path, 8);
TRS_ASSERT_SIZE(struct ibnbd_msg_open_rsp, 128);
TRS_ASSERT_OFFSET(struct ibnbd_msg_open_rsp, nsectors, 8);
TRS_ASSERT_OFFSET(struct ibnbd_msg_open_rsp, error, 48);
TRS_ASSERT_OFFSET(struct ibnbd_msg_open_rsp, reason, 64);
TRS_ASSERT_SIZE(struct ibnbd_msg_close, 8);
TRS_ASSERT_SIZE(struct ibnbd_msg_io, 32);
TRS_ASSERT_OFFSET(struct ibnbd_msg_io, sector, 8);
TRS_ASSERT_OFFSET(struct ibnbd_msg_io, rw, 16);

/* The largest IBNBD user header; IBTRS max_usr_len must be at least this. */
#define IBNBD_MAX_USR_LEN	sizeof(struct ibnbd_msg_open)

/**
 * struct ibnbd_dev_limits - what the server checks an IO against.
 * @nsectors: device size in sectors.
 * @logical_block_size: bytes, power of two >= 512.
 * @max_io_bytes: largest READ/WRITE in bytes.
 * @max_discard_sectors: 0 if DISCARD is not served.
 * @max_write_zeroes_sectors: 0 if WRITE_ZEROES is not served.
 * @read_only: the handle refuses WRITE/DISCARD/WRITE_ZEROES.
 *
 * Not a wire struct: host-endian, never sent.
 */
struct ibnbd_dev_limits {
	__u64 nsectors;
	__u32 logical_block_size;
	__u32 max_io_bytes;
	__u32 max_discard_sectors;
	__u32 max_write_zeroes_sectors;
	bool read_only;
};

/* ---- trs/common/ibnbd_proto.c: pure helpers, return 0 or -errno ---- */

const char *ibnbd_msg_type_name(unsigned int type);
const char *ibnbd_access_mode_name(unsigned int mode);
int ibnbd_access_mode_parse(const char *s, enum ibnbd_access_mode *out);
const char *ibnbd_op_name(unsigned int op);

/* Returns the message type (> 0) of @len bytes at @msg, or -EINVAL. */
int ibnbd_msg_type(const void *msg, __kernel_size_t len);

void ibnbd_init_sess_info(struct ibnbd_msg_sess_info *msg, __u8 ver);
void ibnbd_init_sess_info_rsp(struct ibnbd_msg_sess_info_rsp *rsp, __u8 ver);
int ibnbd_init_open(struct ibnbd_msg_open *msg, enum ibnbd_access_mode mode,
		    const char *path);
void ibnbd_init_open_rsp_err(struct ibnbd_msg_open_rsp *rsp, int err,
			     const char *reason);
void ibnbd_init_close(struct ibnbd_msg_close *msg, __u32 device_id);
void ibnbd_init_io(struct ibnbd_msg_io *msg, __u32 device_id, __u64 sector,
		   __u32 rw, __u32 bi_size, __u16 prio);

int ibnbd_validate_sess_info(const void *msg, __kernel_size_t len);
int ibnbd_validate_sess_info_rsp(const void *msg, __kernel_size_t len);
int ibnbd_validate_open(const void *msg, __kernel_size_t len);
int ibnbd_validate_open_rsp(const void *msg, __kernel_size_t len);
int ibnbd_validate_close(const void *msg, __kernel_size_t len);
/*
 * ibnbd_validate_io() - check an IO message on its own: size, type, op and
 * flag bits, flag/op combinations, alignment to 512 bytes, that READ/WRITE
 * carry exactly @datalen bytes (@is_write: the IBTRS direction) and that
 * data-less ops come without data.
 */
int ibnbd_validate_io(const void *msg, __kernel_size_t len, bool is_write,
		      __kernel_size_t datalen);
/*
 * ibnbd_check_io_limits() - check a validated IO against a device: range
 * within the device (no overflow), logical block alignment, size limits,
 * read-only handle, op supported.
 */
int ibnbd_check_io_limits(const struct ibnbd_msg_io *msg,
			  const struct ibnbd_dev_limits *lim);
/*
 * ibnbd_access_check() - may a new opener with @mode join a device that
 * has @writers writers already? 0 or -EBUSY; -EINVAL for an unknown mode.
 */
int ibnbd_access_check(unsigned int mode, unsigned int writers);
static inline bool ibnbd_access_is_writer(unsigned int mode)
{
	return mode == IBNBD_ACCESS_RW || mode == IBNBD_ACCESS_MIGRATION;
}

static inline __u8 ibnbd_negotiate_ver(__u8 peer)
{
	return peer < IBNBD_PROTO_VER_MAJOR ? peer : IBNBD_PROTO_VER_MAJOR;
}

#endif /* TRS_IBNBD_PROTO_H */
