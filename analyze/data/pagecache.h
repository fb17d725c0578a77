//===- pagecache.h - the page cache and page faults of a run, as rows ----===//
// The pagecache group's tables (every addition and deletion in the full
// tier; per-file totals, touched and refaulted pages, the series and
// DAMON's reuse times in the lean tier), the memory cgroups, and the
// faults group's page faults.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyze/data/query.h"

namespace syspgo::data {

// Full tier: every row of page_cache, in the order of the analysis's pass
// (by file, then time, op, page index and the order recorded): ts, op,
// comm, dev, ino, idx, pages, page cgroup, stack id, task cgroup.
Status VisitPageCacheByFile(Db& db, int64_t run_id, const RowFn& row);
// As VisitPageCacheByFile, the columns the report's chart draws: dev, ino,
// ts, op, idx, pages, comm (of a deletion; NULL otherwise).
Status VisitPageCacheForChart(Db& db, const std::string& what, int64_t run_id, const RowFn& row);
// Every page_cache row by time then op: ts, 0, pid, tid, op, idx, pages,
// file path (''), dev, ino, cgroup path (''), why. Stepped by the caller.
Result<CachedStmt> OpenPageCacheByTime(Db& db, const std::string& what, int64_t run_id);
// Tasks with page_cache rows, by (pid, tid): pid, tid, least comm.
Status VisitPageCacheTasks(Db& db, const std::string& what, int64_t run_id, const RowFn& row);

// Lean tier (`what` names the run for errors). page_cache_total by file,
// cgroup, op, deleter, comm: dev, ino, cgroup, op, deleter, comm, stack id,
// pages, events, first ts.
Status VisitLeanTotals(Db& db, const std::string& what, int64_t run_id, const RowFn& row);
// page_cache_page by file and index: dev, ino, idx.
Status VisitLeanPages(Db& db, const std::string& what, int64_t run_id, const RowFn& row);
// page_cache_page_refault by file and index: dev, ino, idx, deleter, stack id.
Status VisitLeanRefaults(Db& db, const std::string& what, int64_t run_id, const RowFn& row);
// page_cache_reuse by time, file, index: dev, ino, reuse ns.
Status VisitLeanReuse(Db& db, const std::string& what, int64_t run_id, const RowFn& row);
// Updates the kernel's full maps refused that cost counts.
Result<int64_t> ReadLeanOverflow(Db& db, const std::string& what, int64_t run_id);
// page_cache_series by time and op: ts, op, pages.
Status VisitLeanSeries(Db& db, const std::string& what, int64_t run_id, const RowFn& row);
// Per file, by (dev, ino): dev, ino, pages added, deleted, refaulted, events.
Status VisitLeanFileSums(Db& db, const std::string& what, int64_t run_id, const RowFn& row);
// Pages deleted per comm, by comm: comm, pages.
Status VisitLeanDeleters(Db& db, const std::string& what, int64_t run_id, const RowFn& row);

// The memory cgroups, by id: id, path, limit bytes (NULL if none).
Status VisitMemoryCgroups(Db& db, int64_t run_id, const RowFn& row);

// Page faults on file pages, in no order (the caller keeps sets): dev,
// ino, page offset.
Status VisitFaultedPages(Db& db, int64_t run_id, const RowFn& row);

// The page faults of chosen threads, read in one pass over page_fault and
// kept per thread by time, for "the file of the last fault thread T began
// in [since, at]" asked once per wait: page_fault has no index by thread,
// and a query each time scans the whole table (millions of rows on a host).
class ThreadFaults {
 public:
  static Result<ThreadFaults> Read(Db& db, int64_t run_id, const std::set<int64_t>& tids);
  // (dev, ino) of that fault, if there is one and it had a file.
  std::optional<std::pair<uint64_t, uint64_t>> Last(int64_t tid, int64_t at, int64_t since) const;

 private:
  struct Fault {
    int64_t ts, rowid;
    uint64_t dev, ino;
  };
  std::unordered_map<int64_t, std::vector<Fault>> by_tid_;  // each by (ts, rowid)
};

}  // namespace syspgo::data
