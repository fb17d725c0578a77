//===- tasks.cc - the traced tree's processes and threads ----------------===//
#include "analyze/data/tasks.h"

#include <algorithm>

#include "analyze/data/query.h"

namespace syspgo {
namespace {

// Start order: a reused tid's or pid's lives in the order they were lived,
// and a process's latest name is its last row.
constexpr char kThreadsSql[] = 
    "SELECT tid, pid, comm, start_ts, exit_ts FROM thread WHERE run_id = ?1 ORDER BY start_ts, tid";

constexpr char kProcessesSql[] =
    "SELECT pid, comm, start_ts, ppid, argv FROM process WHERE run_id = ?1 ORDER BY start_ts, pid";

}  // namespace

Result<Tasks> Tasks::Load(Db& db, int64_t run_id) {
  Tasks t;
  const std::string run = " of run " + std::to_string(run_id);
  SYSPGO_TRY(data::Visit(db, "the threads" + run, kThreadsSql, {run_id}, [&](Stmt& s) {
    ThreadRow r{.tid = s.Int(0), .pid = s.Int(1), .comm = s.Text(2), .start_ts = s.Int(3)};
    if (!s.IsNull(4)) r.exit_ts = s.Int(4);
    t.by_tid_[r.tid].push_back(t.threads_.size());
    t.threads_.push_back(std::move(r));
  }));
  SYSPGO_TRY(data::Visit(db, "the processes" + run, kProcessesSql, {run_id}, [&](Stmt& s) {
    t.by_pid_[s.Int(0)].push_back(t.processes_.size());
    t.processes_.push_back(
        {.pid = s.Int(0), .comm = s.Text(1), .start_ts = s.Int(2), .ppid = s.Int(3), .argv = s.Text(4)});
  }));
  return t;
}

const ProcessRow* Tasks::FirstProcess(int64_t pid) const {
  auto it = by_pid_.find(pid);
  return it == by_pid_.end() ? nullptr : &processes_[it->second.front()];
}

const ProcessRow* Tasks::LatestProcess(int64_t pid) const {
  auto it = by_pid_.find(pid);
  return it == by_pid_.end() ? nullptr : &processes_[it->second.back()];
}

const ThreadRow* Tasks::ThreadAt(int64_t tid, int64_t ts) const {
  auto it = by_tid_.find(tid);
  if (it == by_tid_.end()) return nullptr;
  const ThreadRow* life = &threads_[it->second.front()];
  for (size_t i : it->second)
    if (threads_[i].start_ts <= ts) life = &threads_[i];
  return life;
}

std::string Tasks::Name(int64_t tid, int64_t pid, int64_t ts) const {
  if (const ThreadRow* t = ThreadAt(tid, ts)) return t->comm;
  const ProcessRow* p = LatestProcess(pid);
  return p ? p->comm : std::string();
}

std::optional<int64_t> Tasks::FirstExit(int64_t tid) const {
  std::optional<int64_t> first;
  auto it = by_tid_.find(tid);
  if (it == by_tid_.end()) return first;
  for (size_t i : it->second)
    if (const auto& e = threads_[i].exit_ts) first = first ? std::min(*first, *e) : *e;
  return first;
}

int64_t Tasks::LastChange() const {
  int64_t last = 0;
  for (const ThreadRow& t : threads_) last = std::max(last, t.exit_ts.value_or(t.start_ts));
  return last;
}

}  // namespace syspgo
