//===- pagecache_chart.cc - what the report's page-cache section draws ---===//
#include "analyze/pagecache_chart.h"

#include <algorithm>

#include "analyze/run.h"
#include "analyze/tasks.h"

namespace syspgo {
namespace {

// The last event of the run, for runs whose end_ts was never written (with
// the threads' starts and exits: Tasks::LastChange).
constexpr char kLastEventSql[] = R"sql(
SELECT MAX(e) FROM (
  SELECT MAX(ts + dur) AS e FROM file_io WHERE run_id = ?1
  UNION ALL SELECT MAX(ts + dur) FROM file_open WHERE run_id = ?1
  UNION ALL SELECT MAX(ts + dur) FROM offcpu WHERE run_id = ?1
  UNION ALL SELECT MAX(ts + dur) FROM block_rq WHERE run_id = ?1
)
)sql";

constexpr char kLeanSeriesSql[] = "SELECT ts, op, pages FROM page_cache_series WHERE run_id = ?1 ORDER BY ts, op";
// Files in the order of the full tier's pass (dev, ino), deleters by name.
constexpr char kLeanFilesSql[] = R"sql(
SELECT dev, ino, SUM(CASE WHEN op != 2 THEN pages ELSE 0 END), SUM(CASE WHEN op = 2 THEN pages ELSE 0 END),
       SUM(CASE WHEN op = 3 THEN pages ELSE 0 END), SUM(events)
FROM page_cache_total WHERE run_id = ?1
GROUP BY dev, ino
ORDER BY dev, ino
)sql";
constexpr char kLeanDeletersSql[] =
    "SELECT comm, SUM(pages) FROM page_cache_total WHERE run_id = ?1 AND op = 2 GROUP BY comm ORDER BY comm";

}  // namespace

Result<PageCacheChart> PageCacheChart::FromLeanTables(Db& db, int64_t run_id, const TimeAxis& axis) {
  PageCacheChart c(axis, true);
  std::string run = " of run " + std::to_string(run_id);
  SYSPGO_TRY(ForEachRow(db, "page_cache_series" + run, kLeanSeriesSql, {run_id}, [&](Stmt& r) {
    int64_t b = axis.Bucket(r.Int(0)), op = r.Int(1), pages = r.Int(2);
    (op == 2 ? c.deleted_ : c.added_)[b] += pages;
    if (op == 3) c.refaulted_[b] += pages;
  }));
  SYSPGO_TRY(ForEachRow(db, "page_cache_total" + run, kLeanFilesSql, {run_id}, [&](Stmt& r) {
    c.files_.push_back({r.Int(0), r.Int(1), r.Int(2), r.Int(3), r.Int(4)});
    c.rows_ += r.Int(5);
  }));
  SYSPGO_TRY(ForEachRow(db, "page_cache_total" + run, kLeanDeletersSql, {run_id},
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
  Status err;
  auto last = db.Prepare(kLastEventSql);
  if (!last) return last.error();
  last->Bind(1, run_id);
  int64_t last_ts = last->Step(&err) ? last->Int(0) : 0;
  if (!err.ok()) return err.error();
  auto tasks = Tasks::Load(db, run_id);
  if (!tasks) return tasks.error();
  TimeAxis axis;
  axis.span = std::max<int64_t>({end_ts, last_ts, tasks->LastChange(), 1});
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
