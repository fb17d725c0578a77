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
  // What the access analysis summarized, which the report draws too (null
  // if it could not run): read once, not again for the charts.
  std::shared_ptr<const AccessSummary> access;
  // The report's page-cache chart, tallied in the page-cache analysis's pass
  // when FindingOptions asked for it and the analysis ran.
  std::shared_ptr<const PageCacheChart> pagecache_chart;
};

struct FindingOptions {
  // > 0: also tally the report's page-cache chart, in this many time buckets.
  int chart_buckets = 0;
};

FindingSet CollectFindings(Db& db, const RunInfo& run, const FindingOptions& o = {});

// What `syspgo report` and `syspgo export` start from: the database opened
// read-only, the run (0: the newest) and its findings. Errors name the
// database and say which runs it has.
struct RunWithFindings {
  Db db;
  RunInfo run;
  FindingSet findings;
};
Result<RunWithFindings> OpenRunWithFindings(const std::string& db_path, int64_t run_id, const FindingOptions& o = {});

}  // namespace syspgo
