//===- run.cc - choosing the run an analysis reads -----------------------===//
#include "analyze/run.h"

#include <string_view>

#include "common/profile_db.h"
#include "common/util.h"

namespace syspgo {

namespace {
Error NoRun(Db& db, int64_t run_id) {
  return MakeError("profile database '" + db.path() + "' has no run " + std::to_string(run_id) + ".", ENOENT);
}

// NoRun for a run the user asked for: which runs there are to pick from.
Error NoRunToPick(Db& db, int64_t run_id) {
  auto n = db.QueryInt("SELECT COUNT(*) FROM run");
  auto mx = db.QueryInt("SELECT COALESCE(MAX(id), 0) FROM run");
  return MakeError("profile database '" + db.path() + "' has no run " + std::to_string(run_id) + " (it has " +
                   std::to_string(n.ok() ? *n : 0) + " runs, newest " + std::to_string(mx.ok() ? *mx : 0) +
                   "). Pick one with --run N.");
}

// `sql` with ?1 the run and, if given, ?2 the probe group, stepped to its
// first row; *found says whether there is one.
Result<Stmt> FirstRow(Db& db, std::string_view sql, int64_t run_id, const std::string* group, bool* found) {
  auto st = db.Prepare(sql);
  if (!st) return st.error();
  st->Bind(1, run_id);
  if (group) st->Bind(2, *group);
  Status err;
  *found = st->Step(&err);
  if (!err.ok()) return err.error();
  return st;
}

// `columns` of `table`'s row for run `run_id` and probe group `group`,
// stepped to; *found says whether there is one.
Result<Stmt> GroupRow(Db& db, const char* table, const char* columns, int64_t run_id, const std::string& group,
                      bool* found) {
  return FirstRow(db, std::string("SELECT ") + columns + " FROM " + table + " WHERE run_id = ?1 AND probe_group = ?2",
                  run_id, &group, found);
}

// `columns` of run `run_id`, stepped to its row; `missing` says there is
// no such run. Every reader of one run's row comes through here.
Result<Stmt> RunRow(Db& db, int64_t run_id, const std::string& columns, Error (*missing)(Db&, int64_t) = NoRun) {
  bool found = false;
  auto st = FirstRow(db, "SELECT " + columns + " FROM run WHERE id = ?1", run_id, nullptr, &found);
  if (st && !found) return missing(db, run_id);
  return st;
}
}  // namespace

Result<RunInfo> ResolveRun(Db& db, int64_t requested) {
  int64_t id = requested;
  if (!id) {
    auto newest = db.QueryInt("SELECT COALESCE(MAX(id), 0) FROM run");
    if (!newest) return newest.error();
    if (!*newest)
      return MakeError("profile database '" + db.path() + "' holds no runs yet. Record one with: syspgo collect -o " +
                       db.path() + " -- COMMAND");
    id = *newest;
  }
  auto row =
      RunRow(db, id, "command, status, COALESCE(end_ts, 0), events_dropped, collector_pid, boot_id", NoRunToPick);
  if (!row) return row.error();
  RunInfo info{id, row->Text(0), row->Text(1), row->Int(2), row->Int(3)};
  if (info.status == "running" && CollectorGone(row->Int(4), row->Text(5))) info.status = "incomplete";
  return info;
}

Result<Tier> RecordingTier(Db& db, int64_t run_id, const std::string& group) {
  bool aggregated = false;
  auto st = GroupRow(db, "run_aggregate", "1", run_id, group, &aggregated);
  if (!st) return st.error();
  return aggregated ? Tier::kLean : Tier::kFull;
}

Result<OpenedRun> OpenRun(const std::string& path, int64_t requested) {
  auto db = OpenProfileDb(path, DbMode::kReadOnly);
  if (!db) return db.error();
  auto run = ResolveRun(*db, requested);
  if (!run) return run.error();
  return OpenedRun{std::move(*db), std::move(*run)};
}

const char* TierName(Tier t) { return t == Tier::kLean ? "lean" : "full"; }

std::string RunHeadline(const RunInfo& run) {
  return "run " + std::to_string(run.id) + ": " + TerminalSafe(run.command) + "\n";
}

std::string WithRunTables(Db& db, std::string sql) {
  auto runs = db.QueryInt("SELECT COUNT(*) FROM run");
  const char* hint = runs.ok() && *runs == 1 ? " NOT INDEXED" : "";
  for (size_t open = sql.find('{'); open != std::string::npos; open = sql.find('{', open)) {
    size_t close = sql.find('}', open);
    if (close == std::string::npos) break;
    std::string t = sql.substr(open + 1, close - open - 1) + hint;
    sql.replace(open, close - open + 1, t);
    open += t.size();
  }
  return sql;
}

Result<ProbeStatus> ReadProbeStatus(Db& db, int64_t run_id, const std::string& group) {
  bool found = false;
  auto st = GroupRow(db, "run_probe", "attached, detail", run_id, group, &found);
  if (!st) return st.error();
  if (!found) return ProbeStatus{};
  return ProbeStatus{true, st->Int(0) != 0, st->Text(1)};
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
  auto row = RunRow(db, run_id, "COALESCE(command_start_ts, 0), COALESCE(end_ts, 0), target_pid");
  if (!row) return row.error();
  return RunWindow{row->Int(0), row->Int(1), row->Int(2)};
}

Result<RunOrigin> ReadRunOrigin(Db& db, int64_t run_id) {
  auto row = RunRow(db, run_id, "host, kernel_release, syspgo_version, start_realtime_ns, events_recorded");
  if (!row) return row.error();
  return RunOrigin{row->Text(0), row->Text(1), row->Text(2), row->Int(3), row->Int(4)};
}

Result<std::vector<LiveRun>> LiveRuns(Db& db) {
  auto st = db.Prepare("SELECT id, collector_pid, boot_id FROM run WHERE status = 'running' ORDER BY id");
  if (!st) return st.error();
  std::vector<LiveRun> out;
  Status err;
  while (st->Step(&err))
    if (!CollectorGone(st->Int(1), st->Text(2))) out.push_back({st->Int(0), st->Int(1)});
  if (!err.ok()) return err.error();
  return out;
}

// Databases come from others: a value out of its range reads as the
// setting's default, `lo` for every setting (as ParseSettings reads a
// member of a version 4 database).
namespace {
int64_t Within(int64_t v, int64_t lo, int64_t hi = INT64_MAX) { return v >= lo && v <= hi ? v : lo; }
}  // namespace

Result<RunSettings> ReadRunSettings(Db& db, int64_t run_id) {
  auto row = RunRow(db, run_id,
                    "detail, ringbuf_bytes, memory_budget_bytes, cpu_freq_hz, offcpu_min_ns, irq_min_ns, cold, "
                    "no_readahead, kernel_build_id, vdso_build_id, damon_read");
  if (!row) return row.error();
  RunSettings s;
  s.detail = row->Text(0);
  s.ringbuf_bytes = static_cast<uint64_t>(Within(row->Int(1), 0));
  s.memory_budget_bytes = static_cast<uint64_t>(Within(row->Int(2), 0));
  s.freq_hz = static_cast<uint32_t>(Within(row->Int(3), 0, UINT32_MAX));
  s.offcpu_min_ns = Within(row->Int(4), 0);
  s.irq_min_ns = Within(row->Int(5), 0);
  s.cold = row->Int(6) != 0;
  s.no_readahead = row->Int(7) != 0;
  s.kernel_build_id = row->Text(8);
  s.vdso_build_id = row->Text(9);
  if (row->Int(10)) s.damon.emplace();
  // The lists, in their order.
  SYSPGO_TRY(ForEachRow(db, "the probe groups of run " + std::to_string(run_id),
                        "SELECT probe_group FROM run_setting_probe WHERE run_id = ?1 ORDER BY position", {run_id},
                        [&](Stmt& r) { s.probes.push_back(r.Text(0)); }));
  // dev and ino are stored as stat(2) gives them, in SQLite's signed integers.
  SYSPGO_TRY(ForEachRow(db, "the collector's files of run " + std::to_string(run_id),
                        "SELECT dev, ino FROM run_collector_file WHERE run_id = ?1 ORDER BY position", {run_id},
                        [&](Stmt& r) {
                          s.collector_files.emplace_back(static_cast<uint64_t>(r.Int(0)),
                                                         static_cast<uint64_t>(r.Int(1)));
                        }));
  if (!s.damon) return s;
  SYSPGO_TRY(ForEachRow(db, "the DAMON schemes of run " + std::to_string(run_id),
                        "SELECT path, ops, min_age, aggr_us, min_age_us FROM run_damon_scheme WHERE run_id = ?1 "
                        "ORDER BY position",
                        {run_id}, [&](Stmt& r) {
                          s.damon->push_back({r.Text(0), r.Text(1), Within(r.Int(2), -1), Within(r.Int(3), -1),
                                              Within(r.Int(4), -1)});
                        }));
  return s;
}

}  // namespace syspgo
