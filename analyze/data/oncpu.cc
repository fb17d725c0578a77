//===- oncpu.cc - long on-CPU syscalls and the CPU samples inside them ---===//
#include "analyze/data/oncpu.h"

namespace syspgo::data {
namespace {

// A call on a file descriptor has a file_io row of the same thread and
// entry time (bpf/fileio.bpf.c sends both from one sys_exit).
constexpr char kOnCpuSyscallsSql[] =
    "SELECT s.ts, s.dur, s.oncpu, s.pid, s.tid, s.nr, s.arg1, s.ret, COALESCE(f.dev, 0), COALESCE(f.ino, 0), "
    "COALESCE(f.kind, 0), COALESCE(f.ret, 0) FROM syscall_oncpu AS s LEFT JOIN file_io AS f "
    "ON f.run_id = s.run_id AND f.tid = s.tid AND f.ts = s.ts AND f.nr = s.nr "
    "WHERE s.run_id = ?1 ORDER BY s.tid, s.ts";
constexpr char kKernelSamplesSql[] =
    "SELECT kernel_stack_id, COUNT(*), MIN(user_stack_id) FROM cpu_sample "
    "WHERE run_id = ?1 AND ts >= ?2 AND ts < ?3 AND tid = ?4 AND kernel = 1 "
    "GROUP BY kernel_stack_id ORDER BY kernel_stack_id";

}  // namespace

bool HasOnCpuSyscalls(Db& db) { return HasTable(db, "syscall_oncpu"); }

Status VisitOnCpuSyscalls(Db& db, int64_t run_id, const RowFn& row) {
  return Visit(db, "long on-CPU syscalls (syscall_oncpu)", kOnCpuSyscallsSql, {run_id}, row);
}

Status VisitKernelSamples(Db& db, int64_t run_id, int64_t tid, int64_t from, int64_t to, const RowFn& row) {
  return Visit(db, "CPU samples (cpu_sample)", kKernelSamplesSql, {run_id, from, to, tid}, row);
}

}  // namespace syspgo::data
