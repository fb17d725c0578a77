/* ===- syscalls.h - the kernel's numbers both sides name ----------------=== */
/* x86_64 syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl) of the
 * calls the fileio group tells apart, and the file type bits of i_mode.
 * Included by bpf/fileio.bpf.c and by the analyses (analyze/file_calls.h),
 * so a number is written once. Plain C: no kernel or libc header. */
#ifndef SYSPGO_BPF_SYSCALLS_H
#define SYSPGO_BPF_SYSCALLS_H

enum syspgo_syscall {
	/* Reads, writes, syncs and close: file_io. */
	NR_read = 0, NR_write = 1, NR_close = 3, NR_pread64 = 17, NR_pwrite64 = 18, NR_readv = 19,
	NR_writev = 20, NR_fsync = 74, NR_fdatasync = 75, NR_sync_file_range = 277, NR_preadv = 295,
	NR_pwritev = 296, NR_preadv2 = 327, NR_pwritev2 = 328,
	/* Opens: file_open. */
	NR_open = 2, NR_openat = 257, NR_openat2 = 437,
	/* mmap: the mmap table. */
	NR_mmap = 9,
	/* Path lookups without an open: file_lookup. */
	NR_stat = 4, NR_lstat = 6, NR_access = 21, NR_execve = 59, NR_readlink = 89, NR_newfstatat = 262,
	NR_readlinkat = 267, NR_faccessat = 269, NR_execveat = 322, NR_statx = 332, NR_faccessat2 = 439,
};

/* i_mode & SYSPGO_S_IFMT: the file types (as <sys/stat.h> has them, which
 * BPF programs cannot include). */
#define SYSPGO_S_IFMT 0170000
#define SYSPGO_S_IFREG 0100000
#define SYSPGO_S_IFBLK 0060000
#define SYSPGO_S_IFCHR 0020000
#define SYSPGO_S_IFIFO 0010000
#define SYSPGO_S_IFSOCK 0140000
#define SYSPGO_S_IFDIR 0040000
#define SYSPGO_S_IFLNK 0120000

#endif
