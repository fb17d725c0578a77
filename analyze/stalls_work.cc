//===- stalls_work.cc - stalls that come down to work, and who stalled ---===//
#include "analyze/stalls_work.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "analyze/finding_print.h"
#include "common/util.h"

namespace syspgo {
namespace {

constexpr size_t kMaxLinks = 1000;  // wakeups kept per finding for arrows, as stalls.cc keeps them
constexpr size_t kMaxIds = 8;       // pids or tids a fact lists
constexpr size_t kMaxNames = 3;     // programs a title names

std::string Ids(const std::vector<int64_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size() && i < kMaxIds; ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  return ids.size() > kMaxIds ? out + ", ..." : out;
}

// "a", "a and b", "a, b and c".
std::string Listed(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + v[i];
  return out;
}

std::string Process(const Tasks& tasks, int64_t pid, int64_t command_pid) {
  const ProcessRow* p = tasks.LatestProcess(pid);
  return (p ? p->comm + " " : std::string()) + "(pid " + std::to_string(pid) +
         (pid == command_pid ? ", the command" : "") + ")";
}

// Takes `other` into `primary`: its stalls, time and wakeups, listed as a
// stall too.
void Absorb(FoundStall& primary, const FoundStall& other) {
  Finding& f = primary.first;
  StallDetail& d = primary.second;
  const Finding& o = other.first;
  std::string line = o.title + " (" + std::to_string(o.count) + "x, " + FormatNs(static_cast<uint64_t>(o.total_ns)) +
                     ")";
  f.facts.emplace_back("stalls too", line);
  d.stalls_too.push_back(line);
  d.stalls_too_chains.push_back(other.second.roots.front().hops);
  f.count += o.count;
  f.worst_ns = std::max(f.worst_ns, o.worst_ns);
  f.occurrences.insert(f.occurrences.end(), o.occurrences.begin(), o.occurrences.end());
  for (const FindingLink& l : o.links)
    if (f.links.size() < kMaxLinks) f.links.push_back(l);
  RootShare& root = d.roots.front();
  const RootShare& theirs = other.second.roots.front();
  root.ns += theirs.ns;
  root.spans.insert(root.spans.end(), theirs.spans.begin(), theirs.spans.end());
}

}  // namespace

int64_t CoveredNs(const std::vector<Occurrence>& occ) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const Occurrence& o : occ) spans.emplace_back(o.ts, o.ts + o.dur);
  std::sort(spans.begin(), spans.end());
  int64_t covered = 0, end = INT64_MIN;
  for (auto [a, b] : spans) {
    if (b <= end) continue;
    covered += b - std::max(a, end);
    end = b;
  }
  return covered;
}

// A waiter or worker by name and, where processes share a name, by role:
// "make (the command)", "gcc (41 processes)".
std::string Role(const std::string& comm, const std::vector<int64_t>& pids, const std::vector<int64_t>& tids,
                 bool main_thread, int64_t command_pid) {
  if (pids.size() > 1) return comm + " (" + std::to_string(pids.size()) + " processes)";
  // Threads other than a process's first: a queue's feeder, a loader.
  if (!main_thread && !tids.empty())
    return comm + (tids.size() > 1 ? " (" + std::to_string(tids.size()) + " threads" : " (thread") +
           (!pids.empty() && pids.front() == command_pid ? " of the command)" : ")");
  if (!pids.empty() && pids.front() == command_pid) return comm + " (the command)";
  return pids.empty() ? comm : comm + " (process " + std::to_string(pids.front()) + ")";
}

std::vector<FoundStall> MergeByWorkRoot(std::vector<FoundStall> found, int64_t wall_ns, int64_t command_pid) {
  // Work of one program or of several (the compilers, the linker and the
  // archiver of one build) is one cause: the waiters wait for CPU work.
  std::optional<size_t> first;        // the finding that takes the others in
  std::vector<std::string> waiters;   // the task names that wait
  std::map<std::string, int64_t> by;  // the task names that work -> their time
  std::vector<bool> merged(found.size());
  for (size_t i = 0; i < found.size(); ++i) {
    const StallDetail& d = found[i].second;
    if (d.roots.empty() || d.roots.front().root.kind != PathRoot::Kind::kWork) continue;
    std::string waiter = Role(d.comm, d.pids, d.tids, d.main_thread, command_pid);
    if (std::find(waiters.begin(), waiters.end(), waiter) == waiters.end()) waiters.push_back(waiter);
    const PathRoot& root = d.roots.front().root;
    by[root.comm + (root.pid == command_pid ? " (the command)" : "")] += d.roots.front().ns;
    if (!first) {
      first = i;
      continue;
    }
    Absorb(found[*first], found[i]);
    merged[i] = true;
  }
  std::vector<std::pair<std::string, int64_t>> workers(by.begin(), by.end());
  std::stable_sort(workers.begin(), workers.end(), [](auto& a, auto& b) { return a.second > b.second; });
  std::vector<FoundStall> out;
  for (size_t i = 0; i < found.size(); ++i) {
    if (merged[i]) continue;
    Finding& f = found[i].first;
    if (first == i && !found[i].second.stalls_too.empty()) {
      std::vector<std::string> names;
      for (size_t k = 0; k < workers.size() && k < kMaxNames; ++k) names.push_back(workers[k].first);
      if (workers.size() > kMaxNames) names.push_back("others");
      std::string work = workers.size() == 1 ? names.front() + "'s work" : "the work of " + Listed(names);
      std::vector<std::string> who(waiters.begin(), waiters.begin() + std::min(waiters.size(), kMaxNames));
      if (waiters.size() > kMaxNames) who.push_back("others");
      f.title = Listed(who) + (waiters.size() == 1 ? " waits" : " wait") + " for " + work + " on a CPU";
      f.fix = "The waits of all these stalls come down to " + work +
              " on a CPU, so that work bounds them: make it cheaper (the functions under \"work\" are where its time "
              "goes), or spread it over more CPUs if some stay idle.";
      std::sort(f.occurrences.begin(), f.occurrences.end(),
                [](const Occurrence& a, const Occurrence& b) { return a.ts < b.ts; });
      std::sort(f.links.begin(), f.links.end(), [](const FindingLink& a, const FindingLink& b) { return a.ts < b.ts; });
    }
    // Stalls of several threads at once are one stretch of the run's time.
    f.total_ns = CoveredNs(f.occurrences);
    f.share = wall_ns > 0 ? std::min(1.0, static_cast<double>(f.total_ns) / static_cast<double>(wall_ns)) : 0;
    out.push_back(std::move(found[i]));
  }
  return out;
}

void AddWorkFacts(Finding& f, const RootShare& root, int64_t cpu_ns, int64_t wall_ns) {
  if (root.root.kind != PathRoot::Kind::kWork || root.work.empty()) return;
  if (std::string fn = WorkFunctionsText(root.work); !fn.empty()) f.facts.emplace_back("work", fn);
  if (std::string procs = WorkProcessesText(root.work); !procs.empty())
    f.facts.emplace_back("work by process", procs + " of the time waited on it");
  if (cpu_ns > 0 && wall_ns > 0) {
    char avg[32];
    snprintf(avg, sizeof avg, "%.2f", static_cast<double>(cpu_ns) / static_cast<double>(wall_ns));
    f.facts.emplace_back("CPU", root.root.comm + " ran " + FormatNs(static_cast<uint64_t>(cpu_ns)) +
                                    " on CPUs in the run's " + FormatNs(static_cast<uint64_t>(wall_ns)) + ": " + avg +
                                    " CPUs on average (from its samples)");
  }
}

StallWho WhoStalled(const std::string& comm, const std::vector<int64_t>& pids, const std::vector<int64_t>& tids,
                    bool main_thread, int64_t command_pid, const Tasks& tasks) {
  StallWho w;
  if (pids.size() > 1) {
    // Processes of one name: a pool of workers, the compilers of a build.
    std::set<int64_t> parents;
    for (int64_t pid : pids) {
      const ProcessRow* p = tasks.LatestProcess(pid);
      parents.insert(p ? p->ppid : 0);
    }
    std::string of = parents.size() == 1 && *parents.begin() > 0
                         ? ", children of " + Process(tasks, *parents.begin(), command_pid)
                         : "";
    w.title = comm + " (" + std::to_string(pids.size()) + " processes)";
    w.label = "processes";
    w.text = comm + ", " + std::to_string(pids.size()) + " processes: pids " + Ids(pids) + of +
             (tids.size() > pids.size() ? "; " + std::to_string(tids.size()) + " threads" : "");
    return w;
  }
  const int64_t pid = pids.empty() ? 0 : pids.front();
  const bool command = pid == command_pid;
  w.label = "thread";
  w.title = comm + (main_thread ? " (main thread)" : " (thread)");
  if (!command && main_thread) w.title = comm + " (process " + std::to_string(pid) + ")";
  std::string where;
  if (const ProcessRow* p = tasks.LatestProcess(pid); !command && p && p->ppid > 0)
    where = ", a child of " + Process(tasks, p->ppid, command_pid);
  if (tids.size() == 1) {
    w.text = comm + (main_thread ? ", the main thread" : "") + " (pid " + std::to_string(pid) + ", tid " +
             std::to_string(tids.front()) + ")" + where;
  } else {
    w.text = comm + " (" + std::to_string(tids.size()) + " threads: tids " + Ids(tids) + ")" + where;
  }
  return w;
}

}  // namespace syspgo
