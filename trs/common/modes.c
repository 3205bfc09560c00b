// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * modes.c - the names of the transport's registration, invalidation,
 * chunk and write modes, one table for the kernel modules, the library, the daemon and the
 * fio engine; and what each implementation does not offer, with the reason,
 * so that a mode one side cannot do is refused by its name, never taken for
 * an unknown word or silently replaced.
 */
#include "trs_common.h"

static const char *const trs_mr_names[TRS_MR_MAX] = {
	[TRS_MR_MW] = "mw",
	[TRS_MR_GLOBAL] = "global",
	[TRS_MR_REG] = "reg",
	[TRS_MR_BOUNCE] = "bounce",
	[TRS_MR_FRWR] = "frwr",
};

static const char *const trs_inval_names[TRS_INVAL_MAX] = {
	[TRS_INVAL_REMOTE] = "remote",
	[TRS_INVAL_LOCAL] = "local",
	[TRS_INVAL_NONE] = "none",
};

static const char *const trs_chunk_names[TRS_CHUNK_MAX] = {
	[TRS_CHUNK_STATIC] = "static",
	[TRS_CHUNK_REKEY] = "rekey",
};

static const char *const trs_write_names[TRS_WRITE_MAX] = {
	[TRS_WRITE_PUSH] = "push",
	[TRS_WRITE_PULL] = "pull",
};

/* Why an implementation does not offer a mode; NULL where it does. */
static const char *const trs_mr_refused[2][TRS_MR_MAX] = {
	[TRS_IMPL_USER] = {
		[TRS_MR_FRWR] = "frwr is a kernel verb (IB_WR_REG_MR); libibverbs "
			"offers memory windows (mw) and per-IO registration (reg)",
	},
	[TRS_IMPL_KERNEL] = {
		[TRS_MR_MW] = "Linux 6.1 offers memory windows to userspace only "
			"(no ib_alloc_mw for kernel ULPs); the kernel's per-IO key is frwr",
		[TRS_MR_REG] = "kernel ULPs register a buffer per IO by fast "
			"registration, which is frwr",
	},
};

/* @s equals @name, allowing one trailing newline (module parameters). */
static int trs_mode_eq(const char *s, const char *name)
{
	while (*name && *s == *name) {
		s++;
		name++;
	}
	return !*name && (!*s || (s[0] == '\n' && !s[1]));
}

const char *trs_mr_mode_name(int m)
{
	return m >= 0 && m < TRS_MR_MAX ? trs_mr_names[m] : "unknown";
}

const char *trs_inval_mode_name(int m)
{
	return m >= 0 && m < TRS_INVAL_MAX ? trs_inval_names[m] : "unknown";
}

int trs_mr_mode_parse(const char *s, int impl, const char **why)
{
	int m;

	for (m = 0; s && m < TRS_MR_MAX; m++) {
		if (!trs_mode_eq(s, trs_mr_names[m]))
			continue;
		if (impl >= 0 && impl <= TRS_IMPL_KERNEL &&
		    trs_mr_refused[impl][m]) {
			*why = trs_mr_refused[impl][m];
			return -EOPNOTSUPP;
		}
		return m;
	}
	*why = impl == TRS_IMPL_KERNEL ? "mr_mode is frwr, bounce or global" :
	       "mr_mode is mw, reg, bounce or global";
	return -EINVAL;
}

int trs_inval_mode_parse(const char *s, const char **why)
{
	int m;

	for (m = 0; s && m < TRS_INVAL_MAX; m++)
		if (trs_mode_eq(s, trs_inval_names[m]))
			return m;
	*why = "inval_mode is remote, local or none";
	return -EINVAL;
}

const char *trs_chunk_mode_name(int m)
{
	return m >= 0 && m < TRS_CHUNK_MAX ? trs_chunk_names[m] : "unknown";
}

/*
 * The index of @s in @names (@n of them), or -EINVAL with @unknown; the
 * mode @kernel_no (-1: none) is refused to the kernel (-EOPNOTSUPP with
 * @kernel_why).
 */
static int trs_mode_parse(const char *s, const char *const *names, int n,
			  int impl, int kernel_no, const char *kernel_why,
			  const char *unknown, const char **why)
{
	int m;

	for (m = 0; s && m < n; m++) {
		if (!trs_mode_eq(s, names[m]))
			continue;
		if (m == kernel_no && impl == TRS_IMPL_KERNEL) {
			*why = kernel_why;
			return -EOPNOTSUPP;
		}
		return m;
	}
	*why = unknown;
	return -EINVAL;
}

int trs_chunk_mode_parse(const char *s, int impl, const char **why)
{
	/* both servers re-key (windows in the library, FRWR in the kernel) */
	return trs_mode_parse(s, trs_chunk_names, TRS_CHUNK_MAX, impl, -1, NULL,
			      "chunk_mode is static or rekey", why);
}

const char *trs_write_mode_name(int m)
{
	return m >= 0 && m < TRS_WRITE_MAX ? trs_write_names[m] : "unknown";
}

int trs_write_mode_parse(const char *s, int impl, const char **why)
{
	/* both implementations push and pull */
	return trs_mode_parse(s, trs_write_names, TRS_WRITE_MAX, impl, -1, NULL,
			      "write_mode is push or pull", why);
}

int trs_modes_check(int impl, int mr, int inval, const char **why)
{
	if (impl < 0 || impl > TRS_IMPL_KERNEL || mr < 0 || mr >= TRS_MR_MAX ||
	    inval < 0 || inval >= TRS_INVAL_MAX) {
		*why = "mode out of range";
		return -EINVAL;
	}
	if (trs_mr_refused[impl][mr]) {
		*why = trs_mr_refused[impl][mr];
		return -EOPNOTSUPP;
	}
	/*
	 * A buffer's own registration can be neither invalidated by the
	 * server (SEND_WITH_INV reaches windows and fast-registered MRs
	 * only) nor left behind: its exposure ends when the client drops it.
	 */
	if (mr == TRS_MR_REG && inval != TRS_INVAL_LOCAL) {
		*why = "mr_mode reg ends a read buffer's exposure by deregistering "
		       "it before the IO completes: it needs inval_mode local";
		return -EINVAL;
	}
	return 0;
}
