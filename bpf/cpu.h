/* ===- cpu.h - cpu-clock samples and the mappings their IPs fall in ---=== */
#ifndef SYSPGO_BPF_CPU_H
#define SYSPGO_BPF_CPU_H
#include "common.h"

enum cpu_event_type {
	CPU_SAMPLE = 1,
	CPU_MAPPING = 2,   /* a (pid, vma) seen for the first time in a user stack */
};

#define CPU_KFRAMES 64
#define CPU_UFRAMES 127      /* PERF_MAX_STACK_DEPTH */
#define CPU_PATH_MAX 4096    /* bytes of path kept; longer paths are cut at the root end */
#define CPU_NAME_MAX 256     /* one path component */

/* hdr.ts is the sample time. ustack[0] is the user IP (the interrupted one,
 * or where the thread entered the kernel). */
struct cpu_sample_event {
	struct syspgo_hdr hdr;
	__u64 ip;           /* instruction pointer in the interrupted registers */
	__u32 cpu;
	__u32 kernel;       /* 1 if the sample interrupted kernel code */
	__u32 kstack_len;   /* frames used in kstack (0 in user mode) */
	__u32 ustack_len;
	__u64 kstack[CPU_KFRAMES];
	__u64 ustack[CPU_UFRAMES];
};

/* A vma, as bpf_find_vma saw it. The path is built from the leaf towards
 * the root, so it ends at path[CPU_PATH_MAX] and starts at path[path_off]. */
struct cpu_mapping_event {
	struct syspgo_hdr hdr;
	__u64 start;        /* vm_start */
	__u64 end;          /* vm_end */
	__u64 off;          /* file offset of start, bytes (vm_pgoff * page size) */
	__u64 dev;          /* kernel s_dev (major << 20 | minor); 0 if anonymous */
	__u64 ino;          /* 0 if anonymous */
	__u32 path_off;     /* first byte of the path in path[] */
	__u32 flags;        /* CPU_MAP_* */
	char path[CPU_PATH_MAX + CPU_NAME_MAX]; /* the tail is room the verifier wants */
};

#define CPU_MAP_TRUNCATED 1  /* the walk stopped before the root */
#define CPU_MAP_VDSO 2       /* the vDSO (no file) */

#endif
