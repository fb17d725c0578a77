//===- files.h - per-file I/O summary of a run ---------------------------===//
// What `syspgo analyze DB files` prints: for each file the run touched, its
// reads and writes (ops, bytes), syncs, and the total and worst latency of
// the syscalls on it, most latency first. Reads only the database.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

struct FileStats {
  uint64_t dev = 0, ino = 0;
  std::string path;          // "" if no open of it was seen
  std::string kind;          // file, pipe, socket, chardev, ...
  int64_t reads = 0, read_bytes = 0;
  int64_t writes = 0, write_bytes = 0;
  int64_t syncs = 0;
  int64_t total_ns = 0, worst_ns = 0;
  std::string worst_syscall;
};

struct FilesQuery {
  int64_t run_id = 0;
  bool all_kinds = false;    // include pipes, sockets, devices (default: regular files)
  size_t limit = 0;          // 0 = no limit
};

Result<std::vector<FileStats>> FileSummary(Db& db, const FilesQuery& q);

// "file", "pipe", "socket", ... for the S_IFMT bits of an i_mode ("anon": none).
std::string FileKindName(int64_t mode);

}  // namespace syspgo
