//===- offcpu.h - off-CPU time as folded stacks for flame graphs ---------===//
// What `syspgo analyze DB offcpu` prints, as BCC's offcputime -f does: one
// line per distinct (thread name, user stack, kernel stack), root first,
// "comm;user frames...;kernel frames... microseconds", which
// flamegraph.pl, speedscope and inferno read. User frames are named by the
// Symbolizer when the binary can be read, else "binary+0xoffset"; kernel
// frames with the run's kallsyms. Time a thread spent runnable without a
// CPU (preempted) ends in a "[runnable]" frame, so it is not mistaken for
// sleeping in the frame below it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "analyze/run.h"
#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

struct FoldedStack {
  std::string stack;   // frames joined by ';', root first
  int64_t us = 0;      // off-CPU time, microseconds
};

// Heaviest first, then by stack text. Errors say when the sched group was
// not recorded and how to record it.
Result<std::vector<FoldedStack>> FoldedOffCpu(Db& db, int64_t run_id);

// `syspgo analyze DB offcpu`: folded lines, or JSON rows.
Result<std::string> OffCpuReport(Db& db, const RunInfo& run, size_t limit, bool json);

}  // namespace syspgo
