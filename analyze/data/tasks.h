//===- tasks.h - the traced tree's processes and threads -----------------===//
// The one reader of a run's `process` and `thread` tables, and the one rule
// for what a thread was called when an event happened. Both tables hold a
// row per life of a pid or tid (one reused within the run has several),
// and are small (a row per task, not per event), so they are read whole
// and looked up in memory: a pass that names many events asks here instead
// of joining correlated subqueries into its SQL.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

// One life of a thread (a `thread` row).
struct ThreadRow {
  int64_t tid = 0;
  int64_t pid = 0;
  std::string comm;                // its name when created or last renamed
  int64_t start_ts = 0;            // ns since run start
  std::optional<int64_t> exit_ts;  // none: alive at the end of the recording
};

// One life of a process (a `process` row).
struct ProcessRow {
  int64_t pid = 0;
  std::string comm;  // its name at its last exec or rename
  int64_t start_ts = 0;
  int64_t ppid = 0;  // its parent at fork (0 if unknown)
  std::string argv;  // of its last exec, arguments separated by spaces ("" if none seen)
};

class Tasks {
 public:
  static Result<Tasks> Load(Db& db, int64_t run_id);

  // Every row, in start order (start_ts, then tid or pid): a reused tid's
  // or pid's lives come in the order they were lived.
  const std::vector<ThreadRow>& threads() const { return threads_; }
  const std::vector<ProcessRow>& processes() const { return processes_; }

  // Whether `tid` has a row: a thread of the traced tree that the proc
  // group saw start (or found when it attached).
  bool HasThread(int64_t tid) const { return by_tid_.count(tid) > 0; }

  // The first and the latest life of `pid`; nullptr if it has no row.
  const ProcessRow* FirstProcess(int64_t pid) const;
  const ProcessRow* LatestProcess(int64_t pid) const;

  // The life of `tid` that an event at `ts` belongs to: the latest to
  // start at or before ts, else (an event stamped before the recorded
  // start) the first; nullptr if the thread has no row.
  const ThreadRow* ThreadAt(int64_t tid, int64_t ts) const;

  // What thread `tid` of process `pid` was called at `ts`: its life's name
  // (ThreadAt), else, for a thread the proc group missed, its process's
  // latest name; "" if neither is known. Callers say what stands in for "".
  std::string Name(int64_t tid, int64_t pid, int64_t ts) const;

  // When `tid` first exited; none if it never did within the recording.
  std::optional<int64_t> FirstExit(int64_t tid) const;

  // The latest start or exit of any thread (0 if there are none): an event
  // of the run that is not in the event tables.
  int64_t LastChange() const;

 private:
  std::vector<ThreadRow> threads_;
  std::vector<ProcessRow> processes_;
  // tid or pid -> the indices of its lives in threads_ or processes_, in
  // start order.
  std::map<int64_t, std::vector<size_t>> by_tid_;
  std::map<int64_t, std::vector<size_t>> by_pid_;
};

}  // namespace syspgo
