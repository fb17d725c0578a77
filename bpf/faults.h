/* ===- faults.h - user page-fault events -------------------------------=== */
/* One FAULTS_FAULT per user page fault, then zero or more follow-up events
 * from the same thread while it is still inside that fault; each follow-up
 * names its fault by fault_ts (the fault's hdr.ts) and the loader folds it
 * into the fault's row. */
#ifndef SYSPGO_BPF_FAULTS_H
#define SYSPGO_BPF_FAULTS_H
#include "common.h"

enum faults_event_type {
	FAULTS_FAULT = 1,      /* exceptions:page_fault_user */
	FAULTS_FILEMAP = 2,    /* filemap:mm_filemap_fault: fault-around did not map the page */
	FAULTS_MAP_PAGES = 3,  /* filemap:mm_filemap_map_pages: the fault-around range */
	FAULTS_ADDED = 4,      /* the fault added pages to the page cache: it waited for I/O */
};

struct faults_fault_event {
	struct syspgo_hdr hdr;
	__u64 addr;            /* faulting user address */
	__u64 ip;              /* user instruction pointer */
	__u64 error_code;      /* x86 X86_PF_* bits */
	__u64 dev;             /* mapped file's s_dev (major << 20 | minor); 0 if anonymous */
	__u64 ino;
	__s64 pgoff;           /* file page index of addr; -1 if anonymous or no vma */
	__u64 vm_start;        /* start of the vma (0 if none found) */
	__u64 vm_flags;        /* VM_* bits of the vma */
};

/* FAULTS_FILEMAP, FAULTS_MAP_PAGES, FAULTS_ADDED. */
struct faults_follow_event {
	struct syspgo_hdr hdr;
	__u64 fault_ts;        /* hdr.ts of the fault this belongs to */
	__u64 dev;             /* s_dev, kernel encoding */
	__u64 ino;
	__u64 first;           /* page index (FILEMAP, ADDED) or first of the range (MAP_PAGES) */
	__u64 last;            /* last page of the range (MAP_PAGES); first + pages - 1 (ADDED) */
};
#endif
