//===- cpu_tables.h - the cpu group's tables of a run, one reader each ---===//
// What the cpu probe group records beside its samples: the mappings of
// every process (to turn a user address into a file offset), the stacks
// (frames as a blob of little-endian 64-bit addresses) and the kernel's
// symbols (kallsyms, stored once per distinct text). Samples, off-CPU
// stacks, reports and exports all read them through here.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

struct MappingRow {
  int64_t ts = 0;  // when the collector first saw the mapping
  uint64_t start = 0, end = 0, file_off = 0;
  std::string path, build_id;  // build_id "" when not read
};

// pid -> its mappings, by start address and then time (a process that
// execs again maps other files at the same addresses).
using MappingsByPid = std::map<int64_t, std::vector<MappingRow>>;
Result<MappingsByPid> ReadMappings(Db& db, int64_t run_id);

// The run's kernel symbols (/proc/kallsyms as the collector read it), or
// nothing when the run stored none.
Result<std::optional<std::string>> ReadKallsyms(Db& db, int64_t run_id);

// The frames of a `stack` row's blob in column `col` of `st`, innermost
// first.
std::vector<uint64_t> StackFrames(Stmt& st, int col);

// (dev, ino, path) of the files the run's processes mapped with a path
// (the executable and interpreter of an exec, which no open names): a
// query to append ORDER BY to or to use as a subquery. ?1 is the run.
inline constexpr char kMappedFilesSql[] =
    "SELECT dev, ino, path FROM mapping WHERE run_id = ?1 AND ino != 0 AND path LIKE '/%'";

}  // namespace syspgo
