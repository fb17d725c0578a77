// SPDX-License-Identifier: GPL-2.0
/* ===- fileio.bpf.c - file-I/O syscalls of the traced tree ------------=== */
/* No kprobes or fentry on this kernel, so the raw syscall tracepoints carry
 * everything: sys_enter saves the arguments and resolves the fd to its
 * struct file (device, inode, position) while it is still open; sys_exit
 * adds the result and latency and emits one event. Opens walk the dentry
 * chain of the new file so the path is absolute and real, whatever the
 * program passed and whatever happens to the file later. */
#include "common.bpf.h"
#include "fileio.h"

char LICENSE[] SEC("license") = "GPL";

#define S_IFMT 00170000
#define MAP_ANONYMOUS 0x20

/* x86_64 syscall numbers. */
enum {
	NR_read = 0, NR_write = 1, NR_open = 2, NR_close = 3, NR_mmap = 9,
	NR_pread64 = 17, NR_pwrite64 = 18, NR_readv = 19, NR_writev = 20,
	NR_fsync = 74, NR_fdatasync = 75, NR_openat = 257, NR_sync_file_range = 277,
	NR_preadv = 295, NR_pwritev = 296, NR_preadv2 = 327, NR_pwritev2 = 328,
	NR_openat2 = 437,
};

enum { K_NONE, K_IO, K_IOV, K_POS_IO, K_POS_IOV, K_SYNC, K_RANGE, K_CLOSE, K_OPEN, K_MMAP };

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
	}
	return K_NONE;
}

struct inflight {
	__u64 ts;
	__u64 args[6];
	struct fileio_file file;
	__s64 pos;
	__u64 req;
	__u32 nr;
	__u32 kind;
	__u32 open_flags;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct inflight);
} inflight SEC(".maps");

/* Scratch for building an open event (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fileio_open_event);
} open_scratch SEC(".maps");

static __always_inline struct file *fd_to_file(int fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	unsigned int max = BPF_CORE_READ(fdt, max_fds);
	if (fd < 0 || (unsigned int)fd >= max)
		return 0;
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *f = 0;
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

static __always_inline void file_info(struct file *f, struct fileio_file *out, __s64 *pos)
{
	if (!f)
		return;
	struct inode *inode = BPF_CORE_READ(f, f_inode);
	out->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	out->ino = BPF_CORE_READ(inode, i_ino);
	out->kind = BPF_CORE_READ(inode, i_mode) & S_IFMT;
	if (pos)
		*pos = BPF_CORE_READ(f, f_pos);
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

SEC("tp_btf/sys_enter")
int BPF_PROG(fileio_enter, struct pt_regs *regs, long id)
{
	int k = classify(id);
	if (k == K_NONE)
		return 0;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	if (!is_target(pid_tgid >> 32))
		return 0;
	__u32 tid = (__u32)pid_tgid;

	struct inflight in = {};
	in.ts = bpf_ktime_get_ns();
	in.nr = id;
	in.kind = k;
	in.pos = -1;
	in.args[0] = BPF_CORE_READ(regs, di);
	in.args[1] = BPF_CORE_READ(regs, si);
	in.args[2] = BPF_CORE_READ(regs, dx);
	in.args[3] = BPF_CORE_READ(regs, r10);
	in.args[4] = BPF_CORE_READ(regs, r8);
	in.args[5] = BPF_CORE_READ(regs, r9);

	switch (k) {
	case K_IO:
		file_info(fd_to_file(in.args[0]), &in.file, &in.pos);
		in.req = in.args[2];
		break;
	case K_IOV:
		file_info(fd_to_file(in.args[0]), &in.file, &in.pos);
		in.req = iov_bytes((const struct iovec *)in.args[1], in.args[2]);
		break;
	case K_POS_IO:
		file_info(fd_to_file(in.args[0]), &in.file, 0);
		in.pos = in.args[3];
		in.req = in.args[2];
		break;
	case K_POS_IOV:
		file_info(fd_to_file(in.args[0]), &in.file, &in.pos);
		if ((__s64)in.args[3] != -1) /* preadv2 with -1 uses f_pos */
			in.pos = in.args[3];
		in.req = iov_bytes((const struct iovec *)in.args[1], in.args[2]);
		break;
	case K_SYNC:
	case K_CLOSE:
		file_info(fd_to_file(in.args[0]), &in.file, 0);
		break;
	case K_RANGE:
		file_info(fd_to_file(in.args[0]), &in.file, 0);
		in.pos = in.args[1];
		in.req = in.args[2];
		break;
	case K_OPEN:
		if (id == NR_open) {
			in.open_flags = in.args[1];
		} else if (id == NR_openat) {
			in.open_flags = in.args[2];
		} else {
			struct open_how how = {};
			bpf_probe_read_user(&how, sizeof(how), (void *)in.args[2]);
			in.open_flags = how.flags;
		}
		break;
	case K_MMAP:
		if ((in.args[3] & MAP_ANONYMOUS) || (int)in.args[4] < 0)
			return 0;
		file_info(fd_to_file(in.args[4]), &in.file, 0);
		break;
	}
	bpf_map_update_elem(&inflight, &tid, &in, BPF_ANY);
	return 0;
}

/* Writes the path components of f, leaf first, NUL-separated, into e->path. */
static __always_inline void resolve_path(struct fileio_open_event *e, struct file *f)
{
	struct dentry *d = BPF_CORE_READ(f, f_path.dentry);
	struct vfsmount *vm = BPF_CORE_READ(f, f_path.mnt);
	struct mount *mnt = (void *)vm - bpf_core_field_offset(struct mount, mnt);
	__u32 off = 0;
	e->truncated = 1;
	for (int i = 0; i < 48; i++) {
		struct dentry *root = BPF_CORE_READ(vm, mnt_root);
		struct dentry *parent = BPF_CORE_READ(d, d_parent);
		if (d == root || d == parent) {
			struct mount *up = BPF_CORE_READ(mnt, mnt_parent);
			if (up == mnt) { /* the namespace root */
				e->truncated = 0;
				break;
			}
			d = BPF_CORE_READ(mnt, mnt_mountpoint);
			mnt = up;
			vm = (void *)up + bpf_core_field_offset(struct mount, mnt);
			continue;
		}
		if (off > FILEIO_PATH_BUF - FILEIO_NAME_LEN)
			break;
		const unsigned char *name = BPF_CORE_READ(d, d_name.name);
		long n = bpf_probe_read_kernel_str(&e->path[off], FILEIO_NAME_LEN, name);
		if (n <= 0)
			break;
		off += n;
		d = parent;
	}
	e->path_len = off;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(fileio_exit, struct pt_regs *regs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct inflight *p = bpf_map_lookup_elem(&inflight, &tid);
	if (!p)
		return 0;
	struct inflight in = *p;
	bpf_map_delete_elem(&inflight, &tid);
	__u64 now = bpf_ktime_get_ns();
	__u32 pid = pid_tgid >> 32;

	if (in.kind == K_OPEN) {
		__u32 zero = 0;
		struct fileio_open_event *e = bpf_map_lookup_elem(&open_scratch, &zero);
		if (!e)
			return 0;
		e->hdr.type = FILEIO_OPEN;
		e->hdr.ts = in.ts;
		e->hdr.pid = pid;
		e->hdr.tid = tid;
		e->dur = now - in.ts;
		e->nr = in.nr;
		e->flags = in.open_flags;
		e->ret = ret;
		e->file.dev = 0;
		e->file.ino = 0;
		e->file.kind = 0;
		e->path_len = 0;
		e->truncated = 0;
		const char *given = (const char *)(in.nr == NR_open ? in.args[0] : in.args[1]);
		if (bpf_probe_read_user_str(e->given, sizeof(e->given), given) < 0)
			e->given[0] = 0;
		if (ret >= 0) {
			struct file *f = fd_to_file(ret);
			if (f) {
				file_info(f, &e->file, 0);
				resolve_path(e, f);
			}
		}
		__u64 size = __builtin_offsetof(struct fileio_open_event, path) + e->path_len;
		if (size > sizeof(*e))
			size = sizeof(*e);
		e->hdr.size = size;
		output_event(e, size);
		return 0;
	}

	if (in.kind == K_MMAP) {
		struct fileio_mmap_event *e = reserve_event(FILEIO_MMAP, sizeof(*e), in.ts, pid, tid);
		if (!e)
			return 0;
		e->dur = now - in.ts;
		e->addr = ret;
		e->len = in.args[1];
		e->prot = in.args[2];
		e->flags = in.args[3];
		e->fd = in.args[4];
		e->off = in.args[5];
		e->file = in.file;
		submit_event(e);
		return 0;
	}

	struct fileio_io_event *e = reserve_event(FILEIO_IO, sizeof(*e), in.ts, pid, tid);
	if (!e)
		return 0;
	e->dur = now - in.ts;
	e->nr = in.nr;
	e->fd = in.args[0];
	e->file = in.file;
	e->pos = in.pos;
	e->req = in.req;
	e->ret = ret;
	submit_event(e);
	return 0;
}
