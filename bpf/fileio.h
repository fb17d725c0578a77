/* ===- fileio.h - file-I/O syscall events ------------------------------=== */
#ifndef SYSPGO_BPF_FILEIO_H
#define SYSPGO_BPF_FILEIO_H
#include "common.h"

enum fileio_event_type {
	FILEIO_IO = 1,    /* read/write family, sync, close */
	FILEIO_OPEN = 2,
	FILEIO_MMAP = 3,
	FILEIO_LOOKUP = 4, /* a path looked up without opening it */
};

/* Resolved in the kernel from the fd's struct file. */
struct fileio_file {
	__u64 dev;        /* inode->i_sb->s_dev: kernel encoding, major << 20 | minor */
	__u64 ino;
	__u32 kind;       /* i_mode & S_IFMT (0 when the fd was not open) */
	__u32 pad;
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
#endif
