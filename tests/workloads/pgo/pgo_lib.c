//===- pgo_lib.c - the shared-library half of the profiles workload ------===//
// Built as libpgo_lib.so: its hot function must be symbolized through the
// library's own mapping (file offset, program headers), not the
// executable's. Exported, so it is called through the PLT.
#include <stdint.h>

__attribute__((noinline)) uint64_t lib_mix(uint64_t x, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) x = (x ^ (x >> 29)) * 0xBF58476D1CE4E5B9ull + i;
  return x;
}
