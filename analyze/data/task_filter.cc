//===- task_filter.cc - reading one run as if only some processes ran ----===//
#include "analyze/data/task_filter.h"

#include <unistd.h>

#include <map>
#include <set>

#include "analyze/data/query.h"
#include "analyze/data/redact_writer.h"

namespace syspgo::data {
namespace {

constexpr char kKeptTableSql[] =
    "PRAGMA temp_store = MEMORY; CREATE TEMP TABLE IF NOT EXISTS syspgo_kept_pid (pid INTEGER PRIMARY KEY); "
    "DELETE FROM temp.syspgo_kept_pid";
// The processes of the run the filter keeps: ?2 a pid (0: any), ?3 a cgroup
// path relative to its hierarchy ('' any), its subtree included, ?4 a comm,
// ?5 a container id's beginning.
constexpr char kKeepSql[] = R"(INSERT OR IGNORE INTO temp.syspgo_kept_pid (pid)
SELECT pid FROM main.process
WHERE run_id = ?1 AND (?2 = 0 OR pid = ?2)
  AND (?3 = '' OR ?3 = '/' OR cgroup = ?3 OR substr(cgroup, 1, length(?3) + 1) = ?3 || '/')
  AND (?4 = '' OR comm = ?4)
  AND (?5 = '' OR (container <> '' AND substr(container, 1, length(?5)) = ?5))
ORDER BY pid)";
constexpr char kKeptCountSql[] = "SELECT COUNT(*) FROM temp.syspgo_kept_pid";
constexpr char kAppliedSql[] = "SELECT COUNT(*) FROM sqlite_temp_master WHERE name = 'syspgo_kept_pid'";
constexpr char kViewCountSql[] = "SELECT COUNT(*) FROM sqlite_temp_master WHERE type = 'view'";
constexpr char kNoCgroupSql[] = "SELECT COUNT(*) FROM main.process WHERE run_id = ?1 AND cgroup = ''";
constexpr char kSomeProcessesSql[] =
    "SELECT pid, comm, cgroup FROM main.process WHERE run_id = ?1 ORDER BY start_ts, pid LIMIT 8";

// The rows a table's view keeps, by the column it has: the process, else
// the thread of a kept process.
struct Rule {
  const char* column;
  const char* where;
};
constexpr Rule kRules[] = {
    {"pid", "pid IN (SELECT pid FROM temp.syspgo_kept_pid)"},
    {"tid", "tid IN (SELECT tid FROM main.thread WHERE pid IN (SELECT pid FROM temp.syspgo_kept_pid))"},
};

// `path` relative to its hierarchy's root: /sys/fs/cgroup/memory/a/b and a
// v2 host's /sys/fs/cgroup/a/b are both /a/b.
std::string RelativeCgroup(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const std::string root = "/sys/fs/cgroup";
  if (path.rfind(root + "/", 0) != 0 && path != root) return path;
  std::string rest = path.substr(root.size());
  bool v2_root = access((root + "/cgroup.procs").c_str(), F_OK) == 0;
  if (!v2_root && !rest.empty()) rest = rest.find('/', 1) == std::string::npos ? "" : rest.substr(rest.find('/', 1));
  return rest.empty() ? "/" : rest;
}

// Shadows each table with a pid or tid column by its filtered view (the
// columns are all read before the first view hides its table's).
Status CreateViews(Db& db) {
  auto columns = ReadColumns(db);
  if (!columns) return columns.error();
  std::map<std::string, std::set<std::string>> tables;
  for (auto& [t, c] : *columns) tables[t].insert(c);
  for (const auto& [t, cols] : tables) {
    for (const Rule& r : kRules) {
      if (!cols.count(r.column)) continue;
      // rowid too: some statements order by it (the order rows were written).
      SYSPGO_TRY(db.Exec("CREATE TEMP VIEW \"" + t + "\" AS SELECT *, rowid AS rowid FROM main.\"" + t +
                         "\" WHERE " + r.where));
      break;
    }
  }
  return {};
}

// Why nothing was kept: what the run's processes are.
Status NoneKept(Db& db, int64_t run_id, const TaskFilter& f) {
  std::string some;
  SYSPGO_TRY(Visit(db, "the processes", kSomeProcessesSql, {run_id}, [&](Stmt& s) {
    some += (some.empty() ? "" : ", ") + s.Text(1) + " (" + std::to_string(s.Int(0)) + ", cgroup " +
            (s.Text(2).empty() ? "unknown" : s.Text(2)) + ")";
  }));
  std::string why = "run " + std::to_string(run_id) + " has no process of " + f.Describe();
  auto unknown = QueryOne(db, kNoCgroupSql, {run_id});
  if ((!f.cgroup.empty() || !f.container.empty()) && unknown.ok() && *unknown > 0)
    why += "; some of its processes have no cgroup recorded (a run recorded before syspgo kept them)";
  return MakeError(why + ". Its processes include: " + (some.empty() ? "none" : some) +
                       ". List them all with: syspgo analyze DB report, or pick one with --pid, --comm or --cgroup",
                   ENOENT);
}

}  // namespace

std::string TaskFilter::Describe() const {
  std::string s;
  auto add = [&](const std::string& what) { s += (s.empty() ? "" : ", ") + what; };
  if (pid) add("pid " + std::to_string(pid));
  if (!cgroup.empty()) add("cgroup " + cgroup);
  if (!comm.empty()) add("comm " + comm);
  if (!container.empty()) add("container " + container);
  return s;
}

Result<int64_t> ApplyTaskFilter(Db& db, int64_t run_id, const TaskFilter& f) {
  if (f.empty()) return int64_t{-1};
  SYSPGO_TRY(db.Exec(kKeptTableSql));
  std::string cgroup = f.cgroup.empty() ? "" : RelativeCgroup(f.cgroup);
  SYSPGO_TRY(Visit(db, "the processes", kKeepSql, {run_id, f.pid, cgroup, f.comm, f.container}, [](Stmt&) {}));
  auto kept = QueryOne(db, kKeptCountSql, {});
  if (!kept) return kept.error();
  if (*kept == 0) return NoneKept(db, run_id, f).error();
  auto views = QueryOne(db, kViewCountSql, {});
  if (!views) return views.error();
  if (*views == 0) SYSPGO_TRY(CreateViews(db));  // a second filter only changes the kept pids
  return *kept;
}

bool TaskFilterApplied(Db& db) {
  auto n = QueryOne(db, kAppliedSql, {});
  return n.ok() && *n > 0;
}

}  // namespace syspgo::data
