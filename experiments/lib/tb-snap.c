// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tb-snap - open and close measurement windows in the testbed guest, with
 * every counter sampled at the instant the window opens or closes.
 *
 * One process per boot, driven line by line on stdin by the measurement
 * shell (experiments/lib/measure.sh, as a bash coprocess, so no fork or exec
 * lands inside a window):
 *
 *   window OUT N MAX_MS IOSRC...
 *	Snapshot every counter, execute the profiler's START marker
 *	(experiments/profiler/tbmark.h), wait until the IO sources have
 *	completed at least N IOs (or MAX_MS of guest time passed), execute
 *	the STOP marker, snapshot again. Writes OUT as "key value" lines
 *	(a_* before, b_* after, plus window/target_ios) and answers
 *	"ok IOS NS" or "err REASON" (a window short of N IOs is an error).
 *	IOSRC: blk:NAME  reads + writes completed of /sys/block/NAME/stat
 *	                 (requests; their sectors are written as a_/b_sectors,
 *	                 from which summarize.py counts the user's IOs: a
 *	                 device that splits an IO counts 2 requests for it)
 *	       u64:PATH  the sum of the little-endian u64s in the first
 *	                 SNAP_U64_SLOTS slots of PATH (the fio engine's
 *	                 ios_file: one slot per job of a numjobs group)
 *	       time      none: the window lasts MAX_MS (N is ignored) and
 *	                 the caller counts IOs some other way
 *	       kv:PATH   not an IO source: a counter file sampled with the
 *	                 rest, every "name=N" token of it (summed over
 *	                 lines, e.g. a module's per-path counters) written
 *	                 as a_kv_NAME / b_kv_NAME
 *   count IOSRC...
 *	The sources' IO count now ("ok N"; "err ..." if one cannot be opened,
 *	e.g. an ios_file fio has not created yet): measure.sh waits on it
 *	for the system's own IO to flow before a window.
 *   maps OUT
 *	Write every process's executable mappings ("P <pid> <comm>", then its
 *	/proc/PID/maps lines with x permission), the format of
 *	experiments/profiler/guest-dump.sh, for attributing a profiled
 *	window's user addresses. Run right after a window, while the measured
 *	processes live; done here because forking a dump tool costs seconds
 *	of wall time per window under TCG (binaries paged in over 9p).
 *   sleep MS
 *	Answer "ok" after MS milliseconds: a window sent with it in one
 *	write opens once the sender (e.g. a remote command channel) is gone.
 *   kprobes on|off
 *	Also sample the work-request kprobes of measure.sh's counting pass
 *	(hits of tbwr/send and tbwr/recv in kprobe_profile).
 *   quit
 *
 * Every window also records /proc/stat's "processes" (forks since boot) as
 * a_/b_forks: a fork inside a window is work of no IO.
 *
 * Options: --blk NAME (the backend disk, counted as "blk"), --rxe DEV[,DEV]
 * (rxe packet counters).
 *
 * Counters are read with pread() at offset 0 on files opened once: sysfs
 * and seq_file regenerate their text on a read at offset 0.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../profiler/tbmark.h"

#define SNAP_MAX_SRC	8
#define SNAP_MAX_RXE	4
#define SNAP_BUF	65536
#define SNAP_MAX_KV	32	/* distinct keys of kv: files */
#define SNAP_KV_NAME	32
#define SNAP_U64_SLOTS	64	/* u64: sources: the fio engine's IBTRS_IOS_SLOTS */

struct snap_src {
	int fd;
	int is_u64;
};

struct snap_vals {
	uint64_t mono_ns;
	uint64_t cpu_busy, cpu_idle, ctxt, intr;
	uint64_t ios, sectors, blk, pkts_sent, pkts_rcvd, forks;
	uint64_t wr_send, wr_recv;
	int nkv;
	char kv_name[SNAP_MAX_KV][SNAP_KV_NAME];
	uint64_t kv_val[SNAP_MAX_KV];
};

struct snap_ctx {
	int stat_fd;
	int blk_fd;
	int sent_fd[SNAP_MAX_RXE], rcvd_fd[SNAP_MAX_RXE];
	int nrxe;
	int kprobe_fd;
	unsigned int windows;
	char buf[SNAP_BUF];
};

static uint64_t snap_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Read a whole small file at offset 0; returns its length or -1. */
static ssize_t snap_read(struct snap_ctx *c, int fd)
{
	ssize_t n = pread(fd, c->buf, SNAP_BUF - 1, 0);

	if (n < 0)
		return -1;
	c->buf[n] = '\0';
	return n;
}

static uint64_t snap_read_u64_text(struct snap_ctx *c, int fd)
{
	if (fd < 0 || snap_read(c, fd) < 0)
		return 0;
	return strtoull(c->buf, NULL, 10);
}

/*
 * /sys/block/X/stat: fields 1 and 5 reads and writes completed, 3 and 7
 * their sectors; @sectors (if not NULL) gets fields 3 + 7.
 */
static uint64_t snap_blk_ios(struct snap_ctx *c, int fd, uint64_t *sectors)
{
	unsigned long long f[7];

	if (snap_read(c, fd) < 0 ||
	    sscanf(c->buf, "%llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1],
		   &f[2], &f[3], &f[4], &f[5], &f[6]) != 7)
		return 0;
	if (sectors)
		*sectors += f[2] + f[6];
	return f[0] + f[4];
}

static uint64_t snap_src_ios(struct snap_ctx *c, const struct snap_src *s,
			     uint64_t *sectors)
{
	uint64_t v[SNAP_U64_SLOTS], sum = 0;
	ssize_t n;

	if (!s->is_u64)
		return snap_blk_ios(c, s->fd, sectors);
	n = pread(s->fd, v, sizeof(v), 0);
	if (n < (ssize_t)sizeof(v[0]))
		return 0;
	for (ssize_t i = 0; i < n / (ssize_t)sizeof(v[0]); i++)
		sum += le64toh(v[i]);
	return sum;
}

static void snap_proc_stat(struct snap_ctx *c, struct snap_vals *v)
{
	unsigned long long u, n, s, i, w, q, sq, st;
	char *line;

	if (snap_read(c, c->stat_fd) < 0)
		return;
	for (line = c->buf; line && *line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (!strncmp(line, "cpu ", 4) &&
		    sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu",
			   &u, &n, &s, &i, &w, &q, &sq, &st) == 8) {
			v->cpu_busy = u + n + s + q + sq + st;
			v->cpu_idle = i + w;
		} else if (!strncmp(line, "ctxt ", 5)) {
			v->ctxt = strtoull(line + 5, NULL, 10);
		} else if (!strncmp(line, "intr ", 5)) {
			v->intr = strtoull(line + 5, NULL, 10);
		} else if (!strncmp(line, "processes ", 10)) {
			v->forks = strtoull(line + 10, NULL, 10);
		}
	}
}

/*
 * kprobe_profile: "  NAME   HITS   MISSES" per event, NAME without its group
 * in Linux 6.1 ("send"), with it ("tbwr/send") in some versions.
 */
static void snap_kprobes(struct snap_ctx *c, struct snap_vals *v)
{
	char name[64];
	unsigned long long hits, miss;
	char *line = c->buf;
	int off;

	if (c->kprobe_fd < 0 || snap_read(c, c->kprobe_fd) < 0)
		return;
	while (sscanf(line, " %63s %llu %llu%n", name, &hits, &miss, &off) == 3) {
		const char *ev = strncmp(name, "tbwr/", 5) ? name : name + 5;

		if (!strcmp(ev, "send"))
			v->wr_send = hits;
		else if (!strcmp(ev, "recv"))
			v->wr_recv = hits;
		line += off;
	}
}

/*
 * A kv: file (e.g. a module's counters in sysfs): every "name=N" token,
 * N decimal, is a counter; the same name on several lines (paths) or in
 * several files is summed.
 */
static void snap_kv(struct snap_ctx *c, int fd, struct snap_vals *v)
{
	char *p, *eq, *end;
	size_t len;
	int k;

	if (snap_read(c, fd) < 0)
		return;
	for (p = c->buf; (eq = strchr(p, '=')); p = end) {
		char *name = eq;
		unsigned long long n;

		while (name > p && (isalnum((unsigned char)name[-1]) || name[-1] == '_'))
			name--;
		len = (size_t)(eq - name);
		n = strtoull(eq + 1, &end, 10);
		if (end == eq + 1 || !len || len >= SNAP_KV_NAME ||
		    (*end && !isspace((unsigned char)*end))) {
			end = eq + 1;
			continue;
		}
		for (k = 0; k < v->nkv; k++)
			if (strlen(v->kv_name[k]) == len && !strncmp(v->kv_name[k], name, len))
				break;
		if (k == v->nkv) {
			if (v->nkv == SNAP_MAX_KV)
				continue;
			memcpy(v->kv_name[k], name, len);
			v->kv_name[k][len] = '\0';
			v->nkv++;
		}
		v->kv_val[k] += n;
	}
}

static void snap_take(struct snap_ctx *c, const struct snap_src *src, int nsrc,
		      const int *kv_fd, int nkv, struct snap_vals *v)
{
	int i;

	memset(v, 0, sizeof(*v));
	v->mono_ns = snap_mono_ns();
	for (i = 0; i < nsrc; i++)
		v->ios += snap_src_ios(c, &src[i], &v->sectors);
	if (c->blk_fd >= 0)
		v->blk = snap_blk_ios(c, c->blk_fd, NULL);
	for (i = 0; i < c->nrxe; i++) {
		v->pkts_sent += snap_read_u64_text(c, c->sent_fd[i]);
		v->pkts_rcvd += snap_read_u64_text(c, c->rcvd_fd[i]);
	}
	snap_proc_stat(c, v);
	snap_kprobes(c, v);
	for (i = 0; i < nkv; i++)
		snap_kv(c, kv_fd[i], v);
}

static void snap_write_vals(FILE *f, char p, const struct snap_vals *v, int wr)
{
	fprintf(f, "%c_mono_ns %" PRIu64 "\n%c_cpu_busy %" PRIu64 "\n"
		"%c_cpu_idle %" PRIu64 "\n%c_ctxt %" PRIu64 "\n%c_intr %" PRIu64 "\n"
		"%c_ios %" PRIu64 "\n%c_blk %" PRIu64 "\n%c_pkts %" PRIu64 "\n"
		"%c_pkts_rcvd %" PRIu64 "\n%c_sectors %" PRIu64 "\n"
		"%c_forks %" PRIu64 "\n",
		p, v->mono_ns, p, v->cpu_busy, p, v->cpu_idle, p, v->ctxt,
		p, v->intr, p, v->ios, p, v->blk, p, v->pkts_sent, p, v->pkts_rcvd,
		p, v->sectors, p, v->forks);
	if (wr)
		fprintf(f, "%c_wr_send %" PRIu64 "\n%c_wr_recv %" PRIu64 "\n",
			p, v->wr_send, p, v->wr_recv);
	for (int k = 0; k < v->nkv; k++)
		fprintf(f, "%c_kv_%s %" PRIu64 "\n", p, v->kv_name[k], v->kv_val[k]);
}

static void snap_sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ull,
			       .tv_nsec = ns % 1000000000ull };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Sleep until the sources completed @target IOs since @a, with few
 * wake-ups (each costs instructions inside the window): the next sleep is
 * the time the remaining IOs need at the rate seen so far.
 */
static uint64_t snap_wait(struct snap_ctx *c, const struct snap_src *src,
			  int nsrc, const struct snap_vals *a, uint64_t target,
			  uint64_t max_ns)
{
	uint64_t done = 0, now, el, next = 5000000ull;
	int i;

	for (;;) {
		snap_sleep_ns(next);
		done = 0;
		for (i = 0; i < nsrc; i++)
			done += snap_src_ios(c, &src[i], NULL);
		done -= a->ios;
		now = snap_mono_ns();
		el = now - a->mono_ns;
		if (done >= target || el >= max_ns)
			return done;
		if (done)
			next = (target - done) * (el / done) + 1000000ull;
		else
			next = 5000000ull;
		if (next > 200000000ull)
			next = 200000000ull;
		if (next > max_ns - el)
			next = max_ns - el;
	}
}

static int snap_kprobes_on(struct snap_ctx *c)
{
	if (c->kprobe_fd < 0)
		c->kprobe_fd = open("/sys/kernel/tracing/kprobe_profile",
				    O_RDONLY | O_CLOEXEC);
	return c->kprobe_fd < 0 ? -1 : 0;
}

static int snap_kprobes_off(struct snap_ctx *c)
{
	if (c->kprobe_fd >= 0)
		close(c->kprobe_fd);
	c->kprobe_fd = -1;
	return 0;
}

static int snap_open_src(const char *spec, struct snap_src *s)
{
	char path[512];

	if (!strncmp(spec, "blk:", 4)) {
		snprintf(path, sizeof(path), "/sys/block/%s/stat", spec + 4);
		s->is_u64 = 0;
	} else if (!strncmp(spec, "u64:", 4)) {
		snprintf(path, sizeof(path), "%s", spec + 4);
		s->is_u64 = 1;
	} else {
		return -EINVAL;
	}
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	return s->fd < 0 ? -errno : 0;
}

static void snap_count(struct snap_ctx *c, char *args)
{
	struct snap_src src;
	char *tok, *save = NULL;
	uint64_t n = 0;
	int err;

	for (tok = strtok_r(args, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		if (!strncmp(tok, "kv:", 3))
			continue;	/* counters, not IOs */
		err = snap_open_src(tok, &src);
		if (err) {
			printf("err %s: %s\n", tok, strerror(-err));
			return;
		}
		n += snap_src_ios(c, &src, NULL);
		close(src.fd);
	}
	printf("ok %" PRIu64 "\n", n);
}

static void snap_window(struct snap_ctx *c, char *args)
{
	struct snap_src src[SNAP_MAX_SRC];
	struct snap_vals a, b;
	char *out, *tok, *save = NULL;
	unsigned long long target, max_ms;
	int nsrc = 0, i, err, timed = 0, kv_fd[SNAP_MAX_SRC], nkv = 0;
	FILE *f;

	out = strtok_r(args, " \t\n", &save);
	tok = strtok_r(NULL, " \t\n", &save);
	target = tok ? strtoull(tok, NULL, 10) : 0;
	tok = strtok_r(NULL, " \t\n", &save);
	max_ms = tok ? strtoull(tok, NULL, 10) : 0;
	if (!out || !target || !max_ms) {
		printf("err usage: window OUT N MAX_MS IOSRC...\n");
		return;
	}
	while ((tok = strtok_r(NULL, " \t\n", &save)) && nsrc < SNAP_MAX_SRC) {
		if (!strcmp(tok, "time")) {
			timed = 1;
			continue;
		}
		if (!strncmp(tok, "kv:", 3)) {
			if (nkv == SNAP_MAX_SRC)
				continue;
			kv_fd[nkv] = open(tok + 3, O_RDONLY | O_CLOEXEC);
			if (kv_fd[nkv] < 0) {
				printf("err cannot open %s: %s\n", tok, strerror(errno));
				goto close_src;
			}
			nkv++;
			continue;
		}
		err = snap_open_src(tok, &src[nsrc]);
		if (err) {
			printf("err cannot open IO source %s: %s\n", tok, strerror(-err));
			goto close_src;
		}
		nsrc++;
	}
	if (!nsrc && !timed) {
		printf("err no IO source\n");
		return;
	}
	if (timed)
		target = UINT64_MAX;

	snap_take(c, src, nsrc, kv_fd, nkv, &a);
	tbmark_start();
	snap_wait(c, src, nsrc, &a, target, max_ms * 1000000ull);
	tbmark_stop();
	snap_take(c, src, nsrc, kv_fd, nkv, &b);
	c->windows++;

	f = fopen(out, "w");
	if (!f) {
		printf("err %s: %s\n", out, strerror(errno));
		goto close_src;
	}
	fprintf(f, "window %u\ntarget_ios %llu\n", c->windows - 1,
		timed ? 0ull : target);
	snap_write_vals(f, 'a', &a, c->kprobe_fd >= 0);
	snap_write_vals(f, 'b', &b, c->kprobe_fd >= 0);
	fclose(f);
	if (timed)
		printf("ok 0 %" PRIu64 "\n", b.mono_ns - a.mono_ns);
	else if (b.ios - a.ios < target)
		printf("err window closed after %llu ms with %" PRIu64 " of %llu IOs\n",
		       max_ms, b.ios - a.ios, target);
	else
		printf("ok %" PRIu64 " %" PRIu64 "\n", b.ios - a.ios,
		       b.mono_ns - a.mono_ns);
close_src:
	for (i = 0; i < nsrc; i++)
		close(src[i].fd);
	for (i = 0; i < nkv; i++)
		close(kv_fd[i]);
}

/* Copy the lines of /proc/PID/maps whose permissions contain 'x'. */
static void snap_maps_one(FILE *out, const char *pid, char *line, size_t len)
{
	char path[300], comm[64] = "?";
	FILE *f;
	int header = 0;
	size_t n;
	char *perm;

	snprintf(path, sizeof(path), "/proc/%s/comm", pid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%s/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return;		/* exited meanwhile */
	while (fgets(line, len, f)) {
		perm = strchr(line, ' ');
		n = strlen(line);
		if (!perm || !n || !perm[1] || !perm[2] || perm[3] != 'x')
			continue;
		if (!header++)		/* kernel threads have no mappings */
			fprintf(out, "P %s %s\n", pid, comm);
		fputs(line, out);
	}
	fclose(f);
}

static void snap_maps(char *args)
{
	char tmp[4200], line[4096], *out = strtok(args, " \t\n");
	struct dirent *de;
	FILE *f;
	DIR *d;

	if (!out) {
		printf("err usage: maps OUT\n");
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	f = fopen(tmp, "w");
	d = opendir("/proc");
	if (!f || !d) {
		printf("err %s: %s\n", f ? "/proc" : tmp, strerror(errno));
		if (f)
			fclose(f);
		if (d)
			closedir(d);
		return;
	}
	while ((de = readdir(d)))
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
			snap_maps_one(f, de->d_name, line, sizeof(line));
	closedir(d);
	if (fclose(f) || rename(tmp, out))
		printf("err %s: %s\n", out, strerror(errno));
	else
		printf("ok\n");
}

static int snap_open_rxe(struct snap_ctx *c, char *list)
{
	char path[256], *dev, *save = NULL;

	for (dev = strtok_r(list, ",", &save); dev; dev = strtok_r(NULL, ",", &save)) {
		if (c->nrxe == SNAP_MAX_RXE)
			return -1;
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/hw_counters/sent_pkts", dev);
		c->sent_fd[c->nrxe] = open(path, O_RDONLY | O_CLOEXEC);
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/hw_counters/rcvd_pkts", dev);
		c->rcvd_fd[c->nrxe] = open(path, O_RDONLY | O_CLOEXEC);
		if (c->sent_fd[c->nrxe] < 0 || c->rcvd_fd[c->nrxe] < 0) {
			fprintf(stderr, "tb-snap: %s: no rxe counters\n", dev);
			return -1;
		}
		c->nrxe++;
	}
	return 0;
}

static void snap_sleep(const char *arg)
{
	char *end;
	unsigned long ms = strtoul(arg, &end, 10);
	struct timespec ts;

	if (end == arg || ms > 600000) {
		printf("err usage: sleep MS (at most 600000)\n");
		return;
	}
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	printf("ok\n");
}

int main(int argc, char **argv)
{
	static struct snap_ctx c = { .blk_fd = -1, .kprobe_fd = -1 };
	char path[256], line[4096];
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--blk") && i + 1 < argc) {
			snprintf(path, sizeof(path), "/sys/block/%s/stat", argv[++i]);
			c.blk_fd = open(path, O_RDONLY | O_CLOEXEC);
			if (c.blk_fd < 0) {
				fprintf(stderr, "tb-snap: %s: %s\n", path, strerror(errno));
				return 1;
			}
		} else if (!strcmp(argv[i], "--rxe") && i + 1 < argc) {
			if (snap_open_rxe(&c, argv[++i]))
				return 1;
		} else {
			fprintf(stderr, "usage: tb-snap [--blk NAME] [--rxe DEV,...]\n");
			return 2;
		}
	}
	c.stat_fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	if (c.stat_fd < 0) {
		perror("tb-snap: /proc/stat");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "window ", 7))
			snap_window(&c, line + 7);
		else if (!strncmp(line, "count ", 6))
			snap_count(&c, line + 6);
		else if (!strncmp(line, "maps ", 5))
			snap_maps(line + 5);
		else if (!strncmp(line, "kprobes on", 10))
			printf("%s\n", snap_kprobes_on(&c) ? "err no kprobe_profile" : "ok");
		else if (!strncmp(line, "kprobes off", 11))
			printf("%s\n", snap_kprobes_off(&c) ? "err" : "ok");
		else if (!strncmp(line, "sleep ", 6))
			snap_sleep(line + 6);
		else if (!strncmp(line, "quit", 4))
			break;
		else
			printf("err unknown command\n");
	}
	return 0;
}
