//===- cpu_burn.cc - one hot function under a known chain of callers ------===//
// The cpu test's workload: main -> burn_outer -> burn_middle -> burn_hot,
// which spins until the process has used `ms` (argv[1], default 1000) of
// CPU time: on a loaded machine that takes longer, but gives as many
// samples. Built with frame pointers, no inlining and no sibling calls, so
// every sample's user stack is burn_hot, burn_middle, burn_outer, main. The
// test finds these functions' address ranges with nm. Prints the CPU time
// used, "cpu_ns=N".
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

uint64_t CpuNs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

}  // namespace

extern "C" {

__attribute__((noinline)) uint64_t burn_hot(uint64_t until_ns) {
  uint64_t x = until_ns;
  do {
    // A clock read every 64 Ki steps keeps the time spent outside this function negligible.
    for (int i = 0; i < 65536; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
    asm volatile("" : "+r"(x));
  } while (CpuNs() < until_ns);
  return x;
}

__attribute__((noinline)) uint64_t burn_middle(uint64_t until_ns) { return burn_hot(until_ns) ^ 1; }

__attribute__((noinline)) uint64_t burn_outer(uint64_t until_ns) { return burn_middle(until_ns) + 1; }

}  // extern "C"

int main(int argc, char** argv) {
  long ms = argc > 1 ? atol(argv[1]) : 1000;
  uint64_t r = burn_outer(CpuNs() + static_cast<uint64_t>(ms) * 1000000);
  printf("cpu_ns=%llu r=%llu\n", static_cast<unsigned long long>(CpuNs()), static_cast<unsigned long long>(r & 1));
  return 0;
}
