// SPDX-License-Identifier: GPL-2.0
/* ===- irq.bpf.c - hard and soft interrupt time per CPU and vector ----=== */
/* Interrupts belong to no process, so this group is system-wide for as long
 * as the collection runs. Every handler run lands in a per-CPU log2
 * histogram (a map update, no record); only runs at or above `min_ns` are
 * sent as records, with the task they interrupted, so a stall of the traced
 * tree can be tied to the interrupt that took its CPU.
 *
 * Hard handlers do not nest (they run with interrupts off), so one start
 * time per CPU is enough. A softirq can be interrupted by hard interrupts;
 * their time is subtracted, so soft time is the vector's own work. Time
 * spent in the interrupt entry code, in NMIs and in architecture vectors
 * without an irqaction (local timer, IPIs) is not seen by these
 * tracepoints.
 *
 * Under sudo for a user other than root (irq_only_own), only handler runs
 * that interrupted the traced tree are kept, in the records and in the
 * histograms alike (the interrupt time taken from that user's work); the
 * others are counted per CPU in irq_left_out. */
#define GROUP irq
#define GROUP_ID SYSPGO_GROUP_IRQ
#include "common.bpf.h"
#include "hist.bpf.h"
#include "irq.h"


/* Handler runs at least this long (ns) are recorded one by one. */
const volatile __u64 min_ns = 100000;
/* Set by the loader under sudo: keep only the runs that interrupted the traced tree. */
const volatile __u32 irq_only_own = 0;

/* Handler runs irq_only_own left out, per CPU; read by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} irq_left_out SEC(".maps");

struct cpu_state {
	__u64 hard_ts;       /* entry of the running hard handler, 0 if none */
	__u64 soft_ts;       /* entry of the running softirq, 0 if none */
	__u64 hard_ns;       /* hard handler time on this CPU so far */
	__u64 hard_ns_at_soft; /* hard_ns when the softirq started */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_state);
} irq_state SEC(".maps");

HIST_MAP(irq_hist, IRQ_HIST_MAX_KEYS, struct irq_hist_key, struct irq_hist_val);

/* irq number -> name of the first irqaction seen on it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IRQ_NAMES_MAX);
	__type(key, __u32);
	__type(value, struct irq_name);
} irq_names SEC(".maps");

static __always_inline struct cpu_state *cpu_state(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&irq_state, &zero);
}

/* Whether irq_only_own leaves out this run (and counts it). */
static __always_inline int left_out(void)
{
	if (!irq_only_own)
		return 0;
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	if (pid && is_target(pid))
		return 0;
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&irq_left_out, &zero);
	if (n)
		*n += 1; /* per-CPU slot: no other writer */
	return 1;
}

static __always_inline void record(__u32 kind, __u32 vec, __u64 ts, __u64 dur, int ret,
				   struct irqaction *action)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 pid = pid_tgid >> 32;
	struct irq_run_event *e = reserve_event(IRQ_RUN, sizeof(*e), ts, pid, (__u32)pid_tgid);
	if (!e)
		return;
	e->dur = dur;
	e->cpu = bpf_get_smp_processor_id();
	e->kind = kind;
	e->vec = vec;
	e->ret = ret;
	e->target = pid && is_target(pid);
	e->pad = 0;
	e->name[0] = 0;
	if (action)
		bpf_probe_read_kernel_str(e->name, sizeof(e->name), BPF_CORE_READ(action, name));
	submit_event(e);
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(irq_entry, int irq, struct irqaction *action)
{
	struct cpu_state *st = cpu_state();
	if (st)
		st->hard_ts = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(irq_exit, int irq, struct irqaction *action, int ret)
{
	struct cpu_state *st = cpu_state();
	if (!st || !st->hard_ts)
		return 0; /* entered before we attached */
	__u64 start = st->hard_ts;
	__u64 dur = bpf_ktime_get_ns() - start;
	st->hard_ts = 0;
	st->hard_ns += dur;
	if (left_out())
		return 0;

	struct irq_hist_key k = {.kind = IRQ_HARD, .vec = irq, .slot = log2_slot(dur)};
	if (hist_add(&irq_hist, &k, dur) == 1) {
		/* New key: rare, so the name lookup stays off the common path. */
		struct irq_name n = {};
		__u32 vec = irq;
		bpf_probe_read_kernel_str(n.name, sizeof(n.name), BPF_CORE_READ(action, name));
		bpf_map_update_elem(&irq_names, &vec, &n, BPF_NOEXIST);
	}
	if (dur >= min_ns)
		record(IRQ_HARD, irq, start, dur, ret, action);
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(irq_softirq_entry, unsigned int vec)
{
	struct cpu_state *st = cpu_state();
	if (!st)
		return 0;
	st->soft_ts = bpf_ktime_get_ns();
	st->hard_ns_at_soft = st->hard_ns;
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(irq_softirq_exit, unsigned int vec)
{
	struct cpu_state *st = cpu_state();
	if (!st || !st->soft_ts)
		return 0;
	__u64 start = st->soft_ts;
	__u64 dur = bpf_ktime_get_ns() - start;
	__u64 hard = st->hard_ns - st->hard_ns_at_soft;
	dur = dur > hard ? dur - hard : 0;
	st->soft_ts = 0;
	if (left_out())
		return 0;

	struct irq_hist_key k = {.kind = IRQ_SOFT, .vec = vec, .slot = log2_slot(dur)};
	hist_add(&irq_hist, &k, dur);
	if (dur >= min_ns)
		record(IRQ_SOFT, vec, start, dur, 0, 0);
	return 0;
}
