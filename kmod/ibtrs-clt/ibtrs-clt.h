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
struct cpumask;

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
 * @batch: the @batch given to ibtrs_clt_poll() when the completion was
 *	reaped by it, else NULL.
 * Context: softirq (completion), or process (ibtrs_clt_poll(), failover).
 * The request's id is free again when this is called.
 */
typedef void (*ibtrs_clt_conf_fn)(void *priv, int err, void *batch);

/*
 * ibtrs_clt_open() - connect a session. @max_usr_len: the largest user
 * header the caller will send (its request headers are sized for it).
 * @nr_poll: connections per path beyond the interrupt-driven ones whose
 * completions are reaped only by ibtrs_clt_poll() (0: none).
 */
struct ibtrs_clt_sess *ibtrs_clt_open(const char *sessname,
				      const struct ibtrs_clt_addr *paths,
				      int npaths, u16 port, u32 max_usr_len,
				      int nr_poll);
void ibtrs_clt_close(struct ibtrs_clt_sess *sess);

/*
 * ibtrs_clt_request() - send one request on chunk @id, 0 <=
 * @id < ibtrs_clt_queue_depth(). The caller owns its ids (ibnbd-client:
 * the block layer's tag): an id must not be used again before @conf of
 * its previous request ran (-EBUSY and a warning otherwise). It goes on
 * connection @hint of the path the policy picks (a failover keeps the
 * index on the next path): 0..nr_cons-1 are interrupt-driven,
 * nr_cons..nr_cons+nr_poll-1 polled (ibtrs_clt_poll()); a larger @hint is
 * taken modulo nr_cons. @usr (@usrlen bytes) is copied. @sg (@sg_cnt
 * entries, @datalen bytes; may be 0) must stay valid until @conf ran.
 * Any context. 0 or -errno (then @conf will not run): -EAGAIN no path
 * is up now (ctrl_loss_tmo_ms not over), -ENOTCONN none for too long.
 */
int ibtrs_clt_request(struct ibtrs_clt_sess *sess, enum ibtrs_clt_dir dir,
		      int id, unsigned int hint, const void *usr,
		      size_t usrlen,
		      struct scatterlist *sg, unsigned int sg_cnt,
		      u32 datalen, ibtrs_clt_conf_fn conf, void *priv);

/*
 * ibtrs_clt_request_timeout() - the caller waited too long for its request
 * on @id, the one it sent with @priv (a block layer timeout). Its path
 * fails (error recovery: the teardown ends the server's access to the
 * request's buffer and re-posts the request on a path, as after any
 * failure). @final: give up on it: it is not re-posted but ends with
 * -ETIMEDOUT once its path is torn down, at once when it waits for a path.
 * A request already ended is left alone. The caller must not reuse @id
 * meanwhile (a block layer timeout holds the request). Process context.
 */
void ibtrs_clt_request_timeout(struct ibtrs_clt_sess *sess, int id,
			       void *priv, bool final);

/*
 * ibtrs_clt_poll() - reap the completions of polled connection @hint
 * (nr_cons <= @hint < nr_cons + nr_poll) of every path; the requests that
 * end call their @conf with @batch. Completions found, or 0 when another
 * caller polls that connection now. Process context (blk-mq's .poll).
 */
int ibtrs_clt_poll(struct ibtrs_clt_sess *sess, unsigned int hint,
		   void *batch);

/*
 * ibtrs_clt_con_affinity() - the CPUs that receive the completion
 * interrupts of interrupt-driven connection @hint (its completion vector
 * is @hint on the device of the first path), or NULL when the device does
 * not tell (then any mapping is as good).
 */
const struct cpumask *ibtrs_clt_con_affinity(struct ibtrs_clt_sess *sess,
					     unsigned int hint);

/*
 * Interrupt-driven connections per path (cons_per_path, 0: online CPUs)
 * and polled ones (ibtrs_clt_open()'s @nr_poll); fixed at open.
 */
int ibtrs_clt_nr_cons(const struct ibtrs_clt_sess *sess);
int ibtrs_clt_nr_poll(const struct ibtrs_clt_sess *sess);
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
