// SPDX-License-Identifier: GPL-2.0
/* ===- proc.bpf.c - follow the traced process tree --------------------=== */
/* Keeps `targets` equal to the set of processes descended from the traced
 * command: forks of a target become targets, threads stay in their process,
 * a process leaves when its last thread exits. Every other group filters on
 * `targets`, so this group is always loaded. */
#define GROUP proc
#define GROUP_ID SYSPGO_GROUP_PROC
#include "common.bpf.h"
#include "proc.h"


/* An event of `type` from task `p`, reserved now with its header filled, if
 * p's process is traced; NULL if it is not, or if the ring buffer is full. */
static __always_inline void *reserve_task_event(struct task_struct *p, __u32 type, __u32 size)
{
	__u32 tgid = p->tgid;
	if (!is_target(tgid))
		return 0;
	return reserve_event(type, size, bpf_ktime_get_ns(), tgid, p->pid);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(proc_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid;
	if (!is_target(ptgid))
		return 0;
	__u32 ctgid = child->tgid, ctid = child->pid;
	int thread = ctgid == ptgid;
	if (!thread) {
		__u32 one = 1;
		bpf_map_update_elem(&targets, &ctgid, &one, BPF_ANY);
	}
	struct proc_task_event *e = reserve_event(thread ? PROC_THREAD : PROC_FORK, sizeof(*e),
						  bpf_ktime_get_ns(), ctgid, ctid);
	if (!e)
		return 0;
	e->ppid = ptgid;
	e->ptid = parent->pid;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), child->comm);
	submit_event(e);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(proc_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct proc_exec_event *e = reserve_task_event(p, PROC_EXEC, sizeof(*e));
	if (!e)
		return 0;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), p->comm);
	bpf_probe_read_kernel_str(e->filename, sizeof(e->filename), BPF_CORE_READ(bprm, filename));
	/* The new image's argv is already on its stack: read it from mm. */
	struct mm_struct *mm = BPF_CORE_READ(p, mm);
	unsigned long start = BPF_CORE_READ(mm, arg_start), end = BPF_CORE_READ(mm, arg_end);
	__u64 n = end > start ? end - start : 0;
	if (n > PROC_ARGS_LEN)
		n = PROC_ARGS_LEN;
	e->args_len = 0;
	if (n && bpf_probe_read_user(e->args, n, (void *)start) == 0)
		e->args_len = n;
	submit_event(e);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(proc_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;
	if (!is_target(tgid))
		return 0;
	/* do_exit() decrements signal->live before this tracepoint, on every
	 * kernel; newer ones (6.16+) also pass group_dead as an argument. */
	int group_dead = BPF_CORE_READ(p, signal, live.counter) == 0;
	struct proc_exit_event *e = reserve_event(PROC_EXIT, sizeof(*e), bpf_ktime_get_ns(), tgid, p->pid);
	if (e) {
		e->exit_code = p->exit_code;
		e->group_dead = group_dead;
		submit_event(e);
	}
	if (group_dead)
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(proc_rename, struct task_struct *task, const char *comm)
{
	struct proc_task_event *e = reserve_task_event(task, PROC_RENAME, sizeof(*e));
	if (!e)
		return 0;
	e->ppid = 0;
	e->ptid = 0;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), comm);
	submit_event(e);
	return 0;
}
