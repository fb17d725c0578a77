/* ===- run_child.h - how the benches' C tools run the command they time --=== */
/* timeit and floor_syscalls both run a command as the benches measure it:
 * fork, exec (a failed exec exits 127 and says so), wait4. */
#ifndef SYSPGO_BENCH_RUN_CHILD_H
#define SYSPGO_BENCH_RUN_CHILD_H
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs argv[0] with argv and waits for it; returns its wait status, and
 * its resource usage in *ru unless ru is NULL. `tool` names the caller in
 * the message of a failed exec. */
static int run_child(char **argv, const char *tool, struct rusage *ru)
{
	pid_t pid = fork();
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "%s: exec %s: %s\n", tool, argv[0], strerror(errno));
		_exit(127);
	}
	int st = 0;
	wait4(pid, &st, 0, ru);
	return st;
}

/* A wait status as a shell reports it: the exit code, or 128 + the signal. */
static int shell_status(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st); }

#endif
