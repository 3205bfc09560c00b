// SPDX-License-Identifier: GPL-2.0-or-later
/* test_modes.c - the shared mode names (common/modes.c): every name parses
 * back to its mode, each implementation refuses by name what it does not
 * offer (with a reason), unknown names and bad combinations are refused. */
#include "trs_common.h"
#include "unit.h"

static int test_names_round_trip(void)
{
	const char *why = NULL;
	int m;

	for (m = 0; m < TRS_MR_MAX; m++) {
		int u = trs_mr_mode_parse(trs_mr_mode_name(m), TRS_IMPL_USER, &why);
		int k = trs_mr_mode_parse(trs_mr_mode_name(m), TRS_IMPL_KERNEL, &why);

		/* each mode is offered by at least one implementation */
		UCHECK(u == m || k == m);
		UCHECK(u == m || u == -EOPNOTSUPP);
		UCHECK(k == m || k == -EOPNOTSUPP);
	}
	for (m = 0; m < TRS_INVAL_MAX; m++)
		UCHECK_EQ(trs_inval_mode_parse(trs_inval_mode_name(m), &why), m);
	UCHECK(!strcmp(trs_mr_mode_name(TRS_MR_MAX), "unknown"));
	UCHECK(!strcmp(trs_inval_mode_name(-1), "unknown"));
	return 0;
}

static int test_offered(void)
{
	const char *why = NULL;

	UCHECK_EQ(trs_mr_mode_parse("mw", TRS_IMPL_USER, &why), TRS_MR_MW);
	UCHECK_EQ(trs_mr_mode_parse("reg", TRS_IMPL_USER, &why), TRS_MR_REG);
	UCHECK_EQ(trs_mr_mode_parse("bounce", TRS_IMPL_USER, &why), TRS_MR_BOUNCE);
	UCHECK_EQ(trs_mr_mode_parse("global", TRS_IMPL_USER, &why), TRS_MR_GLOBAL);
	UCHECK_EQ(trs_mr_mode_parse("frwr", TRS_IMPL_KERNEL, &why), TRS_MR_FRWR);
	UCHECK_EQ(trs_mr_mode_parse("bounce\n", TRS_IMPL_KERNEL, &why), TRS_MR_BOUNCE);
	/* a module parameter written with echo keeps its newline */
	UCHECK_EQ(trs_mr_mode_parse("global\n", TRS_IMPL_KERNEL, &why), TRS_MR_GLOBAL);
	UCHECK_EQ(trs_inval_mode_parse("local\n", &why), TRS_INVAL_LOCAL);
	return 0;
}

static int test_refused_by_name(void)
{
	const char *why = NULL;

	UCHECK_EQ(trs_mr_mode_parse("frwr", TRS_IMPL_USER, &why), -EOPNOTSUPP);
	UCHECK(why && strstr(why, "frwr"));
	why = NULL;
	UCHECK_EQ(trs_mr_mode_parse("mw", TRS_IMPL_KERNEL, &why), -EOPNOTSUPP);
	UCHECK(why && strstr(why, "memory windows"));
	UCHECK_EQ(trs_mr_mode_parse("reg", TRS_IMPL_KERNEL, &why), -EOPNOTSUPP);
	return 0;
}

static int test_unknown(void)
{
	const char *why = NULL;

	UCHECK_EQ(trs_mr_mode_parse("MW", TRS_IMPL_USER, &why), -EINVAL);
	UCHECK(why && strstr(why, "mw, reg, bounce or global"));
	UCHECK_EQ(trs_mr_mode_parse("mw ", TRS_IMPL_USER, &why), -EINVAL);
	UCHECK_EQ(trs_mr_mode_parse("mw\n\n", TRS_IMPL_USER, &why), -EINVAL);
	UCHECK_EQ(trs_mr_mode_parse("", TRS_IMPL_USER, &why), -EINVAL);
	UCHECK_EQ(trs_mr_mode_parse("m", TRS_IMPL_USER, &why), -EINVAL);
	UCHECK_EQ(trs_mr_mode_parse("mwx", TRS_IMPL_USER, &why), -EINVAL);
	UCHECK_EQ(trs_mr_mode_parse(NULL, TRS_IMPL_KERNEL, &why), -EINVAL);
	UCHECK(why && strstr(why, "frwr, bounce or global"));
	UCHECK_EQ(trs_inval_mode_parse("remot", &why), -EINVAL);
	UCHECK_EQ(trs_inval_mode_parse(NULL, &why), -EINVAL);
	return 0;
}

static int test_combinations(void)
{
	const char *why = NULL;
	int i;

	for (i = 0; i < TRS_INVAL_MAX; i++) {
		UCHECK_EQ(trs_modes_check(TRS_IMPL_USER, TRS_MR_MW, i, &why), 0);
		UCHECK_EQ(trs_modes_check(TRS_IMPL_USER, TRS_MR_BOUNCE, i, &why), 0);
		UCHECK_EQ(trs_modes_check(TRS_IMPL_USER, TRS_MR_GLOBAL, i, &why), 0);
		UCHECK_EQ(trs_modes_check(TRS_IMPL_KERNEL, TRS_MR_FRWR, i, &why), 0);
		UCHECK_EQ(trs_modes_check(TRS_IMPL_KERNEL, TRS_MR_GLOBAL, i, &why), 0);
		UCHECK_EQ(trs_modes_check(TRS_IMPL_KERNEL, TRS_MR_BOUNCE, i, &why), 0);
		UCHECK_EQ(trs_modes_check(TRS_IMPL_KERNEL, TRS_MR_MW, i, &why),
			  -EOPNOTSUPP);
		UCHECK_EQ(trs_modes_check(TRS_IMPL_USER, TRS_MR_FRWR, i, &why),
			  -EOPNOTSUPP);
	}
	UCHECK_EQ(trs_modes_check(TRS_IMPL_USER, TRS_MR_REG, TRS_INVAL_LOCAL, &why), 0);
	UCHECK_EQ(trs_modes_check(TRS_IMPL_USER, TRS_MR_REG, TRS_INVAL_REMOTE, &why),
		  -EINVAL);
	UCHECK(why && strstr(why, "inval_mode local"));
	UCHECK_EQ(trs_modes_check(TRS_IMPL_USER, TRS_MR_REG, TRS_INVAL_NONE, &why),
		  -EINVAL);
	UCHECK_EQ(trs_modes_check(TRS_IMPL_USER, TRS_MR_MAX, 0, &why), -EINVAL);
	UCHECK_EQ(trs_modes_check(TRS_IMPL_USER, 0, TRS_INVAL_MAX, &why), -EINVAL);
	UCHECK_EQ(trs_modes_check(2, 0, 0, &why), -EINVAL);
	return 0;
}

static int test_chunk_modes(void)
{
	const char *why = NULL;

	UCHECK_EQ(trs_chunk_mode_parse("static", TRS_IMPL_USER, &why), TRS_CHUNK_STATIC);
	UCHECK_EQ(trs_chunk_mode_parse("rekey", TRS_IMPL_USER, &why), TRS_CHUNK_REKEY);
	UCHECK_EQ(trs_chunk_mode_parse("static\n", TRS_IMPL_KERNEL, &why), TRS_CHUNK_STATIC);
	UCHECK_EQ(trs_chunk_mode_parse("rekey\n", TRS_IMPL_KERNEL, &why), TRS_CHUNK_REKEY);
	UCHECK_EQ(trs_chunk_mode_parse("Rekey", TRS_IMPL_KERNEL, &why), -EINVAL);
	UCHECK_EQ(trs_chunk_mode_parse("rekeyed", TRS_IMPL_USER, &why), -EINVAL);
	UCHECK(why && strstr(why, "static or rekey"));
	UCHECK(!strcmp(trs_chunk_mode_name(TRS_CHUNK_REKEY), "rekey"));
	UCHECK(!strcmp(trs_chunk_mode_name(TRS_CHUNK_MAX), "unknown"));
	return 0;
}

static int test_write_modes(void)
{
	const char *why = NULL;

	UCHECK_EQ(trs_write_mode_parse("push", TRS_IMPL_USER, &why), TRS_WRITE_PUSH);
	UCHECK_EQ(trs_write_mode_parse("pull", TRS_IMPL_USER, &why), TRS_WRITE_PULL);
	UCHECK_EQ(trs_write_mode_parse("push\n", TRS_IMPL_KERNEL, &why), TRS_WRITE_PUSH);
	UCHECK_EQ(trs_write_mode_parse("pull\n", TRS_IMPL_KERNEL, &why), TRS_WRITE_PULL);
	UCHECK_EQ(trs_write_mode_parse("pulled", TRS_IMPL_USER, &why), -EINVAL);
	UCHECK(why && strstr(why, "push or pull"));
	UCHECK(!strcmp(trs_write_mode_name(TRS_WRITE_PULL), "pull"));
	UCHECK(!strcmp(trs_write_mode_name(TRS_WRITE_MAX), "unknown"));
	return 0;
}

int main(void)
{
	URUN(test_write_modes);
	URUN(test_chunk_modes);
	URUN(test_names_round_trip);
	URUN(test_offered);
	URUN(test_refused_by_name);
	URUN(test_unknown);
	URUN(test_combinations);
	return unit_failed ? 1 : 0;
}
