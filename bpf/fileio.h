/* ===- fileio.h - file-I/O syscall events ------------------------------=== */
#ifndef SYSPGO_BPF_FILEIO_H
#define SYSPGO_BPF_FILEIO_H
#include "common.h"

enum fileio_event_type {
	FILEIO_IO = 1,    /* read/write family, sync, close */
	FILEIO_OPEN = 2,
	FILEIO_MMAP = 3,
	FILEIO_LOOKUP = 4, /* a path looked up without opening it */
	FILEIO_SYSCALL = 5, /* any syscall that ran long on the CPU in the kernel */
};

/* Resolved in the kernel from the fd's struct file. */
struct fileio_file {
	__u64 dev;        /* inode->i_sb->s_dev: kernel encoding, major << 20 | minor */
	__u64 ino;
	__u32 kind;       /* i_mode & S_IFMT (0 when the fd was not open) */
	__u32 gen;        /* inode->i_generation: a file made on a freed inode number has another */
};

/* hdr.ts is the syscall's entry time. */
struct fileio_io_event {
	struct syspgo_hdr hdr;
	__u64 dur;        /* ns from entry to exit */
	__u32 nr;         /* syscall number */
	__s32 fd;
	struct fileio_file file;
	__s64 pos;        /* offset used: explicit (pread, sync_file_range) or f_pos at entry; -1 if none */
	__u64 req;        /* bytes asked */
	__s64 ret;        /* syscall return */
};

struct fileio_mmap_event {
	struct syspgo_hdr hdr;
	__u64 dur;
	__u64 addr;       /* return value: mapping start or -errno */
	__u64 len;
	__u64 off;        /* file offset, bytes */
	__u32 prot;
	__u32 flags;
	__s32 fd;
	__u32 pad;
	struct fileio_file file;
};

#define FILEIO_GIVEN_LEN 256
#define FILEIO_NAME_LEN 256          /* one path component, NUL included */
#define FILEIO_PATH_BUF 4096         /* components, leaf first, each NUL-terminated */

/* Variable size: `size` in the header covers the used part of path[]. */
struct fileio_open_event {
	struct syspgo_hdr hdr;
	__u64 dur;
	__u32 nr;
	__u32 flags;      /* O_* flags */
	__s64 ret;        /* fd or -errno */
	struct fileio_file file;
	__u32 path_len;   /* bytes used in path[] */
	__u32 truncated;  /* 1 if the walk stopped before the root */
	char given[FILEIO_GIVEN_LEN];  /* the path as the program passed it */
	char path[FILEIO_PATH_BUF + FILEIO_NAME_LEN];
};
/* The stat family, access, readlink, and execve calls that failed: each
 * walks a path (and reads what a cold cache lacks) but leaves no fd. */
struct fileio_lookup_event {
	struct syspgo_hdr hdr;
	__u64 dur;
	__u32 nr;
	__u32 flags;      /* AT_* flags (fstatat, statx, faccessat2, execveat), else 0 */
	__s64 ret;        /* 0 or -errno (readlink: bytes) */
	char given[FILEIO_GIVEN_LEN];  /* the path as the program passed it */
};

/* Any syscall of the tree (file or not: getrandom, munmap, unlink...) that
 * ran at least instance_min_ns on the CPU in the kernel: a pause the thread
 * spends on-CPU, which no off-CPU interval shows. hdr.ts is its entry. */
struct fileio_syscall_event {
	struct syspgo_hdr hdr;
	__u64 dur;        /* ns from entry to exit */
	__u64 oncpu;      /* ns of it on a CPU (the task's sum_exec_runtime across the call) */
	__u32 nr;         /* syscall number */
	__u32 pad;
	__u64 args[3];    /* the first three arguments, raw */
	__s64 ret;        /* syscall return */
};

/* ---- The lean tier (--detail lean): counted in the kernel. ----
 * Every read, write, sync and close of the tree is counted per (file,
 * syscall) in fileio_totals; a call is also sent as an event only when an
 * analysis needs the instance (fileio.bpf.c says which). */
#define FILEIO_HIST_SLOTS 32          /* log2(ns) slots: [2^s, 2^(s+1)) ns; the last takes the rest */
#define FILEIO_CHUNK_SHIFT 6          /* first touches: a bitmap per 64 pages of a file */
#define FILEIO_TOUCH_CHUNKS 16        /* a call spanning more chunks is sent whole */

struct fileio_total_key {
	__u64 dev;        /* kernel encoding; 0 if the fd was not open */
	__u64 ino;
	__u32 kind;       /* i_mode & S_IFMT */
	__u32 nr;         /* syscall number */
};

struct fileio_total_val {
	__u64 calls;
	__u64 errors;     /* calls that returned -errno */
	__u64 bytes;      /* bytes done (positive returns of reads and writes) */
	__u64 req;        /* bytes asked */
	__u64 sum_ns;     /* time in the calls */
	__u64 max_ns;     /* the slowest call */
	__u64 first_ts;   /* entry of the first call, ns since boot */
	__u64 last_end;   /* exit of the last call on this CPU (the kernel's own: not summed) */
	__u32 slots[FILEIO_HIST_SLOTS];
};

/* One slot of fileio_total_cache: while a key sits in its CPU's slot,
 * the slot holds that CPU's whole value for it, and fileio_totals' value
 * for that CPU is stale (the loader reads the slot instead). Empty when
 * val.calls is 0. */
#define FILEIO_CACHE_SLOTS 16         /* per CPU, direct-mapped (fileio.bpf.c: cache_slot) */
struct fileio_total_slot {
	struct fileio_total_key key;
	struct fileio_total_val val;
};

struct fileio_touch_key {
	__u64 dev;
	__u64 ino;
	__u64 chunk;      /* page index >> FILEIO_CHUNK_SHIFT */
	__u32 version;    /* the file's content: i_generation plus its truncations by open(O_TRUNC) */
	__u32 write;      /* reads and writes are touched apart: a read of written pages is a first read */
};

/* A file, the key of fileio_truncations. */
struct fileio_file_ref {
	__u64 dev;
	__u64 ino;
};

/* The maps whose refused updates fileio_overflow counts, by index. */
enum fileio_overflow {
	FILEIO_OVERFLOW_TOTALS,   /* a (file, syscall) past the map: its calls are not counted */
	FILEIO_OVERFLOW_TOUCHED,  /* a chunk past the map: its calls are sent whole (nothing lost) */
	FILEIO_OVERFLOW_TRUNCATIONS, /* a file past the map: writes after its truncation may be missing rows */
	FILEIO_OVERFLOW_MAX
};
#endif
