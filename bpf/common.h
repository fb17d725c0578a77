/* ===- common.h - what every probe group's events share ---------------=== */
/* Read by BPF programs and by collect/. Only fixed-width types: the layout is
 * the wire format of the ring buffers. */
#ifndef SYSPGO_BPF_COMMON_H
#define SYSPGO_BPF_COMMON_H

#ifndef __bpf__
#include <linux/types.h> /* userspace; BPF code gets the types from vmlinux.h */
#endif

/* Probe groups; indexes the shared per-CPU drop counters. */
enum syspgo_group {
	SYSPGO_GROUP_PROC = 0,
	SYSPGO_GROUP_FILEIO = 1,
	SYSPGO_GROUP_FAULTS = 2,
	SYSPGO_GROUP_PAGECACHE = 3,
	SYSPGO_GROUP_BLOCK = 4,
	SYSPGO_GROUP_IRQ = 5,
	SYSPGO_GROUP_SCHED = 6,
	SYSPGO_GROUP_CPU = 7,
	SYSPGO_GROUP_MAX = 8,
};

/* Starts every event. ts is bpf_ktime_get_ns() (CLOCK_MONOTONIC, ns). */
struct syspgo_hdr {
	__u32 type;   /* group-specific event type */
	__u32 size;   /* bytes of the whole event, header included */
	__u64 ts;
	__u32 pid;    /* thread group id */
	__u32 tid;    /* thread id */
};

#define SYSPGO_COMM_LEN 16

#endif
