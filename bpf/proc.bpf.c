// SPDX-License-Identifier: GPL-2.0
/* ===- proc.bpf.c - follow the traced process tree --------------------=== */
/* Keeps `targets` equal to the set of processes descended from the traced
 * command: forks of a target become targets, threads stay in their process,
 * a process leaves when its last thread exits. Every other group filters on
 * `targets`, so this group is always loaded.
 *
 * Under sudo it also keeps the tree to what the invoking user could have
 * read themselves, by the rule ptrace(2) and perf use: every uid and gid of
 * a process theirs, no permitted capabilities, and the process dumpable. A
 * process that gains more at an exec (a setuid or setgid program, a file
 * capability) leaves `targets` there, before its new image runs, so no
 * group records anything of it, nor of the children it starts later. */
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
	if (!thread)
		add_target(ctgid);
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

/* Set by the loader (collect/proc_group.cc) when it runs under sudo for a
 * user other than root: their uid and gid. As root, nothing is left out. */
const volatile __u32 proc_user_only = 0;
const volatile __u32 proc_user_uid = 0;
const volatile __u32 proc_user_gid = 0;

/* Processes left out so far (one slot): the collector reports it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} proc_left_out SEC(".maps");

/* include/linux/binfmts.h and sched/coredump.h: defines, not in BTF. */
#define BINPRM_FLAGS_ENFORCE_NONDUMP 1 /* the user may not read the file run */
#define MMF_DUMPABLE_MASK 3
#define SUID_DUMP_USER 1

/* mm_struct.flags: an unsigned long up to 6.17, a bitmap (mm_flags_t) since. */
struct mm_struct___word {
	unsigned long flags;
} __attribute__((preserve_access_index));

static __always_inline int mm_dumpable(struct mm_struct *mm)
{
	unsigned long flags;
	if (bpf_core_field_exists(struct mm_struct___word, flags))
		flags = BPF_CORE_READ((struct mm_struct___word *)mm, flags);
	else
		flags = BPF_CORE_READ(mm, flags.__mm_flags[0]);
	return (flags & MMF_DUMPABLE_MASK) == SUID_DUMP_USER;
}

/* What of `c` is more than the invoking user has (proc_left_out_why bits). */
static __always_inline __u32 cred_excess(const struct cred *c)
{
	__u32 u = proc_user_uid, g = proc_user_gid, why = 0;
	if (BPF_CORE_READ(c, uid.val) != u || BPF_CORE_READ(c, euid.val) != u || BPF_CORE_READ(c, suid.val) != u ||
	    BPF_CORE_READ(c, fsuid.val) != u)
		why |= PROC_WHY_UID;
	if (BPF_CORE_READ(c, gid.val) != g || BPF_CORE_READ(c, egid.val) != g || BPF_CORE_READ(c, sgid.val) != g ||
	    BPF_CORE_READ(c, fsgid.val) != g)
		why |= PROC_WHY_GID;
	/* kernel_cap_t is 64 bits, as one u64 or (before 6.3) two u32. */
	__u64 caps = 0;
	bpf_probe_read_kernel(&caps, sizeof(caps), __builtin_preserve_access_index(&c->cap_permitted));
	if (caps)
		why |= PROC_WHY_CAPS;
	return why;
}

/* Takes process `tgid` out of the tree, counts it and tells the collector,
 * which then forgets it and reads nothing of it from /proc. */
static __always_inline void leave_out(__u32 tgid, __u32 tid, __u32 why)
{
	if (!remove_target(tgid))
		return; /* not traced, or left out already */
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&proc_left_out, &zero);
	if (n)
		__sync_fetch_and_add(n, 1);
	struct proc_left_out_event *e = reserve_event(PROC_LEFT_OUT, sizeof(*e), bpf_ktime_get_ns(), tgid, tid);
	if (!e)
		return;
	e->why = why;
	e->pad = 0;
	submit_event(e);
}

/* Fires once the new credentials are computed and the exec can no longer
 * fail, before the old image is replaced (6.10+; the loader turns it off on
 * older kernels, where proc_exec alone decides): the earliest point to stop
 * recording, so nothing of the new image is seen, not even its first page
 * faults, and /proc shows the old image until it has left. */
SEC("tp_btf/sched_prepare_exec")
int BPF_PROG(proc_prepare_exec, struct task_struct *p, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;
	if (!proc_user_only || !is_target(tgid))
		return 0;
	__u32 why = cred_excess(BPF_CORE_READ(bprm, cred));
	if (BPF_CORE_READ(bprm, interp_flags) & BINPRM_FLAGS_ENFORCE_NONDUMP)
		why |= PROC_WHY_NOT_DUMPABLE;
	if (why)
		leave_out(tgid, p->pid, why);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(proc_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	/* The new credentials are committed and the dumpability set: what the
	 * new image runs with, on every kernel. */
	if (proc_user_only && is_target(p->tgid)) {
		__u32 why = cred_excess(BPF_CORE_READ(p, real_cred));
		if (!mm_dumpable(BPF_CORE_READ(p, mm)))
			why |= PROC_WHY_NOT_DUMPABLE;
		if (why) {
			leave_out(p->tgid, p->pid, why);
			return 0;
		}
	}
	struct proc_exec_event *e = reserve_task_event(p, PROC_EXEC, sizeof(*e));
	if (!e)
		return 0;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), p->comm);
	bpf_probe_read_kernel_str(e->filename, sizeof(e->filename), BPF_CORE_READ(bprm, filename));
	e->dev = BPF_CORE_READ(bprm, file, f_inode, i_sb, s_dev);
	e->ino = BPF_CORE_READ(bprm, file, f_inode, i_ino);
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
		remove_target(tgid);
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
