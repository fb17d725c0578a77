//===- oncpu_stalls.h - pauses a thread spends on a CPU in the kernel ----===//
// A thread that spends the stall threshold or more inside syscalls is
// paused whether it slept there or ran: generating random bytes, copying a
// large write into the page cache, zeroing or freeing memory, reclaiming
// it. The off-CPU analysis (stalls.h) sees only the sleeps; this one reads
// the syscalls that ran long on a CPU (syscall_oncpu) and makes stalls of
// them. A thread's consecutive such calls with little of its own time
// between them (getrandom, then the write of what it made, then unlink)
// are one episode; a read or write that waits (dirty-page throttling)
// ends it but is part of it, a call that waits for anything else is not.
// An episode's time is split by what the kernel did, from the kernel
// stacks of the CPU samples taken inside it, as an off-CPU stall's time is
// split by what it waited for. Episodes with the same cause
// (thread, syscalls, file by shape) are one Finding, with its period (in
// steps of the thread's loop when a step ends in a sleep of its own).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analyze/finding.h"
#include "analyze/stalls.h"
#include "analyze/wait_interval.h"
#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

// What the on-CPU analysis borrows from the stall analysis that calls it.
struct OnCpuInputs {
  Db* db = nullptr;
  int64_t run_id = 0, threshold_ns = 0, command_start_ns = 0, wall_ns = 0;
  int64_t sample_period_ns = 0;                          // 0: the cpu group did not sample the run
  const std::map<int64_t, Intervals>* threads = nullptr;  // tid -> its off-CPU intervals, by time
  std::function<std::string(int64_t tid, int64_t pid, int64_t ts)> comm;
  std::function<const std::vector<std::string>&(int64_t stack)> kernel;
  std::function<std::vector<std::string>(int64_t stack, int64_t pid, int64_t ts)> user;
  std::function<std::string(int64_t nr)> call_name;
  std::function<std::string(uint64_t dev, uint64_t ino, int64_t ts)> path;  // "" when unknown
};

// One long on-CPU syscall, with its file when it had a file descriptor.
struct OnCpuCall {
  int64_t ts = 0, dur = 0, oncpu = 0, nr = 0, arg1 = 0, ret = 0;
  uint64_t dev = 0, ino = 0;
  int64_t kind = 0, file_ret = 0;
};

struct OnCpuEpisode {
  int64_t tid = 0, pid = 0, start = 0, end = 0;
  int64_t in_calls = 0, oncpu = 0;  // summed over its calls
  std::vector<OnCpuCall> calls;
};

// The threads' episodes of long on-CPU syscalls whose calls took the
// threshold or more, by thread and time; none when the run's database
// predates the table.
Result<std::vector<OnCpuEpisode>> FindOnCpuEpisodes(const OnCpuInputs& in);

// One finding per cause, with its StallDetail (cause "kernel-cpu").
std::vector<std::pair<Finding, StallDetail>> OnCpuFindings(const OnCpuInputs& in,
                                                           const std::vector<OnCpuEpisode>& episodes);

}  // namespace syspgo
