/* ===- timeit.c - run a command, report its wall and CPU time ---------=== */
/* Used by the benchmarks for the plain and the collected variant alike, so
 * both are measured the same way: prints "wall_ns user_ns sys_ns status" of
 * the command (its own rusage via wait4, not the collector's) to the file
 * named by $TIMEIT_OUT, or stderr. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run_child.h"

static long long ns(struct timespec t) { return t.tv_sec * 1000000000LL + t.tv_nsec; }

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: timeit COMMAND [ARGS...]\n");
		return 2;
	}
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	struct rusage ru;
	int st = run_child(argv + 1, "timeit", &ru);
	clock_gettime(CLOCK_MONOTONIC, &b);
	const char *out = getenv("TIMEIT_OUT");
	FILE *f = out ? fopen(out, "w") : stderr;
	fprintf(f, "%lld %lld %lld %d\n", ns(b) - ns(a),
		ru.ru_utime.tv_sec * 1000000000LL + ru.ru_utime.tv_usec * 1000LL,
		ru.ru_stime.tv_sec * 1000000000LL + ru.ru_stime.tv_usec * 1000LL, st);
	if (out)
		fclose(f);
	return shell_status(st);
}
