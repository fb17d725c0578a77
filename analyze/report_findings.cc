//===- report_findings.cc - the Findings that `syspgo report` marks ------===//
#include "analyze/report_findings.h"

#include "analyze/access_summary.h"
#include "analyze/data/query.h"
#include "analyze/pagecache.h"
#include "analyze/pagecache_chart.h"
#include "analyze/report_common.h"
#include "analyze/stalls.h"

namespace syspgo {
namespace {

// An analysis: its findings, and, when `drawn` is given, what it summarized
// that the report draws as well.
struct Source {
  const char* name;
  Result<std::vector<Finding>> (*run)(Db& db, const RunInfo& run, DrawnSummaries* drawn);
};

Result<std::vector<Finding>> Stalls(Db& db, const RunInfo& run, DrawnSummaries*) {
  auto r = FindStalls(db, {run.id, kDefaultStallThresholdNs});
  if (!r) return r.error();
  return std::move(r->findings);
}

Result<std::vector<Finding>> Pagecache(Db& db, const RunInfo& run, DrawnSummaries* drawn) {
  PagecacheQuery q{run.id, 0};
  std::shared_ptr<PageCacheChart> chart;
  if (drawn && drawn->chart_buckets > 0) {
    // Without an axis the report tallies the chart in a pass of its own.
    if (auto axis = ReadTimeAxis(db, run.id, drawn->chart_buckets); axis.ok()) {
      chart = std::make_shared<PageCacheChart>(*axis, data::HasTable(db, "page_cache_refault"));
      q.on_row = [&chart](const PageCacheRow& r) { chart->Add(r); };
    }
  }
  auto r = AnalyzePagecache(db, q);
  if (!r) return r.error();
  if (drawn) drawn->pagecache_chart = std::move(chart);
  return std::move(r->findings);
}

Result<std::vector<Finding>> Access(Db& db, const RunInfo& run, DrawnSummaries* drawn) {
  auto s = SummarizeAccess(db, run.id);
  if (!s) return s.error();
  std::vector<Finding> found;
  if (auto f = RandomPagingFinding(*s, run)) found.push_back(std::move(*f));
  if (drawn) drawn->access = std::make_shared<const AccessSummary>(std::move(*s));
  return found;
}

// Every diagnosing analysis, in the order its findings are listed.
const std::vector<Source>& Sources() {
  static const std::vector<Source> sources = {
      {"stalls", &Stalls},
      {"pagecache", &Pagecache},
      {"access", &Access},
  };
  return sources;
}

}  // namespace

FindingSet CollectFindings(Db& db, const RunInfo& run, DrawnSummaries* drawn) {
  FindingSet out;
  for (const Source& s : Sources()) {
    auto found = s.run(db, run, drawn);
    if (!found) {
      out.problems.push_back(std::string(s.name) + ": " + found.error().message);
      continue;
    }
    out.analyses.push_back(s.name);
    for (Finding& f : *found) out.findings.push_back(std::move(f));
  }
  return out;
}

Result<RunWithFindings> OpenRunWithFindings(const std::string& db_path, int64_t run_id, int chart_buckets,
                                            const data::TaskFilter& filter) {
  auto opened = OpenRun(db_path, run_id, filter);
  if (!opened) return opened.error();
  RunWithFindings out{std::move(opened->db), std::move(opened->run), {}, {}};
  out.drawn.chart_buckets = chart_buckets;
  out.findings = CollectFindings(out.db, out.run, chart_buckets > 0 ? &out.drawn : nullptr);
  return out;
}

}  // namespace syspgo
