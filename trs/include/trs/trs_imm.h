/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trs_imm.h - the 32-bit immediate data of IBTRS messages.
 *
 * Layout (host order; the verbs layer carries imm_data in network order, the
 * helpers below work on the host-order value, callers convert with
 * htonl()/ntohl() or be32_to_cpu() at the verbs boundary):
 *
 *   31      28 27              16 15                      0
 *  +----------+------------------+-------------------------+
 *  |   type   |   errno (abs)    |  chunk id / hb sequence |
 *  +----------+------------------+-------------------------+
 *      4 bits        12 bits               16 bits
 *
 * The bit budget is checked at compile time below: a queue depth can never
 * exceed 2^16 chunks and an errno never exceeds 4095 (MAX_ERRNO in Linux).
 * Unlike RTRS the chunk offset is not packed into the immediate, so queue
 * depth and chunk size do not compete for bits.
 */
#ifndef TRS_IMM_H
#define TRS_IMM_H

#include <linux/types.h>
#include "proto_compat.h"

#define TRS_IMM_TYPE_BITS	4
#define TRS_IMM_ERR_BITS	12
#define TRS_IMM_ID_BITS		16

#define TRS_IMM_TYPE_SHIFT	(TRS_IMM_ERR_BITS + TRS_IMM_ID_BITS)
#define TRS_IMM_ERR_SHIFT	TRS_IMM_ID_BITS
#define TRS_IMM_TYPE_MASK	((1U << TRS_IMM_TYPE_BITS) - 1)
#define TRS_IMM_ERR_MASK	((1U << TRS_IMM_ERR_BITS) - 1)
#define TRS_IMM_ID_MASK		((1U << TRS_IMM_ID_BITS) - 1)

/** TRS_IMM_MAX_ERRNO - largest errno an immediate can carry (Linux MAX_ERRNO) */
#define TRS_IMM_MAX_ERRNO	4095

/**
 * enum trs_imm_type - what a message carrying immediate data means.
 * @TRS_IMM_INVALID: never sent; a zero immediate is rejected.
 * @TRS_IMM_IO_REQ: client -> server RDMA WRITE WITH IMM; id = chunk id whose
 *	header area now holds a &struct trs_msg_io_req; err = 0.
 * @TRS_IMM_IO_RSP: server -> client SEND WITH IMM (no payload); id = chunk
 *	id of the request being completed; err = abs(status).
 * @TRS_IMM_HB: heartbeat, either direction, SEND WITH IMM (no payload);
 *	id = sequence number.
 * @TRS_IMM_HB_ACK: heartbeat answer; id = the sequence being acknowledged.
 * @TRS_IMM_TYPE_MAX: number of types, must fit in TRS_IMM_TYPE_BITS.
 */
enum trs_imm_type {
	TRS_IMM_INVALID = 0,
	TRS_IMM_IO_REQ = 1,
	TRS_IMM_IO_RSP = 2,
	TRS_IMM_HB = 3,
	TRS_IMM_HB_ACK = 4,
	TRS_IMM_TYPE_MAX,
};

TRS_STATIC_ASSERT(TRS_IMM_TYPE_BITS + TRS_IMM_ERR_BITS + TRS_IMM_ID_BITS == 32,
		  "immediate bit budget must be exactly 32 bits");
TRS_STATIC_ASSERT(TRS_IMM_TYPE_MAX <= (1U << TRS_IMM_TYPE_BITS),
		  "immediate types do not fit in the type field");
TRS_STATIC_ASSERT(TRS_IMM_MAX_ERRNO <= TRS_IMM_ERR_MASK,
		  "errno does not fit in the error field");

/**
 * trs_to_imm() - pack an immediate; out-of-range fields are truncated, so
 * callers use trs_imm_pack() when the inputs are not already validated.
 */
static inline __u32 trs_to_imm(enum trs_imm_type type, __u32 id, __u32 err)
{
	return ((__u32)type & TRS_IMM_TYPE_MASK) << TRS_IMM_TYPE_SHIFT |
	       (err & TRS_IMM_ERR_MASK) << TRS_IMM_ERR_SHIFT |
	       (id & TRS_IMM_ID_MASK);
}

/**
 * trs_imm_pack() - checked packing.
 * @err: 0 or a negative errno (stored as its absolute value).
 * Return: 0 and *imm set, or -ERANGE when a field does not fit.
 */
static inline int trs_imm_pack(enum trs_imm_type type, __u32 id, int err,
			       __u32 *imm)
{
	__u32 aerr = err < 0 ? (__u32)-err : (__u32)err;

	if (type <= TRS_IMM_INVALID || type >= TRS_IMM_TYPE_MAX ||
	    id > TRS_IMM_ID_MASK || aerr > TRS_IMM_MAX_ERRNO)
		return -ERANGE;
	*imm = trs_to_imm(type, id, aerr);
	return 0;
}

static inline __u32 trs_imm_type(__u32 imm)
{
	return (imm >> TRS_IMM_TYPE_SHIFT) & TRS_IMM_TYPE_MASK;
}

static inline __u32 trs_imm_id(__u32 imm)
{
	return imm & TRS_IMM_ID_MASK;
}

/* Status as a negative errno (0 on success). */
static inline int trs_imm_err(__u32 imm)
{
	return -(int)((imm >> TRS_IMM_ERR_SHIFT) & TRS_IMM_ERR_MASK);
}

#endif /* TRS_IMM_H */
