//===- run.h - the run accessor: choosing the run an analysis reads ------===//
// The run's row, its settings and which probe groups ran: the run table
// and its satellites as the read-side data layer (analyze/data/run.cc)
// reads them for every pass.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/run_settings.h"
#include "analyze/data/task_filter.h"
#include "common/sqlite.h"

namespace syspgo {

struct RunInfo {
  int64_t id = 0;
  std::string command;
  std::string status;        // running | complete | incomplete
  int64_t duration_ns = 0;   // end_ts, or 0 while unknown
  int64_t events_dropped = 0;
  // The processes it is read for (--pid, --cgroup, --comm, --container;
  // analyze/data/task_filter.h), "" for all: "cgroup /a (3 of 40 processes)".
  std::string only;
};

// `requested` 0 picks the newest run. Errors name the database and say
// which runs exist. A run still marked running whose collector is gone is
// reported as incomplete.
Result<RunInfo> ResolveRun(Db& db, int64_t requested);

// The profile database at `path`, opened read-only, and the run `requested`
// picks in it (ResolveRun): what every command that reads one run starts
// with. Errors are those of OpenProfileDb and ResolveRun, and of
// ApplyTaskFilter for a `filter` that keeps no process.
struct OpenedRun {
  Db db;
  RunInfo run;
};
Result<OpenedRun> OpenRun(const std::string& path, int64_t requested, const data::TaskFilter& filter = {});

// "run N: COMMAND" and a newline, the first line of every text report; the
// command is recorded outside input, shown through TerminalSafe. Then, for
// a filtered read, "only: WHAT" and a newline.
std::string RunHeadline(const RunInfo& run);

// Whether a probe group ran in a run (its run_probe row): not recorded
// (no row: the group was not asked for), recorded but not attached (with
// why), or attached. The one place analyses ask.
struct ProbeStatus {
  bool recorded = false;
  bool attached = false;
  std::string detail;  // why it did not attach, or its note
};
Result<ProbeStatus> ReadProbeStatus(Db& db, int64_t run_id, const std::string& group);
// Every probe group's run_probe row of a run, by group name.
struct ProbeRow {
  std::string group;
  int64_t attached = 0;  // 1 if it attached
  std::string detail;
  int64_t events = 0;
};
Result<std::vector<ProbeRow>> ReadProbes(Db& db, int64_t run_id);
// An error unless `group` attached in the run, in the words every analysis
// uses: "run N of 'DB' has no WHAT: the GROUP probe group was not recorded
// (did not attach (DETAIL)). Record one with: syspgo collect --probes
// PROBES -o DB -- COMMAND".
Status RequireProbeGroup(Db& db, int64_t run_id, const std::string& group, const std::string& what,
                         const std::string& probes);

// When the command ran, in the run's clock (ns since the collector's
// start): from its release to the end of the recording (0 while unknown);
// and its root process, the traced tree's.
struct RunWindow {
  int64_t command_start_ns = 0;
  int64_t end_ns = 0;
  int64_t target_pid = 0;
};
Result<RunWindow> ReadRunWindow(Db& db, int64_t run_id);
// When the last file call, off-CPU interval or block request of the run
// ended (0 if none): for runs whose end_ts was never written.
Result<int64_t> ReadLastEventTs(Db& db, int64_t run_id);

// Where, by what and from when a run was recorded, as the pages that
// describe a run (report, trace export) name it.
struct RunOrigin {
  std::string host;               // uname nodename
  std::string kernel_release;     // uname release
  std::string syspgo_version;     // the collector's
  int64_t start_realtime_ns = 0;  // the collector's start, ns since the Unix epoch
  int64_t events_recorded = 0;    // events written to the database
};
Result<RunOrigin> ReadRunOrigin(Db& db, int64_t run_id);

// The runs still being recorded: marked running, and their collector alive
// on this boot (ResolveRun reports one whose collector is gone as
// incomplete).
struct LiveRun {
  int64_t id = 0;
  int64_t collector_pid = 0;
};
Result<std::vector<LiveRun>> LiveRuns(Db& db);

// Which of collect's two tiers recorded a probe group's part of a run:
// kLean, what analyses only count in the aggregate tables, if the group
// left rows in run_aggregate (it writes them from its first drain on, so a
// run cut short says so too); else kFull, every event a row (`--detail
// full`, every run before schema version 3, and the fileio group's before
// version 4). Analyses read the tier's tables and say which they read.
enum class Tier { kFull, kLean };
// What run `run_id` was recorded with (its settings columns of run, and
// run_setting_probe, run_collector_file, run_damon_scheme); an error if
// the run does not exist.
Result<RunSettings> ReadRunSettings(Db& db, int64_t run_id);

Result<Tier> RecordingTier(Db& db, int64_t run_id, const std::string& group);
const char* TierName(Tier t);  // "full" / "lean"

}  // namespace syspgo
