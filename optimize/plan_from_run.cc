//===- plan_from_run.cc - a prefetch plan from a recorded cold start -----===//
#include "optimize/plan_from_run.h"

#include <unistd.h>

#include <set>
#include <utility>

#include "analyze/access_order.h"
#include "analyze/run.h"

namespace syspgo {

std::optional<PlanPages> ParsePlanPages(std::string_view s) {
  if (s == "touched") return PlanPages::kTouched;
  if (s == "mapped") return PlanPages::kMapped;
  if (s == "cached") return PlanPages::kCached;
  if (s == "auto") return PlanPages::kAuto;
  return std::nullopt;
}

const char* PlanPagesName(PlanPages p) {
  switch (p) {
    case PlanPages::kTouched: return "touched";
    case PlanPages::kMapped: return "mapped";
    case PlanPages::kCached: return "cached";
    case PlanPages::kAuto: return "auto";
  }
  return "?";
}

Result<PlanFromRunResult> PlanFromRun(Db& db, int64_t run_id, const PlanFromRunOptions& o) {
  PlanPages pages = o.pages;
  if (pages == PlanPages::kAuto) {
    pages = RecordedWithoutReadahead(db, run_id) ? PlanPages::kTouched : PlanPages::kMapped;
  }
  auto order = FileAccessOrder(db, run_id);
  if (!order) return order.error();
  if (order->touches.empty())
    return MakeError("run " + std::to_string(run_id) + " of '" + db.path() +
                     "' touched no file the plan could name (" + std::to_string(order->unnamed.size()) +
                     " unnamed). Record a cold start with the file groups on: syspgo collect --cold --probes "
                     "fileio,faults,pagecache -o " + db.path() + " -- COMMAND");
  // Files the collector itself mapped (RunSettings::collector_files):
  // the pages it had mapped stayed cached through --cold's drop, and
  // fault-around mapped them into the command, used without a fault. A
  // replay maps none of them, so their fault-around windows count as
  // touched (without them clang-19 --version made 3 major faults after a
  // replay, reading 2.2 MiB of libstdc++, libm and libgcc_s).
  auto settings = ReadRunSettings(db, run_id);
  if (!settings) return settings.error();
  std::set<std::pair<uint64_t, uint64_t>> shared(settings->collector_files.begin(), settings->collector_files.end());
  // Files with direct evidence (a read or a fault) of which pages were used.
  std::vector<bool> direct(order->files.size(), false), is_shared(order->files.size(), false);
  for (const FileTouch& t : order->touches)
    if (t.source == 'r' || t.source == 'f') direct[t.file] = true;
  for (size_t i = 0; i < order->files.size(); ++i)
    is_shared[i] = shared.count({order->files[i].dev, order->files[i].ino}) != 0;
  PlanBuilder b;
  b.SetMergeGap(o.merge_gap);
  if (o.keep_pieces) b.KeepPieces();
  PlanFromRunResult r;
  std::set<uint32_t> fallback;
  b.Reserve(order->touches.size());
  for (const FileTouch& t : order->touches) {
    const TouchedFile& f = order->files[t.file];
    bool keep = t.source == 'r' || t.source == 'f' ||
                (t.source == 'a' && (pages != PlanPages::kTouched || is_shared[t.file])) ||
                (t.source == 'p' && (pages == PlanPages::kCached || !direct[t.file] || f.exec_file));
    if (!keep) continue;
    if (!direct[t.file]) fallback.insert(t.file);
    b.Add(f.path, f.dev, f.ino, t.offset, t.length, t.ts_ns);
    r.touches++;
  }
  std::vector<FileTouch>().swap(order->touches);  // the builder has what it needs of them
  for (const PathLookup& l : order->lookups) b.AddLookup(l.path, l.ts_ns);
  r.fallback_files = fallback.size();
  r.pages = pages;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  b.SetCreation({SYSPGO_VERSION, host, {run_id}, 1});
  auto built = b.Build();
  r.plan = std::move(built.plan);
  r.warnings = std::move(built.warnings);
  if (!order->unnamed.empty())
    r.warnings.push_back(std::to_string(order->unnamed.size()) +
                         " touched file(s) left out: the run never saw their path (opened before collection, "
                         "or the fileio group was off)");
  if (r.plan.files.empty())
    return MakeError("none of the files run " + std::to_string(run_id) + " touched is on disk as it was: " +
                     (r.warnings.empty() ? std::string("?") : r.warnings.front()));
  return r;
}

}  // namespace syspgo
