/* ===- pagecache.h - page-cache additions, deletions and readahead ----=== */
#ifndef SYSPGO_BPF_PAGECACHE_H
#define SYSPGO_BPF_PAGECACHE_H
#include "common.h"

enum pagecache_event_type {
	PAGECACHE_ADD = 1,        /* filemap:mm_filemap_add_to_page_cache */
	PAGECACHE_DELETE = 2,     /* filemap:mm_filemap_delete_from_page_cache */
	PAGECACHE_READAHEAD = 3,  /* readahead:page_cache_* */
	PAGECACHE_CGROUP = 4,     /* the traced tree is in a memory cgroup not reported before */
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
#endif
