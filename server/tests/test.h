/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test.h - minimal host test harness (docs/CONVENTIONS.md): one line per
 * case, "PASS: name" / "FAIL: name: reason" / "SKIP: name: reason", and a
 * non-zero exit status if any case failed.
 */
#ifndef IBNBD_TEST_H
#define IBNBD_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_failed, t_cur_failed;
static const char *t_cur;

/* Check inside a case; on failure print one FAIL line and leave the case. */
#define T_CHECK(cond) do {						\
	if (!(cond)) {							\
		printf("FAIL: %s: %s:%d: %s\n", t_cur, __FILE__,	\
		       __LINE__, #cond);				\
		t_cur_failed = 1;					\
		return;							\
	}								\
} while (0)

#define T_EQ(a, b) do {							\
	long long _a = (long long)(a), _b = (long long)(b);		\
	if (_a != _b) {							\
		printf("FAIL: %s: %s:%d: %s == %lld, expected %s == %lld\n", \
		       t_cur, __FILE__, __LINE__, #a, _a, #b, _b);	\
		t_cur_failed = 1;					\
		return;							\
	}								\
} while (0)

#define T_SKIP(why) do {						\
	printf("SKIP: %s: %s\n", t_cur, why);				\
	t_cur_failed = -1;						\
	return;								\
} while (0)

static inline void t_run(const char *name, void (*fn)(void))
{
	t_cur = name;
	t_cur_failed = 0;
	fn();
	if (!t_cur_failed)
		printf("PASS: %s\n", name);
	else if (t_cur_failed > 0)
		t_failed++;
	fflush(stdout);
}

#define T_RUN(fn) t_run(#fn, fn)
#define T_EXIT() return t_failed ? 1 : 0

#endif
