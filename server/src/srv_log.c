// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * srv_log.c - ibnbd-serverd's log: stderr with a timestamp, or syslog.
 */
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "srvd.h"

static bool log_syslog;
static int log_max = SRV_LOG_INFO;

void srv_log_setup(int max_level, bool use_syslog)
{
	log_max = max_level;
	log_syslog = use_syslog;
}

void srv_log(int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_syslog) {
		syslog(level, "%s", msg);
	} else {
		struct timespec ts;
		static const char *const lvl[] = {
			[SRV_LOG_ERR] = "error", [SRV_LOG_WARN] = "warning",
			[SRV_LOG_INFO] = "info", [SRV_LOG_DEBUG] = "debug",
		};

		clock_gettime(CLOCK_REALTIME, &ts);
		fprintf(stderr, "%ld.%03ld ibnbd-serverd[%d] %s: %s\n",
			(long)ts.tv_sec, ts.tv_nsec / 1000000, (int)getpid(),
			lvl[level] ? lvl[level] : "?", msg);
	}
}

void srv_ibtrs_log(enum ibtrs_log_level lvl, const char *msg)
{
	static const int map[] = {
		[IBTRS_LOG_ERR] = SRV_LOG_ERR, [IBTRS_LOG_WARN] = SRV_LOG_WARN,
		[IBTRS_LOG_INFO] = SRV_LOG_INFO, [IBTRS_LOG_DEBUG] = SRV_LOG_DEBUG,
	};

	srv_log(lvl <= IBTRS_LOG_DEBUG ? map[lvl] : SRV_LOG_DEBUG, "ibtrs: %s", msg);
}
