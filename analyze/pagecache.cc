//===- pagecache.cc - page-cache churn: pages evicted and read again ------===//
// A run of the full tier: its page_cache rows are replayed in time order,
// per file, keeping for every page the class of the deletion that last
// removed it: an addition of such a page is a refault of that class (the
// same pages the page_cache_refault view finds, here with who deleted them).
// A run of the lean tier: the kernel did that replay as it happened
// (bpf/pagecache.bpf.c), and the same counts are read from
// page_cache_total, the pages from page_cache_page and _page_refault.
// Either way deletion classes come from each distinct kernel stack once.
#include "analyze/pagecache.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <nlohmann/json.hpp>

#include "analyze/file_paths.h"
#include "analyze/finding_print.h"
#include "analyze/data/block.h"
#include "analyze/data/pagecache.h"
#include "analyze/run.h"
#include "analyze/stack_names.h"
#include "bpf/pagecache.h"
#include "common/util.h"

namespace syspgo {
namespace {

// The replay reads the rows file by file, each file's rows in time order
// (data::VisitPageCacheByFile): what it keeps of a file depends on that
// file's rows alone, and it is the order the report's page-cache chart is
// tallied in too (PagecacheQuery::on_row), in the same pass.

constexpr int64_t kUnlimited = int64_t{1} << 60;  // limit_in_bytes at or above this: no limit (v1 prints ~2^63)
constexpr int64_t kRangeGapPages = 16;             // refaulted pages this close are one hot range
constexpr size_t kHotRanges = 3;                   // hot ranges named in a fix
constexpr int64_t kMiB = 1 << 20;

bool IsReclaim(Deleter d) {
  return d == Deleter::kMemcg || d == Deleter::kKswapd || d == Deleter::kDirect || d == Deleter::kDamon ||
         d == Deleter::kOther;
}

bool Has(const std::vector<std::string>& frames, bool (*match)(const std::string&)) {
  return std::any_of(frames.begin(), frames.end(), match);
}

std::string Mib(int64_t bytes) {
  char buf[48];
  snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / kMiB);
  return buf;
}

std::string Limit(int64_t limit) {
  if (limit < 0) return "unknown";
  if (limit >= kUnlimited) return "none";
  return Mib(limit) + " (" + std::to_string(limit) + " bytes)";
}

// "memcg reclaim 9000 pages, drop_caches 2048 pages (not churn)".
std::string ByClass(const std::map<std::string, int64_t>& m) {
  std::vector<std::pair<int64_t, std::string>> v;
  for (auto& [k, n] : m) v.emplace_back(-n, k);
  std::sort(v.begin(), v.end());
  std::string out;
  for (auto& [n, k] : v) {
    out += (out.empty() ? "" : ", ") + k + " " + std::to_string(-n) + (-n == 1 ? " page" : " pages");
    if (k == DeleterName(Deleter::kDropCaches)) out += " (asked for; not counted as churn)";
    if (k == DeleterName(Deleter::kTruncate)) out += " (data thrown away; not churn)";
  }
  return out;
}

struct PageState {
  std::unordered_map<int64_t, Deleter> gone;  // page -> class of the deletion that removed it, while out
  std::unordered_map<int64_t, int64_t> loaded;  // page -> when it was last added
  std::vector<int64_t> damon_reuse;           // load-to-reload times of pages DAMON evicted in between
  std::unordered_set<int64_t> touched;        // pages added or faulted on
  std::set<int64_t> churned;                  // pages refaulted after reclaim
  std::map<int64_t, int64_t> reclaimed_by_cgroup, added_by_cgroup;  // page_cgroup -> pages
  int64_t first_reclaim_ts = -1;
};

class Analysis {
 public:
  Analysis(Db& db, const PagecacheQuery& q) : db_(db), q_(q) { report_.run_id = q.run_id; }
  Result<PagecacheReport> Run();

 private:
  Status LoadRun();
  Status Replay();
  Status ReadLean();
  // The name a deleter's kind stands for (bpf/pagecache.h, PAGECACHE_KIND_*):
  // all the deletion classes read of a task's name.
  static std::string KindComm(int64_t deleter);
  PagecacheFile& FileAt(int64_t dev, int64_t ino);
  Status LoadFaults();
  Status LoadReads();
  Status LoadCgroups();
  Deleter Classify(int64_t stack_id, const std::string& comm);
  void Judge(PagecacheFile& f, PageState& s);
  Finding MakeFinding(const PagecacheFile& f) const;

  Db& db_;
  PagecacheQuery q_;
  PagecacheReport report_;
  std::unique_ptr<StackNames> names_;
  std::map<int64_t, Deleter> stack_class_;
  std::map<std::pair<uint64_t, uint64_t>, PagecacheFile> files_;
  std::map<std::pair<uint64_t, uint64_t>, PageState> state_;
  std::map<int64_t, std::pair<std::string, int64_t>> cgroups_;  // id -> path, limit (-1 unknown)
  struct Pageout {
    std::string path;        // "kdamonds/K/contexts/C/schemes/S" or "damon_reclaim"
    int64_t min_age_ns = -1;  // -1 unknown
    int64_t aggr_ns = -1;     // kdamond schemes: the aggregation interval the age counts in
  };
  std::vector<Pageout> damon_;  // pageout schemes in force; empty if none or not recorded
  std::string DamonFix(const PagecacheFile& f) const;
};

Status Analysis::LoadRun() {
  auto window = ReadRunWindow(db_, q_.run_id);
  if (!window) return window.error();
  report_.wall_ns = std::max<int64_t>(0, window->end_ns - window->command_start_ns);
  SYSPGO_TRY(RequireProbeGroup(db_, q_.run_id, "pagecache", "page-cache data", "pagecache,faults,block,cpu"));
  auto names = StackNames::Load(db_, q_.run_id);
  if (!names) return names.error();
  names_ = std::move(*names);
  auto settings = ReadRunSettings(db_, q_.run_id);
  if (!settings) return settings.error();
  for (const DamonScheme& s : settings->damon.value_or(std::vector<DamonScheme>{})) {
    Pageout d{s.path};
    if (s.aggr_us >= 0) d.aggr_ns = s.aggr_us * 1000;
    if (s.min_age >= 0 && s.aggr_us >= 0) d.min_age_ns = s.min_age * s.aggr_us * 1000;
    if (s.min_age_us >= 0) d.min_age_ns = s.min_age_us * 1000;
    damon_.push_back(d);
  }
  return {};
}

Deleter Analysis::Classify(int64_t stack_id, const std::string& comm) {
  Deleter by_task = ClassifyDeletion({}, comm);  // a reclaim thread (kswapd, kdamond) by its name, else other
  if (stack_id == 0) return by_task;
  auto it = stack_class_.find(stack_id);
  if (it == stack_class_.end()) it = stack_class_.emplace(stack_id, ClassifyDeletion(names_->Kernel(stack_id), comm)).first;
  // One stack can be shared by a reclaim thread and a task only when the
  // stack names neither; the task's name then decides.
  return it->second == Deleter::kOther ? by_task : it->second;
}

Status Analysis::Replay() {
  PagecacheFile* file = nullptr;  // the current row's, while rows of one file follow each other
  PageState* state = nullptr;
  return data::VisitPageCacheByFile(db_, q_.run_id, [&](Stmt& row) {
    ++report_.events;
    int64_t ts = row.Int(0), op = row.Int(1);
    int64_t dev = row.Int(3), ino = row.Int(4), idx = row.Int(5), recorded_pages = row.Int(6), cg = row.Int(7);
    std::pair<uint64_t, uint64_t> key{static_cast<uint64_t>(dev), static_cast<uint64_t>(ino)};
    int64_t pages = std::max<int64_t>(1, recorded_pages);
    std::string comm = op == 2 ? row.Text(2) : std::string();
    if (q_.on_row) q_.on_row({dev, ino, ts, op, idx, recorded_pages, comm});
    if (!file || file->dev != key.first || file->ino != key.second) {
      file = &files_[key];
      file->dev = key.first;
      file->ino = key.second;
      state = &state_[key];
    }
    PagecacheFile& f = *file;
    PageState& s = *state;
    if (op == 1) {
      f.added_pages += pages;
      if (cg) s.added_by_cgroup[cg] += pages;
      for (int64_t p = idx; p < idx + pages; ++p) {
        s.touched.insert(p);
        auto [load, first] = s.loaded.try_emplace(p, ts);
        int64_t before = first ? -1 : std::exchange(load->second, ts);
        auto g = s.gone.find(p);
        if (g == s.gone.end()) continue;
        if (g->second == Deleter::kDamon && before >= 0) s.damon_reuse.push_back(ts - before);
        ++f.refaulted_pages;
        ++f.refaults_by[DeleterName(g->second)];
        if (IsReclaim(g->second)) {
          ++f.churn_pages;
          s.churned.insert(p);
          if (f.first_churn_ts < 0) f.first_churn_ts = ts;
        }
        s.gone.erase(g);
      }
    } else if (op == 2) {
      Deleter d = Classify(row.Int(8), comm);
      f.deleted_pages += pages;
      f.deleted_by[DeleterName(d)] += pages;
      if (IsReclaim(d)) {
        f.deleters[comm] += pages;
        if (cg) s.reclaimed_by_cgroup[cg] += pages;
        if (s.first_reclaim_ts < 0) s.first_reclaim_ts = ts;
      }
      for (int64_t p = idx; p < idx + pages; ++p) s.gone[p] = d;
    }
  });
}

std::string Analysis::KindComm(int64_t deleter) {
  switch (static_cast<uint64_t>(deleter) >> PAGECACHE_KIND_SHIFT) {
    case PAGECACHE_KIND_KSWAPD: return "kswapd";
    case PAGECACHE_KIND_KDAMOND: return "kdamond";
    default: return "";
  }
}

PagecacheFile& Analysis::FileAt(int64_t dev, int64_t ino) {
  std::pair<uint64_t, uint64_t> key{static_cast<uint64_t>(dev), static_cast<uint64_t>(ino)};
  PagecacheFile& f = files_[key];
  f.dev = key.first;
  f.ino = key.second;
  state_[key];
  return f;
}

// The lean tier's counts are what Replay() adds up, per (file, cgroup,
// operation, deleter): the same sums, folded the same way.
Status Analysis::ReadLean() {
  auto key = [](Stmt& r) { return std::pair<uint64_t, uint64_t>(r.Int(0), r.Int(1)); };
  std::string run = "run " + std::to_string(q_.run_id);
  SYSPGO_TRY(data::VisitLeanTotals(db_, "page_cache_total of " + run, q_.run_id, [&](Stmt& r) {
    int64_t cg = r.Int(2), op = r.Int(3), deleter = r.Int(4), stack = r.Int(6), pages = r.Int(7), first = r.Int(9);
    std::string comm = r.Text(5);
    report_.events += r.Int(8);
    PagecacheFile& f = FileAt(r.Int(0), r.Int(1));
    PageState& s = state_[key(r)];
    if (op == PAGECACHE_OP_ADD || op == PAGECACHE_OP_REFAULT) {
      f.added_pages += pages;
      if (cg) s.added_by_cgroup[cg] += pages;
    }
    if (op == PAGECACHE_OP_REFAULT) {
      Deleter d = Classify(stack, KindComm(deleter));
      f.refaulted_pages += pages;
      f.refaults_by[DeleterName(d)] += pages;
      if (IsReclaim(d)) {
        f.churn_pages += pages;
        if (f.first_churn_ts < 0 || first < f.first_churn_ts) f.first_churn_ts = first;
      }
    } else if (op == PAGECACHE_OP_DELETE) {
      Deleter d = Classify(stack, comm);
      f.deleted_pages += pages;
      f.deleted_by[DeleterName(d)] += pages;
      if (IsReclaim(d)) {
        f.deleters[comm] += pages;
        if (cg) s.reclaimed_by_cgroup[cg] += pages;
        if (s.first_reclaim_ts < 0 || first < s.first_reclaim_ts) s.first_reclaim_ts = first;
      }
    }
  }));
  SYSPGO_TRY(data::VisitLeanPages(db_, "page_cache_page of " + run, q_.run_id,
                                  [&](Stmt& r) { state_[key(r)].touched.insert(r.Int(2)); }));
  SYSPGO_TRY(data::VisitLeanRefaults(db_, "page_cache_page_refault of " + run, q_.run_id, [&](Stmt& r) {
    if (IsReclaim(Classify(r.Int(4), KindComm(r.Int(3))))) state_[key(r)].churned.insert(r.Int(2));
  }));
  SYSPGO_TRY(data::VisitLeanReuse(db_, "page_cache_reuse of " + run, q_.run_id,
                                  [&](Stmt& r) { state_[key(r)].damon_reuse.push_back(r.Int(2)); }));
  auto overflow = data::ReadLeanOverflow(db_, "run_aggregate of " + run, q_.run_id);
  if (!overflow) return overflow.error();
  report_.overflow = *overflow;
  return {};
}

Status Analysis::LoadFaults() {
  return data::VisitFaultedPages(db_, q_.run_id, [&](Stmt& st) {
    auto it = state_.find({static_cast<uint64_t>(st.Int(0)), static_cast<uint64_t>(st.Int(1))});
    if (it != state_.end()) it->second.touched.insert(st.Int(2));
  });
}

Status Analysis::LoadReads() {
  // A database without the block tables' rows still has the tables; any
  // error is real.
  return data::VisitFileReads(db_, q_.run_id, [&](Stmt& st) {
    std::pair<uint64_t, uint64_t> key{static_cast<uint64_t>(st.Int(0)), static_cast<uint64_t>(st.Int(1))};
    auto it = files_.find(key);
    if (it == files_.end()) return;
    PagecacheFile& f = it->second;
    int64_t ts = st.Int(2), dur = st.Int(3);
    f.block_read_bytes += st.Int(4);
    f.block_read_ns += dur;
    int64_t since = state_[key].first_reclaim_ts;
    if (since >= 0 && ts >= since) {
      f.reread_ns += dur;
      f.reread_worst_ns = std::max(f.reread_worst_ns, dur);
    }
  });
}

Status Analysis::LoadCgroups() {
  return data::VisitMemoryCgroups(
      db_, q_.run_id, [&](Stmt& st) { cgroups_[st.Int(0)] = {st.Text(1), st.IsNull(2) ? -1 : st.Int(2)}; });
}

// Most pages first; ties to the lower id, so the choice is stable.
int64_t Busiest(const std::map<int64_t, int64_t>& m) {
  int64_t best = 0, n = 0;
  for (auto& [id, pages] : m)
    if (pages > n) best = id, n = pages;
  return best;
}

void Analysis::Judge(PagecacheFile& f, PageState& s) {
  f.working_set_pages = static_cast<int64_t>(s.touched.size());
  f.cgroup_id = Busiest(s.reclaimed_by_cgroup);
  if (!f.cgroup_id) f.cgroup_id = Busiest(s.added_by_cgroup);
  if (auto it = cgroups_.find(f.cgroup_id); it != cgroups_.end()) {
    f.cgroup = it->second.first;
    f.cgroup_limit = it->second.second;
  }
  if (!s.damon_reuse.empty()) {
    auto mid = s.damon_reuse.begin() + static_cast<std::ptrdiff_t>(s.damon_reuse.size() / 2);
    std::nth_element(s.damon_reuse.begin(), mid, s.damon_reuse.end());
    f.damon_reuse_ns = *mid;
  }
  int64_t most = 0;
  for (auto& [k, n] : f.refaults_by) {
    bool reclaim = k != DeleterName(Deleter::kDropCaches) && k != DeleterName(Deleter::kTruncate);
    if (reclaim && n > most) most = n, f.reclaim = k;
  }
  // Hot ranges: runs of churned pages with gaps of at most kRangeGapPages.
  std::vector<std::tuple<int64_t, int64_t, int64_t>> ranges;  // -pages, first, last
  int64_t first = -1, last = -1, count = 0;
  for (int64_t p : s.churned) {
    if (first >= 0 && p - last > kRangeGapPages) {
      ranges.emplace_back(-count, first, last);
      first = -1;
    }
    if (first < 0) first = p, count = 0;
    last = p;
    ++count;
  }
  if (first >= 0) ranges.emplace_back(-count, first, last);
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 0; i < ranges.size() && i < kHotRanges; ++i)
    f.hot_ranges.emplace_back(std::get<1>(ranges[i]), std::get<2>(ranges[i]));

  int64_t churn_bytes = f.churn_pages * kPageBytes;
  f.churns = f.churn_pages >= kChurnMinPages &&
             (churn_bytes >= kChurnMinBytes ||
              static_cast<double>(f.churn_pages) >= kChurnMinShare * static_cast<double>(f.working_set_pages));
}

Finding Analysis::MakeFinding(const PagecacheFile& f) const {
  Finding x;
  x.kind = "pagecache-churn";
  std::string name = f.path.empty() ? "dev " + std::to_string(f.dev) + " inode " + std::to_string(f.ino) : f.path;
  std::string cg = f.cgroup.empty() ? "memory cgroup " + std::to_string(f.cgroup_id) : f.cgroup;
  int64_t churn_bytes = f.churn_pages * kPageBytes, ws = f.working_set_pages * kPageBytes;
  bool limited = f.cgroup_limit >= 0 && f.cgroup_limit < kUnlimited;
  x.title = name + ": " + std::to_string(f.churn_pages) + " pages evicted by " + f.reclaim + " and read again (" +
            Mib(churn_bytes) + " re-read)" + (f.cgroup_id ? " in cgroup " + cg : "") +
            (limited ? " (limit " + Mib(f.cgroup_limit) + ")" : "");
  x.facts.emplace_back("file", name);
  x.facts.emplace_back("cgroup", f.cgroup_id ? cg : "unknown (the pages were charged to no memory cgroup)");
  x.facts.emplace_back("limit", Limit(f.cgroup_limit));
  std::vector<std::pair<int64_t, std::string>> by_comm;
  for (auto& [comm, n] : f.deleters) by_comm.emplace_back(-n, comm);
  std::sort(by_comm.begin(), by_comm.end());
  std::string deleters;
  for (auto& [n, comm] : by_comm)
    deleters += (deleters.empty() ? "" : ", ") + comm + " (" + std::to_string(-n) + " pages)";
  x.facts.emplace_back("reclaim", f.reclaim + (deleters.empty() ? "" : ", in " + deleters));
  x.facts.emplace_back("working set", Mib(ws) + " (" + std::to_string(f.working_set_pages) +
                                          " distinct pages of the file touched)");
  x.facts.emplace_back("pages", std::to_string(f.added_pages) + " added, " + std::to_string(f.deleted_pages) +
                                    " deleted, " + std::to_string(f.refaulted_pages) + " added again");
  x.facts.emplace_back("deleted by", ByClass(f.deleted_by));
  std::string io = Mib(churn_bytes) + " re-read for refaults after reclaim (" + std::to_string(f.churn_pages) +
                   " pages x 4 KiB)";
  if (f.block_read_bytes)
    io += "; " + Mib(f.block_read_bytes) + " of the file read from disk in all, in " +
          FormatNs(static_cast<uint64_t>(f.block_read_ns)) + " of device time";
  x.facts.emplace_back("I/O", io);
  if (f.damon_reuse_ns > 0)
    x.facts.emplace_back("reuse", FormatNs(f.damon_reuse_ns) + " median from a page's load to its reload after DAMON "
                                  "evicted it");
  if (f.suggested_limit) x.facts.emplace_back("suggested limit", Limit(f.suggested_limit));
  x.count = f.churn_pages;
  x.total_ns = f.reread_ns;
  x.worst_ns = f.reread_worst_ns;
  x.share = report_.wall_ns > 0 ? std::min(1.0, static_cast<double>(x.total_ns) / static_cast<double>(report_.wall_ns)) : 0;

  std::string ranges;
  for (auto& [a, b] : f.hot_ranges) {
    char buf[96];
    snprintf(buf, sizeof buf, "bytes %lld..%lld", static_cast<long long>(a * kPageBytes),
             static_cast<long long>((b + 1) * kPageBytes));
    ranges += (ranges.empty() ? "" : ", ") + std::string(buf);
  }
  std::string fix;
  if (f.reclaim == DeleterName(Deleter::kDamon)) {
    fix = DamonFix(f);
  } else if (f.suggested_limit) {
    int64_t mib = f.suggested_limit / kMiB;
    fix = "Raise the cgroup's memory.limit_in_bytes to at least " + std::to_string(mib) + " MiB (" +
          std::to_string(f.suggested_limit) + " bytes: its limit " + Mib(f.cgroup_limit) + " plus the working set " +
          (f.suggested_limit - f.cgroup_limit > ws + kMiB ? "of the files that churn in it, this one's " : "of the file, ") +
          Mib(ws) + "), e.g. echo " + std::to_string(f.suggested_limit) + " > /sys/fs/cgroup/memory" +
          (f.cgroup.empty() ? "/<cgroup>" : f.cgroup == "/" ? "" : f.cgroup) +
          "/memory.limit_in_bytes (the v1 memory hierarchy's usual mount). This is cgroup v1: it has no memory.low or memory.min, and "
          "memory.soft_limit_in_bytes only acts under pressure on the whole machine; on cgroup v2, set memory.low "
          "(or memory.min) of the cgroup to at least " + Mib(ws) + " instead. ";
  } else if (f.reclaim == DeleterName(Deleter::kMemcg)) {
    fix = "Raise the memory limit of the cgroup by at least the file's working set, " + Mib(ws) +
          " (on cgroup v2 memory.low or memory.min of at least that; v1 has neither). ";
  } else {
    fix = "The whole machine ran short of memory (" + f.reclaim + "): free memory or add RAM so that the file's "
          "working set of " + Mib(ws) + " stays cached; on cgroup v2 memory.low of at least that protects it. ";
  }
  fix += "Or keep the hot ranges resident: mlock() them in the program, or vmtouch -l " + name +
         (ranges.empty() ? "" : " (hot: " + ranges + ")") +
         "; locked pages still count against the cgroup's limit, so it must hold them. Or use a prefetch plan "
         "(syspgo prefetch) so the pages come back in a few large reads instead of one fault at a time.";
  x.fix = fix;
  x.evidence.push_back("refaults by who deleted the page: " + ByClass(f.refaults_by));
  if (f.first_churn_ts >= 0) x.occurrences.push_back({f.first_churn_ts, 0, 0});
  return x;
}

// No limit was hit: DAMON paged the file out as idle between its uses. The
// scheme is named when the run recorded which one was in force.
std::string Analysis::DamonFix(const PagecacheFile& f) const {
  const Pageout* one = damon_.size() == 1 ? &damon_[0] : nullptr;
  std::string schemes;
  for (const Pageout& d : damon_)
    schemes += (schemes.empty() ? "" : ", ") + d.path +
               (d.min_age_ns >= 0 ? " (minimum age " + FormatNs(static_cast<uint64_t>(d.min_age_ns)) + ")" : "");
  std::string fix = "DAMON's proactive reclaim (kdamond, " +
                    (schemes.empty() ? std::string("a pageout scheme") : "pageout scheme " + schemes) +
                    ") evicted these pages as idle, though no limit was hit";
  if (f.damon_reuse_ns > 0)
    fix += "; the program loaded them again a median of " + FormatNs(static_cast<uint64_t>(f.damon_reuse_ns)) +
           " after loading them before";
  fix += ". ";
  bool age_helps = !(one && one->min_age_ns >= 0 && f.damon_reuse_ns > 0 && one->min_age_ns >= f.damon_reuse_ns);
  bool module = one && one->path == "damon_reclaim";
  std::string base = "/sys/kernel/mm/damon/admin/" + (one && !module ? one->path : "kdamonds/<N>/contexts/<C>/schemes/<S>");
  std::string kdamond = one && !module ? one->path.substr(0, one->path.find("/contexts")) : "kdamonds/<N>";
  if (!age_helps) {
    fix += "Its minimum age is already above that: DAMON judges idleness per region of physical memory from one "
           "sampled page per region, so pages in use are evicted with idle neighbours, and a longer age will not "
           "reliably keep them. ";
  } else if (module) {
    fix += "Raise damon_reclaim's minimum age (/sys/module/damon_reclaim/parameters/min_age, microseconds) above the "
           "time between the file's uses. ";
  } else {
    std::string want = "the time between the file's uses";
    if (one && one->aggr_ns > 0 && f.damon_reuse_ns > 0)
      want = std::to_string(f.damon_reuse_ns / one->aggr_ns + 1) + " aggregation intervals of " +
             FormatNs(static_cast<uint64_t>(one->aggr_ns));
    fix += "Raise the scheme's minimum age above " + want + " (" + base +
           "/access_pattern/age/min, in aggregation intervals), then echo commit > /sys/kernel/mm/damon/admin/" +
           kdamond + "/state. ";
  }
  if (module && !age_helps)
    fix += "damon_reclaim has no per-cgroup filter: turn it off (echo N > /sys/module/damon_reclaim/parameters/enabled) "
           "or keep the file's hot ranges resident. ";
  if (!module)
    fix += std::string(age_helps ? "Or" : "Instead,") + " exclude the program's cgroup from the scheme with a memcg " +
           "filter: raise " + base + "/filters/nr_filters by one, set the new filters/<K> to type memcg, memcg_path " +
           (f.cgroup.empty() ? std::string("<cgroup>") : f.cgroup) +
           ", matching Y, allow N, then echo commit > /sys/kernel/mm/damon/admin/" + kdamond + "/state. ";
  return fix;
}

Result<PagecacheReport> Analysis::Run() {
  if (Status s = LoadRun(); !s.ok()) return s.error();
  auto tier = RecordingTier(db_, q_.run_id, "pagecache");
  if (!tier) return tier.error();
  report_.tier = *tier;
  if (Status s = report_.tier == Tier::kLean ? ReadLean() : Replay(); !s.ok()) return s.error();
  if (Status s = LoadFaults(); !s.ok()) return s.error();
  if (Status s = LoadReads(); !s.ok()) return s.error();
  if (Status s = LoadCgroups(); !s.ok()) return s.error();
  auto paths = FilePaths::Load(db_, q_.run_id);
  if (!paths) return paths.error();
  for (auto& [key, f] : files_) {
    f.path = paths->At(f.dev, f.ino, f.first_churn_ts >= 0 ? f.first_churn_ts : 0);
    Judge(f, state_[key]);
    report_.files.push_back(std::move(f));
  }
  // A cgroup must hold the working sets of every file that churns in it:
  // the limit suggested for each is its limit plus all of them.
  // DAMON evicts what it sees idle whatever the limit: no limit fixes that.
  auto by_limit = [](const PagecacheFile& f) { return f.churns && f.reclaim != DeleterName(Deleter::kDamon); };
  std::map<int64_t, int64_t> churning_ws;  // cgroup -> pages
  for (const PagecacheFile& f : report_.files)
    if (by_limit(f)) churning_ws[f.cgroup_id] += f.working_set_pages;
  for (PagecacheFile& f : report_.files) {
    if (!by_limit(f) || f.cgroup_limit < 0 || f.cgroup_limit >= kUnlimited) continue;
    int64_t want = f.cgroup_limit + churning_ws[f.cgroup_id] * kPageBytes;
    f.suggested_limit = (want + kMiB - 1) / kMiB * kMiB;
  }
  std::stable_sort(report_.files.begin(), report_.files.end(), [](const PagecacheFile& a, const PagecacheFile& b) {
    return std::tie(b.churn_pages, b.refaulted_pages, b.added_pages, a.path) <
           std::tie(a.churn_pages, a.refaulted_pages, a.added_pages, b.path);
  });
  for (size_t i = 0; i < report_.files.size(); ++i) {
    if (!report_.files[i].churns) continue;
    report_.findings.push_back(MakeFinding(report_.files[i]));
    report_.finding_file.push_back(i);
  }
  return std::move(report_);
}

using Json = nlohmann::ordered_json;

Json DetailJson(const PagecacheFile& f) {
  return {{"file", f.path},
          {"dev", f.dev},
          {"ino", f.ino},
          {"cgroup", f.cgroup},
          {"cgroup_id", f.cgroup_id},
          {"limit_bytes", f.cgroup_limit},
          {"reclaim", f.reclaim},
          {"added_pages", f.added_pages},
          {"deleted_pages", f.deleted_pages},
          {"refaulted_pages", f.refaulted_pages},
          {"churn_pages", f.churn_pages},
          {"refault_bytes", f.churn_pages * kPageBytes},
          {"working_set_pages", f.working_set_pages},
          {"working_set_bytes", f.working_set_pages * kPageBytes},
          {"block_read_bytes", f.block_read_bytes},
          {"block_read_ns", f.block_read_ns},
          {"deleted_by", f.deleted_by},
          {"refaults_by", f.refaults_by},
          {"deleters", f.deleters},
          {"hot_ranges", f.hot_ranges},
          {"damon_reuse_ns", f.damon_reuse_ns},
          {"churns", f.churns},
          {"suggested_limit_bytes", f.suggested_limit}};
}

}  // namespace

const char* DeleterName(Deleter d) {
  switch (d) {
    case Deleter::kMemcg: return "memcg reclaim";
    case Deleter::kKswapd: return "kswapd";
    case Deleter::kDirect: return "direct reclaim";
    case Deleter::kDamon: return "DAMON reclaim";
    case Deleter::kTruncate: return "truncation";
    case Deleter::kDropCaches: return "drop_caches";
    case Deleter::kOther: return "other";
  }
  return "other";
}

Deleter ClassifyDeletion(const std::vector<std::string>& frames, const std::string& comm) {
  if (Has(frames, [](const std::string& n) { return n == "drop_pagecache_sb" || n == "drop_caches_sysctl_handler"; }))
    return Deleter::kDropCaches;
  if (Has(frames, [](const std::string& n) { return n == "try_to_free_mem_cgroup_pages"; })) return Deleter::kMemcg;
  if (comm.starts_with("kswapd") || Has(frames, [](const std::string& n) { return n == "balance_pgdat" || n == "kswapd"; }))
    return Deleter::kKswapd;
  if (Has(frames, [](const std::string& n) { return n == "try_to_free_pages"; })) return Deleter::kDirect;
  // DAMON's proactive reclaim: a kdamond thread pages out what its monitor
  // saw unused (a "pageout" scheme, or the damon_reclaim module).
  if (comm.starts_with("kdamond") ||
      Has(frames, [](const std::string& n) { return n.starts_with("damon_") || n == "kdamond_fn"; }))
    return Deleter::kDamon;
  if (Has(frames, [](const std::string& n) {
        return n.starts_with("truncate_inode_pages") || n.starts_with("truncate_pagecache") || n == "evict" ||
               n.starts_with("do_unlinkat") || n == "vfs_unlink" || n == "iput_final";
      }))
    return Deleter::kTruncate;
  if (Has(frames, [](const std::string& n) {
        return n.starts_with("mem_cgroup_") || n == "try_charge_memcg" || n.starts_with("memory_high") ||
               n.starts_with("memory_max") || n.starts_with("mem_cgroup_resize");
      }))
    return Deleter::kMemcg;
  return Deleter::kOther;
}

Result<PagecacheReport> AnalyzePagecache(Db& db, const PagecacheQuery& q) { return Analysis(db, q).Run(); }

Result<std::string> PagecacheReportText(Db& db, const RunInfo& run, const PagecacheQuery& q, bool json) {
  auto r = AnalyzePagecache(db, q);
  if (!r) return r.error();
  size_t shown = q.limit ? std::min(q.limit, r->files.size()) : r->files.size();
  if (json) {
    Json files = Json::array(), findings = Json::array();
    for (size_t i = 0; i < shown; ++i) files.push_back(DetailJson(r->files[i]));
    for (size_t i = 0; i < r->findings.size(); ++i)
      findings.push_back(FindingJson(r->findings[i], DetailJson(r->files[r->finding_file[i]])));
    Json j = {{"run", r->run_id},       {"wall_ns", r->wall_ns},   {"tier", TierName(r->tier)},
              {"events", r->events},    {"overflow", r->overflow}, {"files", std::move(files)},
              {"findings", std::move(findings)}};
    return JsonDocument(j);
  }
  std::string out = RunHeadline(run);
  out += "pagecache: pages added to and deleted from the page cache per file, and added again after a deletion "
         "(refaults)\n";
  if (r->tier == Tier::kLean)
    out += "read from the lean tier: counted in the kernel (page_cache_total)" +
           (r->overflow ? "; its maps overflowed " + std::to_string(r->overflow) +
                              " times, so the counts below are lower bounds (run_aggregate)"
                        : std::string(", exact (no map overflowed)")) +
           "\n";
  if (r->files.empty()) return out + "none: the run recorded no page-cache events.\n";
  Table t({{"path", "path", Table::Align::kLeft},
           {"added", "added_pages", Table::Align::kRight, true},
           {"deleted", "deleted_pages", Table::Align::kRight, true},
           {"refaults", "refaulted_pages", Table::Align::kRight, true},
           {"re-read", "refault_bytes", Table::Align::kRight, true},
           {"working set", "working_set_bytes", Table::Align::kRight, true},
           {"deleted by", "deleted_by", Table::Align::kLeft},
           {"cgroup", "cgroup", Table::Align::kLeft}});
  for (size_t i = 0; i < shown; ++i) {
    const PagecacheFile& f = r->files[i];
    std::string by;
    for (auto& [k, n] : f.deleted_by) by += (by.empty() ? "" : ", ") + k + " " + std::to_string(n);
    std::string cg = f.cgroup_id == 0 ? "-" : (f.cgroup.empty() ? std::to_string(f.cgroup_id) : f.cgroup);
    if (f.cgroup_id && f.cgroup_limit >= 0 && f.cgroup_limit < kUnlimited) cg += " (limit " + Mib(f.cgroup_limit) + ")";
    t.AddRow({f.path.empty() ? std::to_string(f.dev) + ":" + std::to_string(f.ino) : f.path,
              std::to_string(f.added_pages), std::to_string(f.deleted_pages), std::to_string(f.refaulted_pages),
              FormatBytes(static_cast<uint64_t>(f.refaulted_pages * kPageBytes)),
              FormatBytes(static_cast<uint64_t>(f.working_set_pages * kPageBytes)), by.empty() ? "-" : by, cg});
  }
  out += std::to_string(r->files.size()) + (r->files.size() == 1 ? " file" : " files") +
         (shown < r->files.size() ? ", the first " + std::to_string(shown) + " shown" : "") +
         ", most churn first (pages of 4 KiB):\n" + t.Text();
  if (r->findings.empty())
    return out + "\nno churn: no file had " + Mib(kChurnMinBytes) + " or 10% of its pages read again after reclaim.\n";
  out += "\n" + std::to_string(r->findings.size()) + (r->findings.size() == 1 ? " finding" : " findings") +
         ", most churn first:\n";
  for (size_t i = 0; i < r->findings.size(); ++i) out += "\n" + FindingText(r->findings[i], i + 1, true);
  return out;
}

}  // namespace syspgo
