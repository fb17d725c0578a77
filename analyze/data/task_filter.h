//===- task_filter.h - reading one run as if only some processes ran -----===//
// `analyze`, `report` and `export` with --pid, --cgroup, --comm or
// --container read a run through this filter: every table with a pid (or,
// lacking one, a tid) column is shadowed, for this connection only, by a
// temporary view of the same name holding the kept processes' rows.
// SQLite resolves an unqualified name in the temp schema first, so every
// statement of the data layer reads the filtered rows without a change,
// and each analysis answers for the kept processes alone. A page-cache or
// fault row is kept by the task current when it happened: pages another
// task evicted are that task's.
#pragma once
#include <cstdint>
#include <string>

#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo::data {

struct TaskFilter {
  int64_t pid = 0;        // --pid: this process alone (0: any)
  std::string cgroup;     // --cgroup: processes in this cgroup or below it: its path relative to the
                          // hierarchy's root, or the directory under /sys/fs/cgroup
  std::string comm;       // --comm: processes of this name
  std::string container;  // --container: processes of the container whose id starts with this
  bool empty() const { return !pid && cgroup.empty() && comm.empty() && container.empty(); }
  std::string Describe() const;  // "pid 12, cgroup /a" ...
};

// Applies `f` to every later read of run `run_id` through `db`; returns
// how many processes it keeps. An error when it keeps none, naming what
// the run's processes are (and, for --cgroup and --container on a run
// recorded before processes carried their cgroup, saying so).
Result<int64_t> ApplyTaskFilter(Db& db, int64_t run_id, const TaskFilter& f);

// Whether a filter is in force on `db` (its views hide the tables' indices
// from NOT INDEXED hints: WithRunTables leaves them out).
bool TaskFilterApplied(Db& db);

}  // namespace syspgo::data
