//===- run.cc - the run accessor: its row, its settings, its probe groups --===//
#include "analyze/run.h"

#include <string_view>

#include "analyze/data/query.h"
#include "common/profile_db.h"
#include "common/util.h"

namespace syspgo {

namespace {

constexpr char kRunCountSql[] = "SELECT COUNT(*) FROM run";
constexpr char kNewestRunSql[] = "SELECT COALESCE(MAX(id), 0) FROM run";
constexpr char kProcessCountSql[] = "SELECT COUNT(*) FROM main.process WHERE run_id = ?1";
constexpr char kRunInfoSql[] =
    "SELECT command, status, COALESCE(end_ts, 0), events_dropped, collector_pid, boot_id FROM run WHERE id = ?1";
constexpr char kRunWindowSql[] =
    "SELECT COALESCE(command_start_ts, 0), COALESCE(end_ts, 0), target_pid FROM run WHERE id = ?1";
constexpr char kRunOriginSql[] =
    "SELECT host, kernel_release, syspgo_version, start_realtime_ns, events_recorded FROM run WHERE id = ?1";
constexpr char kRunSettingsSql[] =
    "SELECT detail, ringbuf_bytes, memory_budget_bytes, cpu_freq_hz, offcpu_min_ns, irq_min_ns, cold, "
    "no_readahead, kernel_build_id, vdso_build_id, damon_read FROM run WHERE id = ?1";
constexpr char kLiveRunsSql[] = "SELECT id, collector_pid, boot_id FROM run WHERE status = 'running' ORDER BY id";
constexpr char kAggregatedSql[] = "SELECT 1 FROM run_aggregate WHERE run_id = ?1 AND probe_group = ?2";
constexpr char kProbeStatusSql[] = "SELECT attached, detail FROM run_probe WHERE run_id = ?1 AND probe_group = ?2";
constexpr char kSettingProbesSql[] =
    "SELECT probe_group FROM run_setting_probe WHERE run_id = ?1 ORDER BY position";
constexpr char kCollectorFilesSql[] = "SELECT dev, ino FROM run_collector_file WHERE run_id = ?1 ORDER BY position";
constexpr char kDamonSchemesSql[] =
    "SELECT path, ops, min_age, aggr_us, min_age_us FROM run_damon_scheme WHERE run_id = ?1 ORDER BY position";
constexpr char kProbesSql[] =
    "SELECT probe_group, attached, detail, events FROM run_probe WHERE run_id = ?1 ORDER BY probe_group";
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

Error NoRun(Db& db, int64_t run_id) {
  return MakeError("profile database '" + db.path() + "' has no run " + std::to_string(run_id) + ".", ENOENT);
}

// NoRun for a run the user asked for: which runs there are to pick from.
Error NoRunToPick(Db& db, int64_t run_id) {
  auto n = data::QueryOne(db, kRunCountSql, {});
  auto mx = data::QueryOne(db, kNewestRunSql, {});
  return MakeError("profile database '" + db.path() + "' has no run " + std::to_string(run_id) + " (it has " +
                   std::to_string(n.ok() ? *n : 0) + " runs, newest " + std::to_string(mx.ok() ? *mx : 0) +
                   "). Pick one with --run N.");
}

// The row of run `run_id` that `sql` reads, handed to `row`; `missing`
// says there is no such run. Every reader of one run's row comes through here.
Status RunRow(Db& db, int64_t run_id, const char* sql, const data::RowFn& row,
              Error (*missing)(Db&, int64_t) = NoRun) {
  auto found = data::VisitFirst(db, "", sql, {run_id}, row);
  if (!found) return found.error();
  if (!*found) return missing(db, run_id);
  return {};
}
}  // namespace

Result<RunInfo> ResolveRun(Db& db, int64_t requested) {
  int64_t id = requested;
  if (!id) {
    auto newest = data::QueryOne(db, kNewestRunSql, {});
    if (!newest) return newest.error();
    if (!*newest)
      return MakeError("profile database '" + db.path() + "' holds no runs yet. Record one with: syspgo collect -o " +
                       db.path() + " -- COMMAND");
    id = *newest;
  }
  RunInfo info{id};
  bool gone = false;
  SYSPGO_TRY(RunRow(db, id, kRunInfoSql, [&](Stmt& r) {
    info = {id, r.Text(0), r.Text(1), r.Int(2), r.Int(3)};
    gone = CollectorGone(r.Int(4), r.Text(5));
  }, NoRunToPick));
  if (info.status == "running" && gone) info.status = "incomplete";
  return info;
}

Result<Tier> RecordingTier(Db& db, int64_t run_id, const std::string& group) {
  auto aggregated = data::VisitFirst(db, "", kAggregatedSql, {run_id, group}, [](Stmt&) {});
  if (!aggregated) return aggregated.error();
  return *aggregated ? Tier::kLean : Tier::kFull;
}

Result<OpenedRun> OpenRun(const std::string& path, int64_t requested, const data::TaskFilter& filter) {
  auto db = OpenProfileDb(path, DbMode::kReadOnly);
  if (!db) return db.error();
  auto run = ResolveRun(*db, requested);
  if (!run) return run.error();
  if (!filter.empty()) {
    auto kept = data::ApplyTaskFilter(*db, run->id, filter);
    if (!kept) return kept.error();
    auto all = data::QueryOne(*db, kProcessCountSql, {run->id});
    if (!all) return all.error();
    run->only = filter.Describe() + " (" + std::to_string(*kept) + " of " + std::to_string(*all) + " processes)";
  }
  return OpenedRun{std::move(*db), std::move(*run)};
}

const char* TierName(Tier t) { return t == Tier::kLean ? "lean" : "full"; }

std::string RunHeadline(const RunInfo& run) {
  return "run " + std::to_string(run.id) + ": " + TerminalSafe(run.command) + "\n" +
         (run.only.empty() ? "" : "only: " + TerminalSafe(run.only) + "\n");
}

Result<ProbeStatus> ReadProbeStatus(Db& db, int64_t run_id, const std::string& group) {
  ProbeStatus p;
  auto found = data::VisitFirst(db, "", kProbeStatusSql, {run_id, group},
                                [&](Stmt& r) { p = {true, r.Int(0) != 0, r.Text(1)}; });
  if (!found) return found.error();
  return p;
}

Result<std::vector<ProbeRow>> ReadProbes(Db& db, int64_t run_id) {
  std::vector<ProbeRow> out;
  SYSPGO_TRY(data::Visit(db, "run_probe of run " + std::to_string(run_id), kProbesSql, {run_id}, [&](Stmt& r) {
    out.push_back({r.Text(0), r.Int(1), r.Text(2), r.Int(3)});
  }));
  return out;
}

Status RequireProbeGroup(Db& db, int64_t run_id, const std::string& group, const std::string& what,
                         const std::string& probes) {
  auto p = ReadProbeStatus(db, run_id, group);
  if (!p) return p.error();
  if (p->attached) return {};
  std::string why = p->recorded ? "did not attach (" + p->detail + ")" : "was not recorded";
  return MakeError("run " + std::to_string(run_id) + " of '" + db.path() + "' has no " + what + ": the " + group +
                   " probe group " + why + ". Record one with: syspgo collect --probes " + probes + " -o " +
                   db.path() + " -- COMMAND");
}

Result<RunWindow> ReadRunWindow(Db& db, int64_t run_id) {
  RunWindow w;
  SYSPGO_TRY(RunRow(db, run_id, kRunWindowSql, [&](Stmt& r) { w = {r.Int(0), r.Int(1), r.Int(2)}; }));
  return w;
}

Result<int64_t> ReadLastEventTs(Db& db, int64_t run_id) { return data::QueryOne(db, kLastEventSql, {run_id}); }

Result<RunOrigin> ReadRunOrigin(Db& db, int64_t run_id) {
  RunOrigin o;
  SYSPGO_TRY(RunRow(db, run_id, kRunOriginSql,
                    [&](Stmt& r) { o = {r.Text(0), r.Text(1), r.Text(2), r.Int(3), r.Int(4)}; }));
  return o;
}

Result<std::vector<LiveRun>> LiveRuns(Db& db) {
  std::vector<LiveRun> out;
  SYSPGO_TRY(data::Visit(db, "", kLiveRunsSql, {}, [&](Stmt& r) {
    if (!CollectorGone(r.Int(1), r.Text(2))) out.push_back({r.Int(0), r.Int(1)});
  }));
  return out;
}

// Databases come from others: a value out of its range reads as the
// setting's default, `lo` for every setting (as ParseSettings reads a
// member of a version 4 database).
namespace {
int64_t Within(int64_t v, int64_t lo, int64_t hi = INT64_MAX) { return v >= lo && v <= hi ? v : lo; }

void ReadSettingsRow(Stmt& row, RunSettings& s) {
  s.detail = row.Text(0);
  s.ringbuf_bytes = static_cast<uint64_t>(Within(row.Int(1), 0));
  s.memory_budget_bytes = static_cast<uint64_t>(Within(row.Int(2), 0));
  s.freq_hz = static_cast<uint32_t>(Within(row.Int(3), 0, UINT32_MAX));
  s.offcpu_min_ns = Within(row.Int(4), 0);
  s.irq_min_ns = Within(row.Int(5), 0);
  s.cold = row.Int(6) != 0;
  s.no_readahead = row.Int(7) != 0;
  s.kernel_build_id = row.Text(8);
  s.vdso_build_id = row.Text(9);
  if (row.Int(10)) s.damon.emplace();
}
}  // namespace

Result<RunSettings> ReadRunSettings(Db& db, int64_t run_id) {
  RunSettings s;
  SYSPGO_TRY(RunRow(db, run_id, kRunSettingsSql, [&](Stmt& r) { ReadSettingsRow(r, s); }));
  // The lists, in their order.
  SYSPGO_TRY(data::Visit(db, "the probe groups of run " + std::to_string(run_id), kSettingProbesSql, {run_id},
                         [&](Stmt& r) { s.probes.push_back(r.Text(0)); }));
  // dev and ino are stored as stat(2) gives them, in SQLite's signed integers.
  SYSPGO_TRY(data::Visit(db, "the collector's files of run " + std::to_string(run_id), kCollectorFilesSql, {run_id},
                         [&](Stmt& r) {
                           s.collector_files.emplace_back(static_cast<uint64_t>(r.Int(0)),
                                                          static_cast<uint64_t>(r.Int(1)));
                         }));
  if (!s.damon) return s;
  SYSPGO_TRY(data::Visit(db, "the DAMON schemes of run " + std::to_string(run_id), kDamonSchemesSql, {run_id},
                         [&](Stmt& r) {
                           s.damon->push_back({r.Text(0), r.Text(1), Within(r.Int(2), -1), Within(r.Int(3), -1),
                                               Within(r.Int(4), -1)});
                         }));
  return s;
}

}  // namespace syspgo
