// SPDX-License-Identifier: GPL-2.0
/* ===- cpu.bpf.c - cpu-clock samples of the traced tree ---------------=== */
/* Runs on the software cpu-clock perf event (one per CPU, opened by the
 * loader): a sample of a traced thread records its IP and both stacks. The
 * kernel maps an executable and its loader at exec without an mmap call,
 * and a process may exit before userspace could read /proc/PID/maps, so the
 * mappings are taken here: each vma a user frame falls in is looked up with
 * bpf_find_vma and reported the first time its (pid, start) is seen, with
 * the file's device, inode and path. */
#define GROUP cpu
#define GROUP_ID SYSPGO_GROUP_CPU
#include "common.bpf.h"
#include "cpu.h"


#define PAGE_SHIFT 12
#define PATH_DEPTH 40        /* dentries walked per path */
#define VMA_LOOKUPS 6        /* distinct vmas looked up per sample */

struct vma_key {
	__u32 pid;
	__u32 pad;
	__u64 start;
};

/* (pid, vm_start) -> inode already reported; LRU so exited processes age out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, struct vma_key);
	__type(value, __u64);
} cpu_seen_vmas SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_mapping_event);
} cpu_mapping_scratch SEC(".maps");

/* The vmas this CPU's samples found recently, already reported: a frame in
 * one of them needs no bpf_find_vma (which takes the mmap lock and walks the
 * vma tree; it was most of a sample's 7 us at 10 kHz). Entries expire, so
 * a range unmapped and mapped again to another file is looked up anew
 * within VMA_CACHE_NS. */
#define VMA_CACHE 8
#define VMA_CACHE_NS 100000000ULL
struct cpu_vma_cache {
	__u64 lo[VMA_CACHE], hi[VMA_CACHE], ts[VMA_CACHE];
	__u32 pid[VMA_CACHE];
	__u32 next;
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_vma_cache);
} cpu_vma_cache SEC(".maps");

struct vma_info {
	__u64 start, end, pgoff;
	__u64 file;         /* struct file *, read with probe reads only */
};

static long vma_found(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_info *v = data;
	v->start = vma->vm_start;
	v->end = vma->vm_end;
	v->pgoff = vma->vm_pgoff;
	v->file = (__u64)vma->vm_file;
	return 0;
}

struct path_walk {
	__u64 dentry;       /* struct dentry *: the next name to prepend */
	__u64 vfs;          /* struct vfsmount * it is on */
	__u64 mnt;          /* the struct mount around vfs */
	__u32 pos;          /* the path starts at e->path[pos] */
	__u32 pad;
};

/* One step of the walk from a file to the root: prepends one name (copied
 * at pos minus d_name.len, then a '/'), or crosses a mount point upwards.
 * Returns 1 to go on, 0 when done. A global function, so the verifier
 * checks it once rather than along every path through the walk. */
__noinline int cpu_path_step(struct path_walk *w, struct cpu_mapping_event *e)
{
	if (!w || !e)
		return 0;
	struct dentry *d = (struct dentry *)w->dentry;
	struct vfsmount *vfs = (struct vfsmount *)w->vfs;
	struct mount *m = (struct mount *)w->mnt;
	if (d == BPF_CORE_READ(vfs, mnt_root)) {
		struct mount *up = BPF_CORE_READ(m, mnt_parent);
		if (up == m) { /* the namespace root */
			e->flags &= ~CPU_MAP_TRUNCATED;
			return 0;
		}
		w->dentry = (__u64)BPF_CORE_READ(m, mnt_mountpoint);
		w->mnt = (__u64)up;
		w->vfs = (__u64)up + bpf_core_field_offset(struct mount, mnt);
		return 1;
	}
	struct dentry *parent = BPF_CORE_READ(d, d_parent);
	if (parent == d) { /* a root that is not its mount's: a detached tree */
		e->flags &= ~CPU_MAP_TRUNCATED;
		return 0;
	}
	__u32 len = BPF_CORE_READ(d, d_name.len), pos = w->pos;
	if (len >= CPU_NAME_MAX || len + 1 > pos)
		return 0;
	pos -= len;
	bpf_probe_read_kernel(&e->path[pos & (CPU_PATH_MAX - 1)], len & (CPU_NAME_MAX - 1),
			      BPF_CORE_READ(d, d_name.name));
	pos -= 1;
	e->path[pos & (CPU_PATH_MAX - 1)] = '/';
	w->pos = pos;
	w->dentry = (__u64)parent;
	return 1;
}

/* Writes the path of f so it ends at e->path[CPU_PATH_MAX]. */
static __always_inline void build_path(struct cpu_mapping_event *e, struct file *f)
{
	struct vfsmount *vfs = BPF_CORE_READ(f, f_path.mnt);
	struct path_walk w = {
		.dentry = (__u64)BPF_CORE_READ(f, f_path.dentry),
		.vfs = (__u64)vfs,
		.mnt = (__u64)container_of(vfs, struct mount, mnt),
		.pos = CPU_PATH_MAX,
	};
	e->flags |= CPU_MAP_TRUNCATED;
	for (int i = 0; i < PATH_DEPTH; i++) {
		if (!cpu_path_step(&w, e))
			break;
	}
	e->path_off = w.pos;
}

/* Verified once on its own (a global function), not once per call site. */
__noinline int report_vma(struct vma_info *v, __u32 pid, __u32 tid, __u64 ts)
{
	if (!v)
		return 0;
	struct file *f = (struct file *)v->file;
	__u64 ino = f ? BPF_CORE_READ(f, f_inode, i_ino) : 0;
	struct vma_key k = {.pid = pid, .start = v->start};
	__u64 *seen = bpf_map_lookup_elem(&cpu_seen_vmas, &k);
	if (seen && *seen == ino)
		return 0;
	bpf_map_update_elem(&cpu_seen_vmas, &k, &ino, BPF_ANY);

	__u32 zero = 0;
	struct cpu_mapping_event *e = bpf_map_lookup_elem(&cpu_mapping_scratch, &zero);
	if (!e)
		return 0;
	e->hdr.size = __builtin_offsetof(struct cpu_mapping_event, path) + CPU_PATH_MAX;
	fill_hdr(&e->hdr, CPU_MAPPING, ts, pid, tid);
	e->start = v->start;
	e->end = v->end;
	e->off = v->pgoff << PAGE_SHIFT;
	e->ino = ino;
	e->dev = 0;
	e->flags = 0;
	e->path_off = CPU_PATH_MAX;
	if (f) {
		e->dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
		build_path(e, f);
	} else {
		struct task_struct *task = bpf_get_current_task_btf();
		if ((__u64)BPF_CORE_READ(task, mm, context.vdso) == v->start)
			e->flags |= CPU_MAP_VDSO;
	}
	output_event(e, __builtin_offsetof(struct cpu_mapping_event, path) + CPU_PATH_MAX);
	return 0;
}

struct vma_walk {
	__u64 lo, hi;       /* the vma found last */
	__u64 ts;
	__u32 pid, tid;
	__u32 lookups;
	__u32 pad;
};

/* One user frame: a lookup only when it leaves the vma found last, since
 * consecutive frames mostly share one. A global function, so the verifier
 * checks it once instead of once per unrolled frame. */
__noinline int frame_vma(struct vma_walk *w, __u64 ip)
{
	if (!w || (ip >= w->lo && ip < w->hi))
		return 0;
	__u32 zero = 0;
	struct cpu_vma_cache *c = bpf_map_lookup_elem(&cpu_vma_cache, &zero);
	if (c) {
		for (int i = 0; i < VMA_CACHE; i++) {
			if (c->pid[i] == w->pid && ip >= c->lo[i] && ip < c->hi[i] && w->ts - c->ts[i] < VMA_CACHE_NS) {
				w->lo = c->lo[i];
				w->hi = c->hi[i];
				return 0;
			}
		}
	}
	if (w->lookups >= VMA_LOOKUPS)
		return 0;
	w->lookups++;
	struct vma_info v = {};
	/* -EBUSY when an earlier unlock is still pending: a later sample retries. */
	if (bpf_find_vma(bpf_get_current_task_btf(), ip, vma_found, &v, 0) || !v.end)
		return 0;
	w->lo = v.start;
	w->hi = v.end;
	report_vma(&v, w->pid, w->tid, w->ts);
	if (c) {
		__u32 i = c->next++ & (VMA_CACHE - 1);
		c->lo[i] = v.start;
		c->hi[i] = v.end;
		c->ts[i] = w->ts;
		c->pid[i] = w->pid;
	}
	return 0;
}

SEC("perf_event")
int cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;
	if (!pid || !is_target(pid))
		return 0;
	struct cpu_sample_event *e = reserve_event(CPU_SAMPLE, sizeof(*e), bpf_ktime_get_ns(), pid, (__u32)id);
	if (!e)
		return 0;
	e->ip = PT_REGS_IP(&ctx->regs);
	e->cpu = bpf_get_smp_processor_id();
	/* The context only allows 8-byte reads of regs; cs is the low bits. */
	__u64 cs = *(volatile __u64 *)((void *)&ctx->regs + __builtin_offsetof(struct pt_regs, cs));
	e->kernel = (cs & 3) == 0; /* CPL 0 */
	long n = e->kernel ? bpf_get_stack(ctx, e->kstack, sizeof(e->kstack), 0) : 0;
	e->kstack_len = n > 0 ? n / sizeof(__u64) : 0;
	n = bpf_get_stack(ctx, e->ustack, sizeof(e->ustack), BPF_F_USER_STACK);
	e->ustack_len = n > 0 ? n / sizeof(__u64) : 0;
	struct vma_walk w = {.ts = e->hdr.ts, .pid = pid, .tid = (__u32)id};
	for (int i = 0; i < CPU_UFRAMES; i++) {
		if (i >= e->ustack_len)
			break;
		frame_vma(&w, e->ustack[i]);
	}
	submit_event(e);
	return 0;
}
