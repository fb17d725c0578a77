// SPDX-License-Identifier: GPL-2.0
/* floor_syscalls.bpf.c - the cost of hooking every syscall, and nothing else.
 * Programs on sys_enter and sys_exit of the same kind syspgo's fileio group
 * uses (tp_btf) that return at once: bench/overhead.py's floor, what any
 * tracer that sees every syscall pays on this kernel before its program
 * does any work. Built with -DFLOOR_ASK, the programs first ask, as
 * syspgo's do, whether the running task's process is recorded (the current
 * task, then its bit in a bitmap like bpf/common.bpf.h's `targets`, here
 * empty): what a process outside a recording cannot avoid paying. */
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
