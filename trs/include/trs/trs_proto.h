/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trs_proto.h - IBTRS wire format, shared by the kernel modules and the
 * userspace library. Only <linux/types.h> types; every multi-byte field is
 * little-endian; padding is explicit (zeroed by the sender, ignored by the
 * receiver); no bitfields; every struct's size is pinned below.
 *
 * See trs/PROTOCOL.md for the protocol in prose.
 */
#ifndef TRS_PROTO_H
#define TRS_PROTO_H

#include <linux/types.h>
#include "proto_compat.h"
#include "trs_imm.h"

#define TRS_MAGIC		0x7B5A
#define TRS_PROTO_VER_MAJOR	1
#define TRS_PROTO_VER_MINOR	0

/* Limits. */
#define TRS_CONN_PRIV_MAX	56	/* man rdma_connect(): RC private data */
#define TRS_UUID_LEN		16
#define TRS_SESSNAME_MAX	64	/* including the NUL */
#define TRS_MAX_QUEUE_DEPTH	(1U << TRS_IMM_ID_BITS)	/* chunk ids are 16 bit */
#define TRS_MIN_CHUNK_SIZE	4096
#define TRS_MAX_CHUNK_SIZE	(16U << 20)
#define TRS_HDR_AREA		4096	/* per-chunk header area, after the data */
#define TRS_MAX_CONS_PER_PATH	64
#define TRS_MAX_SG		1	/* read descriptors per request */

TRS_STATIC_ASSERT(TRS_MAX_QUEUE_DEPTH - 1 <= TRS_IMM_ID_MASK,
		  "queue depth must fit in the immediate's id field");

/**
 * enum trs_msg_type - type field of every message that has a payload.
 * @TRS_MSG_INFO_REQ: client -> server SEND on connection 0 of a path.
 * @TRS_MSG_INFO_RSP: server -> client SEND, answers INFO_REQ.
 * @TRS_MSG_IO_WRITE: &struct trs_msg_io_req of a write (in the chunk).
 * @TRS_MSG_IO_READ: &struct trs_msg_io_req of a read (in the chunk).
 * @TRS_MSG_IO_RSP: server -> client SEND_WITH_INV payload completing a read
 *	whose client buffer the server invalidated.
 * @TRS_MSG_KEYS: server -> client SEND on connection 0, before INFO_RSP, of
 *	a path whose chunks are re-keyed per IO: the chunks' first keys.
 * @TRS_MSG_TYPE_MAX: one past the last type.
 */
enum trs_msg_type {
	TRS_MSG_INFO_REQ = 1,
	TRS_MSG_INFO_RSP = 2,
	TRS_MSG_IO_WRITE = 3,
	TRS_MSG_IO_READ = 4,
	TRS_MSG_IO_RSP = 5,
	TRS_MSG_KEYS = 6,
	TRS_MSG_TYPE_MAX,
};

/**
 * enum trs_rej_code - why a server refused a connection; carried in
 * &trs_msg_conn_rsp.rej of an rdma_reject() and printed with trs_rej_str().
 * @TRS_REJ_NONE: not a rejection (accept).
 * @TRS_REJ_BAD_PRIV: private data missing or too short.
 * @TRS_REJ_BAD_MAGIC: magic is not TRS_MAGIC.
 * @TRS_REJ_VERSION: protocol major version differs.
 * @TRS_REJ_BAD_CID: cid >= cid_num or cid_num out of range.
 * @TRS_REJ_NO_SESS: path joins a session the server does not know and the
 *	FIRST flag is clear.
 * @TRS_REJ_NOMEM: server out of memory or registration failed.
 * @TRS_REJ_BUSY: a path with this UUID and the same reconnect count is
 *	already connected.
 * @TRS_REJ_CLOSING: server is shutting down.
 * @TRS_REJ_BAD_FLAGS: unknown flag bits set.
 * @TRS_REJ_LIMIT: a new session would exceed the server's session limits
 *	(in all, or from this client address).
 * @TRS_REJ_MAX: one past the last code.
 */
enum trs_rej_code {
	TRS_REJ_NONE = 0,
	TRS_REJ_BAD_PRIV = 1,
	TRS_REJ_BAD_MAGIC = 2,
	TRS_REJ_VERSION = 3,
	TRS_REJ_BAD_CID = 4,
	TRS_REJ_NO_SESS = 5,
	TRS_REJ_NOMEM = 6,
	TRS_REJ_BUSY = 7,
	TRS_REJ_CLOSING = 8,
	TRS_REJ_BAD_FLAGS = 9,
	TRS_REJ_LIMIT = 10,
	TRS_REJ_MAX,
};

/* Flags of trs_msg_conn_req.flags */
#define TRS_CONN_F_FIRST	(1U << 0)	/* may create the session */
#define TRS_CONN_F_ALL		(TRS_CONN_F_FIRST)

/**
 * struct trs_msg_conn_req - client's RDMA CM connect private data.
 * NOTE: max size 56 bytes, see man rdma_connect().
 * @__cma_version: reserved for the RDMA CM (AF_IB), must be 0.
 * @__ip_version: reserved for the RDMA CM (AF_IB), must be 0.
 * @magic: TRS_MAGIC.
 * @ver_major: client's TRS_PROTO_VER_MAJOR; must equal the server's.
 * @ver_minor: client's TRS_PROTO_VER_MINOR; the session uses min(both).
 * @cid: index of this connection within its path, < @cid_num.
 * @cid_num: connections in the path, 1..TRS_MAX_CONS_PER_PATH.
 * @recon_cnt: incremented by the client on every (re)connect of the path;
 *	a higher count replaces a stale server-side path with the same UUID.
 * @flags: TRS_CONN_F_*.
 * @sess_uuid: the client session (all paths share it).
 * @path_uuid: this path (random per path, stable across reconnects).
 * @reserved: zero.
 */
struct trs_msg_conn_req {
	__u8	__cma_version;
	__u8	__ip_version;
	__le16	magic;
	__u8	ver_major;
	__u8	ver_minor;
	__le16	cid;
	__le16	cid_num;
	__le16	recon_cnt;
	__le32	flags;
	__u8	sess_uuid[TRS_UUID_LEN];
	__u8	path_uuid[TRS_UUID_LEN];
	__u8	reserved[8];
};
TRS_ASSERT_SIZE(struct trs_msg_conn_req, 56);
TRS_ASSERT_OFFSET(struct trs_msg_conn_req, magic, 2);
TRS_ASSERT_OFFSET(struct trs_msg_conn_req, sess_uuid, 16);
TRS_ASSERT_OFFSET(struct trs_msg_conn_req, path_uuid, 32);
TRS_STATIC_ASSERT(sizeof(struct trs_msg_conn_req) <= TRS_CONN_PRIV_MAX,
		  "conn_req exceeds the RDMA CM private data limit");

/*
 * trs_msg_conn_rsp.flags and trs_msg_info_rsp.flags: no flag is defined yet
 * (reserved, must be 0; a receiver rejects any bit set).
 */

/**
 * struct trs_msg_conn_rsp - server's accept (or reject) private data.
 * @magic: TRS_MAGIC.
 * @ver_major: server's major version.
 * @ver_minor: negotiated minor: min(client's, server's).
 * @rej: &enum trs_rej_code; TRS_REJ_NONE in an accept.
 * @queue_depth: chunks in the session's pool (= client permits).
 * @chunk_size: bytes per chunk data area = max IO size.
 * @max_usr_len: largest user header the server accepts.
 * @hdr_area: bytes of the header area after each chunk's data area; the
 *	pool's slot stride is @chunk_size + @hdr_area.
 * @flags: reserved, 0.
 * @reserved: zero.
 */
struct trs_msg_conn_rsp {
	__le16	magic;
	__u8	ver_major;
	__u8	ver_minor;
	__le16	rej;
	__le16	queue_depth;
	__le32	chunk_size;
	__le32	max_usr_len;
	__le32	hdr_area;
	__le32	flags;
	__u8	reserved[32];
};
TRS_ASSERT_SIZE(struct trs_msg_conn_rsp, 56);
TRS_ASSERT_OFFSET(struct trs_msg_conn_rsp, rej, 4);

/**
 * struct trs_msg_info_req - first message of a path (SEND on cid 0).
 * @type: TRS_MSG_INFO_REQ.
 * @reserved: zero.
 * @flags: zero (no flags defined yet).
 * @sessname: session name, NUL-terminated within the array.
 */
struct trs_msg_info_req {
	__le16	type;
	__le16	reserved;
	__le32	flags;
	__u8	sessname[TRS_SESSNAME_MAX];
};
TRS_ASSERT_SIZE(struct trs_msg_info_req, 72);

/*
 * trs_sessname_char_ok() - may a session name hold @c? Printable ASCII but
 * '/': the name reaches logs and sysfs. A server refuses an INFO_REQ with
 * any other character, so clients check the name they are given.
 */
static inline bool trs_sessname_char_ok(__u8 c)
{
	return c >= 0x20 && c <= 0x7e && c != '/';
}

/**
 * struct trs_msg_info_rsp - the server's answer: where the chunk pool is.
 * @type: TRS_MSG_INFO_RSP.
 * @status: &enum trs_rej_code, TRS_REJ_NONE when the path has joined.
 * @queue_depth: as in &trs_msg_conn_rsp (must not change).
 * @reserved: zero.
 * @chunk_size: as in &trs_msg_conn_rsp (must not change).
 * @slot_size: stride of the pool: chunk_size + hdr_area.
 * @pool_addr: remote address of chunk 0 (slot i at pool_addr + i*slot_size).
 * @pool_rkey: rkey of the pool on this path (REMOTE_WRITE only); 0 with
 *	TRS_INFO_F_REKEY, where each chunk has a key of its own.
 * @flags: TRS_INFO_F_*.
 */
struct trs_msg_info_rsp {
	__le16	type;
	__le16	status;
	__le16	queue_depth;
	__le16	reserved;
	__le32	chunk_size;
	__le32	slot_size;
	__le64	pool_addr;
	__le32	pool_rkey;
	__le32	flags;
};
TRS_ASSERT_SIZE(struct trs_msg_info_rsp, 32);
TRS_ASSERT_OFFSET(struct trs_msg_info_rsp, pool_addr, 16);

/*
 * Flags of trs_msg_info_rsp.flags. TRS_INFO_F_REKEY (chunk_mode rekey):
 * chunk i is reachable only through a key of its own, which the KEYS
 * messages before INFO_RSP gave; every answer of an IO on chunk i of this
 * path means the server re-keyed chunk i first (the old key is dead before
 * the answer is sent) and the new key is the old one with its low byte
 * incremented (ib_inc_rkey()/ibv_inc_rkey()). A client that cannot do this
 * fails the path, naming the mode.
 */
#define TRS_INFO_F_REKEY	(1U << 0)
/*
 * TRS_INFO_F_PULL: the server can pull a write's data (write_mode pull,
 * TRS_IO_F_PULL) on this path's connections. A client in write_mode pull
 * fails a path whose server does not announce it, naming the mode.
 */
#define TRS_INFO_F_PULL		(1U << 1)
#define TRS_INFO_F_ALL		(TRS_INFO_F_REKEY | TRS_INFO_F_PULL)

#define TRS_KEYS_PER_MSG	28

/**
 * struct trs_msg_keys - first keys of chunks [first, first + count) of a
 *	path with re-keyed chunks (TRS_INFO_F_REKEY), in chunk order; the
 *	messages of a path cover 0 .. queue_depth - 1 once each, in order.
 * @type: TRS_MSG_KEYS.
 * @first: first chunk id.
 * @count: keys in @rkey, 1 .. TRS_KEYS_PER_MSG.
 * @reserved: zero.
 * @rkey: the keys; only @count are sent.
 */
struct trs_msg_keys {
	__le16	type;
	__le16	first;
	__le16	count;
	__le16	reserved;
	__le32	rkey[TRS_KEYS_PER_MSG];
};
TRS_ASSERT_SIZE(struct trs_msg_keys, 120);
TRS_ASSERT_OFFSET(struct trs_msg_keys, rkey, 8);

/**
 * struct trs_sg_desc - a remote buffer.
 * @addr: remote virtual address (iova).
 * @rkey: remote key (a memory window or a memory region).
 * @len: bytes.
 */
struct trs_sg_desc {
	__le64	addr;
	__le32	rkey;
	__le32	len;
};
TRS_ASSERT_SIZE(struct trs_sg_desc, 16);

/*
 * Flags of trs_msg_io_req.flags. TRS_IO_F_NEED_INV: answer with
 * SEND_WITH_INV(desc.rkey) carrying &struct trs_msg_io_rsp (a read, or a
 * pulled write). TRS_IO_F_PULL (writes only; write_mode pull): the data is
 * not in the chunk: the server RDMA-READs it from @desc (its len equals
 * @data_len) into the chunk's data area, then serves the write.
 */
#define TRS_IO_F_NEED_INV	(1U << 0)
#define TRS_IO_F_PULL		(1U << 1)
#define TRS_IO_F_ALL		(TRS_IO_F_NEED_INV | TRS_IO_F_PULL)

/**
 * struct trs_msg_io_req - request header; the client writes it (followed
 * by @usr_len bytes of user header) at the start of the chunk's header area,
 * i.e. at slot + chunk_size. Write data sits right-aligned just before it:
 * [slot + chunk_size - data_len, slot + chunk_size), written there by the
 * client (push) or read there by the server (pull, TRS_IO_F_PULL).
 * @type: TRS_MSG_IO_WRITE or TRS_MSG_IO_READ.
 * @flags: TRS_IO_F_*: reads NEED_INV; writes none, or PULL [| NEED_INV].
 * @usr_len: bytes of user header following this struct.
 * @sg_cnt: reads and pulled writes: 1 (one client buffer in @desc), or 0
 *	for a read without data; pushed writes: 0.
 * @data_len: writes: bytes of data before the header; reads: 0.
 * @reserved: zero.
 * @desc: reads: the client buffer the server RDMA-WRITEs into; pulled
 *	writes: the client buffer the server RDMA-READs from.
 * @seq: client's request sequence number, echoed in logs only.
 * @reserved2: zero.
 */
struct trs_msg_io_req {
	__le16	type;
	__le16	flags;
	__le16	usr_len;
	__le16	sg_cnt;
	__le32	data_len;
	__le32	reserved;
	struct trs_sg_desc desc;
	__le64	seq;
	__u8	reserved2[8];
};
TRS_ASSERT_SIZE(struct trs_msg_io_req, 48);
TRS_ASSERT_OFFSET(struct trs_msg_io_req, desc, 16);

/* Flags of trs_msg_io_rsp.flags */
#define TRS_RSP_F_INVALIDATED	(1U << 0)	/* sent as SEND_WITH_INV(desc.rkey) */

/**
 * struct trs_msg_io_rsp - payload of the answer of a read, or of a write
 * whose client buffer the server invalidated (a SEND_WITH_INV cannot carry
 * immediate data).
 * @type: TRS_MSG_IO_RSP.
 * @chunk_id: chunk of the request, < queue_depth.
 * @status: abs(errno) of the IO, 0 on success, <= TRS_IMM_MAX_ERRNO.
 * @flags: TRS_RSP_F_*.
 * @len: bytes the server wrote into the client buffer.
 */
struct trs_msg_io_rsp {
	__le16	type;
	__le16	chunk_id;
	__le32	status;
	__le32	flags;
	__le32	len;
};
TRS_ASSERT_SIZE(struct trs_msg_io_rsp, 16);

#define TRS_MAX_USR_LEN		(TRS_HDR_AREA - sizeof(struct trs_msg_io_req))
#define TRS_MAX_RECV_MSG	128	/* receive buffer size, both sides */
TRS_STATIC_ASSERT(sizeof(struct trs_msg_info_req) <= TRS_MAX_RECV_MSG, "info_req");
TRS_STATIC_ASSERT(sizeof(struct trs_msg_info_rsp) <= TRS_MAX_RECV_MSG, "info_rsp");

#endif /* TRS_PROTO_H */
