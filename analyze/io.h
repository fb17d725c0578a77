//===- io.h - synchronous file operations slower than a threshold --------===//
// What `syspgo analyze DB io` prints, as BCC's fileslower does live: one
// line per read, write or sync syscall on a file that took at least
// --slower, with its time, thread, direction, bytes, offset, latency and
// file. The file is named as it was at that moment (FilePaths), so a
// reused inode shows its own name, not its first one.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "analyze/run.h"
#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

inline constexpr int64_t kDefaultSlowerNs = 10'000'000;

struct SlowOp {
  int64_t ts = 0;            // ns since the run's start
  int64_t since_start = 0;   // ns since the command started
  std::string comm;
  int64_t pid = 0, tid = 0;
  char dir = 'R';            // R read, W write, S sync (fsync, fdatasync, sync_file_range)
  std::string syscall;
  int64_t bytes = 0;         // bytes done, or -errno
  int64_t offset = -1;       // file offset used, -1 if none
  int64_t latency_ns = 0;
  std::string file;
};

struct IoQuery {
  int64_t run_id = 0;
  int64_t slower_ns = kDefaultSlowerNs;
  bool all_kinds = false;    // also pipes, sockets and devices (default: regular files and block devices)
  size_t limit = 0;          // 0 = all
};

// In time order.
Result<std::vector<SlowOp>> SlowOps(Db& db, const IoQuery& q);

// `syspgo analyze DB io`: a table, or JSON rows.
Result<std::string> IoReport(Db& db, const RunInfo& run, const IoQuery& q, bool json);

}  // namespace syspgo
