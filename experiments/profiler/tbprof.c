// SPDX-License-Identifier: GPL-2.0
/*
 * tbprof.c - QEMU TCG plugin: guest instructions per translation block,
 * per measurement window.
 *
 * perf does not work under icount, so the testbed counts instructions
 * itself. Every translated block (TB) gets an inline counter: TCG adds the
 * TB's instruction count to a uint64 each time the block starts, with no
 * call into the plugin, which keeps an icount boot about as fast as without
 * the plugin. Guest programs open and close windows with the marker
 * instructions of tbmark.h; at a STOP the plugin writes, for window N, the
 * instructions executed since the START per TB start address:
 *
 *   W <n> <total_insns> <insns_since_boot_at_start> <insns_since_boot_at_stop>
 *   T <vaddr-hex> <count>        one per TB address with a nonzero count
 *   E <n>
 *
 * to the file given as out=PATH (appended, flushed at every STOP).
 * A count is "TB entries x TB length": a block left early by an exception
 * is counted whole, a negligible error for windows of millions of
 * instructions. Written for icount (one vCPU): the counters are updated
 * without atomics.
 *
 * Usage: qemu-system-x86_64 ... -plugin file=tbprof.so,out=PATH
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
	uint32_t n_insns;
	struct tbc *next;	/* hash chain */
};

#define CHUNK_TBCS 4096

struct chunk {
	struct chunk *next;
	unsigned int used;
	struct tbc tbc[CHUNK_TBCS];
};

/* A (vaddr, count) pair of a closing window, before merging by address. */
struct delta {
	uint64_t vaddr;
	uint64_t count;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tbc **buckets;
static size_t n_buckets;
static size_t n_tbcs;
static struct chunk *chunks;

static FILE *out;
static int window_open;
static unsigned long window_no;
static uint64_t boot_at_start;
static unsigned long stray_markers;

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
	t->next = buckets[h];
	buckets[h] = t;
	n_tbcs++;
	return t;
}

#define for_each_tbc(c, i) \
	for (c = chunks; c; c = c->next) \
		for (i = 0; i < c->used; i++)

static uint64_t snapshot(void)
{
	struct chunk *c;
	unsigned int i;
	uint64_t sum = 0;

	for_each_tbc(c, i) {
		c->tbc[i].start = c->tbc[i].count;
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
		if (t->count == t->start)
			continue;
		d[n].vaddr = t->vaddr;
		d[n].count = t->count - t->start;
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
		fprintf(out, "T %" PRIx64 " %" PRIu64 "\n", d[i].vaddr, sum);
	}
	fprintf(out, "E %lu\n", window_no);
	fflush(out);
	free(d);
}

static void on_marker(unsigned int vcpu, void *udata)
{
	uint32_t kind = (uint32_t)(uintptr_t)udata;

	(void)vcpu;
	pthread_mutex_lock(&lock);
	if (kind == TBMARK_START) {
		/* A second START re-opens: the newest START defines the window. */
		boot_at_start = snapshot();
		window_open = 1;
	} else if (window_open) {
		write_window();
		window_no++;
		window_open = 0;
	} else {
		stray_markers++;
	}
	pthread_mutex_unlock(&lock);
}

/* TBMARK_START/STOP when @insn is a marker, else 0. */
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
	return imm == TBMARK_START || imm == TBMARK_STOP ? imm : 0;
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	struct tbc *t;

	(void)id;
	pthread_mutex_lock(&lock);
	t = get_tbc(qemu_plugin_tb_vaddr(tb), n);
	pthread_mutex_unlock(&lock);
	if (t)
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
							 &t->count, n);
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

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			path = argv[i] + 4;
		} else {
			fprintf(stderr, "tbprof: unknown argument '%s'\n", argv[i]);
			return -1;
		}
	}
	if (!path || !*path) {
		fprintf(stderr, "tbprof: out=PATH is required\n");
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
	fprintf(out, "# tbprof: %s\n", info->target_name);
	fflush(out);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}
