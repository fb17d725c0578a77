//===- report.h - one run as a self-contained HTML page -------------------===//
// What `syspgo report DB -o report.html` writes: a timeline per thread
// (on-CPU and off-CPU, file syscalls with their latency, block requests)
// with the run's findings marked on it, block and syscall latency
// histograms, the top files, page-cache churn over time and a flame graph
// of the CPU samples. The page is one file with its data embedded as JSON
// and drawn by inline JavaScript: it opens offline, from a mail attachment
// or a CI artifact, and needs nothing from the network.
//
// A run can hold millions of events; a browser draws tens of thousands
// comfortably. So the page gets every aggregate (counts, histograms,
// densities) in full but only the longest intervals of each kind up to the
// limits below, and says on the page how many it shows of how many.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "analyze/report_findings.h"
#include "analyze/run.h"
#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

struct ReportOptions {
  size_t max_syscalls_per_thread = 3000;   // the longest; the density strip counts all
  size_t max_offcpu_per_thread = 3000;     // the longest off-CPU intervals
  size_t max_block_requests = 20000;       // the longest, over all devices
  size_t max_occurrences = 2000;           // per finding, marked on the timeline
  size_t top_files = 20;
  size_t access_files = 6;                 // files in the access-order charts, most pages used first
  size_t max_access_points = 4000;         // touches drawn per file (evenly thinned beyond)
  int time_buckets = 400;                  // resolution of densities and page-cache churn over time
  double flame_min_share = 0.001;          // flame-graph frames below this share of samples are left out
  std::vector<std::string> debug_dirs;     // for symbolizing the flame graph (as `analyze hot --debug-dir`)
};

// The page's data: one JSON object (see the top of report_page.cc for its
// fields). Errors name the database and the table that could not be read.
Result<std::string> ReportData(Db& db, const RunInfo& run, const FindingSet& findings, const ReportOptions& opts);

// The HTML page around `data_json` (as ReportData returns it).
std::string ReportHtml(const std::string& data_json, const RunInfo& run);

// ReportData and ReportHtml together.
Result<std::string> BuildReport(Db& db, const RunInfo& run, const FindingSet& findings, const ReportOptions& opts);

// The HTML/CSS/JS template, with @@TITLE@@ and @@DATA@@ where the run's
// title and data go (report_page.cc).
extern const char kReportPage[];

}  // namespace syspgo
