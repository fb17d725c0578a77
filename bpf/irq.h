/* ===- irq.h - interrupt handler runs and time histograms --------------=== */
#ifndef SYSPGO_BPF_IRQ_H
#define SYSPGO_BPF_IRQ_H
#include "common.h"

enum irq_event_type {
	IRQ_RUN = 1,      /* one handler run at or above the threshold */
};

enum irq_kind {
	IRQ_HARD = 0,     /* a hard interrupt handler (one irqaction) */
	IRQ_SOFT = 1,     /* a softirq vector */
};

#define IRQ_NAME_LEN 32

/* hdr.ts is the handler's entry; hdr.pid/tid the task it interrupted
 * (0 when the CPU was idle). */
struct irq_run_event {
	struct syspgo_hdr hdr;
	__u64 dur;        /* ns in the handler; for softirqs without the hard interrupts inside */
	__u32 cpu;
	__u32 kind;       /* enum irq_kind */
	__u32 vec;        /* irq number, or softirq vector (HI_SOFTIRQ = 0 ... RCU_SOFTIRQ = 9) */
	__s32 ret;        /* hard: irqreturn_t (0 none, 1 handled, 2 wake thread); soft: 0 */
	__u32 target;     /* 1 if the interrupted task belongs to the traced tree */
	__u32 pad;
	char name[IRQ_NAME_LEN];  /* hard: the irqaction's name; soft: empty */
};

/* Per-CPU histogram (a BPF per-CPU hash, so the CPU is the value's index). */
struct irq_hist_key {
	__u32 kind;
	__u32 vec;
	__u32 slot;       /* floor(log2(ns)) */
	__u32 pad;
};

struct irq_hist_val {
	__u64 count;
	__u64 sum_ns;
};

struct irq_name {
	char name[IRQ_NAME_LEN];
};

#define IRQ_HIST_MAX_KEYS 8192
#define IRQ_NAMES_MAX 1024
#endif
