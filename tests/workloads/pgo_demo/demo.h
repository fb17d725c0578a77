//===- demo.h - the two halves of the `syspgo pgo` workload --------------===//
#pragma once
#include <stddef.h>
#include <stdint.h>

// A byte-driven state machine (machine.c): the hot switch of the workload.
uint64_t run_machine(const unsigned char* p, size_t n);
// Cold code: runs only in "cold" mode, so a profile leaves it out.
uint64_t cold_report(long n);
