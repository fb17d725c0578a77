//===- cpu_tables.cc - the cpu group's tables of a run, one reader each --===//
#include "analyze/data/cpu_tables.h"

#include <sqlite3.h>

#include <cstring>

#include "analyze/data/query.h"

namespace syspgo {
namespace {

// (dev, ino, path) of the files the run's processes mapped with a path
// (the executable and interpreter of an exec, which no open names).
constexpr char kMappedFilesSql[] =
    "SELECT dev, ino, path FROM mapping WHERE run_id = ?1 AND ino != 0 AND path LIKE '/%' ORDER BY dev, ino, ts";
constexpr char kMappingsSql[] =
    "SELECT pid, ts, vm_start, vm_end, file_off, path, COALESCE(build_id, '') FROM mapping WHERE run_id = ?1 "
    "ORDER BY pid, vm_start, ts";
constexpr char kKallsymsSql[] =
    "SELECT k.text FROM run_kallsyms AS r JOIN kallsyms AS k ON k.hash = r.hash WHERE r.run_id = ?1";
constexpr char kStackSql[] = "SELECT frames FROM stack WHERE run_id = ?1 AND id = ?2";
// The frames of the stacks the rows of `table` name, by stack id.
constexpr char kCpuSampleStacksSql[] =
    "SELECT id, frames FROM stack WHERE run_id = ?1 AND id IN "
    "(SELECT user_stack_id FROM cpu_sample WHERE run_id = ?1 UNION SELECT kernel_stack_id FROM cpu_sample "
    "WHERE run_id = ?1) ORDER BY id";
constexpr char kOffCpuStacksSql[] =
    "SELECT id, frames FROM stack WHERE run_id = ?1 AND id IN "
    "(SELECT user_stack_id FROM offcpu WHERE run_id = ?1 UNION SELECT kernel_stack_id FROM offcpu "
    "WHERE run_id = ?1) ORDER BY id";

// Who ran on CPU ?4 in [?2, ?3) besides thread ?5: the traced threads the
// cpu group sampled there, most samples first.
constexpr char kCpuBusySql[] =
    "SELECT tid, pid, COUNT(*) AS n FROM cpu_sample WHERE run_id = ?1 AND ts >= ?2 AND ts < ?3 AND cpu = ?4 "
    "AND tid != ?5 GROUP BY tid, pid ORDER BY n DESC, tid LIMIT 3";
constexpr char kUserSamplesSql[] =
    "SELECT COUNT(*) FROM cpu_sample WHERE run_id = ?1 AND ts >= ?2 AND ts < ?3 AND tid = ?4 AND kernel = 0";
constexpr char kSamplesByThreadSql[] =
    "SELECT tid, ts, pid, cpu, kernel, ip FROM cpu_sample WHERE run_id = ?1 ORDER BY tid, ts";

}  // namespace

Status VisitCpuBusy(Db& db, int64_t run_id, int64_t cpu, int64_t from, int64_t to, int64_t but_tid,
                    const data::RowFn& row) {
  return data::Visit(db, "", kCpuBusySql, {run_id, from, to, cpu, but_tid}, row);
}

Result<int64_t> CountUserSamples(Db& db, int64_t run_id, int64_t tid, int64_t from, int64_t to) {
  return data::QueryOne(db, kUserSamplesSql, {run_id, from, to, tid});
}

Status VisitSamplesByThread(Db& db, int64_t run_id, const data::RowFn& row) {
  return data::Visit(db, "the CPU samples of run " + std::to_string(run_id), kSamplesByThreadSql, {run_id}, row);
}

Result<MappingsByPid> ReadMappings(Db& db, int64_t run_id) {
  MappingsByPid out;
  SYSPGO_TRY(data::Visit(db, "", kMappingsSql, {run_id}, [&](Stmt& st) {
    out[st.Int(0)].push_back({st.Int(1), static_cast<uint64_t>(st.Int(2)), static_cast<uint64_t>(st.Int(3)),
                              static_cast<uint64_t>(st.Int(4)), st.Text(5), st.Text(6)});
  }));
  return out;
}

Result<std::optional<std::string>> ReadKallsyms(Db& db, int64_t run_id) {
  std::optional<std::string> text;
  auto found = data::VisitFirst(db, "", kKallsymsSql, {run_id}, [&](Stmt& st) { text = st.Text(0); });
  if (!found) return found.error();
  return text;
}

Result<std::vector<uint64_t>> ReadStack(Db& db, int64_t run_id, int64_t id) {
  std::vector<uint64_t> frames;
  auto found = data::VisitFirst(db, "", kStackSql, {run_id, id}, [&](Stmt& st) { frames = StackFrames(st, 0); });
  if (!found) return found.error();
  return frames;
}

Status VisitStacksOf(Db& db, int64_t run_id, StackTable table,
                     const std::function<void(int64_t id, std::vector<uint64_t> frames)>& fn) {
  return data::Visit(db, "", table == StackTable::kCpuSample ? kCpuSampleStacksSql : kOffCpuStacksSql, {run_id},
                     [&](Stmt& st) { fn(st.Int(0), StackFrames(st, 1)); });
}

Status VisitMappedFiles(Db& db, int64_t run_id, const std::function<void(const MappedFile&)>& fn) {
  return data::Visit(db, "", kMappedFilesSql, {run_id}, [&](Stmt& st) {
    fn({static_cast<uint64_t>(st.Int(0)), static_cast<uint64_t>(st.Int(1)), st.Text(2)});
  });
}

std::vector<uint64_t> StackFrames(Stmt& st, int col) {
  std::vector<uint64_t> out;
  const void* p = sqlite3_column_blob(st.raw(), col);
  int n = sqlite3_column_bytes(st.raw(), col);
  out.resize(static_cast<size_t>(n) / 8);
  if (p && !out.empty()) memcpy(out.data(), p, out.size() * 8);  // little-endian, as x86 stores it
  return out;
}

}  // namespace syspgo
