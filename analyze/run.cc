//===- run.cc - choosing the run an analysis reads -----------------------===//
#include "analyze/run.h"

#include "common/profile_db.h"
#include "common/util.h"

namespace syspgo {

Result<RunInfo> ResolveRun(Db& db, int64_t requested) {
  constexpr char kNewest[] =
      "SELECT id, command, status, COALESCE(end_ts, 0), events_dropped, collector_pid, boot_id FROM run "
      "ORDER BY id DESC LIMIT 1";
  constexpr char kById[] =
      "SELECT id, command, status, COALESCE(end_ts, 0), events_dropped, collector_pid, boot_id FROM run "
      "WHERE id = ?";
  auto st = db.Prepare(requested ? kById : kNewest);
  if (!st) return st.error();
  if (requested) st->Bind(1, requested);
  Status err;
  if (!st->Step(&err)) {
    if (!err.ok()) return err.error();
    if (!requested)
      return MakeError("profile database '" + db.path() + "' holds no runs yet. Record one with: syspgo collect -o " +
                       db.path() + " -- COMMAND");
    auto n = db.QueryInt("SELECT COUNT(*) FROM run");
    auto mx = db.QueryInt("SELECT COALESCE(MAX(id), 0) FROM run");
    return MakeError("profile database '" + db.path() + "' has no run " + std::to_string(requested) + " (it has " +
                     std::to_string(n.ok() ? *n : 0) + " runs, newest " + std::to_string(mx.ok() ? *mx : 0) +
                     "). Pick one with --run N.");
  }
  RunInfo info{st->Int(0), st->Text(1), st->Text(2), st->Int(3), st->Int(4)};
  if (info.status == "running" && CollectorGone(st->Int(5), st->Text(6))) info.status = "incomplete";
  return info;
}

Result<Tier> RecordingTier(Db& db, int64_t run_id, const std::string& group) {
  auto st = db.Prepare("SELECT EXISTS (SELECT 1 FROM run_aggregate WHERE run_id = ?1 AND probe_group = ?2)");
  if (!st) return st.error();
  st->Bind(1, run_id).Bind(2, group);
  Status err;
  if (!st->Step(&err)) return err.ok() ? Result<Tier>(Tier::kFull) : Result<Tier>(err.error());
  return st->Int(0) ? Tier::kLean : Tier::kFull;
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

namespace {
Error NoRun(Db& db, int64_t run_id) {
  return MakeError("profile database '" + db.path() + "' has no run " + std::to_string(run_id) + ".", ENOENT);
}

// `columns` of run `run_id`, stepped to its row; the run-not-found error
// every reader of the run table gives.
Result<Stmt> RunRow(Db& db, int64_t run_id, const std::string& columns) {
  auto st = db.Prepare("SELECT " + columns + " FROM run WHERE id = ?1");
  if (!st) return st.error();
  st->Bind(1, run_id);
  Status err;
  if (!st->Step(&err)) return err.ok() ? NoRun(db, run_id) : err.error();
  return st;
}
}  // namespace

Result<ProbeStatus> ReadProbeStatus(Db& db, int64_t run_id, const std::string& group) {
  auto st = db.Prepare("SELECT attached, detail FROM run_probe WHERE run_id = ?1 AND probe_group = ?2");
  if (!st) return st.error();
  st->Bind(1, run_id).Bind(2, group);
  Status err;
  ProbeStatus p;
  if (st->Step(&err)) p = {true, st->Int(0) != 0, st->Text(1)};
  if (!err.ok()) return err.error();
  return p;
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
  auto row = RunRow(db, run_id, "COALESCE(command_start_ts, 0), COALESCE(end_ts, 0)");
  if (!row) return row.error();
  return RunWindow{row->Int(0), row->Int(1)};
}

Result<RunSettings> ReadRunSettings(Db& db, int64_t run_id) {
  auto row = RunRow(db, run_id, "settings_json");
  if (!row) return row.error();
  return ParseSettings(row->Text(0));
}

}  // namespace syspgo
