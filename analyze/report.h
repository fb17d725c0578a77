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
// What `drawn` lacks (a chart on other buckets, or none) is read here.
Result<std::string> ReportData(Db& db, const RunInfo& run, const FindingSet& findings, const DrawnSummaries& drawn,
                               const ReportOptions& opts);

// The HTML page around `data_json` (as ReportData returns it).
std::string ReportHtml(const std::string& data_json, const RunInfo& run);

// ReportData and ReportHtml together.
Result<std::string> BuildReport(Db& db, const RunInfo& run, const FindingSet& findings, const DrawnSummaries& drawn,
                                const ReportOptions& opts);

// The page of `syspgo report`:
//
// One page, no network: the run's data sits in a <script type=
// "application/json"> element and report.js draws it with canvas
// (the timeline, where there can be tens of thousands of intervals) and
// SVG (charts and the flame graph, where each element carries its own
// tooltip). ReportHtml() puts the title at @@TITLE@@ and the data at
// @@DATA@@. The page is analyze/report/page.html with its CSS and scripts
// (page.css, errors.js, report.js) put in at build time (analyze/CMakeLists.txt).
//
// The data object (report.cc writes it):
//   run        id, command, status, host, kernel, version, start_realtime_ns,
//              command_start_ts, end_ts, span_ns, events_recorded,
//              events_dropped, only (the processes a filtered read covers, as the
//              text's "only:" line says; "" for all), offcpu_min_ns,
//              probes [[group, attached, detail, events]],
//              bucket_origin_ns, bucket_ns (density and page-cache series are
//              buckets of bucket_ns from bucket_origin_ns, the command's start)
//   threads    [{tid, pid, comm, process, start, end, sys_total [n, ns],
//              off_total [n, ns], sys [[ts, dur, name, file, ret, offset]],
//              off [[ts, dur, state, waker]], density [count per time bucket]}]
//   devices    [{dev, requests, rows, bytes, shown, lanes,
//              items [[ts, dur, op, bytes, lane, details]]}]
//   block_hist [{dev, op, count, sum_ns, buckets [[lo_ns, hi_ns, count]]}]
//   block_hist_note  why there are none, when there are none
//   sys_hist   [{name, count, total_ns, worst_ns, buckets [[lo_ns, hi_ns, count]]}]
//   findings   [{kind, title, facts [[label, value]], count, total_ns, worst_ns,
//              share, period, fix, evidence [], occurrences, occ [[ts, dur, tid]],
//              links [[ts, waker tid, woken tid]] (wakeups on the way to the root)}]
//   analyses   {ran [names], problems [text]}
//   files      [FileStats as `analyze files --json` names them]
//   pagecache  {note, added [], deleted [], refaulted [], has_refaults,
//              files [{path, added, deleted, refaulted}], deleters [[comm, pages]]}
//   access     {note, files [{path, size, used_pages, touches, shown,
//              points [[ts (ns since the command started), offset, length, kind
//              (0 page fault, 1 read, 2 added to the page cache)]]}]}
//   flame      {note, samples, period_ns, min_samples, omitted, problems [],
//              tree [name, samples, kind, [children]]}
//   limits     the caps in force (ReportOptions)
//   strings    the string table that the numeric label fields above index
// Times are ns since the run's start (the database's ts).
//
// The page reports its own health for tests and for people: script errors
// are shown in a red box at the top and counted in #report-status, whose
// data-state becomes "ok" once every panel has drawn.
extern const char kReportPage[];

}  // namespace syspgo
