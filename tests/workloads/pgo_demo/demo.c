//===- demo.c - the `syspgo pgo` end-to-end workload ----------------------===//
// A small program with a few hot functions and plenty of cold ones, so a
// profile has something to reorder and lay out: `demo MODE N` runs N rounds
// of a mode ("train" mixes hashing, sorting and a branchy state machine;
// "eval" weights them differently, so evaluation is not the training run)
// and prints a checksum that must not change with the build's flags.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"

static uint32_t rng_state = 12345;

static uint32_t next_rand(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}

// A byte-at-a-time hash: a tight loop with a data-dependent branch.
__attribute__((noinline)) uint64_t hash_bytes(const unsigned char* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
    if (p[i] & 0x80) h = (h << 7) | (h >> 57);
  }
  return h;
}

// Insertion sort over small runs: branchy, and cache friendly.
__attribute__((noinline)) void sort_small(uint32_t* v, size_t n) {
  for (size_t i = 1; i < n; ++i) {
    uint32_t x = v[i];
    size_t j = i;
    while (j > 0 && v[j - 1] > x) {
      v[j] = v[j - 1];
      --j;
    }
    v[j] = x;
  }
}

int main(int argc, char** argv) {
  if (argc < 3 || (strcmp(argv[1], "train") && strcmp(argv[1], "eval") && strcmp(argv[1], "cold"))) {
    fprintf(stderr, "usage: %s train|eval|cold ROUNDS\n", argv[0]);
    return 2;
  }
  long rounds = strtol(argv[2], NULL, 10);
  int eval = !strcmp(argv[1], "eval");
  if (!strcmp(argv[1], "cold")) {
    printf("%llu\n", (unsigned long long)cold_report(rounds));
    return 0;
  }
  unsigned char buf[4096];
  uint32_t v[64];
  uint64_t sum = 0;
  for (long r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < sizeof buf; ++i) buf[i] = (unsigned char)next_rand();
    sum += hash_bytes(buf, eval ? sizeof buf / 2 : sizeof buf);
    for (size_t i = 0; i < 64; ++i) v[i] = next_rand() % 1000;
    sort_small(v, eval ? 64 : 32);
    sum += v[0] + v[63];
    sum += run_machine(buf, eval ? sizeof buf : sizeof buf / 4);
  }
  printf("%llu\n", (unsigned long long)sum);
  return 0;
}
