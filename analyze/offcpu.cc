//===- offcpu.cc - off-CPU time as folded stacks for flame graphs --------===//
// Intervals are summed per (thread, stack ids) in SQL; naming then works
// per distinct stack, and lines that name alike (two threads of one name)
// are added together. A line starts with the thread's name at its last
// interval of the stack (analyze/data/tasks.h).
#include "analyze/offcpu.h"

#include <algorithm>
#include <map>

#include "analyze/data/offcpu.h"
#include "analyze/run.h"
#include "analyze/stack_names.h"
#include "analyze/data/tasks.h"
#include "common/util.h"

namespace syspgo {
namespace {

// A frame as folded text: ';' separates frames and a trailing number is
// the weight, so neither may appear inside one.
std::string Clean(std::string f) {
  std::replace(f.begin(), f.end(), ';', ':');
  std::replace(f.begin(), f.end(), '\n', ' ');
  return f.empty() ? "[unknown]" : f;
}

}  // namespace

Result<std::vector<FoldedStack>> FoldedOffCpu(Db& db, int64_t run_id) {
  SYSPGO_TRY(RequireProbeGroup(db, run_id, "sched", "off-CPU data", "sched,cpu"));
  auto names = StackNames::Load(db, run_id);
  if (!names) return names.error();
  auto tasks = Tasks::Load(db, run_id);
  if (!tasks) return tasks.error();
  std::map<std::string, int64_t> ns;  // folded stack -> off-CPU ns
  SYSPGO_TRY(data::VisitFoldedByStack(db, run_id, [&](Stmt& st) {
    int64_t tid = st.Int(0), pid = st.Int(1);
    std::string comm = tasks->Name(tid, pid, st.Int(6));
    std::string line = Clean(comm.empty() ? "tid " + std::to_string(tid) : comm);
    std::vector<std::string> user = (*names)->User(st.Int(2), pid, st.Int(6));
    for (auto it = user.rbegin(); it != user.rend(); ++it) line += ";" + Clean(*it);
    std::vector<std::string> kernel = (*names)->Kernel(st.Int(3));
    for (auto it = kernel.rbegin(); it != kernel.rend(); ++it) line += ";" + Clean(*it);
    if (st.Int(4)) line += ";[runnable]";
    ns[line] += st.Int(5);
  }));
  std::vector<FoldedStack> out;
  for (auto& [stack, total] : ns) {
    int64_t us = (total + 500) / 1000;
    if (us > 0) out.push_back({stack, us});
  }
  std::sort(out.begin(), out.end(),
            [](const FoldedStack& a, const FoldedStack& b) { return a.us != b.us ? a.us > b.us : a.stack < b.stack; });
  return out;
}

Result<std::string> OffCpuReport(Db& db, const RunInfo& run, size_t limit, bool json) {
  auto folded = FoldedOffCpu(db, run.id);
  if (!folded) return folded.error();
  if (limit && folded->size() > limit) folded->resize(limit);
  if (json) {
    Table t({{"stack", "stack", Table::Align::kLeft}, {"us", "us", Table::Align::kRight, true}});
    for (const FoldedStack& f : *folded) t.AddRow({f.stack, std::to_string(f.us)});
    return t.Json();
  }
  // Nothing but folded lines: the output goes straight to flamegraph.pl,
  // or to a terminal, so task names and frames are shown TerminalSafe.
  std::string out;
  for (const FoldedStack& f : *folded) out += TerminalSafe(f.stack) + " " + std::to_string(f.us) + "\n";
  return out;
}

}  // namespace syspgo
