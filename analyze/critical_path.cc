//===- critical_path.cc - a wait followed through its wakers to its root ---===//
#include "analyze/critical_path.h"

#include <algorithm>

#include "analyze/stall_rules.h"
#include "common/util.h"

namespace syspgo {
namespace {

using Kind = PathRoot::Kind;

// Deeper chains than this end in an "unknown" root: a real program's waits
// rarely pass through more than a few threads, and a chain this long is
// more likely a ping-pong the recursion should not follow forever.
constexpr size_t kMaxHops = 12;

// What ended a wait, told by the waker's kernel stack; the first rule whose
// frames appear wins. The task the wakeup ran on is then not the cause: an
// I/O completion or a timer interrupt lands on whatever task was current.
struct WakeRule {
  Kind kind;
  std::initializer_list<const char*> frames;
};
const WakeRule kWakeRules[] = {
    {Kind::kDisk, {"blk_mq_end_request", "blk_update_request", "bio_endio", "blk_mq_complete_request", "end_buffer_",
                   "folio_end_writeback", "end_page_writeback"}},
    {Kind::kTimer, {"hrtimer_wakeup", "process_timeout"}},
};

// A hard interrupt on the waker's stack: whatever it woke, the task it
// interrupted did not cause it. (A softirq run in process context, as a
// loopback send runs the receive path in the sender, has none of these.)
constexpr std::initializer_list<const char*> kHardIrqFrames = {
    "asm_common_interrupt", "common_interrupt", "__sysvec_", "asm_sysvec", "sysvec_", "handle_irq", "__handle_irq",
    "irq_exit"};

const char* KindWord(Kind k) {
  switch (k) {
    case Kind::kWork: return "work";
    case Kind::kCpu: return "cpu";
    case Kind::kDisk: return "disk";
    case Kind::kTimer: return "timer";
    case Kind::kInterrupt: return "interrupt";
    case Kind::kOutside: return "outside";
    case Kind::kUnknown: return "unknown";
  }
  return "unknown";
}

std::string Who(const std::string& comm, int64_t tid, int64_t pid, bool process = false) {
  return comm + (process ? " (pid " + std::to_string(pid) + ")" : " (tid " + std::to_string(tid) + ")");
}

}  // namespace

std::string PathRoot::KindName() const { return KindWord(kind); }

// By name, not tid: a thread started per request (or a pool's threads)
// sleeping the same sleep is one root, as stalls group by thread name.
std::string PathRoot::Key() const { return KindName() + "|" + comm + "|" + group + "|" + what; }

std::string PathRoot::Text() const {
  return KindName() + ": " + Who(comm, tid, pid, kind == Kind::kOutside) + " " + what +
         (detail.empty() ? "" : " (" + detail + ")");
}

std::string ChainText(const std::vector<PathHop>& hops, const PathRoot& root) {
  std::string out;
  for (const PathHop& h : hops)
    out += Who(h.comm, h.tid, h.pid) + " " + h.doing + " (" + FormatNs(static_cast<uint64_t>(h.dur)) + ") <- ";
  return out + Who(root.comm, root.tid, root.pid, root.kind == Kind::kOutside) + " " + root.what + " [" +
         root.KindName() + "]";
}

void CriticalPath::Add(std::vector<PathSegment>& out, const std::vector<PathHop>& hops, int64_t from, int64_t to,
                       PathRoot root) const {
  if (to <= from) return;
  if (hooks_.group) root.group = hooks_.group(root.pid);
  out.push_back({to - from, from, std::move(root), hops});
}

std::vector<PathSegment> CriticalPath::Explain(int64_t tid, int64_t pid, int64_t a, int64_t b) const {
  std::vector<PathSegment> out;
  std::vector<PathHop> hops;
  Walk(tid, pid, a, b, hops, out);
  return out;
}

void CriticalPath::Walk(int64_t tid, int64_t pid, int64_t a, int64_t b, std::vector<PathHop>& hops,
                        std::vector<PathSegment>& out, int64_t stack_at_b) const {
  if (b <= a) return;
  std::string comm = hooks_.comm(tid, pid, a);
  PathRoot work{Kind::kWork, tid, pid, comm, "runs on a CPU"};
  bool cycle = std::any_of(hops.begin(), hops.end(), [&](const PathHop& h) { return h.tid == tid; });
  if (cycle || hops.size() >= kMaxHops) {
    // Its time is being explained further up already (a cycle), or the
    // chain is too long to follow: count it as what it is at this hop.
    Add(out, hops, a, b,
        cycle ? work : PathRoot{Kind::kUnknown, tid, pid, comm, "is where the chain was cut (" +
                                                                    std::to_string(kMaxHops) + " hops)"});
    return;
  }
  auto it = threads_.find(tid);
  int64_t t = a;
  if (it != threads_.end()) {
    const Intervals& ivs = it->second;
    auto iv = std::lower_bound(ivs.begin(), ivs.end(), a, [](const Interval& x, int64_t v) { return x.end() <= v; });
    for (; iv != ivs.end() && iv->ts < b; ++iv) {
      int64_t s = std::max(a, iv->ts), e = std::min(b, iv->end());
      if (s > t) Add(out, hops, t, s, work);
      if (iv->blocked()) Blocked(*iv, s, e, hops, out);
      else Add(out, hops, s, e, {Kind::kCpu, tid, pid, comm, "is runnable without a CPU", hooks_.busy(*iv)});
      t = std::max(t, e);
    }
  }
  if (b > t) {
    // The work that ran up to the wakeup: what the waker's stack then shows.
    if (stack_at_b) work.detail = hooks_.user_stack(stack_at_b, pid, b);
    Add(out, hops, t, b, work);
  }
}

void CriticalPath::Blocked(const Interval& iv, int64_t s, int64_t e, std::vector<PathHop>& hops,
                           std::vector<PathSegment>& out) const {
  std::string comm = hooks_.comm(iv.tid, iv.pid, iv.ts);
  std::string doing = hooks_.doing(iv);
  if (!iv.woken) {
    Add(out, hops, s, e, {Kind::kUnknown, iv.tid, iv.pid, comm, doing + "; its wakeup was not recorded"});
    return;
  }
  int64_t w = std::clamp(iv.wake_ts, s, e);
  auto disk = [&] {
    std::string file = hooks_.file(iv);
    return PathRoot{Kind::kDisk, iv.tid, iv.pid, comm, "waits for disk I/O" + (file.empty() ? "" : " of " + file),
                    hooks_.disk_requests ? hooks_.disk_requests(iv) : ""};
  };
  Add(out, hops, w, e, {Kind::kCpu, iv.tid, iv.pid, comm, "was woken but waited for a CPU"});
  if (w <= s) return;
  const std::vector<std::string>& k = hooks_.kernel(iv.waker_kstack);
  for (const WakeRule& r : kWakeRules) {
    if (HasFrame(k, r.frames)) {
      Add(out, hops, s, w, r.kind == Kind::kDisk ? disk() : PathRoot{r.kind, iv.tid, iv.pid, comm, doing});
      return;
    }
  }
  if (iv.waker_pid == 0 || HasFrame(k, kHardIrqFrames)) {
    Add(out, hops, s, w, {Kind::kInterrupt, iv.tid, iv.pid, comm, doing + ", ended by an interrupt"});
    return;
  }
  if (iv.waker_tid == iv.tid) {
    Add(out, hops, s, w, {Kind::kUnknown, iv.tid, iv.pid, comm, doing + ", ended by itself"});
    return;
  }
  if (!hooks_.traced(iv.waker_tid)) {
    // An fsync waits for the journal thread (jbd2), which waits for the
    // disk; writeback runs in kworkers: the I/O path leaves the tree.
    if (hooks_.disk(iv))
      Add(out, hops, s, w, disk());
    else
      Add(out, hops, s, w, {Kind::kOutside, iv.waker_tid, iv.waker_pid, iv.waker_comm, "outside the traced tree"});
    return;
  }
  hops.push_back({iv.tid, iv.pid, comm, doing, iv.ts, iv.dur, iv.wake_ts});
  Walk(iv.waker_tid, iv.waker_pid, s, w, hops, out, iv.waker_ustack);
  hops.pop_back();
}

std::vector<RootShare> CriticalPath::ByRoot(const std::vector<PathSegment>& segments) {
  std::map<std::string, RootShare> by;
  std::map<std::string, int64_t> longest;
  for (const PathSegment& s : segments) {
    std::string key = s.root.Key();
    RootShare& r = by[key];
    r.ns += s.ns;
    if (s.root.kind == Kind::kWork) r.spans.push_back({s.root.tid, s.root.pid, s.from, s.from + s.ns});
    if (s.ns > longest[key]) {  // the longest segment speaks for the root: its thread, detail and chain
      longest[key] = s.ns;
      r.root = s.root;
      r.hops = s.hops;
    }
  }
  std::vector<RootShare> out;
  for (auto& [key, r] : by) out.push_back(std::move(r));
  std::stable_sort(out.begin(), out.end(), [](const RootShare& x, const RootShare& y) { return x.ns > y.ns; });
  return out;
}

}  // namespace syspgo
