//===- oncpu.h - long on-CPU syscalls and the CPU samples inside them ----===//
// What the on-CPU stall analysis (analyze/oncpu_stalls.h) reads: the
// syscalls that ran long on a CPU in the kernel (syscall_oncpu, with the
// file of those on a file descriptor from file_io), and the kernel stacks
// the cpu group sampled while a thread was inside one.
#pragma once
#include <cstdint>
#include <functional>

#include "analyze/data/query.h"

namespace syspgo::data {

// Whether the run's database can hold long on-CPU syscalls (schema 6 on).
bool HasOnCpuSyscalls(Db& db);
// The run's long on-CPU syscalls, by thread, then time: ts, dur, oncpu,
// pid, tid, nr, arg1, ret, and from file_io (0 when the call has no row
// there): dev, ino, kind, ret.
Status VisitOnCpuSyscalls(Db& db, int64_t run_id, const RowFn& row);
// The kernel stacks of thread `tid`'s samples in kernel mode in [from, to),
// with their count: kernel_stack_id, samples; and the user stack of one.
Status VisitKernelSamples(Db& db, int64_t run_id, int64_t tid, int64_t from, int64_t to, const RowFn& row);

}  // namespace syspgo::data
