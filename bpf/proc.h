/* ===- proc.h - process tree events (always-on group) -----------------=== */
#ifndef SYSPGO_BPF_PROC_H
#define SYSPGO_BPF_PROC_H
#include "common.h"

enum proc_event_type {
	PROC_FORK = 1,         /* a new process joined the tree */
	PROC_THREAD = 2,       /* a new thread in a traced process */
	PROC_EXEC = 3,
	PROC_EXIT = 4,         /* a thread exited; group_dead when it was the last */
	PROC_RENAME = 5,       /* comm changed (prctl PR_SET_NAME, pthread_setname_np) */
	PROC_LEFT_OUT = 6,     /* an exec gave the process rights the invoking user lacks */
};

/* Why a process was left out (proc_left_out_event.why): bits. */
enum proc_left_out_why {
	PROC_WHY_UID = 1,          /* a uid (real, effective, saved, fs) is not the user's: setuid */
	PROC_WHY_GID = 2,          /* a gid is not the user's: setgid */
	PROC_WHY_CAPS = 4,         /* permitted capabilities: a file capability, or root */
	PROC_WHY_NOT_DUMPABLE = 8, /* not dumpable: the user could not read its memory or /proc files */
};

#define PROC_FILENAME_LEN 256
#define PROC_ARGS_LEN 1024

/* PROC_FORK, PROC_THREAD, PROC_RENAME: hdr.pid/tid are the new (or renamed) task. */
struct proc_task_event {
	struct syspgo_hdr hdr;
	__u32 ppid;       /* parent process */
	__u32 ptid;       /* thread that forked */
	char comm[SYSPGO_COMM_LEN];
};

struct proc_exit_event {
	struct syspgo_hdr hdr;
	__u32 exit_code;  /* task->exit_code: wait status (code << 8 | signal) */
	__u32 group_dead; /* 1 if this was the last thread of the process */
};

struct proc_exec_event {
	struct syspgo_hdr hdr;
	__u32 args_len;   /* bytes of args used (NUL-separated) */
	__u32 dev;        /* the file exec'd: its device (kernel encoding) and inode */
	__u64 ino;
	char comm[SYSPGO_COMM_LEN];
	char filename[PROC_FILENAME_LEN];
	char args[PROC_ARGS_LEN];
};

/* PROC_LEFT_OUT: hdr.pid left the traced tree at its exec; nothing of it,
 * nor of its later children, is recorded from then on. */
struct proc_left_out_event {
	struct syspgo_hdr hdr;
	__u32 why;        /* proc_left_out_why bits */
	__u32 pad;
};
#endif
