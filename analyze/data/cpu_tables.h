//===- cpu_tables.h - the cpu group's tables of a run, one reader each ---===//
// What the cpu probe group records beside its samples: the mappings of
// every process (to turn a user address into a file offset), the stacks
// (frames as a blob of little-endian 64-bit addresses) and the kernel's
// symbols (kallsyms, stored once per distinct text). Samples, off-CPU
// stacks, reports and exports all read them through here.
#pragma once
#include <cstdint>
#include <functional>
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

// Frame-pointer unwinding goes on past a frame that kept no frame pointer,
// and what it reads there is not a return address: a user stack ends at the
// first address no user mapping can hold (x86-64 puts user space below
// 2^47, 2^56 with five-level paging). Every reader of user stacks cuts
// there, so that the analyses, the profiles and pprof give the same stacks.
constexpr uint64_t kUserAddressLimit = 1ull << 56;

// The frames of stack `id` of the run (none for an unknown id).
Result<std::vector<uint64_t>> ReadStack(Db& db, int64_t run_id, int64_t id);
// The frames of every stack the rows of one table name, by id.
enum class StackTable { kCpuSample, kOffCpu };
Status VisitStacksOf(Db& db, int64_t run_id, StackTable table,
                     const std::function<void(int64_t id, std::vector<uint64_t> frames)>& fn);

// The files the run's processes mapped with a path (the executable and
// interpreter of an exec, which no open names), by (dev, ino) and then
// when the mapping was seen.
struct MappedFile {
  uint64_t dev = 0, ino = 0;
  std::string path;
};
Status VisitMappedFiles(Db& db, int64_t run_id, const std::function<void(const MappedFile&)>& fn);

// The traced threads the cpu group sampled on `cpu` in [from, to) other
// than `but_tid`, the 3 with the most samples: tid, pid, samples.
Status VisitCpuBusy(Db& db, int64_t run_id, int64_t cpu, int64_t from, int64_t to, int64_t but_tid,
                    const std::function<void(Stmt&)>& row);
// The samples of thread `tid` in user mode in [from, to).
Result<int64_t> CountUserSamples(Db& db, int64_t run_id, int64_t tid, int64_t from, int64_t to);
// Every CPU sample of the run, by thread and then time: tid, ts, pid, cpu,
// kernel (1 in kernel code), ip.
Status VisitSamplesByThread(Db& db, int64_t run_id, const std::function<void(Stmt&)>& row);

}  // namespace syspgo
