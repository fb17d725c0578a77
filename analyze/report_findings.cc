//===- report_findings.cc - the Findings that `syspgo report` marks ------===//
#include "analyze/report_findings.h"

#include "analyze/access_summary.h"
#include "analyze/pagecache.h"
#include "analyze/stalls.h"
#include "common/profile_db.h"

namespace syspgo {
namespace {

// An analysis: its findings, and anything it summarized that the report
// draws as well, left in `out`.
struct Source {
  const char* name;
  Result<std::vector<Finding>> (*run)(Db& db, const RunInfo& run, FindingSet* out);
};

Result<std::vector<Finding>> Stalls(Db& db, const RunInfo& run, FindingSet*) {
  auto r = FindStalls(db, {run.id, kDefaultStallThresholdNs});
  if (!r) return r.error();
  return std::move(r->findings);
}

Result<std::vector<Finding>> Pagecache(Db& db, const RunInfo& run, FindingSet*) {
  auto r = AnalyzePagecache(db, {run.id, 0});
  if (!r) return r.error();
  return std::move(r->findings);
}

Result<std::vector<Finding>> Access(Db& db, const RunInfo& run, FindingSet* out) {
  auto s = SummarizeAccess(db, run.id);
  if (!s) return s.error();
  std::vector<Finding> found;
  if (auto f = RandomPagingFinding(*s, run)) found.push_back(std::move(*f));
  out->access = std::make_shared<const AccessSummary>(std::move(*s));
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

FindingSet CollectFindings(Db& db, const RunInfo& run) {
  FindingSet out;
  for (const Source& s : Sources()) {
    auto found = s.run(db, run, &out);
    if (!found) {
      out.problems.push_back(std::string(s.name) + ": " + found.error().message);
      continue;
    }
    out.analyses.push_back(s.name);
    for (Finding& f : *found) out.findings.push_back(std::move(f));
  }
  return out;
}

Result<RunWithFindings> OpenRunWithFindings(const std::string& db_path, int64_t run_id) {
  auto db = OpenProfileDb(db_path, DbMode::kReadOnly);
  if (!db) return db.error();
  auto run = ResolveRun(*db, run_id);
  if (!run) return run.error();
  RunWithFindings out{std::move(*db), std::move(*run), {}};
  out.findings = CollectFindings(out.db, out.run);
  return out;
}

}  // namespace syspgo
