/* ===- sched.h - off-CPU intervals and their wakers --------------------=== */
#ifndef SYSPGO_BPF_SCHED_H
#define SYSPGO_BPF_SCHED_H
#include "common.h"

enum sched_event_type {
	SCHED_OFFCPU = 1,
};

#define SCHED_KFRAMES 64    /* kernel frames kept per stack */
#define SCHED_UFRAMES 127   /* user frames kept per stack (PERF_MAX_STACK_DEPTH) */

/* One off-CPU interval of a traced thread. hdr.ts is when it left the CPU,
 * hdr.pid/tid the thread. The user stack of the sleeper comes last so the
 * event is cut after its used frames. */
struct sched_offcpu_event {
	struct syspgo_hdr hdr;
	__u64 dur;          /* ns from switch-out to switch-in */
	__u64 wake_ts;      /* bpf_ktime_get_ns() of the wakeup; 0 if none was seen */
	__u32 state;        /* prev_state at switch-out; 0 = preempted (still runnable) */
	__u32 cpu;          /* CPU it left */
	__u32 waker_pid;    /* thread group of the waking task (0 if none seen) */
	__u32 waker_tid;
	char waker_comm[SYSPGO_COMM_LEN];
	__u32 kstack_len;   /* frames used in kstack */
	__u32 waker_kstack_len;
	__u32 waker_ustack_len; /* 0 unless the waker is itself traced */
	__u32 ustack_len;
	__u64 kstack[SCHED_KFRAMES];
	__u64 waker_kstack[SCHED_KFRAMES];
	__u64 waker_ustack[SCHED_UFRAMES];
	__u64 ustack[SCHED_UFRAMES];
};

#endif
