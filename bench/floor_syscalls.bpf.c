// SPDX-License-Identifier: GPL-2.0
/* floor_syscalls.bpf.c - the cost of hooking every syscall, and nothing else.
 * Programs on sys_enter and sys_exit of the same kind syspgo's fileio group
 * uses (tp_btf) that return at once: bench/overhead.py's floor, what any
 * tracer that sees every syscall pays on this kernel before its program
 * does any work. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sys_enter")
int BPF_PROG(floor_enter, struct pt_regs *regs, long id)
{
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(floor_exit, struct pt_regs *regs, long ret)
{
	return 0;
}
