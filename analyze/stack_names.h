//===- stack_names.h - recorded stacks as function names -----------------===//
// The stall and off-CPU passes show where a thread waited: its kernel stack
// (named with the kallsyms text stored with the run) and its user stack
// (named through the run's mapping table and the Symbolizer of
// symbolize.h, which finds each binary by build-id). Everything comes from
// the database and the recorded binaries, never from the running system,
// so a run analyzed on another boot still names the kernel it ran on.
//
// A kernel stack taken at sched_switch starts with the frames of the probe
// itself (the BPF program, bpf_trace_run*, __traceiter_sched_switch); they
// say nothing about the thread and are dropped here, once, for every pass.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analyze/data/cpu_tables.h"
#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

class Symbolizer;

class StackNames {
 public:
  // Reads the run's kallsyms and mappings. A run without kallsyms (the cpu
  // group was off) still loads: kernel frames are then hex addresses.
  static Result<std::unique_ptr<StackNames>> Load(Db& db, int64_t run_id);
  ~StackNames();

  // Kernel frames of stack `id`, innermost first, without the probe's own
  // frames; "0xffff..." where no symbol covers an address.
  std::vector<std::string> Kernel(int64_t id);
  // User frames of stack `id` taken in process `pid` at `ts`, innermost
  // first: the function (inlined callers expanded, outermost last), or
  // "binary+0xoffset" when the binary cannot be read, or the raw address
  // when no mapping covers it.
  std::vector<std::string> User(int64_t id, int64_t pid, int64_t ts);
  // The function a sampled instruction `addr` of process `pid` at `ts` is
  // in: its ELF symbol (demangled, without arguments), "" when the binary
  // has none there or cannot be read; and the binary's file name ("" when
  // no mapping covers it).
  struct FunctionAt {
    std::string function, binary;
  };
  FunctionAt UserFunction(uint64_t addr, int64_t pid, int64_t ts);
  // Whether `addr` is in a readable binary's mapping but not in its code.
  bool NotCode(uint64_t addr, int64_t pid, int64_t ts);
  // The kernel function of `addr` ("name [module]"), "" when none covers it.
  std::string KernelFunction(uint64_t addr) const;
  bool has_kallsyms() const { return has_kallsyms_; }

 private:
  StackNames(Db& db, int64_t run_id);
  const std::vector<uint64_t>& Frames(int64_t id);
  std::vector<std::string> UserFrame(uint64_t addr, bool return_address, int64_t pid, int64_t ts);
  const MappingRow* MappingAt(uint64_t addr, int64_t pid, int64_t ts) const;

  Db& db_;
  int64_t run_id_;
  std::unique_ptr<Symbolizer> sym_;
  bool has_kallsyms_ = false;
  std::map<int64_t, std::vector<uint64_t>> frames_;        // stack id -> addresses
  MappingsByPid maps_;
};

// "f(int, char const*)" -> "f": argument lists make folded stacks and
// findings hard to read and add nothing to the name.
std::string ShortFunctionName(const std::string& demangled);

}  // namespace syspgo
