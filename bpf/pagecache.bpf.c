// SPDX-License-Identifier: GPL-2.0
/* ===- pagecache.bpf.c - page-cache additions, deletions, readahead ---=== */
/* A page of the traced program leaves the cache in whatever task happens to
 * reclaim it: kswapd, or any task that hit its memory cgroup's limit. So
 * additions and deletions are not filtered by the current task alone; an
 * event is kept when any of these holds:
 *  - the current task is traced (it read, wrote or faulted the page in);
 *  - the file is one the traced tree has touched: the tree's reads
 *    (mm_filemap_get_pages), fault-around (mm_filemap_map_pages), faults
 *    (mm_filemap_fault), readahead and additions put (dev, ino) in `pagecache_files`,
 *    so pages of a mapped library already cached before the run are seen
 *    when reclaim drops them and when they are read again;
 *  - the folio is charged to a memory cgroup the traced tree runs in and
 *    that has a limit (its own or an ancestor's): what else fills that
 *    cgroup and pushes the program's pages out. The kernel side reports each
 *    new cgroup of the tree once (PAGECACHE_CGROUP); the loader reads its
 *    limits and puts it in `pagecache_memcgs` only if it is limited, so a tree running
 *    in a broad unlimited cgroup (a login session) does not record the page
 *    cache of everything else in it.
 * Under sudo for a user other than root (pagecache_only_own), an event kept
 * for the cgroup alone is kept only on a file that user owns: the others
 * are other users' files and are counted in pagecache_left_out. The first
 * two reasons stand: the user's own processes, and files their processes
 * read, so could read themselves.
 * The collector's own page-cache traffic (writing the profile) is never kept.
 * Memory cgroups are v1 here, so bpf_get_current_cgroup_id() says nothing;
 * the task's memory cgroup comes from the kfunc bpf_task_get_cgroup1 with
 * the memory hierarchy id the loader read from /proc/cgroups, the folio's
 * from folio->memcg_data. Both are kernfs ids: the inode numbers of the
 * cgroup directories, which the loader resolves to paths and limits.
 * Deletions carry the kernel stack, so reclaim (shrink_folio_list under
 * try_to_free_mem_cgroup_pages or kswapd) is told from truncation; outside
 * reclaim, a burst of deletions of one file shares its first one's stack. */
#define GROUP pagecache
#define GROUP_ID SYSPGO_GROUP_PAGECACHE
#include "common.bpf.h"
#include "mm.bpf.h"
#include "pagecache.h"


/* The memory controller's hierarchy id (/proc/cgroups); 0: no v1 memory
 * hierarchy, cgroups are not recorded. */
const volatile __u32 memcg_hierarchy = 0;
/* kernfs id of the memory hierarchy's root: never a filter key, or every
 * uncontained page would match. */
const volatile __u64 memcg_root_id = 0;
/* The collector's process: its database writes would record themselves. */
const volatile __u32 self_tgid = 0;
/* Set by the loader under sudo (see the top). */
const volatile __u32 pagecache_only_own = 0;
const volatile __u32 pagecache_own_uid = 0;
/* Events pagecache_only_own left out; read by the loader. */
__u64 pagecache_left_out = 0;

extern struct cgroup *bpf_task_get_cgroup1(struct task_struct *task, int hierarchy_id) __ksym __weak;
extern void bpf_cgroup_release(struct cgroup *cgrp) __ksym __weak;

struct file_key {
	__u64 dev;
	__u64 ino;
};

/* Files the traced tree touched (LRU: the oldest go first when full). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct file_key);
	__type(value, __u8);
} pagecache_files SEC(".maps");

/* Memory cgroups the traced tree ran in, reported to the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u8);
} pagecache_memcgs_seen SEC(".maps");

/* Those of them with a limit: the filter. Written by the loader only. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u8);
} pagecache_memcgs SEC(".maps");

/* Scratch for a deletion with its stack (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pagecache_event);
} pagecache_scratch SEC(".maps");

/* Two memcg lookups are cached per CPU, each as the last key it resolved:
 * the current task's memory cgroup (the kfunc takes and drops a cgroup
 * reference each time), keyed by the task's css_set, which the kernel
 * replaces whenever the task moves to another cgroup, so a shell that moves
 * itself and execs is named by its new cgroup from its next event on; and
 * the cgroup id of the memcg a folio is charged to (three probe reads; pages
 * come in runs of one memcg). An answer is reused for the same key for up to
 * MEMCG_CACHE_NS, so a css_set or memcg freed and reallocated at the same
 * address is misnamed no longer. */
struct id_cache {
	__u64 key;
	__u64 id;
	__u64 ts;
};

enum { ID_CACHE_TASK, ID_CACHE_FOLIO, ID_CACHE_SLOTS };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ID_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct id_cache);
} pagecache_memcg_cache SEC(".maps");

#define MEMCG_CACHE_NS 100000000ULL

/* The slot, if it holds `key` fresh enough: then its id is the answer. */
static __always_inline struct id_cache *id_cache_slot(__u32 slot, __u64 key, __u64 now, int *hit)
{
	struct id_cache *c = bpf_map_lookup_elem(&pagecache_memcg_cache, &slot);
	*hit = c && c->key == key && now - c->ts < MEMCG_CACHE_NS;
	return c;
}

static __always_inline void id_cache_store(struct id_cache *c, __u64 key, __u64 id, __u64 now)
{
	if (c) {
		c->key = key;
		c->id = id;
		c->ts = now;
	}
}

static __always_inline __u64 task_memcg(__u64 now)
{
	if (!memcg_hierarchy)
		return 0;
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 css_set = (__u64)BPF_CORE_READ(task, cgroups);
	int hit;
	struct id_cache *c = id_cache_slot(ID_CACHE_TASK, css_set, now, &hit);
	if (hit)
		return c->id;
	struct cgroup *cg = bpf_task_get_cgroup1(task, memcg_hierarchy);
	if (!cg)
		return 0;
	__u64 id = cg->kn->id;
	bpf_cgroup_release(cg);
	id_cache_store(c, css_set, id, now);
	return id;
}

/* The cgroup id of the memcg the folio is charged to. The low bits of
 * memcg_data are flags (MEMCG_DATA_*); kmem and slab objects never reach the
 * page cache, so the rest is a struct mem_cgroup. Probe reads, not a
 * bpf_rdonly_cast: only fileio may declare that kfunc (bpf/fileio.bpf.c). */
static __always_inline __u64 folio_memcg(struct folio *folio, __u64 now)
{
	if (!bpf_core_field_exists(folio->memcg_data))
		return 0;
	__u64 data = folio->memcg_data;
	if (!data || (data & 3))
		return 0;
	__u64 memcg = data & ~7ULL;
	int hit;
	struct id_cache *c = id_cache_slot(ID_CACHE_FOLIO, memcg, now, &hit);
	if (hit)
		return c->id;
	__u64 id = BPF_CORE_READ((struct mem_cgroup *)memcg, css.cgroup, kn, id);
	id_cache_store(c, memcg, id, now);
	return id;
}

/* The traced tree touched this file; once per file, a lookup before the
 * insert keeps the hot read path off the hash bucket lock. */
static __always_inline void note_file(__u64 dev, __u64 ino)
{
	struct file_key k = {dev, ino};
	if (bpf_map_lookup_elem(&pagecache_files, &k))
		return;
	__u8 one = 1;
	bpf_map_update_elem(&pagecache_files, &k, &one, BPF_ANY);
}

static __always_inline void note_memcg(__u64 id)
{
	if (!id || id == memcg_root_id || bpf_map_lookup_elem(&pagecache_memcgs_seen, &id))
		return;
	__u8 one = 1;
	if (bpf_map_update_elem(&pagecache_memcgs_seen, &id, &one, BPF_NOEXIST))
		return; /* another CPU reported it first */
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct pagecache_cgroup_event *e = reserve_event(PAGECACHE_CGROUP, sizeof(*e), bpf_ktime_get_ns(),
							 pid_tgid >> 32, (__u32)pid_tgid);
	if (!e)
		return;
	e->id = id;
	submit_event(e);
}

#define PF_MEMALLOC 0x00000800 /* set while a task reclaims (direct, memcg, kswapd) */
#define BURST_NS 10000000ULL    /* deletions of one file this close share a stack */

/* ---- The lean tier: counted here, drained by the loader. ----
 * Every addition and deletion still passes the filter above; instead of a
 * record each, it updates
 *  - pagecache_chunks, one entry per 64 pages of a file (each page's first
 *    addition, the deleter of its current absence, the deleters it was
 *    added again after): what tells a refault from a first load, the
 *    working set, the first touch;
 *  - pagecache_totals, pages per (file, cgroup, op, deleter, deleting comm);
 *  - pagecache_series, pages per 100 ms slice and op, for the timeline.
 * A deletion takes its stack as --detail full does (each in reclaim, a
 * burst outside it shares the first one's), hashed; each distinct hash's
 * stack goes to the ring buffer once. So the ring buffer carries only what
 * is new (stacks, memory cgroups, DAMON's reloads), and the counts are exact
 * unless a map fills, which pagecache_overflow counts. */
const volatile __u64 run_start_ns = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 16); /* 4M pages (16 GiB of pagecache_files); about 1.4 KiB each, allocated as used */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct pc_chunk_key);
	__type(value, struct pc_chunk_val);
} pagecache_chunks SEC(".maps");

/* Where a chunk goes when pagecache_chunks cannot allocate one. Its elements are
 * allocated as used from a cache the kernel refills between events, and
 * the page-cache tracepoints run with interrupts off, under the mapping's
 * lock: a burst of new chunks (a truncation, a batch of reclaim) can empty
 * the cache, about one chunk in 200 of a memory-cgroup thrash. This map is
 * preallocated (2.6 MiB), so it always has room until full. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2048);
	__type(key, struct pc_chunk_key);
	__type(value, struct pc_chunk_val);
} pagecache_chunks_spare SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct pc_total_key);
	__type(value, struct pc_total_val);
} pagecache_totals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 131072);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct pc_series_key);
	__type(value, __u64);
} pagecache_series SEC(".maps");

/* Deleters whose stack was sent. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, __u8);
} pagecache_stacks_seen SEC(".maps");

/* Deleter -> its index in the chunks, and back; the next index to give. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PAGECACHE_DELETERS);
	__type(key, __u64);
	__type(value, __u8);
} pagecache_deleter_idx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PAGECACHE_DELETERS + 1);
	__type(key, __u32);
	__type(value, __u64);
} pagecache_deleter_hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} pagecache_deleter_next SEC(".maps");

/* Updates a full map refused, per map (enum pc_overflow in pagecache.h), per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PC_OVERFLOW_MAX);
	__type(key, __u32);
	__type(value, __u64);
} pagecache_overflow SEC(".maps");

/* The stack being hashed, and the last deletion's, for bursts. */
struct pagecache_lean_scratch {
	struct pagecache_stack_event e;
	__u64 last_deleter;       /* 0 after an addition or a reclaim deletion */
	__u64 last_dev, last_ino, last_ts;
	__u32 last_tid;
	__u8 last_index, pad[3];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pagecache_lean_scratch);
} pagecache_lean_scratch SEC(".maps");

/* Lean tier: the deleter of the current reclaim batch, per task. Reclaim
 * deletes folios in batches (one shrink_folio_list call, at most 32), all
 * from one call chain: the batch's first deletion takes the kernel stack
 * that names the deleter (microseconds each, and a thrashing memory cgroup
 * deletes millions), the others reuse it. The
 * tracepoints where a task's reclaim may change path end its batch: before
 * each batch (lru_isolate), around slab shrinking (inode eviction truncates
 * page cache under PF_MEMALLOC by another path), after reclaim_pages (DAMON
 * and madvise pageout), and at the end of direct and memory-cgroup reclaim.
 * Unless every one of them is attached (reclaim_batches), each deletion
 * takes its own stack. */
const volatile __u32 reclaim_batches = 0;

struct pagecache_reclaim_batch {
	__u64 deleter;
	__u8 index, valid, pad[6];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct pagecache_reclaim_batch);
} pagecache_reclaim_batch SEC(".maps");

/* A new chunk's value (never written: all zeros; too large for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pc_chunk_val);
} pagecache_zero_chunk SEC(".maps");

static __always_inline void overflow(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&pagecache_overflow, &which);
	if (v)
		*v += 1;
}

static __always_inline __u32 comm_kind(const char *c)
{
	if (c[0] == 'k' && c[1] == 's' && c[2] == 'w' && c[3] == 'a' && c[4] == 'p' && c[5] == 'd')
		return PAGECACHE_KIND_KSWAPD;
	if (c[0] == 'k' && c[1] == 'd' && c[2] == 'a' && c[3] == 'm' && c[4] == 'o' && c[5] == 'n' && c[6] == 'd')
		return PAGECACHE_KIND_KDAMOND;
	return PAGECACHE_KIND_TASK;
}

/* The deleter's index in the chunks (1..PAGECACHE_DELETERS - 1), given the
 * first time it is met; PAGECACHE_DELETERS once the table is full. */
static __always_inline __u8 deleter_index(__u64 d)
{
	__u8 *idx = bpf_map_lookup_elem(&pagecache_deleter_idx, &d);
	if (idx)
		return *idx;
	__u32 zero = 0;
	__u32 *next = bpf_map_lookup_elem(&pagecache_deleter_next, &zero);
	if (!next)
		return PAGECACHE_DELETERS;
	__u32 n = __sync_fetch_and_add(next, 1) + 1;
	if (n >= PAGECACHE_DELETERS) {
		overflow(PC_OVERFLOW_DELETERS);
		return PAGECACHE_DELETERS;
	}
	/* The hash first: a page marked with the index may come back at once. */
	bpf_map_update_elem(&pagecache_deleter_hash, &n, &d, BPF_ANY);
	__u8 i = n;
	if (bpf_map_update_elem(&pagecache_deleter_idx, &d, &i, BPF_NOEXIST)) {
		idx = bpf_map_lookup_elem(&pagecache_deleter_idx, &d); /* another CPU gave it one first */
		return idx ? *idx : PAGECACHE_DELETERS;
	}
	return i;
}

/* The deleter of this deletion: its stack's hash (FNV-1a over the frames)
 * and the task's kind; the stack is sent the first time. Sets s->last_index. */
static __always_inline __u64 deleter_of(void *ctx, struct pagecache_lean_scratch *s, int reclaim, __u32 pid, __u32 tid,
					__u64 dev, __u64 ino, __u64 now, const char *comm)
{
	if (!reclaim && s->last_deleter && s->last_tid == tid && s->last_dev == dev && s->last_ino == ino &&
	    now - s->last_ts < BURST_NS) {
		s->last_ts = now;
		return s->last_deleter;
	}
	struct pagecache_reclaim_batch *batch = 0;
	if (reclaim && reclaim_batches) {
		batch = bpf_task_storage_get(&pagecache_reclaim_batch, bpf_get_current_task_btf(), 0,
					     BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (batch && batch->valid) {
			s->last_deleter = 0;
			s->last_index = batch->index;
			return batch->deleter;
		}
	}
	long n = bpf_get_stack(ctx, s->e.stack, sizeof(s->e.stack), 0);
	__u32 len = n > 0 ? n : 0;
	__u64 h = 0xcbf29ce484222325ULL;
	for (int i = 0; i < PAGECACHE_STACK_MAX; i++) {
		if (i >= len / 8)
			break;
		h = (h ^ s->e.stack[i]) * 0x100000001b3ULL;
	}
	__u64 d = (h & ((1ULL << PAGECACHE_KIND_SHIFT) - 1)) | ((__u64)comm_kind(comm) << PAGECACHE_KIND_SHIFT);
	if (!d || d == PAGECACHE_DELETER_UNKNOWN)
		d = 1;
	s->last_deleter = reclaim ? 0 : d; /* a reclaim stack is never lent to a later deletion */
	s->last_index = deleter_index(d);
	if (batch) {
		batch->deleter = d;
		batch->index = s->last_index;
		batch->valid = 1;
	}
	s->last_tid = tid;
	s->last_dev = dev;
	s->last_ino = ino;
	s->last_ts = now;

	__u8 one = 1;
	long err = bpf_map_update_elem(&pagecache_stacks_seen, &d, &one, BPF_NOEXIST);
	if (err == -17 /* EEXIST: sent before */)
		return d;
	if (err)
		overflow(PC_OVERFLOW_STACKS); /* sent again later: the loader keeps the first */
	fill_hdr(&s->e.hdr, PAGECACHE_STACK, now, pid, tid);
	s->e.deleter = d;
	s->e.stack_len = len;
	s->e.pad = 0;
	__u64 size = __builtin_offsetof(struct pagecache_stack_event, stack) + len;
	if (size > sizeof(s->e))
		size = sizeof(s->e);
	s->e.hdr.size = size;
	output_event(&s->e, size);
	return d;
}

/* One folio's walk over its pages, chunk by chunk. The per-page step is a
 * global function: the verifier checks it once, on its own, and the walk's
 * loops stay a few instructions per page (inlined, the step's branches
 * multiplied per iteration beyond what the verifier accepts). Additions are
 * counted in runs of pages with the same outcome (first load, or the same
 * deleter before), one totals update each. */
#define PAGECACHE_FOLIO_MAX 512 /* pages of the largest page-cache folio (PMD order on x86_64) */

struct page_walk {
	__u64 dev, ino, now, cgroup, deleter;
	__u64 run_deleter, run_pages;
	__u32 now_us;                /* pc_chunk_val's unit: us since the run's start + 1 */
	__u32 pid, tid, why, events; /* events: 1 until the folio's first totals update */
	__u8 index, pad[3];          /* deletions: the deleter's index */
};

static __always_inline void total_add(struct page_walk *w, __u32 op, __u64 deleter, __u64 pages, const char *comm)
{
	struct pc_total_key k = {};
	k.dev = w->dev;
	k.ino = w->ino;
	k.cgroup = w->cgroup;
	k.deleter = deleter;
	k.op = op;
	if (comm)
		__builtin_memcpy(k.comm, comm, SYSPGO_COMM_LEN);
	struct pc_total_val *v = bpf_map_lookup_elem(&pagecache_totals, &k);
	if (!v) {
		struct pc_total_val z = {0, 0, w->now};
		bpf_map_update_elem(&pagecache_totals, &k, &z, BPF_NOEXIST); /* or another CPU made it */
		v = bpf_map_lookup_elem(&pagecache_totals, &k);
		if (!v) {
			overflow(PC_OVERFLOW_TOTALS);
			return;
		}
	}
	__sync_fetch_and_add(&v->pages, pages);
	__sync_fetch_and_add(&v->events, w->events);
	w->events = 0;

	struct pc_series_key sk = {(__u32)((w->now - run_start_ns) / PAGECACHE_SLICE_NS), op};
	__u64 *n = bpf_map_lookup_elem(&pagecache_series, &sk);
	if (!n) {
		__u64 zero = 0;
		bpf_map_update_elem(&pagecache_series, &sk, &zero, BPF_NOEXIST);
		n = bpf_map_lookup_elem(&pagecache_series, &sk);
		if (!n) {
			overflow(PC_OVERFLOW_SERIES);
			return;
		}
	}
	__sync_fetch_and_add(n, pages);
}

static __always_inline void flush_run(struct page_walk *w)
{
	if (w->run_pages)
		total_add(w, w->run_deleter ? PAGECACHE_OP_REFAULT : PAGECACHE_OP_ADD, w->run_deleter, w->run_pages, 0);
	w->run_pages = 0;
}

/* The chunk holding page idx of the walk's file, made if new (in the spare
 * map when pagecache_chunks cannot); NULL if both are full. */
static __always_inline struct pc_chunk_val *chunk_of(struct page_walk *w, __u64 idx)
{
	struct pc_chunk_key k = {w->dev, w->ino, idx >> PAGECACHE_CHUNK_SHIFT};
	struct pc_chunk_val *v = bpf_map_lookup_elem(&pagecache_chunks, &k);
	if (v)
		return v;
	v = bpf_map_lookup_elem(&pagecache_chunks_spare, &k);
	if (v)
		return v;
	__u32 zero = 0;
	struct pc_chunk_val *z = bpf_map_lookup_elem(&pagecache_zero_chunk, &zero);
	if (!z)
		return 0;
	bpf_map_update_elem(&pagecache_chunks, &k, z, BPF_NOEXIST); /* or another CPU made it */
	v = bpf_map_lookup_elem(&pagecache_chunks, &k);
	if (v)
		return v;
	bpf_map_update_elem(&pagecache_chunks_spare, &k, z, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&pagecache_chunks_spare, &k);
	if (!v)
		overflow(PC_OVERFLOW_CHUNKS);
	return v;
}

/* Page idx added: first load or refault, and its run. A page whose chunk
 * could not be kept (v NULL: the map is full) counts as a first load. */
__noinline int add_page(struct page_walk *w, struct pc_chunk_val *v, __u64 idx)
{
	if (!w)
		return 0;
	__u32 slot = idx & (PAGECACHE_CHUNK_PAGES - 1);
	__u64 deleter = 0;
	if (v) {
		if (!v->first_us[slot]) {
			v->first_us[slot] = w->now_us;
			v->pid[slot] = w->pid;
			v->tid[slot] = w->tid;
			v->why[slot] = w->why;
		}
		__u32 g = v->gone[slot];
		if (g) {
			__u64 *h = bpf_map_lookup_elem(&pagecache_deleter_hash, &g);
			deleter = g < PAGECACHE_DELETERS && h && *h ? *h : PAGECACHE_DELETER_UNKNOWN;
			if ((deleter >> PAGECACHE_KIND_SHIFT) == PAGECACHE_KIND_KDAMOND && v->load_us[slot]) {
				struct pagecache_reuse_event *e = reserve_event(PAGECACHE_REUSE, sizeof(*e), w->now,
										w->pid, w->tid);
				if (e) {
					e->dev = w->dev;
					e->ino = w->ino;
					e->index = idx;
					e->reuse_ns = (__u64)(w->now_us - v->load_us[slot]) * 1000;
					submit_event(e);
				}
			}
			int known = 0;
			for (int j = 0; j < PAGECACHE_REFAULT_KEYS; j++) {
				if (v->refaults[slot][j] == g) {
					known = 1;
					break;
				}
				if (!v->refaults[slot][j]) {
					v->refaults[slot][j] = g;
					known = 1;
					break;
				}
			}
			if (!known)
				v->more_refaults |= 1ULL << slot;
			v->gone[slot] = 0;
		}
		v->load_us[slot] = w->now_us;
	}
	if (w->run_pages && deleter != w->run_deleter)
		flush_run(w);
	w->run_deleter = deleter;
	w->run_pages += 1;
	return 0;
}

__noinline int delete_page(struct page_walk *w, struct pc_chunk_val *v, __u64 idx)
{
	if (!w || !v)
		return 0;
	v->gone[idx & (PAGECACHE_CHUNK_PAGES - 1)] = w->index;
	return 0;
}

/* Pages idx .. idx + n - 1, all in chunk v (NULL: not kept, the map is full). */
__noinline int walk_chunk(struct page_walk *w, struct pc_chunk_val *v, __u64 idx, __u32 n, __u32 add)
{
	for (__u32 i = 0; i < PAGECACHE_CHUNK_PAGES && i < n; i++) {
		if (add)
			add_page(w, v, idx + i);
		else
			delete_page(w, v, idx + i);
	}
	return 0;
}

static __always_inline void lean_event(void *ctx, struct folio *folio, __u32 type, struct file_key *f,
				       __u64 page_cg, __u32 why, __u32 pid, __u32 tid, __u64 now)
{
	__u32 zero = 0;
	struct pagecache_lean_scratch *s = bpf_map_lookup_elem(&pagecache_lean_scratch, &zero);
	if (!s)
		return;
	struct page_walk w = {};
	w.dev = f->dev;
	w.ino = f->ino;
	w.now = now;
	__u64 us = (now - run_start_ns) / 1000 + 1;
	w.now_us = us < 0xffffffffULL ? us : 0xffffffffULL; /* past 71 minutes, times read as 71 minutes */
	w.cgroup = page_cg;
	w.pid = pid;
	w.tid = tid;
	w.why = why;
	w.events = 1;
	__u64 first = folio->index;
	__u32 pages = folio_pages(folio);
	if (pages > PAGECACHE_FOLIO_MAX)
		pages = PAGECACHE_FOLIO_MAX;
	char comm[SYSPGO_COMM_LEN];
	if (type == PAGECACHE_ADD) {
		s->last_deleter = 0; /* an addition ends a burst of deletions, as in --detail full */
	} else {
		bpf_get_current_comm(comm, sizeof(comm));
		int reclaim = bpf_get_current_task_btf()->flags & PF_MEMALLOC;
		w.deleter = deleter_of(ctx, s, reclaim, pid, tid, f->dev, f->ino, now, comm);
		w.index = s->last_index;
	}
	/* Chunk by chunk: a folio is aligned to its size, so it fills whole
	 * chunks or lies inside one. */
	__u32 per_chunk = pages < PAGECACHE_CHUNK_PAGES ? pages : PAGECACHE_CHUNK_PAGES;
	for (__u32 c = 0; c < PAGECACHE_FOLIO_MAX / PAGECACHE_CHUNK_PAGES; c++) {
		if (c * PAGECACHE_CHUNK_PAGES >= pages)
			break;
		__u64 idx = first + c * PAGECACHE_CHUNK_PAGES;
		walk_chunk(&w, chunk_of(&w, idx), idx, per_chunk, type == PAGECACHE_ADD);
	}
	if (type == PAGECACHE_ADD)
		flush_run(&w);
	else
		total_add(&w, PAGECACHE_OP_DELETE, w.deleter, pages, comm);
}

static __always_inline int page_event(void *ctx, struct folio *folio, __u32 type)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 pid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	if (pid == self_tgid)
		return 0;
	struct file_key k;
	mapping_file(folio->mapping, &k.dev, &k.ino);
	__u64 now = bpf_ktime_get_ns();
	__u64 page_cg = folio_memcg(folio, now);

	__u32 why = 0;
	if (is_target(pid))
		why |= PAGECACHE_WHY_TARGET;
	if (bpf_map_lookup_elem(&pagecache_files, &k))
		why |= PAGECACHE_WHY_FILE;
	if (page_cg && bpf_map_lookup_elem(&pagecache_memcgs, &page_cg))
		why |= PAGECACHE_WHY_MEMCG;
	if (!why)
		return 0;
	if (pagecache_only_own && why == PAGECACHE_WHY_MEMCG) {
		struct address_space *m = folio->mapping;
		if (!m || m->host->i_uid.val != pagecache_own_uid) {
			__sync_fetch_and_add(&pagecache_left_out, 1);
			return 0;
		}
	}

	__u64 task_cg = task_memcg(now);
	/* Only what the tree brings in marks a file as its own: a deletion by
	 * the tree (truncate, drop_caches) may name every file in the cache. */
	if ((why & PAGECACHE_WHY_TARGET) && type == PAGECACHE_ADD) {
		note_file(k.dev, k.ino);
		note_memcg(task_cg);
	}

	if (lean) {
		lean_event(ctx, folio, type, &k, page_cg, why, pid, tid, now);
		return 0;
	}

	__u32 zero = 0;
	struct pagecache_event *e = bpf_map_lookup_elem(&pagecache_scratch, &zero);
	if (!e)
		return 0;
	/* A kernel stack costs about 4 us. Reclaim takes one per deletion: it
	 * is what names the reclaim path. Any other deletion (truncation,
	 * unlink, invalidation, drop_caches) that follows one of the same file
	 * by the same task on this CPU within 10 ms reuses the stack still in
	 * the pagecache_scratch buffer from it, so a run of them shares the first one's:
	 * a 100 MB truncate takes one stack, not 25,000. */
	int reclaim = type == PAGECACHE_DELETE && (bpf_get_current_task_btf()->flags & PF_MEMALLOC);
	int shared = type == PAGECACHE_DELETE && !reclaim && e->hdr.type == PAGECACHE_DELETE && e->stack_len &&
		     e->hdr.tid == tid && e->dev == k.dev && e->ino == k.ino && now - e->hdr.ts < BURST_NS;
	fill_hdr(&e->hdr, type, now, pid, tid);
	e->dev = k.dev;
	e->ino = k.ino;
	e->index = folio->index;
	e->pages = folio_pages(folio);
	e->task_cgroup = task_cg;
	e->page_cgroup = page_cg;
	e->why = why | (shared ? PAGECACHE_STACK_SHARED : 0);
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	if (type != PAGECACHE_DELETE) {
		e->stack_len = 0;
	} else if (!shared) {
		long n = bpf_get_stack(ctx, e->stack, sizeof(e->stack), 0);
		e->stack_len = n > 0 ? n : 0;
	}
	__u64 size = __builtin_offsetof(struct pagecache_event, stack) + e->stack_len;
	if (size > sizeof(*e))
		size = sizeof(*e);
	e->hdr.size = size;
	output_event(e, size);
	if (reclaim)
		e->stack_len = 0; /* a reclaim stack is never lent to a later deletion */
	return 0;
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(pagecache_add, struct folio *folio)
{
	return page_event(ctx, folio, PAGECACHE_ADD);
}

SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(pagecache_delete, struct folio *folio)
{
	return page_event(ctx, folio, PAGECACHE_DELETE);
}

/* The end of the current task's reclaim batch (pagecache_reclaim_batch). */
static __always_inline int end_reclaim_batch(void)
{
	struct pagecache_reclaim_batch *b =
		bpf_task_storage_get(&pagecache_reclaim_batch, bpf_get_current_task_btf(), 0, 0);
	if (b)
		b->valid = 0;
	return 0;
}

/* One program per tracepoint that ends a batch, named pagecache_<tracepoint>. */
#define RECLAIM_BATCH_END(tp)                 \
	SEC("tp_btf/" #tp)                    \
	int BPF_PROG(pagecache_##tp)          \
	{                                     \
		return end_reclaim_batch();   \
	}

RECLAIM_BATCH_END(mm_vmscan_lru_isolate)
RECLAIM_BATCH_END(mm_shrink_slab_start)
RECLAIM_BATCH_END(mm_shrink_slab_end)
RECLAIM_BATCH_END(mm_vmscan_reclaim_pages)
RECLAIM_BATCH_END(mm_vmscan_direct_reclaim_end)
RECLAIM_BATCH_END(mm_vmscan_memcg_reclaim_end)

/* Where the traced tree touches cached pages without adding any. Returns
 * whether the current task is traced. */
static __always_inline int touched(struct address_space *mapping)
{
	if (!is_target(bpf_get_current_pid_tgid() >> 32))
		return 0;
	__u64 dev, ino;
	mapping_file(mapping, &dev, &ino);
	note_file(dev, ino);
	return 1;
}

SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(pagecache_get_pages, struct address_space *mapping, unsigned long first,
	     unsigned long last)
{
	touched(mapping);
	return 0;
}

/* Faults also record the task's memory cgroup: a program whose files are
 * all cached already maps them at start-up and never adds a page, yet its
 * cgroup's reclaim is what the run must show. Read syscalls, far more
 * frequent, skip the kfunc. */
SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(pagecache_map_pages, struct address_space *mapping, unsigned long first,
	     unsigned long last)
{
	if (touched(mapping))
		note_memcg(task_memcg(bpf_ktime_get_ns()));
	return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(pagecache_fault, struct address_space *mapping, unsigned long index)
{
	if (touched(mapping))
		note_memcg(task_memcg(bpf_ktime_get_ns()));
	return 0;
}

static __always_inline void ra_event(struct inode *inode, __u32 kind, __u64 index, __u64 pages,
				     __u64 async_pages)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	if (!is_target(pid_tgid >> 32))
		return;
	struct pagecache_ra_event *e = reserve_event(PAGECACHE_READAHEAD, sizeof(*e),
						     bpf_ktime_get_ns(), pid_tgid >> 32,
						     (__u32)pid_tgid);
	if (!e)
		return;
	e->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	e->ino = BPF_CORE_READ(inode, i_ino);
	e->index = index;
	e->pages = pages;
	e->async_pages = async_pages;
	e->kind = kind;
	e->pad = 0;
	submit_event(e);
}

SEC("tp_btf/page_cache_sync_ra")
int BPF_PROG(pagecache_sync_ra, struct inode *inode, unsigned long index,
	     struct file_ra_state *ra, unsigned long req_count)
{
	ra_event(inode, PAGECACHE_RA_SYNC, index, req_count, 0);
	return 0;
}

SEC("tp_btf/page_cache_async_ra")
int BPF_PROG(pagecache_async_ra, struct inode *inode, unsigned long index,
	     struct file_ra_state *ra, unsigned long req_count)
{
	ra_event(inode, PAGECACHE_RA_ASYNC, index, req_count, 0);
	return 0;
}

SEC("tp_btf/page_cache_ra_order")
int BPF_PROG(pagecache_ra_order, struct inode *inode, unsigned long index,
	     struct file_ra_state *ra)
{
	ra_event(inode, PAGECACHE_RA_WINDOW, index, BPF_CORE_READ(ra, size),
		 BPF_CORE_READ(ra, async_size));
	return 0;
}

SEC("tp_btf/page_cache_ra_unbounded")
int BPF_PROG(pagecache_ra_unbounded, struct inode *inode, unsigned long index,
	     unsigned long nr_to_read, unsigned long lookahead)
{
	ra_event(inode, PAGECACHE_RA_UNBOUNDED, index, nr_to_read, lookahead);
	return 0;
}
