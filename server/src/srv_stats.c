// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * srv_stats.c - IO counters per device, session and daemon; the SIGUSR1 /
 * exit report (log and --stats-file, written atomically).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srvd.h"

void srv_stats_line(char *buf, size_t len, const struct srv_stats *s)
{
	snprintf(buf, len,
		 "reads=%llu writes=%llu read_bytes=%llu write_bytes=%llu "
		 "flushes=%llu discards=%llu write_zeroes=%llu errors=%llu",
		 (unsigned long long)s->reads, (unsigned long long)s->writes,
		 (unsigned long long)s->read_bytes,
		 (unsigned long long)s->write_bytes,
		 (unsigned long long)s->flushes, (unsigned long long)s->discards,
		 (unsigned long long)s->write_zeroes,
		 (unsigned long long)s->errors);
}

static void srv_stats_add(struct srv_stats *a, const struct srv_io *io)
{
	if (io->res) {
		a->errors++;
		return;
	}
	switch (io->opcode) {
	case IBNBD_OP_READ:
		a->reads++;
		a->read_bytes += io->len;
		break;
	case IBNBD_OP_WRITE:
		a->writes++;
		a->write_bytes += io->len;
		break;
	case IBNBD_OP_FLUSH:
		a->flushes++;
		break;
	case IBNBD_OP_DISCARD:
		a->discards++;
		break;
	case IBNBD_OP_WRITE_ZEROES:
		a->write_zeroes++;
		break;
	}
}

/* Count a finished IO for its device, its session and the daemon. */
void srv_stats_account(struct srvd *d, struct srv_sess_dev *sd,
		       const struct srv_io *io)
{
	srv_stats_add(&sd->st, io);
	srv_stats_add(&sd->sess->st, io);
	srv_stats_add(&d->total, io);
}

void srv_stats_dump(struct srvd *d, FILE *f)
{
	struct srv_sess *s;
	unsigned int i, nsess = 0;
	char line[512];

	for (s = d->sessions; s; s = s->next)
		nsess++;
	fprintf(f, "ibnbd-serverd pid=%d uptime=%lds sessions=%u devices=%u inflight=%u",
		(int)getpid(), (long)(time(NULL) - d->start), nsess,
		d->reg.ndevs, d->inflight);
	if (d->stopping)
		fprintf(f, " stopping inflight_at_stop=%u answered_since_stop=%llu unanswered=%llu",
			d->stop_inflight, (unsigned long long)d->stop_answered,
			(unsigned long long)d->parked);
	fprintf(f, "\n");
	srv_stats_line(line, sizeof(line), &d->total);
	fprintf(f, "total %s\n", line);
	if (d->ctx) {
		struct ibtrs_srv_stats ts;

		ibtrs_srv_get_stats(d->ctx, &ts);
		fprintf(f, "fastpath ring_submits=%llu ring_cqes=%llu io_allocs=%llu "
			"fixed_ios=%llu "
			"requests=%llu answers=%llu signaled=%llu post_sends=%llu "
			"send_wrs=%llu post_recvs=%llu recv_wrs=%llu cq_sweeps=%llu "
			"cqes=%llu cq_arms=%llu cq_events=%llu pulls=%llu\n",
			(unsigned long long)d->fast.ring_submits,
			(unsigned long long)d->fast.ring_cqes,
			(unsigned long long)d->fast.io_allocs,
			(unsigned long long)d->fast.fixed_ios,
			(unsigned long long)ts.requests,
			(unsigned long long)ts.answers,
			(unsigned long long)ts.signaled,
			(unsigned long long)ts.post_sends,
			(unsigned long long)ts.send_wrs,
			(unsigned long long)ts.post_recvs,
			(unsigned long long)ts.recv_wrs,
			(unsigned long long)ts.cq_sweeps,
			(unsigned long long)ts.cqes,
			(unsigned long long)ts.cq_arms,
			(unsigned long long)ts.cq_events,
			(unsigned long long)ts.pulls);
	}
	for (s = d->sessions; s; s = s->next) {
		srv_stats_line(line, sizeof(line), &s->st);
		fprintf(f, "session %s paths=%d ver=%u inflight=%u bad_msgs=%llu %s\n",
			s->name, s->dead ? 0 : ibtrs_srv_sess_paths(s->ts),
			s->ver, s->inflight, (unsigned long long)s->bad_msgs, line);
		for (i = 0; i < s->max_devs; i++) {
			struct srv_sess_dev *sd = s->devs[i];

			if (!sd)
				continue;
			srv_stats_line(line, sizeof(line), &sd->st);
			fprintf(f, "  device %s handle=%#x mode=%s inflight=%u %s\n",
				sd->path, sd->handle,
				ibnbd_access_mode_name(sd->mode), sd->inflight,
				line);
		}
	}
}

void srv_stats_report(struct srvd *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	char *line, *save;

	if (!f)
		return;
	srv_stats_dump(d, f);
	fclose(f);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		srv_info("stats: %s", line);
	free(buf);

	if (d->o.stats_file) {
		char tmp[PATH_MAX + 8];

		snprintf(tmp, sizeof(tmp), "%s.tmp", d->o.stats_file);
		f = fopen(tmp, "w");
		if (!f) {
			srv_wrn("cannot write stats file %s: %m", tmp);
			return;
		}
		srv_stats_dump(d, f);
		if (fclose(f) || rename(tmp, d->o.stats_file))
			srv_wrn("cannot write stats file %s: %m", d->o.stats_file);
	}
}
