//===- plan_from_run.h - a prefetch plan from a recorded cold start ------===//
// Joins analyze/'s file-access order of a run to the plan builder: the
// touched ranges become page-aligned extents in first-touch order, each
// file fingerprinted as it is on disk now.
#pragma once
#include <string>
#include <vector>

#include "common/result.h"
#include "common/sqlite.h"
#include "optimize/plan.h"

namespace syspgo {

struct PlanFromRunResult {
  Plan plan;
  std::vector<std::string> warnings;  // files left out, and why
  uint64_t touches = 0;               // ranges that went in
};

// `db` is the database's path (for messages); errors say how to record a
// run that can make a plan.
Result<PlanFromRunResult> PlanFromRun(Db& db, int64_t run_id);

}  // namespace syspgo
