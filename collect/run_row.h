//===- run_row.h - the run row of one collection, from start to end ------===//
// Every write collect makes to the `run` table (schemas/profile.sql), in
// one place and with bound parameters: the row and its settings when the
// collection starts, the moment the command was released, and how the
// collection ended. Runs whose collector died are closed by the next
// collection that opens the database.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collect/writer.h"
#include "common/result.h"
#include "common/run_settings.h"
#include "common/sqlite.h"

namespace syspgo {

// What the row says about the collection before it starts.
struct RunStart {
  std::vector<std::string> argv;  // empty when attached
  pid_t target_pid = 0;           // the root of the traced tree
  bool attached = false;
  uint64_t start_realtime_ns = 0, start_monotonic_ns = 0;
};

// Inserts the run's row and its settings in one transaction, so that no
// reader sees the run without them. Returns the run's id.
Result<int64_t> InsertRun(Db& db, const RunStart& start, const RunSettings& settings);

// Marks the runs left 'running' by a collector that died (SIGKILL, reboot)
// incomplete: what they committed stays readable.
Status MarkDeadRuns(Db& db);

// The row of a run being recorded, written through the run's Writer after
// the rows already queued. Times are ns since the run's start.
class RunRow {
 public:
  RunRow(Writer& writer, int64_t run_id) : writer_(writer), id_(run_id) {}

  // The probes could not be set up: the run ends before its command.
  Status SetupFailed();
  // The command was released at `ts`.
  Status CommandReleased(uint64_t ts);
  // The command could not be executed (it ended as a shell's 127).
  Status ExecFailed(uint64_t end_ts);
  // Collection ended at `end_ts` for `reason`; `exit_code` is the
  // command's (none when attached).
  Status Complete(uint64_t end_ts, const std::string& reason, std::optional<int> exit_code, uint64_t events,
                  uint64_t dropped);

 private:
  Writer& writer_;
  int64_t id_;
};

}  // namespace syspgo
