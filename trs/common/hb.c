// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hb.c - heartbeat and liveness of a path: when to send a heartbeat, when
 * the peer is dead, round trip of an acknowledged heartbeat. Pure: the
 * caller reads the clock and posts the messages.
 */
#include "trs_common.h"

void trs_hb_start(struct trs_hb *hb, __u32 interval_ms, __u32 missed_max,
		  __u64 now)
{
	hb->interval_us = (__u64)interval_ms * 1000;
	hb->missed_max = missed_max;
	hb->last_rx_us = now;
	hb->next_send_us = now;
	hb->sent_at_us = 0;
	hb->ack_pending = false;
}

void trs_hb_on_rx(struct trs_hb *hb, __u64 now)
{
	if (now > hb->last_rx_us)
		hb->last_rx_us = now;
}

__u64 trs_hb_idle_us(const struct trs_hb *hb, __u64 now)
{
	return now > hb->last_rx_us ? now - hb->last_rx_us : 0;
}

__u64 trs_hb_timeout_us(const struct trs_hb *hb)
{
	return hb->interval_us * hb->missed_max;
}

bool trs_hb_timed_out(const struct trs_hb *hb, __u64 now)
{
	return trs_hb_idle_us(hb, now) > trs_hb_timeout_us(hb);
}

bool trs_hb_due(struct trs_hb *hb, __u64 now, __u16 *seq)
{
	if (now < hb->next_send_us)
		return false;
	hb->seq++;
	hb->sent_at_us = now;
	hb->next_send_us = now + hb->interval_us;
	hb->ack_pending = true;
	*seq = hb->seq;
	return true;
}

int trs_hb_on_ack(struct trs_hb *hb, __u16 seq, __u64 now, __u64 *rtt_us)
{
	if (!hb->ack_pending || seq != hb->seq)
		return -ENOENT;
	hb->ack_pending = false;
	*rtt_us = now > hb->sent_at_us ? now - hb->sent_at_us : 0;
	return 0;
}
