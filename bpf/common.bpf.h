/* ===- common.bpf.h - maps and helpers every BPF probe group uses -----=== */
/* Every group's object is linked into one (bpftool gen object, in
 * bpf/CMakeLists.txt), so that libbpf reads the kernel's BTF and searches it
 * for CO-RE candidates once for all groups, not once per group. Each group's
 * .bpf.c defines GROUP, its name, and GROUP_ID before including this header:
 * its programs' and maps' names start with GROUP and '_', which is how the
 * loader tells whose they are (collect/probe_group.h). What every group
 * shares is declared weak here, so that the linker keeps one: the `targets`
 * and `drops` maps (all groups follow one process tree and count drops in
 * one place), the wakeup threshold and the tier. Each group keeps its own
 * ring buffer, GROUP_EVENTS, so a flood in one cannot starve another. */
#ifndef SYSPGO_COMMON_BPF_H
#define SYSPGO_COMMON_BPF_H

#if !defined(GROUP) || !defined(GROUP_ID)
#error "define GROUP (the group's name) and GROUP_ID (its syspgo_group) before including common.bpf.h"
#endif

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "common.h"

#define SYSPGO_CAT_(a, b) a##b
#define SYSPGO_CAT(a, b) SYSPGO_CAT_(a, b)
#define GROUP_EVENTS SYSPGO_CAT(GROUP, _events)

char LICENSE[] SEC("license") __weak = "GPL";

/* Set by the loader between open and load. Wake the reader when this many
 * bytes are pending (see wake_flags): a wakeup per event costs about 3 us
 * here, batching brings it under 0.5 us. */
const volatile __u64 wakeup_bytes __weak = 1 << 20;
/* 1 with collect --detail lean (the default), 0 with --detail full: what
 * the groups with two tiers (fileio, pagecache) count in the kernel. */
const volatile __u32 lean __weak = 0;

/* The processes of the recording: one bit per thread group id, bit
 * tgid % 64 of word tgid / 64. An ARRAY map, whose lookup the verifier
 * inlines (a bounds check and an add), so that a syscall of a process
 * outside the recording costs the programs on every syscall a few loads,
 * where a HASH lookup is a helper call that hashes the key. Its size is set
 * by the loader from pid_max (collect/traced_set.cc); a pid above it is never
 * a target. Bits are only ever set and cleared with atomic or and and: by
 * the BPF programs here, and by the collector on its mapping of the map
 * (BPF_F_MMAPABLE), never by writing a whole word with
 * bpf_map_update_elem, which would undo a bit the kernel set in that word
 * between the read and the write (a fork of another target). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* set by the loader */
	__type(key, __u32);
	__type(value, __u64);
} targets SEC(".maps") __weak;

/* Events lost because a ring buffer was full, per CPU, by group. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SYSPGO_GROUP_MAX);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps") __weak;

/* This group's ring buffer, <group>_events; its size is set by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} GROUP_EVENTS SEC(".maps");

static __always_inline __u64 *target_word(__u32 tgid)
{
	__u32 w = tgid / 64;
	return bpf_map_lookup_elem(&targets, &w);
}

static __always_inline int is_target(__u32 tgid)
{
	__u64 *w = target_word(tgid);
	return w && (*w >> (tgid % 64)) & 1;
}

static __always_inline void add_target(__u32 tgid)
{
	__u64 *w = target_word(tgid);
	if (w)
		__sync_fetch_and_or(w, 1ULL << (tgid % 64));
}

/* Whether tgid was a target: one of two CPUs removing it is told so. */
static __always_inline int remove_target(__u32 tgid)
{
	__u64 *w = target_word(tgid), bit = 1ULL << (tgid % 64);
	return w && (__sync_fetch_and_and(w, ~bit) & bit);
}

static __always_inline void count_drop(void)
{
	__u32 k = GROUP_ID;
	__u64 *v = bpf_map_lookup_elem(&drops, &k);
	if (v)
		*v += 1; /* per-CPU slot: no other writer */
}

/* Wake the reader on the event that makes `wakeup_bytes` pending (a quarter
 * of the buffer), not on every event after it: a reader that is busy would
 * otherwise be woken per event, a cost of microseconds batching avoids. Past three
 * quarters, when a drop is near, every event wakes it. The reader also
 * drains every 100 ms, so a wakeup lost to a race between CPUs only delays. */
static __always_inline __u64 wake_flags(__u64 before, __u64 after)
{
	if ((before < wakeup_bytes && after >= wakeup_bytes) || after >= 3 * wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/* For a reserved record: it is already counted in AVAIL_DATA. */
static __always_inline __u64 submit_flags(__u32 size)
{
	__u64 after = bpf_ringbuf_query(&GROUP_EVENTS, BPF_RB_AVAIL_DATA);
	return wake_flags(after - size - 8 /* record header */, after);
}

/* Fills an event's header but its size, which an event built in a map's
 * value or a scratch buffer (sent with output_event) knows only at the end. */
static __always_inline void fill_hdr(struct syspgo_hdr *h, __u32 type, __u64 ts, __u32 pid, __u32 tid)
{
	h->type = type;
	h->ts = ts;
	h->pid = pid;
	h->tid = tid;
}

/* Reserves a fixed-size event and fills its header; counts a drop on failure. */
static __always_inline void *reserve_event(__u32 type, __u32 size, __u64 ts, __u32 pid, __u32 tid)
{
	struct syspgo_hdr *h = bpf_ringbuf_reserve(&GROUP_EVENTS, size, 0);
	if (!h) {
		count_drop();
		return 0;
	}
	h->size = size;
	fill_hdr(h, type, ts, pid, tid);
	return h;
}

static __always_inline void submit_event(void *e)
{
	bpf_ringbuf_submit(e, submit_flags(((struct syspgo_hdr *)e)->size));
}

/* For variable-size events built in a scratch buffer. */
static __always_inline void output_event(void *e, __u64 size)
{
	__u64 before = bpf_ringbuf_query(&GROUP_EVENTS, BPF_RB_AVAIL_DATA);
	if (bpf_ringbuf_output(&GROUP_EVENTS, e, size, wake_flags(before, before + size + 8)))
		count_drop();
}

#endif
