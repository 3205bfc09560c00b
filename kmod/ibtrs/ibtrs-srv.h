/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ibtrs-srv.h - server API of the IBTRS kernel transport (ibtrs-server.ko)
 * for its user, the IBNBD server (ibnbd-server.ko). The objects are opaque;
 * the wire protocol is trs/PROTOCOL.md.
 */
#ifndef IBTRS_SRV_H
#define IBTRS_SRV_H

#include <linux/types.h>

struct ibtrs_srv_ctx;
struct ibtrs_srv_sess;
struct ibtrs_srv_op;

/**
 * enum ibtrs_dir - direction of a request.
 * @IBTRS_READ: the client reads: the user fills the data area, the answer
 *	carries it to the client's buffer.
 * @IBTRS_WRITE: the client wrote the data area.
 */
enum ibtrs_dir {
	IBTRS_READ,
	IBTRS_WRITE,
};

/**
 * enum ibtrs_srv_link_ev - session events.
 * @IBTRS_SRV_LINK_EV_CONNECTED: the first path of a session joined.
 * @IBTRS_SRV_LINK_EV_DISCONNECTED: the last path of the session is gone;
 *	requests still being served must be answered all the same (the
 *	answers are dropped), the session is freed after the last one.
 */
enum ibtrs_srv_link_ev {
	IBTRS_SRV_LINK_EV_CONNECTED,
	IBTRS_SRV_LINK_EV_DISCONNECTED,
};

/**
 * struct ibtrs_srv_ops - callbacks of the user.
 * @rdma_ev: a request. @data/@datalen: the request's data area in the
 *	session's chunk (a write's data, or where a read's data goes);
 *	vmalloc-space memory, so block IO maps it with vmalloc_to_page().
 *	@usr/@usrlen: the user header (a private copy, valid during the call,
 *	8-byte aligned).
 *	Return 0 when the request was answered, or will be, with
 *	ibtrs_srv_resp() exactly once; or return a negative errno without
 *	having answered: the transport sends it as the answer. Never both.
 *	A remote peer chooses @dir and @usr: validate them first.
 *	Context: process (completion work queue); may sleep briefly.
 * @link_ev: &enum ibtrs_srv_link_ev. Context: process.
 */
struct ibtrs_srv_ops {
	int (*rdma_ev)(struct ibtrs_srv_sess *sess, void *priv,
		       struct ibtrs_srv_op *op, enum ibtrs_dir dir,
		       void *data, size_t datalen, const void *usr,
		       size_t usrlen);
	void (*link_ev)(struct ibtrs_srv_sess *sess,
			enum ibtrs_srv_link_ev ev, void *priv);
};

struct ibtrs_srv_ctx *ibtrs_srv_open(const struct ibtrs_srv_ops *ops);
void ibtrs_srv_close(struct ibtrs_srv_ctx *ctx);

/*
 * ibtrs_srv_resp() - answer @op with @status (0 or -errno) and, for a read,
 * @len bytes of its data area (a successful read answer must cover the
 * whole request, else the client gets EIO). Any context, also hard
 * interrupt (bio completion). @op is answered (or, its path gone, dropped)
 * in every case and must not be answered again: a non-zero return only
 * reports that the answer broke the read-answer rule.
 */
int ibtrs_srv_resp(struct ibtrs_srv_op *op, int status, size_t len);

void ibtrs_srv_set_sess_priv(struct ibtrs_srv_sess *sess, void *priv);
/* Chunks of @sess: the ids of its requests are 0 .. queue depth - 1. */
u32 ibtrs_srv_queue_depth(const struct ibtrs_srv_sess *sess);
/*
 * The chunk id of @op: at most one request of a chunk is with the user
 * at a time (a retry starts only after the previous one was answered).
 */
u32 ibtrs_srv_op_id(const struct ibtrs_srv_op *op);
/* The page of chunk memory at @addr (an address rdma_ev() handed out). */
struct page *ibtrs_srv_data_page(const struct ibtrs_srv_sess *sess,
				 const void *addr);
const char *ibtrs_srv_sessname(const struct ibtrs_srv_sess *sess);
/* Largest data area of a request: the chunk size. */
u32 ibtrs_srv_max_io_size(const struct ibtrs_srv_ctx *ctx);

#endif /* IBTRS_SRV_H */
