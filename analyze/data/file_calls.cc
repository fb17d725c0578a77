//===- file_calls.cc - the file syscalls of a run, as rows ---------------===//
#include "analyze/data/file_calls.h"

#include "analyze/file_calls.h"

namespace syspgo::data {
namespace {

// "WITH " + kFileCallsCte + " SELECT ... FROM file_calls ...", with the run
// id bound to ?1. Columns:
//   source   0 file_io, 1 file_open, 2 file_lookup
//   ts, dur, pid, tid, nr, ret   as recorded
//   fd       file_io: its fd; file_open: the fd it returned (its ret); -1 for a lookup
//   dev, ino the file; 0, 0 for a lookup
//   kind     file_io: the file's type bits (S_IFMT); 0 for opens and lookups (not recorded)
//   pos, req file_io's; -1 and 0 otherwise
//   flags    an open's or lookup's flags; 0 for file_io
//   path     the path an open or lookup named; NULL for file_io (see the file table)
constexpr char kFileCallsCte[] = R"sql(file_calls AS (
  SELECT 0 AS source, ts, dur, pid, tid, nr, ret, fd, dev, ino, kind, pos, req, 0 AS flags, NULL AS path
  FROM file_io WHERE run_id = ?1
  UNION ALL
  SELECT 1, ts, dur, pid, tid, nr, ret, ret, dev, ino, 0, -1, 0, flags, path
  FROM file_open WHERE run_id = ?1
  UNION ALL
  SELECT 2, ts, dur, pid, tid, nr, ret, -1, 0, 0, 0, -1, 0, flags, path
  FROM file_lookup WHERE run_id = ?1
))sql";

// A path lookup (stat...) has its path.
const std::string kCallsByTimeSql = std::string("WITH ") + kFileCallsCte + R"sql(
SELECT ts, dur, pid, tid, nr, fd, dev, ino, kind, pos, ret, flags, CASE WHEN source = 2 THEN path ELSE '' END
FROM file_calls
ORDER BY ts, tid
)sql";

// An open's file counts as a regular one (S_IFREG), which is what the
// report's page shows it as. Syscall names and file paths are looked up in
// memory, not joined here: the sort then carries no text, which takes a
// good part of the query's time off.
const std::string kCallsByThreadSql = std::string("WITH ") + kFileCallsCte + R"sql(
SELECT c.tid, c.ts, c.dur, c.nr, c.fd, c.dev, c.ino,
       CASE WHEN c.source = 1 THEN )sql" + std::to_string(SYSPGO_S_IFREG) + R"sql( ELSE c.kind END, c.ret, c.pos, c.req, c.path
FROM file_calls c
ORDER BY c.tid, c.ts
)sql";

const std::string kCallsForTraceSql = std::string("WITH ") + kFileCallsCte + R"sql(
SELECT c.ts, c.dur, c.pid, c.tid, COALESCE(n.name, 'syscall ' || c.nr), c.fd,
       CASE WHEN c.source = 0 THEN COALESCE(f.path, '') ELSE c.path END, c.ret, c.pos, c.req, c.source, c.flags
FROM file_calls c
LEFT JOIN syscall_name n ON n.nr = c.nr
LEFT JOIN file f ON c.source = 0 AND f.run_id = ?1 AND f.dev = c.dev AND f.ino = c.ino
ORDER BY c.ts, c.dur DESC
)sql";

constexpr char kThreadFileIoSql[] =
    "SELECT ts, nr, fd, dev, ino, kind FROM file_io WHERE run_id = ?1 AND tid = ?2 AND ts >= ?3 AND ts < ?4 "
    "ORDER BY ts";

// kind is the file's i_mode type bits: regular files and block devices unless ?3.
const std::string kSlowSql = R"sql(
SELECT io.ts, io.pid, io.tid, io.nr, COALESCE(n.name, 'syscall ' || io.nr),
       io.dev, io.ino, io.kind, io.pos, io.ret, io.dur
FROM file_io AS io
LEFT JOIN syscall_name AS n ON n.nr = io.nr
WHERE io.run_id = ?1 AND io.dur >= ?2
  AND io.nr IN ()sql" + SqlList(kReadCalls) + ", " + SqlList(kWriteCalls) + ", " + SqlList(kSyncCalls) + R"sql()
  AND (?3 OR (io.kind & )sql" + std::to_string(SYSPGO_S_IFMT) + ") IN (" + std::to_string(SYSPGO_S_IFREG) + ", " +
                              std::to_string(SYSPGO_S_IFBLK) + R"sql())
ORDER BY io.ts, io.tid
)sql";

// Summed per file by the caller in one pass in a hash map: SQL's GROUP BY
// sorted every call (twice: once more for each file's slowest call), most
// of `analyze files` on large runs. file_io has no index, so its
// rows come in the order they were written (rowid) at no cost.
const std::string kIoCallsSql = R"sql(
SELECT dev, ino, kind, nr, 1, MAX(ret, 0), dur, dur
FROM file_io
WHERE run_id = ?1 AND dev != 0 AND (?2 OR kind = )sql" + std::to_string(SYSPGO_S_IFREG) + R"sql()
ORDER BY rowid
)sql";
const std::string kIoTotalsSql = R"sql(
SELECT dev, ino, kind, nr, calls, bytes, total_ns, max_ns
FROM file_io_total
WHERE run_id = ?1 AND dev != 0 AND (?2 OR kind = )sql" + std::to_string(SYSPGO_S_IFREG) + R"sql()
ORDER BY first_ts
)sql";

// Threads seen in events but not in the thread table (attached to late, or
// the proc group lost their fork).
const std::string kEventThreadsSql = std::string("WITH ") + kFileCallsCte + R"sql(
SELECT tid, pid, MIN(ts) FROM (
  SELECT tid, pid, ts FROM offcpu WHERE run_id = ?1
  UNION ALL SELECT tid, pid, ts FROM file_calls
)
GROUP BY tid, pid
ORDER BY tid, pid
)sql";

const std::string kEventTasksSql = std::string("WITH ") + kFileCallsCte + R"sql(
SELECT pid, tid, MIN(comm) FROM (
  SELECT pid, tid, '' AS comm FROM file_calls
  UNION ALL SELECT pid, tid, '' FROM offcpu WHERE run_id = ?1
)
GROUP BY pid, tid
ORDER BY pid, tid
)sql";

}  // namespace

Status VisitFileCallsByTime(Db& db, int64_t run_id, const RowFn& row) {
  return Visit(db, "", kCallsByTimeSql, {run_id}, row);
}

Status VisitFileCallsByThread(Db& db, const std::string& what, int64_t run_id, const RowFn& row) {
  return Visit(db, what, kCallsByThreadSql, {run_id}, row);
}

Result<CachedStmt> OpenFileCallsByTime(Db& db, const std::string& what, int64_t run_id) {
  return Open(db, what, kCallsForTraceSql, {run_id});
}

Status VisitThreadFileIo(Db& db, int64_t run_id, int64_t tid, int64_t from, int64_t to, const RowFn& row) {
  return Visit(db, "", kThreadFileIoSql, {run_id, tid, from, to}, row);
}

Status VisitSlowFileIo(Db& db, int64_t run_id, int64_t slower_ns, bool all_kinds,
                       const std::function<bool(Stmt&)>& row) {
  return VisitWhile(db, "", kSlowSql, {run_id, slower_ns, all_kinds}, row);
}

Status VisitFileIoSums(Db& db, int64_t run_id, bool lean, bool all_kinds, const RowFn& row) {
  return Visit(db, "", lean ? kIoTotalsSql : kIoCallsSql, {run_id, all_kinds}, row);
}

Status VisitEventThreads(Db& db, const std::string& what, int64_t run_id, const RowFn& row) {
  return Visit(db, what, kEventThreadsSql, {run_id}, row);
}

Status VisitEventTasks(Db& db, const std::string& what, int64_t run_id, const RowFn& row) {
  return Visit(db, what, kEventTasksSql, {run_id}, row);
}

}  // namespace syspgo::data
