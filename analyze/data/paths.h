//===- paths.h - the names of files and syscalls a run recorded ----------===//
// The file table (one path per (dev, ino): the first one seen), the opens
// that say which name an inode had when, the execs and the files they map,
// file sizes, the machine's block devices, and the syscall_name table:
// every pass names files and syscalls through here.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analyze/data/query.h"

namespace syspgo::data {

using FileKey = std::pair<uint64_t, uint64_t>;  // (dev, ino)

// syscall number -> name, of the syscall_name table.
Result<std::map<int64_t, std::string>> ReadSyscallNames(Db& db, const std::string& what = "");
// (dev, ino) -> path, of the run's file table.
Result<std::map<FileKey, std::string>> ReadFileTable(Db& db, int64_t run_id, const std::string& what = "");
// The file table's paths and, for files it lacks, those of the mappings
// the cpu group saw (the executable and interpreter of an exec): the
// least path of each (dev, ino).
Result<std::map<FileKey, std::string>> ReadFileAndMappedPaths(Db& db, int64_t run_id);

// A successful open of a file on a device (ino != 0), with the path the
// program passed.
struct FileOpen {
  uint64_t dev = 0, ino = 0;
  int64_t ts = 0;
  std::string path;
};
// The run's successful opens by (dev, ino) and then time.
Status VisitSuccessfulOpens(Db& db, int64_t run_id, const std::function<void(const FileOpen&)>& fn);

// A file an exec mapped without an open call (the exec_file table): a file
// exec'd, or the ELF interpreter one names, as collect found it.
struct ExecFile {
  std::string filename;     // as exec.filename or PT_INTERP names it
  uint64_t dev = 0, ino = 0;
  std::string path;         // with symbolic links resolved
  std::string interpreter;  // the interpreter it names (PT_INTERP), "" for none
};
// The run's exec files, by filename.
Result<std::vector<ExecFile>> ReadExecFiles(Db& db, int64_t run_id);
// (dev, ino) -> bytes, of the run's file_size table.
Result<std::map<FileKey, uint64_t>> ReadFileSizes(Db& db, int64_t run_id);
// The (major, minor) of each block device the machine had when the run
// started (run_block_device).
Result<std::set<std::pair<uint32_t, uint32_t>>> ReadBlockDevices(Db& db, int64_t run_id);
// When process `pid` first exec'd in the run (0 if it did not).
Result<int64_t> FirstExecTs(Db& db, int64_t run_id, int64_t pid);

// A path the run looked up since `since` (ns): an open or lookup that
// walked the whole path (found it, or failed on a missing, non-directory
// or forbidden name, or readlink on a name that is no link), or an exec.
struct PathWalk {
  int64_t since_ns = 0;  // its ts less `since`, at least 0
  std::string path;
  bool is_exec = false;
};
// By time, then path.
Status VisitPathWalks(Db& db, int64_t run_id, int64_t since, const std::function<void(const PathWalk&)>& fn);

}  // namespace syspgo::data
