//===- file_calls.h - every recorded file syscall as one stream ------------===//
//
// The fileio group records file syscalls in three tables by what they carry:
// file_io (reads, writes, syncs... on an fd), file_open (opens, with the path
// and the fd they returned) and file_lookup (stat, access, readlink and failed
// execs: a path walk without an open). The report, the Perfetto export and
// the stall analysis each read all three as one stream, from the common table
// expression below, so a table the fileio group gains is added here once.
#pragma once
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>

#include "bpf/syscalls.h"

namespace syspgo {

// The file syscalls by what they do (bpf/syscalls.h has the numbers, the
// syscall_name table the names).
inline constexpr int64_t kReadCalls[] = {NR_read, NR_pread64, NR_readv, NR_preadv, NR_preadv2};
inline constexpr int64_t kWriteCalls[] = {NR_write, NR_pwrite64, NR_writev, NR_pwritev, NR_pwritev2};
inline constexpr int64_t kSyncCalls[] = {NR_fsync, NR_fdatasync, NR_sync_file_range};
inline constexpr int64_t kOpenCalls[] = {NR_open, NR_openat, NR_openat2};
inline constexpr int64_t kReadlinkCalls[] = {NR_readlink, NR_readlinkat};

template <size_t N>
bool IsOneOf(const int64_t (&calls)[N], int64_t nr) {
  return std::find(std::begin(calls), std::end(calls), nr) != std::end(calls);
}
inline bool IsReadCall(int64_t nr) { return IsOneOf(kReadCalls, nr); }
inline bool IsWriteCall(int64_t nr) { return IsOneOf(kWriteCalls, nr); }
inline bool IsSyncCall(int64_t nr) { return IsOneOf(kSyncCalls, nr); }
inline bool IsOpenCall(int64_t nr) { return IsOneOf(kOpenCalls, nr); }

// The numbers as an SQL list, for `nr IN (...)`: "0, 17, 19, 295, 327".
template <size_t N>
std::string SqlList(const int64_t (&calls)[N]) {
  std::string out;
  for (int64_t nr : calls) out += (out.empty() ? "" : ", ") + std::to_string(nr);
  return out;
}

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
inline constexpr char kFileCallsCte[] = R"sql(file_calls AS (
  SELECT 0 AS source, ts, dur, pid, tid, nr, ret, fd, dev, ino, kind, pos, req, 0 AS flags, NULL AS path
  FROM file_io WHERE run_id = ?1
  UNION ALL
  SELECT 1, ts, dur, pid, tid, nr, ret, ret, dev, ino, 0, -1, 0, flags, path
  FROM file_open WHERE run_id = ?1
  UNION ALL
  SELECT 2, ts, dur, pid, tid, nr, ret, -1, 0, 0, 0, -1, 0, flags, path
  FROM file_lookup WHERE run_id = ?1
))sql";

}  // namespace syspgo
