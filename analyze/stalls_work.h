//===- stalls_work.h - stalls that come down to work, and who stalled ----===//
// Helpers of stalls.cc kept apart from how stalls are found:
// - Findings whose waits all come down to the same work on a CPU (the
//   make, the shells and the compiler drivers of a parallel build all wait
//   for the compilers) are one cause: they become one finding, named for
//   that work, with the waiters listed inside.
// - A finding's time is the wall time its stalls covered: stalls of
//   several threads at once count once, so no share exceeds the run.
// - Who stalled: a thread, some threads of one process, or several
//   processes (a DataLoader's workers are processes, not threads of the
//   command).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "analyze/data/tasks.h"
#include "analyze/finding.h"
#include "analyze/stalls.h"

namespace syspgo {

using FoundStall = std::pair<Finding, StallDetail>;

// The wall time the occurrences cover: overlapping ones count once.
int64_t CoveredNs(const std::vector<Occurrence>& occ);

// Findings whose main root is the same work on a CPU merged into the one
// with the most time (they come sorted so): its title names the work and
// the waiters, its time is the wall time all of them covered.
// `command_pid` tells the command's own process from others of its name.
std::vector<FoundStall> MergeByWorkRoot(std::vector<FoundStall> found, int64_t wall_ns, int64_t command_pid = 0);

// Where a finding's work root's time went, as facts: "work" (the functions)
// and "processes" (when the work ran in several), and a fix that names
// the work. `cpu_ns` is the time the root's task name ran on CPUs in the
// whole run (from its samples; 0 unknown).
void AddWorkFacts(Finding& f, const RootShare& root, int64_t cpu_ns, int64_t wall_ns);

// Who stalled, for a title ("python3 (main thread)", "python3 (2 processes)")
// and for the fact naming them (label "thread" or "processes", and text).
struct StallWho {
  std::string title, label, text;
};
StallWho WhoStalled(const std::string& comm, const std::vector<int64_t>& pids, const std::vector<int64_t>& tids,
                    bool main_thread, int64_t command_pid, const Tasks& tasks);

}  // namespace syspgo
