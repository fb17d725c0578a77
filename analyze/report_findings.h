//===- report_findings.h - the Findings that `syspgo report` marks -------===//
// The one place that decides which diagnosing analyses the report (and the
// trace export) run, so adding an analysis to them is one line here. An
// analysis that cannot run on this run (its probe group was off) does not
// stop the report: its reason is kept and shown on the page.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "analyze/finding.h"
#include "analyze/run.h"
#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

struct AccessSummary;
class PageCacheChart;

struct FindingSet {
  std::vector<Finding> findings;      // in the order the analyses return them
  std::vector<std::string> analyses;  // analyses that ran
  std::vector<std::string> problems;  // "stalls: <why it could not run>"
};

// What the report draws besides the findings, summarized in the same
// passes that find them, so no table is read twice. Apart from the
// findings: an analysis's result is its findings, and these are what a
// page draws.
struct DrawnSummaries {
  // > 0 asks for the page-cache chart, in this many time buckets.
  int chart_buckets = 0;
  // What the access analysis summarized (null if it could not run).
  std::shared_ptr<const AccessSummary> access;
  // The page-cache chart, tallied in the page-cache analysis's pass (null
  // if not asked for or the analysis could not run).
  std::shared_ptr<const PageCacheChart> pagecache_chart;
};

// The findings of every diagnosing analysis; with `drawn`, also what the
// report draws (see DrawnSummaries).
FindingSet CollectFindings(Db& db, const RunInfo& run, DrawnSummaries* drawn = nullptr);

// What `syspgo report` and `syspgo export` start from: the database opened
// read-only, the run (0: the newest) and its findings. Errors name the
// database and say which runs it has.
struct RunWithFindings {
  Db db;
  RunInfo run;
  FindingSet findings;
  DrawnSummaries drawn;  // filled when chart_buckets > 0 was asked for
};
// chart_buckets > 0: also summarize what the report draws (DrawnSummaries).
// `filter`: read the run for those processes alone (OpenRun).
Result<RunWithFindings> OpenRunWithFindings(const std::string& db_path, int64_t run_id, int chart_buckets = 0,
                                            const data::TaskFilter& filter = {});

}  // namespace syspgo
