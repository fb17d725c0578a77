// SPDX-License-Identifier: GPL-2.0
/* floor_syscalls.bpf.c - the cost of hooking every syscall, and nothing else.
 * Programs on sys_enter and sys_exit of the same kind syspgo's fileio group
 * uses (tp_btf) that return at once: bench/overhead.py's floor, what any
 * tracer that sees every syscall pays on this kernel before its program
 * does any work. Built with -DFLOOR_ASK, the programs first ask, as
 * syspgo's do, whether the running task's process is recorded (the current
 * task, then its bit in a bitmap like bpf/common.bpf.h's `targets`, here
 * empty): what a process outside a recording cannot avoid paying. Built
 * with -DFLOOR_PER_SYSCALL, empty programs sit instead on the per-syscall
 * tracepoints (syscalls:sys_enter_read, ...) of only the calls the fileio
 * group reads: the cost of hooking those calls alone, which other calls
 * pay too (a registered syscall tracepoint sends every syscall of every
 * task through the kernel's slow path), and the time the kernel takes to
 * detach them. Built with -DFLOOR_TIME, the tp_btf programs time every
 * call as any tracer of syscall latency must (BCC's syscount -L, syspgo's
 * fileio group): the clock at entry, kept in task storage, and the clock
 * at exit, the difference summed per CPU. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

#ifdef FLOOR_ASK
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4194304 / 64);
	__type(key, __u32);
	__type(value, __u64);
} floor_bits SEC(".maps");

static __always_inline int asked(void)
{
	__u32 tgid = bpf_get_current_task_btf()->tgid, w = tgid / 64;
	__u64 *bits = bpf_map_lookup_elem(&floor_bits, &w);
	return bits && (*bits >> (tgid % 64)) & 1;
}
#else
#define asked() 0
#endif

#ifdef FLOOR_TIME
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} floor_entry SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} floor_time SEC(".maps");

SEC("tp_btf/sys_enter")
int BPF_PROG(floor_enter, struct pt_regs *regs, long id)
{
	if (asked())
		return 0;
	__u64 *ts = bpf_task_storage_get(&floor_entry, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (ts)
		*ts = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(floor_exit, struct pt_regs *regs, long ret)
{
	if (asked())
		return 0;
	__u64 *ts = bpf_task_storage_get(&floor_entry, bpf_get_current_task_btf(), 0, 0);
	__u32 zero = 0;
	__u64 *sum = bpf_map_lookup_elem(&floor_time, &zero);
	if (ts && *ts && sum) {
		*sum += bpf_ktime_get_ns() - *ts;
		*ts = 0;
	}
	return 0;
}
#elif defined(FLOOR_PER_SYSCALL)
/* bpf/syscalls.h's calls, by their tracepoints' names. */
#define FLOOR_HOOK(call)                                                \
	SEC("tp/syscalls/sys_enter_" #call) int enter_##call(void *ctx) \
	{                                                               \
		return 0;                                               \
	}                                                               \
	SEC("tp/syscalls/sys_exit_" #call) int exit_##call(void *ctx)   \
	{                                                               \
		return 0;                                               \
	}
FLOOR_HOOK(read) FLOOR_HOOK(write) FLOOR_HOOK(close) FLOOR_HOOK(pread64) FLOOR_HOOK(pwrite64)
FLOOR_HOOK(readv) FLOOR_HOOK(writev) FLOOR_HOOK(fsync) FLOOR_HOOK(fdatasync) FLOOR_HOOK(sync_file_range)
FLOOR_HOOK(preadv) FLOOR_HOOK(pwritev) FLOOR_HOOK(preadv2) FLOOR_HOOK(pwritev2) FLOOR_HOOK(open)
FLOOR_HOOK(openat) FLOOR_HOOK(openat2) FLOOR_HOOK(mmap) FLOOR_HOOK(newstat) FLOOR_HOOK(newlstat)
FLOOR_HOOK(access) FLOOR_HOOK(execve) FLOOR_HOOK(readlink) FLOOR_HOOK(newfstatat) FLOOR_HOOK(readlinkat)
FLOOR_HOOK(faccessat) FLOOR_HOOK(execveat) FLOOR_HOOK(statx) FLOOR_HOOK(faccessat2)
#else
SEC("tp_btf/sys_enter")
int BPF_PROG(floor_enter, struct pt_regs *regs, long id)
{
	return asked();
}

SEC("tp_btf/sys_exit")
int BPF_PROG(floor_exit, struct pt_regs *regs, long ret)
{
	return asked();
}
#endif
