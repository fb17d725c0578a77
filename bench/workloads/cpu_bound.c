/* ===- cpu_bound.c - a CPU-bound workload for the overhead benchmark --=== */
/* Pure computation, no syscalls in the loop: what sampling costs it is the
 * whole overhead a profiler adds to compute-heavy code. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static unsigned long mix(unsigned long x) { return x * 6364136223846793005UL + 1442695040888963407UL; }

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], 0, 10) : 400000000UL, x = 1;
	for (unsigned long i = 0; i < n; i++)
		x = mix(x) ^ (x >> 17);
	printf("%lu\n", x & 1);
	return 0;
}
