/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trs_common.h - pure IBTRS protocol logic shared by the userspace library
 * and the kernel modules: message encode/decode with validation, the receive
 * prologue, the heartbeat state machine, the permit allocator, multipath
 * selection and reconnect backoff. No allocation, no I/O, no clock, no libc:
 * callers pass buffers and times (in us) in and get 0 / -errno back. Every
 * decoder sets *why to a static string naming the violated rule.
 */
#ifndef TRS_COMMON_H
#define TRS_COMMON_H

#include <linux/types.h>
#include "trs/proto_compat.h"
#include "trs/trs_proto.h"

/* proto.c */
const char *trs_rej_str(int rej);
const char *trs_msg_type_str(int type);

/**
 * struct trs_conn_req_info - host-order view of &struct trs_msg_conn_req.
 */
struct trs_conn_req_info {
	__u8 ver_major, ver_minor;
	__u16 cid, cid_num, recon_cnt;
	__u32 flags;
	__u8 sess_uuid[TRS_UUID_LEN];
	__u8 path_uuid[TRS_UUID_LEN];
};
void trs_conn_req_encode(struct trs_msg_conn_req *m,
			 const struct trs_conn_req_info *in);
/* Returns TRS_REJ_NONE or the reject code to send back. */
int trs_conn_req_decode(const void *buf, __u32 len,
			struct trs_conn_req_info *out, const char **why);

/**
 * struct trs_conn_params - host-order view of &struct trs_msg_conn_rsp.
 */
struct trs_conn_params {
	__u8 ver_major, ver_minor;
	__u16 rej;
	__u32 queue_depth;
	__u32 chunk_size, max_usr_len, hdr_area, flags;
};
void trs_conn_rsp_encode(struct trs_msg_conn_rsp *m,
			 const struct trs_conn_params *in);
/* 0, or -ECONNREFUSED (out->rej set) for a reject, or -EPROTO. */
int trs_conn_rsp_decode(const void *buf, __u32 len,
			struct trs_conn_params *out, const char **why);
/* Check server-side parameters before advertising them. */
int trs_conn_params_check(const struct trs_conn_params *p, const char **why);
/* min() of the minor versions, major must match: TRS_REJ_* */
int trs_negotiate_version(__u8 peer_major, __u8 peer_minor, __u8 *minor_out);

void trs_info_req_encode(struct trs_msg_info_req *m, const char *sessname);
/* Copies the NUL-terminated name into name[TRS_SESSNAME_MAX]. */
int trs_info_req_decode(const void *buf, __u32 len, char *name,
			const char **why);

struct trs_info {
	__u16 status;
	__u32 queue_depth, chunk_size, slot_size, flags;
	__u64 pool_addr;
	__u32 pool_rkey;
};
void trs_info_rsp_encode(struct trs_msg_info_rsp *m, const struct trs_info *in);
/* KEYS (TRS_INFO_F_REKEY): encode up to TRS_KEYS_PER_MSG keys from @rkeys,
 * returning the bytes to send; decode into @rkeys (TRS_KEYS_PER_MSG room). */
__u32 trs_keys_encode(struct trs_msg_keys *m, __u16 first, __u16 count,
		      const __u32 *rkeys);
int trs_keys_decode(const void *buf, __u32 len, __u32 queue_depth,
		    __u32 *first, __u32 *count, __u32 *rkeys, const char **why);
/* Validates against the parameters of the accept (@p). */
int trs_info_rsp_decode(const void *buf, __u32 len,
			const struct trs_conn_params *p, struct trs_info *out,
			const char **why);

struct trs_io_req_info {
	__u16 type, flags, usr_len, sg_cnt;
	__u32 data_len;
	__u64 raddr;
	__u32 rkey, rlen;
	__u64 seq;
};
void trs_io_req_encode(struct trs_msg_io_req *m,
		       const struct trs_io_req_info *in);
/**
 * trs_io_req_decode() - validate a request header taken from a chunk.
 * @hdr: a private copy of the chunk's header area (never the chunk itself,
 *	which the client can still overwrite), @hdr_len bytes of it.
 */
/*
 * trs_io_req_copy() - copy a request's header out of its chunk's header
 * area (@area, @area_len bytes, which the peer may still be writing) into
 * @dst: the fixed header, then as many user header bytes as the copy's own
 * usr_len says, at most @max_usr_len + 1 and never past the area (so that
 * trs_io_req_decode() on the copy still sees a usr_len too long). Returns
 * the bytes copied: what to pass to trs_io_req_decode() as @hdr_len. Reads
 * ~50 bytes for a typical request where copying the area would read 4096.
 */
__u32 trs_io_req_copy(void *dst, const void *area, __u32 area_len,
		      __u32 max_usr_len);
int trs_io_req_decode(const void *hdr, __u32 hdr_len, __u32 chunk_size,
		      __u32 max_usr_len, struct trs_io_req_info *out,
		      const char **why);

/**
 * trs_io_resp_check() - what a server may answer to a request it served.
 * @req: the request, as trs_io_req_decode() gave it.
 * @status: in: the user's status (an errno of either sign, 0 on success);
 *	out: 0 or a negative errno an answer can carry (<= TRS_IMM_MAX_ERRNO,
 *	larger ones become -EIO).
 * @len: in: the bytes the user put into the chunk for a read; out: the
 *	bytes to send back (0 for a write).
 * A successful read answer must cover the whole request, else the client
 * would take a partly stale buffer for good data (PROTOCOL.md 4); an
 * answer longer than the request's buffer never fits it.
 * Return: 0, or -EINVAL when a read answer's length was wrong (then
 * @status is -EIO and @len 0; the caller logs it).
 */
int trs_io_resp_check(const struct trs_io_req_info *req, int *status,
		      __u32 *len);

struct trs_io_rsp_info {
	__u16 chunk_id;
	int status;	/* 0 or -errno */
	__u32 flags, len;
};
void trs_io_rsp_encode(struct trs_msg_io_rsp *m,
		       const struct trs_io_rsp_info *in);
int trs_io_rsp_decode(const void *buf, __u32 len, __u32 queue_depth,
		      struct trs_io_rsp_info *out, const char **why);

/* Check an immediate received by a role; *type_out/id_out set on success. */
int trs_imm_decode_srv(__u32 imm, __u32 queue_depth, __u32 *type_out,
		       __u32 *id_out, const char **why);
int trs_imm_decode_clt(__u32 imm, __u32 queue_depth, __u32 *type_out,
		       __u32 *id_out, int *err_out, const char **why);

/* permit.c - single-threaded; the kernel wraps it (see permit.c) */
#define TRS_BITMAP_WORDS(n)	(((n) + 63) / 64)
struct trs_permit_pool {
	__u64 *map;	/* caller-provided, TRS_BITMAP_WORDS(depth) words */
	__u32 depth;
	__u32 used;
	__u32 hint;	/* word where the last search succeeded */
};
int trs_permit_pool_init(struct trs_permit_pool *p, __u64 *map, __u32 nwords,
			 __u32 depth);
int trs_permit_get(struct trs_permit_pool *p);		/* id or -EAGAIN */
int trs_permit_put(struct trs_permit_pool *p, __u32 id); /* -EINVAL, -EALREADY */
bool trs_permit_is_held(const struct trs_permit_pool *p, __u32 id);

/* mp.c - path selection. Single-threaded: the caller serializes calls per
 * session and owns the cursor; the kernel wraps it (per-CPU round-robin
 * cursors, per-CPU/atomic inflight counts, the latency average updated
 * under the path's lock). Values equal enum ibtrs_mp_policy. */
enum trs_mp_policy {
	TRS_MP_ROUND_ROBIN = 0,
	TRS_MP_MIN_INFLIGHT = 1,
	TRS_MP_MIN_LATENCY = 2,
	TRS_MP_MAX,
};
#define TRS_MP_MAX_PATHS	64
/* IO latency average: fixed point (microseconds << TRS_MP_LAT_FRAC),
 * weight of a new sample 1 / 2^TRS_MP_LAT_WEIGHT. min-latency treats scores
 * within 1 / 2^TRS_MP_LAT_BAND_SHIFT of the best as equal. */
#define TRS_MP_LAT_FRAC		4
#define TRS_MP_LAT_WEIGHT	3
#define TRS_MP_LAT_BAND_SHIFT	3
#define TRS_MP_LAT_AGE_SHIFT	6
struct trs_mp_path {
	bool usable;		/* connected and not being torn down */
	__u32 inflight;
	__u64 lat_ewma;		/* trs_mp_lat_sample(), 0 = not measured yet */
};
/* Index of the chosen path, or -ENOTCONN when none is usable; paths whose
 * bit is set in @skip are not considered. min-latency picks the smallest
 * lat_ewma * (inflight + 1), ties (within the band) in turn from @rr_cursor;
 * an unmeasured path scores 0 and is tried first. */
int trs_mp_select(int policy, const struct trs_mp_path *paths, int n,
		  __u32 *rr_cursor, __u64 skip);
/* Fold one IO's post-to-completion latency into a path's average. */
void trs_mp_lat_sample(__u64 *ewma, __u64 sample_us);
/* Decay by 1 / 2^TRS_MP_LAT_AGE_SHIFT the average of a path that has
 * nothing in flight, once per sample taken on another path: a path that
 * looked slow (one noisy sample, a past hiccup) is tried again after a few
 * dozen IOs instead of never. Never reaches 0. */
void trs_mp_lat_age(__u64 *ewma);
static inline __u64 trs_mp_lat_us(__u64 ewma)
{
	return ewma >> TRS_MP_LAT_FRAC;
}

/*
 * modes.c - the registration and invalidation modes: one set of names for
 * every implementation; each implementation refuses by name, with the
 * reason in *why, a mode it does not offer.
 * @TRS_MR_MW: a type-2 memory window over exactly the read buffer (userspace).
 * @TRS_MR_GLOBAL: UNSAFE, comparison only: a long-lived key over client memory.
 * @TRS_MR_REG: a registration of exactly the read buffer per IO (userspace).
 * @TRS_MR_BOUNCE: IO goes through a pre-registered bounce pool and a copy:
 *	none of the user's memory is ever registered or exposed (both).
 * @TRS_MR_FRWR: fast registration (REG_MR) of the read buffer (kernel).
 */
enum trs_mr_mode {
	TRS_MR_MW = 0,
	TRS_MR_GLOBAL = 1,
	TRS_MR_REG = 2,
	TRS_MR_BOUNCE = 3,
	TRS_MR_FRWR = 4,
	TRS_MR_MAX
};

/*
 * @TRS_INVAL_REMOTE: the answer invalidates the read buffer's key
 *	(SEND_WITH_INV, checked by the client).
 * @TRS_INVAL_LOCAL: the client invalidates (or deregisters) it before the
 *	IO completes.
 * @TRS_INVAL_NONE: UNSAFE, comparison only: keys live as long as the path.
 */
enum trs_inval_mode {
	TRS_INVAL_REMOTE = 0,
	TRS_INVAL_LOCAL = 1,
	TRS_INVAL_NONE = 2,
	TRS_INVAL_MAX
};

enum trs_impl { TRS_IMPL_USER = 0, TRS_IMPL_KERNEL = 1 };

/*
 * Server chunk exposure (chunk_mode; announced by TRS_INFO_F_REKEY).
 * @TRS_CHUNK_STATIC: one key per path for the whole pool, for the path's
 *	life (IBTRS's design).
 * @TRS_CHUNK_REKEY: each chunk has a key of its own, replaced after every
 *	IO before its answer: an ended IO's key writes nothing.
 */
enum trs_chunk_mode {
	TRS_CHUNK_STATIC = 0,
	TRS_CHUNK_REKEY = 1,
	TRS_CHUNK_MAX
};
const char *trs_chunk_mode_name(int m);
int trs_chunk_mode_parse(const char *s, int impl, const char **why);

/**
 * enum trs_write_mode - how a write's data reaches the server's chunk
 * (write_mode; a pulled request carries TRS_IO_F_PULL, a server that can
 * pull announces TRS_INFO_F_PULL).
 * @TRS_WRITE_PUSH: the client RDMA-WRITEs it into the chunk, in front of
 *	the request header, in the request's one WRITE_WITH_IMM (IBTRS).
 * @TRS_WRITE_PULL: the client exposes its buffer for remote reading and
 *	the server RDMA-READs it into the chunk (nvme-rdma's way for writes
 *	above its inline size); the buffer's key ends with the answer, as a
 *	read buffer's does.
 */
/*
 * write_mode pull: RDMA READs a server may have outstanding per connection
 * (the client's responder resources, the server's initiator depth; each
 * side lowers it to what its device can do).
 */
#define TRS_PULL_READS		16

enum trs_write_mode {
	TRS_WRITE_PUSH = 0,
	TRS_WRITE_PULL = 1,
	TRS_WRITE_MAX
};
const char *trs_write_mode_name(int m);
int trs_write_mode_parse(const char *s, int impl, const char **why);

const char *trs_mr_mode_name(int m);
const char *trs_inval_mode_name(int m);
/* A mode's name (one trailing newline allowed) -> the mode; -EINVAL for an
 * unknown name, -EOPNOTSUPP for one @impl does not offer; *why says which. */
int trs_mr_mode_parse(const char *s, int impl, const char **why);
int trs_inval_mode_parse(const char *s, const char **why);
/* 0 when @impl runs @mr with @inval, else -EINVAL/-EOPNOTSUPP and *why. */
int trs_modes_check(int impl, int mr, int inval, const char **why);

/* backoff.c */
/* Reconnect delay of attempt @attempt (0-based): min*2^attempt capped at
 * max, plus uniform jitter in [0, 50%] drawn from @rnd. */
__u32 trs_backoff_ms(__u32 attempt, __u32 min_ms, __u32 max_ms, __u32 rnd);

/*
 * hb.c - heartbeat and liveness of one path, the same state machine on
 * both sides. Times are microseconds of a monotonic clock passed in by the
 * caller (no clock calls here); a time before the last event (a clock read
 * earlier than the event it is compared with) counts as "no time passed".
 * Single-threaded: the caller serializes calls per path.
 */

/**
 * struct trs_hb - heartbeat state of a path.
 * @interval_us: a heartbeat is sent every @interval_us.
 * @missed_max: the path is dead after @missed_max intervals of silence.
 * @last_rx_us: when the last completion was received (any counts as life).
 * @next_send_us: when the next heartbeat is due.
 * @sent_at_us: when heartbeat @seq was sent.
 * @seq: sequence of the last heartbeat sent (16 bits: the immediate's id).
 * @ack_pending: heartbeat @seq has not been acknowledged yet.
 */
struct trs_hb {
	__u64 interval_us;
	__u32 missed_max;
	__u64 last_rx_us;
	__u64 next_send_us;
	__u64 sent_at_us;
	__u16 seq;
	bool ack_pending;
};

/* Start (or restart after a reconnect): alive at @now, first heartbeat due
 * at once. @seq continues, so a late ack of an old heartbeat is stale. */
void trs_hb_start(struct trs_hb *hb, __u32 interval_ms, __u32 missed_max,
		  __u64 now);
/* Something was received at @now. */
void trs_hb_on_rx(struct trs_hb *hb, __u64 now);
/* Microseconds of silence at @now (0 if @now is before the last receive). */
__u64 trs_hb_idle_us(const struct trs_hb *hb, __u64 now);
/* Silence allowed before the path is failed: interval * missed_max. */
__u64 trs_hb_timeout_us(const struct trs_hb *hb);
/* Nothing received for longer than trs_hb_timeout_us(). */
bool trs_hb_timed_out(const struct trs_hb *hb, __u64 now);
/*
 * trs_hb_due() - is a heartbeat due at @now? If so the state advances (new
 * sequence, sent at @now, next one an interval later) and *seq is the
 * sequence to send (TRS_IMM_HB|seq); the caller posts it.
 */
bool trs_hb_due(struct trs_hb *hb, __u64 now, __u16 *seq);
/*
 * trs_hb_on_ack() - an HB_ACK for @seq arrived at @now. Returns 0 and the
 * round trip in *rtt_us for the outstanding heartbeat, -ENOENT for any other
 * sequence or a duplicate (stale: ignore it).
 */
int trs_hb_on_ack(struct trs_hb *hb, __u16 seq, __u64 now, __u64 *rtt_us);

/*
 * rx.c - the receive prologue both sides run on a receive completion before
 * dispatching it: completion status, opcode, immediate, byte_len bounds and
 * the message type. The verbs layer (ibv_wc in userspace, ib_wc in the
 * kernel) fills a struct trs_rx_wc; state checks (has the path joined?)
 * stay with the caller.
 */
enum trs_rx_op {
	TRS_RX_OP_RECV,		/* a SEND (with imm or inv) was received */
	TRS_RX_OP_RECV_RDMA_IMM, /* an RDMA_WRITE_WITH_IMM landed */
	TRS_RX_OP_OTHER,	/* anything else: never valid on a receive */
};

/**
 * struct trs_rx_wc - what the protocol checks of a receive completion.
 * @ok: the completion status is success.
 * @op: &enum trs_rx_op.
 * @with_imm: immediate data present (@imm, host order).
 * @with_inv: the peer invalidated @inv_rkey (SEND_WITH_INV).
 * @byte_len: bytes received (for RECV: the message in the receive buffer).
 */
struct trs_rx_wc {
	bool ok;
	__u8 op;
	bool with_imm;
	bool with_inv;
	__u32 imm;
	__u32 inv_rkey;
	__u32 byte_len;
};

/**
 * enum trs_rx_kind - what a valid receive is.
 * @TRS_RX_HB: a heartbeat; answer HB_ACK with the same id.
 * @TRS_RX_HB_ACK: acknowledges heartbeat @id.
 * @TRS_RX_IO_REQ: (server) chunk @id holds a new request.
 * @TRS_RX_IO_RSP: (client) request @id completed with @status; @inv: the
 *	server invalidated @inv_rkey (a SEND_WITH_INV answer); an IO_RSP
 *	message (not an immediate) also gives its length field, @rsp_len.
 * @TRS_RX_MSG: a message with payload, @msg_type, @len bytes in the buffer
 *	(copy it out before reposting the receive).
 */
enum trs_rx_kind {
	TRS_RX_HB,
	TRS_RX_HB_ACK,
	TRS_RX_IO_REQ,
	TRS_RX_IO_RSP,
	TRS_RX_MSG,
};

struct trs_rx_msg {
	enum trs_rx_kind kind;
	__u32 id;
	int status;
	bool inv;
	__u32 inv_rkey;
	__u16 msg_type;
	__u32 len;
	__u32 rsp_len;
};

/*
 * trs_rx_decode_srv/_clt() - validate a receive completion (@wc) and the
 * receive buffer @buf (TRS_MAX_RECV_MSG bytes) against @queue_depth (0
 * before the session is sized: no chunk id is valid). 0 and *out filled,
 * or -errno with *why naming the rule; the caller then fails the path.
 * A failed completion (!@wc->ok) returns -EIO.
 */
int trs_rx_decode_srv(const struct trs_rx_wc *wc, const void *buf,
		      __u32 queue_depth, struct trs_rx_msg *out,
		      const char **why);
int trs_rx_decode_clt(const struct trs_rx_wc *wc, const void *buf,
		      __u32 queue_depth, struct trs_rx_msg *out,
		      const char **why);

#endif /* TRS_COMMON_H */
