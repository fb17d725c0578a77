//===- machine.c - a byte-driven state machine and some cold code ---------===//
// In its own file so the workload has more than one object to compile and
// link: the build has to pass the profile flags to every compile.
#include "demo.h"

__attribute__((noinline)) uint64_t run_machine(const unsigned char* p, size_t n) {
  uint64_t acc = 0;
  int state = 0;
  for (size_t i = 0; i < n; ++i) {
    switch (state) {
      case 0: acc += p[i]; state = p[i] & 3; break;
      case 1: acc ^= (uint64_t)p[i] << 3; state = (p[i] >> 2) & 3; break;
      case 2: acc = acc * 31 + p[i]; state = p[i] % 3; break;
      default: acc -= p[i]; state = 0; break;
    }
  }
  return acc;
}

__attribute__((noinline)) static uint64_t cold_step(uint64_t x) { return x * 6364136223846793005ull + 1442695040888963407ull; }

__attribute__((noinline)) uint64_t cold_report(long n) {
  uint64_t x = 7;
  for (long i = 0; i < n; ++i) x = cold_step(x);
  return x;
}
