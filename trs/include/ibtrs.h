/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ibtrs.h - public API of the userspace IBTRS transport (libibtrs).
 *
 * IBTRS moves block IO between a client and a server over RDMA with two
 * messages per IO. A client *session* holds 1..N *paths*; a path is one or
 * more RDMA CM connections to one server address. The server registers a pool
 * of queue_depth chunks once per session; a client *permit* names one chunk.
 *
 * Threading model (both roles): the library creates no threads. Each session
 * (client) or context (server) exposes one pollable file descriptor; when it
 * is readable the owner calls ibtrs_clt_poll()/ibtrs_srv_poll(), which handles
 * completions, RDMA CM events, heartbeats and reconnect timers and runs the
 * user's callbacks in the calling thread. A handle and everything reached
 * from it must be used by one thread at a time. Separate handles are
 * independent (fio's numjobs opens one session per job).
 *
 * Every function returning int returns 0 (or a count) on success and a
 * negative errno on failure; ibtrs_strerror() adds a human message for the
 * last failure of a handle.
 */
#ifndef IBTRS_H
#define IBTRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IBTRS_DEFAULT_PORT	1234
#define IBTRS_MAX_PATHS		8
#define IBTRS_SESSNAME_MAX	64	/* including the NUL */

struct ibtrs_clt;	/* client session */
struct ibtrs_permit;	/* one server chunk, held for one IO */
struct ibtrs_srv_ctx;	/* server: listeners + all sessions */
struct ibtrs_srv_sess;	/* server: one client session (all its paths) */
struct ibtrs_srv_op;	/* server: one request being served */

enum ibtrs_dir {
	IBTRS_READ = 0,		/* server -> client data */
	IBTRS_WRITE = 1,	/* client -> server data */
};

/** enum ibtrs_mp_policy - how a client picks the path of the next IO */
enum ibtrs_mp_policy {
	IBTRS_MP_ROUND_ROBIN = 0,
	IBTRS_MP_MIN_INFLIGHT = 1,	/* RTRS's default */
	IBTRS_MP_MIN_LATENCY = 2,	/* smallest IO latency average x load */
};

/**
 * enum ibtrs_mr_mode - how client READ buffers are exposed to the server
 * (names: ibtrs_mr_mode_name(); the kernel client's names are the same).
 * @IBTRS_MR_MW: default; a type-2 memory window is bound over exactly the
 *	IO's buffer for the IO's lifetime (the userspace analogue of FRWR).
 * @IBTRS_MR_GLOBAL: unsafe, comparison only: the whole registered region's
 *	long-lived rkey is sent to the server.
 * @IBTRS_MR_REG: a registration of exactly the IO's buffer (ibv_reg_mr),
 *	dropped before the IO completes; needs @IBTRS_INVAL_LOCAL.
 * @IBTRS_MR_BOUNCE: every IO is copied through the library's pre-registered
 *	bounce buffer: no user memory is ever exposed (the bounce slot is, as
 *	@inval_mode says: a window over it, or its long-lived key with none).
 * "frwr", the kernel's mode, is refused by name (-EOPNOTSUPP).
 */
enum ibtrs_mr_mode {
	IBTRS_MR_MW = 0,
	IBTRS_MR_GLOBAL = 1,
	IBTRS_MR_REG = 2,
	IBTRS_MR_BOUNCE = 3,
};

/**
 * enum ibtrs_inval_mode - when a peer's remote access ends.
 * @IBTRS_INVAL_REMOTE: default; the responder invalidates with SEND_WITH_INV
 *	(client buffers) and the server re-keys a chunk per IO.
 * @IBTRS_INVAL_LOCAL: each side invalidates its own keys with LOCAL_INV.
 * @IBTRS_INVAL_NONE: unsafe, comparison only: keys live for the session.
 */
enum ibtrs_inval_mode {
	IBTRS_INVAL_REMOTE = 0,
	IBTRS_INVAL_LOCAL = 1,
	IBTRS_INVAL_NONE = 2,
};

/**
 * enum ibtrs_chunk_mode - how a server exposes its chunks to a client.
 * @IBTRS_CHUNK_STATIC: default; one key per path for the whole pool, for
 *	the path's life (IBTRS's design: a chunk stays writable by its
 *	session's client between IOs).
 * @IBTRS_CHUNK_REKEY: a type-1 memory window per chunk and path, bound
 *	again with the next key after each IO, before its answer: the key an
 *	ended IO used writes nothing (RTRS's always_invalidate, for chunks).
 *	One bind work request per IO; the client learns the first keys from
 *	KEYS messages (trs/PROTOCOL.md 5).
 */
enum ibtrs_chunk_mode {
	IBTRS_CHUNK_STATIC = 0,
	IBTRS_CHUNK_REKEY = 1,
};

/**
 * enum ibtrs_write_mode - how a write's data reaches the server.
 * @IBTRS_WRITE_PUSH: default; the client writes it into the chunk with the
 *	request (one RDMA WRITE WITH IMM; IBTRS's design).
 * @IBTRS_WRITE_PULL: the client exposes the buffer (as @mr_mode exposes a
 *	read buffer, for remote reading) and the server RDMA-READs it, as
 *	nvme-rdma does; the key ends with the answer as @inval_mode says.
 *	Needs a server that announces it (the library's does; the kernel
 *	server does not: the path fails, naming the mode).
 */
enum ibtrs_write_mode {
	IBTRS_WRITE_PUSH = 0,
	IBTRS_WRITE_PULL = 1,
};

/* ------------------------------------------------------------------ */
/* Logging (both roles)                                                */

enum ibtrs_log_level { IBTRS_LOG_ERR, IBTRS_LOG_WARN, IBTRS_LOG_INFO, IBTRS_LOG_DEBUG };

/* Default: messages at or above IBTRS_LOG_WARN go to stderr. */
typedef void (*ibtrs_log_fn)(enum ibtrs_log_level lvl, const char *msg);
void ibtrs_set_log(ibtrs_log_fn fn, enum ibtrs_log_level max_level);

const char *ibtrs_mp_policy_name(enum ibtrs_mp_policy p);
int ibtrs_mp_policy_parse(const char *s, enum ibtrs_mp_policy *out);
const char *ibtrs_mr_mode_name(enum ibtrs_mr_mode m);
/* 0, or -EINVAL (unknown name) / -EOPNOTSUPP (a mode userspace does not
 * offer); the reason is in ibtrs_clt_last_error(NULL). */
int ibtrs_mr_mode_parse(const char *s, enum ibtrs_mr_mode *out);
const char *ibtrs_inval_mode_name(enum ibtrs_inval_mode m);
const char *ibtrs_chunk_mode_name(enum ibtrs_chunk_mode m);
int ibtrs_chunk_mode_parse(const char *s, enum ibtrs_chunk_mode *out);
int ibtrs_inval_mode_parse(const char *s, enum ibtrs_inval_mode *out);
const char *ibtrs_write_mode_name(enum ibtrs_write_mode m);
int ibtrs_write_mode_parse(const char *s, enum ibtrs_write_mode *out);

/* ------------------------------------------------------------------ */
/* Client                                                              */

/**
 * struct ibtrs_clt_opts - client session options; zero means default.
 * @sessname: session name, sent to the server (required).
 * @port: server port (IBTRS_DEFAULT_PORT).
 * @cons_per_path: RDMA CM connections per path (1).
 * @policy: multipath policy; the zero value, IBTRS_MP_ROUND_ROBIN, is the default.
 * @mr_mode, @inval_mode: see the enums; defaults are the safe ones.
 * @write_mode: see the enum; push by default.
 * @hb_interval_ms: heartbeat interval per path (500).
 * @hb_missed_max: missed heartbeats before a path is failed (3).
 * @connect_timeout_ms: one connection attempt (3000).
 * @reconnect_min_ms/@reconnect_max_ms: reconnect backoff, doubled per failed
 *	attempt, with uniform random jitter of up to 50% (250 / 5000).
 * @ctrl_loss_tmo_ms: with every path down, IO is queued this long, then
 *	failed with -ENOTCONN; <0 waits forever (30000). Like nvme's
 *	ctrl_loss_tmo.
 * @busy_poll: ibtrs_clt_poll() polls the CQs itself and never arms them
 *	nor sleeps: no system call on the data path but the provider's
 *	doorbell (the RDMA CM channel, timers and uevents are looked at once
 *	per 50 ms tick). Waiting calls spin.
 * @busy_poll_yield: with @busy_poll, after this many rounds in a row
 *	that found nothing, sched_yield() (0: never). Where the server shares
 *	the CPU (one guest, one vCPU), a spinning client otherwise keeps it
 *	from running until the scheduler preempts the spinner; the yield is a
 *	system call on the idle path only, never when completions are there. ibtrs_clt_fd() then never
 *	becomes readable for completions: do not sleep on it.
 */
struct ibtrs_clt_opts {
	const char *sessname;
	uint16_t port;
	unsigned int cons_per_path;
	enum ibtrs_mp_policy policy;
	enum ibtrs_mr_mode mr_mode;
	enum ibtrs_inval_mode inval_mode;
	enum ibtrs_write_mode write_mode;
	unsigned int hb_interval_ms;
	unsigned int hb_missed_max;
	unsigned int connect_timeout_ms;
	unsigned int reconnect_min_ms;
	unsigned int reconnect_max_ms;
	int ctrl_loss_tmo_ms;
	bool busy_poll;
	unsigned int busy_poll_yield;
};

/**
 * ibtrs_clt_open() - open a client session and connect its paths.
 * @paths: server addresses, "ip" or "src_ip@dst_ip", one per path.
 *
 * Blocks until every path is connected or has failed; succeeds when at least
 * one path is up (the others keep reconnecting in the background). On failure
 * returns NULL and, when @err is not NULL, stores a negative errno there and
 * a message retrievable with ibtrs_clt_last_error(NULL).
 */
struct ibtrs_clt *ibtrs_clt_open(const struct ibtrs_clt_opts *opts,
				 const char *const *paths, int npaths, int *err);
/* Fails queued and in-flight IO with -ECONNABORTED, disconnects, frees. */
void ibtrs_clt_close(struct ibtrs_clt *clt);

/* Server-advertised limits, valid after open. */
unsigned int ibtrs_clt_queue_depth(const struct ibtrs_clt *clt);
size_t ibtrs_clt_max_io_size(const struct ibtrs_clt *clt);
size_t ibtrs_clt_max_usr_len(const struct ibtrs_clt *clt);

/**
 * ibtrs_clt_reg_mem() - register a buffer that IO will read into/write from.
 * IO whose iovecs all lie in registered memory is zero-copy; other IO is
 * staged through library-owned bounce buffers. The region is registered on
 * every path's device, including paths that join later.
 */
int ibtrs_clt_reg_mem(struct ibtrs_clt *clt, void *addr, size_t len);
int ibtrs_clt_unreg_mem(struct ibtrs_clt *clt, void *addr);

/* Permits: at most queue_depth held at once; NULL when none is free. */
struct ibtrs_permit *ibtrs_clt_get_permit(struct ibtrs_clt *clt);
void ibtrs_clt_put_permit(struct ibtrs_clt *clt, struct ibtrs_permit *permit);

/**
 * typedef ibtrs_conf_fn - IO completion; @err is 0 or a negative errno
 * (the server's status for the IO, or a transport error). Runs inside
 * ibtrs_clt_poll(). The permit stays held until put by the user.
 */
typedef void (*ibtrs_conf_fn)(void *priv, int err);

/**
 * ibtrs_clt_request() - submit one IO on a permit.
 * @usr, @usr_len: opaque user header (the IBNBD message), <= max_usr_len.
 * @iov, @iovcnt: data; total <= max_io_size. For READ the server's data is
 *	placed there; for WRITE it is sent.
 * Returns 0 when queued (the callback will run exactly once) or a negative
 * errno when rejected outright (the callback will not run).
 */
int ibtrs_clt_request(struct ibtrs_clt *clt, enum ibtrs_dir dir,
		      struct ibtrs_permit *permit, const void *usr,
		      size_t usr_len, const struct iovec *iov, int iovcnt,
		      ibtrs_conf_fn conf, void *priv);

/**
 * ibtrs_clt_plug() / ibtrs_clt_unplug() - batch posting. While a session is
 * plugged (plugs nest), ibtrs_clt_request() prepares each IO's work
 * requests and stages them on its connection; the last unplug posts each
 * connection's staged chain with one ibv_post_send() (one doorbell; on
 * rxe one write() system call) in submission order. ibtrs_clt_poll()
 * posts what is staged before it does anything else (it never waits for
 * an IO that was not posted) and plugs itself while it runs callbacks, so
 * IO submitted from them goes out in one chain per connection too.
 */
void ibtrs_clt_plug(struct ibtrs_clt *clt);
void ibtrs_clt_unplug(struct ibtrs_clt *clt);

/*
 * Event loop fd: readable for timers, connection events and completions of
 * CQs that are armed. ibtrs_clt_poll() reaps the CQs without a system call
 * and arms them only when it is about to wait itself, so wait through
 * ibtrs_clt_poll(clt, timeout), not by sleeping on this fd (that would see
 * completions only at the next 50 ms tick).
 */
int ibtrs_clt_fd(const struct ibtrs_clt *clt);
/**
 * ibtrs_clt_poll() - handle events; runs completion callbacks.
 * @timeout_ms: 0 = do not wait, <0 = wait until something completes.
 * Reaps every CQ first (no system call); only if nothing completed and
 * @timeout_ms allows it, waits: arms the CQs and sleeps in epoll for one
 * round (event mode), or spins on the CQs (@busy_poll).
 * Returns the number of IO callbacks run, or a negative errno.
 */
int ibtrs_clt_poll(struct ibtrs_clt *clt, int timeout_ms);

/* Multipath control. */
int ibtrs_clt_add_path(struct ibtrs_clt *clt, const char *path);
int ibtrs_clt_remove_path(struct ibtrs_clt *clt, int path_idx);
int ibtrs_clt_set_policy(struct ibtrs_clt *clt, enum ibtrs_mp_policy policy);
int ibtrs_clt_path_count(const struct ibtrs_clt *clt);
int ibtrs_clt_paths_connected(const struct ibtrs_clt *clt);

enum ibtrs_path_state {
	IBTRS_PATH_CONNECTING,
	IBTRS_PATH_CONNECTED,
	IBTRS_PATH_RECONNECTING,	/* failed, waiting for backoff */
	IBTRS_PATH_CLOSED,		/* removed */
};
const char *ibtrs_path_state_name(enum ibtrs_path_state s);

/**
 * struct ibtrs_path_stats - per-path counters (all cumulative).
 * @msgs_sent: data-path messages posted (WRITE_WITH_IMM, SEND ...), the
 *	"two messages per IO" budget; @reg_wrs: registration and invalidation
 *	work requests (memory-window binds, LOCAL_INV), counted apart.
 */
struct ibtrs_path_stats {
	char addr[96];
	enum ibtrs_path_state state;
	uint64_t reads, writes;
	uint64_t read_bytes, write_bytes;
	uint64_t msgs_sent, msgs_recv;
	uint64_t reg_wrs;
	uint64_t failovers;	/* IOs moved off this path when it failed */
	uint64_t reconnects;
	uint64_t hb_sent, hb_rtt_us;	/* last heartbeat round trip */
	uint64_t lat_us;	/* IO completion latency average (min-latency) */
	uint64_t proto_errors;	/* successful READ answers not covering the
				 * request: IO failed with EIO, path failed */
	unsigned int inflight;
	/* verbs calls of the path's connections, all of them so far:
	 * ibv_post_send calls and their WRs (a chain is one call), receive
	 * posts and WRs, CQ sweeps that reaped something and the completions,
	 * CQ arms and completion events read; @signaled: request chains
	 * posted signaled (about one in 16 WRs) */
	uint64_t post_sends, send_wrs;
	uint64_t post_recvs, recv_wrs;
	uint64_t cq_sweeps, cqes;
	uint64_t cq_arms, cq_events;
	uint64_t signaled;
};

struct ibtrs_clt_stats {
	int npaths;
	struct ibtrs_path_stats path[IBTRS_MAX_PATHS];
	uint64_t queued_no_path;	/* IOs that waited with all paths down */
	uint64_t failed_no_path;	/* IOs failed after ctrl_loss_tmo */
};
int ibtrs_clt_get_stats(const struct ibtrs_clt *clt, struct ibtrs_clt_stats *st);

/* Last error message (thread-local), for user-facing diagnostics. */
const char *ibtrs_clt_last_error(const struct ibtrs_clt *clt);

/* ------------------------------------------------------------------ */
/* Server                                                              */

enum ibtrs_srv_link_ev {
	IBTRS_SRV_LINK_EV_CONNECTED,	/* first path of a session is up */
	IBTRS_SRV_LINK_EV_DISCONNECTED,	/* last path gone: session freed after */
};

/**
 * struct ibtrs_srv_ops - server callbacks, run inside ibtrs_srv_poll().
 * @link_ev: session up/down; @priv is the session's user pointer
 *	(set with ibtrs_srv_set_sess_priv()).
 * @rdma_ev: one request. @data is the chunk: for WRITE it holds @datalen
 *	bytes from the client; for READ the server fills up to @datalen bytes
 *	(the client's buffer size) before answering. @usr/@usrlen is the user
 *	header. The server must answer exactly once with ibtrs_srv_resp(),
 *	now or later; @data stays valid until then. Returning non-zero
 *	answers the request with that (negative errno) status at once.
 */
struct ibtrs_srv_ops {
	void (*link_ev)(struct ibtrs_srv_sess *sess, enum ibtrs_srv_link_ev ev,
			void *priv);
	int (*rdma_ev)(struct ibtrs_srv_sess *sess, void *priv,
		       struct ibtrs_srv_op *op, enum ibtrs_dir dir, void *data,
		       size_t datalen, const void *usr, size_t usrlen);
};

/**
 * struct ibtrs_srv_opts - server options; zero means default.
 * @addrs: addresses to listen on ("0.0.0.0" allowed), one RDMA CM listener
 *	each; @naddrs of them.
 * @queue_depth: chunks per session (128); @chunk_size: bytes per chunk,
 *	power of two (128 KiB). max_io_size = chunk_size; the user header and
 *	transport trailer travel in a separate area of the chunk pool.
 * @hb_interval_ms/@hb_missed_max: as the client.
 * @test_faults: IBTRS_SRV_TEST_* bits: the server breaks a rule on purpose,
 *	so that a client's checks can be tested against it. 0 in any real use.
 * @chunk_mode: how the chunk pool is exposed to clients (names:
 *	ibtrs_chunk_mode_name(), the kernel's are the same).
 */
struct ibtrs_srv_opts {
	const char *const *addrs;
	int naddrs;
	uint16_t port;
	unsigned int queue_depth;
	unsigned int chunk_size;
	unsigned int hb_interval_ms;
	unsigned int hb_missed_max;
	unsigned int test_faults;
	enum ibtrs_chunk_mode chunk_mode;
};

/*
 * Faults for client tests only (&ibtrs_srv_opts.test_faults).
 * IBTRS_SRV_TEST_NO_INVAL: a read that asked for remote invalidation is
 *	answered with a plain SEND, so the client must invalidate itself.
 * IBTRS_SRV_TEST_SHORT_READ: a successful read of more than 4 KiB is
 *	answered 512 bytes short, which the client must refuse (EIO).
 * IBTRS_SRV_TEST_REPLAY: a rogue server: every read's answer is preceded by
 *	an RDMA WRITE of a pattern (0x5A bytes) into the previous read's client
 *	buffer with that read's key, after that IO ended. A client mode that
 *	ends the server's access with the IO makes it fail (remote access
 *	error, the path fails); an unsafe one lets it land. Likewise every
 *	pulled write's RDMA READ is preceded by an RDMA READ of the previous
 *	pulled write's buffer with that write's key.
 * IBTRS_SRV_TEST_REPLAY_PULL: the pulled writes' half of
 *	IBTRS_SRV_TEST_REPLAY alone (a client whose reads must work, such as
 *	ibnbd's, whose device open is a read).
 */
#define IBTRS_SRV_TEST_NO_INVAL		(1U << 0)
#define IBTRS_SRV_TEST_SHORT_READ	(1U << 1)
#define IBTRS_SRV_TEST_REPLAY		(1U << 2)
#define IBTRS_SRV_TEST_REPLAY_PULL	(1U << 3)

struct ibtrs_srv_ctx *ibtrs_srv_open(const struct ibtrs_srv_opts *opts,
				     const struct ibtrs_srv_ops *ops,
				     void *ctx_priv, int *err);
/* Disconnects every session (answering nothing more), frees everything. */
void ibtrs_srv_close(struct ibtrs_srv_ctx *ctx);
int ibtrs_srv_fd(const struct ibtrs_srv_ctx *ctx);
int ibtrs_srv_poll(struct ibtrs_srv_ctx *ctx, int timeout_ms);
/**
 * ibtrs_srv_watch_fd() - let ibtrs_srv_poll() wait for @fd too: when it is
 * readable, the poll calls @cb(@arg) (in the poll, like the other
 * callbacks, plugged). A server whose only wait is ibtrs_srv_poll() makes
 * one epoll_wait() per wake-up instead of two (its own and ours, nested).
 * Up to 8 fds; 0 or -errno.
 */
int ibtrs_srv_watch_fd(struct ibtrs_srv_ctx *ctx, int fd, void (*cb)(void *arg),
		       void *arg);

/* Answer a request; @status 0 or negative errno. For READ, @len bytes of
 * the chunk are sent (<= the datalen of rdma_ev). */
int ibtrs_srv_resp(struct ibtrs_srv_op *op, int status, size_t len);

/**
 * ibtrs_srv_plug() / ibtrs_srv_unplug() - batch answers. While the context
 * is plugged (plugs nest), ibtrs_srv_resp() stages the answer's work
 * requests on its connection; the last unplug posts each connection's
 * answers as one chain (one ibv_post_send), of which only the last WR is
 * signaled, and only every few WRs or when the send queue is half full
 * (the send queue never overflows: answers that do not fit wait for a
 * signaled completion). ibtrs_srv_poll() plugs itself while it runs the
 * callbacks, so answers given inside rdma_ev go out in chains too.
 */
void ibtrs_srv_plug(struct ibtrs_srv_ctx *ctx);
void ibtrs_srv_unplug(struct ibtrs_srv_ctx *ctx);

/**
 * struct ibtrs_srv_stats - verbs calls of every connection the context has
 * had (cumulative): as &struct ibtrs_path_stats, plus @answers (answers
 * posted), @signaled (those posted signaled) and @pulls.
 */
struct ibtrs_srv_stats {
	uint64_t post_sends, send_wrs;
	uint64_t post_recvs, recv_wrs;
	uint64_t cq_sweeps, cqes;
	uint64_t cq_arms, cq_events;
	uint64_t requests, answers, signaled;
	uint64_t pulls;		/* RDMA READs of pulled writes posted */
};
void ibtrs_srv_get_stats(const struct ibtrs_srv_ctx *ctx,
			 struct ibtrs_srv_stats *st);

const char *ibtrs_srv_sessname(const struct ibtrs_srv_sess *sess);
/*
 * The session's chunk pool (every @data of rdma_ev lies in it), e.g. to
 * register it with an IO engine; valid while the session is (until the
 * last request of a disconnected session is answered).
 */
void ibtrs_srv_sess_pool(const struct ibtrs_srv_sess *sess, void **addr,
			 size_t *len);
void ibtrs_srv_set_sess_priv(struct ibtrs_srv_sess *sess, void *priv);
void *ibtrs_srv_ctx_priv(const struct ibtrs_srv_ctx *ctx);
int ibtrs_srv_sess_paths(const struct ibtrs_srv_sess *sess);

#ifdef __cplusplus
}
#endif
#endif /* IBTRS_H */
