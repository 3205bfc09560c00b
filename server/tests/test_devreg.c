// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_devreg.c - access mode arbitration across sessions (rw/ro/migration).
 */
#include <errno.h>

#include "srv.h"
#include "trs/ibnbd_proto.h"
#include "test.h"

static void rw_exclusive(void)
{
	struct srv_dev_reg reg = { 0 };
	struct srv_dev *a, *b, *c;
	const char *why;

	T_EQ(srv_dev_get(&reg, true, 0x800, 0, "/dev/x", IBNBD_ACCESS_RW, &a, &why), 0);
	T_EQ(srv_dev_get(&reg, true, 0x800, 0, "/dev/x", IBNBD_ACCESS_RW, &b, &why), -EBUSY);
	T_CHECK(why && strstr(why, "rw"));
	/* Readers are always welcome. */
	T_EQ(srv_dev_get(&reg, true, 0x800, 0, "/dev/x", IBNBD_ACCESS_RO, &c, &why), 0);
	T_CHECK(a == c);
	T_EQ(a->writers, 1);
	T_EQ(a->openers, 2);
	/* Another device is independent. */
	T_EQ(srv_dev_get(&reg, true, 0x801, 0, "/dev/y", IBNBD_ACCESS_RW, &b, &why), 0);
	T_CHECK(b != a);
	T_EQ(reg.ndevs, 2);
	/* Writer leaves: a new rw opener succeeds. */
	srv_dev_put(&reg, a, IBNBD_ACCESS_RW);
	T_EQ(srv_dev_get(&reg, true, 0x800, 0, "/dev/x", IBNBD_ACCESS_RW, &a, &why), 0);
	srv_dev_put(&reg, a, IBNBD_ACCESS_RW);
	srv_dev_put(&reg, c, IBNBD_ACCESS_RO);
	srv_dev_put(&reg, b, IBNBD_ACCESS_RW);
	T_EQ(reg.ndevs, 0);
	T_CHECK(reg.head == NULL);
}

static void migration_second_writer(void)
{
	struct srv_dev_reg reg = { 0 };
	struct srv_dev *a, *b, *c;
	const char *why;

	T_EQ(srv_dev_get(&reg, false, 5, 77, "f", IBNBD_ACCESS_RW, &a, &why), 0);
	T_EQ(srv_dev_get(&reg, false, 5, 77, "f", IBNBD_ACCESS_MIGRATION, &b, &why), 0);
	T_EQ(srv_dev_get(&reg, false, 5, 77, "f", IBNBD_ACCESS_MIGRATION, &c, &why), -EBUSY);
	T_CHECK(why && strstr(why, "migration"));
	T_EQ(srv_dev_get(&reg, false, 5, 77, "f", IBNBD_ACCESS_RW, &c, &why), -EBUSY);
	/* Same st_dev, other inode: another file. */
	T_EQ(srv_dev_get(&reg, false, 5, 78, "g", IBNBD_ACCESS_RW, &c, &why), 0);
	srv_dev_put(&reg, b, IBNBD_ACCESS_MIGRATION);
	T_EQ(a->writers, 1);
	T_EQ(srv_dev_get(&reg, false, 5, 77, "f", IBNBD_ACCESS_MIGRATION, &b, &why), 0);
	srv_dev_put(&reg, a, IBNBD_ACCESS_RW);
	srv_dev_put(&reg, b, IBNBD_ACCESS_MIGRATION);
	srv_dev_put(&reg, c, IBNBD_ACCESS_RW);
	T_EQ(reg.ndevs, 0);
}

static void bad_mode(void)
{
	struct srv_dev_reg reg = { 0 };
	struct srv_dev *a;
	const char *why;

	T_EQ(srv_dev_get(&reg, true, 1, 0, "x", 9, &a, &why), -EINVAL);
	T_EQ(reg.ndevs, 0);
}

/* A closed writer whose IO is in flight keeps its claim, and says so. */
static void draining_writer(void)
{
	struct srv_dev_reg reg = { 0 };
	struct srv_dev *a, *b;
	const char *why;

	T_EQ(srv_dev_get(&reg, false, 0x801, 42, "/f", IBNBD_ACCESS_RW, &a, &why), 0);
	T_EQ(a->excl_fd, -1);
	T_EQ(srv_dev_claim_excl(a, 0, &why), 0);	/* files: nothing to hold */
	T_EQ(a->excl_fd, -1);
	srv_dev_drain_begin(a, IBNBD_ACCESS_RW);
	T_EQ(srv_dev_get(&reg, false, 0x801, 42, "/f", IBNBD_ACCESS_RW, &b, &why), -EBUSY);
	T_CHECK(why && strstr(why, "in flight"));
	T_EQ(srv_dev_get(&reg, false, 0x801, 42, "/f", IBNBD_ACCESS_RO, &b, &why), 0);
	srv_dev_drain_end(a, IBNBD_ACCESS_RW);
	srv_dev_put(&reg, a, IBNBD_ACCESS_RW);
	T_EQ(srv_dev_get(&reg, false, 0x801, 42, "/f", IBNBD_ACCESS_RW, &a, &why), 0);
	srv_dev_put(&reg, a, IBNBD_ACCESS_RW);
	srv_dev_put(&reg, b, IBNBD_ACCESS_RO);
	T_EQ(reg.ndevs, 0);
}

int main(void)
{
	T_RUN(rw_exclusive);
	T_RUN(migration_second_writer);
	T_RUN(bad_mode);
	T_RUN(draining_writer);
	T_EXIT();
}
