// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ibtrs-test-hold.c - a test-only module (kmod/tests/vm/049): it holds the
 * CPU for hold_us right after each send that ibtrs_srv_resp() posts, that
 * is between an answer's post and the chunk's ACTIVE -> FREE, so that the
 * client can have the answer and send the chunk's next request while the
 * server still has the chunk ACTIVE (the window fixed in 9e2cbb2, which
 * only the debug kernel's slowness had opened).
 *
 * Two kretprobes:
 *  - on ibtrs_srv_resp (exported by ibtrs_server): its entry notes, per
 *    CPU, the task answering (task context only: a hold in softirq would
 *    also hold the send, which runs in the tasklet after it), its return
 *    clears it;
 *  - on the RDMA driver's post_send (rxe_post_send): its return handler
 *    busy-waits when the current task is the one answering on this CPU.
 * The handlers run with preemption off and interrupts on: the send's
 * tasklet runs on the first interrupt's exit during the hold, so the
 * answer leaves and the client can reuse the chunk. Only the answers
 * posted on hold_cpu are held: the other CPUs stay free to send the
 * chunk's next request meanwhile.
 *
 * Never load it outside a test guest: it slows every answer by hold_us.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/sched.h>

#define ITH_HOLD_MAX_US	100000

static char *post_symbol = "rxe_post_send";
module_param(post_symbol, charp, 0444);
MODULE_PARM_DESC(post_symbol, "the RDMA driver's post_send function (default rxe_post_send)");

static unsigned int hold_us = 20000;
module_param(hold_us, uint, 0644);
MODULE_PARM_DESC(hold_us, "microseconds each answer's post is held (default 20000, at most 100000)");

static int hold_cpu;
module_param(hold_cpu, int, 0644);
MODULE_PARM_DESC(hold_cpu, "hold only the answers posted on this CPU (default 0; -1: on every CPU)");

static atomic_long_t ith_held = ATOMIC_LONG_INIT(0);

static int ith_held_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&ith_held));
}

static int ith_held_set(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static const struct kernel_param_ops ith_held_ops = {
	.set = ith_held_set,
	.get = ith_held_get,
};

module_param_cb(held, &ith_held_ops, NULL, 0444);
MODULE_PARM_DESC(held, "posts held so far (read only)");

static DEFINE_PER_CPU(struct task_struct *, ith_answering);

static int ith_resp_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if (!in_task())
		return 1;	/* no return handler for this call */
	this_cpu_write(ith_answering, current);
	return 0;
}

static int ith_resp_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	this_cpu_write(ith_answering, NULL);
	return 0;
}

static int ith_post_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	unsigned int us = min_t(unsigned int, READ_ONCE(hold_us),
				ITH_HOLD_MAX_US);

	if (!in_task() || this_cpu_read(ith_answering) != current)
		return 0;
	if (READ_ONCE(hold_cpu) >= 0 && smp_processor_id() != READ_ONCE(hold_cpu))
		return 0;
	atomic_long_inc(&ith_held);
	for (; us >= 1000; us -= 1000)
		mdelay(1);
	udelay(us);
	return 0;
}

static struct kretprobe ith_resp_probe = {
	.kp.symbol_name	= "ibtrs_srv_resp",
	.entry_handler	= ith_resp_entry,
	.handler	= ith_resp_ret,
	.maxactive	= 64,
};

static struct kretprobe ith_post_probe = {
	.handler	= ith_post_ret,
	.maxactive	= 128,
};

static int __init ith_init(void)
{
	int err;

	err = register_kretprobe(&ith_resp_probe);
	if (err) {
		pr_err("cannot probe ibtrs_srv_resp (is ibtrs_server loaded?): %d\n",
		       err);
		return err;
	}
	ith_post_probe.kp.symbol_name = post_symbol;
	err = register_kretprobe(&ith_post_probe);
	if (err) {
		pr_err("cannot probe %s: %d\n", post_symbol, err);
		goto unregister_resp;
	}
	pr_info("holding each answer's post of ibtrs_server for %u us\n",
		min_t(unsigned int, hold_us, ITH_HOLD_MAX_US));
	return 0;

unregister_resp:
	unregister_kretprobe(&ith_resp_probe);
	return err;
}

static void __exit ith_exit(void)
{
	unregister_kretprobe(&ith_post_probe);
	unregister_kretprobe(&ith_resp_probe);
	pr_info("held %ld posts; %d + %d probe hits missed\n",
		atomic_long_read(&ith_held), ith_resp_probe.nmissed,
		ith_post_probe.nmissed);
}

module_init(ith_init);
module_exit(ith_exit);
MODULE_DESCRIPTION("IBTRS test only: holds the kernel server between an answer's post and its chunk's release");
MODULE_LICENSE("GPL");
