/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ibtrs-clt.h - client API of the IBTRS kernel transport (ibtrs-client.ko)
 * for its user, the IBNBD client (ibnbd-client.ko). The session object is
 * opaque; the wire protocol is trs/PROTOCOL.md.
 */
#ifndef IBTRS_CLT_H
#define IBTRS_CLT_H

#include <linux/types.h>
#include <linux/socket.h>
#include <linux/scatterlist.h>

struct ibtrs_clt_sess;

/**
 * enum ibtrs_clt_dir - direction of a request.
 * @IBTRS_CLT_READ: the server writes into the request's buffer.
 * @IBTRS_CLT_WRITE: the request's buffer goes to the server.
 */
enum ibtrs_clt_dir {
	IBTRS_CLT_READ,
	IBTRS_CLT_WRITE,
};

/**
 * struct ibtrs_clt_addr - the two ends of one path.
 * @src: local address; family AF_UNSPEC when the route decides.
 * @dst: the server's address (port set by ibtrs_clt_open()).
 */
struct ibtrs_clt_addr {
	struct sockaddr_storage src;
	struct sockaddr_storage dst;
};

/**
 * typedef ibtrs_clt_conf_fn - a request is done.
 * @priv: the caller's pointer given to ibtrs_clt_request().
 * @err: 0 or a negative errno (the server's status, or a transport error).
 * Context: softirq (completion) or process. The permit is still held.
 */
typedef void (*ibtrs_clt_conf_fn)(void *priv, int err);

struct ibtrs_clt_sess *ibtrs_clt_open(const char *sessname,
				      const struct ibtrs_clt_addr *paths,
				      int npaths, u16 port);
void ibtrs_clt_close(struct ibtrs_clt_sess *sess);

/* A permit (server chunk) id, or -EAGAIN when all are in use. Any context. */
int ibtrs_clt_get_permit(struct ibtrs_clt_sess *sess);
void ibtrs_clt_put_permit(struct ibtrs_clt_sess *sess, int permit);

/*
 * ibtrs_clt_request() - send one request on chunk @permit. It goes on
 * connection @hint % ibtrs_clt_nr_cons() of the path the policy picks (a
 * failover keeps the index on the next path); the caller passes its
 * hardware queue. @usr (@usrlen bytes) is copied. @sg (@sg_cnt entries,
 * @datalen bytes; may be 0) must stay valid until @conf ran. Any context.
 * 0 or -errno (then @conf will not run).
 */
int ibtrs_clt_request(struct ibtrs_clt_sess *sess, enum ibtrs_clt_dir dir,
		      int permit, unsigned int hint, const void *usr,
		      size_t usrlen,
		      struct scatterlist *sg, unsigned int sg_cnt,
		      u32 datalen, ibtrs_clt_conf_fn conf, void *priv);

/*
 * ibtrs_clt_request_timeout() - the caller waited too long for its request
 * on @permit, the one it sent with @priv (a block layer timeout). Its path
 * fails (error recovery: the teardown ends the server's access to the
 * request's buffer and re-posts the request on a path, as after any
 * failure). @final: give up on it: it is not re-posted but ends with
 * -ETIMEDOUT once its path is torn down, at once when it waits for a path.
 * A request already ended (or the permit now another's: @priv differs) is
 * left alone. Any context.
 */
void ibtrs_clt_request_timeout(struct ibtrs_clt_sess *sess, int permit,
			       void *priv, bool final);

/* Connections per path (cons_per_path, 0: online CPUs); fixed at open. */
int ibtrs_clt_nr_cons(const struct ibtrs_clt_sess *sess);
u32 ibtrs_clt_queue_depth(const struct ibtrs_clt_sess *sess);
u32 ibtrs_clt_max_io_size(const struct ibtrs_clt_sess *sess);
u32 ibtrs_clt_max_segments(const struct ibtrs_clt_sess *sess);
u32 ibtrs_clt_max_usr_len(const struct ibtrs_clt_sess *sess);
/* Paths connected now. */
int ibtrs_clt_paths_up(const struct ibtrs_clt_sess *sess);
const char *ibtrs_clt_sessname(const struct ibtrs_clt_sess *sess);
/* "path <src>@<dst> state ..." lines into @buf (sysfs), bytes written. */
int ibtrs_clt_paths_show(const struct ibtrs_clt_sess *sess, char *buf,
			 size_t size);
/* Parse "[src@]dst" (IPv4 or IPv6 literal) into @addr. 0 or -EINVAL. */
int ibtrs_clt_parse_path(const char *s, struct ibtrs_clt_addr *addr);

#endif /* IBTRS_CLT_H */
