//===- oncpu_stalls.cc - pauses a thread spends on a CPU in the kernel ---===//
#include "analyze/oncpu_stalls.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <set>

#include "analyze/data/oncpu.h"
#include "analyze/file_calls.h"
#include "analyze/file_paths.h"
#include "analyze/finding_print.h"
#include "analyze/stall_rules.h"
#include "analyze/text_join.h"
#include "common/util.h"

namespace syspgo {
namespace {

constexpr int64_t kJoinGapNs = 2'000'000;    // the thread's own time between two calls of one episode
constexpr double kPeriodTolerance = 0.25;    // gaps within 25% of their median are regular
constexpr int64_t kNrGetrandom = 318;        // its return is bytes made

// What the kernel did in a CPU sample, by the frames on its kernel stack:
// the first rule, in table order, with a frame that starts with one of
// `frames` names it. Work inside other work comes first (zeroing the pages
// a copy faulted in is zeroing, not copying).
struct WorkRule {
  std::initializer_list<const char*> frames;
  const char* what;
  const char* fix;
};

constexpr WorkRule kWorkRules[] = {
    {{"clear_page", "clear_huge_page", "folio_zero_user", "clear_user", "clear_subpage"}, "zeroing new pages",
     "reuse the buffer between steps instead of allocating fresh memory each time, which the kernel zeroes."},
    {{"try_to_free_pages", "do_try_to_free_pages", "shrink_", "try_to_free_mem_cgroup_pages", "mem_cgroup_handle_over"},
     "reclaiming memory (direct reclaim)",
     "the machine or the cgroup is short of memory: use less per step, or give it more memory."},
    {{"try_to_compact_pages", "compact_zone", "isolate_migratepages", "migrate_pages"}, "compacting memory",
     "large allocations need contiguous memory: allocate once and reuse, or use smaller pieces."},
    {{"native_queued_spin_lock_slowpath", "queued_spin_lock_slowpath", "__pv_queued_spin_lock"},
     "spinning on a kernel lock", "other tasks contend for the same kernel lock: do that work from fewer threads."},
    {{"get_random_bytes_user", "_get_random_bytes", "chacha", "crng_", "get_random_bytes"},
     "generating random bytes",
     "random bytes from the kernel cost CPU time in the caller: ask for fewer, or for data that need not be "
     "unpredictable use a fast generator in the process (numpy's, random.randbytes), or make them outside the loop."},
    {{"copy_page_from_iter", "generic_perform_write", "iomap_write_iter", "iomap_file_buffered_write"},
     "copying into the page cache",
     "the write copies every byte into the page cache before it returns: write less each time, or from a "
     "background thread so the loop does not wait for the copy."},
    {{"copy_page_to_iter", "filemap_read", "filemap_get_pages"}, "copying from the page cache",
     "the read copies every byte out of the page cache: read less, or map the file instead."},
    {{"truncate_inode_pages", "truncate_inode_folio", "evict", "delete_from_page_cache"},
     "dropping the file's cached pages",
     "deleting or truncating a large file frees its cached pages in the caller: reuse the file, or delete it from "
     "a background thread."},
    {{"zap_pte_range", "unmap_page_range", "unmap_vmas", "release_pages", "free_unref", "__free_pages", "folios_put",
      "free_pcppages_bulk"},
     "freeing memory", "memory freed and allocated again each step costs the kernel: reuse the buffers."},
    {{"handle_mm_fault", "do_anonymous_page", "__handle_mm_fault"}, "handling page faults",
     "the call faults in fresh memory: touch or reuse the buffer ahead of the loop."},
};

// What a sample's kernel stack says the kernel did, and the rule (or null).
std::pair<std::string, const WorkRule*> WorkOf(const std::vector<std::string>& k) {
  for (const WorkRule& r : kWorkRules)
    if (HasFrame(k, r.frames)) return {r.what, &r};
  for (const std::string& f : k)
    if (f.rfind("0x", 0) != 0 && f.rfind("asm_", 0) != 0) return {"in " + f, nullptr};
  return {"in code without a symbol", nullptr};
}

// Time the thread spent off a CPU in [a, b): asleep (`blocked`) or
// runnable without a CPU.
int64_t OffCpu(const Intervals& ivs, int64_t a, int64_t b, bool blocked) {
  // A thread's intervals do not overlap: only the one before the first that
  // starts at a or later can reach into [a, b).
  auto it = std::lower_bound(ivs.begin(), ivs.end(), a, [](const Interval& iv, int64_t t) { return iv.ts < t; });
  if (it != ivs.begin()) --it;
  int64_t ns = 0;
  for (; it != ivs.end() && it->ts < b; ++it)
    if (it->blocked() == blocked && it->end() > a) ns += std::min(it->end(), b) - std::max(it->ts, a);
  return ns;
}

std::string Seconds(int64_t ns) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(ns) / 1e9);
  return buf;
}

// Bytes a call made or moved: a read's or write's count, getrandom's.
int64_t CallBytes(const OnCpuCall& c) {
  if (IsWriteCall(c.nr) || IsReadCall(c.nr)) return c.file_ret > 0 ? c.file_ret : std::max<int64_t>(c.ret, 0);
  return c.nr == kNrGetrandom ? std::max<int64_t>(c.ret, 0) : 0;
}

bool RegularFile(const OnCpuCall& c) {
  int64_t fmt = c.kind & SYSPGO_S_IFMT;
  return c.ino != 0 && (fmt == SYSPGO_S_IFREG || fmt == SYSPGO_S_IFBLK);
}

// Whether a call moved bytes of a regular file (a read or write that
// returned some): a wait in it is for the data itself, not for an event.
bool MovedFileData(const OnCpuCall& c) {
  return RegularFile(c) && (IsWriteCall(c.nr) || IsReadCall(c.nr)) && CallBytes(c) > 0;
}

// One episode with what the finding needs of it.
struct OnCpuStall {
  const OnCpuEpisode* ep = nullptr;
  std::string who, path, key;
  std::vector<std::string> order;                            // call names, in order of first use
  std::map<std::string, std::pair<int64_t, int64_t>> calls;  // name -> (count, ns in them)
  std::map<std::string, int64_t> bytes;                      // name -> bytes made or moved
  int64_t written = 0, read = 0, blocked = 0, runnable = 0;
  std::map<std::string, int64_t> waits;  // what it waited for -> ns
};

OnCpuStall Describe(const OnCpuInputs& in, const OnCpuEpisode& ep) {
  OnCpuStall s;
  s.ep = &ep;
  s.who = in.comm(ep.tid, ep.pid, ep.start) + (ep.tid == ep.pid ? " (main thread)" : " (thread)");
  for (const OnCpuCall& c : ep.calls) {
    std::string name = in.call_name(c.nr);
    if (!s.calls.count(name)) s.order.push_back(name);
    auto& n = s.calls[name];
    ++n.first;
    n.second += c.dur;
    s.bytes[name] += CallBytes(c);
    if (IsWriteCall(c.nr)) s.written += CallBytes(c);
    if (IsReadCall(c.nr)) s.read += CallBytes(c);
    if (s.path.empty() && RegularFile(c)) s.path = in.path(c.dev, c.ino, c.ts);
  }
  auto t = in.threads->find(ep.tid);
  if (t != in.threads->end()) {
    for (const Interval& iv : t->second) {
      if (iv.end() <= ep.start || iv.ts >= ep.end) continue;
      int64_t ns = std::min(iv.end(), ep.end) - std::max(iv.ts, ep.start);
      (iv.blocked() ? s.blocked : s.runnable) += ns;
      if (!iv.blocked()) continue;
      const std::vector<std::string>& k = in.kernel(iv.kstack);
      s.waits[ClassifyWait(true, k, StackSyscall(k), 0).what] += ns;
    }
  }
  // The calls that made or moved bytes name the operation; whether a
  // munmap or unlink after it ran long enough to be recorded varies.
  std::vector<std::string> named;
  for (const std::string& c : s.order)
    if (s.bytes[c] > 0) named.push_back(c);
  s.key = s.who + "|" + Join(named.empty() ? s.order : named, "+") + "|" + PathShape(s.path);
  return s;
}

// Time split by what the kernel did, from the CPU samples inside the stalls.
struct KernelWork {
  std::map<std::string, int64_t> samples;  // what -> samples
  std::map<std::string, const WorkRule*> rules;
  int64_t total = 0;
  int64_t user_stack = 0, user_pid = 0, user_ts = 0;  // one sample's user stack: where the program called
};

KernelWork SampleWork(Db& db, const OnCpuInputs& in, const std::vector<const OnCpuStall*>& occ) {
  KernelWork w;
  for (const OnCpuStall* s : occ) {
    const OnCpuEpisode& ep = *s->ep;
    (void)data::VisitKernelSamples(db, in.run_id, ep.tid, ep.start, ep.end, [&](Stmt& st) {
      auto [what, rule] = WorkOf(in.kernel(st.Int(0)));
      w.samples[what] += st.Int(1);
      w.rules[what] = rule;
      w.total += st.Int(1);
      if (!w.user_stack && st.Int(2)) {
        w.user_stack = st.Int(2);
        w.user_pid = ep.pid;
        w.user_ts = ep.start;
      }
    });
  }
  return w;
}

std::vector<std::pair<std::string, int64_t>> MostFirst(const std::map<std::string, int64_t>& m) {
  std::vector<std::pair<std::string, int64_t>> v(m.begin(), m.end());
  std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second > b.second || (a.second == b.second && a.first < b.first); });
  return v;
}

struct Period {
  int64_t ns = 0, steps = 0, step_ns = 0;
  std::string text;
};

// The syscall a thread's step ends in: the one it sleeps in the same number
// of times (k >= 2) between every two stalls, give or take one.
std::pair<std::string, int64_t> StepMarker(const OnCpuInputs& in, const std::vector<const OnCpuStall*>& occ,
                                           int64_t* step_ns) {
  auto t = in.threads->find(occ.front()->ep->tid);
  if (t == in.threads->end()) return {};
  std::map<std::string, std::vector<int64_t>> counts;  // syscall -> per gap, its sleeps
  std::map<std::string, std::vector<int64_t>> lengths;
  for (size_t g = 1; g < occ.size(); ++g) {
    for (const Interval& iv : t->second) {
      if (iv.ts < occ[g - 1]->ep->end || iv.ts >= occ[g]->ep->start) continue;
      if (!iv.blocked() || iv.dur < in.threshold_ns) continue;
      std::string sc = StackSyscall(in.kernel(iv.kstack));
      if (sc.empty()) continue;
      auto& c = counts[sc];
      c.resize(occ.size() - 1);
      ++c[g - 1];
      lengths[sc].push_back(iv.dur);
    }
  }
  std::pair<std::string, int64_t> best;
  size_t best_exact = 0;
  for (auto& [sc, c] : counts) {
    int64_t k = Median(c);
    size_t exact = 0;
    bool fits = k >= 2;
    for (int64_t n : c) {
      fits = fits && std::abs(n - k) <= 1;
      exact += n == k;
    }
    // Most gaps exact, the others off by one (a step's sleep cut short,
    // or its off-CPU record lost).
    if (!fits || exact * 2 <= c.size() || exact <= best_exact) continue;
    best = {sc, k};
    best_exact = exact;
    *step_ns = Median(lengths[sc]);
  }
  return best;
}

Period FindPeriod(const OnCpuInputs& in, const std::vector<const OnCpuStall*>& occ) {
  Period p;
  std::set<int64_t> tids;
  for (const OnCpuStall* s : occ) tids.insert(s->ep->tid);
  if (occ.size() < 3 || tids.size() != 1) return p;
  std::vector<int64_t> gaps, free;
  for (size_t i = 1; i < occ.size(); ++i) {
    gaps.push_back(occ[i]->ep->start - occ[i - 1]->ep->start);
    free.push_back(occ[i]->ep->start - occ[i - 1]->ep->end);
  }
  int64_t med = Median(gaps), free_med = Median(free);
  bool regular = free_med > 0;
  for (int64_t g : free) regular = regular && std::abs(g - free_med) <= kPeriodTolerance * static_cast<double>(free_med);
  auto [marker, steps] = StepMarker(in, occ, &p.step_ns);
  std::string times = std::to_string(occ.size()) + " times";
  std::string every = regular ? "every " + Seconds(med) : "about every " + Seconds(med) + " (unevenly)";
  if (regular) p.ns = med;
  if (steps) {
    p.steps = steps;
    p.text = "every " + Ordinal(steps) + " step, " + times + ", " + every + ": " + std::to_string(steps - 1) +
             " steps without it in between; each step ends in a " + marker + " of about " +
             FormatNs(static_cast<uint64_t>(p.step_ns));
  } else if (regular) {
    p.text = every + " (" + times + ", evenly spaced)";
  }
  return p;
}

}  // namespace

Result<std::vector<OnCpuEpisode>> FindOnCpuEpisodes(const OnCpuInputs& in) {
  Db& db = *in.db;
  std::vector<OnCpuEpisode> out;
  if (!data::HasOnCpuSyscalls(db)) return out;
  OnCpuEpisode cur;
  static const Intervals kNone;
  // A pause, not a sleep: the thread was on a CPU the threshold or more of
  // it. A sleep counted a tick on-CPU is not; nor is time it was runnable
  // while other tasks had the CPUs, which is the machine's contention (its
  // own finding when long enough), not work of the call: on a loaded
  // machine a short munmap, preempted, would be a pause.
  auto close = [&] {
    auto t = in.threads->find(cur.tid);
    int64_t oncpu = OnCpu(t == in.threads->end() ? kNone : t->second, cur.start, cur.end);
    if (!cur.calls.empty() && oncpu >= in.threshold_ns) out.push_back(std::move(cur));
    cur = OnCpuEpisode{};
  };
  SYSPGO_TRY(data::VisitOnCpuSyscalls(db, in.run_id, [&](Stmt& st) {
    OnCpuCall c{st.Int(0), st.Int(1), st.Int(2), st.Int(5), st.Int(6), st.Int(7),
                static_cast<uint64_t>(st.Int(8)), static_cast<uint64_t>(st.Int(9)), st.Int(10), st.Int(11)};
    int64_t tid = st.Int(4);
    auto t = in.threads->find(tid);
    const Intervals& ivs = t == in.threads->end() ? kNone : t->second;
    // Off-CPU time between two calls is no gap (preemption must not split
    // one pause), but a sleep of the thread's own there that is a stall
    // (a step's sleep) ends the pause. A shorter one (an openat waiting
    // for the journal of a busy disk) is part of it.
    if (!cur.calls.empty() && (cur.tid != tid || OnCpu(ivs, cur.end, c.ts) >= kJoinGapNs ||
                               OffCpu(ivs, cur.end, c.ts, /*blocked=*/true) >= in.threshold_ns))
      close();
    // A call the thread spent mostly neither on a CPU nor runnable is a
    // wait, not work on the CPU: it ends the pause. Its on-CPU time can
    // still pass the recording bar (the kernel adds the user time before
    // the call to the task's runtime only when the thread is scheduled
    // out), and it is judged by its own on-CPU time, not by the off-CPU
    // record alone: a sleep whose record was lost still counts.
    bool waited = 2 * (c.dur - c.oncpu - OffCpu(ivs, c.ts, c.ts + c.dur, false)) > c.dur;
    // One that moved a file's bytes waited for the data the pause made or
    // needs (the write of the random bytes held by dirty-page throttling
    // until writeback caught up): it is the pause's last call, its wait a
    // wait of the pause, so a checkpoint whose write was throttled is the
    // same cause as those whose write was not. One that moved nothing
    // (fsync, a sleep, a futex), or that no pause came before, is no part
    // of one.
    if (waited && (cur.calls.empty() || !MovedFileData(c))) {
      close();
      return;
    }
    if (cur.calls.empty()) {
      cur.tid = tid;
      cur.pid = st.Int(3);
      cur.start = c.ts;
    }
    cur.end = std::max(cur.end, c.ts + c.dur);
    cur.in_calls += c.dur;
    cur.oncpu += c.oncpu;
    cur.calls.push_back(c);
    if (waited) close();
  }));
  close();
  return out;
}

namespace {

// The calls of all occurrences, in order of first use.
std::vector<std::string> CallOrder(const std::vector<const OnCpuStall*>& occ) {
  std::vector<std::string> out;
  for (const OnCpuStall* s : occ)
    for (const std::string& c : s->order)
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  return out;
}

// "getrandom (1.47 s, 50.0 MiB), write (310 ms, 50.0 MiB)": each call with
// its mean time and bytes per occurrence.
std::string CallsText(const std::vector<const OnCpuStall*>& occ) {
  std::map<std::string, std::pair<int64_t, int64_t>> calls;
  std::map<std::string, int64_t> bytes;
  for (const OnCpuStall* s : occ) {
    for (auto& [name, c] : s->calls) {
      calls[name].first += c.first;
      calls[name].second += c.second;
    }
    for (auto& [name, b] : s->bytes) bytes[name] += b;
  }
  int64_t n = static_cast<int64_t>(occ.size());
  std::vector<std::string> parts;
  for (const std::string& name : CallOrder(occ)) {
    int64_t count = (calls[name].first + n - 1) / n;
    std::string p = name + (count > 1 ? " x" + std::to_string(count) : "") + " (" +
                    FormatNs(static_cast<uint64_t>(calls[name].second / n));
    if (bytes[name] > 0) p += ", " + FormatBytes(static_cast<uint64_t>(bytes[name] / n));
    parts.push_back(p + ")");
  }
  return Join(parts, ", ") + (n > 1 ? ", per occurrence" : "");
}

// "generating random bytes 71% (4.2 s), copying into the page cache 20%
// (1.2 s)", from the samples; the main work's rule for the fix.
std::string WorkText(const KernelWork& w, int64_t period_ns, StallDetail* d, const WorkRule** main) {
  std::vector<std::string> parts;
  for (auto& [what, n] : MostFirst(w.samples)) {
    if (!*main) *main = w.rules.at(what);
    d->kernel_work.emplace_back(what, n * period_ns);
    parts.push_back(what + " " + FormatShare(static_cast<double>(n) / static_cast<double>(w.total)) + " (" +
                    FormatNs(static_cast<uint64_t>(n * period_ns)) + ")");
  }
  return Join(parts, "; ", 4) + ", from " + std::to_string(w.total) + " CPU samples in the kernel";
}

void AddTimeFacts(const OnCpuInputs& in, const std::vector<const OnCpuStall*>& occ, Finding& f, StallDetail* d,
                  const WorkRule** main) {
  std::map<std::string, int64_t> waits;
  for (const OnCpuStall* s : occ) {
    d->oncpu_ns += s->ep->oncpu;
    d->blocked_ns += s->blocked;
    d->runnable_ns += s->runnable;
    for (auto& [what, ns] : s->waits) waits[what] += ns;
  }
  d->offcpu_ns = d->blocked_ns + d->runnable_ns;
  f.facts.emplace_back("on-CPU", FormatNs(static_cast<uint64_t>(d->oncpu_ns)) + " in the kernel, of " +
                                     FormatNs(static_cast<uint64_t>(f.total_ns)) + " in the calls");
  KernelWork w = SampleWork(*in.db, in, occ);
  if (w.total > 0 && in.sample_period_ns > 0)
    f.facts.emplace_back("kernel work", WorkText(w, in.sample_period_ns, d, main));
  else
    f.facts.emplace_back("kernel work", "not known: no CPU samples in the kernel (record with the cpu group on)");
  if (d->offcpu_ns > 0) {
    std::vector<std::string> parts;
    for (auto& [what, ns] : MostFirst(waits)) parts.push_back(what + " (" + FormatNs(static_cast<uint64_t>(ns)) + ")");
    f.facts.emplace_back("off-CPU", FormatNs(static_cast<uint64_t>(d->offcpu_ns)) + ": " +
                                        FormatNs(static_cast<uint64_t>(d->blocked_ns)) + " waiting" +
                                        (parts.empty() ? "" : " for " + Join(parts, "; ", 3)) + ", " +
                                        FormatNs(static_cast<uint64_t>(d->runnable_ns)) + " runnable without a CPU");
  }
  if (w.user_stack) {
    std::vector<std::string> user = in.user(w.user_stack, w.user_pid, w.user_ts);
    if (!user.empty()) f.facts.emplace_back("user stack", Join(user, " < ", 6));
  }
}

// ", waiting 310 ms (most for dirty-page throttling: ...)": what an
// occurrence that waited a stall's worth waited for most, so the one whose
// write writeback held up shows beside those it did not.
std::string OccurrenceWait(const OnCpuInputs& in, const OnCpuStall& s) {
  if (s.blocked < in.threshold_ns || s.waits.empty()) return "";
  return ", waiting " + FormatNs(static_cast<uint64_t>(s.blocked)) + " (most for " + MostFirst(s.waits).front().first +
         ")";
}

Finding MakeFinding(const OnCpuInputs& in, const std::vector<const OnCpuStall*>& occ, StallDetail* d) {
  const OnCpuEpisode& first = *occ.front()->ep;
  Finding f;
  f.kind = "stall";
  std::set<int64_t> pids, tids;
  std::vector<std::string> paths;
  std::vector<int64_t> written, read;
  for (const OnCpuStall* s : occ) {
    pids.insert(s->ep->pid);
    tids.insert(s->ep->tid);
    f.occurrences.push_back({s->ep->start, s->ep->end - s->ep->start, s->ep->tid});
    f.total_ns += s->ep->end - s->ep->start;
    f.worst_ns = std::max(f.worst_ns, s->ep->end - s->ep->start);
    if (!s->path.empty() && std::find(paths.begin(), paths.end(), s->path) == paths.end()) paths.push_back(s->path);
    written.push_back(s->written);
    read.push_back(s->read);
  }
  int64_t n = static_cast<int64_t>(occ.size());
  f.count = n;
  f.share = in.wall_ns > 0 ? static_cast<double>(f.total_ns) / static_cast<double>(in.wall_ns) : 0;
  d->cause = "kernel-cpu";
  d->comm = in.comm(first.tid, first.pid, first.start);
  d->main_thread = first.tid == first.pid;
  d->pids.assign(pids.begin(), pids.end());
  d->tids.assign(tids.begin(), tids.end());
  d->syscalls = CallOrder(occ);
  d->paths = paths;
  d->file = CommonShape(paths);
  d->bytes_written = Median(written);
  d->bytes_read = Median(read);
  std::string thread = d->comm + (d->main_thread ? ", the main thread" : "") + " (pid " + std::to_string(first.pid) +
                       (tids.size() == 1 ? ", tid " + std::to_string(first.tid) : ", " + std::to_string(tids.size()) +
                                                                                     " threads") + ")";
  f.facts.emplace_back("thread", thread);
  f.facts.emplace_back("syscalls", CallsText(occ));
  if (!paths.empty())
    f.facts.emplace_back("file", paths.size() == 1 ? paths.front()
                                                   : d->file + " (" + std::to_string(paths.size()) + " names: " +
                                                         Join(paths, ", ", 3) + ")");
  const WorkRule* main = nullptr;
  AddTimeFacts(in, occ, f, d, &main);
  Period p = FindPeriod(in, occ);
  f.period = p.text;
  d->period_ns = p.ns;
  d->period_steps = p.steps;
  d->step_ns = p.step_ns;
  if (occ.size() == 2)
    f.facts.emplace_back("apart", Seconds(occ[1]->ep->start - occ[0]->ep->start) + " (two occurrences: too few for a period)");
  std::string work = d->kernel_work.empty() ? "" : d->kernel_work.front().first;
  if (d->kernel_work.size() > 1) work += ", " + d->kernel_work[1].first;
  f.title = occ.front()->who + " runs in the kernel in " + Join(d->syscalls, "+") +
            (d->file.empty() ? "" : " of " + d->file) + (work.empty() ? "" : ": " + work);
  f.fix = std::string(main ? main->fix : "look at what the kernel does in those calls (the kernel work above).") +
          " That saves up to " + FormatNs(static_cast<uint64_t>(f.total_ns)) + " on this thread (" +
          FormatShare(f.share) + " of the run" +
          (n > 1 ? ", " + FormatNs(static_cast<uint64_t>(f.total_ns / n)) + " each time" : "") + ").";
  f.evidence.push_back("occurrences (seconds since the command started):");
  for (const OnCpuStall* s : occ)
    f.evidence.push_back("  at " + Seconds(s->ep->start - in.command_start_ns) + ": " +
                         FormatNs(static_cast<uint64_t>(s->ep->end - s->ep->start)) + ", on-CPU " +
                         FormatNs(static_cast<uint64_t>(s->ep->oncpu)) + OccurrenceWait(in, *s) + ", tid " +
                         std::to_string(s->ep->tid) + (s->path.empty() ? "" : ", " + s->path));
  return f;
}

}  // namespace

std::vector<std::pair<Finding, StallDetail>> OnCpuFindings(const OnCpuInputs& in,
                                                           const std::vector<OnCpuEpisode>& episodes) {
  std::vector<OnCpuStall> stalls;
  for (const OnCpuEpisode& ep : episodes) stalls.push_back(Describe(in, ep));
  std::map<std::string, std::vector<const OnCpuStall*>> groups;
  for (const OnCpuStall& s : stalls) groups[s.key].push_back(&s);
  std::vector<std::pair<Finding, StallDetail>> out;
  for (auto& [key, occ] : groups) {
    std::sort(occ.begin(), occ.end(), [](const OnCpuStall* a, const OnCpuStall* b) {
      return std::tie(a->ep->start, a->ep->tid) < std::tie(b->ep->start, b->ep->tid);
    });
    StallDetail d;
    Finding f = MakeFinding(in, occ, &d);
    out.emplace_back(std::move(f), std::move(d));
  }
  return out;
}

}  // namespace syspgo
