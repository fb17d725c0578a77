//===- offcpu.h - the off-CPU intervals of a run, with their wakers ------===//
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "analyze/data/query.h"
#include "analyze/wait_interval.h"

namespace syspgo::data {

// Every off-CPU interval with its waker (the Interval's recorded fields;
// call and call_kind are left for the caller), by thread, then time.
Status VisitIntervals(Db& db, int64_t run_id, const std::function<void(Interval&&)>& fn);
// Off-CPU time folded by thread and stack, as `analyze offcpu` prints it:
// tid, pid, user stack, kernel stack, runnable (preempted, 1/0), total ns,
// latest ts; by those columns.
Status VisitFoldedByStack(Db& db, int64_t run_id, const RowFn& row);
// Each thread's intervals by thread, then time: tid, ts, dur, state, waker
// comm ('' if none), waker tid (-1 no wakeup seen, 0 an interrupt).
Status VisitWaits(Db& db, const std::string& what, int64_t run_id, const RowFn& row);
// Every interval by time, longer first at equal ts: ts, dur, pid, tid,
// state, cpu, waker comm, waker tid (-1 none seen), wake ts (-1 none).
// Stepped by the caller.
Result<CachedStmt> OpenIntervalsByTime(Db& db, const std::string& what, int64_t run_id);

}  // namespace syspgo::data
