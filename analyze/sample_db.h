//===- sample_db.h - CPU samples of a run, from the profile database -----===//
// The one place that reads the cpu group's tables (cpu_sample, stack,
// mapping, kallsyms). Everything downstream works on the SampleSet.
#pragma once
#include <cstdint>
#include <vector>

#include "analyze/sample_set.h"
#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

// Loads run `run_id`'s CPU samples: identical stacks folded, user frames
// resolved through the run's mappings to (binary, file offset). Errors
// when the run has none, saying why (cpu group off or failed, process
// too short) and how to record them.
Result<SampleSet> LoadCpuSamples(Db& db, int64_t run_id);

// Ids of the runs that have CPU samples, oldest first.
Result<std::vector<int64_t>> CpuRuns(Db& db);

}  // namespace syspgo
