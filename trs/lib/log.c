// SPDX-License-Identifier: GPL-2.0-or-later
/* log.c - logging, last-error text, enum names, time, randomness, epoll. */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/timerfd.h>

#include "trs_lib.h"

static ibtrs_log_fn trs_log_fn;
static enum ibtrs_log_level trs_log_max = IBTRS_LOG_WARN;
static __thread char trs_last_err[256];

void ibtrs_set_log(ibtrs_log_fn fn, enum ibtrs_log_level max_level)
{
	trs_log_fn = fn;
	trs_log_max = max_level;
}

static const char *const trs_lvl_name[] = { "error", "warning", "info", "debug" };

void trs_log(enum ibtrs_log_level lvl, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (lvl > trs_log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (trs_log_fn)
		trs_log_fn(lvl, msg);
	else
		fprintf(stderr, "ibtrs %s: %s\n", trs_lvl_name[lvl], msg);
}

void trs_set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(trs_last_err, sizeof(trs_last_err), fmt, ap);
	va_end(ap);
	trs_log(IBTRS_LOG_ERR, "%s", trs_last_err);
}

const char *ibtrs_clt_last_error(const struct ibtrs_clt *clt)
{
	(void)clt;
	return trs_last_err;
}

uint64_t trs_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

uint32_t trs_random32(void)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)trs_now_us() * 2654435761u;
	return r;
}

void trs_uuid_gen(uint8_t uuid[TRS_UUID_LEN])
{
	unsigned int i;

	if (getrandom(uuid, TRS_UUID_LEN, 0) != TRS_UUID_LEN)
		for (i = 0; i < TRS_UUID_LEN; i++)
			uuid[i] = (uint8_t)trs_random32();
	uuid[6] = (uuid[6] & 0x0f) | 0x40;	/* version 4 */
	uuid[8] = (uuid[8] & 0x3f) | 0x80;
}

void trs_uuid_str(const uint8_t u[TRS_UUID_LEN], char out[40])
{
	snprintf(out, 40, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5],
		 u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

int trs_epoll_add(int epfd, struct trs_evsrc *src)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = src };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, src->fd, &ev) ? -errno : 0;
}

void trs_epoll_del(int epfd, struct trs_evsrc *src)
{
	epoll_ctl(epfd, EPOLL_CTL_DEL, src->fd, NULL);
}

/*
 * One round of a handle's event loop: wait up to @timeout_ms for its epoll
 * fd and run the handler of every ready source. Returns 0 (also on EINTR)
 * or -errno.
 */
int trs_epoll_dispatch(int epfd, int timeout_ms)
{
	return trs_epoll_dispatch_at(epfd, timeout_ms, NULL);
}

/* The same; when @now is not NULL, the clock is read into it once the
 * wait is over, before any handler runs. */
int trs_epoll_dispatch_at(int epfd, int timeout_ms, uint64_t *now)
{
	struct epoll_event evs[32];
	int n, i;

	n = epoll_wait(epfd, evs, 32, timeout_ms);
	if (now)
		*now = trs_now_us();
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (i = 0; i < n; i++) {
		struct trs_evsrc *src = evs[i].data.ptr;

		src->handler(src);
	}
	return 0;
}

int trs_timerfd_create(unsigned int period_ms)
{
	struct itimerspec its = {
		.it_interval = { period_ms / 1000, (long)(period_ms % 1000) * 1000000 },
		.it_value = { period_ms / 1000, (long)(period_ms % 1000) * 1000000 },
	};
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (timerfd_settime(fd, 0, &its, NULL)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

void trs_fd_drain(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) > 0)
		;
}

/* ---- enum names ---- */
static const char *const mp_names[] = { "round-robin", "min-inflight", "min-latency" };
static const char *const state_names[] = { "connecting", "connected",
					   "reconnecting", "closed" };

#define TRS_NAME(arr, v) ((unsigned int)(v) < sizeof(arr) / sizeof(arr[0]) ? \
			  arr[v] : "unknown")

static int trs_parse(const char *const *names, int n, const char *s, int *out)
{
	int i;

	if (!s)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!strcasecmp(s, names[i])) {
			*out = i;
			return 0;
		}
	return -EINVAL;
}

const char *ibtrs_mp_policy_name(enum ibtrs_mp_policy p) { return TRS_NAME(mp_names, p); }
const char *ibtrs_mr_mode_name(enum ibtrs_mr_mode m) { return trs_mr_mode_name(m); }
const char *ibtrs_inval_mode_name(enum ibtrs_inval_mode m) { return trs_inval_mode_name(m); }
const char *ibtrs_path_state_name(enum ibtrs_path_state s) { return TRS_NAME(state_names, s); }

int ibtrs_mp_policy_parse(const char *s, enum ibtrs_mp_policy *out)
{
	int v, err = trs_parse(mp_names, 3, s, &v);

	if (err && s) {	/* short forms */
		if (!strcasecmp(s, "rr"))
			v = 0, err = 0;
		else if (!strcasecmp(s, "inflight"))
			v = 1, err = 0;
		else if (!strcasecmp(s, "latency"))
			v = 2, err = 0;
	}
	if (!err)
		*out = (enum ibtrs_mp_policy)v;
	return err;
}

int ibtrs_mr_mode_parse(const char *s, enum ibtrs_mr_mode *out)
{
	const char *why = NULL;
	int v = trs_mr_mode_parse(s, TRS_IMPL_USER, &why);

	if (v < 0) {
		trs_set_error("mr_mode '%s': %s", s ? s : "", why);
		return v;
	}
	*out = (enum ibtrs_mr_mode)v;
	return 0;
}

int ibtrs_inval_mode_parse(const char *s, enum ibtrs_inval_mode *out)
{
	const char *why = NULL;
	int v = trs_inval_mode_parse(s, &why);

	if (v < 0) {
		trs_set_error("inval_mode '%s': %s", s ? s : "", why);
		return v;
	}
	*out = (enum ibtrs_inval_mode)v;
	return 0;
}

const char *ibtrs_chunk_mode_name(enum ibtrs_chunk_mode m) { return trs_chunk_mode_name(m); }

int ibtrs_chunk_mode_parse(const char *s, enum ibtrs_chunk_mode *out)
{
	const char *why = NULL;
	int v = trs_chunk_mode_parse(s, TRS_IMPL_USER, &why);

	if (v < 0) {
		trs_set_error("chunk_mode '%s': %s", s ? s : "", why);
		return v;
	}
	*out = (enum ibtrs_chunk_mode)v;
	return 0;
}

const char *ibtrs_write_mode_name(enum ibtrs_write_mode m) { return trs_write_mode_name(m); }

int ibtrs_write_mode_parse(const char *s, enum ibtrs_write_mode *out)
{
	const char *why = NULL;
	int v = trs_write_mode_parse(s, TRS_IMPL_USER, &why);

	if (v < 0) {
		trs_set_error("write_mode '%s': %s", s ? s : "", why);
		return v;
	}
	*out = (enum ibtrs_write_mode)v;
	return 0;
}

_Static_assert((int)IBTRS_WRITE_PUSH == TRS_WRITE_PUSH &&
	       (int)IBTRS_WRITE_PULL == TRS_WRITE_PULL,
	       "write_mode values must match trs_common.h");
_Static_assert((int)IBTRS_CHUNK_STATIC == TRS_CHUNK_STATIC &&
	       (int)IBTRS_CHUNK_REKEY == TRS_CHUNK_REKEY,
	       "chunk_mode values must match trs_common.h");
_Static_assert((int)IBTRS_MR_MW == TRS_MR_MW && (int)IBTRS_MR_GLOBAL == TRS_MR_GLOBAL &&
	       (int)IBTRS_MR_REG == TRS_MR_REG && (int)IBTRS_MR_BOUNCE == TRS_MR_BOUNCE,
	       "mr_mode values must match trs_common.h");
_Static_assert((int)IBTRS_INVAL_REMOTE == TRS_INVAL_REMOTE &&
	       (int)IBTRS_INVAL_LOCAL == TRS_INVAL_LOCAL &&
	       (int)IBTRS_INVAL_NONE == TRS_INVAL_NONE,
	       "inval_mode values must match trs_common.h");

_Static_assert((int)IBTRS_MP_ROUND_ROBIN == TRS_MP_ROUND_ROBIN &&
	       (int)IBTRS_MP_MIN_INFLIGHT == TRS_MP_MIN_INFLIGHT &&
	       (int)IBTRS_MP_MIN_LATENCY == TRS_MP_MIN_LATENCY,
	       "policy values must match trs_common.h");
