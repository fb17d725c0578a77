//===- work_breakdown.h - where the time a task ran on a CPU went ---------===//
// "python3 runs on a CPU" says that a thread worked, not on what. Where an
// answer says so (a root of a stall, a row of the command's critical path),
// this says where that time went, from the run's own CPU samples taken in
// the spans the answer is about: the functions the samples were in (user
// code by its ELF symbol, kernel code by the run's kallsyms), the binaries,
// the share in the kernel; and, when the spans lie in several processes
// (the compilers of a parallel build), each process by what it was given
// to work on (the source file of a compile, from its argv) with its share
// of the time.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyze/data/tasks.h"
#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

class StackNames;

// [from, to) of thread `tid` (of process `pid`), ns since run start.
struct WorkSpan {
  int64_t tid = 0, pid = 0, from = 0, to = 0;
};

struct WorkFunction {
  std::string function;  // "" when its binary has no symbol there
  std::string binary;    // the file's name; "kernel" for kernel code
  int64_t samples = 0;
};

struct WorkProcess {
  int64_t pid = 0;
  std::string comm;
  std::string input;  // what it worked on: the source files its argv names ("" if none)
  int64_t ns = 0;     // time of the spans in it
};

struct WorkBreakdown {
  int64_t ns = 0;              // time of the spans
  int64_t samples = 0;         // CPU samples taken in them
  int64_t kernel_samples = 0;  // of which in kernel code
  std::vector<WorkFunction> functions;                   // most samples first, the top few
  std::vector<std::pair<std::string, int64_t>> binaries;  // binary -> samples, most first
  std::vector<WorkProcess> processes;                     // most time first; only when several
  std::vector<std::pair<std::string, int64_t>> programs;  // task name -> time, most first; only when several
  int64_t process_count = 0;                              // processes the spans lie in
  bool empty() const { return samples == 0 && processes.empty(); }
};

// "61.0% sgemm_ (libblas.so.3), 22.4% at::native::add_kernel (libtorch_cpu.so), ...; in the kernel 3.1%",
// "" when no sample fell in the spans.
std::string WorkFunctionsText(const WorkBreakdown& w);
// "34 processes; deflate.c 14.2%, inflate.c 12.0%, ...", "" for one process.
std::string WorkProcessesText(const WorkBreakdown& w);
nlohmann::ordered_json WorkJson(const WorkBreakdown& w);

// The source files an argv names (arguments ending in .c, .cc, .cpp, ...),
// each once, in order: what a compiler process works on.
std::string ArgvInputs(const std::string& argv);

class WorkSamples {
 public:
  // Reads the run's CPU samples (none when the cpu group was off: every
  // breakdown then has processes only).
  static Result<std::unique_ptr<WorkSamples>> Load(Db& db, int64_t run_id, StackNames& names, const Tasks& tasks);

  // Where the time of `spans` went. Overlapping spans count once.
  WorkBreakdown Of(std::vector<WorkSpan> spans);
  // The samples of threads called `comm` in the whole run.
  int64_t CountNamed(const std::string& comm) const;

 private:
  struct Sample {
    int64_t ts = 0, pid = 0;
    bool kernel = false;
    uint64_t ip = 0;
  };
  WorkSamples(StackNames& names, const Tasks& tasks) : names_(names), tasks_(tasks) {}
  WorkFunction Name(const Sample& s);
  void AddProcesses(const std::vector<WorkSpan>& spans, WorkBreakdown& w) const;

  StackNames& names_;
  const Tasks& tasks_;
  std::map<int64_t, std::vector<Sample>> by_tid_;  // by time
  std::map<std::tuple<int64_t, bool, uint64_t>, WorkFunction> named_;  // (pid, kernel, ip) -> its function
};

}  // namespace syspgo
