//===- main.c - `interp MODE N`: run a bytecode program N times -----------===//
// The `syspgo pgo` demo: a small interpreter whose hot path profile-guided
// optimization really improves. MODE is train, eval or cold; it prints a
// checksum that must not change with the build's flags.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm.h"

int main(int argc, char** argv) {
  if (argc < 3 || (strcmp(argv[1], "train") && strcmp(argv[1], "eval") && strcmp(argv[1], "cold"))) {
    fprintf(stderr, "usage: %s train|eval|cold N\n", argv[0]);
    return 2;
  }
  long n = strtol(argv[2], NULL, 10);
  uint8_t code[4096];
  size_t len = program_build(argv[1], 30000, code, sizeof code);
  if (len > sizeof code) {
    fprintf(stderr, "%s: the program does not fit in %zu bytes\n", argv[0], sizeof code);
    return 1;
  }
  unsigned long long sum = 0, steps = 0;
  for (long r = 0; r < n; ++r) {
    struct vm vm;
    memset(&vm, 0, sizeof vm);
    vm.vars[3] = r;
    if (vm_run(&vm, code, len) != 0) {
      fprintf(stderr, "%s: %s\n", argv[0], vm.error);
      return 1;
    }
    for (int i = 0; i < 16; ++i) sum = sum * 31 + (unsigned long long)vm.vars[i];
    steps += vm.steps;
  }
  printf("%llu %llu\n", sum, steps);
  return 0;
}
