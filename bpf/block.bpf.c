// SPDX-License-Identifier: GPL-2.0
/* ===- block.bpf.c - block requests: who asked, where, how long -------=== */
/* Every request on every disk is recorded, not only the traced tree's: the
 * I/O a program waits for is often issued by someone else (writeback of its
 * dirty pages by a flusher kworker, a journal commit by jbd2), and analysis
 * can only join those by time and file if they are there. The rate is
 * bounded by what the devices can do, and one record per request is cheap
 * next to the request itself.
 *
 * The submitter is taken at block_io_start (Linux 6.5), which fires in the
 * context that turned the first bio into a request; block_rq_issue runs
 * later, often in kblockd or whichever task unplugged, so it only gives the
 * issue time and context. The first page of the first bio names the file
 * for page-cache I/O (writeback, readahead); direct I/O and swap pages are
 * anonymous and give no file. Latency is issue to completion, the device's
 * share, as biolatency measures by default. Needs Linux 5.11 or later:
 * before a54895fa057c ("block: remove the request_queue to argument request
 * based tracepoints") the block_rq_* tracepoints also passed the queue.
 *
 * Under sudo for a user other than root (block_only_own), a request is
 * kept only if the traced tree submitted it or its first page is of a file
 * that user owns (writeback of their files by a flusher); the others, and
 * their latencies, are left out of the rows and the histogram and counted
 * in block_left_out. */
#define GROUP block
#define GROUP_ID SYSPGO_GROUP_BLOCK
#include "common.bpf.h"
#include "hist.bpf.h"
#include "block.h"


#define MINORBITS 20
#define REQ_OP_MASK 0xff   /* (1 << REQ_OP_BITS) - 1 */
#define PAGE_SHIFT 12
#define MAPPING_FLAGS 3    /* low bits of page->mapping: anon, movable/KSM */

/* What we learned about a request until it completes. The key space is
 * bounded: requests come from each queue's preallocated tag pool. */
struct rq_info {
	__u64 start_ts;
	__u64 issue_ts;
	__u64 file_dev;
	__u64 file_ino;
	__u64 file_index;
	__u32 pid;
	__u32 tid;
	__u32 issue_pid;
	__u32 issue_tid;
	__u32 target;
	__u32 start_flags;  /* cmd_flags as submitted: the flush machinery strips
			     * PREFLUSH and FUA from the request before it completes */
	__u32 file_uid;     /* owner of the file (file_ino != 0) */
	__u32 pad;
	char comm[SYSPGO_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);             /* struct request * */
	__type(value, struct rq_info);
} block_rqs SEC(".maps");

HIST_MAP(block_hist, BLOCK_HIST_MAX_KEYS, struct block_hist_key, struct block_hist_val);

/* Set by the loader under sudo: keep only the traced tree's requests and
 * those on files of block_own_uid (see the top). */
const volatile __u32 block_only_own = 0;
const volatile __u32 block_own_uid = 0;
/* Requests left out by block_only_own; read by the loader. */
__u64 block_left_out = 0;

/* Requests we could not follow because `block_rqs` was full; read by the loader. */
__u64 untracked = 0;
/* Requests whose completion never reached us: their struct request was
 * reused while still in `block_rqs`. Under load this kernel sometimes does not run
 * the BPF programs of block_rq_complete (every program on it, raw or BTF,
 * misses the same calls, and no recursion miss is counted), so the loss is
 * counted here instead of passing silently. */
__u64 lost = 0;

/* Linux 5.15 (f3fa33acca9f, "block: remove the ->rq_disk field in struct
 * request") moved the disk to rq->q->disk. */
struct request___old {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

static __always_inline struct gendisk *rq_disk(struct request *rq)
{
	if (bpf_core_field_exists(struct request___old, rq_disk))
		return BPF_CORE_READ((struct request___old *)rq, rq_disk);
	return BPF_CORE_READ(rq, q, disk);
}

/* The whole disk and the device the I/O was aimed at (a partition, whose
 * number is what a filesystem on it reports as st_dev). */
static __always_inline void rq_devs(struct request *rq, __u32 *dev, __u32 *part)
{
	struct gendisk *disk = rq_disk(rq);
	*dev = disk ? ((__u32)BPF_CORE_READ(disk, major) << MINORBITS) | BPF_CORE_READ(disk, first_minor) : 0;
	*part = 0;
	struct bio *bio = BPF_CORE_READ(rq, bio);
	/* bio->bi_bdev since Linux 5.12 (309dca309fc3); a flush has no bio. */
	if (bio && bpf_core_field_exists(struct bio, bi_bdev))
		*part = BPF_CORE_READ(bio, bi_bdev, bd_dev);
	if (!*part && bpf_core_field_exists(struct bio, bi_bdev)) {
		struct block_device *bd = BPF_CORE_READ(rq, part);
		if (bd)
			*part = BPF_CORE_READ(bd, bd_dev);
	}
	if (!*part)
		*part = *dev;
}

/* The file behind the request's first page, if it is a page-cache page. */
static __always_inline void bio_file(struct bio *bio, struct rq_info *ri)
{
	if (!bio)
		return;
	__u32 idx = BPF_CORE_READ(bio, bi_iter.bi_idx);
	__u32 done = BPF_CORE_READ(bio, bi_iter.bi_bvec_done);
	struct bio_vec *bv = BPF_CORE_READ(bio, bi_io_vec);
	if (!bv)
		return;
	bv += idx;
	struct page *page = BPF_CORE_READ(bv, bv_page);
	__u32 off = BPF_CORE_READ(bv, bv_offset) + done;
	if (!page)
		return;
	/* A tail page of a large folio points at its head with bit 0 set. */
	unsigned long head = BPF_CORE_READ(page, compound_head);
	struct folio *folio = (head & 1) ? (struct folio *)(head - 1) : (struct folio *)page;
	unsigned long mapping = (unsigned long)BPF_CORE_READ(folio, mapping);
	if (!mapping || (mapping & MAPPING_FLAGS))
		return;
	struct inode *host = BPF_CORE_READ((struct address_space *)mapping, host);
	if (!host)
		return;
	ri->file_dev = BPF_CORE_READ(host, i_sb, s_dev);
	ri->file_ino = BPF_CORE_READ(host, i_ino);
	ri->file_uid = BPF_CORE_READ(host, i_uid.val);
	__u64 sub = ((__u64)page - (__u64)folio) / bpf_core_type_size(struct page);
	ri->file_index = BPF_CORE_READ(folio, index) + sub + (off >> PAGE_SHIFT);
}

static __always_inline void set_submitter(struct rq_info *ri)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	ri->pid = pid_tgid >> 32;
	ri->tid = (__u32)pid_tgid;
	ri->target = is_target(ri->pid);
	bpf_get_current_comm(ri->comm, sizeof(ri->comm));
}

SEC("tp_btf/block_io_start")
int BPF_PROG(block_io_start, struct request *rq)
{
	__u64 key = (__u64)rq;
	if (bpf_map_lookup_elem(&block_rqs, &key))
		__sync_fetch_and_add(&lost, 1);
	struct rq_info ri = {};
	ri.start_ts = bpf_ktime_get_ns();
	ri.start_flags = BPF_CORE_READ(rq, cmd_flags);
	set_submitter(&ri);
	bio_file(BPF_CORE_READ(rq, bio), &ri);
	if (bpf_map_update_elem(&block_rqs, &key, &ri, BPF_ANY))
		__sync_fetch_and_add(&untracked, 1);
	return 0;
}

/* Where block_io_start does not exist (before 6.5), the issuer stands in
 * for the submitter; the loader turns this one on only then. */
static __always_inline int on_issue(struct request *rq, int as_submitter)
{
	__u64 key = (__u64)rq;
	__u64 now = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct rq_info *ri = bpf_map_lookup_elem(&block_rqs, &key);
	if (!ri) {
		/* Flush sequences and passthrough commands are made without a
		 * bio and never pass block_io_start. */
		struct rq_info n = {};
		if (as_submitter)
			set_submitter(&n);
		bio_file(BPF_CORE_READ(rq, bio), &n);
		if (bpf_map_update_elem(&block_rqs, &key, &n, BPF_ANY)) {
			__sync_fetch_and_add(&untracked, 1);
			return 0;
		}
		ri = bpf_map_lookup_elem(&block_rqs, &key);
		if (!ri)
			return 0;
	}
	ri->issue_ts = now;
	ri->issue_pid = pid_tgid >> 32;
	ri->issue_tid = (__u32)pid_tgid;
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(block_rq_issue, struct request *rq)
{
	return on_issue(rq, 0);
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(block_rq_issue_as_submitter, struct request *rq)
{
	return on_issue(rq, 1);
}

/* A request merged into another is freed without completing. */
SEC("tp_btf/block_rq_merge")
int BPF_PROG(block_rq_merge, struct request *rq)
{
	__u64 key = (__u64)rq;
	bpf_map_delete_elem(&block_rqs, &key);
	return 0;
}

/* BLOCK_F_<flag> if cmd_flags `f` has the kernel's __REQ_<flag> bit. A macro:
 * bpf_core_enum_value takes the enumerator's name, relocated per use. */
#define REQ_FLAG(f, flag) (((f) & (1U << bpf_core_enum_value(enum req_flag_bits, __REQ_##flag))) ? BLOCK_F_##flag : 0)

static __always_inline __u32 decode_flags(__u32 f)
{
	return REQ_FLAG(f, SYNC) | REQ_FLAG(f, META) | REQ_FLAG(f, FUA) | REQ_FLAG(f, PREFLUSH) |
	       REQ_FLAG(f, RAHEAD) | REQ_FLAG(f, BACKGROUND) | REQ_FLAG(f, PRIO) | REQ_FLAG(f, NOWAIT);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(block_rq_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	__u64 key = (__u64)rq;
	struct rq_info *ri = bpf_map_lookup_elem(&block_rqs, &key);
	if (!ri)
		return 0;
	/* A request that never reached the driver itself: a data-less flush
	 * from a task, done by the queue's own flush request (which carries no
	 * submitter), or one that failed early. Timed from its creation. */
	__u64 from = ri->issue_ts ? ri->issue_ts : ri->start_ts;
	if (!from) {
		bpf_map_delete_elem(&block_rqs, &key);
		return 0;
	}
	if (block_only_own && !ri->target && !(ri->file_ino && ri->file_uid == block_own_uid)) {
		__sync_fetch_and_add(&block_left_out, 1);
		bpf_map_delete_elem(&block_rqs, &key);
		return 0;
	}
	__u64 now = bpf_ktime_get_ns();
	__u64 lat = now - from;
	__u32 cmd_flags = BPF_CORE_READ(rq, cmd_flags);
	/* The tracepoint runs before __data_len drops by nr_bytes. */
	int partial = nr_bytes < BPF_CORE_READ(rq, __data_len);
	__u32 dev, part;
	rq_devs(rq, &dev, &part);

	if (!partial && ri->issue_ts) {
		struct block_hist_key k = {
			.dev = dev, .part_dev = part, .op = cmd_flags & REQ_OP_MASK, .slot = log2_slot(lat),
		};
		hist_add(&block_hist, &k, lat);
	}

	struct block_rq_event *e = reserve_event(BLOCK_RQ, sizeof(*e), from, ri->pid, ri->tid);
	if (e) {
		e->dur = lat;
		e->start_ts = ri->start_ts;
		e->dev = dev;
		e->part_dev = part;
		e->sector = BPF_CORE_READ(rq, __sector);
		e->file_dev = ri->file_dev;
		e->file_ino = ri->file_ino;
		e->file_index = ri->file_index;
		e->bytes = nr_bytes;
		e->op = cmd_flags & REQ_OP_MASK;
		e->flags = decode_flags(cmd_flags | ri->start_flags) | (ri->target ? BLOCK_F_TARGET : 0) |
			   (partial ? BLOCK_F_PARTIAL : 0) | (ri->issue_ts ? 0 : BLOCK_F_UNISSUED);
		e->cmd_flags = cmd_flags;
		e->error = error;
		e->issue_pid = ri->issue_pid;
		e->issue_tid = ri->issue_tid;
		e->pad = 0;
		__builtin_memcpy(e->comm, ri->comm, sizeof(e->comm));
		submit_event(e);
	}
	if (!partial)
		bpf_map_delete_elem(&block_rqs, &key);
	return 0;
}
