//===- sample_db.h - CPU samples of a run, from the profile database -----===//
// The one place that reads the cpu group's tables (cpu_sample, stack,
// mapping, kallsyms), and the sched group's offcpu stacks beside them. Everything downstream works on the SampleSet.
#pragma once
#include <cstdint>
#include <vector>

#include "analyze/sample_set.h"
#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

// Loads run `run_id`'s CPU samples: identical stacks folded, user frames
// resolved through the run's mappings to (binary, file offset). With
// `offcpu`, also the sched group's off-CPU intervals as SampleSet::offcpu
// (time by stack; none if the run did not record them). Errors when the
// run has no CPU samples, saying why (cpu group off or failed, process
// too short) and how to record them.
Result<SampleSet> LoadCpuSamples(Db& db, int64_t run_id, bool offcpu = false);

// Ids of the runs that have CPU samples, oldest first.
Result<std::vector<int64_t>> CpuRuns(Db& db);

}  // namespace syspgo
