//===- run_row.cc - the run row of one collection, from start to end -----===//
#include "collect/run_row.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/profile_db.h"
#include "common/util.h"

namespace syspgo {
namespace {

constexpr char kInsertRun[] =
    "INSERT INTO run (command, argv_json, target_pid, attached, host, kernel_release, syspgo_version, "
    "start_realtime_ns, start_monotonic_ns, collector_pid, boot_id) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";
constexpr char kRunningRuns[] = "SELECT id, collector_pid, boot_id FROM run WHERE status = 'running' ORDER BY id";
constexpr char kMarkDead[] =
    "UPDATE run SET status = 'incomplete', exit_reason = COALESCE(exit_reason, 'collector-died') WHERE id = ?1";
constexpr char kSetupFailed[] =
    "UPDATE run SET status = 'incomplete', exit_reason = 'setup-failed', end_ts = 0 WHERE id = ?1";
constexpr char kCommandReleased[] = "UPDATE run SET command_start_ts = ?2 WHERE id = ?1";
constexpr char kExecFailed[] =
    "UPDATE run SET status = 'complete', exit_reason = 'exec-failed', exit_code = 127, end_ts = ?2 WHERE id = ?1";
constexpr char kComplete[] =
    "UPDATE run SET end_ts = ?2, status = 'complete', exit_reason = ?3, exit_code = ?4, events_recorded = ?5, "
    "events_dropped = ?6 WHERE id = ?1";

int64_t I(uint64_t v) { return static_cast<int64_t>(v); }

}  // namespace

Result<int64_t> InsertRun(Db& db, const RunStart& start, const RunSettings& settings) {
  utsname u{};
  uname(&u);
  // Arguments are bytes: one that is not UTF-8 is stored with U+FFFD (the
  // command column keeps them exactly, shell-quoted).
  std::string argv_json = JsonText(nlohmann::ordered_json(start.argv));
  auto st = db.Prepare(kInsertRun);
  if (!st) return st.error();
  st->Bind(1, JoinShell(start.argv)).Bind(2, argv_json).Bind(3, int64_t{start.target_pid});
  st->Bind(4, int64_t{start.attached}).Bind(5, std::string(u.nodename)).Bind(6, std::string(u.release));
  st->Bind(7, std::string(SYSPGO_VERSION)).Bind(8, I(start.start_realtime_ns)).Bind(9, I(start.start_monotonic_ns));
  st->Bind(10, int64_t{getpid()}).Bind(11, CurrentBootId());
  Status rs = db.Exec("BEGIN IMMEDIATE");
  if (rs.ok()) rs = st->Run();
  int64_t id = db.LastInsertId();
  if (rs.ok()) rs = WriteRunSettings(db, id, settings);
  if (rs.ok()) rs = db.Exec("COMMIT");
  if (!rs.ok()) {
    (void)db.Exec("ROLLBACK");
    return MakeError("cannot record the run in '" + db.path() + "': " + rs.error().message, rs.error().code);
  }
  return id;
}

Status MarkDeadRuns(Db& db) {
  auto st = db.Prepare(kRunningRuns);
  if (!st) return st.error();
  std::vector<int64_t> dead;
  while (st->Step())
    if (CollectorGone(st->Int(1), st->Text(2))) dead.push_back(st->Int(0));
  auto mark = db.Prepare(kMarkDead);
  if (!mark) return mark.error();
  for (int64_t id : dead) SYSPGO_TRY(mark->Bind(1, id).Run());
  return {};
}

Status RunRow::SetupFailed() { return writer_.Exec(kSetupFailed, {id_}); }

Status RunRow::CommandReleased(uint64_t ts) { return writer_.Exec(kCommandReleased, {id_, I(ts)}); }

Status RunRow::ExecFailed(uint64_t end_ts) { return writer_.Exec(kExecFailed, {id_, I(end_ts)}); }

Status RunRow::Complete(uint64_t end_ts, const std::string& reason, std::optional<int> exit_code, uint64_t events,
                        uint64_t dropped) {
  SqlValue code = nullptr;
  if (exit_code) code = int64_t{*exit_code};
  return writer_.Exec(kComplete, {id_, I(end_ts), reason, code, I(events), I(dropped)});
}

}  // namespace syspgo
