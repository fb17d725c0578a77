//===- offcpu.cc - the off-CPU intervals of a run, with their wakers -----===//
#include "analyze/data/offcpu.h"

namespace syspgo::data {
namespace {

// The columns of an Interval, in its order.
constexpr char kIntervalsSql[] =
    "SELECT ts, dur, pid, tid, cpu, state, kernel_stack_id, user_stack_id, wake_ts IS NOT NULL, COALESCE(wake_ts, 0), "
    "COALESCE(waker_pid, 0), COALESCE(waker_tid, 0), COALESCE(waker_kernel_stack_id, 0), "
    "COALESCE(waker_user_stack_id, 0), COALESCE(waker_comm, '') "
    "FROM offcpu WHERE run_id = ?1 ORDER BY tid, ts";

constexpr char kFoldSql[] = R"sql(
SELECT o.tid, o.pid, o.user_stack_id, o.kernel_stack_id, o.state = 0, SUM(o.dur), MAX(o.ts)
FROM offcpu AS o
WHERE o.run_id = ?1
GROUP BY o.tid, o.pid, o.user_stack_id, o.kernel_stack_id, o.state = 0
ORDER BY o.tid, o.pid, o.user_stack_id, o.kernel_stack_id, o.state = 0
)sql";

constexpr char kWaitsSql[] = R"sql(
SELECT tid, ts, dur, state, COALESCE(waker_comm, ''), COALESCE(waker_tid, -1)
FROM offcpu
WHERE run_id = ?1
ORDER BY tid, ts
)sql";

constexpr char kByTimeSql[] = R"sql(
SELECT ts, dur, pid, tid, state, cpu, COALESCE(waker_comm, ''), COALESCE(waker_tid, -1), COALESCE(wake_ts, -1)
FROM offcpu
WHERE run_id = ?1
ORDER BY ts, dur DESC
)sql";

}  // namespace

Status VisitIntervals(Db& db, int64_t run_id, const std::function<void(Interval&&)>& fn) {
  return Visit(db, "", kIntervalsSql, {run_id}, [&](Stmt& st) {
    fn(Interval{.ts = st.Int(0), .dur = st.Int(1), .pid = st.Int(2), .tid = st.Int(3), .cpu = st.Int(4),
                .state = st.Int(5), .kstack = st.Int(6), .ustack = st.Int(7), .woken = st.Int(8) != 0,
                .wake_ts = st.Int(9), .waker_pid = st.Int(10), .waker_tid = st.Int(11),
                .waker_kstack = st.Int(12), .waker_ustack = st.Int(13), .waker_comm = st.Text(14)});
  });
}

Status VisitFoldedByStack(Db& db, int64_t run_id, const RowFn& row) { return Visit(db, "", kFoldSql, {run_id}, row); }

Status VisitWaits(Db& db, const std::string& what, int64_t run_id, const RowFn& row) {
  return Visit(db, what, kWaitsSql, {run_id}, row);
}

Result<CachedStmt> OpenIntervalsByTime(Db& db, const std::string& what, int64_t run_id) {
  return Open(db, what, kByTimeSql, {run_id});
}

}  // namespace syspgo::data
