//===- access_summary.h - how a run read its files, per file ---------------===//
//
// `syspgo analyze DB access` and the report's "File access order": for each
// file the run touched (FileAccessOrder), when it first did, how much of the
// file it used (pages faulted on or read), how much the kernel read into the
// page cache for it (demand reads and readahead), and whether the touches
// went in order or at scattered offsets. A cold start that pages a large
// file in at random shows as much read, little used, out of order: what a
// prefetch plan (optimize --emit plan) fixes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyze/access_order.h"
#include "analyze/finding.h"
#include "analyze/run.h"
#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

struct FileAccess {
  std::string path;
  uint64_t dev = 0, ino = 0;
  uint64_t size = 0;          // st_size when collect first saw it, or past the furthest byte touched if beyond
  uint64_t first_ns = 0;      // first touch, ns since the command started
  uint64_t used_pages = 0;    // distinct pages faulted on or read
  uint64_t cached_pages = 0;  // distinct pages the kernel added to the cache for the traced tree
  uint64_t faults = 0, reads = 0;
  // Of the faults and reads after the first, the share that continued where
  // the one before ended (up to 64 KiB further); -1 with fewer than 8.
  double in_order = -1;
  std::vector<uint32_t> touches;  // into AccessSummary::order.touches: faults, reads, cache adds, in time order
};

struct AccessSummary {
  AccessOrder order;
  std::vector<FileAccess> files;  // in first-touch order; files with no fault, read or cache add are left out
  bool no_readahead = false;      // recorded with collect --no-readahead
};

Result<AccessSummary> SummarizeAccess(Db& db, int64_t run_id);

// A finding ("random-paging") when the kernel read at least 4x what the run
// used and, of the files with 64 KiB or more used, the one it read most for
// was touched mostly out of order; its fix records, makes and replays a
// prefetch plan for the run's command.
std::optional<Finding> RandomPagingFinding(const AccessSummary& s, const RunInfo& run);

// `analyze access`: a table of the files in first-touch order (at most
// `limit`, 0 = all), totals, and what to do when the kernel read far more
// than the run used at scattered offsets; or the same as JSON.
Result<std::string> AccessReportText(Db& db, const RunInfo& run, size_t limit, bool json);

}  // namespace syspgo
