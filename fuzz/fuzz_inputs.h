//===- fuzz_inputs.h - what each fuzz target does with one input ---------===//
// The body of every libFuzzer target, kept out of the LLVMFuzzerTestOneInput
// wrappers so that the regression test (tests/fuzz_regression_test.cc) can
// replay the seed corpora and every saved crash through the same code in the
// ordinary g++ build. A function returns normally for any input; a crash, a
// sanitizer report or a hang is the bug. What it returns is a broken promise
// that is not a crash (an error that does not name its input, a plan that
// does not survive a round trip), "" when every promise held.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace syspgo::fuzz {

// The bytes as a prefetch plan file: ParsePlan, and ReadPlan on a file
// holding them. Accepted plans must serialize back to a plan that parses
// equal; refusals must name the file.
std::string PlanInput(const uint8_t* data, size_t size);

// The bytes as a profile database file: OpenProfileDb read-only and then for
// appending, and on whatever opened, the run lookup and the `files` analysis
// of every run. Refusals and analysis errors must name the file.
std::string ProfileDbInput(const uint8_t* data, size_t size);

// The bytes as a profile database read for its CPU samples, as `syspgo
// merge` and `analyze hot` read it (analyze/sample_db.h): every run with
// samples is loaded and merged, and its kernel symbol table is parsed and
// used to name the kernel frames. Errors must name the file. Built where
// analyze/sample_db.cc exists (see fuzz/CMakeLists.txt).
std::string CpuSamplesInput(const uint8_t* data, size_t size);

// The bytes as a pprof profile read for its CPU samples, as `syspgo
// optimize --pprof` and `syspgo merge` read one (analyze/sample_pprof.h).
// Refusals and warnings must name the file; an accepted profile must have
// samples with counts and stacks, frames that name binaries it has, and
// merge with weights without losing samples. Built where
// analyze/sample_pprof.cc exists (see fuzz/CMakeLists.txt).
std::string PprofInput(const uint8_t* data, size_t size);

// For the targets' own files: writes `data` as `name` in this process's
// scratch directory, with no -wal, -shm or -journal left from an earlier
// input, and returns its path.
std::string ScratchInput(const std::string& name, const uint8_t* data, size_t size);
// "" when `e` names `name`, else the broken promise, naming `what`.
std::string MustName(const std::string& message, const std::string& name, const char* what);

}  // namespace syspgo::fuzz
