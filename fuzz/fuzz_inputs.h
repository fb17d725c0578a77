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
// appending, and on whatever opened, the run lookup and the `files` and `io`
// analyses of every run. Refusals and analysis errors must name the file,
// and a database that is accepted holds no trigger, virtual table or view
// but the schema's (common/profile_db.cc checks the rest).
std::string ProfileDbInput(const uint8_t* data, size_t size);

// The bytes as a syspgo.PrefetchPlan message, given the plan header and
// read as `syspgo prefetch` reads a plan; its files pointed at real files of
// every kind (a FIFO, a directory, a socket, /dev/null, short and empty
// files, a missing one), then dry-run, replayed and held (fuzz/
// plan_replay_input.cc says how). Anything but a regular file must be
// refused by kind, nothing may be read past a file's end, the replay must
// read what the dry run said it would and signal its lead once.
std::string PlanReplayInput(const uint8_t* data, size_t size);

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

// The bytes as an EROFS image laid out by LayOutErofsImage with a fixed
// plan (fuzz/erofs_image_input.cc says what it promises).
std::string ErofsImageInput(const uint8_t* data, size_t size);

// For the targets' own files: writes `data` as `name` in this process's
// scratch directory, with no -wal, -shm or -journal left from an earlier
// input, and returns its path.
std::string ScratchInput(const std::string& name, const uint8_t* data, size_t size);
// The path `name` has in that directory (nothing is written).
std::string ScratchPath(const std::string& name);
// "" when `e` names `name`, else the broken promise, naming `what`.
std::string MustName(const std::string& message, const std::string& name, const char* what);

}  // namespace syspgo::fuzz
