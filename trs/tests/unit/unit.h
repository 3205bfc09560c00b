/* SPDX-License-Identifier: GPL-2.0-or-later */
/* unit.h - minimal host test harness: PASS:/FAIL: lines per CONVENTIONS.md. */
#ifndef TRS_UNIT_H
#define TRS_UNIT_H
#include <stdio.h>
#include <string.h>

static int unit_failed;
static char unit_why[256];

/* Inside a test: fail with a formatted reason. */
#define UFAIL(...) do { snprintf(unit_why, sizeof(unit_why), __VA_ARGS__); \
			return -1; } while (0)
#define UCHECK(cond) do { if (!(cond)) UFAIL("%s:%d: %s", __FILE__, __LINE__, \
					   #cond); } while (0)
#define UCHECK_EQ(a, b) do { long long _a = (long long)(a), _b = (long long)(b); \
	if (_a != _b) UFAIL("%s:%d: %s == %lld, expected %lld", __FILE__, \
			    __LINE__, #a, _a, _b); } while (0)

#define URUN(fn) do { unit_why[0] = 0; \
	if (fn() == 0) printf("PASS: %s\n", #fn); \
	else { printf("FAIL: %s: %s\n", #fn, unit_why); unit_failed++; } } while (0)
#define URUN_NAMED(name, expr) do { unit_why[0] = 0; \
	if ((expr) == 0) printf("PASS: %s\n", name); \
	else { printf("FAIL: %s: %s\n", name, unit_why); unit_failed++; } } while (0)
#endif
