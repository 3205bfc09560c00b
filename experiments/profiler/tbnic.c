// SPDX-License-Identifier: GPL-2.0
/*
 * tbnic.c - in the profiled guest: tell the profiler plugin (tbprof.c)
 * where the NIC code is, for caller attribution.
 *
 * Usage: tbnic --out FILE [--kallsyms FILE] [--rules components.conf]
 *              [--pid PID]... [--no-conf]
 *
 * Reads the kernel's text symbols (default /proc/kallsyms; root) and
 * components.conf (default: ../../experiments/profiler/components.conf
 * from this binary), classifies every symbol as attribute.py does (first
 * matching module/ksym rule; a symbol covers its address up to the next
 * symbol's), and writes FILE:
 *
 *   N <start> <end>      code whose component is "nic" (merged ranges)
 *   H <start> <end>      code of a shared-helper component ("shared COMP"
 *                        lines of components.conf: kernel-lib, ...)
 *   I <addr> <name>      interrupt, exception and syscall entries
 *   S <addr> <name>      softirq processing (__do_softirq)
 *   X <addr> <name>      the context switch (__switch_to_asm)
 *
 * With --pid, the executable file mappings of that process whose file
 * matches a "user ... nic" rule are NIC ranges too (user addresses are the
 * same number in every process: only for a test program's own code).
 * Then it executes the CONF marker (tbmark.h): the plugin reads FILE, which
 * must be its nic= path (default: profile.raw's folder, i.e. $TB_OUT/nic.ranges).
 * Exit status 0, 1 on error.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbmark.h"

#define KSYM_MAX_GAP (1ull << 20)	/* as attribute.py */
#define KSYM_LAST_GAP (1ull << 16)

struct rule {
	char kind;		/* 'm' module, 'k' ksym, 'u' user */
	char *pat;
	char *comp;
};

struct sym {
	uint64_t addr;
	char *name;
	char *mod;
};

struct range {
	uint64_t start, end;
};

static struct rule *rules;
static size_t n_rules;
/* "shared COMPONENT" lines: components whose code is a shared helper */
static char *shared[32];
static int n_shared;

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "tbnic: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	exit(1);
}

static int match(const char *name, const char *pat)
{
	return !strcmp(name, pat) || !fnmatch(pat, name, 0);
}

static void read_rules(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	size_t cap = 0;

	if (!f)
		die("cannot read rules %s", path);
	while (fgets(line, sizeof(line), f)) {
		char kind[32], pat[512], comp[128], *h = strchr(line, '#');

		if (h)
			*h = 0;
		if (sscanf(line, "%31s %511s %127s", kind, pat, comp) == 2 &&
		    !strcmp(kind, "shared")) {
			if (n_shared == (int)(sizeof(shared) / sizeof(shared[0])))
				die("too many shared components in %s", path);
			shared[n_shared++] = strdup(pat);
			continue;
		}
		if (sscanf(line, "%31s %511s %127s", kind, pat, comp) != 3)
			continue;
		if (n_rules == cap) {
			cap = cap ? cap * 2 : 256;
			rules = realloc(rules, cap * sizeof(*rules));
			if (!rules)
				die("%s", "out of memory");
		}
		rules[n_rules].kind = !strcmp(kind, "module") ? 'm' : !strcmp(kind, "ksym") ? 'k' :
				      !strcmp(kind, "user") ? 'u' : 0;
		if (!rules[n_rules].kind)
			die("bad rule kind in %s", path);
		rules[n_rules].pat = strdup(pat);
		rules[n_rules].comp = strdup(comp);
		n_rules++;
	}
	fclose(f);
}

static const char *kernel_comp(const char *sym, const char *mod)
{
	size_t i;

	for (i = 0; i < n_rules; i++) {
		struct rule *r = &rules[i];

		if ((r->kind == 'm' && *mod && match(mod, r->pat)) ||
		    (r->kind == 'k' && match(sym, r->pat)))
			return r->comp;
	}
	return "other";
}

static const char *user_comp(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t i;

	base = base ? base + 1 : path;
	for (i = 0; i < n_rules; i++)
		if (rules[i].kind == 'u' && match(base, rules[i].pat))
			return rules[i].comp;
	return "other";
}

static int is_shared(const char *comp)
{
	int i;

	for (i = 0; i < n_shared; i++)
		if (!strcmp(comp, shared[i]))
			return 1;
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	int c;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->mod, y->mod);
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

struct rset {
	struct range *r;
	size_t n, cap;
};

static struct rset nic_set, help_set;

static void add_range(struct rset *rs, uint64_t s, uint64_t e)
{
	if (e <= s)
		return;
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 4096;
		rs->r = realloc(rs->r, rs->cap * sizeof(*rs->r));
		if (!rs->r)
			die("%s", "out of memory");
	}
	rs->r[rs->n].start = s;
	rs->r[rs->n].end = e;
	rs->n++;
}

/* Writes @rs sorted and merged as "<kind> <start> <end>" lines. */
static void write_set(FILE *o, struct rset *rs, char kind)
{
	size_t i;

	qsort(rs->r, rs->n, sizeof(*rs->r), cmp_range);
	for (i = 0; i < rs->n;) {
		uint64_t s = rs->r[i].start, e = rs->r[i].end;

		for (i++; i < rs->n && rs->r[i].start <= e; i++)
			if (rs->r[i].end > e)
				e = rs->r[i].end;
		fprintf(o, "%c %llx %llx\n", kind, (unsigned long long)s, (unsigned long long)e);
	}
}

static const char *point_kind(const char *name, const char *mod)
{
	static const char *irq[] = {
		"asm_exc_*", "asm_sysvec_*", "asm_common_interrupt", "asm_spurious_interrupt",
		"entry_SYSCALL_64", "entry_SYSCALL_compat", "entry_SYSENTER_compat",
		"entry_INT80_compat", "asm_int80_emulation", NULL
	};
	int i;

	if (*mod)
		return NULL;
	for (i = 0; irq[i]; i++)
		if (match(name, irq[i]))
			return "I";
	if (!strcmp(name, "__do_softirq"))
		return "S";
	if (!strcmp(name, "__switch_to_asm"))
		return "X";
	return NULL;
}

int main(int argc, char **argv)
{
	const char *ks_path = "/proc/kallsyms", *out_path = NULL;
	char rules_buf[PATH_MAX + 64], line[1024], tmp[PATH_MAX + 8];
	const char *rules_path = NULL;
	struct sym *syms = NULL;
	size_t n_syms = 0, cap = 0, i, n_nic_syms = 0, n_help_syms = 0, n_points = 0;
	long pids[64];
	int n_pids = 0, conf = 1;
	FILE *f, *o;

	for (i = 1; i < (size_t)argc; i++) {
		if (!strcmp(argv[i], "--out") && i + 1 < (size_t)argc)
			out_path = argv[++i];
		else if (!strcmp(argv[i], "--kallsyms") && i + 1 < (size_t)argc)
			ks_path = argv[++i];
		else if (!strcmp(argv[i], "--rules") && i + 1 < (size_t)argc)
			rules_path = argv[++i];
		else if (!strcmp(argv[i], "--pid") && i + 1 < (size_t)argc && n_pids < 64)
			pids[n_pids++] = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--no-conf"))
			conf = 0;
		else
			die("usage: tbnic --out FILE [--kallsyms FILE] [--rules CONF] [--pid PID]... [--no-conf] (at %s)",
			    argv[i]);
	}
	if (!out_path)
		die("%s", "--out FILE is required");
	if (!rules_path) {
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		char *s;

		if (n <= 0)
			die("%s", "cannot find myself (--rules CONF)");
		self[n] = 0;
		s = strrchr(self, '/');
		*s = 0;
		snprintf(rules_buf, sizeof(rules_buf), "%s/../../experiments/profiler/components.conf", self);
		rules_path = rules_buf;
	}
	read_rules(rules_path);

	f = fopen(ks_path, "r");
	if (!f)
		die("cannot read %s", ks_path);
	while (fgets(line, sizeof(line), f)) {
		char addr[32], type[8], name[512], mod[256] = "";
		unsigned long long a;
		int n = sscanf(line, "%31s %7s %511s %255s", addr, type, name, mod);

		if (n < 3 || !strchr("TtWwi", type[0]) || type[1])
			continue;
		a = strtoull(addr, NULL, 16);
		if (a < 0xffff800000000000ull)
			continue;
		if (n_syms == cap) {
			cap = cap ? cap * 2 : 65536;
			syms = realloc(syms, cap * sizeof(*syms));
			if (!syms)
				die("%s", "out of memory");
		}
		syms[n_syms].addr = a;
		syms[n_syms].name = strdup(name);
		if (mod[0] == '[') {
			size_t l = strlen(mod);

			if (l && mod[l - 1] == ']')
				mod[l - 1] = 0;
			memmove(mod, mod + 1, strlen(mod));
		}
		syms[n_syms].mod = strdup(mod);
		n_syms++;
	}
	fclose(f);
	if (!n_syms)
		die("%s: no kernel text symbols with addresses (not root?)", ks_path);
	qsort(syms, n_syms, sizeof(*syms), cmp_sym);

	snprintf(tmp, sizeof(tmp), "%s.tmp", out_path);
	o = fopen(tmp, "w");
	if (!o)
		die("cannot write %s", tmp);
	fprintf(o, "# tbnic: %s, rules %s\n", ks_path, rules_path);
	for (i = 0; i < n_syms; i++) {
		const char *pk, *comp;
		uint64_t end, gap;
		int nic;

		/* Symbols at the same address: the last in sort order names it (attribute.py). */
		if (i + 1 < n_syms && syms[i + 1].addr == syms[i].addr)
			continue;
		pk = point_kind(syms[i].name, syms[i].mod);
		if (pk) {
			fprintf(o, "%s %llx %s\n", pk, (unsigned long long)syms[i].addr, syms[i].name);
			n_points++;
		}
		comp = kernel_comp(syms[i].name, syms[i].mod);
		nic = !strcmp(comp, "nic");
		if (!nic && !is_shared(comp))
			continue;
		gap = i + 1 < n_syms ? KSYM_MAX_GAP : KSYM_LAST_GAP;
		end = i + 1 < n_syms ? syms[i + 1].addr : syms[i].addr + gap;
		if (end - syms[i].addr > gap)
			end = syms[i].addr + gap;
		add_range(nic ? &nic_set : &help_set, syms[i].addr, end);
		if (nic)
			n_nic_syms++;
		else
			n_help_syms++;
	}
	/* aliases at one address: a point under any of their names */
	for (i = 0; i + 1 < n_syms; i++) {
		const char *pk;

		if (syms[i + 1].addr != syms[i].addr)
			continue;
		pk = point_kind(syms[i].name, syms[i].mod);
		if (pk) {
			fprintf(o, "%s %llx %s\n", pk, (unsigned long long)syms[i].addr, syms[i].name);
			n_points++;
		}
	}
	for (i = 0; i < (size_t)n_pids; i++) {
		char mp[64];

		snprintf(mp, sizeof(mp), "/proc/%ld/maps", pids[i]);
		f = fopen(mp, "r");
		if (!f)
			die("cannot read %s", mp);
		while (fgets(line, sizeof(line), f)) {
			unsigned long long s, e;
			char perm[8], path[512] = "";

			if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %511s", &s, &e, perm, path) < 3)
				continue;
			if (!strchr(perm, 'x') || path[0] != '/')
				continue;
			if (!strcmp(user_comp(path), "nic")) {
				add_range(&nic_set, s, e);
				fprintf(o, "# user nic: %llx-%llx %s\n", s, e, path);
			} else if (is_shared(user_comp(path))) {
				add_range(&help_set, s, e);
				fprintf(o, "# user shared: %llx-%llx %s\n", s, e, path);
			}
		}
		fclose(f);
	}
	write_set(o, &nic_set, 'N');
	write_set(o, &help_set, 'H');
	if (fclose(o) || rename(tmp, out_path))
		die("cannot write %s", out_path);
	fprintf(stderr, "tbnic: %zu NIC symbols, %zu shared-helper symbols, %zu entry points -> %s\n",
		n_nic_syms, n_help_syms, n_points, out_path);
	if (conf)
		tbmark_conf();
	return 0;
}
