//===- faults_group.cc - loader for bpf/faults.bpf.c: user page faults ---===//
// The kernel sends a fault when it starts and, separately, what the same
// thread did inside it (fault-around range, ->fault handler, pages read in).
// Events of one thread arrive in order, so each thread's latest fault is
// held here until its next fault (or the end of the run) and then written
// as one page_fault row with those outcomes folded in.
// With --detail lean (the default) a minor fault on a file whose pages (its
// own, fault-around's) earlier faults of the run had all touched is only
// counted (page_fault_total): a command that starts processes again and
// again faults the same library pages each time.
#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bpf/faults.h"
#include "collect/btf_hooks.h"
#include "collect/bpf_maps.h"
#include "syspgo_bpf.skel.h"

namespace syspgo {
namespace {

// Threads with a fault held back; past this the oldest are written early.
constexpr size_t kMaxPending = 65536;
// A fault's own events follow it within the fault; one this much older than
// the newest event seen is complete. Writing it then, rather than at the
// thread's next fault, keeps the faults of exited threads from piling up
// over a long run.
constexpr uint64_t kCompleteAfterNs = 10'000'000'000;

struct PendingFault {
  uint64_t ts;  // kernel ns (event's hdr.ts)
  uint32_t pid, tid;
  uint64_t addr, ip, error_code, dev, ino, vm_start, vm_flags;
  int64_t pgoff;
  bool major = false, filemap = false;
  int64_t around_first = -1, around_last = -1;
};

class FaultsGroup : public ProbeGroup {
 public:
  FaultsGroup() : ProbeGroup(SYSPGO_GROUP_FAULTS) {}

  void DeclareTables(Writer& w) override {
    fault_ = w.Table("page_fault", {"ts", "pid", "tid", "addr", "ip", "error_code", "dev", "ino", "pgoff",
                                    "vm_start", "vm_flags", "major", "filemap", "around_first", "around_last"});
    total_ = w.Table("page_fault_total", {"dev", "ino", "faults", "major"}, "INSERT OR REPLACE");
    ledger_ = w.Table("run_aggregate", {"probe_group", "map", "entries", "overflow"}, "INSERT OR REPLACE");
  }

  // The counts that changed since the last drain; the ledger row from the
  // first drain on tells analyses the tier (analyze/run.h RecordingTier).
  void Drain(Writer& w) override {
    if (latest_ts_ > kCompleteAfterNs) FlushOlderThan(w, latest_ts_ - kCompleteAfterNs);
    if (!lean_) return;
    for (auto& [key, c] : totals_) {
      if (c.written) continue;
      w.Row(total_).I(key.first).I(key.second).I(c.faults).I(c.major);
      c.written = true;
    }
    w.Row(ledger_).T(name()).T("page_fault_total").I(static_cast<int64_t>(totals_.size())).I(0);
  }

  void Handle(const void* data, size_t size, Writer& w) override {
    auto* h = static_cast<const syspgo_hdr*>(data);
    latest_ts_ = std::max<uint64_t>(latest_ts_, h->ts);
    if (h->type == FAULTS_FAULT) {
      if (size < sizeof(faults_fault_event)) return;
      auto* e = static_cast<const faults_fault_event*>(data);
      auto it = pending_.find(h->tid);
      if (it != pending_.end()) Write(w, it->second);
      if (pending_.size() >= kMaxPending) FlushAll(w);
      pending_[h->tid] = PendingFault{h->ts, h->pid, h->tid, e->addr, e->ip, e->error_code, e->dev, e->ino,
                                      e->vm_start, e->vm_flags, e->pgoff};
      return;
    }
    if (size < sizeof(faults_follow_event)) return;
    auto* e = static_cast<const faults_follow_event*>(data);
    auto it = pending_.find(h->tid);
    if (it == pending_.end() || it->second.ts != e->fault_ts) return;  // its fault was already written
    PendingFault& f = it->second;
    switch (h->type) {
      case FAULTS_FILEMAP:
        f.filemap = true;
        if (f.pgoff < 0) {  // bpf_find_vma could not take mmap_lock: the hook knows the page
          f.dev = e->dev;
          f.ino = e->ino;
          f.pgoff = static_cast<int64_t>(e->first);
        }
        break;
      case FAULTS_MAP_PAGES:
        // A retried fault maps around twice; keep the union.
        f.around_first = f.around_first < 0 ? e->first : std::min<int64_t>(f.around_first, e->first);
        f.around_last = std::max<int64_t>(f.around_last, e->last);
        break;
      case FAULTS_ADDED:
        f.major = true;
        break;
    }
  }

  // Before the last Drain() (the collector calls Finish after it): write
  // the held faults, then their counts.
  void Finish(Writer& w) override {
    FlushAll(w);
    Drain(w);
  }

 protected:
  Status Configure(syspgo_bpf*, const GroupContext&) override {
    std::vector<std::string> missing = DisableMissingTracepoints();
    if (std::find(missing.begin(), missing.end(), "page_fault_user") != missing.end())
      return MakeError("probe group 'faults': this kernel has no exceptions:page_fault_user tracepoint (x86 only).");
    if (!missing.empty())
      note = "missing tracepoints " + JoinNames(missing) +
             ": faults are recorded without fault-around ranges / major-minor classification";
    return {};
  }

 private:
  void Write(Writer& w, const PendingFault& f) {
    bool file = f.ino != 0;
    if (lean_) {
      Count& c = totals_[{file ? static_cast<int64_t>(KernelDevToUser(f.dev)) : 0, static_cast<int64_t>(f.ino)}];
      ++c.faults;
      c.major += f.major;
      c.written = false;
      // The faulted page and fault-around's pages apart, as access order
      // reads them apart (a page used, pages mapped): a page mapped around
      // an earlier fault and faulted on later is a first use. Both are
      // marked, whichever decides.
      bool fresh = Touch(touched_, f.dev, f.ino, f.pgoff, f.pgoff);
      fresh = Touch(around_, f.dev, f.ino, f.around_first, f.around_last) || fresh;
      if (file && f.pgoff >= 0 && !f.major && !fresh) return;
    }
    w.Row(fault_)
        .I(static_cast<int64_t>(f.ts - start_ns_)).I(f.pid).I(f.tid)
        .I(static_cast<int64_t>(f.addr)).I(static_cast<int64_t>(w.KernelAddress(f.ip))).I(f.error_code)
        .I(file ? KernelDevToUser(f.dev) : 0).I(f.ino).I(f.pgoff)
        .I(static_cast<int64_t>(f.vm_start)).I(static_cast<int64_t>(f.vm_flags))
        .I(f.major).I(f.filemap).I(f.around_first).I(f.around_last);
  }

  void FlushAll(Writer& w) { FlushOlderThan(w, UINT64_MAX); }

  // Writes the held faults that began before `ts`, in time order, so a
  // run's rows do not depend on hash order.
  void FlushOlderThan(Writer& w, uint64_t ts) {
    std::vector<const PendingFault*> old;
    for (auto& [tid, f] : pending_)
      if (f.ts < ts) old.push_back(&f);
    std::sort(old.begin(), old.end(), [](auto* a, auto* b) { return a->ts < b->ts; });
    for (auto* f : old) Write(w, *f);
    if (old.size() == pending_.size()) {
      pending_.clear();
      return;
    }
    for (auto it = pending_.begin(); it != pending_.end();) it = it->second.ts < ts ? pending_.erase(it) : std::next(it);
  }

  // Marks pages [first, last] of a file touched (nothing for -1 or an
  // anonymous fault); true if any was not before. A page past 2^26 (256 GiB
  // into a file) is taken as new, unmarked: the bitmap stays small.
  using PageBits = std::map<std::pair<uint64_t, uint64_t>, std::vector<uint64_t>>;  // (dev, ino) -> bitmap
  static bool Touch(PageBits& pages, uint64_t dev, uint64_t ino, int64_t first, int64_t last) {
    if (!ino || first < 0 || last < first) return false;
    constexpr int64_t kMaxPage = int64_t{1} << 26;
    if (last >= kMaxPage) return true;
    std::vector<uint64_t>& bits = pages[{dev, ino}];
    if (bits.size() <= static_cast<size_t>(last >> 6)) bits.resize((last >> 6) + 1);
    bool fresh = false;
    for (int64_t p = first; p <= last; ++p) {
      uint64_t bit = uint64_t{1} << (p & 63);
      fresh = fresh || !(bits[p >> 6] & bit);
      bits[p >> 6] |= bit;
    }
    return fresh;
  }

  struct Count {
    int64_t faults = 0, major = 0;
    bool written = false;
  };

  uint64_t latest_ts_ = 0;  // the newest event's kernel ns
  int fault_ = -1, total_ = -1, ledger_ = -1;
  std::unordered_map<uint32_t, PendingFault> pending_;
  PageBits touched_, around_;  // pages faulted on, pages fault-around mapped
  std::map<std::pair<int64_t, int64_t>, Count> totals_;                     // (dev, ino) -> counts
};

}  // namespace

std::unique_ptr<ProbeGroup> MakeFaultsGroup() { return std::make_unique<FaultsGroup>(); }

}  // namespace syspgo
