//===- pgo_app.c - the profiles workload: known hot code in a PIE --------===//
// The symbolizer and emitter tests read this program's addresses, and the
// end-to-end test samples it. It spends its CPU time (argv[1] ms, default
// 300) in hot_kernel, whose loop has two paths on one source line
// (discriminators) and an always-inlined helper (an inline frame), then in
// warm_local (a static function: a local symbol, which BOLT names
// "warm_local/1"), then in lib_mix from libpgo_lib.so. never_called and
// via_pointer stay cold. Built with frame pointers and no sibling calls, so user stacks keep
// every caller.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t lib_mix(uint64_t x, uint64_t n);

static inline __attribute__((always_inline)) uint64_t rotate_mix(uint64_t x) {
  x = (x << 13) | (x >> 51);
  return x * 0x9E3779B97F4A7C15ull;
}

__attribute__((noinline)) uint64_t hot_kernel(uint64_t n, uint64_t seed) {
  uint64_t a = seed, b = 1;
  for (uint64_t i = 0; i < n; ++i) {
    if ((a ^ i) & 1) a += rotate_mix(i ^ b); else b = (b ^ a) >> 1 | 1;
    __asm__ volatile("" : "+r"(a), "+r"(b));
  }
  return a ^ b;
}

static __attribute__((noinline)) uint64_t warm_local(uint64_t n, uint64_t x) {
  for (uint64_t i = 0; i < n; ++i) {
    x = x * 2862933555777941757ull + 3037000493ull;
    __asm__ volatile("" : "+r"(x));
  }
  return x;
}

__attribute__((noinline)) uint64_t never_called(uint64_t x) { return x * 3 + 1; }

// Called only through a pointer, from main, and only with 4+ arguments (so
// never in the tests that run this): the emitter tests fake samples below
// that indirect call. Its address is taken (the pointer's initializer);
// hot_kernel's and warm_local's are not.
__attribute__((noinline)) uint64_t via_pointer(uint64_t x) { return never_called(x) ^ x; }
uint64_t (*volatile pointer_to)(uint64_t) = via_pointer;

static uint64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) uint64_t run_rounds(uint64_t until_ns) {
  uint64_t acc = 0;
  do {
    // Per round: about 6 parts hot_kernel, 3 parts warm_local, 1 part lib_mix.
    acc += hot_kernel(600000, acc);
    acc ^= warm_local(300000, acc);
    acc += lib_mix(acc, 100000);
  } while (cpu_ns() < until_ns);
  return acc;
}

int main(int argc, char** argv) {
  long ms = argc > 1 ? atol(argv[1]) : 300;
  uint64_t r = run_rounds(cpu_ns() + (uint64_t)ms * 1000000ull);
  if (argc > 2) r += never_called(r);
  if (argc > 3) r += pointer_to(r);
  printf("r=%llu\n", (unsigned long long)(r & 0xff));
  return 0;
}
