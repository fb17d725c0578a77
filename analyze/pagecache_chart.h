//===- pagecache_chart.h - what the report's page-cache section draws ----===//
// Pages added to and deleted from the page cache over the run, in time
// buckets, per file and by deleting task, and the refaults among the
// additions. A refault is what the page_cache_refault view defines: an
// addition of a folio that overlaps one deleted earlier in the run (the
// deleted pages of a file are kept as a set, not erased when re-added). At
// equal times additions come first, as the view sees only deletions strictly
// before.
//
// The chart is tallied from page_cache rows given file by file, each file's
// rows in time order: the order in which AnalyzePagecache replays them, so
// that the report's findings and this section share one pass over the
// table (PagecacheQuery::on_row).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "analyze/pagecache.h"
#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

// The report's time axis: buckets over origin (the command's release,
// clamped below span) .. span (the run's end or its last event, if later).
struct TimeAxis {
  int64_t origin = 0, span = 1;
  int buckets = 1;
  int64_t Bucket(int64_t ts) const;
  bool operator==(const TimeAxis&) const = default;
};

// Reads the run's end, its command's release and its last event (file I/O,
// opens, off-CPU waits, block requests, thread exits). Errors name the
// database and the run.
Result<TimeAxis> ReadTimeAxis(Db& db, int64_t run_id, int buckets);

class PageCacheChart {
 public:
  struct File {
    int64_t dev = 0, ino = 0, added = 0, deleted = 0, refaulted = 0;
  };

  // has_refaults: whether the database defines refaults (it has the
  // page_cache_refault view); without it none is counted.
  PageCacheChart(const TimeAxis& axis, bool has_refaults);

  void Add(const PageCacheRow& r);

  // A lean-tier run's chart (no page_cache rows): the series from
  // page_cache_series, whose 100 ms slices fall into the axis's buckets by
  // their start, and files and deleters from page_cache_total. Its
  // refaults are the pass's (pages added again while out of the cache).
  static Result<PageCacheChart> FromLeanTables(Db& db, int64_t run_id, const TimeAxis& axis);

  const TimeAxis& axis() const { return axis_; }
  bool has_refaults() const { return has_refaults_; }
  int64_t rows() const { return rows_; }
  const std::vector<int64_t>& added() const { return added_; }
  const std::vector<int64_t>& deleted() const { return deleted_; }
  const std::vector<int64_t>& refaulted() const { return refaulted_; }
  // In the order the rows gave them.
  const std::vector<File>& files() const { return files_; }
  const std::map<std::string, int64_t>& deleters() const { return deleters_; }  // comm -> pages removed

 private:
  TimeAxis axis_;
  bool has_refaults_;
  int64_t rows_ = 0;
  std::vector<int64_t> added_, deleted_, refaulted_;
  std::vector<File> files_;
  std::map<std::string, int64_t> deleters_;
  std::unordered_set<int64_t> gone_;  // pages of the current file deleted so far
};

}  // namespace syspgo
