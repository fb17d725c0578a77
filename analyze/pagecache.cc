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
  std::string ReclaimPath(const PagecacheFile& f) const;
  void GroupCauses();
  std::string CgroupName(int64_t id) const;
  void CauseFacts(const ChurnCause& c, Finding& x) const;
  Finding MakeFinding(const ChurnCause& c) const;
  std::string CauseFix(const ChurnCause& c, const std::string& deleter_cgroup) const;
  std::string KeepResidentFix(const ChurnCause& c) const;

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
        f.reclaimed_pages += pages;
        if (int64_t task_cg = row.Int(9)) f.deleter_cgroups[task_cg] += pages;
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
        f.reclaimed_pages += pages;
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

// The rules that name a file's reclaim path beyond its deletion class, the
// first that matches: memcg reclaim done by tasks of an ancestor of the
// cgroup is the ancestor's, reclaiming for its own limit (or one above it),
// which the cgroup's pages count against; by tasks outside the cgroup's
// line (and outside its descendants) it is another cgroup's, reclaiming for
// a limit the two share; deletions by a kernel worker are the worker's.
constexpr char kAncestorCgroup[] = "an ancestor cgroup's reclaim";
constexpr char kOtherCgroup[] = "another cgroup's reclaim";
constexpr char kKernelWorker[] = "a kernel worker";

// The key with the most pages ("" if none).
std::string TopComm(const std::map<std::string, int64_t>& m) {
  std::string best;
  int64_t n = 0;
  for (auto& [comm, pages] : m)
    if (pages > n) best = comm, n = pages;
  return best;
}

bool Below(const std::string& path, const std::string& ancestor) {
  return !ancestor.empty() && (path == ancestor || ancestor == "/" || path.starts_with(ancestor + "/"));
}

std::string Analysis::ReclaimPath(const PagecacheFile& f) const {
  auto path_of = [&](int64_t id) -> std::string {
    auto it = cgroups_.find(id);
    return it == cgroups_.end() ? "" : it->second.first;
  };
  int64_t by = Busiest(f.deleter_cgroups);
  bool outside = f.reclaim == DeleterName(Deleter::kMemcg) && by && f.cgroup_id && by != f.cgroup_id &&
                 !Below(path_of(by), path_of(f.cgroup_id));
  const std::pair<const char*, bool> rules[] = {
      {kAncestorCgroup, outside && Below(path_of(f.cgroup_id), path_of(by))},
      {kOtherCgroup, outside},
      {kKernelWorker, TopComm(f.deleters).starts_with("kworker")},
  };
  for (auto& [path, match] : rules)
    if (match) return path;
  return f.reclaim;
}

// Files are in churn order: each cause keeps its files in that order.
void Analysis::GroupCauses() {
  std::map<std::pair<int64_t, std::string>, size_t> index;
  std::vector<ChurnCause>& causes = report_.causes;
  for (size_t i = 0; i < report_.files.size(); ++i) {
    const PagecacheFile& f = report_.files[i];
    if (f.churn_pages == 0) continue;
    auto [it, fresh] = index.try_emplace({f.cgroup_id, f.reclaim_path}, causes.size());
    ChurnCause& c = fresh ? causes.emplace_back() : causes[it->second];
    if (fresh) c.cgroup_id = f.cgroup_id, c.cgroup = f.cgroup, c.cgroup_limit = f.cgroup_limit, c.path = f.reclaim_path,
               c.reclaim = f.reclaim;
    c.files.push_back(i);
    c.churn_pages += f.churn_pages;
    c.reclaimed_pages += f.reclaimed_pages;
    c.working_set_pages += f.working_set_pages;
    c.reread_ns += f.reread_ns;
    c.reread_worst_ns = std::max(c.reread_worst_ns, f.reread_worst_ns);
    c.block_read_bytes += f.block_read_bytes;
    if (f.first_churn_ts >= 0 && (c.first_churn_ts < 0 || f.first_churn_ts < c.first_churn_ts))
      c.first_churn_ts = f.first_churn_ts;
    for (auto& [comm, n] : f.deleters) c.deleters[comm] += n;
    for (auto& [cg, n] : f.deleter_cgroups) c.deleter_cgroups[CgroupName(cg)] += n;
  }
  for (ChurnCause& c : causes) {
    c.churns = c.churn_pages >= kChurnMinPages &&
               (c.churn_pages * kPageBytes >= kChurnMinBytes ||
                static_cast<double>(c.churn_pages) >= kChurnMinShare * static_cast<double>(c.working_set_pages));
    // The cgroup's own reclaim at its limit: the limit must hold the working
    // sets of every file it evicted and read again.
    bool limited = c.cgroup_limit >= 0 && c.cgroup_limit < kUnlimited;
    if (c.churns && limited && c.path == DeleterName(Deleter::kMemcg)) {
      int64_t want = c.cgroup_limit + c.working_set_pages * kPageBytes;
      c.suggested_limit = (want + kMiB - 1) / kMiB * kMiB;
      for (size_t i : c.files) report_.files[i].suggested_limit = c.suggested_limit;
    }
  }
  std::stable_sort(causes.begin(), causes.end(), [](const ChurnCause& a, const ChurnCause& b) {
    return std::tie(b.churn_pages, a.cgroup_id, a.path) < std::tie(a.churn_pages, b.cgroup_id, b.path);
  });
}

// "python3 (9000 pages), sh (12 pages)": the first five, most pages first.
std::string Ranked(const std::vector<std::pair<std::string, int64_t>>& items) {
  std::vector<std::pair<int64_t, std::string>> v;
  for (auto& [k, n] : items) v.emplace_back(-n, k);
  std::sort(v.begin(), v.end());
  std::string out;
  for (size_t i = 0; i < v.size() && i < 5; ++i)
    out += (out.empty() ? "" : ", ") + v[i].second + " (" + std::to_string(-v[i].first) +
           (v[i].first == -1 ? " page)" : " pages)");
  if (v.size() > 5) out += " and " + std::to_string(v.size() - 5) + " more";
  return out;
}

std::string Analysis::CgroupName(int64_t id) const {
  auto it = cgroups_.find(id);
  return it == cgroups_.end() || it->second.first.empty() ? "memory cgroup " + std::to_string(id) : it->second.first;
}

std::string FileName(const PagecacheFile& f) {
  return f.path.empty() ? "dev " + std::to_string(f.dev) + " inode " + std::to_string(f.ino) : f.path;
}

// What evicted the pages, as the title says it.
std::string PathPhrase(const ChurnCause& c, const std::string& deleter_cgroup) {
  static const std::map<std::string, std::string> phrases = {
      {DeleterName(Deleter::kMemcg), "memcg reclaim by its own tasks at the limit"},
      {kAncestorCgroup, "memcg reclaim by tasks of its ancestor cgroup"},
      {kOtherCgroup, "memcg reclaim by tasks of another cgroup"},
      {DeleterName(Deleter::kKswapd), "kswapd (the machine ran short of memory)"},
      {DeleterName(Deleter::kDirect), "direct reclaim (the machine ran short of memory)"},
      {DeleterName(Deleter::kDamon), "DAMON's proactive reclaim"},
      {kKernelWorker, "reclaim in a kernel worker"},
  };
  // The lean tier counts deletions by the deleting task's name only: whose
  // cgroup reclaimed is unknown there, and "its own tasks" would be a guess.
  if (c.path == DeleterName(Deleter::kMemcg) && c.deleter_cgroups.empty())
    return "memcg reclaim at a limit (this cgroup's or an ancestor's; whose tasks reclaimed is recorded by "
           "--detail full)";
  auto it = phrases.find(c.path);
  std::string p = it == phrases.end() ? c.path + " reclaim" : it->second;
  bool names_it = (c.path == kOtherCgroup || c.path == kAncestorCgroup) && !deleter_cgroup.empty();
  return names_it ? p + " (" + deleter_cgroup + ")" : p;
}

// How a deleting task's cgroup stands to the cgroup whose pages it deleted,
// as the facts say it: "" for the cgroup itself or one below it.
std::string Kinship(const std::string& deleter, const std::string& cgroup) {
  if (Below(deleter, cgroup)) return "";
  return Below(cgroup, deleter) ? ", an ancestor" : ", another cgroup";
}

void Analysis::CauseFacts(const ChurnCause& c, Finding& x) const {
  int64_t ws = c.working_set_pages * kPageBytes;
  x.facts.emplace_back("cgroup", c.cgroup_id ? CgroupName(c.cgroup_id)
                                             : "unknown (the pages were charged to no memory cgroup)");
  x.facts.emplace_back("limit", Limit(c.cgroup_limit));
  std::vector<std::pair<std::string, int64_t>> tasks(c.deleters.begin(), c.deleters.end()), cgroups;
  x.facts.emplace_back("reclaim", c.path + (tasks.empty() ? "" : ", in " + Ranked(tasks)));
  for (auto& [name, n] : c.deleter_cgroups)
    cgroups.emplace_back(name + Kinship(name, CgroupName(c.cgroup_id)), n);
  if (!cgroups.empty()) x.facts.emplace_back("deleters in", Ranked(cgroups));
  x.facts.emplace_back("files", std::to_string(c.files.size()) + (c.files.size() == 1 ? " file" : " files") +
                                    " evicted and read again (the table below)");
  x.facts.emplace_back("working set", Mib(ws) + " (" + std::to_string(c.working_set_pages) +
                                          " distinct pages of these files touched)");
  std::string io = Mib(c.churn_pages * kPageBytes) + " re-read for refaults after reclaim (" +
                   std::to_string(c.churn_pages) + " pages x 4 KiB)";
  if (c.block_read_bytes) io += "; " + Mib(c.block_read_bytes) + " of these files read from disk in all";
  x.facts.emplace_back("I/O", io);
  const PagecacheFile& top = report_.files[c.files.front()];
  if (top.damon_reuse_ns > 0)
    x.facts.emplace_back("reuse", FormatNs(top.damon_reuse_ns) + " median from a page's load of " + FileName(top) +
                                      " to its reload after DAMON evicted it");
  if (c.suggested_limit) x.facts.emplace_back("suggested limit", Limit(c.suggested_limit));
}

Finding Analysis::MakeFinding(const ChurnCause& c) const {
  Finding x;
  x.kind = "pagecache-churn";
  bool limited = c.cgroup_limit >= 0 && c.cgroup_limit < kUnlimited;
  std::string deleter_cgroup = TopComm(c.deleter_cgroups);
  size_t n = c.files.size();
  x.title = (c.cgroup_id ? "cgroup " + CgroupName(c.cgroup_id) : std::string("pages of no memory cgroup")) +
            (limited ? " (limit " + Mib(c.cgroup_limit) + ")" : "") + ": " + PathPhrase(c, deleter_cgroup) +
            " evicted " + (n == 1 ? FileName(report_.files[c.files[0]]) : std::to_string(n) + " files") +
            ", read again: " + std::to_string(c.churn_pages) + " pages (" + Mib(c.churn_pages * kPageBytes) + ")";
  CauseFacts(c, x);
  x.count = c.churn_pages;
  x.total_ns = c.reread_ns;
  x.worst_ns = c.reread_worst_ns;
  x.share = report_.wall_ns > 0 ? std::min(1.0, static_cast<double>(x.total_ns) / static_cast<double>(report_.wall_ns)) : 0;
  x.table_columns = {"file", "evicted", "refaulted", "re-read", "share"};
  for (size_t i : c.files) {
    const PagecacheFile& f = report_.files[i];
    x.table.push_back({FileName(f), std::to_string(f.reclaimed_pages), std::to_string(f.churn_pages),
                       FormatBytes(static_cast<uint64_t>(f.churn_pages * kPageBytes)),
                       FormatShare(static_cast<double>(f.churn_pages) / static_cast<double>(c.churn_pages))});
    if (x.evidence.size() < kTopFindings)
      x.evidence.push_back(FileName(f) + ": refaults by who deleted the page: " + ByClass(f.refaults_by));
  }
  x.fix = CauseFix(c, deleter_cgroup) + KeepResidentFix(c);
  if (c.first_churn_ts >= 0) x.occurrences.push_back({c.first_churn_ts, 0, 0});
  return x;
}

// The fix of a cause, by its reclaim path.
std::string Analysis::CauseFix(const ChurnCause& c, const std::string& deleter_cgroup) const {
  std::string ws = Mib(c.working_set_pages * kPageBytes);
  std::string dir = "/sys/fs/cgroup/memory" + (c.cgroup.empty() ? "/<cgroup>" : c.cgroup == "/" ? "" : c.cgroup);
  if (c.path == DeleterName(Deleter::kDamon)) return DamonFix(report_.files[c.files.front()]);
  if (c.suggested_limit) {
    return "Raise the cgroup's memory.limit_in_bytes to at least " + std::to_string(c.suggested_limit / kMiB) +
           " MiB (" + std::to_string(c.suggested_limit) + " bytes: its limit " + Mib(c.cgroup_limit) +
           " plus the working set of the files it evicted and read again, " + ws + "), e.g. echo " +
           std::to_string(c.suggested_limit) + " > " + dir + "/memory.limit_in_bytes (the v1 memory hierarchy's "
           "usual mount). This is cgroup v1: it has no memory.low or memory.min, and memory.soft_limit_in_bytes only "
           "acts under pressure on the whole machine; on cgroup v2, set memory.low (or memory.min) of the cgroup to "
           "at least " + ws + " instead. ";
  }
  static const std::map<std::string, std::string> fixes = {
      {DeleterName(Deleter::kMemcg), "Raise the memory limit whose reclaim evicted them (the cgroup's or an "
                                     "ancestor's) by at least the working set, WS (on cgroup v2 memory.low or "
                                     "memory.min of at least that; v1 has neither). "},
      {kAncestorCgroup, "Tasks of DELETER, an ancestor of this cgroup, evicted them, reclaiming for DELETER's own "
                        "memory limit (or one above it), which this cgroup's pages count against. Raise that limit "
                        "by at least the working set, WS, or move those tasks into a child cgroup of DELETER with a "
                        "memory.limit_in_bytes of their own, so that their reclaim stays within their own pages; on "
                        "cgroup v2, memory.low (or memory.min) of at least WS on this cgroup protects it. "},
      {kOtherCgroup, "Tasks of DELETER evicted them, reclaiming for a memory limit that cgroup shares with this one "
                     "(a common ancestor's). Give DELETER a memory.limit_in_bytes of its own, so that its reclaim "
                     "stays within its own pages, or move it out from under that ancestor, or raise the ancestor's "
                     "limit by at least the working set, WS; on cgroup v2, memory.low (or memory.min) of at least "
                     "WS on this cgroup protects it. "},
      {kKernelWorker, "A kernel worker evicted them for the cgroup's limit (asynchronous reclaim): raise that limit "
                      "by at least the working set, WS, or on cgroup v2 set memory.low (or memory.min) of at least "
                      "that. "},
  };
  auto it = fixes.find(c.path);
  std::string fix = it != fixes.end()
                        ? it->second
                        : "The whole machine ran short of memory (" + c.path + "): free memory or add RAM so that the "
                          "working set of WS stays cached; on cgroup v2 memory.low of at least that protects it. ";
  for (auto [key, value] : {std::pair<std::string, std::string>{"WS", ws}, {"DELETER", deleter_cgroup}})
    for (size_t at = fix.find(key); at != std::string::npos; at = fix.find(key, at + value.size()))
      fix.replace(at, key.size(), value);
  return fix;
}

// The fix every cause shares: the hottest files kept resident, or read back
// in large reads.
std::string Analysis::KeepResidentFix(const ChurnCause& c) const {
  std::string names;
  for (size_t i = 0; i < c.files.size() && i < 3; ++i) names += " " + FileName(report_.files[c.files[i]]);
  return "Or keep the most re-read files resident: vmtouch -l" + names +
         " (or mlock() their hot ranges in the program); locked pages still count against the cgroup's limit, so "
         "it must hold them. Or use a prefetch plan (syspgo prefetch) so the pages come back in a few large reads "
         "instead of one fault at a time.";
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
  for (PagecacheFile& f : report_.files) f.reclaim_path = f.churn_pages ? ReclaimPath(f) : "";
  std::stable_sort(report_.files.begin(), report_.files.end(), [](const PagecacheFile& a, const PagecacheFile& b) {
    return std::tie(b.churn_pages, b.refaulted_pages, b.added_pages, a.path) <
           std::tie(a.churn_pages, a.refaulted_pages, a.added_pages, b.path);
  });
  GroupCauses();
  for (size_t i = 0; i < report_.causes.size(); ++i) {
    if (!report_.causes[i].churns) continue;
    report_.findings.push_back(MakeFinding(report_.causes[i]));
    report_.finding_cause.push_back(i);
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
          {"reclaimed_pages", f.reclaimed_pages},
          {"reclaim_path", f.reclaim_path},
          {"suggested_limit_bytes", f.suggested_limit}};
}

Json CauseJson(const ChurnCause& c, const std::vector<PagecacheFile>& files) {
  Json paths = Json::array();
  for (size_t i : c.files) paths.push_back(files[i].path);
  return {{"cgroup", c.cgroup},
          {"cgroup_id", c.cgroup_id},
          {"limit_bytes", c.cgroup_limit},
          {"reclaim", c.reclaim},
          {"reclaim_path", c.path},
          {"deleters", c.deleters},
          {"deleter_cgroups", c.deleter_cgroups},
          {"reclaimed_pages", c.reclaimed_pages},
          {"churn_pages", c.churn_pages},
          {"refault_bytes", c.churn_pages * kPageBytes},
          {"working_set_pages", c.working_set_pages},
          {"working_set_bytes", c.working_set_pages * kPageBytes},
          {"block_read_bytes", c.block_read_bytes},
          {"churns", c.churns},
          {"suggested_limit_bytes", c.suggested_limit},
          {"files", std::move(paths)}};
}

constexpr size_t kTopFiles = 20;  // rows of the files table text shows without --limit or --all

// Per memory cgroup: its files, pages added, evicted by reclaim and read
// again, most churn first, then most added.
struct CgroupRow {
  int64_t id = 0;
  std::string path;
  int64_t limit = -1, files = 0, added = 0, reclaimed = 0, churn = 0;
};

std::vector<CgroupRow> RankCgroups(const PagecacheReport& r) {
  std::map<int64_t, CgroupRow> by_id;
  for (const PagecacheFile& f : r.files) {
    CgroupRow& c = by_id[f.cgroup_id];
    c.id = f.cgroup_id;
    if (c.path.empty()) c.path = f.cgroup, c.limit = f.cgroup_limit;
    ++c.files;
    c.added += f.added_pages;
    c.reclaimed += f.reclaimed_pages;
    c.churn += f.churn_pages;
  }
  std::vector<CgroupRow> rows;
  for (auto& [id, c] : by_id) rows.push_back(c);
  std::stable_sort(rows.begin(), rows.end(), [](const CgroupRow& a, const CgroupRow& b) {
    return std::tie(b.churn, b.added, a.id) < std::tie(a.churn, a.added, b.id);
  });
  return rows;
}

Json ReportJson(const PagecacheReport& r, size_t shown) {
  Json files = Json::array(), findings = Json::array(), cgroups = Json::array();
  for (size_t i = 0; i < shown; ++i) files.push_back(DetailJson(r.files[i]));
  for (size_t i = 0; i < r.findings.size(); ++i)
    findings.push_back(FindingJson(r.findings[i], CauseJson(r.causes[r.finding_cause[i]], r.files)));
  for (const CgroupRow& c : RankCgroups(r))
    cgroups.push_back({{"cgroup", c.path}, {"cgroup_id", c.id}, {"limit_bytes", c.limit}, {"files", c.files},
                       {"added_pages", c.added}, {"reclaimed_pages", c.reclaimed}, {"churn_pages", c.churn}});
  return {{"run", r.run_id},          {"wall_ns", r.wall_ns},   {"tier", TierName(r.tier)},
          {"events", r.events},       {"overflow", r.overflow}, {"cgroups", std::move(cgroups)},
          {"files", std::move(files)}, {"findings", std::move(findings)}};
}

// The cgroups ranked, numbered for the files table's cgroup column.
std::string CgroupsText(const std::vector<CgroupRow>& rows) {
  Table t({{"#", "rank", Table::Align::kRight, true},
           {"cgroup", "cgroup", Table::Align::kLeft},
           {"limit", "limit_bytes", Table::Align::kRight, true},
           {"files", "files", Table::Align::kRight, true},
           {"added", "added_pages", Table::Align::kRight, true},
           {"evicted", "reclaimed_pages", Table::Align::kRight, true},
           {"refaults", "churn_pages", Table::Align::kRight, true},
           {"re-read", "refault_bytes", Table::Align::kRight, true}});
  for (size_t i = 0; i < rows.size(); ++i) {
    const CgroupRow& c = rows[i];
    bool limited = c.id && c.limit >= 0 && c.limit < kUnlimited;
    t.AddRow({std::to_string(i + 1), c.id == 0 ? "none" : c.path.empty() ? std::to_string(c.id) : c.path,
              limited ? Mib(c.limit) : "-", std::to_string(c.files), std::to_string(c.added),
              std::to_string(c.reclaimed), std::to_string(c.churn),
              FormatBytes(static_cast<uint64_t>(c.churn * kPageBytes))});
  }
  return std::to_string(rows.size()) + (rows.size() == 1 ? " memory cgroup" : " memory cgroups") +
         ", most pages evicted by reclaim and read again first:\n" + t.Text() + "\n";
}

// "memcg 1419, drop 690": deletions by class, in the files table's few columns.
std::string ShortClasses(const std::map<std::string, int64_t>& by) {
  static const std::map<std::string, std::string> kShort = {
      {DeleterName(Deleter::kMemcg), "memcg"},    {DeleterName(Deleter::kDirect), "direct"},
      {DeleterName(Deleter::kDamon), "DAMON"},    {DeleterName(Deleter::kTruncate), "trunc"},
      {DeleterName(Deleter::kDropCaches), "drop"}};
  std::string out;
  for (auto& [k, n] : by) {
    auto it = kShort.find(k);
    out += (out.empty() ? "" : ", ") + (it == kShort.end() ? k : it->second) + " " + std::to_string(n);
  }
  return out.empty() ? "-" : out;
}

std::string FilesText(const PagecacheReport& r, const std::vector<CgroupRow>& cgroups, size_t shown) {
  std::map<int64_t, size_t> rank;
  for (size_t i = 0; i < cgroups.size(); ++i) rank[cgroups[i].id] = i + 1;
  Table t({{"path", "path", Table::Align::kLeft},
           {"added", "added_pages", Table::Align::kRight, true},
           {"deleted", "deleted_pages", Table::Align::kRight, true},
           {"refaults", "refaulted_pages", Table::Align::kRight, true},
           {"re-read", "refault_bytes", Table::Align::kRight, true},
           {"working set", "working_set_bytes", Table::Align::kRight, true},
           {"deleted by", "deleted_by", Table::Align::kLeft},
           {"cgroup", "cgroup", Table::Align::kRight}});
  for (size_t i = 0; i < shown; ++i) {
    const PagecacheFile& f = r.files[i];
    t.AddRow({f.path.empty() ? std::to_string(f.dev) + ":" + std::to_string(f.ino) : f.path,
              std::to_string(f.added_pages), std::to_string(f.deleted_pages), std::to_string(f.refaulted_pages),
              FormatBytes(static_cast<uint64_t>(f.refaulted_pages * kPageBytes)),
              FormatBytes(static_cast<uint64_t>(f.working_set_pages * kPageBytes)), ShortClasses(f.deleted_by),
              "#" + std::to_string(rank[f.cgroup_id])});
  }
  return std::to_string(r.files.size()) + (r.files.size() == 1 ? " file" : " files") +
         (shown < r.files.size() ? ", the first " + std::to_string(shown) + " shown (--all: every one)" : "") +
         ", most churn first (pages of 4 KiB; cgroup: its #):\n" + t.Text();
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

Result<std::string> PagecacheReportText(Db& db, const RunInfo& run, const PagecacheQuery& q, bool json, bool all) {
  auto r = AnalyzePagecache(db, q);
  if (!r) return r.error();
  if (json) return JsonDocument(ReportJson(*r, q.limit ? std::min(q.limit, r->files.size()) : r->files.size()));
  size_t shown = std::min(q.limit ? q.limit : all ? r->files.size() : kTopFiles, r->files.size());
  std::string out = RunHeadline(run);
  out += "pagecache: pages added to and deleted from the page cache per file, and added again after a deletion "
         "(refaults)\n";
  if (r->tier == Tier::kLean)
    out += WrapText("read from the lean tier: counted in the kernel (page_cache_total)" +
                        (r->overflow ? "; its maps overflowed " + std::to_string(r->overflow) +
                                           " times, so the counts below are lower bounds (run_aggregate)"
                                     : std::string(", exact (no map overflowed)")),
                    0) +
           "\n";
  if (r->files.empty()) return out + "none: the run recorded no page-cache events.\n";
  std::vector<CgroupRow> cgroups = RankCgroups(*r);
  out += CgroupsText(cgroups) + FilesText(*r, cgroups, shown);
  if (r->findings.empty())
    return out + "\nno churn: no cgroup had " + Mib(kChurnMinBytes) +
           " or 10% of its files' pages read again after reclaim.\n";
  out += "\n" + std::to_string(r->findings.size()) + (r->findings.size() == 1 ? " finding" : " findings") +
         ", one per memory cgroup and reclaim path, most churn first:\n";
  return out + FindingsText(r->findings, true, all);
}

}  // namespace syspgo
