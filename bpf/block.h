/* ===- block.h - block request events and latency histogram keys -------=== */
#ifndef SYSPGO_BPF_BLOCK_H
#define SYSPGO_BPF_BLOCK_H
#include "common.h"

enum block_event_type {
	BLOCK_RQ = 1,     /* a request (or part of one) completed */
};

/* Our own flag bits, decoded in the kernel from cmd_flags with the running
 * kernel's __REQ_* numbers, so the table does not depend on its version. */
enum block_flag {
	BLOCK_F_SYNC = 1 << 0,
	BLOCK_F_META = 1 << 1,
	BLOCK_F_FUA = 1 << 2,
	BLOCK_F_PREFLUSH = 1 << 3,
	BLOCK_F_RAHEAD = 1 << 4,
	BLOCK_F_BACKGROUND = 1 << 5,
	BLOCK_F_PRIO = 1 << 6,
	BLOCK_F_NOWAIT = 1 << 7,
	BLOCK_F_TARGET = 1 << 8,   /* the submitter belongs to the traced tree */
	BLOCK_F_PARTIAL = 1 << 9,  /* more of this request completes later */
	BLOCK_F_UNISSUED = 1 << 10, /* never issued itself (a data-less flush done by the
				     * queue's flush request, or an early failure) */
};

/* hdr.ts is the issue to the driver (creation if BLOCK_F_UNISSUED);
 * hdr.pid/tid the task that built the
 * request from its first bio (0 when not seen: flush sequences, passthrough
 * commands, requests made before the probes attached). */
struct block_rq_event {
	struct syspgo_hdr hdr;
	__u64 dur;        /* ns from hdr.ts to this completion (device latency if issued) */
	__u64 start_ts;   /* when the request was made from a bio, ns (0 if not seen) */
	__u64 dev;        /* whole disk, kernel encoding (major << 20 | minor) */
	__u64 part_dev;   /* the block device the I/O was submitted to (the partition), kernel encoding */
	__u64 sector;     /* 512-byte sectors from the start of the whole disk; ~0 for a flush */
	__u64 file_dev;   /* s_dev of the first page's inode (kernel encoding); 0 if not a file page */
	__u64 file_ino;
	__u64 file_index; /* page index of the first page in that file */
	__u32 bytes;      /* bytes completed by this completion */
	__u32 op;         /* REQ_OP_*: 0 read, 1 write, 2 flush, 3 discard, ... */
	__u32 flags;      /* enum block_flag */
	__u32 cmd_flags;  /* the kernel's raw cmd_flags (bit numbers vary by version) */
	__s32 error;      /* blk_status_t, 0 on success */
	__u32 issue_pid;  /* task current when the request was issued (may be a kworker or an interrupted task) */
	__u32 issue_tid;
	__u32 pad;
	char comm[SYSPGO_COMM_LEN];  /* the submitter's comm */
};

/* Latency histogram: issue to final completion, per device and op. */
struct block_hist_key {
	__u32 dev;        /* whole disk, kernel encoding */
	__u32 part_dev;   /* submitted-to device, kernel encoding */
	__u32 op;         /* REQ_OP_* */
	__u32 slot;       /* floor(log2(ns)) */
};

struct block_hist_val {
	__u64 count;
	__u64 sum_ns;
};

#define BLOCK_HIST_MAX_KEYS 4096
#endif
