//===- pagecache.cc - the page cache and page faults of a run, as rows ---===//
#include "analyze/data/pagecache.h"

#include <algorithm>
#include <tuple>

namespace syspgo::data {
namespace {

// One order whoever asks: SQLite sorts rows this way almost as fast as
// by time alone. {table}: see WithRunTables. The order after (ts,
// op) is that of the run's rows in the index, as SQLite read them before
// it scanned the table.
constexpr char kByFileSql[] =
    "SELECT ts, op, comm, dev, ino, idx, pages, page_cgroup, stack_id, task_cgroup FROM {page_cache} WHERE run_id = ?1 "
    "ORDER BY dev, ino, ts, op, idx, rowid";
// (The page_cache_refault view that defines refaults answers with
// correlated subqueries per addition, which take minutes on a run with
// millions of additions: the chart tallies them in this pass instead.)
constexpr char kForChartSql[] = R"sql(
SELECT dev, ino, ts, op, idx, pages, CASE WHEN op = 2 THEN comm END
FROM {page_cache}
WHERE run_id = ?1
ORDER BY dev, ino, ts, op, idx, rowid
)sql";
constexpr char kByTimeSql[] = R"sql(
SELECT pc.ts, 0, pc.pid, pc.tid, pc.op, pc.idx, pc.pages, COALESCE(f.path, ''), pc.dev, pc.ino,
       COALESCE(mc.path, ''), pc.why
FROM page_cache pc
LEFT JOIN file f ON f.run_id = pc.run_id AND f.dev = pc.dev AND f.ino = pc.ino
LEFT JOIN memory_cgroup mc ON mc.run_id = pc.run_id AND mc.id = pc.page_cgroup
WHERE pc.run_id = ?1
ORDER BY pc.ts, pc.op
)sql";
constexpr char kTasksSql[] = R"sql(
SELECT pid, tid, MIN(comm)
FROM page_cache
WHERE run_id = ?1
GROUP BY pid, tid
ORDER BY pid, tid
)sql";

constexpr char kTotalsSql[] = R"sql(
SELECT dev, ino, cgroup, op, deleter, comm, stack_id, pages, events, first_ts
FROM page_cache_total WHERE run_id = ?1
ORDER BY dev, ino, cgroup, op, deleter, comm
)sql";
constexpr char kPagesSql[] = "SELECT dev, ino, idx FROM page_cache_page WHERE run_id = ?1 ORDER BY dev, ino, idx";
constexpr char kRefaultedSql[] =
    "SELECT dev, ino, idx, deleter, stack_id FROM page_cache_page_refault WHERE run_id = ?1 ORDER BY dev, ino, idx";
constexpr char kReuseSql[] = "SELECT dev, ino, reuse_ns FROM page_cache_reuse WHERE run_id = ?1 ORDER BY ts, dev, ino, idx";
// Not pc_chunks.refaults: a page refaulted after more than three deleters
// misses only from the per-page list, whose reclaim deleters name the hot
// ranges. Not pc_stacks_seen: a stack is then sent again, and kept once.
constexpr char kOverflowSql[] =
    "SELECT COALESCE(SUM(overflow), 0) FROM run_aggregate WHERE run_id = ?1 AND probe_group = 'pagecache' "
    "AND map NOT IN ('pc_chunks.refaults', 'pc_stacks_seen')";
constexpr char kSeriesSql[] = "SELECT ts, op, pages FROM page_cache_series WHERE run_id = ?1 ORDER BY ts, op";
// Files in the order of the full tier's pass (dev, ino), deleters by name.
constexpr char kFileSumsSql[] = R"sql(
SELECT dev, ino, SUM(CASE WHEN op != 2 THEN pages ELSE 0 END), SUM(CASE WHEN op = 2 THEN pages ELSE 0 END),
       SUM(CASE WHEN op = 3 THEN pages ELSE 0 END), SUM(events)
FROM page_cache_total WHERE run_id = ?1
GROUP BY dev, ino
ORDER BY dev, ino
)sql";
constexpr char kDeletersSql[] =
    "SELECT comm, SUM(pages) FROM page_cache_total WHERE run_id = ?1 AND op = 2 GROUP BY comm ORDER BY comm";

constexpr char kCgroupsSql[] = "SELECT id, path, limit_bytes FROM memory_cgroup WHERE run_id = ?1 ORDER BY id";

// In no order: sorting would cost a pass over every fault for callers that
// keep sets. {table}: see WithRunTables.
constexpr char kFaultedPagesSql[] =
    "SELECT dev, ino, pgoff FROM {page_fault} WHERE run_id = ?1 AND dev != 0 AND pgoff >= 0";
// The page fault a thread waits in: the last one it began before sleeping.
// In no order: ThreadFaults sorts each thread's faults itself, faster than
// SQLite sorts the whole table.
constexpr char kThreadFaultsSql[] = "SELECT tid, ts, rowid, dev, ino FROM page_fault WHERE run_id = ?1";

}  // namespace

Status VisitPageCacheByFile(Db& db, int64_t run_id, const RowFn& row) {
  return Visit(db, "", WithRunTables(db, kByFileSql), {run_id}, row);
}

Status VisitPageCacheForChart(Db& db, const std::string& what, int64_t run_id, const RowFn& row) {
  return Visit(db, what, WithRunTables(db, kForChartSql), {run_id}, row);
}

Result<CachedStmt> OpenPageCacheByTime(Db& db, const std::string& what, int64_t run_id) {
  return Open(db, what, kByTimeSql, {run_id});
}

Status VisitPageCacheTasks(Db& db, const std::string& what, int64_t run_id, const RowFn& row) {
  return Visit(db, what, kTasksSql, {run_id}, row);
}

Status VisitLeanTotals(Db& db, const std::string& what, int64_t run_id, const RowFn& row) {
  return Visit(db, what, kTotalsSql, {run_id}, row);
}

Status VisitLeanPages(Db& db, const std::string& what, int64_t run_id, const RowFn& row) {
  return Visit(db, what, kPagesSql, {run_id}, row);
}

Status VisitLeanRefaults(Db& db, const std::string& what, int64_t run_id, const RowFn& row) {
  return Visit(db, what, kRefaultedSql, {run_id}, row);
}

Status VisitLeanReuse(Db& db, const std::string& what, int64_t run_id, const RowFn& row) {
  return Visit(db, what, kReuseSql, {run_id}, row);
}

Result<int64_t> ReadLeanOverflow(Db& db, const std::string& what, int64_t run_id) {
  int64_t n = 0;
  SYSPGO_TRY(Visit(db, what, kOverflowSql, {run_id}, [&](Stmt& r) { n = r.Int(0); }));
  return n;
}

Status VisitLeanSeries(Db& db, const std::string& what, int64_t run_id, const RowFn& row) {
  return Visit(db, what, kSeriesSql, {run_id}, row);
}

Status VisitLeanFileSums(Db& db, const std::string& what, int64_t run_id, const RowFn& row) {
  return Visit(db, what, kFileSumsSql, {run_id}, row);
}

Status VisitLeanDeleters(Db& db, const std::string& what, int64_t run_id, const RowFn& row) {
  return Visit(db, what, kDeletersSql, {run_id}, row);
}

Status VisitMemoryCgroups(Db& db, int64_t run_id, const RowFn& row) {
  return Visit(db, "", kCgroupsSql, {run_id}, row);
}

Status VisitFaultedPages(Db& db, int64_t run_id, const RowFn& row) {
  return Visit(db, "", WithRunTables(db, kFaultedPagesSql), {run_id}, row);
}

Result<ThreadFaults> ThreadFaults::Read(Db& db, int64_t run_id, const std::set<int64_t>& tids) {
  ThreadFaults out;
  if (tids.empty()) return out;
  Status read = Visit(db, "", kThreadFaultsSql, {run_id}, [&](Stmt& r) {
    int64_t tid = r.Int(0);
    if (tids.count(tid))
      out.by_tid_[tid].push_back({r.Int(1), r.Int(2), static_cast<uint64_t>(r.Int(3)), static_cast<uint64_t>(r.Int(4))});
  });
  if (!read.ok()) return read.error();
  for (auto& [tid, faults] : out.by_tid_)
    std::sort(faults.begin(), faults.end(), [](const Fault& a, const Fault& b) {
      return std::tie(a.ts, a.rowid) < std::tie(b.ts, b.rowid);
    });
  return out;
}

std::optional<std::pair<uint64_t, uint64_t>> ThreadFaults::Last(int64_t tid, int64_t at, int64_t since) const {
  auto it = by_tid_.find(tid);
  if (it == by_tid_.end()) return std::nullopt;
  const std::vector<Fault>& faults = it->second;
  auto after = std::upper_bound(faults.begin(), faults.end(), at, [](int64_t t, const Fault& f) { return t < f.ts; });
  if (after == faults.begin()) return std::nullopt;
  const Fault& f = *std::prev(after);
  if (f.ts < since || f.ino == 0) return std::nullopt;
  return std::make_pair(f.dev, f.ino);
}

}  // namespace syspgo::data
