//===- pagecache.h - page-cache churn: pages evicted and read again -------===//
// What `syspgo analyze DB pagecache` prints. Per file the pagecache probe
// group recorded: pages added to the page cache, pages deleted from it, and
// pages added again after a deletion (refaults: each one is a page read from
// storage a second time). Every deletion is classified by who did it, from
// its kernel stack (named with the run's kallsyms) and the deleting task:
// memcg reclaim (the memory cgroup hit its limit), kswapd, direct reclaim
// (the whole machine ran short), truncation (truncate, unlink, evict),
// drop_caches, or other. A refault is attributed to the deletion it undid.
//
// Churn is reported by cause: a memory cgroup and the reclaim path that
// evicted its pages (its own tasks hitting its limit, an ancestor's or
// another cgroup's reclaim, kswapd, direct reclaim, DAMON, a kernel worker).
// A cause is one Finding when the refaults that reclaim caused (not
// drop_caches, which an administrator asked for, nor truncation, which threw
// the data away) cost at least 1 MiB of re-reads or 10% of the pages its
// files touched. It names the cgroup and its limit (read at collection), the
// deleting tasks and their cgroup, the working set measured (distinct pages
// of its files touched in the run), a ranked table of the files it evicted,
// and one fix for the cause: a limit of at least the cgroup's limit plus
// that working set (cgroup v1; memory.low/min on v2), protection from the
// ancestor's or the other cgroup's tasks, free memory, DAMON's scheme; or
// keeping the hottest files resident, or a prefetch plan. Files are judged
// alike one by one (PagecacheFile::churns).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/finding.h"
#include "analyze/run.h"
#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

inline constexpr int64_t kPageBytes = 4096;
inline constexpr int64_t kChurnMinBytes = 1 << 20;  // refaults re-reading this much make churn ...
inline constexpr double kChurnMinShare = 0.10;      // ... or this share of the file's touched pages
inline constexpr int64_t kChurnMinPages = 16;       // (but never fewer refaults than this)

// One page_cache row as the analysis replays them: file by file (dev, ino),
// each file's rows in time order (ts, op, idx). op 1: the folio's pages
// were added, 2: deleted; comm (the current task) is set for deletions only.
struct PageCacheRow {
  int64_t dev = 0, ino = 0, ts = 0, op = 0, idx = 0, pages = 0;
  std::string_view comm;
};

struct PagecacheQuery {
  int64_t run_id = 0;
  size_t limit = 0;  // at most this many files in the table (0: all); findings are never cut
  // Also given every row of the replay, so that another tally (the report's
  // page-cache chart) needs no pass of its own.
  std::function<void(const PageCacheRow&)> on_row;
};

// Who deleted pages, from the deletion's kernel stack and task.
enum class Deleter { kMemcg, kKswapd, kDirect, kDamon, kTruncate, kDropCaches, kOther };
// "memcg reclaim", "kswapd", "direct reclaim", "DAMON reclaim", "truncation", "drop_caches", "other".
const char* DeleterName(Deleter d);
// Classifies a deletion by its kernel frames (innermost first) and the
// deleting task's name.
Deleter ClassifyDeletion(const std::vector<std::string>& kernel_frames, const std::string& comm);

struct PagecacheFile {
  uint64_t dev = 0, ino = 0;
  std::string path;                      // "" if the run never named it
  int64_t added_pages = 0;               // pages added to the cache (folio pages summed)
  int64_t deleted_pages = 0;             // pages deleted from it
  int64_t refaulted_pages = 0;           // pages added again after a deletion in the run
  int64_t churn_pages = 0;               // refaulted_pages whose deletion was reclaim (not drop_caches, truncation)
  int64_t working_set_pages = 0;         // distinct pages added or faulted on
  int64_t block_read_bytes = 0;          // block_rq reads of the file (0 if the block group was off)
  int64_t block_read_ns = 0;             // their device time, summed
  int64_t reread_ns = 0;                 // device time of reads issued after the file's first reclaim deletion
  int64_t reread_worst_ns = 0;           // the longest of them
  int64_t first_churn_ts = -1;           // first refault caused by reclaim (-1: none)
  int64_t damon_reuse_ns = 0;            // median time from a page's load to its reload after DAMON evicted it (0: none)
  std::map<std::string, int64_t> deleted_by;   // DeleterName -> pages deleted
  std::map<std::string, int64_t> refaults_by;  // DeleterName of the undone deletion -> pages refaulted
  std::map<std::string, int64_t> deleters;     // comm of the deleting task (reclaim only) -> pages
  std::map<int64_t, int64_t> deleter_cgroups;  // memory cgroup of the deleting task (reclaim, full tier) -> pages
  int64_t reclaimed_pages = 0;           // pages deleted by reclaim
  std::string reclaim;                   // the reclaim class that caused most churn ("" if none)
  std::string reclaim_path;              // its cause's path (ReclaimPath in pagecache.cc); "" if none
  int64_t cgroup_id = 0;                 // memory cgroup its pages were charged to (most reclaimed, else most added)
  std::string cgroup;                    // its path ('' if unknown)
  int64_t cgroup_limit = -1;             // memory.limit_in_bytes at collection (-1 unknown)
  std::vector<std::pair<int64_t, int64_t>> hot_ranges;  // refaulted page ranges [first, last], most refaults first
  bool churns = false;
  int64_t suggested_limit = 0;           // bytes, for a limited cgroup that churns (0: none)
};

// One cause of churn: the memory cgroup the pages were charged to and the
// reclaim path that evicted them, with the files, most churn first.
struct ChurnCause {
  int64_t cgroup_id = 0;
  std::string cgroup;                    // path ('' if unknown)
  int64_t cgroup_limit = -1;             // memory.limit_in_bytes at collection (-1 unknown)
  std::string path;                      // ReclaimPath: "memcg reclaim", "an ancestor cgroup's reclaim", ...
  std::string reclaim;                   // the deletion class ("memcg reclaim", "kswapd", ...)
  std::vector<size_t> files;             // PagecacheReport::files indexes
  int64_t churn_pages = 0, reclaimed_pages = 0, working_set_pages = 0;
  int64_t reread_ns = 0, reread_worst_ns = 0, block_read_bytes = 0, first_churn_ts = -1;
  std::map<std::string, int64_t> deleters;     // comm -> pages reclaimed
  std::map<std::string, int64_t> deleter_cgroups;  // memory cgroup (path) of the deleting tasks -> pages (full tier)
  bool churns = false;
  int64_t suggested_limit = 0;           // bytes, for a limited cgroup whose own reclaim churns (0: none)
};

struct PagecacheReport {
  int64_t run_id = 0;
  int64_t wall_ns = 0;
  Tier tier = Tier::kFull;               // the tier the run was recorded in, and so the tables read
  int64_t events = 0;                    // page_cache rows of the run (lean: the rows it would have had)
  int64_t overflow = 0;                  // lean: updates the kernel's full maps refused (run_aggregate)
  std::vector<PagecacheFile> files;      // most churn first, then most refaults, then most added
  std::vector<ChurnCause> causes;        // every cgroup and reclaim path with churn, most churn first
  std::vector<Finding> findings;         // one per cause that churns, in the order of causes
  std::vector<size_t> finding_cause;     // causes[] index of each finding
};

// Errors say when the run has no page-cache data and how to record it.
Result<PagecacheReport> AnalyzePagecache(Db& db, const PagecacheQuery& q);

// `syspgo analyze DB pagecache`: the cgroups, the files table and the
// findings, as text (the first kTopFindings findings unless `all`) or as
// JSON (every one).
Result<std::string> PagecacheReportText(Db& db, const RunInfo& run, const PagecacheQuery& q, bool json,
                                        bool all = false);

}  // namespace syspgo
