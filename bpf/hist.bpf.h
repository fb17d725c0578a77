/* ===- hist.bpf.h - log2 histogram slots for in-kernel aggregates -----=== */
/* Groups that keep biolatency-style histograms (block, irq) bucket a
 * duration by floor(log2(ns)) in the kernel and let userspace read the
 * counts once at the end, so a busy device or interrupt line costs a map
 * update per event instead of a ring-buffer record. Slot s counts values in
 * [2^s, 2^(s+1)) ns; slot 0 also takes 0. */
#ifndef SYSPGO_HIST_BPF_H
#define SYSPGO_HIST_BPF_H

/* floor(log2(v)), 0 for v == 0; branch-free halving, no loop to bound. */
static __always_inline __u32 log2_slot(__u64 v)
{
	__u32 r = 0, s;
	s = (v > 0xffffffffULL) << 5; v >>= s; r |= s;
	s = (v > 0xffff) << 4; v >>= s; r |= s;
	s = (v > 0xff) << 3; v >>= s; r |= s;
	s = (v > 0xf) << 2; v >>= s; r |= s;
	s = (v > 0x3) << 1; v >>= s; r |= s;
	return r | (__u32)(v >> 1);
}

/* Declares a histogram map: per CPU, `max_keys` keys of key_type, values of
 * val_type (a hist_counts layout). Allocated as used (since Linux 6.1,
 * bpf_mem_alloc lets any context insert): preallocated, the per-CPU values
 * of block_hist and irq_hist took ~10 ms of every collect's start. */
#define HIST_MAP(name, max_keys, key_type, val_type)          \
	struct {                                              \
		__uint(type, BPF_MAP_TYPE_PERCPU_HASH);       \
		__uint(max_entries, max_keys);                \
		__uint(map_flags, BPF_F_NO_PREALLOC);         \
		__type(key, key_type);                        \
		__type(value, val_type);                      \
	} name SEC(".maps")

/* The value layout of every histogram map (block_hist_val, irq_hist_val). */
struct hist_counts {
	__u64 count;
	__u64 sum_ns;
};

/* Counts ns under key in a per-CPU hash of hist_counts. Returns 1 if the key
 * was new (a caller may then record names that go with it), 0 if it was
 * there, -1 if the map is full. */
static __always_inline int hist_add(void *map, const void *key, __u64 ns)
{
	int created = 0;
	struct hist_counts *v = bpf_map_lookup_elem(map, key);
	if (!v) {
		struct hist_counts zero = {};
		/* Another CPU may insert the same key first: then look it up. */
		created = bpf_map_update_elem(map, key, &zero, BPF_NOEXIST) == 0;
		v = bpf_map_lookup_elem(map, key);
		if (!v)
			return -1;
	}
	v->count += 1;  /* per-CPU value: no other writer */
	v->sum_ns += ns;
	return created;
}

#endif
