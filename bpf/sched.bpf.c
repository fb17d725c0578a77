// SPDX-License-Identifier: GPL-2.0
/* ===- sched.bpf.c - off-CPU intervals of the traced threads ----------=== */
/* A traced thread that leaves the CPU gets an entry in `sched_sleeping` holding
 * the time, its state and both stacks, taken in its own context at
 * sched_switch. sched_waking, run by whoever wakes it, adds the waker's
 * identity and stacks to the same entry. When the thread is switched back
 * in, the entry becomes one event if the interval is long enough; shorter
 * ones are dropped here so the ring buffer only carries waits that matter.
 * The entry is itself laid out as the event, so emitting it is one copy. */
#define GROUP sched
#define GROUP_ID SYSPGO_GROUP_SCHED
#include "common.bpf.h"
#include "sched.h"


/* Off-CPU intervals shorter than this (ns) are not reported. */
const volatile __u64 offcpu_min_ns = 1000000;

#define TASK_DEAD 0x00000080

/* Off-CPU traced threads by tid. Not preallocated: at ~4 KiB a value, a
 * preallocated table would pin its whole size while few threads sleep. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct sched_offcpu_event);
} sched_sleeping SEC(".maps");

/* Never written: a zeroed value to seed `sched_sleeping` (too big for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sched_offcpu_event);
} sched_blank SEC(".maps");

/* Kernels before 5.14 (commit 2f064a59a11f) call task_struct::__state `state`. */
struct task_struct___pre514 {
	long state;
};

static __always_inline __u32 task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	struct task_struct___pre514 *old = (void *)t;
	return BPF_CORE_READ(old, state);
}

static __always_inline __u32 frames(long bytes)
{
	return bytes > 0 ? bytes / sizeof(__u64) : 0;
}

/* The three-argument form loads on every kernel; prev_state as a fourth
 * argument only exists since 5.18, so the state is read from the task. */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 next_tid = next->pid;
	struct sched_offcpu_event *e = bpf_map_lookup_elem(&sched_sleeping, &next_tid);
	if (e) {
		__u64 dur = now - e->hdr.ts;
		if (dur >= offcpu_min_ns) {
			e->dur = dur;
			__u64 size = __builtin_offsetof(struct sched_offcpu_event, ustack) +
				     (e->ustack_len & 127) * sizeof(__u64);
			e->hdr.size = size;
			output_event(e, size);
		}
		bpf_map_delete_elem(&sched_sleeping, &next_tid);
	}

	__u32 pid = prev->tgid;
	if (!is_target(pid))
		return 0;
	/* A preempted task stays runnable whatever __state says. */
	__u32 state = preempt ? 0 : task_state(prev);
	if (state & TASK_DEAD) /* exiting: it never comes back */
		return 0;
	__u32 zero = 0, tid = prev->pid;
	struct sched_offcpu_event *seed = bpf_map_lookup_elem(&sched_blank, &zero);
	if (!seed)
		return 0;
	if (bpf_map_update_elem(&sched_sleeping, &tid, seed, BPF_ANY)) {
		count_drop();
		return 0;
	}
	e = bpf_map_lookup_elem(&sched_sleeping, &tid);
	if (!e)
		return 0;
	fill_hdr(&e->hdr, SCHED_OFFCPU, now, pid, tid);
	e->state = state;
	e->cpu = bpf_get_smp_processor_id();
	/* sched_switch runs in prev's context: current's stacks are prev's. */
	e->kstack_len = frames(bpf_get_stack(ctx, e->kstack, sizeof(e->kstack), 0));
	e->ustack_len = frames(bpf_get_stack(ctx, e->ustack, sizeof(e->ustack), BPF_F_USER_STACK));
	return 0;
}

/* Runs in the waker's context; only a thread's first wakeup per interval
 * counts (the one that made it runnable). A wakeup from an interrupt
 * (timers) names whatever task the interrupt landed on; its kernel stack
 * shows the interrupt. */
SEC("tp_btf/sched_waking")
int BPF_PROG(sched_waking, struct task_struct *p)
{
	__u32 tid = p->pid;
	struct sched_offcpu_event *e = bpf_map_lookup_elem(&sched_sleeping, &tid);
	if (!e || e->wake_ts)
		return 0;
	__u64 id = bpf_get_current_pid_tgid();
	e->wake_ts = bpf_ktime_get_ns();
	e->waker_pid = id >> 32;
	e->waker_tid = (__u32)id;
	bpf_get_current_comm(e->waker_comm, sizeof(e->waker_comm));
	e->waker_kstack_len = frames(bpf_get_stack(ctx, e->waker_kstack, sizeof(e->waker_kstack), 0));
	if (is_target(e->waker_pid))
		e->waker_ustack_len = frames(bpf_get_stack(ctx, e->waker_ustack, sizeof(e->waker_ustack),
							   BPF_F_USER_STACK));
	return 0;
}
