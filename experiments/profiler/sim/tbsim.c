// SPDX-License-Identifier: GPL-2.0
/*
 * tbsim.c - runs the profiler plugin (../tbprof.c, compiled in) on the host
 * over scripted translation blocks, with a stand-in for QEMU's plugin API:
 * translation on first execution (and again after qemu_plugin_reset),
 * inline adds, TB and instruction callbacks. For the caller-attribution
 * test (tests/host/profiler-attribute.sh).
 *
 * Usage: tbsim SCRIPT PLUGIN-ARG...      (out=RAW nic=RANGES [caller=0])
 * SCRIPT lines:
 *   tb NAME ADDR INSN...   a block at ADDR (hex); INSN is nop (90), call
 *                          (e8 rel32), icall (ff d0), ret (c3), iret (48 cf),
 *                          sysret (48 0f 07), jmp (eb 00), start, stop, conf
 *                          (the tbmark.h markers)
 *   x NAME [COUNT]         execute the block COUNT times (default 1)
 *   # ...                  comment
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin.h"

#include "../tbprof.c"

#define MAX_INSNS 32
#define MAX_TBS 1024

struct qemu_plugin_insn {
	uint8_t data[16];
	size_t size;
	uint64_t vaddr;
	qemu_plugin_vcpu_udata_cb_t cb;
	void *udata;
};

struct qemu_plugin_tb {
	char name[64];
	uint64_t vaddr;
	size_t n;
	struct qemu_plugin_insn insn[MAX_INSNS];
	int translated;
	int n_inline, n_cb;
	uint64_t *inl_ptr[4];
	uint64_t inl_imm[4];
	qemu_plugin_vcpu_udata_cb_t cb[2];
	void *cb_udata[2];
};

static struct qemu_plugin_tb tbs[MAX_TBS];
static int n_tbs;
static qemu_plugin_vcpu_tb_trans_cb_t trans_cb;
static qemu_plugin_udata_cb_t exit_cb;
static void *exit_udata;

void qemu_plugin_reset(qemu_plugin_id_t id, qemu_plugin_simple_cb_t cb)
{
	int i;

	/* tb_flush; every callback unregistered; then cb */
	for (i = 0; i < n_tbs; i++)
		tbs[i].translated = 0;
	trans_cb = NULL;
	exit_cb = NULL;
	cb(id);
}

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb)
{
	(void)id;
	trans_cb = cb;
}

void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags, void *userdata)
{
	(void)flags;
	if (tb->n_cb == 2)
		abort();
	tb->cb[tb->n_cb] = cb;
	tb->cb_udata[tb->n_cb++] = userdata;
}

void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
					      void *ptr, uint64_t imm)
{
	(void)op;
	if (tb->n_inline == 4)
		abort();
	tb->inl_ptr[tb->n_inline] = ptr;
	tb->inl_imm[tb->n_inline++] = imm;
}

void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags, void *userdata)
{
	(void)flags;
	insn->cb = cb;
	insn->udata = userdata;
}

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb) { return tb->n; }
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb) { return tb->vaddr; }
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx)
{
	return (struct qemu_plugin_insn *)&tb->insn[idx];
}
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn) { return insn->data; }
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn) { return insn->size; }
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn) { return insn->vaddr; }

void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata)
{
	(void)id;
	exit_cb = cb;
	exit_udata = userdata;
}

static void put_marker(struct qemu_plugin_insn *in, uint32_t imm)
{
	in->data[0] = TBMARK_OPCODE0;
	in->data[1] = TBMARK_OPCODE1;
	in->data[2] = TBMARK_MODRM;
	memcpy(in->data + 3, &imm, 4);
	in->size = TBMARK_LEN;
}

static int encode(struct qemu_plugin_insn *in, const char *k)
{
	static const struct { const char *name; size_t size; uint8_t b[4]; } ops[] = {
		{ "nop", 1, { 0x90 } }, { "call", 5, { 0xe8 } }, { "icall", 2, { 0xff, 0xd0 } },
		{ "ret", 1, { 0xc3 } }, { "iret", 2, { 0x48, 0xcf } },
		{ "sysret", 3, { 0x48, 0x0f, 0x07 } }, { "jmp", 2, { 0xeb, 0x00 } },
	};
	size_t i;

	memset(in->data, 0, sizeof(in->data));
	if (!strcmp(k, "start")) { put_marker(in, TBMARK_START); return 0; }
	if (!strcmp(k, "stop")) { put_marker(in, TBMARK_STOP); return 0; }
	if (!strcmp(k, "conf")) { put_marker(in, TBMARK_CONF); return 0; }
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(k, ops[i].name)) {
			memcpy(in->data, ops[i].b, 4);
			in->size = ops[i].size;
			return 0;
		}
	return -1;
}

static void exec_tb(struct qemu_plugin_tb *tb)
{
	size_t i;
	int j;

	if (!tb->translated) {
		tb->n_inline = tb->n_cb = 0;
		for (i = 0; i < tb->n; i++)
			tb->insn[i].cb = NULL;
		if (trans_cb)
			trans_cb(plugin_id, tb);
		tb->translated = 1;
	}
	for (j = 0; j < tb->n_inline; j++)
		*tb->inl_ptr[j] += tb->inl_imm[j];
	for (j = 0; j < tb->n_cb; j++)
		tb->cb[j](0, tb->cb_udata[j]);
	for (i = 0; i < tb->n; i++)
		if (tb->insn[i].cb)
			tb->insn[i].cb(0, tb->insn[i].udata);
}

int main(int argc, char **argv)
{
	qemu_info_t info = { .target_name = "x86_64", .system_emulation = true };
	char line[1024];
	int lineno = 0;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: tbsim SCRIPT PLUGIN-ARG...\n");
		return 2;
	}
	info.system.smp_vcpus = 1;
	if (qemu_plugin_install(1, &info, argc - 2, argv + 2))
		return 1;
	f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *tok[MAX_INSNS + 3], *s = line;
		int n = 0;

		lineno++;
		if (strchr(line, '#'))
			*strchr(line, '#') = 0;
		while (n < MAX_INSNS + 3 && (tok[n] = strtok(s, " \t\n"))) {
			s = NULL;
			n++;
		}
		if (!n)
			continue;
		if (!strcmp(tok[0], "tb") && n >= 4 && n_tbs < MAX_TBS) {
			struct qemu_plugin_tb *tb = &tbs[n_tbs++];
			uint64_t a = strtoull(tok[2], NULL, 16);
			int i;

			snprintf(tb->name, sizeof(tb->name), "%s", tok[1]);
			tb->vaddr = a;
			tb->n = n - 3;
			for (i = 3; i < n; i++) {
				struct qemu_plugin_insn *in = &tb->insn[i - 3];

				if (encode(in, tok[i])) {
					fprintf(stderr, "%s:%d: unknown insn %s\n", argv[1], lineno, tok[i]);
					return 1;
				}
				in->vaddr = a;
				a += in->size;
			}
		} else if (!strcmp(tok[0], "x") && n >= 2) {
			long count = n > 2 ? strtol(tok[2], NULL, 0) : 1, c;
			int i;

			for (i = 0; i < n_tbs && strcmp(tbs[i].name, tok[1]); i++)
				;
			if (i == n_tbs) {
				fprintf(stderr, "%s:%d: no block %s\n", argv[1], lineno, tok[1]);
				return 1;
			}
			for (c = 0; c < count; c++)
				exec_tb(&tbs[i]);
		} else {
			fprintf(stderr, "%s:%d: bad line\n", argv[1], lineno);
			return 1;
		}
	}
	fclose(f);
	if (exit_cb)
		exit_cb(plugin_id, exit_udata);
	return 0;
}
