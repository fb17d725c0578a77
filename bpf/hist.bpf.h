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
