// SPDX-License-Identifier: GPL-2.0
/* ===- fileio.bpf.c - file-I/O syscalls of the traced tree ------------=== */
/* No kprobes or fentry on this kernel, so the raw syscall tracepoints carry
 * everything: both run on every syscall of every task, and a task outside
 * the recording leaves at their first test. sys_enter notes the time (it
 * does the least it can); sys_exit reads the arguments
 * from pt_regs, resolves the fd to its struct file (device, inode, position)
 * and emits one event. close is the exception: its file is resolved at entry,
 * before the fd goes away. Opens walk the dentry
 * chain of the new file so the path is absolute and real, whatever the
 * program passed and whatever happens to the file later. Any syscall of a
 * thread of the tree that ran instance_min_ns or more on a CPU in the
 * kernel (getrandom, munmap, a large write's copy) is also sent, with its
 * on-CPU time: a pause no off-CPU interval shows. */
#define GROUP fileio
#define GROUP_ID SYSPGO_GROUP_FILEIO
#include "common.bpf.h"
#include "fileio.h"
#include "syscalls.h"
#include "hist.bpf.h"


/* A pointer read as a plain value (the fd table's entry) made a typed kernel
 * pointer again: fields then load directly, each a guarded load, where
 * BPF_CORE_READ costs a bpf_probe_read_kernel call per hop. The verifier
 * turns the kfunc into a no-op (Linux 6.2+). Declared here and in no other
 * group: Debian's bpftool cannot link two objects that declare the same
 * kfunc (bpf/CMakeLists.txt). */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;
#define kernel_cast(ptr, type) ((type *)bpf_rdonly_cast((void *)(ptr), bpf_core_type_id_kernel(type)))

#define MAP_ANONYMOUS 0x20
#define O_TRUNC 01000

enum { K_NONE, K_IO, K_IOV, K_POS_IO, K_POS_IOV, K_SYNC, K_RANGE, K_CLOSE, K_OPEN, K_MMAP, K_LOOKUP };

static __always_inline int classify(long id)
{
	switch (id) {
	case NR_read: case NR_write: return K_IO;
	case NR_readv: case NR_writev: return K_IOV;
	case NR_pread64: case NR_pwrite64: return K_POS_IO;
	case NR_preadv: case NR_pwritev: case NR_preadv2: case NR_pwritev2: return K_POS_IOV;
	case NR_fsync: case NR_fdatasync: return K_SYNC;
	case NR_sync_file_range: return K_RANGE;
	case NR_close: return K_CLOSE;
	case NR_open: case NR_openat: case NR_openat2: return K_OPEN;
	case NR_mmap: return K_MMAP;
	case NR_stat: case NR_lstat: case NR_access: case NR_execve: case NR_readlink:
	case NR_newfstatat: case NR_readlinkat: case NR_faccessat: case NR_execveat:
	case NR_statx: case NR_faccessat2: return K_LOOKUP;
	}
	return K_NONE;
}

/* What sys_enter leaves for sys_exit. The arguments need not be saved: on
 * x86-64 the argument registers in pt_regs survive the syscall, so sys_exit
 * reads them. Only the entry time (and, for close, the file it closes) must
 * be kept; task-local storage is cheaper than a hash keyed by tid. */
struct fileio_inflight {
	__u64 ts;         /* 0 when no call is in flight */
	__u32 nr;
	__u32 pad;
	struct fileio_file file; /* close only: resolved before the fd goes away */
	/* Lean tier: the pages the thread's last read or write touched, all
	 * marked in fileio_touched; a call within them needs no lookup there
	 * (7 calls in 8 of a sequential stream of 512-byte writes). */
	__u64 touched_dev, touched_ino, touched_lo, touched_hi;
	__u32 touched_version, touched_write;
	__u64 runtime;    /* the task's CPU time at entry (cpu_time) */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct fileio_inflight);
} fileio_inflight SEC(".maps");

/* ---- The lean tier (--detail lean) ----
 * Reads, writes, syncs and closes are counted per (file, syscall) in
 * fileio_totals: calls, errors, bytes, time and a log2 latency histogram,
 * exact, drained by the loader. A call still goes to the ring buffer as an
 * event when an analysis needs that instance:
 *  - it took instance_min_ns or more (the sched group's off-CPU threshold,
 *    so every call an off-CPU interval it records can fall in is kept);
 *  - it is a sync (fsync, fdatasync, sync_file_range);
 *  - it is the first call of its (file, syscall) in the run, or of a burst:
 *    it began burst_gap_ns or more (ten times instance_min_ns) after the
 *    last call of its (file, syscall) on this CPU ended, so the marks a
 *    loop leaves (a progress line a step) stay for the stall analysis to
 *    find its steps by; a loop faster than that has no steps worth
 *    finding between stalls of that length;
 *  - it read (or wrote) a page of a regular file or block device that no
 *    read (write) of the run had touched (fileio_touched), so access order
 *    and prefetch plans see every first touch.
 * Opens, lookups and mmaps are always sent. What the maps refuse is counted
 * in fileio_overflow; a refused touch sends the call (more rows, nothing
 * lost). */
const volatile __u64 instance_min_ns = 1000000;
const volatile __u64 burst_gap_ns = 10000000;

/* Per CPU: a count needs no atomic instruction (six a call cost more than
 * the ring-buffer record they replace); the loader sums the CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1 << 18);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fileio_total_key);
	__type(value, struct fileio_total_val);
} fileio_totals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 17); /* 8M pages (32 GiB of files); its 2 MiB of buckets are made at load */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fileio_touch_key);
	__type(value, __u64);
} fileio_touched SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FILEIO_OVERFLOW_MAX);
	__type(key, __u32);
	__type(value, __u64);
} fileio_overflow SEC(".maps");

/* Opens with O_TRUNC per file: its content starts again, and so do its
 * first touches (a checkpoint rewritten in place each step). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fileio_file_ref);
	__type(value, __u32);
} fileio_truncations SEC(".maps");

/* Per CPU, the totals of the keys this CPU counted last, written back to
 * fileio_totals when another key needs their slot: a call whose key sits
 * in its slot, as each of a loop's calls do, needs no lookup in the hash
 * map (whose hashing of the key was a third of a counted call's cost).
 * The slot holds the CPU's whole value, so every rule above reads and
 * writes exactly what it did in fileio_totals; the loader reads the slots
 * for the values they hold (collect/fileio_group.cc). Programs on one CPU
 * never run at once (the tracepoint's probe disables preemption). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FILEIO_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct fileio_total_slot);
} fileio_total_cache SEC(".maps");

/* A new total's value (never written: all zeros; too large for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fileio_total_val);
} fileio_zero_total SEC(".maps");

/* Scratch for building an open event (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fileio_open_event);
} fileio_open_scratch SEC(".maps");

static __always_inline struct file *fd_to_file(struct task_struct *task, int fd)
{
	struct fdtable *fdt = task->files->fdt; /* direct BTF loads: no helper calls */
	if (fd < 0 || (unsigned int)fd >= fdt->max_fds)
		return 0;
	/* Cast to void, the array is untrusted read-only memory that loads
	 * directly at a variable offset (a fault reads 0, as a failed probe
	 * read left f): a probe read was a helper call on every I/O syscall. */
	struct file **fds = bpf_rdonly_cast(fdt->fd, 0);
	return fds[fd];
}

/* Direct loads through the file (kernel_cast): this runs on every file
 * syscall of the tree, and a helper call per field was a third of its cost. */
static __always_inline void file_info(struct file *f, struct fileio_file *out)
{
	if (!f)
		return;
	struct inode *inode = kernel_cast(f, struct file)->f_inode;
	out->dev = inode->i_sb->s_dev;
	out->ino = inode->i_ino;
	out->kind = inode->i_mode & SYSPGO_S_IFMT;
	out->gen = inode->i_generation;
}

static __always_inline __s64 file_pos(struct file *f)
{
	return kernel_cast(f, struct file)->f_pos;
}

static __always_inline __u64 iov_bytes(const struct iovec *vec, __u64 cnt)
{
	__u64 sum = 0;
	for (int i = 0; i < 16; i++) { /* the first 16 iovecs; req is a lower bound beyond */
		if (i >= cnt)
			break;
		struct iovec iov = {};
		if (bpf_probe_read_user(&iov, sizeof(iov), &vec[i]))
			break;
		sum += iov.iov_len;
	}
	return sum;
}

/* The current task's CPU time, as the scheduler last brought it up to date
 * (at a tick or a switch): a call's on-CPU time is known to a tick either
 * side. Adding the slice since se.exec_start would be exact on one CPU, but
 * exec_start is on its CPU's task clock, which leaves out that CPU's
 * interrupt and steal time: across a migration the sum jumps by seconds. */
static __always_inline __u64 cpu_time(struct task_struct *task)
{
	return task->se.sum_exec_runtime;
}

/* These two programs run on every syscall of every task on the machine:
 * membership of the recording is tested first, before any helper call, so
 * that a task outside it pays a few loads (the inlined lookup in
 * `targets`, bpf/common.bpf.h) and nothing more. */
SEC("tp_btf/sys_enter")
int BPF_PROG(fileio_enter, struct pt_regs *regs, long id)
{
	struct task_struct *task = bpf_get_current_task_btf();
	if (!is_target(task->tgid))
		return 0;
	/* Any syscall is timed, for long on-CPU calls (fileio_exit). */
	struct fileio_inflight *in = bpf_task_storage_get(&fileio_inflight, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!in)
		return 0;
	in->ts = bpf_ktime_get_ns();
	in->nr = id;
	in->runtime = cpu_time(task);
	if (classify(id) == K_CLOSE) {
		in->file.dev = in->file.ino = in->file.kind = 0;
		file_info(fd_to_file(task, regs->di), &in->file);
	}
	return 0;
}

static __always_inline void overflow(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&fileio_overflow, &which);
	if (v)
		*v += 1; /* per-CPU slot: no other writer */
}

/* Marks the pages of `mask` in one 64-page chunk of a file touched; returns
 * 1 if any was not before. A global function: the verifier checks it once,
 * not once per chunk of the caller's loop. */
__noinline int touch_chunk(struct fileio_touch_key *key, __u64 mask)
{
	if (!key)
		return 1;
	struct fileio_touch_key k = *key;
	__u64 *bits = bpf_map_lookup_elem(&fileio_touched, &k);
	if (!bits) {
		if (!bpf_map_update_elem(&fileio_touched, &k, &mask, BPF_NOEXIST))
			return 1;
		bits = bpf_map_lookup_elem(&fileio_touched, &k); /* another CPU made it first */
		if (!bits) {
			overflow(FILEIO_OVERFLOW_TOUCHED);
			return 1;
		}
	}
	if ((*bits & mask) == mask)
		return 0;
	__sync_fetch_and_or(bits, mask);
	return 1;
}

__noinline int count_truncation(__u64 dev, __u64 ino)
{
	struct fileio_file_ref fr = { .dev = dev, .ino = ino };
	__u32 *n = bpf_map_lookup_elem(&fileio_truncations, &fr);
	if (n) {
		__sync_fetch_and_add(n, 1);
		return 0;
	}
	__u32 one = 1;
	if (bpf_map_update_elem(&fileio_truncations, &fr, &one, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&fileio_truncations, &fr))
		overflow(FILEIO_OVERFLOW_TRUNCATIONS);
	return 0;
}

/* What first_touch asks: a global function takes five arguments at most. */
struct touch_req {
	__u64 dev, ino, pos, len;
	__u32 version, write;
};

/* 1 if [pos, pos + len) holds a page no call of the run had touched. A
 * global function, as touch_chunk: inlined, its loop made fileio_exit the
 * dearest program to verify again (0.09 s of every collect). */
__noinline int first_touch(struct fileio_inflight *in, struct touch_req *r)
{
	if (!in || !r)
		return 1;
	__u64 dev = r->dev, ino = r->ino;
	__u32 version = r->version, write = r->write;
	__u64 p0 = r->pos >> 12, p1 = (r->pos + r->len - 1) >> 12;
	if (in->touched_dev == dev && in->touched_ino == ino && in->touched_version == version &&
	    in->touched_write == write && p0 >= in->touched_lo && p1 <= in->touched_hi)
		return 0;
	struct fileio_touch_key k = { .dev = dev, .ino = ino, .version = version, .write = write };
	__u64 c0 = p0 >> FILEIO_CHUNK_SHIFT, c1 = p1 >> FILEIO_CHUNK_SHIFT;
	int fresh = c1 - c0 >= FILEIO_TOUCH_CHUNKS; /* too wide to mark whole: sent */
	for (int i = 0; i < FILEIO_TOUCH_CHUNKS; i++) {
		__u64 c = c0 + i;
		if (c > c1)
			break;
		__u64 lo = c == c0 ? (p0 & 63) : 0, hi = c == c1 ? (p1 & 63) : 63;
		__u64 mask = (hi == 63 ? ~0ULL : (1ULL << (hi + 1)) - 1) & ~((1ULL << lo) - 1);
		k.chunk = c;
		fresh |= touch_chunk(&k, mask);
	}
	if (!fresh || c1 - c0 < FILEIO_TOUCH_CHUNKS) { /* every page is marked now */
		in->touched_write = write;
		in->touched_version = version;
		in->touched_dev = dev;
		in->touched_ino = ino;
		in->touched_lo = p0;
		in->touched_hi = p1;
	}
	return fresh;
}

/* This CPU's value of `key` in fileio_totals, made if new (then *fresh is
 * set: the first call of its key is sent), or 0 if the map is full. */
static __always_inline struct fileio_total_val *total_of(struct fileio_total_key *key, int *fresh)
{
	struct fileio_total_val *v = bpf_map_lookup_elem(&fileio_totals, key);
	if (v)
		return v;
	__u32 zero = 0;
	struct fileio_total_val *z = bpf_map_lookup_elem(&fileio_zero_total, &zero);
	if (!z)
		return 0;
	/* Another CPU may make the key first: its slot for this CPU is zero
	 * all the same. */
	if (bpf_map_update_elem(&fileio_totals, key, z, BPF_NOEXIST) == 0)
		*fresh = 1;
	v = bpf_map_lookup_elem(&fileio_totals, key);
	if (!v)
		overflow(FILEIO_OVERFLOW_TOTALS);
	return v;
}

/* A key's slot in fileio_total_cache: a read and a write of one pair of
 * files (dd's loop) fall in two. */
static __always_inline __u32 cache_slot(const struct fileio_total_key *key)
{
	__u64 h = (key->ino ^ key->dev ^ key->kind) * 0x9E3779B97F4A7C15ULL;
	return ((h >> 32) ^ key->nr) & (FILEIO_CACHE_SLOTS - 1);
}

/* This CPU's value of `key`, in its slot of fileio_total_cache: the key
 * that held the slot is written back to fileio_totals first. */
static __always_inline struct fileio_total_val *cached_total(struct fileio_total_key *key, int *fresh)
{
	__u32 s = cache_slot(key);
	struct fileio_total_slot *c = bpf_map_lookup_elem(&fileio_total_cache, &s);
	if (!c)
		return total_of(key, fresh);
	if (c->val.calls && c->key.dev == key->dev && c->key.ino == key->ino && c->key.kind == key->kind &&
	    c->key.nr == key->nr)
		return &c->val;
	struct fileio_total_val *v;
	if (c->val.calls) {
		/* Made when it took the slot (entries are never deleted). */
		v = bpf_map_lookup_elem(&fileio_totals, &c->key);
		if (v)
			*v = c->val;
		else
			overflow(FILEIO_OVERFLOW_TOTALS);
		c->val.calls = 0;
	}
	v = total_of(key, fresh);
	if (!v)
		return 0;
	c->key = *key;
	c->val = *v;
	return &c->val;
}

/* One call, as lean_count takes it. */
struct lean_call {
	struct fileio_file file;
	__u64 ts, dur, req;
	__s64 pos, ret;
	__u32 nr, k;
};

/* Counts one call in its (file, syscall) total; returns 1 if the call must
 * also be sent as an event (the rules above). A global function: inlined,
 * the verifier walked it once for each kind of call fileio_exit tells
 * apart, 0.09 s of every collect. */
__noinline int lean_count(struct fileio_inflight *in, struct lean_call *c)
{
	if (!in || !c)
		return 1;
	struct fileio_total_key key = { .dev = c->file.dev, .ino = c->file.ino, .kind = c->file.kind, .nr = c->nr };
	/* Pipes, sockets and anonymous inodes (eventfd, epoll...) are made and
	 * dropped all the time: a daemon makes a socket a connection. Counted
	 * per kind, not per inode, the map and the tables grow with the files
	 * that last, not with time; their calls that matter are rows anyway. */
	if (key.kind == SYSPGO_S_IFIFO || key.kind == SYSPGO_S_IFSOCK || key.kind == 0)
		key.ino = 0;
	__u64 ts = c->ts, dur = c->dur, req = c->req;
	__s64 pos = c->pos, ret = c->ret;
	__u32 k = c->k, nr = c->nr;
	int send = dur >= instance_min_ns || k == K_SYNC || k == K_RANGE;
	struct fileio_total_val *v = cached_total(&key, &send);
	if (!v)
		return 1;
	if (!v->first_ts)
		v->first_ts = ts;
	/* The first call of a burst (see above). Signed: a call that began on
	 * another CPU may have begun before this CPU's last one ended. */
	if ((__s64)(ts - v->last_end) >= (__s64)burst_gap_ns)
		send = 1;
	v->last_end = ts + dur;
	v->calls++;
	v->req += req;
	v->sum_ns += dur;
	if (ret < 0)
		v->errors++;
	else if (k != K_SYNC && k != K_RANGE && k != K_CLOSE)
		v->bytes += ret;
	if (dur > v->max_ns)
		v->max_ns = dur;
	__u32 slot = log2_slot(dur);
	v->slots[slot < FILEIO_HIST_SLOTS ? slot : FILEIO_HIST_SLOTS - 1]++;
	if (ret > 0 && pos >= 0 && (key.kind == SYSPGO_S_IFREG || key.kind == SYSPGO_S_IFBLK) &&
	    (k == K_IO || k == K_IOV || k == K_POS_IO || k == K_POS_IOV)) {
		struct fileio_file_ref fr = { .dev = key.dev, .ino = key.ino };
		__u32 *truncations = bpf_map_lookup_elem(&fileio_truncations, &fr);
		struct touch_req r = { .dev = key.dev, .ino = key.ino, .pos = pos, .len = ret,
				       .version = c->file.gen + (truncations ? *truncations : 0),
				       .write = nr == NR_write || nr == NR_pwrite64 || nr == NR_writev ||
						nr == NR_pwritev || nr == NR_pwritev2 };
		send |= first_touch(in, &r);
	}
	return send;
}

/* Where a walk up the dentry chain stands. The pointers are kept as
 * numbers: fileio_path_step reads through them with probe reads only. */
struct path_walk {
	__u64 d, mnt, vm;         /* dentry, its struct mount and vfsmount */
	__u32 off;                /* bytes of e->path written */
	__u32 done;
};

/* One step up: appends d's name to e->path, or crosses to the mount's
 * parent at a mount's root. Returns 1 when the walk is over. A global
 * function, so the verifier checks it once on its own: inlined into the
 * 48-step loop its branches made fileio_exit the dearest program to load
 * (about 0.7 s of the verifier's time at every collect). */
__noinline int fileio_path_step(struct fileio_open_event *e, struct path_walk *w)
{
	if (!e || !w || w->done)
		return 1;
	struct dentry *d = (struct dentry *)w->d;
	struct vfsmount *vm = (struct vfsmount *)w->vm;
	struct mount *mnt = (struct mount *)w->mnt;
	struct dentry *root = BPF_CORE_READ(vm, mnt_root);
	struct dentry *parent = BPF_CORE_READ(d, d_parent);
	if (d == root || d == parent) {
		struct mount *up = BPF_CORE_READ(mnt, mnt_parent);
		if (up == mnt) { /* the namespace root */
			e->truncated = 0;
			w->done = 1;
			return 1;
		}
		w->d = (__u64)BPF_CORE_READ(mnt, mnt_mountpoint);
		w->mnt = (__u64)up;
		w->vm = (__u64)up + bpf_core_field_offset(struct mount, mnt);
		return 0;
	}
	__u32 off = w->off;
	if (off > FILEIO_PATH_BUF - FILEIO_NAME_LEN) {
		w->done = 1;
		return 1;
	}
	const unsigned char *name = BPF_CORE_READ(d, d_name.name);
	long n = bpf_probe_read_kernel_str(&e->path[off], FILEIO_NAME_LEN, name);
	if (n <= 0) {
		w->done = 1;
		return 1;
	}
	w->off = off + n;
	w->d = (__u64)parent;
	return 0;
}

/* Writes the path components of f, leaf first, NUL-separated, into e->path. */
static __always_inline void resolve_path(struct fileio_open_event *e, struct file *f)
{
	struct path_walk w = {};
	struct vfsmount *vm = BPF_CORE_READ(f, f_path.mnt);
	w.d = (__u64)BPF_CORE_READ(f, f_path.dentry);
	w.vm = (__u64)vm;
	w.mnt = (__u64)vm - bpf_core_field_offset(struct mount, mnt);
	e->truncated = 1;
	for (int i = 0; i < 48; i++)
		if (fileio_path_step(e, &w))
			break;
	e->path_len = w.off;
}

/* A syscall that ran long on the CPU (fileio_syscall_event): rare, so it
 * costs the calls that are not nothing but this test. */
static __always_inline void send_syscall(__u64 ts, __u64 dur, __u64 oncpu, __u32 nr, __u32 pid, __u32 tid,
					 struct pt_regs *regs, __s64 ret)
{
	struct fileio_syscall_event *e = reserve_event(FILEIO_SYSCALL, sizeof(*e), ts, pid, tid);
	if (!e)
		return;
	e->dur = dur;
	e->oncpu = oncpu;
	e->nr = nr;
	e->pad = 0;
	e->args[0] = regs->di;
	e->args[1] = regs->si;
	e->args[2] = regs->dx;
	e->ret = ret;
	submit_event(e);
}

/* What every exit handler below needs of the call that returns. */
struct exit_call {
	struct task_struct *task;
	struct fileio_inflight *in;
	struct pt_regs *regs;
	__u64 ts, now;
	__u64 a0, a1, a2, a3;
	long ret;
	__u32 nr, pid, tid;
	int k;
};

/* An open: flags, the path given, and the file it opened with its path. */
static __always_inline void exit_open(struct exit_call *c)
{
	__u32 zero = 0;
	struct fileio_open_event *e = bpf_map_lookup_elem(&fileio_open_scratch, &zero);
	if (!e)
		return;
	__u32 nr = c->nr;
	fill_hdr(&e->hdr, FILEIO_OPEN, c->ts, c->pid, c->tid);
	e->dur = c->now - c->ts;
	e->nr = nr;
	if (nr == NR_open) {
		e->flags = c->a1;
	} else if (nr == NR_openat) {
		e->flags = c->a2;
	} else {
		struct open_how how = {};
		bpf_probe_read_user(&how, sizeof(how), (void *)c->a2);
		e->flags = how.flags;
	}
	e->ret = c->ret;
	e->file.dev = 0;
	e->file.ino = 0;
	e->file.kind = 0;
	e->path_len = 0;
	e->truncated = 0;
	if (bpf_probe_read_user_str(e->given, sizeof(e->given), (void *)(nr == NR_open ? c->a0 : c->a1)) < 0)
		e->given[0] = 0;
	if (c->ret >= 0) {
		struct file *f = fd_to_file(c->task, c->ret);
		if (f) {
			file_info(f, &e->file);
			resolve_path(e, f);
		}
		if (lean && (e->flags & O_TRUNC) && e->file.kind == SYSPGO_S_IFREG)
			count_truncation(e->file.dev, e->file.ino);
	}
	__u64 size = __builtin_offsetof(struct fileio_open_event, path) + e->path_len;
	if (size > sizeof(*e))
		size = sizeof(*e);
	e->hdr.size = size;
	output_event(e, size);
}

/* A call that looks a path up (stat, access, readlink, a failed exec). */
static __always_inline void exit_lookup(struct exit_call *c)
{
	/* A successful execve returns in the new program: the proc group
	 * records it. fstat() is newfstatat(fd, "", AT_EMPTY_PATH): no
	 * path, no lookup. The *at calls take the path second. */
	__u32 nr = c->nr;
	if ((nr == NR_execve || nr == NR_execveat) && c->ret == 0)
		return;
	int at = nr == NR_newfstatat || nr == NR_readlinkat || nr == NR_faccessat ||
		 nr == NR_execveat || nr == NR_statx || nr == NR_faccessat2;
	const char *path = (const char *)(at ? c->a1 : c->a0);
	char first = 0;
	if (bpf_probe_read_user(&first, 1, path) || !first)
		return;
	struct fileio_lookup_event *e = reserve_event(FILEIO_LOOKUP, sizeof(*e), c->ts, c->pid, c->tid);
	if (!e)
		return;
	e->dur = c->now - c->ts;
	e->nr = nr;
	e->flags = nr == NR_newfstatat || nr == NR_faccessat2 ? c->a3 :
		   nr == NR_statx ? c->a2 : nr == NR_execveat ? c->regs->r8 : 0;
	e->ret = c->ret;
	if (bpf_probe_read_user_str(e->given, sizeof(e->given), path) < 0)
		e->given[0] = 0;
	submit_event(e);
}

/* A file mapping (anonymous ones are not file I/O). */
static __always_inline void exit_mmap(struct exit_call *c)
{
	int fd = c->regs->r8;
	if ((c->a3 & MAP_ANONYMOUS) || fd < 0)
		return;
	struct fileio_mmap_event *e = reserve_event(FILEIO_MMAP, sizeof(*e), c->ts, c->pid, c->tid);
	if (!e)
		return;
	e->dur = c->now - c->ts;
	e->addr = c->ret;
	e->len = c->a1;
	e->prot = c->a2;
	e->flags = c->a3;
	e->fd = fd;
	e->off = c->regs->r9;
	e->file.dev = e->file.ino = e->file.kind = 0;
	file_info(fd_to_file(c->task, fd), &e->file);
	submit_event(e);
}

/* Reads, writes, syncs and closes: the file, where in it and how much. */
static __always_inline void exit_io(struct exit_call *c)
{
	struct fileio_file file = {};
	__s64 pos = -1;
	__u64 req = 0;
	int k = c->k;
	long ret = c->ret;
	if (k == K_CLOSE) {
		file = c->in->file;
	} else {
		struct file *f = fd_to_file(c->task, c->a0);
		file_info(f, &file);
		switch (k) {
		case K_IO:
		case K_IOV:
			/* f_pos has moved by what was done; seekable files only. */
			if (f && (file.kind == SYSPGO_S_IFREG || file.kind == SYSPGO_S_IFBLK))
				pos = file_pos(f) - (ret > 0 ? ret : 0);
			req = k == K_IO ? c->a2 : iov_bytes((const struct iovec *)c->a1, c->a2);
			break;
		case K_POS_IO:
			pos = c->a3;
			req = c->a2;
			break;
		case K_POS_IOV:
			pos = c->a3;
			if ((__s64)c->a3 == -1 && f) /* preadv2/pwritev2 with -1 use and move f_pos */
				pos = file_pos(f) - (ret > 0 ? ret : 0);
			req = iov_bytes((const struct iovec *)c->a1, c->a2);
			break;
		case K_RANGE:
			pos = c->a1;
			req = c->a2;
			break;
		}
	}
	if (lean) {
		struct lean_call lc = { .file = file, .ts = c->ts, .dur = c->now - c->ts, .req = req, .pos = pos,
					.ret = ret, .nr = c->nr, .k = k };
		if (!lean_count(c->in, &lc))
			return;
	}
	struct fileio_io_event *e = reserve_event(FILEIO_IO, sizeof(*e), c->ts, c->pid, c->tid);
	if (!e)
		return;
	e->dur = c->now - c->ts;
	e->nr = c->nr;
	e->fd = c->a0;
	e->ret = ret;
	e->pos = pos;
	e->req = req;
	e->file = file;
	submit_event(e);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(fileio_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 pid = task->tgid;
	if (!is_target(pid))
		return 0; /* also a call whose exec took its process out (bpf/proc.bpf.c) */
	struct fileio_inflight *in = bpf_task_storage_get(&fileio_inflight, task, 0, 0);
	if (!in || !in->ts)
		return 0;
	struct exit_call c = { .task = task, .in = in, .regs = regs, .ts = in->ts, .now = bpf_ktime_get_ns(),
			       .a0 = regs->di, .a1 = regs->si, .a2 = regs->dx, .a3 = regs->r10, .ret = ret,
			       .nr = in->nr, .pid = pid, .tid = task->pid };
	in->ts = 0;
	c.k = classify(c.nr);
	__u64 oncpu = cpu_time(task) - in->runtime;
	if (c.now - c.ts >= instance_min_ns && (__s64)oncpu >= (__s64)instance_min_ns)
		send_syscall(c.ts, c.now - c.ts, oncpu, c.nr, c.pid, c.tid, regs, ret);
	switch (c.k) {
	case K_NONE:
		break;
	case K_OPEN:
		exit_open(&c);
		break;
	case K_LOOKUP:
		exit_lookup(&c);
		break;
	case K_MMAP:
		exit_mmap(&c);
		break;
	default:
		exit_io(&c);
		break;
	}
	return 0;
}
