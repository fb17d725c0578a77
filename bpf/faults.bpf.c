// SPDX-License-Identifier: GPL-2.0
/* ===- faults.bpf.c - user page faults of the traced tree -------------=== */
/* exceptions:page_fault_user fires on entry to the x86 fault handler, before
 * the kernel looks at the vma, and there is no exit tracepoint (and no
 * kprobe/fexit here), so a fault's outcome has to be pieced together from
 * what the same thread does before it returns to user mode:
 *  - filemap:mm_filemap_map_pages: fault-around tried to map the cached pages
 *    around the fault (16 by default): one fault covers several pages;
 *  - filemap:mm_filemap_fault: fault-around did not map the faulting page, so
 *    the file's ->fault handler ran (page not cached, not uptodate, or a
 *    write fault);
 *  - filemap:mm_filemap_add_to_page_cache by the faulting thread: the page
 *    was not cached and the fault read it (sync mmap read-around): this is
 *    what the kernel counts as a major fault (PGMAJFAULT), so `major` means
 *    "this fault added pages to the page cache".
 * "Still inside the fault" is checked without a syscall hook: a fault saves
 * the user registers at the top of the kernel stack, and the follow-up
 * hooks compare that frame (ip, sp, and orig_ax, which says exception
 * rather than syscall) with the one seen at the fault. Any return to user
 * mode and re-entry (a syscall, another fault) rewrites it. Faults on shmem/tmpfs and swap-ins are not classified
 * (they do not go through filemap_fault); swap is off on these machines. */
#define GROUP faults
#define GROUP_ID SYSPGO_GROUP_FAULTS
#include "common.bpf.h"
#include "faults.h"
#include "mm.bpf.h"


/* The fault each traced thread is in (or was last in). LRU: a thread that
 * exits leaves its entry behind. */
struct fault_state {
	__u64 ts;
	__u64 ip;
	__u64 sp;
	__u64 err;
	__u64 added;   /* FAULTS_ADDED already sent for this fault */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct fault_state);
} faults_faulting SEC(".maps");

struct vma_info {
	__u64 addr;
	__u64 dev;
	__u64 ino;
	__s64 pgoff;
	__u64 vm_start;
	__u64 vm_flags;
};

static long vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_info *v = data;
	v->vm_start = BPF_CORE_READ(vma, vm_start);
	v->vm_flags = BPF_CORE_READ(vma, vm_flags);
	struct file *f = BPF_CORE_READ(vma, vm_file);
	if (!f)
		return 0;
	struct inode *inode = BPF_CORE_READ(f, f_inode);
	v->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	v->ino = BPF_CORE_READ(inode, i_ino);
	v->pgoff = ((v->addr - v->vm_start) >> SYSPGO_PAGE_SHIFT) + BPF_CORE_READ(vma, vm_pgoff);
	return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(faults_user, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 pid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	if (!is_target(pid))
		return 0;
	__u64 now = bpf_ktime_get_ns();

	struct fault_state st = {
		.ts = now,
		.ip = BPF_CORE_READ(regs, ip),
		.sp = BPF_CORE_READ(regs, sp),
		.err = error_code,
	};
	bpf_map_update_elem(&faults_faulting, &tid, &st, BPF_ANY);

	/* Before the fault handler takes mmap_lock; bpf_find_vma only
	 * trylocks it and gives -EBUSY under a writer, leaving pgoff -1. */
	struct vma_info v = {.addr = address, .pgoff = -1};
	bpf_find_vma(bpf_get_current_task_btf(), address, vma_cb, &v, 0);

	struct faults_fault_event *e = reserve_event(FAULTS_FAULT, sizeof(*e), now, pid, tid);
	if (!e)
		return 0;
	e->addr = address;
	e->ip = st.ip;
	e->error_code = error_code;
	e->dev = v.dev;
	e->ino = v.ino;
	e->pgoff = v.pgoff;
	e->vm_start = v.vm_start;
	e->vm_flags = v.vm_flags;
	submit_event(e);
	return 0;
}

/* The fault the current thread is inside of, or 0. */
static __always_inline struct fault_state *current_fault(__u32 tid)
{
	struct fault_state *st = bpf_map_lookup_elem(&faults_faulting, &tid);
	if (!st)
		return 0;
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	/* The IDT entry code sets orig_ax to -1 while handling an exception (a
	 * syscall keeps its number there); FRED entry (6.9+) leaves the error
	 * code in it. */
	__u64 orig_ax = BPF_CORE_READ(r, orig_ax);
	if (BPF_CORE_READ(r, ip) != st->ip || BPF_CORE_READ(r, sp) != st->sp ||
	    (orig_ax != (__u64)-1 && orig_ax != st->err))
		return 0;
	return st;
}

static __always_inline void follow(__u32 type, struct fault_state *st, __u64 dev, __u64 ino,
				   __u64 first, __u64 last)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct faults_follow_event *e = reserve_event(type, sizeof(*e), bpf_ktime_get_ns(),
						      pid_tgid >> 32, (__u32)pid_tgid);
	if (!e)
		return;
	e->fault_ts = st->ts;
	e->dev = dev;
	e->ino = ino;
	e->first = first;
	e->last = last;
	submit_event(e);
}

/* A filemap hook on a mapping: part of the current fault, if any. */
static __always_inline void follow_mapping(__u32 type, struct address_space *mapping, __u64 first,
					   __u64 last)
{
	struct fault_state *st = current_fault((__u32)bpf_get_current_pid_tgid());
	if (!st)
		return;
	__u64 dev, ino;
	mapping_file(mapping, &dev, &ino);
	follow(type, st, dev, ino, first, last);
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(faults_filemap, struct address_space *mapping, unsigned long index)
{
	follow_mapping(FAULTS_FILEMAP, mapping, index, index);
	return 0;
}

SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(faults_map_pages, struct address_space *mapping, unsigned long first,
	     unsigned long last)
{
	follow_mapping(FAULTS_MAP_PAGES, mapping, first, last);
	return 0;
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(faults_added, struct folio *folio)
{
	struct fault_state *st = current_fault((__u32)bpf_get_current_pid_tgid());
	if (!st || st->added)
		return 0;
	st->added = 1; /* one event marks the fault major; the pagecache group has every page */
	__u64 dev, ino;
	mapping_file(folio->mapping, &dev, &ino);
	__u64 index = folio->index;
	follow(FAULTS_ADDED, st, dev, ino, index, index + folio_pages(folio) - 1);
	return 0;
}
