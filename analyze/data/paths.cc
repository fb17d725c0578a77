//===- paths.cc - the names of files and syscalls a run recorded ---------===//
#include "analyze/data/paths.h"

#include "analyze/data/cpu_tables.h"
#include "analyze/file_calls.h"

namespace syspgo::data {
namespace {

constexpr char kSyscallNamesSql[] = "SELECT nr, name FROM syscall_name ORDER BY nr";
constexpr char kFileTableSql[] = "SELECT dev, ino, path FROM file WHERE run_id = ?1 ORDER BY dev, ino";
// The file table first, then the mappings the cpu group saw.
constexpr char kFileAndMappedSql[] =
    "SELECT dev, ino, MIN(path) FROM (SELECT dev, ino, path FROM file WHERE run_id = ?1 "
    "UNION ALL SELECT dev, ino, path FROM mapping WHERE run_id = ?1 AND ino != 0 AND path LIKE '/%') "
    "GROUP BY dev, ino ORDER BY dev, ino";
constexpr char kOpensSql[] =
    "SELECT dev, ino, ts, path FROM file_open WHERE run_id = ?1 AND ret >= 0 AND ino != 0 "
    "ORDER BY dev, ino, ts";
constexpr char kExecFilesSql[] =
    "SELECT filename, dev, ino, path, interpreter FROM exec_file WHERE run_id = ?1 ORDER BY filename, dev, ino";
constexpr char kFileSizesSql[] = "SELECT dev, ino, size FROM file_size WHERE run_id = ?1 ORDER BY dev, ino";
constexpr char kBlockDevicesSql[] =
    "SELECT major, minor FROM run_block_device WHERE run_id = ?1 ORDER BY major, minor";
constexpr char kFirstExecSql[] = "SELECT COALESCE(MIN(ts), 0) FROM exec WHERE run_id = ?1 AND pid = ?2";
// Opens and lookups (stat, access, readlink, failed execs) that walked
// their whole path: those that found something, and those that failed on a
// missing (ENOENT), non-directory (ENOTDIR) or forbidden (EACCES) name, or
// (readlink) on a name that is there but no symbolic link (EINVAL); and
// every exec, whose ELF interpreter the kernel looks up too (no syscall
// shows that one); since ?2.
const std::string kPathWalksSql = R"sql(
SELECT MAX(l.ts - ?2, 0), l.path, l.is_exec FROM (
  SELECT ts, path, 0 AS is_exec FROM (
    SELECT ts, path, nr, ret FROM file_open WHERE run_id = ?1
    UNION ALL
    SELECT ts, path, nr, ret FROM file_lookup WHERE run_id = ?1
  ) WHERE ret >= 0 OR ret IN (-2, -13, -20) OR (nr IN ()sql" + SqlList(kReadlinkCalls) + R"sql() AND ret = -22)
  UNION ALL
  SELECT ts, filename, 1 FROM exec WHERE run_id = ?1
) l
WHERE l.ts >= ?2 AND l.path != ''
ORDER BY l.ts, l.path
)sql";

Result<std::map<FileKey, std::string>> PathMap(Db& db, const std::string& what, std::string_view sql,
                                               int64_t run_id) {
  std::map<FileKey, std::string> out;
  SYSPGO_TRY(Visit(db, what, sql, {run_id}, [&](Stmt& s) {
    out[{static_cast<uint64_t>(s.Int(0)), static_cast<uint64_t>(s.Int(1))}] = s.Text(2);
  }));
  return out;
}

}  // namespace

Result<std::map<int64_t, std::string>> ReadSyscallNames(Db& db, const std::string& what) {
  std::map<int64_t, std::string> out;
  SYSPGO_TRY(Visit(db, what, kSyscallNamesSql, {}, [&](Stmt& s) { out[s.Int(0)] = s.Text(1); }));
  return out;
}

Result<std::map<FileKey, std::string>> ReadFileTable(Db& db, int64_t run_id, const std::string& what) {
  return PathMap(db, what, kFileTableSql, run_id);
}

Result<std::map<FileKey, std::string>> ReadFileAndMappedPaths(Db& db, int64_t run_id) {
  return PathMap(db, "", kFileAndMappedSql, run_id);
}

Status VisitSuccessfulOpens(Db& db, int64_t run_id, const std::function<void(const FileOpen&)>& fn) {
  return Visit(db, "", kOpensSql, {run_id}, [&](Stmt& s) {
    fn({static_cast<uint64_t>(s.Int(0)), static_cast<uint64_t>(s.Int(1)), s.Int(2), s.Text(3)});
  });
}

Result<std::vector<ExecFile>> ReadExecFiles(Db& db, int64_t run_id) {
  std::vector<ExecFile> out;
  SYSPGO_TRY(Visit(db, "", kExecFilesSql, {run_id}, [&](Stmt& s) {
    out.push_back({s.Text(0), static_cast<uint64_t>(s.Int(1)), static_cast<uint64_t>(s.Int(2)), s.Text(3), s.Text(4)});
  }));
  return out;
}

Result<std::map<FileKey, uint64_t>> ReadFileSizes(Db& db, int64_t run_id) {
  std::map<FileKey, uint64_t> out;
  SYSPGO_TRY(Visit(db, "", kFileSizesSql, {run_id}, [&](Stmt& s) {
    out[{static_cast<uint64_t>(s.Int(0)), static_cast<uint64_t>(s.Int(1))}] = static_cast<uint64_t>(s.Int(2));
  }));
  return out;
}

Result<std::set<std::pair<uint32_t, uint32_t>>> ReadBlockDevices(Db& db, int64_t run_id) {
  std::set<std::pair<uint32_t, uint32_t>> out;
  SYSPGO_TRY(Visit(db, "", kBlockDevicesSql, {run_id}, [&](Stmt& s) {
    out.insert({static_cast<uint32_t>(s.Int(0)), static_cast<uint32_t>(s.Int(1))});
  }));
  return out;
}

Result<int64_t> FirstExecTs(Db& db, int64_t run_id, int64_t pid) { return QueryOne(db, kFirstExecSql, {run_id, pid}); }

Status VisitPathWalks(Db& db, int64_t run_id, int64_t since, const std::function<void(const PathWalk&)>& fn) {
  return Visit(db, "", kPathWalksSql, {run_id, since},
               [&](Stmt& s) { fn({s.Int(0), s.Text(1), s.Int(2) != 0}); });
}

}  // namespace syspgo::data
