//===- stalls.cc - why the program's threads stopped, named across layers -===//
// How it works, in four steps:
//  1. Every off-CPU interval of a traced thread is read (they are few:
//     only intervals of at least the collector's offcpu_min_ns exist).
//  2. One pass over the recorded file syscalls in time order tracks, per
//     file, the bytes written since its last sync, and groups each
//     thread's syscalls into operations: consecutive syscalls on the same
//     regular file with little on-CPU time between them (write, write, ...,
//     fsync, close). Time the thread spent off-CPU between two of them
//     does not count as a gap: preemption must not split an operation. An
//     operation during which the thread went off-CPU becomes an episode;
//     a syscall on a pipe, socket or device is an episode by itself.
//  3. Off-CPU intervals inside an episode belong to it. A wait right after
//     a file operation in a syscall fileio does not record (unlink, rename,
//     ftruncate: named from the kernel stack) continues it: deleting a
//     checkpoint is part of writing it. An episode whose waits (not
//     counting preemption) reach the threshold is one stall; an interval
//     outside a stalling episode is a stall by itself if it is long enough.
//  4. Stalls with the same cause become one Finding; the block requests
//     of the I/O ones are read for their time windows only (through the
//     block_rq time index), and the period is searched in their start
//     times and in the thread's own syscalls between them.
// What kind of wait an interval is, and the words of a finding (its title
// and fix) and of a critical path's hop, come from the one table of wait
// classes in stall_rules.h; this file finds the stalls and their facts.
#include "analyze/stalls.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "analyze/blockhist.h"
#include "analyze/critical_path.h"
#include "analyze/data/block.h"
#include "analyze/data/cpu_tables.h"
#include "analyze/data/file_calls.h"
#include "analyze/data/offcpu.h"
#include "analyze/data/pagecache.h"
#include "analyze/data/paths.h"
#include "analyze/file_calls.h"
#include "analyze/file_paths.h"
#include "analyze/finding_print.h"
#include "analyze/oncpu_stalls.h"
#include "analyze/run.h"
#include "analyze/stack_names.h"
#include "analyze/stall_rules.h"
#include "analyze/stalls_work.h"
#include "analyze/text_join.h"
#include "analyze/data/tasks.h"
#include "analyze/wait_interval.h"
#include "analyze/work_breakdown.h"
#include "common/util.h"

namespace syspgo {
namespace {

constexpr size_t kMaxLinks = 1000;                    // wakeups kept per finding for arrows
constexpr int64_t kBurstGapNs = 2'000'000;            // on-CPU time between syscalls of one operation
constexpr int64_t kBlockLookbackNs = 10'000'000'000;  // requests issued this much earlier can end in a stall
constexpr int64_t kFaultLookbackNs = 1'000'000'000;   // a fault begins at most this long before its wait
constexpr int64_t kMarkMergeNs = 1'000'000;           // on-CPU time within one step mark written in pieces
constexpr double kPeriodTolerance = 0.25;             // gaps within 25% of their median are regular
constexpr double kStepTolerance = 0.35;               // step lengths within 35% of their median ...
constexpr double kStepsEven = 0.75;                   // ... for at least 3 steps in 4
constexpr int64_t kBlockFlagUnissued = 1024;          // block_rq.flags: completed without reaching the driver
constexpr int64_t kOTrunc = 01000;                    // O_TRUNC

constexpr int64_t kFmt = SYSPGO_S_IFMT, kReg = SYSPGO_S_IFREG, kBlk = SYSPGO_S_IFBLK, kFifo = SYSPGO_S_IFIFO,
                  kSock = SYSPGO_S_IFSOCK, kChr = SYSPGO_S_IFCHR;

std::string KindName(int64_t kind) {
  switch (kind & kFmt) {
    case kReg: return "file";
    case kFifo: return "pipe";
    case kSock: return "socket";
    case kChr: return "device";
    case kBlk: return "block device";
  }
  return "anonymous inode";
}

// Syscalls fileio does not record that act on a file just written or
// read: a wait in one of them right after such an operation continues it.
const std::set<std::string>& FileFollowUps() {
  static const std::set<std::string> s = {"unlink", "unlinkat", "rename", "renameat", "renameat2", "truncate",
                                          "ftruncate", "fallocate", "close", "close_range", "msync", "fadvise64",
                                          "syncfs", "sync"};
  return s;
}

// Frames of the wakeup itself, above what caused it.
const std::set<std::string>& WakeFrames() {
  static const std::set<std::string> s = {
      "try_to_wake_up", "wake_up_process", "wake_up_q", "__wake_up", "__wake_up_common", "__wake_up_common_lock",
      "__wake_up_sync_key", "__wake_up_locked_key", "autoremove_wake_function", "default_wake_function",
      "woken_wake_function", "wake_up_bit", "__wake_up_bit", "wake_bit_function", "wake_page_function",
      "folio_wake_bit", "wake_up_var", "complete", "ttwu_do_activate", "pollwake", "ep_poll_callback",
      "hrtimer_wakeup"};
  return s;
}

struct Episode {
  int64_t tid = 0, pid = 0, start = 0, end = 0;
  uint64_t dev = 0, ino = 0;
  int64_t kind = 0;
  bool regular = false;                      // a regular file (or block device): syscalls may join it
  std::vector<std::string> order;            // recorded syscalls, in order of first use
  std::map<std::string, std::pair<int64_t, int64_t>> calls;  // name -> (count, ns in them)
  std::vector<std::string> inferred;         // syscalls seen only on kernel stacks
  std::map<std::string, int64_t> inferred_ns;  // their off-CPU time
  int64_t written = 0, read = 0, off_lo = -1, off_hi = -1;
  int64_t synced = -1;                       // bytes written since the previous sync, at a sync; -1: no sync
  int64_t data_end = 0;                      // end of its last read or write that moved bytes
  std::vector<size_t> ivs;                   // -> its thread's intervals
  std::string lookup;                        // a path lookup's path (stat, access...): no fd, no inode
};

struct CallRow {
  int64_t ts, dur, pid, tid, nr, fd;
  uint64_t dev, ino;
  int64_t kind, pos, ret, flags;
  std::string lookup;  // file_lookup.path, "" for the other calls
};

void AddCall(Episode& ep, const CallRow& r, const std::string& name, int64_t dirty_before) {
  if (!ep.calls.count(name)) ep.order.push_back(name);
  auto& c = ep.calls[name];
  ++c.first;
  c.second += r.dur;
  ep.end = std::max(ep.end, r.ts + r.dur);
  if (r.ret > 0 && (IsWriteCall(r.nr) || IsReadCall(r.nr))) {
    (IsWriteCall(r.nr) ? ep.written : ep.read) += r.ret;
    ep.data_end = std::max(ep.data_end, r.ts + r.dur);
    if (r.pos >= 0) {
      ep.off_lo = ep.off_lo < 0 ? r.pos : std::min(ep.off_lo, r.pos);
      ep.off_hi = std::max(ep.off_hi, r.pos + r.ret);
    }
  }
  if (dirty_before >= 0) ep.synced = std::max(ep.synced, dirty_before);
}

// One stall: an episode that waited long enough, or one long interval.
struct Stall {
  int64_t tid = 0, pid = 0, start = 0, end = 0;
  int64_t blocked = 0, runnable = 0;
  Wait wait;
  std::map<std::string, int64_t> waits;  // what -> blocked ns
  std::string syscall;                   // standalone: the syscall in progress
  const Episode* ep = nullptr;
  const Interval* rep = nullptr;         // the longest wait (blocked if any)
  std::string path;                      // the file, if known
  uint64_t dev = 0, ino = 0;
  // Block requests waited on: op -> (requests, bytes); issued latencies; issuers.
  std::map<std::string, std::pair<int64_t, int64_t>> block_ops;
  std::vector<int64_t> block_lat;
  std::set<std::string> issuers;
  std::string key;
};

std::string Seconds(int64_t ns) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.3f s", ns / 1e9);
  return buf;
}

// What a finding's occurrences add up to, beyond what its StallDetail
// keeps: the facts and the evidence are worded from these.
struct StallSums {
  std::vector<int64_t> synced;                    // bytes a sync waited for, per occurrence that synced
  std::vector<std::string> paths;                 // distinct, in order of first occurrence
  std::map<std::string, int64_t> waits;           // what -> blocked ns
  std::map<std::string, std::pair<int64_t, int64_t>> block_ops;  // op -> (requests, bytes)
  std::map<int, int64_t> lat_slots;               // log2 slot of a block request's latency -> requests
  std::vector<int64_t> lat;                       // every block request's latency
  std::set<std::string> issuers;
  std::map<std::string, int64_t> call_ns, inferred_ns;  // syscall -> ns in it (recorded; off-CPU, inferred)
};

struct Period {
  int64_t ns = 0, steps = 0, step_ns = 0;
  std::string marker;  // what marks a step
  std::string text;
};

// A syscall that may mark a loop's steps: one call on one fd, to one file
// (or kind of file).
struct MarkKey {
  int64_t nr, fd;
  uint64_t dev, ino;
  int64_t kind;
  auto operator<=>(const MarkKey&) const = default;
};
using Marks = std::map<MarkKey, std::vector<std::vector<int64_t>>>;  // key -> per gap, the mark times

// Everything one analysis needs, loaded once.
class Analysis {
 public:
  Analysis(Db& db, const StallsQuery& q) : db_(db), q_(q) {}
  Result<StallsReport> Run();

 private:
  Status LoadRun();
  Status LoadIntervals();
  Status LoadNames();
  Status ScanCalls();
  bool WaitedBetween(const Intervals& ivs, int64_t a, int64_t b);
  Status AddOnCpuStalls(std::vector<std::pair<Finding, StallDetail>>& found);
  void Assign();
  void MakeStalls();
  void Describe(Stall& s);
  Status AddBlock(Stall& s);
  Period FindPeriod(const std::vector<const Stall*>& occ);
  Marks MarksBetween(const std::vector<const Stall*>& occ);
  void PickMarker(const Marks& marks, const std::vector<const Stall*>& occ, int64_t free_med, Period& p);
  Finding MakeFinding(const std::vector<const Stall*>& occ, StallDetail* d);
  StallSums Aggregate(const std::vector<const Stall*>& occ, const Stall& rep, Finding& f, StallDetail* d);
  std::string AddWhatFacts(const std::vector<const Stall*>& occ, const Stall& rep, const StallSums& sums, Finding& f,
                           StallDetail* d);
  std::vector<std::string> AddWaitFacts(const Stall& rep, const StallSums& sums, int64_t n, Finding& f,
                                        StallDetail* d);
  void Word(const std::vector<const Stall*>& occ, const Stall& rep, const std::string& who, Finding& f,
            const StallDetail& d);
  void AddRoots(const std::vector<const Stall*>& occ, const Stall& rep, Finding& f, StallDetail* d);
  void AddEvidence(const std::vector<const Stall*>& occ, const Stall& rep, const StallSums& sums,
                   const std::vector<std::string>& user, Finding& f);
  std::string Comm(int64_t tid, int64_t pid, int64_t ts) const;
  // What an interval waited for; `syscall` gets the syscall it was in.
  Wait Classify(const Interval& iv, std::string* syscall = nullptr);
  std::string WakerText(const Interval& iv);
  std::string Doing(const Interval& iv);
  std::string Busy(const Interval& iv);
  std::string DiskRequests(const Interval& iv);  // a disk wait's block requests, in words
  std::string StallFile(const Interval& iv);
  std::optional<std::pair<uint64_t, uint64_t>> FaultFile(int64_t tid, int64_t at);
  CriticalPath& Path();
  Status CommandPath();
  int64_t UserTime(const Intervals& ivs, int64_t tid, int64_t a, int64_t b);
  std::string CallName(int64_t nr) const;
  void BreakDown(RootShare& r);
  void AddWork(Finding& f, StallDetail& d);
  const std::vector<std::string>& Kernel(int64_t stack) {
    auto [it, fresh] = kernel_.try_emplace(stack);
    if (fresh) it->second = names_->Kernel(stack);
    return it->second;
  }

  Db& db_;
  StallsQuery q_;
  StallsReport report_;
  RunWindow window_;
  int64_t sample_period_ns_ = 0;                // 0: the cpu group did not sample this run
  std::map<int64_t, Intervals> threads_;       // tid -> its intervals
  Tasks tasks_;
  std::map<int64_t, std::string> syscall_names_;
  std::vector<Episode> episodes_;
  std::vector<Stall> stalls_;
  std::unique_ptr<StackNames> names_;
  std::unique_ptr<FilePaths> paths_;
  std::map<int64_t, std::vector<std::string>> kernel_;
  std::optional<data::ThreadFaults> faults_;  // read at the first wait in a page fault
  std::unique_ptr<CriticalPath> path_;
  std::unique_ptr<WorkSamples> work_;
};

Status Analysis::LoadRun() {
  auto window = ReadRunWindow(db_, q_.run_id);
  if (!window) return window.error();
  window_ = *window;
  report_.wall_ns = std::max<int64_t>(0, window_.end_ns - window_.command_start_ns);

  auto cpu = ReadProbeStatus(db_, q_.run_id, "cpu");
  if (!cpu) return cpu.error();
  if (cpu->attached) {
    auto settings = ReadRunSettings(db_, q_.run_id);
    if (!settings) return settings.error();
    if (settings->freq_hz > 0) sample_period_ns_ = 1'000'000'000 / settings->freq_hz;
  }
  return RequireProbeGroup(db_, q_.run_id, "sched", "off-CPU data", "sched,fileio,block,cpu");
}

Status Analysis::LoadIntervals() {
  return data::VisitIntervals(db_, q_.run_id, [&](Interval&& iv) {
    ++report_.intervals;
    report_.longest_ns = std::max(report_.longest_ns, iv.dur);
    threads_[iv.tid].push_back(std::move(iv));
  });
}

Status Analysis::LoadNames() {
  auto tasks = Tasks::Load(db_, q_.run_id);
  if (!tasks) return tasks.error();
  tasks_ = std::move(*tasks);
  auto calls = data::ReadSyscallNames(db_);
  if (!calls) return calls.error();
  syscall_names_ = std::move(*calls);
  auto names = StackNames::Load(db_, q_.run_id);
  if (!names) return names.error();
  names_ = std::move(*names);
  auto paths = FilePaths::Load(db_, q_.run_id);
  if (!paths) return paths.error();
  paths_ = std::make_unique<FilePaths>(std::move(*paths));
  return {};
}

std::string Analysis::CallName(int64_t nr) const {
  auto it = syscall_names_.find(nr);
  return it == syscall_names_.end() ? "syscall " + std::to_string(nr) : it->second;
}

std::string Analysis::Comm(int64_t tid, int64_t pid, int64_t ts) const {
  std::string name = tasks_.Name(tid, pid, ts);
  return name.empty() ? "tid " + std::to_string(tid) : name;
}

// Whether the thread waited for something other than the disk in [a, b),
// between two calls on one file: a sleep (or a lock, a pipe...) between two
// bursts of I/O ends the first, so the I/O stall counts only the I/O.
bool Analysis::WaitedBetween(const Intervals& ivs, int64_t a, int64_t b) {
  auto it = std::lower_bound(ivs.begin(), ivs.end(), a, [](const Interval& iv, int64_t t) { return iv.ts < t; });
  for (; it != ivs.end() && it->ts < b; ++it)
    if (it->blocked() && it->call.empty() && !RuleOf(Classify(*it).cls).disk) return true;
  return false;
}

Status Analysis::ScanCalls() {
  struct Open {
    Episode ep;
    bool active = false;
  };
  std::unordered_map<int64_t, Open> current;                  // tid -> the operation under way
  std::map<std::pair<uint64_t, uint64_t>, int64_t> dirty;     // file -> bytes written since its last sync

  auto close = [&](Open& o) {
    if (!o.active) return;
    o.active = false;
    const Intervals& ivs = threads_.at(o.ep.tid);
    auto it = std::lower_bound(ivs.begin(), ivs.end(), o.ep.start,
                               [](const Interval& iv, int64_t t) { return iv.ts < t; });
    if (it != ivs.end() && it->ts < o.ep.end) episodes_.push_back(std::move(o.ep));
  };

  SYSPGO_TRY(data::VisitFileCallsByTime(db_, q_.run_id, [&](Stmt& st) {
    CallRow r{st.Int(0), st.Int(1), st.Int(2), st.Int(3), st.Int(4), st.Int(5),
              static_cast<uint64_t>(st.Int(6)), static_cast<uint64_t>(st.Int(7)), st.Int(8), st.Int(9),
              st.Int(10), st.Int(11), st.Text(12)};
    std::pair<uint64_t, uint64_t> file{r.dev, r.ino};
    bool opened = IsOpenCall(r.nr) && r.ret >= 0 && r.ino != 0;
    int64_t dirty_before = -1;
    if (r.dev != 0 && IsWriteCall(r.nr) && r.ret > 0) {
      dirty[file] += r.ret;
    } else if (r.dev != 0 && IsSyncCall(r.nr)) {
      dirty_before = dirty[file];
      dirty[file] = 0;
    } else if (opened && (r.flags & kOTrunc)) {
      dirty[file] = 0;
    }

    auto t = threads_.find(r.tid);
    if (t == threads_.end()) return;  // a thread that never went off-CPU for long cannot stall
    std::string name = CallName(r.nr);
    for (auto it = std::lower_bound(t->second.begin(), t->second.end(), r.ts,
                                    [](const Interval& iv, int64_t ts) { return iv.ts < ts; });
         it != t->second.end() && it->ts < r.ts + r.dur; ++it) {
      it->call = name;
      it->call_kind = r.kind;
    }
    int64_t fmt = r.kind & kFmt;
    bool regular = fmt == kReg || fmt == kBlk || opened;
    Open& o = current[r.tid];
    bool joins = o.active && regular && o.ep.regular && o.ep.dev == r.dev && o.ep.ino == r.ino &&
                 OnCpu(t->second, o.ep.end, r.ts) < kBurstGapNs && !WaitedBetween(t->second, o.ep.end, r.ts);
    if (!joins) {
      close(o);
      o.ep = Episode{};
      o.ep.tid = r.tid;
      o.ep.pid = r.pid;
      o.ep.start = r.ts;
      o.ep.end = r.ts + r.dur;
      o.ep.dev = r.dev;
      o.ep.ino = r.ino;
      o.ep.kind = IsOpenCall(r.nr) ? kReg : r.kind;
      o.ep.regular = regular;
      o.ep.lookup = r.lookup;
      o.active = true;
    }
    AddCall(o.ep, r, name, dirty_before);
  }));
  for (auto& [tid, o] : current) close(o);
  std::sort(episodes_.begin(), episodes_.end(),
            [](const Episode& a, const Episode& b) { return std::tie(a.tid, a.start) < std::tie(b.tid, b.start); });
  return {};
}

void Analysis::Assign() {
  size_t e = 0;
  for (auto& [tid, ivs] : threads_) {
    while (e < episodes_.size() && episodes_[e].tid < tid) ++e;
    int last = -1;  // the latest episode of this thread begun before the interval
    for (size_t i = 0; i < ivs.size(); ++i) {
      Interval& iv = ivs[i];
      for (; e < episodes_.size() && episodes_[e].tid == tid && episodes_[e].start <= iv.ts; ++e)
        last = static_cast<int>(e);
      if (last < 0) continue;
      Episode& ep = episodes_[static_cast<size_t>(last)];
      if (iv.ts < ep.end) {
        iv.episode = last;
        ep.ivs.push_back(i);
        continue;
      }
      // A wait in an unrecorded syscall on the file just used (unlink of
      // the checkpoint just written) continues the operation. Such a
      // syscall can run long on-CPU before it waits (unlink frees the
      // file's cached pages first): only the thread's own code in between
      // counts as a gap.
      std::string sc = iv.call.empty() ? StackSyscall(Kernel(iv.kstack)) : "";
      if (ep.regular && FileFollowUps().count(sc) && UserTime(ivs, tid, ep.end, iv.ts) < kBurstGapNs) {
        iv.episode = last;
        ep.ivs.push_back(i);
        ep.end = iv.end();
        if (!ep.inferred_ns.count(sc)) ep.inferred.push_back(sc);
        ep.inferred_ns[sc] += iv.dur;
      }
    }
  }
}

void Analysis::MakeStalls() {
  // Episodes first: their waits add up.
  std::set<std::pair<int64_t, size_t>> taken;  // (tid, interval index) in a stalling episode
  for (const Episode& ep : episodes_) {
    const Intervals& ivs = threads_[ep.tid];
    Stall s;
    for (size_t i : ep.ivs) {
      const Interval& iv = ivs[i];
      (iv.blocked() ? s.blocked : s.runnable) += iv.dur;
    }
    if (s.blocked < q_.threshold_ns || s.blocked == 0) continue;
    s.tid = ep.tid;
    s.pid = ep.pid;
    s.start = ep.start;
    s.end = ep.end;
    s.ep = &ep;
    s.dev = ep.dev;
    s.ino = ep.ino;
    // By the class's name: of two kinds with as much time, the one whose
    // name sorts first dominates.
    std::map<std::string, int64_t> by_cls;
    for (size_t i : ep.ivs) {
      const Interval& iv = ivs[i];
      taken.insert({ep.tid, i});
      if (!iv.blocked()) continue;
      Wait w = Classify(iv);
      by_cls[WaitClassName(w.cls)] += iv.dur;
      s.waits[w.what] += iv.dur;
    }
    std::string cls = std::max_element(by_cls.begin(), by_cls.end(),
                                       [](auto& a, auto& b) { return a.second < b.second; })->first;
    // The representative wait: the longest of the dominant kind.
    for (size_t i : ep.ivs) {
      const Interval& iv = ivs[i];
      if (!iv.blocked()) continue;
      Wait w = Classify(iv);
      if (WaitClassName(w.cls) == cls && (!s.rep || iv.dur > s.rep->dur)) {
        s.rep = &iv;
        s.wait = w;
      }
    }
    stalls_.push_back(std::move(s));
  }
  // Then single intervals outside them.
  for (auto& [tid, ivs] : threads_) {
    for (size_t i = 0; i < ivs.size(); ++i) {
      const Interval& iv = ivs[i];
      if (iv.dur < q_.threshold_ns || taken.count({tid, i})) continue;
      Stall s;
      s.tid = tid;
      s.pid = iv.pid;
      s.start = iv.ts;
      s.end = iv.end();
      (iv.blocked() ? s.blocked : s.runnable) = iv.dur;
      s.wait = Classify(iv, &s.syscall);
      if (iv.blocked()) s.waits[s.wait.what] = iv.dur;
      s.rep = &iv;
      stalls_.push_back(std::move(s));
    }
  }
}

// The file of a stall, and the key that groups stalls with the same cause.
void Analysis::Describe(Stall& s) {
  std::string comm = Comm(s.tid, s.pid, s.start);
  // The command's own process is never one cause with other processes of
  // its name (its DataLoader workers, say).
  std::string thread = comm + "|" + (s.tid == s.pid ? "main" : "thread") + (s.pid == window_.target_pid ? "|cmd" : "");
  std::string who = thread + "|" + WaitClassName(s.wait.cls);
  if (s.wait.cls == WaitClass::kCpu) {
    s.key = who;  // preemption is one cause, whatever the thread was doing
    return;
  }
  if (s.ep) {
    if (s.ep->regular) {
      s.path = paths_->At(s.dev, s.ino, s.start);
      if (s.path.empty()) s.path = "inode " + std::to_string(s.ino);
    } else if (!s.ep->lookup.empty()) {
      s.path = s.ep->lookup;
    } else {
      s.path = KindName(s.ep->kind) + ":[" + std::to_string(s.ino) + "]";
    }
    // The thread, the calls that name the operation and its file; not its
    // close, nor what it waited for most. Whether the close falls inside
    // the burst depends on when the thread got its CPU back, and which wait
    // dominates one occurrence (writeback, a journal lock, a discard) on
    // what the disk and the other tasks did meanwhile: under load, either
    // made one checkpoint of three a finding of its own. The finding takes
    // the class of its longest wait (MakeFinding).
    std::vector<std::string> calls;
    for (const std::string& c : s.ep->order)
      if (c != "close") calls.push_back(c);
    s.key = thread + "|" + Join(calls, "+") + "|" +
            (s.ep->regular || !s.ep->lookup.empty() ? PathShape(s.path) : KindName(s.ep->kind));
    return;
  }
  // A wait on the disk in a page fault is about the fault's file.
  if (RuleOf(s.wait.cls).disk && InPageFault(Kernel(s.rep->kstack))) {
    // The faults group may not have been recorded: then no file.
    if (auto f = FaultFile(s.tid, s.start)) {
      s.dev = f->first;
      s.ino = f->second;
      s.path = paths_->At(s.dev, s.ino, s.start);
      if (s.path.empty()) s.path = "inode " + std::to_string(s.ino);
    }
    s.key = who + "|fault|" + PathShape(s.path);
    return;
  }
  s.key = who + "|" + s.syscall;
}

Status Analysis::AddBlock(Stall& s) {
  if (!RuleOf(s.wait.cls).disk) return {};  // never blame I/O for other waits
  return data::VisitRequestsInFlight(db_, q_.run_id, s.start - kBlockLookbackNs, s.start, s.end, s.tid,
                                     {s.dev, s.ino}, [&](Stmt& st) {
    auto& op = s.block_ops[st.Text(3)];
    ++op.first;
    op.second += st.Int(2);
    if (!(st.Int(4) & kBlockFlagUnissued)) s.block_lat.push_back(st.Int(1));
    s.issuers.insert(st.Int(5) == s.tid ? "" : st.Text(6).empty() ? "the kernel" : st.Text(6));
  });
}

// Time the thread ran its own code in [a, b): from user-mode CPU samples
// when the run has them, else all the time it was not off-CPU.
int64_t Analysis::UserTime(const Intervals& ivs, int64_t tid, int64_t a, int64_t b) {
  if (sample_period_ns_ > 0) {
    if (auto n = CountUserSamples(db_, q_.run_id, tid, a, b); n.ok()) return *n * sample_period_ns_;
  }
  return OnCpu(ivs, a, b);
}

std::string Analysis::WakerText(const Interval& iv) {
  if (!iv.blocked()) return "none: it was preempted, not woken";
  if (!iv.woken) return "not seen (the wakeup came before the wait was recorded)";
  const std::vector<std::string>& k = Kernel(iv.waker_kstack);
  bool irq = HasFrame(k, {"asm_common_interrupt", "common_interrupt", "__sysvec_", "asm_sysvec", "handle_irq",
                          "__handle_irq", "irq_exit", "handle_softirqs", "__do_softirq"});
  std::string who = iv.waker_pid == 0 ? "an interrupt on an idle CPU"
                    : irq ? "an interrupt while " + iv.waker_comm + " (pid " + std::to_string(iv.waker_pid) + ") ran"
                          : iv.waker_comm + " (pid " + std::to_string(iv.waker_pid) +
                                (iv.waker_tid != iv.waker_pid ? ", tid " + std::to_string(iv.waker_tid) : "") + ")";
  std::string how;
  if (HasFrame(k, {"blk_mq_end_request", "blk_update_request", "bio_endio", "blk_mq_complete_request",
                   "end_buffer_", "folio_end_writeback", "end_page_writeback"}))
    how = "completing block I/O";
  else if (HasFrame(k, {"hrtimer_wakeup"})) how = "a timer expiring";
  else if (HasFrame(k, {"futex_wake"})) how = "futex_wake (unlocking or signalling)";
  else if (HasFrame(k, {"pipe_write", "anon_pipe_write"})) how = "writing to the pipe";
  else if (HasFrame(k, {"pipe_read", "anon_pipe_read"})) how = "reading from the pipe";
  else if (HasFrame(k, {"do_exit", "do_notify_parent"})) how = "exiting";
  else {
    for (const std::string& f : k) {
      if (!WakeFrames().count(f)) {
        how = "in " + f;
        break;
      }
    }
  }
  return how.empty() ? who : who + ", " + how;
}

// The file an I/O wait is about: its episode's, or a page fault's.
std::string Analysis::StallFile(const Interval& iv) {
  if (iv.episode >= 0) {
    const Episode& ep = episodes_[static_cast<size_t>(iv.episode)];
    if (ep.regular) return paths_->At(ep.dev, ep.ino, iv.ts);
    return ep.lookup;
  }
  if (!InPageFault(Kernel(iv.kstack))) return "";
  auto f = FaultFile(iv.tid, iv.ts);
  return f ? paths_->At(f->first, f->second, iv.ts) : "";
}

// The file of the fault a wait at `at` in a page fault is in: the thread's
// last fault before it. The faults of every thread that waits in a fault
// are read once, at the first such wait. The faults group may not have
// been recorded: then no file.
std::optional<std::pair<uint64_t, uint64_t>> Analysis::FaultFile(int64_t tid, int64_t at) {
  if (!faults_) {
    std::set<int64_t> tids;
    for (auto& [t, ivs] : threads_)
      for (const Interval& iv : ivs)
        if (InPageFault(Kernel(iv.kstack))) {
          tids.insert(t);
          break;
        }
    auto read = data::ThreadFaults::Read(db_, q_.run_id, tids);
    faults_ = read.ok() ? std::move(read.value()) : data::ThreadFaults();
  }
  return faults_->Last(tid, at, at - kFaultLookbackNs);
}

Wait Analysis::Classify(const Interval& iv, std::string* syscall) {
  const std::vector<std::string>& k = Kernel(iv.kstack);
  std::string sc = iv.call.empty() ? StackSyscall(k) : iv.call;
  Wait w = ClassifyWait(iv.blocked(), k, sc, iv.call_kind);
  if (syscall) *syscall = std::move(sc);
  return w;
}

std::string Analysis::Doing(const Interval& iv) {
  std::string sc;
  Wait w = Classify(iv, &sc);
  return WaitDoing(w, sc, [&] { return StallFile(iv); });
}

std::string Analysis::Busy(const Interval& iv) {
  std::vector<std::string> who;
  (void)VisitCpuBusy(db_, q_.run_id, iv.cpu, iv.ts, iv.end(), iv.tid, [&](Stmt& st) {
    who.push_back(Comm(st.Int(0), st.Int(1), iv.ts) + " (tid " + std::to_string(st.Int(0)) + ", " +
                  std::to_string(st.Int(2)) + " samples)");
  });
  std::string cpu = "CPU " + std::to_string(iv.cpu);
  if (!who.empty()) return cpu + " ran " + Join(who, ", ");
  return cpu + " ran tasks outside the traced tree" + (sample_period_ns_ ? "" : " (or the cpu group was off)");
}

std::string Analysis::DiskRequests(const Interval& iv) {
  // Requests that carried no data are the disk's write-cache flushes (an
  // fsync's last step): said as what they are, not as "0 B".
  std::vector<std::string> who, flushed_for;
  int64_t flushes = 0;
  (void)data::VisitRequestsCompleted(db_, q_.run_id, iv.ts, iv.woken ? iv.wake_ts : iv.end(), [&](Stmt& st) {
    std::string task = st.Text(2) + " (tid " + std::to_string(st.Int(0)) + ")";
    if (st.Int(4) == 0) {
      flushes += st.Int(3);
      flushed_for.push_back(task);
      return;
    }
    who.push_back(std::to_string(st.Int(3)) + " of " + task + ", " + FormatBytes(static_cast<uint64_t>(st.Int(4))));
  });
  std::vector<std::string> parts;
  if (!who.empty()) parts.push_back("block requests completed meanwhile: " + Join(who, "; "));
  if (flushes)
    parts.push_back((flushes == 1 ? std::string("a cache flush") : std::to_string(flushes) + " cache flushes") +
                    " completed meanwhile, for " + Join(flushed_for, ", "));
  return Join(parts, "; ");
}

CriticalPath& Analysis::Path() {
  if (!path_) {
    CriticalPath::Hooks h;
    h.comm = [this](int64_t tid, int64_t pid, int64_t ts) { return Comm(tid, pid, ts); };
    h.kernel = [this](int64_t stack) -> const std::vector<std::string>& { return Kernel(stack); };
    h.traced = [this](int64_t tid) { return tasks_.HasThread(tid); };
    h.doing = [this](const Interval& iv) { return Doing(iv); };
    h.disk = [this](const Interval& iv) { return RuleOf(Classify(iv).cls).disk; };
    h.busy = [this](const Interval& iv) { return Busy(iv); };
    h.disk_requests = [this](const Interval& iv) { return DiskRequests(iv); };
    h.group = [this](int64_t pid) { return pid == window_.target_pid ? "command" : ""; };
    // The file's name by shape, as stalls group files (checkpoint-5.bin and
    // -10.bin are one root); its directory as it is.
    h.file = [this](const Interval& iv) {
      std::string path = StallFile(iv);
      size_t slash = path.rfind('/');
      return slash == std::string::npos ? PathShape(path) : path.substr(0, slash + 1) + PathShape(path.substr(slash + 1));
    };
    h.user_stack = [this](int64_t stack, int64_t pid, int64_t ts) {
      std::vector<std::string> frames = names_->User(stack, pid, ts);
      return frames.empty() ? std::string() : "in " + Join(frames, " < ", 4);
    };
    path_ = std::make_unique<CriticalPath>(threads_, std::move(h));
  }
  return *path_;
}

Status Analysis::CommandPath() {
  const int64_t pid = window_.target_pid, start = window_.command_start_ns;
  int64_t end = tasks_.FirstExit(pid).value_or(window_.end_ns);
  if (pid <= 0 || end <= start) return {};
  report_.command_tid = pid;
  report_.command_path = CriticalPath::ByRoot(Path().Explain(pid, pid, start, end));
  for (RootShare& r : report_.command_path) BreakDown(r);
  return {};
}

// Where a work root's time went, from the run's CPU samples.
void Analysis::BreakDown(RootShare& r) {
  if (r.root.kind != PathRoot::Kind::kWork || !r.work.empty()) return;
  if (!work_) {
    auto w = WorkSamples::Load(db_, q_.run_id, *names_, tasks_);
    if (!w) return;  // a run without samples: the root stays as it is
    work_ = std::move(*w);
  }
  r.work = work_->Of(r.spans);
}

void Analysis::AddWork(Finding& f, StallDetail& d) {
  if (d.roots.empty()) return;
  for (RootShare& r : d.roots) BreakDown(r);
  RootShare& top = d.roots.front();
  int64_t cpu = work_ && top.root.kind == PathRoot::Kind::kWork
                    ? work_->CountNamed(top.root.comm) * sample_period_ns_
                    : 0;
  AddWorkFacts(f, top, cpu, report_.wall_ns);
}

// Steps: a syscall the thread makes the same number of times (k) between
// every two occurrences, at an even pace, marks a loop that stalls every
// k-th time round (a progress line per training step, say). The candidates:
// the thread's file calls between occurrences, by gap.
Marks Analysis::MarksBetween(const std::vector<const Stall*>& occ) {
  std::set<std::pair<uint64_t, uint64_t>> own;  // the stalls' own files are not markers
  for (const Stall* s : occ) own.insert({s->dev, s->ino});
  Marks marks;
  size_t gap = 0;
  const int64_t tid = occ.front()->tid, from = occ.front()->end, to = occ.back()->start;
  (void)data::VisitThreadFileIo(db_, q_.run_id, tid, from, to, [&](Stmt& st) {
    int64_t ts = st.Int(0);
    while (gap + 1 < occ.size() && ts >= occ[gap + 1]->start) ++gap;
    if (ts < occ[gap]->end || gap + 1 >= occ.size()) return;  // inside an occurrence
    MarkKey k{st.Int(1), st.Int(2), static_cast<uint64_t>(st.Int(3)), static_cast<uint64_t>(st.Int(4)), st.Int(5)};
    if (own.count({k.dev, k.ino})) return;
    auto& per_gap = marks[k];
    per_gap.resize(occ.size() - 1);
    auto& m = per_gap[gap];
    // Pieces of one mark (a line and its newline) are close in on-CPU
    // time, however long the thread was preempted between them.
    if (m.empty() || OnCpu(threads_.at(occ.front()->tid), m.back(), ts) >= kMarkMergeNs) m.push_back(ts);
    else m.back() = ts;
  });
  return marks;
}

// A marker's step is the median time between its marks; the stall
// recurs every k-th step, k being the median number of marks between
// two occurrences, which must agree with the stall-free time over a
// step. A mark lost or added here and there (a dropped event, a second
// line) must not hide the rhythm, so most steps (not all) must be even
// and each gap may hold one mark more or fewer than k. The evenest marker
// gives `p` its steps.
void Analysis::PickMarker(const Marks& marks, const std::vector<const Stall*>& occ, int64_t free_med, Period& p) {
  double best_even = 0;
  for (auto& [k, per_gap] : marks) {
    std::vector<int64_t> steps, counts;
    for (auto& m : per_gap) {
      counts.push_back(static_cast<int64_t>(m.size()));
      for (size_t i = 1; i < m.size(); ++i) steps.push_back(m[i] - m[i - 1]);
    }
    if (steps.size() < 2) continue;
    int64_t step = Median(steps);
    if (step <= 0) continue;
    size_t even = 0;
    for (int64_t s : steps) even += std::abs(s - step) <= kStepTolerance * static_cast<double>(step);
    double share = static_cast<double>(even) / static_cast<double>(steps.size());
    int64_t every = Median(counts);
    double by_time = static_cast<double>(free_med) / static_cast<double>(step);
    bool fits = share >= kStepsEven && every >= 2 && std::abs(by_time - static_cast<double>(every)) <= 1.5;
    for (auto& m : per_gap) fits = fits && std::abs(static_cast<int64_t>(m.size()) - every) <= 1;
    if (!fits || share < best_even || (share == best_even && p.steps && every >= p.steps)) continue;
    best_even = share;
    p.steps = every;
    p.step_ns = step;
    std::string target = (k.kind & kFmt) == kReg ? paths_->At(k.dev, k.ino, occ.front()->end)
                                                 : KindName(k.kind);
    std::string name = CallName(k.nr);
    p.marker = name + (IsWriteCall(k.nr) ? " to" : IsReadCall(k.nr) ? " from" : " on") + " fd " + std::to_string(k.fd) +
               " (" + target + ")";
  }
}

// A period in words: its steps if a marker was found, else its time if
// regular, else "".
std::string PeriodText(const Period& p, bool regular, int64_t med, size_t occurrences) {
  if (p.steps)
    return "every " + Ordinal(p.steps) + " step" +
           (regular ? ", every " + Seconds(med) : ", about every " + Seconds(med) + " (unevenly)") + ": " +
           std::to_string(p.steps - 1) + " steps without it in between; a step takes " +
           FormatNs(static_cast<uint64_t>(p.step_ns)) + " and is marked by one " + p.marker;
  if (regular) return "every " + Seconds(med) + " (" + std::to_string(occurrences) + " occurrences, evenly spaced)";
  return "";
}

Period Analysis::FindPeriod(const std::vector<const Stall*>& all) {
  Period p;
  // The thread with the most occurrences: a period is one thread's rhythm.
  std::map<int64_t, std::vector<const Stall*>> by_tid;
  for (const Stall* s : all) by_tid[s->tid].push_back(s);
  auto& occ = std::max_element(by_tid.begin(), by_tid.end(),
                               [](auto& a, auto& b) { return a.second.size() < b.second.size(); })->second;
  if (occ.size() < 3) return p;
  // The period is start to start; whether it is regular is judged on the
  // time between occurrences, which a long occurrence does not stretch.
  std::vector<int64_t> gaps, free;
  for (size_t i = 1; i < occ.size(); ++i) {
    gaps.push_back(occ[i]->start - occ[i - 1]->start);
    free.push_back(occ[i]->start - occ[i - 1]->end);
  }
  int64_t med = Median(gaps), free_med = Median(free);
  bool regular = free_med > 0;
  for (int64_t g : free)
    regular = regular && std::abs(g - free_med) <= kPeriodTolerance * static_cast<double>(free_med);
  PickMarker(MarksBetween(occ), occ, free_med, p);
  if (regular) p.ns = med;
  p.text = PeriodText(p, regular, med, occ.size());
  return p;
}

// What to do about a root that lies in another thread than the one waiting.
std::string RootFix(const PathRoot& r) {
  switch (r.kind) {
    case PathRoot::Kind::kTimer:
      return "that sleep is on purpose; remove or shorten it, or wait for the event itself instead of a timer.";
    case PathRoot::Kind::kDisk:
      return "take that I/O off the path (a background thread, asynchronous I/O, prefetching) or use faster "
             "storage.";
    case PathRoot::Kind::kWork:
      return "that work is the bottleneck: make it faster, or do it outside the lock or hand-off the others wait "
             "on.";
    case PathRoot::Kind::kCpu:
      return "give it a CPU sooner: run less beside it, or raise its priority.";
    case PathRoot::Kind::kOutside:
      return "look at that process; syspgo did not trace it (attach to it with -p, or start it under syspgo).";
    case PathRoot::Kind::kInterrupt:
    case PathRoot::Kind::kUnknown:
      break;
  }
  return "look at what it does at that time.";
}

// The stall whose wait is longest speaks for all of a finding's
// occurrences: its class names the finding (the occurrences of one file
// operation may differ; Describe).
const Stall& Representative(const std::vector<const Stall*>& occ) {
  return **std::max_element(occ.begin(), occ.end(),
                            [](const Stall* a, const Stall* b) { return a->rep->dur < b->rep->dur; });
}

// The wakeups on the way to the main root (`key`), for arrows: each hop
// was woken by the next thread on the way, the last by the root's.
void AddLinks(const std::vector<PathSegment>& segments, const std::string& key, Finding& f) {
  for (const PathSegment& seg : segments) {
    if (seg.root.Key() != key) continue;
    for (size_t i = 0; i < seg.hops.size() && f.links.size() < kMaxLinks; ++i) {
      const PathHop& h = seg.hops[i];
      int64_t by_pid = i + 1 < seg.hops.size() ? seg.hops[i + 1].pid : seg.root.pid;
      int64_t by_tid = i + 1 < seg.hops.size() ? seg.hops[i + 1].tid : seg.root.tid;
      f.links.push_back({h.wake_ts, by_pid, by_tid, h.pid, h.tid});
    }
  }
  std::sort(f.links.begin(), f.links.end(), [](const FindingLink& a, const FindingLink& b) {
    return std::tie(a.ts, a.tid, a.cause_tid) < std::tie(b.ts, b.tid, b.cause_tid);
  });
  f.links.erase(std::unique(f.links.begin(), f.links.end(), [](const FindingLink& a, const FindingLink& b) {
                  return a.ts == b.ts && a.tid == b.tid && a.cause_tid == b.cause_tid;
                }), f.links.end());
}

// A sum by name, 0 for a name no occurrence had.
int64_t NsOf(const std::map<std::string, int64_t>& m, const std::string& name) {
  auto it = m.find(name);
  return it == m.end() ? 0 : it->second;
}

Finding Analysis::MakeFinding(const std::vector<const Stall*>& occ, StallDetail* d) {
  const Stall& rep = Representative(occ);
  Finding f;
  f.kind = "stall";
  StallSums sums = Aggregate(occ, rep, f, d);
  std::string who = AddWhatFacts(occ, rep, sums, f, d);
  std::vector<std::string> user = AddWaitFacts(rep, sums, static_cast<int64_t>(occ.size()), f, d);

  Period p = rep.wait.cls == WaitClass::kCpu ? Period{} : FindPeriod(occ);
  f.period = p.text;
  d->period_ns = p.ns;
  d->period_steps = p.steps;
  d->step_ns = p.step_ns;
  if (occ.size() == 2)
    f.facts.emplace_back("apart", Seconds(occ[1]->start - occ[0]->start) + " (two occurrences: too few for a period)");

  Word(occ, rep, who, f, *d);
  AddRoots(occ, rep, f, d);
  AddEvidence(occ, rep, sums, user, f);
  return f;
}

// The occurrences summed once, for the detail (which the JSON and the
// report read) and for the facts and evidence that are worded from them.
StallSums Analysis::Aggregate(const std::vector<const Stall*>& occ, const Stall& rep, Finding& f, StallDetail* d) {
  const Stall& first = *occ.front();
  StallSums sums;
  std::set<int64_t> pids, tids;
  std::vector<int64_t> written, read;
  std::set<std::string> path_set;
  for (const Stall* s : occ) {
    pids.insert(s->pid);
    tids.insert(s->tid);
    f.occurrences.push_back({s->start, s->end - s->start, s->tid});
    f.total_ns += s->end - s->start;
    f.worst_ns = std::max(f.worst_ns, s->end - s->start);
    d->blocked_ns += s->blocked;
    d->runnable_ns += s->runnable;
    if (s->ep) {
      written.push_back(s->ep->written);
      read.push_back(s->ep->read);
      if (s->ep->synced >= 0) sums.synced.push_back(s->ep->synced);
      for (auto& [n, c] : s->ep->calls) sums.call_ns[n] += c.second;
      for (auto& [n, ns] : s->ep->inferred_ns) sums.inferred_ns[n] += ns;
    }
    if (!s->path.empty() && path_set.insert(s->path).second) sums.paths.push_back(s->path);
    for (auto& [w, ns] : s->waits) sums.waits[w] += ns;
    for (auto& [op, v] : s->block_ops) {
      sums.block_ops[op].first += v.first;
      sums.block_ops[op].second += v.second;
      d->block_requests += v.first;
      d->block_bytes += v.second;
      d->block_bytes_by_op[op] += v.second;
    }
    for (int64_t l : s->block_lat) {
      sums.lat.push_back(l);
      ++sums.lat_slots[Log2Slot(l)];
    }
    sums.issuers.insert(s->issuers.begin(), s->issuers.end());
  }
  int64_t n = static_cast<int64_t>(occ.size());
  f.count = n;
  f.share = report_.wall_ns > 0 ? static_cast<double>(f.total_ns) / static_cast<double>(report_.wall_ns) : 0;
  d->offcpu_ns = d->blocked_ns + d->runnable_ns;
  d->cause = WaitClassName(rep.wait.cls);
  d->comm = Comm(first.tid, first.pid, first.start);
  d->main_thread = first.tid == first.pid;
  d->pids.assign(pids.begin(), pids.end());
  d->tids.assign(tids.begin(), tids.end());
  d->paths = sums.paths;
  d->file = CommonShape(sums.paths);
  d->bytes_written = Median(written);
  d->bytes_read = Median(read);
  d->synced_bytes = Median(sums.synced);
  d->wait = rep.wait.what;
  d->waker = WakerText(*rep.rep);
  if (first.ep) {
    d->syscalls = first.ep->order;
    for (const Stall* s : occ)
      for (const std::string& i : s->ep ? s->ep->inferred : std::vector<std::string>{})
        if (std::find(d->inferred_syscalls.begin(), d->inferred_syscalls.end(), i) == d->inferred_syscalls.end())
          d->inferred_syscalls.push_back(i);
  } else if (!first.syscall.empty()) {
    d->syscalls = {first.syscall};
  }
  return sums;
}

// The facts that say what stalled: who, in which syscalls, on which file
// and with how much data. Returns who, which the title and fix name too.
std::string Analysis::AddWhatFacts(const std::vector<const Stall*>& occ, const Stall& rep, const StallSums& sums,
                                   Finding& f, StallDetail* d) {
  const Stall& first = *occ.front();
  int64_t n = static_cast<int64_t>(occ.size());
  // Who: "train (main thread)", "worker (thread)", "python3 (2 processes)".
  StallWho stalled = WhoStalled(d->comm, d->pids, d->tids, d->main_thread, window_.target_pid, tasks_);
  f.facts.emplace_back(stalled.label, stalled.text);

  // The syscalls, with the mean time per occurrence in each.
  if (first.ep) {
    std::vector<std::string> parts;
    for (const std::string& c : first.ep->order) {
      int64_t count = first.ep->calls.at(c).first;
      parts.push_back(c + (count > 1 ? " x" + std::to_string(count) : "") + " (" +
                      FormatNs(static_cast<uint64_t>(NsOf(sums.call_ns, c) / n)) + ")");
    }
    for (const std::string& c : d->inferred_syscalls)
      parts.push_back("then " + c + " (off-CPU " + FormatNs(static_cast<uint64_t>(NsOf(sums.inferred_ns, c) / n)) +
                      "; named from the kernel stack, fileio does not record it)");
    f.facts.emplace_back("syscalls", Join(parts, ", ") + (n > 1 ? ", per occurrence" : ""));
  } else if (rep.wait.cls == WaitClass::kCpu) {
    if (!first.syscall.empty()) f.facts.emplace_back("syscall", "in " + first.syscall + " when preempted (first one)");
  } else {
    f.facts.emplace_back("syscall", first.syscall.empty() ? "none (in user code)" : first.syscall);
  }

  const std::vector<std::string>& paths = sums.paths;
  if (!paths.empty()) {
    std::string file = paths.size() == 1 ? paths.front()
                                         : d->file + " (" + std::to_string(paths.size()) + " names: " +
                                               Join(paths, ", ", 3) + ")";
    f.facts.emplace_back("file", file);
  }
  if (first.ep && first.ep->regular) {
    std::vector<std::string> data;
    if (d->bytes_written) {
      std::string w = FormatBytes(static_cast<uint64_t>(d->bytes_written)) + " written" + (n > 1 ? " each time" : "");
      if (first.ep->off_lo >= 0 && first.ep->written)
        w += " at offsets " + FormatBytes(static_cast<uint64_t>(first.ep->off_lo)) + " to " +
             FormatBytes(static_cast<uint64_t>(first.ep->off_hi));
      data.push_back(w);
    }
    if (d->bytes_read)
      data.push_back(FormatBytes(static_cast<uint64_t>(d->bytes_read)) + " read" + (n > 1 ? " each time" : ""));
    if (!sums.synced.empty())
      data.push_back("the sync waited for " + FormatBytes(static_cast<uint64_t>(d->synced_bytes)) +
                     " written since the file's previous sync");
    if (!data.empty()) f.facts.emplace_back("data", Join(data, "; "));
  }
  return stalled.title;
}

// The facts that say what the stall waited for: its time off-CPU, the
// waits and block requests behind it, who ended it and from where in the
// program. Returns that user stack, which the evidence lists in full.
std::vector<std::string> Analysis::AddWaitFacts(const Stall& rep, const StallSums& sums, int64_t n, Finding& f,
                                                StallDetail* d) {
  f.facts.emplace_back("off-CPU", FormatNs(static_cast<uint64_t>(d->offcpu_ns)) + ": " +
                                      FormatNs(static_cast<uint64_t>(d->blocked_ns)) + " waiting, " +
                                      FormatNs(static_cast<uint64_t>(d->runnable_ns)) +
                                      " runnable without a CPU");
  if (rep.wait.cls != WaitClass::kCpu) {
    std::vector<std::pair<std::string, int64_t>> w(sums.waits.begin(), sums.waits.end());
    std::sort(w.begin(), w.end(),
              [](auto& a, auto& b) { return a.second > b.second || (a.second == b.second && a.first < b.first); });
    std::vector<std::string> parts;
    for (auto& [what, ns] : w) parts.push_back(what + " (" + FormatNs(static_cast<uint64_t>(ns)) + ")");
    f.facts.emplace_back("waited for", Join(parts, "; ", 3));
  }
  if (!sums.block_ops.empty()) {
    std::vector<std::string> parts;
    for (auto& [op, v] : sums.block_ops) {
      int64_t reqs = (v.first + n - 1) / n;
      parts.push_back(FormatBytes(static_cast<uint64_t>(v.second / n)) + " " + op + " in " + std::to_string(reqs) +
                      (reqs == 1 ? " request" : " requests"));
    }
    std::vector<std::string> by;
    for (const std::string& i : sums.issuers) by.push_back(i.empty() ? "the thread itself" : i);
    std::string b = Join(parts, ", ") + (n > 1 ? " per occurrence" : "") + ", issued by " + Join(by, ", ");
    if (!sums.lat.empty())
      b += "; latency median " + FormatNs(static_cast<uint64_t>(Median(sums.lat))) + ", worst " +
           FormatNs(static_cast<uint64_t>(*std::max_element(sums.lat.begin(), sums.lat.end())));
    f.facts.emplace_back("block I/O", b);
  } else if (RuleOf(rep.wait.cls).disk) {
    f.facts.emplace_back("block I/O", "none recorded for this thread or file in the window (was the block group on?)");
  }
  f.facts.emplace_back("woken by", d->waker);
  std::vector<std::string> user = names_->User(rep.rep->ustack, rep.pid, rep.rep->ts);
  if (!user.empty()) f.facts.emplace_back("user stack", Join(user, " < ", 6));
  return user;
}

// The title and the fix, worded by the rules of the finding's class
// (stall_rules.h) from what the facts found.
void Analysis::Word(const std::vector<const Stall*>& occ, const Stall& rep, const std::string& who, Finding& f,
                    const StallDetail& d) {
  int64_t n = static_cast<int64_t>(occ.size());
  StallWords words;
  words.who = who;
  words.ops = Join(d.syscalls, "+");
  words.file = d.file;
  words.what = rep.wait.what;
  words.saves = "That saves up to " + FormatNs(static_cast<uint64_t>(f.total_ns)) + " on this thread (" +
                FormatShare(f.share) + " of the run" +
                (n > 1 ? ", " + FormatNs(static_cast<uint64_t>(f.total_ns / n)) + " each time" : "") + ").";
  const Interval& w = *rep.rep;
  words.waker = !w.woken ? "another task"
                : w.waker_pid == 0 ? "an interrupt"
                                   : w.waker_comm + " (pid " + std::to_string(w.waker_pid) + ")";
  if (d.bytes_written) words.each = FormatBytes(static_cast<uint64_t>(d.bytes_written)) + " each time";
  else if (d.bytes_read) words.each = FormatBytes(static_cast<uint64_t>(d.bytes_read)) + " each time";
  FixWhen use = FixWhen::kAlways;  // what the longest stall did to its file, if it was an operation on one
  if (rep.ep && rep.ep->regular)
    use = rep.ep->written > 0 || rep.ep->synced >= 0 ? FixWhen::kWritesFile : FixWhen::kReadsFile;
  f.fix = StallFix(rep.wait.cls, use, words);
  f.title = StallTitle(rep.wait.cls, occ.front()->ep != nullptr, words);
}

// Where the waits came down to: each interval followed through its wakers
// (critical_path.h). When the main root lies in another thread, the fix
// goes there, and the wakeups on the way become the trace's arrows.
void Analysis::AddRoots(const std::vector<const Stall*>& occ, const Stall& rep, Finding& f, StallDetail* d) {
  std::vector<PathSegment> segments;
  for (const Stall* s : occ) {
    const Intervals& ivs = threads_.at(s->tid);
    auto explain = [&](const Interval& iv) {
      auto seg = Path().Explain(iv.tid, iv.pid, iv.ts, iv.end());
      segments.insert(segments.end(), seg.begin(), seg.end());
    };
    if (s->ep) {
      for (size_t i : s->ep->ivs) explain(ivs[i]);
    } else {
      explain(*s->rep);
    }
  }
  d->roots = CriticalPath::ByRoot(segments);
  // The main root of a wait is what the wait itself came down to, not the
  // CPUs its threads had to queue for on the way (a busy machine adds that
  // to every wait): the largest root that is no wait for a CPU goes first,
  // unless the stall is one (preemption).
  if (rep.wait.cls != WaitClass::kCpu) {
    auto main = std::find_if(d->roots.begin(), d->roots.end(),
                             [](const RootShare& r) { return r.root.kind != PathRoot::Kind::kCpu; });
    if (main != d->roots.end()) std::rotate(d->roots.begin(), main, main + 1);
  }
  if (d->roots.empty()) return;
  const RootShare& top = d->roots.front();
  int64_t all = 0;
  for (const RootShare& r : d->roots) all += r.ns;
  f.facts.emplace_back("root", top.root.Text() + " (" + FormatShare(static_cast<double>(top.ns) / all) +
                                   " of the time off-CPU)");
  AddLinks(segments, top.root.Key(), f);
  if (!top.hops.empty()) {
    f.facts.emplace_back("critical path", ChainText(top.hops, top.root));
    f.fix += " The wait comes down to " + top.root.comm + " (tid " + std::to_string(top.root.tid) + "), which " +
             top.root.what + ": " + RootFix(top.root);
  }
}

// The evidence -v and the report show under a finding: each occurrence,
// the latencies, and the stacks of the longest wait and of its wakeup.
void Analysis::AddEvidence(const std::vector<const Stall*>& occ, const Stall& rep, const StallSums& sums,
                           const std::vector<std::string>& user, Finding& f) {
  f.evidence.push_back("occurrences (seconds since the command started):");
  for (const Stall* s : occ) {
    f.evidence.push_back("  at " + Seconds(s->start - window_.command_start_ns) + ": " +
                         FormatNs(static_cast<uint64_t>(s->end - s->start)) + ", off-CPU " +
                         FormatNs(static_cast<uint64_t>(s->blocked + s->runnable)) + ", tid " +
                         std::to_string(s->tid) + (s->path.empty() ? "" : ", " + s->path));
  }
  std::vector<std::string> bars = Log2Bars(sums.lat_slots);
  if (!bars.empty()) {
    f.evidence.push_back("latency of the block requests waited on:");
    for (const std::string& b : bars) f.evidence.push_back("  " + b);
  }
  f.evidence.push_back("kernel stack of the longest wait (" + FormatNs(static_cast<uint64_t>(rep.rep->dur)) +
                       " at " + Seconds(rep.rep->ts - window_.command_start_ns) + "):");
  for (const std::string& k : Kernel(rep.rep->kstack)) f.evidence.push_back("  " + k);
  if (!user.empty()) {
    f.evidence.push_back("user stack:");
    for (const std::string& u : user) f.evidence.push_back("  " + u);
  }
  if (rep.rep->woken && rep.rep->waker_kstack) {
    f.evidence.push_back("kernel stack of the wakeup:");
    for (const std::string& k : Kernel(rep.rep->waker_kstack)) f.evidence.push_back("  " + k);
  }
}

// A finding whose main root is another finding's own stall (a client's
// socket wait, and the server's sleep that delays its reply; a waiter on a
// lock, and the holder's fsync under it) is the same problem: it is merged
// into that finding, the root's own, which lists it and keeps the fix for
// the root. A root that is no stall of its own (another thread's work on a
// CPU) leaves the findings apart, each with its chain and a fix that
// points at the root.
std::vector<std::pair<Finding, StallDetail>> MergeByRoot(std::vector<std::pair<Finding, StallDetail>> found) {
  auto key = [](const StallDetail& d) { return d.roots.empty() ? std::string() : d.roots.front().root.Key(); };
  auto own = [](const StallDetail& d) {
    return !d.roots.empty() && std::find(d.tids.begin(), d.tids.end(), d.roots.front().root.tid) != d.tids.end();
  };
  std::map<std::string, size_t> owner;  // root key -> the first (most time) finding that is the root's own stall
  for (size_t i = 0; i < found.size(); ++i)
    if (own(found[i].second)) owner.emplace(key(found[i].second), i);
  std::vector<bool> merged(found.size());
  for (size_t i = 0; i < found.size(); ++i) {
    auto it = owner.find(key(found[i].second));
    if (it == owner.end() || it->second == i) continue;
    auto& primary = found[it->second];
    const Finding& f = found[i].first;
    std::string line = f.title + " (" + std::to_string(f.count) + "x, " + FormatNs(static_cast<uint64_t>(f.total_ns)) +
                       ")";
    primary.first.facts.emplace_back("stalls too", line);
    primary.first.links.insert(primary.first.links.end(), f.links.begin(), f.links.end());
    primary.second.stalls_too.push_back(line);
    primary.second.stalls_too_chains.push_back(found[i].second.roots.front().hops);
    merged[i] = true;
  }
  std::vector<std::pair<Finding, StallDetail>> out;
  for (size_t i = 0; i < found.size(); ++i) {
    if (merged[i]) continue;
    std::sort(found[i].first.links.begin(), found[i].first.links.end(),
              [](const FindingLink& a, const FindingLink& b) { return a.ts < b.ts; });
    out.push_back(std::move(found[i]));
  }
  return out;
}

// Whether a file operation waited in a sync the program asked for:
// recorded (fsync, fdatasync, sync_file_range) or seen on its kernel stacks.
bool Synced(const Episode& e) {
  static const std::set<std::string> kInferredSyncs = {"msync", "syncfs", "sync"};
  return e.synced >= 0 || std::any_of(e.inferred.begin(), e.inferred.end(),
                                      [](const std::string& c) { return kInferredSyncs.count(c) > 0; });
}

// Pauses on a CPU in syscalls (oncpu_stalls.h). Such a pause that holds
// every off-CPU stall of its thread it overlaps (a write blocked now and
// then while it copies) is the stall, and they are part of it; one that an
// off-CPU stall reaches beyond (the write before an fsync's wait) is part of
// that stall, which is reported as before. But a file operation's stall
// that began in the pause, moved all its data in it and synced nothing (the
// open, the write of what the pause made held by dirty-page throttling, then
// only the close, and an unlink that waits for the discard of the blocks
// writeback gave the file) is the pause's, even where it ends after it: its
// waits follow from the data the pause made, and the same checkpoint is one
// cause whether writeback kept up or not. The pause then lasts to the
// stall's end, and a later pause of the thread inside it is part of it. A
// sync is a wait for the disk the program asked for, and reads or writes
// after the pause are I/O of their own: those stay the I/O stall's.
Status Analysis::AddOnCpuStalls(std::vector<std::pair<Finding, StallDetail>>& found) {
  OnCpuInputs in;
  in.db = &db_;
  in.run_id = q_.run_id;
  in.threshold_ns = q_.threshold_ns;
  in.command_start_ns = window_.command_start_ns;
  in.wall_ns = report_.wall_ns;
  in.sample_period_ns = sample_period_ns_;
  in.threads = &threads_;
  in.comm = [this](int64_t tid, int64_t pid, int64_t ts) { return Comm(tid, pid, ts); };
  in.kernel = [this](int64_t stack) -> const std::vector<std::string>& { return Kernel(stack); };
  in.user = [this](int64_t stack, int64_t pid, int64_t ts) { return names_->User(stack, pid, ts); };
  in.call_name = [this](int64_t nr) { return CallName(nr); };
  in.path = [this](uint64_t dev, uint64_t ino, int64_t ts) { return paths_->At(dev, ino, ts); };
  auto episodes = FindOnCpuEpisodes(in);
  if (!episodes) return episodes.error();
  std::vector<OnCpuEpisode> kept;
  std::vector<bool> absorbed(stalls_.size());
  // Each thread's stalls, so an episode looks only at its own thread's (a
  // host-wide run has thousands of both).
  std::map<int64_t, std::vector<size_t>> of_thread;
  for (size_t i = 0; i < stalls_.size(); ++i) of_thread[stalls_[i].tid].push_back(i);
  static const std::vector<size_t> kNoStalls;
  for (OnCpuEpisode& ep : *episodes) {
    if (!kept.empty() && kept.back().tid == ep.tid && ep.start < kept.back().end) {
      OnCpuEpisode& last = kept.back();
      last.end = std::max(last.end, ep.end);
      last.in_calls += ep.in_calls;
      last.oncpu += ep.oncpu;
      last.calls.insert(last.calls.end(), ep.calls.begin(), ep.calls.end());
      continue;
    }
    auto mine = of_thread.find(ep.tid);
    const std::vector<size_t>& own = mine == of_thread.end() ? kNoStalls : mine->second;
    int64_t pause_end = ep.end;
    for (size_t i : own) {
      const Stall& s = stalls_[i];
      if (s.ep && !Synced(*s.ep) && s.start >= ep.start && s.ep->data_end > 0 && s.ep->data_end <= pause_end)
        ep.end = std::max(ep.end, s.end);
    }
    std::vector<size_t> over;
    bool holds = true;
    for (size_t i : own) {
      const Stall& s = stalls_[i];
      if (s.end <= ep.start || s.start >= ep.end) continue;
      over.push_back(i);
      holds = holds && s.start >= ep.start && s.end <= ep.end;
    }
    if (!holds) continue;
    for (size_t i : over) absorbed[i] = true;
    kept.push_back(std::move(ep));
  }
  std::vector<Stall> rest;
  for (size_t i = 0; i < stalls_.size(); ++i)
    if (!absorbed[i]) rest.push_back(std::move(stalls_[i]));
  stalls_ = std::move(rest);
  auto more = OnCpuFindings(in, kept);
  found.insert(found.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  return {};
}

Result<StallsReport> Analysis::Run() {
  report_.run_id = q_.run_id;
  report_.threshold_ns = q_.threshold_ns;
  SYSPGO_TRY(LoadRun());
  SYSPGO_TRY(LoadIntervals());
  SYSPGO_TRY(LoadNames());
  SYSPGO_TRY(ScanCalls());
  Assign();
  MakeStalls();
  std::map<std::string, std::vector<const Stall*>> groups;
  for (Stall& s : stalls_) {
    Describe(s);
    SYSPGO_TRY(AddBlock(s));
  }
  std::vector<std::pair<Finding, StallDetail>> found;
  SYSPGO_TRY(AddOnCpuStalls(found));
  for (const Stall& s : stalls_) groups[s.key].push_back(&s);
  for (auto& [key, occ] : groups) {
    std::sort(occ.begin(), occ.end(), [](const Stall* a, const Stall* b) {
      return std::tie(a->start, a->tid) < std::tie(b->start, b->tid);
    });
    StallDetail d;
    Finding f = MakeFinding(occ, &d);
    found.emplace_back(std::move(f), std::move(d));
  }
  auto by_time = [](auto& a, auto& b) {
    return a.first.total_ns != b.first.total_ns ? a.first.total_ns > b.first.total_ns : a.first.title < b.first.title;
  };
  std::sort(found.begin(), found.end(), by_time);
  found = MergeByRoot(std::move(found));
  found = MergeByWorkRoot(std::move(found), report_.wall_ns, window_.target_pid);
  std::sort(found.begin(), found.end(), by_time);
  for (auto& [f, d] : found) AddWork(f, d);
  SYSPGO_TRY(CommandPath());
  for (auto& [f, d] : found) {
    report_.findings.push_back(std::move(f));
    report_.details.push_back(std::move(d));
  }
  return std::move(report_);
}

using Json = nlohmann::ordered_json;

Json HopsJson(const std::vector<PathHop>& hops) {
  Json out = Json::array();
  for (const PathHop& h : hops)
    out.push_back({{"tid", h.tid}, {"pid", h.pid}, {"comm", h.comm}, {"doing", h.doing}, {"ts", h.ts}, {"dur", h.dur}});
  return out;
}

// Each root with its time and the chain that leads there.
Json RootsJson(const std::vector<RootShare>& roots) {
  Json out = Json::array();
  for (const RootShare& r : roots) {
    Json j = {{"kind", r.root.KindName()},
              {"tid", r.root.tid},
              {"pid", r.root.pid},
              {"comm", r.root.comm},
              {"what", r.root.what},
              {"detail", r.root.detail},
              {"ns", r.ns},
              {"hops", HopsJson(r.hops)}};
    // A work root: where its time went (work_breakdown.h).
    if (r.root.kind == PathRoot::Kind::kWork) j["work"] = WorkJson(r.work);
    out.push_back(std::move(j));
  }
  return out;
}

Json KernelWorkJson(const std::vector<std::pair<std::string, int64_t>>& work) {
  Json out = Json::array();
  for (auto& [what, ns] : work) out.push_back({{"what", what}, {"ns", ns}});
  return out;
}

Json DetailJson(const StallDetail& d) {
  return {{"cause", d.cause},
          {"comm", d.comm},
          {"main_thread", d.main_thread},
          {"pids", d.pids},
          {"tids", d.tids},
          {"syscalls", d.syscalls},
          {"inferred_syscalls", d.inferred_syscalls},
          {"file", d.file},
          {"paths", d.paths},
          {"bytes_written", d.bytes_written},
          {"bytes_read", d.bytes_read},
          {"synced_bytes", d.synced_bytes},
          {"offcpu_ns", d.offcpu_ns},
          {"blocked_ns", d.blocked_ns},
          {"runnable_ns", d.runnable_ns},
          {"block_requests", d.block_requests},
          {"block_bytes", d.block_bytes},
          {"block_bytes_by_op", d.block_bytes_by_op},
          {"wait", d.wait},
          {"waker", d.waker},
          {"period_ns", d.period_ns},
          {"period_steps", d.period_steps},
          {"step_ns", d.step_ns},
          {"roots", RootsJson(d.roots)},
          {"chain", HopsJson(d.roots.empty() ? std::vector<PathHop>{} : d.roots.front().hops)},
          {"stalls_too", d.stalls_too},
          {"oncpu_ns", d.oncpu_ns},
          {"kernel_work", KernelWorkJson(d.kernel_work)}};
}

// A work row's breakdown, under its root: where that time went.
std::string WorkRows(const WorkBreakdown& w, size_t col) {
  std::string out, pad(col, ' ');
  if (std::string fn = WorkFunctionsText(w); !fn.empty()) out += pad + WrapText(TerminalSafe("in " + fn), col) + "\n";
  if (std::string pr = WorkProcessesText(w); !pr.empty()) out += pad + WrapText(TerminalSafe("in " + pr), col) + "\n";
  return out;
}

// What bounds the command: its main thread's time from release to exit,
// by root: share and time, then the root and the threads it went through,
// wrapped under it (a root names paths: a table's column would not fit).
std::string CommandPathText(const StallsReport& r) {
  if (r.command_path.empty()) return "";
  int64_t all = 0;
  for (const RootShare& s : r.command_path) all += s.ns;
  constexpr size_t kRootCol = 21;  // past the share and time columns
  std::string out = "\nwhat bounds the command: its main thread's (tid " + std::to_string(r.command_tid) +
                    ") critical path from start to exit, " +
                    FormatNs(static_cast<uint64_t>(all)) + ", by root:\n" + "  share        time  root (through)\n";
  size_t shown = 0;
  for (const RootShare& s : r.command_path) {
    if (shown == 8 || (shown >= 3 && s.ns * 100 < all)) break;  // the few that matter
    ++shown;
    std::vector<std::string> via;
    for (const PathHop& h : s.hops) via.push_back(h.comm + " (tid " + std::to_string(h.tid) + ")");
    char head[64];
    snprintf(head, sizeof head, "%7s  %10s  ", FormatShare(static_cast<double>(s.ns) / all).c_str(),
             FormatNs(static_cast<uint64_t>(s.ns)).c_str());
    std::string root = s.root.Text() + (via.empty() ? "" : " (through " + Join(via, " <- ") + ")");
    out += head + WrapText(TerminalSafe(root), kRootCol) + "\n";
    out += WorkRows(s.work, kRootCol);
  }
  return out;
}

}  // namespace

Result<StallsReport> FindStalls(Db& db, const StallsQuery& q) { return Analysis(db, q).Run(); }

Result<std::string> StallsReportText(Db& db, const RunInfo& run, const StallsQuery& q, bool json, bool verbose,
                                     bool all) {
  auto r = FindStalls(db, q);
  if (!r) return r.error();
  if (json) {
    Json findings = Json::array();
    for (size_t i = 0; i < r->findings.size(); ++i)
      findings.push_back(FindingJson(r->findings[i], DetailJson(r->details[i])));
    Json j = {{"run", r->run_id},
              {"wall_ns", r->wall_ns},
              {"threshold_ns", r->threshold_ns},
              {"offcpu_intervals", r->intervals},
              {"command_path", {{"tid", r->command_tid}, {"roots", RootsJson(r->command_path)}}},
              {"findings", std::move(findings)}};
    return JsonDocument(j);
  }
  int64_t stalls = 0;
  for (const Finding& f : r->findings) stalls += f.count;
  std::string out = RunHeadline(run);
  out += "stalls: periods a traced thread was off-CPU for " + FormatNs(static_cast<uint64_t>(q.threshold_ns)) +
         " or more (--threshold); wall time " + Seconds(r->wall_ns) + "\n";
  if (r->findings.empty())
    return out + "none: " + std::to_string(r->intervals) + " off-CPU intervals were recorded, the longest " +
           FormatNs(static_cast<uint64_t>(r->longest_ns)) + ".\n";
  out += std::to_string(r->findings.size()) + (r->findings.size() == 1 ? " finding" : " findings") + " from " +
         std::to_string(stalls) + (stalls == 1 ? " stall" : " stalls") + ", most time first" +
         (verbose ? "" : " (-v shows the evidence)") + ":\n";
  return out + FindingsText(r->findings, verbose, all) + CommandPathText(*r);
}

}  // namespace syspgo
