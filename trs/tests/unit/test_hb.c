// SPDX-License-Identifier: GPL-2.0-or-later
/* test_hb.c - heartbeat state machine (common/hb.c), times in microseconds. */
#include "trs_common.h"
#include "unit.h"

#define MS	1000ULL

/* The first heartbeat is due at start, then one per interval, seq + 1. */
static int hb_send_schedule(void)
{
	struct trs_hb hb = { 0 };
	__u16 seq = 0;

	trs_hb_start(&hb, 500, 3, 1000 * MS);
	UCHECK(trs_hb_due(&hb, 1000 * MS, &seq));
	UCHECK_EQ(seq, 1);
	UCHECK(!trs_hb_due(&hb, 1000 * MS, &seq));
	UCHECK(!trs_hb_due(&hb, 1499 * MS, &seq));
	UCHECK(trs_hb_due(&hb, 1500 * MS, &seq));
	UCHECK_EQ(seq, 2);
	/* late tick: the next one is an interval after the late send */
	UCHECK(trs_hb_due(&hb, 2700 * MS, &seq));
	UCHECK_EQ(seq, 3);
	UCHECK(!trs_hb_due(&hb, 3199 * MS, &seq));
	UCHECK(trs_hb_due(&hb, 3200 * MS, &seq));
	UCHECK_EQ(seq, 4);
	return 0;
}

/* The sequence is 16 bits (the immediate's id) and wraps. */
static int hb_seq_wraps(void)
{
	struct trs_hb hb = { 0 };
	__u64 rtt = 0;
	__u16 seq = 0;

	trs_hb_start(&hb, 10, 3, 0);
	hb.seq = 0xffff;
	UCHECK(trs_hb_due(&hb, 0, &seq));
	UCHECK_EQ(seq, 0);
	UCHECK_EQ(trs_hb_on_ack(&hb, 0, 5, &rtt), 0);
	UCHECK_EQ(rtt, 5);
	return 0;
}

/* Timeout after interval * missed_max of silence, strictly more. */
static int hb_timeout(void)
{
	struct trs_hb hb = { 0 };

	trs_hb_start(&hb, 500, 3, 10000 * MS);
	UCHECK_EQ(trs_hb_timeout_us(&hb), 1500 * MS);
	UCHECK(!trs_hb_timed_out(&hb, 11500 * MS));
	UCHECK(trs_hb_timed_out(&hb, 11500 * MS + 1));
	UCHECK_EQ(trs_hb_idle_us(&hb, 11200 * MS), 1200 * MS);
	return 0;
}

/* Any receive is life: it restarts the silence window. */
static int hb_rx_keeps_alive(void)
{
	struct trs_hb hb = { 0 };
	__u64 t;

	trs_hb_start(&hb, 500, 3, 0);
	for (t = 1000 * MS; t < 10000 * MS; t += 1000 * MS) {
		UCHECK(!trs_hb_timed_out(&hb, t));
		trs_hb_on_rx(&hb, t);
	}
	UCHECK(!trs_hb_timed_out(&hb, 10500 * MS));
	UCHECK(trs_hb_timed_out(&hb, 10600 * MS));
	return 0;
}

/* A clock read taken before the last receive is "no time passed", not an
 * unsigned wrap into a huge silence; an older receive never moves
 * last_rx back. */
static int hb_time_before_last_rx(void)
{
	struct trs_hb hb = { 0 };

	trs_hb_start(&hb, 500, 3, 5000 * MS);
	trs_hb_on_rx(&hb, 6000 * MS);
	UCHECK(!trs_hb_timed_out(&hb, 5999 * MS));
	UCHECK_EQ(trs_hb_idle_us(&hb, 5000 * MS), 0);
	trs_hb_on_rx(&hb, 5500 * MS);
	UCHECK_EQ(hb.last_rx_us, 6000 * MS);
	return 0;
}

/* RTT of the outstanding heartbeat only; stale and duplicate acks ignored. */
static int hb_ack_rtt(void)
{
	struct trs_hb hb = { 0 };
	__u64 rtt = 77;
	__u16 seq = 0, old;

	trs_hb_start(&hb, 500, 3, 0);
	UCHECK_EQ(trs_hb_on_ack(&hb, 0, 10, &rtt), -ENOENT);	/* none sent */
	UCHECK(trs_hb_due(&hb, 100, &seq));
	old = seq;
	UCHECK(trs_hb_due(&hb, 100 + 500 * MS, &seq));
	UCHECK_EQ(trs_hb_on_ack(&hb, old, 500 * MS + 200, &rtt), -ENOENT);
	UCHECK_EQ(rtt, 77);
	UCHECK_EQ(trs_hb_on_ack(&hb, seq, 500 * MS + 350, &rtt), 0);
	UCHECK_EQ(rtt, 250);
	UCHECK_EQ(trs_hb_on_ack(&hb, seq, 500 * MS + 400, &rtt), -ENOENT);
	UCHECK_EQ(rtt, 250);
	return 0;
}

/* A restart (reconnect) is alive at once and sends at once; the sequence
 * goes on, so an ack of a heartbeat of the old connection is stale. */
static int hb_restart(void)
{
	struct trs_hb hb = { 0 };
	__u64 rtt;
	__u16 seq = 0, old;

	trs_hb_start(&hb, 500, 3, 0);
	UCHECK(trs_hb_due(&hb, 0, &seq));
	old = seq;
	trs_hb_start(&hb, 500, 3, 60000 * MS);
	UCHECK(!trs_hb_timed_out(&hb, 61000 * MS));
	UCHECK_EQ(trs_hb_on_ack(&hb, old, 60001 * MS, &rtt), -ENOENT);
	UCHECK(trs_hb_due(&hb, 60000 * MS, &seq));
	UCHECK(seq != old);
	return 0;
}

int main(void)
{
	URUN(hb_send_schedule);
	URUN(hb_seq_wraps);
	URUN(hb_timeout);
	URUN(hb_rx_keeps_alive);
	URUN(hb_time_before_last_rx);
	URUN(hb_ack_rtt);
	URUN(hb_restart);
	return unit_failed ? 1 : 0;
}
