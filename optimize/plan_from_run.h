//===- plan_from_run.h - a prefetch plan from a recorded cold start ------===//
// Joins analyze/'s file-access order of a run to the plan builder: the
// touched ranges become page-aligned extents in first-touch order, each
// file fingerprinted as it is on disk now.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/sqlite.h"
#include "optimize/plan.h"

namespace syspgo {

// Which pages of a cold start go into a plan.
enum class PlanPages {
  kTouched,  // pages read or faulted on: the least, but pages fault-around
             // mapped and the program then used are missing, and each miss
             // costs a synchronous read of the device's readahead window
  kMapped,   // kTouched plus each fault's fault-around window (the default)
  kCached,   // every page the kernel added to the cache for the program,
             // readahead included: what the cold run read, used or not
  kAuto,     // kTouched for a run recorded with readahead off (collect
             // --no-readahead: every used page was faulted on or read by
             // itself), else kMapped
};
// "touched", "mapped", "cached", "auto"; nullopt for anything else.
std::optional<PlanPages> ParsePlanPages(std::string_view s);
const char* PlanPagesName(PlanPages p);

struct PlanFromRunResult {
  Plan plan;
  std::vector<std::string> warnings;  // files left out, and why
  uint64_t touches = 0;               // ranges that went in
  PlanPages pages = PlanPages::kMapped;  // what was used (never kAuto)
  uint64_t fallback_files = 0;        // files planned from page-cache additions
                                      // alone: no read or fault named their pages
};

// `db` is the database's path (for messages); errors say how to record a
// run that can make a plan.
// A file the program neither read nor faulted on but for which the kernel
// added pages (an executable's headers read by execve, a file read through
// sendfile) keeps those pages whatever `pages` says.
struct PlanFromRunOptions {
  PlanPages pages = PlanPages::kAuto;
  uint64_t merge_gap = kPlanDefaultMergeGap;  // see PlanBuilder::SetMergeGap
  bool keep_pieces = false;                   // see PlanBuilder::KeepPieces
};
Result<PlanFromRunResult> PlanFromRun(Db& db, int64_t run_id, const PlanFromRunOptions& o = {});

}  // namespace syspgo
