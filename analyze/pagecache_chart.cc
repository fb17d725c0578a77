//===- pagecache_chart.cc - what the report's page-cache section draws ---===//
#include "analyze/pagecache_chart.h"

#include <algorithm>

#include "analyze/data/pagecache.h"
#include "analyze/data/tasks.h"
#include "analyze/run.h"

namespace syspgo {

Result<PageCacheChart> PageCacheChart::FromLeanTables(Db& db, int64_t run_id, const TimeAxis& axis) {
  PageCacheChart c(axis, true);
  std::string run = " of run " + std::to_string(run_id);
  SYSPGO_TRY(data::VisitLeanSeries(db, "page_cache_series" + run, run_id, [&](Stmt& r) {
    int64_t b = axis.Bucket(r.Int(0)), op = r.Int(1), pages = r.Int(2);
    (op == 2 ? c.deleted_ : c.added_)[b] += pages;
    if (op == 3) c.refaulted_[b] += pages;
  }));
  SYSPGO_TRY(data::VisitLeanFileSums(db, "page_cache_total" + run, run_id, [&](Stmt& r) {
    c.files_.push_back({r.Int(0), r.Int(1), r.Int(2), r.Int(3), r.Int(4)});
    c.rows_ += r.Int(5);
  }));
  SYSPGO_TRY(data::VisitLeanDeleters(db, "page_cache_total" + run, run_id,
                                     [&](Stmt& r) { c.deleters_[r.Text(0)] += r.Int(1); }));
  return c;
}

int64_t TimeAxis::Bucket(int64_t ts) const {
  int64_t b = (ts - origin) * buckets / (span - origin);
  return std::clamp<int64_t>(b, 0, buckets - 1);
}

Result<TimeAxis> ReadTimeAxis(Db& db, int64_t run_id, int buckets) {
  if (buckets < 1) return MakeError("a time axis needs at least one bucket");
  auto window = ReadRunWindow(db, run_id);
  if (!window) return window.error();
  int64_t command_start = window->command_start_ns, end_ts = window->end_ns;
  auto last_ts = ReadLastEventTs(db, run_id);
  if (!last_ts) return last_ts.error();
  auto tasks = Tasks::Load(db, run_id);
  if (!tasks) return tasks.error();
  TimeAxis axis;
  axis.span = std::max<int64_t>({end_ts, *last_ts, tasks->LastChange(), 1});
  axis.origin = std::clamp<int64_t>(command_start, 0, axis.span - 1);
  axis.buckets = buckets;
  return axis;
}

PageCacheChart::PageCacheChart(const TimeAxis& axis, bool has_refaults)
    : axis_(axis), has_refaults_(has_refaults), added_(axis.buckets), deleted_(axis.buckets), refaulted_(axis.buckets) {}

void PageCacheChart::Add(const PageCacheRow& r) {
  ++rows_;
  if (files_.empty() || files_.back().dev != r.dev || files_.back().ino != r.ino) {
    files_.push_back({r.dev, r.ino});
    gone_.clear();
  }
  File& f = files_.back();
  int64_t bucket = axis_.Bucket(r.ts);
  int64_t end = r.idx + std::max<int64_t>(1, r.pages);
  if (r.op == 1) {
    added_[bucket] += r.pages;
    f.added += r.pages;
    bool again = false;
    for (int64_t p = r.idx; p < end && has_refaults_ && !again; ++p) again = gone_.count(p) != 0;
    if (again) {
      refaulted_[bucket] += r.pages;
      f.refaulted += r.pages;
    }
    return;
  }
  deleted_[bucket] += r.pages;
  if (r.op != 2) return;
  f.deleted += r.pages;
  deleters_[std::string(r.comm)] += r.pages;
  for (int64_t p = r.idx; p < end && has_refaults_; ++p) gone_.insert(p);
}

}  // namespace syspgo
