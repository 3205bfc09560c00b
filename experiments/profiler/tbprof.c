// SPDX-License-Identifier: GPL-2.0
/*
 * tbprof.c - QEMU TCG plugin: guest instructions per translation block,
 * per measurement window, and how many of them ran on behalf of NIC code.
 *
 * perf does not work under icount, so the testbed counts instructions
 * itself. Every translated block (TB) gets an inline counter: TCG adds the
 * TB's instruction count to a uint64 each time the block starts, with no
 * call into the plugin. Guest programs open and close windows with the
 * marker instructions of tbmark.h; at a STOP the plugin writes, for window
 * N, the instructions executed since the START per TB start address:
 *
 *   W <n> <total_insns> <insns_since_boot_at_start> <insns_since_boot_at_stop>
 *   T <vaddr-hex> <count>        one per TB address with a nonzero count
 *   C <vaddr-hex> <count>        (format 2) NIC-called instructions, below
 *   S <n> key=value ...          (format 2) caller-tracking statistics
 *   E <n>
 *
 * to the file given as out=PATH (appended, flushed at every STOP).
 * A count is "TB entries x TB length": a block left early by an exception
 * is counted whole, a negligible error for windows of millions of
 * instructions. Written for icount (one vCPU): the counters are updated
 * without atomics.
 *
 * Caller attribution (format 2). Shared helper code (memcpy, the
 * allocators, locks, ...) executed because NIC code (rxe, the UDP/IP path,
 * ...; see components.conf) called it is NIC work too. The plugin knows no
 * symbols: the guest's build/profiler/tbnic writes the address ranges of
 * NIC code ("N") and of shared-helper code ("H": the components marked
 * "shared" in components.conf), and the interrupt entry, softirq and
 * context-switch addresses, to nic=PATH (default: profile.raw's
 * folder/nic.ranges) and executes the CONF marker; the plugin reads the
 * file and retranslates all code (qemu_plugin_reset flushes the TB cache),
 * so that from then on:
 *
 *  - every TB that ends in a call or ret (E8, FF /2, FF /3; C3, C2, CB,
 *    CA), in iretq/sysret/sysexit, or starts at one of the special
 *    addresses gets an exec callback; all others add their length to a
 *    global counter g inline, so g - g_last at a callback is the
 *    instructions since the previous callback, this TB's included. Between
 *    two callbacks execution stays in one function (a function is left
 *    only by a call or ret, whose TB has a callback; a tail jump is the
 *    exception, below), the function of the later callback's TB: that TB
 *    is credited with them (C line), and attribute.py adds the credits up
 *    per function;
 *  - an "episode" opens when a NIC TB ends in a call (into NIC code too:
 *    a PLT stub or a NIC function may jump on into shared code): from then
 *    on calls and rets are counted (a shadow stack of depths), and the
 *    instructions of helper code are credited to a log; the ret that
 *    brings the depth back to the NIC caller's commits the log to the
 *    TBs' counters. NIC code inside is not credited (it is NIC by symbol);
 *  - the first callback TB of code that is neither NIC nor a helper (a
 *    ULP's completion handler that rxe calls, a wake-up, the block layer)
 *    pushes a context of its own: that function and everything it calls
 *    stay in their components, and its ret pops the context (and is the
 *    ret of the call the episode counted);
 *  - an episode is discarded (its instructions stay with their own
 *    component) when it cannot be followed: a context switch
 *    (__switch_to_asm: schedule() inside a helper), more than 512 nested
 *    calls, a log of more than 65536 entries or an episode of more than
 *    16 M instructions (a call that never returns: longjmp, an exception
 *    unwinding), an iret that matches no entry, and the window's edges
 *    (START and STOP discard what is open; episodes open only inside a
 *    window);
 *  - interrupts, exceptions and syscalls that land inside an episode do
 *    not count: their entry point pushes a fresh context (calls, rets and
 *    NIC episodes of its own, e.g. a softirq's rxe receive calling memcpy,
 *    are counted there), popped by the iret/sysret that ends it; a
 *    softirq run from a helper (__do_softirq, e.g. in spin_unlock_bh)
 *    likewise, popped by __do_softirq's ret. The interrupted function's
 *    instructions since its last callback are kept for its next callback
 *    TB at the same depth (after the iret, the function goes on).
 *
 * A tail jump (h1: jmp h2) credits h1's instructions before the jump to
 * h2's callback TB; attribute.py never moves more from a function than it
 * executed in the window and reports the rest as unplaced.
 *
 * Without a ranges file (or with caller=0) the plugin is format 1: inline
 * counters only.
 *
 * Usage: qemu-system-x86_64 ... -plugin file=tbprof.so,out=PATH[,nic=PATH][,caller=0]
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

#include "tbmark.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct cbinfo;

/*
 * One counter per (TB address, TB length). A retranslation of the same
 * block (after a TB flush, or in another process at the same address)
 * reuses it, so the table stays as big as the guest's distinct code.
 * Structs never move: TCG code holds &count.
 */
struct tbc {
	uint64_t vaddr;
	uint64_t count;		/* instructions executed since boot */
	uint64_t start;		/* count at the open window's START */
	uint64_t called;	/* instructions credited as NIC-called since boot */
	uint64_t called_start;
	uint32_t n_insns;
	struct tbc *next;	/* hash chain */
	struct cbinfo *cbs;	/* callback descriptors of its translations */
};

#define CHUNK_TBCS 4096

struct chunk {
	struct chunk *next;
	unsigned int used;
	struct tbc tbc[CHUNK_TBCS];
};

/* A (vaddr, count, called) triple of a closing window, before merging. */
struct delta {
	uint64_t vaddr;
	uint64_t count;
	uint64_t called;
};

/* What a callback TB is (flags). */
#define K_CALL		0x01u	/* ends in a call */
#define K_RET		0x02u	/* ends in a ret */
#define K_IRET		0x04u	/* ends in iretq / sysret / sysexit */
#define K_IENTRY	0x08u	/* starts at an interrupt/exception/syscall entry */
#define K_SENTRY	0x10u	/* starts at a softirq function (__do_softirq) */
#define K_SWITCH	0x20u	/* starts at the context switch (__switch_to_asm) */
#define K_NIC		0x40u	/* inside a NIC range */
#define K_HELP		0x80u	/* inside a shared-helper range */
#define K_CB (K_CALL | K_RET | K_IRET | K_IENTRY | K_SENTRY | K_SWITCH)

struct cbinfo {
	struct tbc *t;
	uint32_t n;
	uint32_t flags;
	struct cbinfo *next;	/* the tbc's list */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tbc **buckets;
static size_t n_buckets;
static size_t n_tbcs;
static struct chunk *chunks;

static qemu_plugin_id_t plugin_id;
static FILE *out;
static int window_open;
static unsigned long window_no;
static uint64_t boot_at_start;
static unsigned long stray_markers;

/* ---------------------------------------------------------------- ranges */
static char *nic_path;
static int caller_on = 1;
static int ranges_loaded;	/* TBs translated from now on get callbacks */
static unsigned long ranges_gen;

struct range {
	uint64_t start, end;
};

struct point {
	uint64_t addr;
	uint32_t flag;		/* K_IENTRY, K_SENTRY or K_SWITCH */
};

static struct range *nic_ranges, *help_ranges;
static size_t n_nic, n_help;
static struct point *points;
static size_t n_points;

/* ---------------------------------------------------------------- caller state */
#define MAX_CTX		32
#define MAX_DEPTH	512
#define LOG_MAX		65536
#define EP_MAX_INSNS	(16ull << 20)

enum { CTX_BASE, CTX_IRQ, CTX_FUNC };

struct ctx {
	int kind;
	int open;		/* an episode is open in this context */
	int depth;		/* calls - rets (base: since the episode opened) */
	int ep_depth;		/* the NIC caller's depth */
	unsigned int log0;	/* the episode's first log entry */
	uint64_t ep_insns;
	/* instructions of the function at each depth not yet credited (an
	 * interrupt came before the function's next callback TB) */
	uint64_t pend[MAX_DEPTH + 2];
};

struct credit {
	struct tbc *t;
	uint64_t n;
};

static uint64_t g;		/* instructions since boot once ranges are loaded */
static uint64_t g_last;
static struct ctx ctxs[MAX_CTX];
static int nctx = 1;
static int busy;		/* nctx > 1 || ctxs[0].open */
static struct credit *crlog;
static unsigned int nlog;

/* Per-window statistics (S line). */
static struct {
	uint64_t episodes, committed, called;
	uint64_t ab_switch, ab_depth, ab_log, ab_long, ab_iret, ab_ctx, ab_edge;
	uint64_t discarded_insns, pushes, owner;
	uint64_t g_start;
} st;

static size_t hash(uint64_t vaddr, uint32_t n_insns)
{
	uint64_t h = (vaddr ^ ((uint64_t)n_insns << 48)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 20) & (n_buckets - 1);
}

/* Doubles the bucket array; chains are relinked, structs stay put. */
static int grow(void)
{
	size_t i, n = n_buckets ? n_buckets * 2 : 1 << 16;
	struct tbc **old = buckets;
	size_t old_n = n_buckets;

	buckets = calloc(n, sizeof(*buckets));
	if (!buckets) {
		buckets = old;
		return -ENOMEM;
	}
	n_buckets = n;
	for (i = 0; i < old_n; i++) {
		struct tbc *t = old[i], *next;

		for (; t; t = next) {
			size_t h = hash(t->vaddr, t->n_insns);

			next = t->next;
			t->next = buckets[h];
			buckets[h] = t;
		}
	}
	free(old);
	return 0;
}

static struct tbc *alloc_tbc(void)
{
	if (!chunks || chunks->used == CHUNK_TBCS) {
		struct chunk *c = calloc(1, sizeof(*c));

		if (!c)
			return NULL;
		c->next = chunks;
		chunks = c;
	}
	return &chunks->tbc[chunks->used++];
}

/* Caller holds lock. Returns NULL only when out of memory. */
static struct tbc *get_tbc(uint64_t vaddr, uint32_t n_insns)
{
	struct tbc *t;
	size_t h;

	if (n_tbcs >= n_buckets && grow() && !n_buckets)
		return NULL;
	h = hash(vaddr, n_insns);
	for (t = buckets[h]; t; t = t->next)
		if (t->vaddr == vaddr && t->n_insns == n_insns)
			return t;
	t = alloc_tbc();
	if (!t)
		return NULL;
	t->vaddr = vaddr;
	t->n_insns = n_insns;
	/* A block first seen inside a window starts that window at 0. */
	t->start = 0;
	t->called_start = 0;
	t->next = buckets[h];
	buckets[h] = t;
	n_tbcs++;
	return t;
}

/* Caller holds lock. One descriptor per (tbc, flags), reused. */
static struct cbinfo *get_cbinfo(struct tbc *t, uint32_t flags)
{
	struct cbinfo *ci;

	for (ci = t->cbs; ci; ci = ci->next)
		if (ci->flags == flags)
			return ci;
	ci = calloc(1, sizeof(*ci));
	if (!ci)
		return NULL;
	ci->t = t;
	ci->n = t->n_insns;
	ci->flags = flags;
	ci->next = t->cbs;
	t->cbs = ci;
	return ci;
}

#define for_each_tbc(c, i) \
	for (c = chunks; c; c = c->next) \
		for (i = 0; i < c->used; i++)

/* ---------------------------------------------------------------- caller tracking */
static void set_busy(void)
{
	busy = nctx > 1 || ctxs[0].open;
}

static void discard(struct ctx *c, uint64_t *why)
{
	if (!c->open)
		return;
	st.discarded_insns += c->ep_insns;
	(*why)++;
	nlog = c->log0;
	c->open = 0;
	c->ep_insns = 0;
	if (c->kind == CTX_BASE)
		c->depth = 0;
}

/* Forgets every context and open episode. */
static void abort_all(uint64_t *why)
{
	int i;

	for (i = nctx - 1; i >= 0; i--)
		discard(&ctxs[i], why);
	nctx = 1;
	ctxs[0].kind = CTX_BASE;
	ctxs[0].depth = 0;
	nlog = 0;
	busy = 0;
}

static void commit(struct ctx *c)
{
	unsigned int i;

	for (i = c->log0; i < nlog; i++)
		crlog[i].t->called += crlog[i].n;
	st.committed++;
	st.called += c->ep_insns;
	nlog = c->log0;
	c->open = 0;
	c->ep_insns = 0;
	if (c->kind == CTX_BASE)
		c->depth = 0;
}

static void open_episode(struct ctx *c)
{
	c->open = 1;
	c->ep_depth = c->depth;
	c->log0 = nlog;
	c->ep_insns = 0;
	st.episodes++;
}

/* Credits @n instructions of an open episode to the function of @ci. */
static void credit(struct ctx *c, struct cbinfo *ci, uint64_t n)
{
	if (!c->open || !n)
		return;
	if (!(ci->flags & K_HELP))
		return;
	c->ep_insns += n;
	if (c->ep_insns > EP_MAX_INSNS) {
		discard(c, &st.ab_long);
		return;
	}
	if (nlog > c->log0 && crlog[nlog - 1].t == ci->t) {
		crlog[nlog - 1].n += n;
		return;
	}
	if (nlog == LOG_MAX) {
		discard(c, &st.ab_log);
		return;
	}
	crlog[nlog].t = ci->t;
	crlog[nlog].n = n;
	nlog++;
}

static struct ctx *push_ctx(int kind)
{
	struct ctx *c;

	if (nctx == MAX_CTX) {
		abort_all(&st.ab_ctx);
		return &ctxs[0];
	}
	c = &ctxs[nctx++];
	c->kind = kind;
	c->open = 0;
	c->depth = 0;
	c->ep_insns = 0;
	c->pend[0] = 0;
	st.pushes++;
	busy = 1;
	return c;
}

/* Pops the top context (discarding an episode it left open). */
static struct ctx *pop_ctx(void)
{
	discard(&ctxs[nctx - 1], &st.ab_iret);
	nctx--;
	set_busy();
	return &ctxs[nctx - 1];
}

static void do_ret(struct ctx *c)
{
	for (;;) {
		if (c->kind == CTX_FUNC && c->depth == 0) {
			/* the softirq function returns: its caller's ret too */
			c = pop_ctx();
			continue;
		}
		if (c->kind == CTX_BASE && !c->open)
			return;
		if (c->depth > 0)
			c->depth--;
		if (c->open && c->depth == c->ep_depth) {
			commit(c);
			set_busy();
		}
		return;
	}
}

static void on_cb(unsigned int vcpu, void *udata)
{
	struct cbinfo *ci = udata;
	uint32_t f = ci->flags;
	struct ctx *c;
	uint64_t delta;

	(void)vcpu;
	g += ci->n;
	if (!busy) {
		/* Nothing open: only a NIC call opens an episode. */
		if ((f & (K_CALL | K_NIC)) == (K_CALL | K_NIC) && window_open) {
			c = &ctxs[0];
			c->depth = 0;
			open_episode(c);
			c->depth = 1;
			c->pend[1] = 0;
			busy = 1;
			g_last = g;
		}
		return;
	}
	delta = g - g_last;
	g_last = g;
	if (f & K_SWITCH) {
		/* schedule() inside an episode: the other task's code follows */
		abort_all(&st.ab_switch);
		return;
	}
	c = &ctxs[nctx - 1];
	if (f & (K_IENTRY | K_SENTRY)) {
		/*
		 * Before this TB: the interrupted (or calling) function, which
		 * has had no callback TB since; its next one gets them.
		 */
		if (c->open)
			c->pend[c->depth] += delta - ci->n;
		c = push_ctx(f & K_IENTRY ? CTX_IRQ : CTX_FUNC);
	} else if (c->open && !(f & (K_NIC | K_HELP | K_IRET))) {
		/*
		 * The episode's NIC code (or a helper it called) called
		 * software that is neither NIC nor a shared helper: a
		 * completion handler, a wake-up. That function and all it
		 * calls stay software: a context of its own (depth 0: this
		 * function), popped by its ret.
		 */
		c->pend[c->depth] = 0;
		st.owner++;
		c = push_ctx(CTX_FUNC);
	} else if (c->open) {
		uint64_t n = delta + c->pend[c->depth];

		c->pend[c->depth] = 0;
		credit(c, ci, n);
	}
	if (f & K_CALL) {
		if (!c->open && (f & K_NIC)) {
			open_episode(c);
			busy = 1;
		}
		if (c->open || c->kind != CTX_BASE) {
			if (c->depth >= MAX_DEPTH) {
				abort_all(&st.ab_depth);
				return;
			}
			c->depth++;
			c->pend[c->depth] = 0;
		}
	} else if (f & K_RET) {
		do_ret(c);
	} else if (f & K_IRET) {
		if (c->kind == CTX_IRQ)
			pop_ctx();
		else
			abort_all(&st.ab_iret);	/* matches no entry we saw */
	}
}

/* ---------------------------------------------------------------- ranges file */
static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_point(const void *a, const void *b)
{
	const struct point *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int in_ranges(const struct range *r, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (r[mid].end <= a)
			lo = mid + 1;
		else if (r[mid].start > a)
			hi = mid;
		else
			return 1;
	}
	return 0;
}

static uint32_t point_flag(uint64_t a)
{
	size_t lo = 0, hi = n_points;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (points[mid].addr < a)
			lo = mid + 1;
		else if (points[mid].addr > a)
			hi = mid;
		else
			return points[mid].flag;
	}
	return 0;
}

/*
 * Reads nic_path: "N <start> <end>" NIC code, "H <start> <end>" shared
 * helpers (the only code credited as NIC-called), "I <addr>" interrupt,
 * exception and syscall entries, "S <addr>" softirq functions, "X <addr>"
 * context switch (hex addresses). Caller holds lock. Returns 0 or -errno.
 */
static int load_ranges(void)
{
	FILE *f = fopen(nic_path, "r");
	char line[512];
	size_t cap_r = 0, cap_h = 0, cap_p = 0, nr = 0, nh = 0, np = 0;
	struct range *r = NULL, *h = NULL;
	struct point *p = NULL;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;
		char k;

		if (sscanf(line, " %c %llx %llx", &k, &a, &b) == 3 && k == 'N') {
			if (nr == cap_r) {
				cap_r = cap_r ? cap_r * 2 : 4096;
				r = realloc(r, cap_r * sizeof(*r));
				if (!r)
					goto nomem;
			}
			r[nr].start = a;
			r[nr].end = b;
			nr++;
		} else if (sscanf(line, " %c %llx %llx", &k, &a, &b) == 3 && k == 'H') {
			if (nh == cap_h) {
				cap_h = cap_h ? cap_h * 2 : 4096;
				h = realloc(h, cap_h * sizeof(*h));
				if (!h)
					goto nomem;
			}
			h[nh].start = a;
			h[nh].end = b;
			nh++;
		} else if (sscanf(line, " %c %llx", &k, &a) == 2 &&
			   (k == 'I' || k == 'S' || k == 'X')) {
			if (np == cap_p) {
				cap_p = cap_p ? cap_p * 2 : 256;
				p = realloc(p, cap_p * sizeof(*p));
				if (!p)
					goto nomem;
			}
			p[np].addr = a;
			p[np].flag = k == 'I' ? K_IENTRY : k == 'S' ? K_SENTRY : K_SWITCH;
			np++;
		}
	}
	fclose(f);
	qsort(r, nr, sizeof(*r), cmp_range);
	qsort(h, nh, sizeof(*h), cmp_range);
	qsort(p, np, sizeof(*p), cmp_point);
	free(nic_ranges);
	free(help_ranges);
	free(points);
	nic_ranges = r;
	n_nic = nr;
	help_ranges = h;
	n_help = nh;
	points = p;
	n_points = np;
	ranges_loaded = 1;
	ranges_gen++;
	return 0;
nomem:
	fclose(f);
	free(r);
	free(h);
	free(p);
	return -ENOMEM;
}

/* ---------------------------------------------------------------- windows */
static uint64_t snapshot(void)
{
	struct chunk *c;
	unsigned int i;
	uint64_t sum = 0;

	for_each_tbc(c, i) {
		c->tbc[i].start = c->tbc[i].count;
		c->tbc[i].called_start = c->tbc[i].called;
		sum += c->tbc[i].count;
	}
	return sum;
}

static int cmp_delta(const void *a, const void *b)
{
	const struct delta *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/*
 * Collects the nonzero deltas of the closing window, sorted by address;
 * returns how many (-1: out of memory) and the boot total in *boot.
 */
static long collect(struct delta **dp, uint64_t *boot)
{
	struct delta *d = malloc((n_tbcs + 1) * sizeof(*d));
	struct chunk *c;
	unsigned int i;
	long n = 0;

	*boot = 0;
	if (!d)
		return -1;
	for_each_tbc(c, i) {
		struct tbc *t = &c->tbc[i];

		*boot += t->count;
		if (t->count == t->start && t->called == t->called_start)
			continue;
		d[n].vaddr = t->vaddr;
		d[n].count = t->count - t->start;
		d[n].called = t->called - t->called_start;
		n++;
	}
	qsort(d, n, sizeof(*d), cmp_delta);
	*dp = d;
	return n;
}

/* Writes window @window_no, merging entries of equal address. */
static void write_window(void)
{
	struct delta *d;
	uint64_t boot, total = 0;
	long i, n = collect(&d, &boot);

	if (n < 0) {
		fprintf(out, "# window %lu lost: out of memory\n", window_no);
		fflush(out);
		return;
	}
	for (i = 0; i < n; i++)
		total += d[i].count;
	fprintf(out, "W %lu %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		window_no, total, boot_at_start, boot);
	for (i = 0; i < n; i++) {
		uint64_t sum = d[i].count;

		while (i + 1 < n && d[i + 1].vaddr == d[i].vaddr)
			sum += d[++i].count;
		if (sum)
			fprintf(out, "T %" PRIx64 " %" PRIu64 "\n", d[i].vaddr, sum);
	}
	if (ranges_loaded && caller_on) {
		for (i = 0; i < n; i++) {
			uint64_t sum = d[i].called;

			while (i + 1 < n && d[i + 1].vaddr == d[i].vaddr)
				sum += d[++i].called;
			if (sum)
				fprintf(out, "C %" PRIx64 " %" PRIu64 "\n", d[i].vaddr, sum);
		}
		fprintf(out, "S %lu ranges=%zu helpers=%zu points=%zu gen=%lu g=%" PRIu64
			" episodes=%" PRIu64 " committed=%" PRIu64 " called=%" PRIu64
			" discarded=%" PRIu64 " pushes=%" PRIu64 " owner=%" PRIu64
			" ab_switch=%" PRIu64 " ab_depth=%" PRIu64 " ab_log=%" PRIu64
			" ab_long=%" PRIu64 " ab_iret=%" PRIu64 " ab_ctx=%" PRIu64
			" ab_edge=%" PRIu64 "\n",
			window_no, n_nic, n_help, n_points, ranges_gen, g - st.g_start,
			st.episodes, st.committed, st.called, st.discarded_insns,
			st.pushes, st.owner, st.ab_switch, st.ab_depth, st.ab_log,
			st.ab_long, st.ab_iret, st.ab_ctx, st.ab_edge);
	}
	fprintf(out, "E %lu\n", window_no);
	fflush(out);
	free(d);
}

static void on_reset(qemu_plugin_id_t id);

static void on_marker(unsigned int vcpu, void *udata)
{
	uint32_t kind = (uint32_t)(uintptr_t)udata;

	(void)vcpu;
	pthread_mutex_lock(&lock);
	if (kind == TBMARK_START) {
		/* A second START re-opens: the newest START defines the window. */
		abort_all(&st.ab_edge);
		memset(&st, 0, sizeof(st));
		boot_at_start = snapshot();
		st.g_start = g;
		g_last = g;
		window_open = 1;
	} else if (kind == TBMARK_STOP && window_open) {
		/* What is still open never returned inside the window. */
		abort_all(&st.ab_edge);
		write_window();
		window_no++;
		window_open = 0;
	} else if (kind == TBMARK_CONF) {
		if (!caller_on) {
			fprintf(out, "# conf: caller=0, ranges ignored\n");
		} else {
			int err = load_ranges();

			if (err) {
				fprintf(out, "# conf: %s: %s\n", nic_path, strerror(-err));
			} else {
				fprintf(out, "# conf %lu: %zu NIC ranges, %zu helper ranges, %zu entry points from %s\n",
					ranges_gen, n_nic, n_help, n_points, nic_path);
				abort_all(&st.ab_edge);
				/* retranslate everything with the new ranges */
				qemu_plugin_reset(plugin_id, on_reset);
			}
		}
		fflush(out);
	} else {
		stray_markers++;
	}
	pthread_mutex_unlock(&lock);
}

/* TBMARK_START/STOP/CONF when @insn is a marker, else 0. */
static uint32_t marker_kind(struct qemu_plugin_insn *insn)
{
	const uint8_t *b;
	uint32_t imm;

	if (qemu_plugin_insn_size(insn) != TBMARK_LEN)
		return 0;
	b = qemu_plugin_insn_data(insn);
	if (b[0] != TBMARK_OPCODE0 || b[1] != TBMARK_OPCODE1 || b[2] != TBMARK_MODRM)
		return 0;
	imm = b[3] | b[4] << 8 | b[5] << 16 | (uint32_t)b[6] << 24;
	return imm == TBMARK_START || imm == TBMARK_STOP || imm == TBMARK_CONF ? imm : 0;
}

/*
 * What the TB's last instruction is: K_CALL (E8 rel32: *target set; FF /2,
 * FF /3), K_RET (C3, C2, CB, CA), K_IRET (iret, sysret, sysexit), or 0.
 */
static uint32_t last_insn_kind(struct qemu_plugin_insn *insn, uint64_t *target)
{
	const uint8_t *b = qemu_plugin_insn_data(insn);
	size_t len = qemu_plugin_insn_size(insn), i = 0;

	*target = 0;
	while (i < len && (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf2 || b[i] == 0xf3 ||
			   b[i] == 0x2e || b[i] == 0x3e || b[i] == 0x26 || b[i] == 0x36 ||
			   b[i] == 0x64 || b[i] == 0x65))
		i++;
	if (i < len && (b[i] & 0xf0) == 0x40)	/* REX */
		i++;
	if (i >= len)
		return 0;
	switch (b[i]) {
	case 0xe8:
		if (i + 5 == len) {
			int32_t rel;

			memcpy(&rel, b + i + 1, 4);
			*target = qemu_plugin_insn_vaddr(insn) + len + (int64_t)rel;
		}
		return K_CALL;
	case 0xff:
		if (i + 1 < len) {
			unsigned int reg = (b[i + 1] >> 3) & 7;

			if (reg == 2 || reg == 3)
				return K_CALL;
		}
		return 0;
	case 0xc3: case 0xc2: case 0xcb: case 0xca:
		return K_RET;
	case 0xcf:
		return K_IRET;
	case 0x0f:
		if (i + 1 < len && (b[i + 1] == 0x07 || b[i + 1] == 0x35))
			return K_IRET;
		return 0;
	}
	return 0;
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	struct cbinfo *ci = NULL;
	int tracked;
	struct tbc *t;

	(void)id;
	pthread_mutex_lock(&lock);
	t = get_tbc(vaddr, n);
	tracked = caller_on && ranges_loaded && crlog;
	if (t && tracked && n) {
		uint64_t target;
		uint32_t f = last_insn_kind(qemu_plugin_tb_get_insn(tb, n - 1), &target);

		f |= point_flag(vaddr);
		if (f & K_CB) {
			if (in_ranges(nic_ranges, n_nic, vaddr))
				f |= K_NIC;
			else if (in_ranges(help_ranges, n_help, vaddr))
				f |= K_HELP;
			ci = get_cbinfo(t, f);
		}
	}
	pthread_mutex_unlock(&lock);
	if (t) {
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
							 &t->count, n);
		if (ci)
			qemu_plugin_register_vcpu_tb_exec_cb(tb, on_cb, QEMU_PLUGIN_CB_NO_REGS, ci);
		else if (tracked)
			qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
								 &g, n);
	}
	/* Markers are rare: only their instructions get a callback. */
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint32_t kind = marker_kind(insn);

		if (kind)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)kind);
	}
}

static void on_qemu_exit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	pthread_mutex_lock(&lock);
	fprintf(out, "# exit: %lu windows, %zu blocks, %lu stray STOPs%s\n",
		window_no, n_tbcs, stray_markers,
		window_open ? ", last window never closed" : "");
	fclose(out);
	out = NULL;
	pthread_mutex_unlock(&lock);
}

/* After qemu_plugin_reset: the TB cache is empty, the callbacks are gone. */
static void on_reset(qemu_plugin_id_t id)
{
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL, *nic = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			path = argv[i] + 4;
		} else if (!strncmp(argv[i], "nic=", 4)) {
			nic = argv[i] + 4;
		} else if (!strcmp(argv[i], "caller=0") || !strcmp(argv[i], "caller=1")) {
			caller_on = argv[i][7] == '1';
		} else {
			fprintf(stderr, "tbprof: unknown argument '%s'\n", argv[i]);
			return -1;
		}
	}
	if (!path || !*path) {
		fprintf(stderr, "tbprof: out=PATH is required\n");
		return -1;
	}
	if (nic && *nic) {
		nic_path = strdup(nic);
	} else {
		const char *slash = strrchr(path, '/');
		size_t dl = slash ? (size_t)(slash - path + 1) : 0;

		nic_path = malloc(dl + sizeof("nic.ranges"));
		if (nic_path) {
			memcpy(nic_path, path, dl);
			strcpy(nic_path + dl, "nic.ranges");
		}
	}
	crlog = malloc(LOG_MAX * sizeof(*crlog));
	if (!nic_path || !crlog) {
		fprintf(stderr, "tbprof: out of memory\n");
		return -1;
	}
	if (info->system_emulation && info->system.smp_vcpus > 1)
		fprintf(stderr, "tbprof: %d vCPUs: counts are not atomic, use icount (1 vCPU)\n",
			info->system.smp_vcpus);
	out = fopen(path, "a");
	if (!out) {
		fprintf(stderr, "tbprof: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (grow()) {
		fclose(out);
		return -1;
	}
	plugin_id = id;
	fprintf(out, "# tbprof: %s\n", info->target_name);
	fprintf(out, "# format 2: C lines (NIC-called instructions) after a CONF, caller=%d, nic=%s\n",
		caller_on, nic_path);
	fflush(out);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}
