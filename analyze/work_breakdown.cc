//===- work_breakdown.cc - where the time a task ran on a CPU went --------===//
// The run's samples are read once, by thread and time; a breakdown picks
// those inside its spans by binary search. Each distinct (process, mode,
// address) is named once: a sample in user code by the ELF symbol of the
// binary mapped there then, in kernel code by kallsyms. A function without
// a symbol (a stripped executable) counts as its binary's code, so its
// time still shows, under the binary's name.
#include "analyze/work_breakdown.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <tuple>

#include "analyze/data/cpu_tables.h"
#include "analyze/finding_print.h"
#include "analyze/stack_names.h"
#include "common/util.h"

namespace syspgo {
namespace {

constexpr size_t kTopFunctions = 5;  // functions a text line names
constexpr size_t kTopProcesses = 6;  // and processes
constexpr size_t kTopBinaries = 4;

// What a compiler, assembler or interpreter is given to work on.
constexpr const char* kSourceSuffixes[] = {".c",   ".cc", ".cpp", ".cxx", ".C",   ".c++", ".m",  ".s",
                                           ".S",   ".f",  ".f90", ".rs",  ".go",  ".py",  ".java", ".ll"};

std::string Share(int64_t part, int64_t all) {
  return all > 0 ? FormatShare(static_cast<double>(part) / static_cast<double>(all)) : "0%";
}

std::string FunctionName(const WorkFunction& f) {
  if (f.function.empty()) return f.binary + " (code without symbols)";
  // A stripped binary's function, named by its start: the binary is in the name.
  if (f.function.starts_with(f.binary + "+0x")) return f.function + " (no symbol)";
  return f.function + " (" + f.binary + ")";
}

// Spans of one thread that overlap (the same work reached through two
// waits) merged, so that no time counts twice.
std::vector<WorkSpan> Disjoint(std::vector<WorkSpan> spans) {
  std::sort(spans.begin(), spans.end(),
            [](const WorkSpan& a, const WorkSpan& b) { return std::tie(a.tid, a.from) < std::tie(b.tid, b.from); });
  std::vector<WorkSpan> out;
  for (const WorkSpan& s : spans) {
    if (s.to <= s.from) continue;
    if (!out.empty() && out.back().tid == s.tid && s.from <= out.back().to)
      out.back().to = std::max(out.back().to, s.to);
    else
      out.push_back(s);
  }
  return out;
}

}  // namespace

std::string ArgvInputs(const std::string& argv) {
  std::vector<std::string> out;
  bool output = false;  // the argument after -o is what it writes, not what it reads
  for (const std::string& arg : Split(argv, ' ')) {
    bool skip = output;
    output = arg == "-o";
    if (skip || arg.empty() || arg[0] == '-') continue;
    bool source = std::any_of(std::begin(kSourceSuffixes), std::end(kSourceSuffixes),
                              [&](const char* s) { return arg.ends_with(s) && arg.size() > strlen(s); });
    if (source && std::find(out.begin(), out.end(), arg) == out.end()) out.push_back(arg);
  }
  std::string joined;
  for (const std::string& s : out) joined += (joined.empty() ? "" : " ") + s;
  return joined;
}

Result<std::unique_ptr<WorkSamples>> WorkSamples::Load(Db& db, int64_t run_id, StackNames& names,
                                                       const Tasks& tasks) {
  std::unique_ptr<WorkSamples> w(new WorkSamples(names, tasks));
  SYSPGO_TRY(VisitSamplesByThread(db, run_id, [&](Stmt& st) {
    w->by_tid_[st.Int(0)].push_back({st.Int(1), st.Int(2), st.Int(4) != 0, static_cast<uint64_t>(st.Int(5))});
  }));
  return w;
}

WorkFunction WorkSamples::Name(const Sample& s) {
  auto [it, fresh] = named_.try_emplace({s.pid, s.kernel, s.ip});
  if (!fresh) return it->second;
  WorkFunction& f = it->second;
  if (s.kernel) {
    f.function = names_.KernelFunction(s.ip);
    f.binary = "kernel";
    // "name [module]": the module is the binary.
    if (size_t bracket = f.function.find(" ["); bracket != std::string::npos) {
      f.binary = f.function.substr(bracket + 2, f.function.size() - bracket - 3);
      f.function.resize(bracket);
    }
  } else {
    StackNames::FunctionAt at = names_.UserFunction(s.ip, s.pid, s.ts);
    f.function = at.function;
    f.binary = at.binary.empty() ? "unmapped code" : at.binary;
  }
  return f;
}

void WorkSamples::AddProcesses(const std::vector<WorkSpan>& spans, WorkBreakdown& w) const {
  std::map<int64_t, int64_t> by_pid;
  for (const WorkSpan& s : spans) by_pid[s.pid] += s.to - s.from;
  w.process_count = static_cast<int64_t>(by_pid.size());
  if (by_pid.size() < 2) return;
  std::map<std::string, int64_t> by_comm;
  for (auto [pid, ns] : by_pid) {
    const ProcessRow* p = tasks_.LatestProcess(pid);
    by_comm[p ? p->comm : "pid " + std::to_string(pid)] += ns;
  }
  if (by_comm.size() > 1) {
    w.programs.assign(by_comm.begin(), by_comm.end());
    std::stable_sort(w.programs.begin(), w.programs.end(), [](auto& a, auto& b) { return a.second > b.second; });
  }
  // Processes that worked on the same input (a file compiled twice, as a
  // static and a shared object) are one row.
  std::map<std::string, WorkProcess> rows;
  for (auto [pid, ns] : by_pid) {
    const ProcessRow* p = tasks_.LatestProcess(pid);
    std::string comm = p ? p->comm : "pid " + std::to_string(pid);
    std::string input = p ? ArgvInputs(p->argv) : "";
    // A fork that did not exec (a DataLoader's worker) has its parent's
    // argv: it is a process of its own, not more of the same input.
    const ProcessRow* parent = p ? tasks_.LatestProcess(p->ppid) : nullptr;
    if (parent && parent->argv == p->argv) input.clear();
    std::string key = input.empty() ? comm + " (pid " + std::to_string(pid) + ")" : input;
    WorkProcess& r = rows[key];
    if (r.ns == 0) r = {pid, comm, input, 0};
    r.ns += ns;
  }
  for (auto& [key, r] : rows) w.processes.push_back(std::move(r));
  std::stable_sort(w.processes.begin(), w.processes.end(),
                   [](const WorkProcess& a, const WorkProcess& b) { return a.ns > b.ns; });
}

WorkBreakdown WorkSamples::Of(std::vector<WorkSpan> spans) {
  WorkBreakdown w;
  spans = Disjoint(std::move(spans));
  std::map<std::pair<std::string, std::string>, int64_t> by_function;
  std::map<std::string, int64_t> by_binary;
  for (const WorkSpan& span : spans) {
    w.ns += span.to - span.from;
    auto t = by_tid_.find(span.tid);
    if (t == by_tid_.end()) continue;
    auto it = std::lower_bound(t->second.begin(), t->second.end(), span.from,
                               [](const Sample& s, int64_t ts) { return s.ts < ts; });
    for (; it != t->second.end() && it->ts < span.to; ++it) {
      WorkFunction f = Name(*it);
      ++w.samples;
      w.kernel_samples += it->kernel;
      ++by_function[{f.function, f.binary}];
      ++by_binary[f.binary];
    }
  }
  for (auto& [key, n] : by_function) w.functions.push_back({key.first, key.second, n});
  std::stable_sort(w.functions.begin(), w.functions.end(),
                   [](const WorkFunction& a, const WorkFunction& b) { return a.samples > b.samples; });
  if (w.functions.size() > kTopFunctions * 2) w.functions.resize(kTopFunctions * 2);
  w.binaries.assign(by_binary.begin(), by_binary.end());
  std::stable_sort(w.binaries.begin(), w.binaries.end(), [](auto& a, auto& b) { return a.second > b.second; });
  AddProcesses(spans, w);
  return w;
}

int64_t WorkSamples::CountNamed(const std::string& comm) const {
  int64_t n = 0;
  for (const auto& [tid, samples] : by_tid_)
    for (const Sample& s : samples) n += tasks_.Name(tid, s.pid, s.ts) == comm;
  return n;
}

std::string WorkFunctionsText(const WorkBreakdown& w) {
  if (w.samples == 0) return "";
  std::vector<std::string> parts;
  for (size_t i = 0; i < w.functions.size() && i < kTopFunctions; ++i)
    parts.push_back(Share(w.functions[i].samples, w.samples) + " " + FunctionName(w.functions[i]));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  if (w.binaries.size() > 1) {
    std::vector<std::string> bins;
    for (size_t i = 0; i < w.binaries.size() && i < kTopBinaries; ++i)
      bins.push_back(w.binaries[i].first + " " + Share(w.binaries[i].second, w.samples));
    out += "; by binary: ";
    for (size_t i = 0; i < bins.size(); ++i) out += (i ? ", " : "") + bins[i];
  }
  return out + "; in the kernel " + Share(w.kernel_samples, w.samples) + " (" + std::to_string(w.samples) +
         " CPU samples)";
}

std::string WorkProcessesText(const WorkBreakdown& w) {
  if (w.processes.empty()) return "";
  std::string out = std::to_string(w.process_count) + " processes";
  for (size_t i = 0; i < w.programs.size() && i < kTopProcesses; ++i)
    out += (i ? ", " : " (") + w.programs[i].first + " " + Share(w.programs[i].second, w.ns) +
           (i + 1 == w.programs.size() || i + 1 == kTopProcesses ? ")" : "");
  for (size_t i = 0; i < w.processes.size() && i < kTopProcesses; ++i) {
    const WorkProcess& p = w.processes[i];
    std::string name = p.input.empty() ? p.comm + " (pid " + std::to_string(p.pid) + ")" : p.comm + " " + p.input;
    out += (i ? ", " : "; ") + name + " " + Share(p.ns, w.ns);
  }
  if (w.processes.size() > kTopProcesses) out += ", ...";
  return out;
}

nlohmann::ordered_json WorkJson(const WorkBreakdown& w) {
  using Json = nlohmann::ordered_json;
  Json functions = Json::array(), binaries = Json::array(), processes = Json::array();
  for (const WorkFunction& f : w.functions)
    functions.push_back({{"function", f.function}, {"binary", f.binary}, {"samples", f.samples}});
  for (const auto& [b, n] : w.binaries) binaries.push_back({{"binary", b}, {"samples", n}});
  for (const WorkProcess& p : w.processes)
    processes.push_back({{"pid", p.pid}, {"comm", p.comm}, {"input", p.input}, {"ns", p.ns}});
  Json programs = Json::array();
  for (const auto& [comm, ns] : w.programs) programs.push_back({{"comm", comm}, {"ns", ns}});
  return {{"ns", w.ns},
          {"samples", w.samples},
          {"kernel_samples", w.kernel_samples},
          {"process_count", w.process_count},
          {"functions", std::move(functions)},
          {"binaries", std::move(binaries)},
          {"processes", std::move(processes)},
          {"programs", std::move(programs)}};
}

}  // namespace syspgo
