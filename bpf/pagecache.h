/* ===- pagecache.h - page-cache additions, deletions and readahead ----=== */
#ifndef SYSPGO_BPF_PAGECACHE_H
#define SYSPGO_BPF_PAGECACHE_H
#include "common.h"

enum pagecache_event_type {
	PAGECACHE_ADD = 1,        /* filemap:mm_filemap_add_to_page_cache */
	PAGECACHE_DELETE = 2,     /* filemap:mm_filemap_delete_from_page_cache */
	PAGECACHE_READAHEAD = 3,  /* readahead:page_cache_* */
	PAGECACHE_CGROUP = 4,     /* the traced tree is in a memory cgroup not reported before */
	PAGECACHE_STACK = 5,      /* lean: a deletion stack not reported before (pagecache_stack_event) */
	PAGECACHE_REUSE = 6,      /* lean: a page DAMON evicted was added again (pagecache_reuse_event) */
};

/* Why an event was kept (pagecache_event.why). */
enum pagecache_why {
	PAGECACHE_WHY_TARGET = 1, /* the current task is in the traced tree */
	PAGECACHE_WHY_FILE = 2,   /* a file the traced tree has read, mapped or faulted */
	PAGECACHE_WHY_MEMCG = 4,  /* the folio is charged to a limited memory cgroup of the traced tree */
	/* Not a reason: the deletion's stack is that of the first of a run of
	 * deletions of the same file by the same task, each within 10 ms of the
	 * one before (never in reclaim). */
	PAGECACHE_STACK_SHARED = 0x100,
};

#define PAGECACHE_STACK_MAX 64    /* kernel frames kept for a deletion */

/* Variable size: hdr.size covers stack_len bytes of stack[] (0 for adds).
 * hdr.pid/tid are the current task, which for a deletion by reclaim is
 * kswapd or whichever task hit the memory cgroup's limit. */
struct pagecache_event {
	struct syspgo_hdr hdr;
	__u64 dev;                /* s_dev, kernel encoding: major << 20 | minor */
	__u64 ino;
	__u64 index;              /* first page of the folio, in pages */
	__u64 pages;              /* pages in the folio */
	__u64 task_cgroup;        /* current task's memory cgroup id (kernfs id); 0 if unknown */
	__u64 page_cgroup;        /* memory cgroup the folio is charged to; 0 if none */
	__u32 why;                /* PAGECACHE_WHY_* bits */
	__u32 stack_len;          /* bytes used in stack[] */
	char comm[SYSPGO_COMM_LEN];
	__u64 stack[PAGECACHE_STACK_MAX];
};

struct pagecache_cgroup_event {
	struct syspgo_hdr hdr;
	__u64 id;                 /* memory cgroup id (kernfs id) */
};

enum pagecache_ra_kind {
	PAGECACHE_RA_SYNC = 1,      /* page_cache_sync_ra: a read missed the cache */
	PAGECACHE_RA_ASYNC = 2,     /* page_cache_async_ra: a read hit the readahead marker */
	PAGECACHE_RA_WINDOW = 3,    /* page_cache_ra_order: the window being read */
	PAGECACHE_RA_UNBOUNDED = 4, /* page_cache_ra_unbounded: a fixed range (mmap read-around, fadvise) */
};

struct pagecache_ra_event {
	struct syspgo_hdr hdr;
	__u64 dev;
	__u64 ino;
	__u64 index;              /* first page */
	__u64 pages;              /* SYNC/ASYNC: pages the read asked for; WINDOW/UNBOUNDED: pages to read */
	__u64 async_pages;        /* WINDOW: async tail of the window; UNBOUNDED: lookahead; else 0 */
	__u32 kind;               /* PAGECACHE_RA_* */
	__u32 pad;
};

/* ---- The lean tier (collect --detail lean): counted in the kernel. ----
 * Who deleted a page is a "deleter": the 64-bit hash of the deletion's
 * kernel stack, its top two bits the deleting task's kind (by its name,
 * which the analysis also reads: PAGECACHE_KIND_*), never 0. Each hash's
 * stack is sent once (PAGECACHE_STACK); the maps below hold only hashes. */
enum pagecache_kind {
	PAGECACHE_KIND_TASK = 0,   /* any other task */
	PAGECACHE_KIND_KSWAPD = 1, /* comm kswapd* */
	PAGECACHE_KIND_KDAMOND = 2, /* comm kdamond* */
};
#define PAGECACHE_KIND_SHIFT 62

/* Operations counted per (file, cgroup, deleter, comm). */
enum pagecache_op {
	PAGECACHE_OP_ADD = 1,     /* pages added that were not deleted in the run before */
	PAGECACHE_OP_DELETE = 2,  /* pages deleted; deleter and comm are the deleting task's */
	PAGECACHE_OP_REFAULT = 3, /* pages added again; deleter is that of their last deletion */
};

struct pc_total_key {
	__u64 dev;                /* s_dev, kernel encoding */
	__u64 ino;
	__u64 cgroup;             /* memory cgroup the folio is charged to; 0 if none */
	__u64 deleter;            /* see above; 0 for PAGECACHE_OP_ADD */
	__u32 op;                 /* PAGECACHE_OP_* */
	__u32 pad;
	char comm[SYSPGO_COMM_LEN]; /* deleting task (PAGECACHE_OP_DELETE), else zeros */
};

struct pc_total_val {
	__u64 pages;
	__u64 events;             /* folios: the events --detail full would have recorded */
	__u64 first_ts;           /* bpf_ktime_get_ns() of the first */
};

/* Every page of a traced file the run saw added or deleted, in chunks of
 * 64 pages: one map entry per chunk, so a large folio or a read-ahead
 * window costs one map operation, not one per page. Deleters are kept per
 * page as small indexes into pc_deleter_hash (1..PAGECACHE_DELETERS-1;
 * PAGECACHE_DELETERS: past the table's end). */
#define PAGECACHE_CHUNK_SHIFT 6
#define PAGECACHE_CHUNK_PAGES 64
#define PAGECACHE_DELETERS 255
#define PAGECACHE_REFAULT_KEYS 3
/* The deleter of a page whose deleter index was past the table: its stack
 * is unknown (kind 0, every hash bit set; no stack hashes to it). */
#define PAGECACHE_DELETER_UNKNOWN ((1ULL << PAGECACHE_KIND_SHIFT) - 1)

/* The maps whose refused updates pc_overflow counts, by index; the loader
 * writes one run_aggregate row each. */
enum pc_overflow {
	PC_OVERFLOW_CHUNKS, PC_OVERFLOW_TOTALS, PC_OVERFLOW_SERIES, PC_OVERFLOW_STACKS, PC_OVERFLOW_DELETERS,
	PC_OVERFLOW_MAX
};

struct pc_chunk_key {
	__u64 dev;                /* s_dev, kernel encoding */
	__u64 ino;
	__u64 chunk;              /* page index >> PAGECACHE_CHUNK_SHIFT */
};

struct pc_chunk_val {
	__u64 more_refaults;      /* bit per page: came back after more deleters than refaults[] holds */
	__u32 first_us[PAGECACHE_CHUNK_PAGES]; /* first addition, us since the run's start + 1; 0: never added */
	__u32 load_us[PAGECACHE_CHUNK_PAGES];  /* last addition, same unit */
	__u32 pid[PAGECACHE_CHUNK_PAGES];      /* who first added it */
	__u32 tid[PAGECACHE_CHUNK_PAGES];
	__u8 why[PAGECACHE_CHUNK_PAGES];       /* PAGECACHE_WHY_* of that addition */
	__u8 gone[PAGECACHE_CHUNK_PAGES];      /* deleter index of its current absence; 0 while cached */
	__u8 refaults[PAGECACHE_CHUNK_PAGES][PAGECACHE_REFAULT_KEYS]; /* distinct deleter indexes it came back after */
};

/* Pages added, deleted and added again per time slice of the run. */
#define PAGECACHE_SLICE_NS 100000000ULL
struct pc_series_key {
	__u32 slice;              /* (ts - run start) / PAGECACHE_SLICE_NS */
	__u32 op;                 /* PAGECACHE_OP_*; additions are ADD + REFAULT */
};

struct pagecache_stack_event {
	struct syspgo_hdr hdr;
	__u64 deleter;
	__u32 stack_len;          /* bytes used in stack[] */
	__u32 pad;
	__u64 stack[PAGECACHE_STACK_MAX];
};

struct pagecache_reuse_event {
	struct syspgo_hdr hdr;    /* ts: the reload */
	__u64 dev;
	__u64 ino;
	__u64 index;
	__u64 reuse_ns;           /* from the page's previous load to this one */
};
#endif
