//===- file_calls.h - the file syscalls of a run, as rows ----------------===//
// The fileio group records file syscalls in three tables by what they carry:
// file_io (reads, writes, syncs... on an fd), file_open (opens, with the path
// and the fd they returned) and file_lookup (stat, access, readlink and failed
// execs: a path walk without an open). The report, the Perfetto export and
// the stall analysis each read all three as one stream (file_calls.cc's
// common table expression), so a table the fileio group gains is added
// there once. Each reader's columns are listed at its statement.
#pragma once
#include <cstdint>
#include <string>

#include "analyze/data/query.h"

namespace syspgo::data {

// Every file syscall of the run in the order they began (ts, tid): ts, dur,
// pid, tid, nr, fd, dev, ino, kind, pos, ret, flags, and a lookup's path
// ('' for the rest).
Status VisitFileCallsByTime(Db& db, int64_t run_id, const RowFn& row);
// Every file syscall by thread, then time: tid, ts, dur, nr, fd, dev, ino,
// kind (S_IFREG for an open), ret, pos, req, path (NULL for file_io).
Status VisitFileCallsByThread(Db& db, const std::string& what, int64_t run_id, const RowFn& row);
// Every file syscall in time order, longer first at equal ts: ts, dur, pid,
// tid, syscall name, fd, path, ret, pos, req, source (0 file_io, 1 open,
// 2 lookup), flags. Stepped by the caller.
Result<CachedStmt> OpenFileCallsByTime(Db& db, const std::string& what, int64_t run_id);
// One thread's file_io calls in [from, to), by time: ts, nr, fd, dev, ino, kind.
Status VisitThreadFileIo(Db& db, int64_t run_id, int64_t tid, int64_t from, int64_t to, const RowFn& row);
// Reads, writes and syncs of `slower_ns` or more, by time then thread, of
// regular files and block devices unless `all_kinds`: ts, pid, tid, nr,
// syscall name, dev, ino, kind, pos, ret, dur. Until row returns false.
Status VisitSlowFileIo(Db& db, int64_t run_id, int64_t slower_ns, bool all_kinds,
                       const std::function<bool(Stmt&)>& row);
// Per-file sums of file_io of files on a device (dev != 0), regular files
// unless `all_kinds`: dev, ino, kind, nr, calls, bytes, total ns, slowest
// ns. `lean`: from file_io_total (a row per file and syscall, by first
// call); else a row per call, in the order they were recorded.
Status VisitFileIoSums(Db& db, int64_t run_id, bool lean, bool all_kinds, const RowFn& row);
// Threads with off-CPU intervals or file syscalls, by (tid, pid): tid,
// pid, their first event's ts.
Status VisitEventThreads(Db& db, const std::string& what, int64_t run_id, const RowFn& row);
// Tasks with file syscalls or off-CPU intervals, by (pid, tid): pid, tid, ''.
Status VisitEventTasks(Db& db, const std::string& what, int64_t run_id, const RowFn& row);

}  // namespace syspgo::data
