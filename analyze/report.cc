//===- report.cc - one run as a self-contained HTML page ------------------===//
// Reads the run from the database into the JSON object the page draws.
// Every query reads one run; intervals are capped by keeping the longest
// (a report is read for what took time), aggregates always cover all rows.
#include "analyze/report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <queue>
#include <tuple>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "analyze/access_summary.h"
#include "analyze/blockhist.h"
#include "analyze/data/block.h"
#include "analyze/data/file_calls.h"
#include "analyze/data/offcpu.h"
#include "analyze/data/pagecache.h"
#include "analyze/data/paths.h"
#include "analyze/file_calls.h"
#include "analyze/files.h"
#include "analyze/pagecache_chart.h"
#include "analyze/report_findings.h"
#include "analyze/report_common.h"
#include "analyze/run.h"
#include "analyze/sample_db.h"
#include "analyze/symbolize.h"
#include "analyze/data/tasks.h"

namespace syspgo {
namespace {

using Json = nlohmann::ordered_json;

// A share or a width in ns: the page reads a number, so one that is not
// finite (a run of no time) is sent as 0.
Json Number(double v) { return std::isfinite(v) ? v : 0.0; }

// ===--- Pieces -------------------------------------------------------=== //

// A thread as the page shows it: all lives of its tid in one lane.
struct PageThread {
  int64_t tid = 0, pid = 0;
  std::string comm, process;
  int64_t start = 0, end = -1;  // -1: still alive at the end
  int64_t process_start = 0;
};

struct Interval {
  int64_t ts = 0, dur = 0;
  int64_t a = 0, b = 0, c = 0, d = 0;  // kind-specific columns, as the page reads them
  bool operator<(const Interval& o) const { return dur != o.dur ? dur > o.dur : ts < o.ts; }  // longest first
};

// Keeps the `cap` longest intervals of a stream, returned sorted by time.
class Longest {
 public:
  explicit Longest(size_t cap) : cap_(cap) {}
  void Add(const Interval& iv) {
    ++seen_;
    total_ns_ += iv.dur;
    if (cap_ == 0) return;
    if (heap_.size() < cap_) {
      heap_.push(iv);
    } else if (iv < heap_.top()) {
      heap_.pop();
      heap_.push(iv);
    }
  }
  std::vector<Interval> TakeByTime() {
    std::vector<Interval> out;
    out.reserve(heap_.size());
    while (!heap_.empty()) {
      out.push_back(heap_.top());
      heap_.pop();
    }
    std::sort(out.begin(), out.end(), [](const Interval& x, const Interval& y) {
      return x.ts != y.ts ? x.ts < y.ts : x.dur > y.dur;
    });
    return out;
  }
  int64_t seen() const { return seen_; }
  int64_t total_ns() const { return total_ns_; }

 private:
  size_t cap_;
  std::priority_queue<Interval> heap_;  // top = the shortest kept (by operator<, the "greatest")
  int64_t seen_ = 0, total_ns_ = 0;
};

class ReportBuilder {
 public:
  ReportBuilder(Db& db, const RunInfo& run, const ReportOptions& o) : db_(db), run_(run), o_(o) {}

  Result<std::string> Build(const FindingSet& findings, const DrawnSummaries& drawn);

 private:
  std::string What(const std::string& table) const {
    return table + " of run " + std::to_string(run_.id);
  }
  // Time buckets cover the command's run (axis_.origin .. span): the probes
  // load before it starts and nothing of the program happens then.
  int64_t Bucket(int64_t ts) const { return axis_.Bucket(ts); }
  Status RunHeader(const DrawnSummaries& drawn);
  Status Threads();
  Status Syscalls();
  Status OffCpu();
  Status Block();
  Status BlockHist();
  void Findings(const FindingSet& set);
  Status Files();
  Status PageCache(const DrawnSummaries& drawn);
  void Access(const DrawnSummaries& drawn);
  void Flame();

  Db& db_;
  const RunInfo& run_;
  const ReportOptions& o_;
  Json data_ = Json::object();
  StringTable strings_;
  std::map<std::pair<int64_t, int64_t>, std::string> paths_;  // the run's file table, read once
  TimeAxis axis_;  // span: ns from run start to the last event; origin: the command's release
  std::map<int64_t, PageThread> threads_;
  // Per thread, filled before the thread rows are written.
  std::map<int64_t, std::vector<Interval>> sys_, off_;
  std::map<int64_t, std::pair<int64_t, int64_t>> sys_totals_, off_totals_;  // count, ns
  std::map<int64_t, std::vector<int64_t>> density_;
  struct SysHist {
    int64_t count = 0, total_ns = 0, worst_ns = 0;
    std::map<int, int64_t> slots;
  };
  std::map<std::string, SysHist> sys_hist_;
};

Status ReportBuilder::RunHeader(const DrawnSummaries& drawn) {
  auto origin = ReadRunOrigin(db_, run_.id);
  if (!origin) return origin.error();
  auto window = ReadRunWindow(db_, run_.id);
  if (!window) return window.error();
  auto settings = ReadRunSettings(db_, run_.id);
  if (!settings) return settings.error();
  // The page takes end_ts -1 for an end the run does not know (RunWindow's 0).
  data_["run"] = {{"id", run_.id},
                  {"command", run_.command},
                  {"status", run_.status},
                  {"host", origin->host},
                  {"kernel", origin->kernel_release},
                  {"version", origin->syspgo_version},
                  {"start_realtime_ns", origin->start_realtime_ns},
                  {"command_start_ts", window->command_start_ns},
                  {"end_ts", window->end_ns ? window->end_ns : -1},
                  {"events_recorded", origin->events_recorded},
                  {"events_dropped", run_.events_dropped},
                  {"only", run_.only}};
  // The findings' page-cache pass read the axis already, if it drew the
  // chart on these buckets (reading it scans the run's event tables).
  if (drawn.pagecache_chart && drawn.pagecache_chart->axis().buckets == o_.time_buckets) {
    axis_ = drawn.pagecache_chart->axis();
  } else {
    auto axis = ReadTimeAxis(db_, run_.id, o_.time_buckets);
    if (!axis) return axis.error();
    axis_ = *axis;
  }
  Json& r = data_["run"];
  r["span_ns"] = axis_.span;
  r["bucket_origin_ns"] = axis_.origin;
  r["bucket_ns"] = Number(static_cast<double>(axis_.span - axis_.origin) / o_.time_buckets);
  r["offcpu_min_ns"] = settings->offcpu_min_ns;
  Json& probes = r["probes"] = Json::array();
  auto rows = ReadProbes(db_, run_.id);
  if (!rows) return rows.error();
  for (const ProbeRow& p : *rows) probes.push_back(Json::array({p.group, p.attached, p.detail, p.events}));
  return {};
}

Status ReportBuilder::Threads() {
  auto tasks = Tasks::Load(db_, run_.id);
  if (!tasks) return tasks.error();
  for (const ThreadRow& life : tasks->threads()) {  // a tid's lives in start order
    PageThread& t = threads_[life.tid];
    bool first = t.tid == 0;
    t.tid = life.tid;
    t.pid = life.pid;
    t.comm = life.comm;  // the latest life names it
    int64_t end = life.exit_ts.value_or(-1);
    t.start = first ? life.start_ts : std::min(t.start, life.start_ts);
    t.end = first ? end : (t.end < 0 || end < 0) ? -1 : std::max(t.end, end);
    const ProcessRow* latest = tasks->LatestProcess(life.pid);
    t.process = latest ? latest->comm : "";
    t.process_start = latest ? tasks->FirstProcess(life.pid)->start_ts : life.start_ts;
  }
  // Threads seen in events but not in the thread table (attached to late,
  // or the proc group lost their fork).
  return data::VisitEventThreads(db_, What("events"), run_.id, [&](Stmt& s) {
    if (threads_.count(s.Int(0))) return;
    PageThread& t = threads_[s.Int(0)];
    t.tid = s.Int(0);
    t.pid = s.Int(1);
    t.comm = "tid " + std::to_string(t.tid);
    t.start = 0;
    t.process_start = s.Int(2);
  });
}

Status ReportBuilder::Syscalls() {
  auto names = data::ReadSyscallNames(db_, What("syscall_name"));
  if (!names) return names.error();
  std::map<std::pair<int64_t, int64_t>, int64_t> path_index;  // file -> its path's index in strings_
  // Per syscall number: its name's index in strings_ and its histogram.
  std::unordered_map<int64_t, std::pair<int64_t, SysHist*>> by_nr;
  std::map<int64_t, Longest> kept;
  const std::string what = What("file_io, file_open and file_lookup");
  SYSPGO_TRY(data::VisitFileCallsByThread(db_, what, run_.id, [&](Stmt& s) {
    int64_t tid = s.Int(0), ts = s.Int(1), dur = s.Int(2), nr = s.Int(3);
    auto [call, first_call] = by_nr.try_emplace(nr);
    if (first_call) {
      auto n = names->find(nr);
      std::string name = n != names->end() ? n->second : "syscall " + std::to_string(nr);
      call->second = {strings_.Index(name), &sys_hist_[name]};
    }
    auto [it, added] = kept.try_emplace(tid, o_.max_syscalls_per_thread);
    // The file table's path, else the one the open or lookup named.
    int64_t index;
    std::pair<int64_t, int64_t> file{s.Int(5), s.Int(6)};
    auto f = paths_.find(file);
    if (f != paths_.end() && !f->second.empty()) {
      auto [known, first_named] = path_index.try_emplace(file);
      if (first_named) known->second = strings_.Index(f->second);
      index = known->second;
    } else {
      std::string path = f != paths_.end() ? std::string() : s.Text(11);
      if (path.empty())
        path = s.Int(5) == 0 ? "fd " + std::to_string(s.Int(4)) + " (not a file)"
                             : FileKindName(s.Int(7)) + ":[" + std::to_string(s.Int(6)) + "]";
      index = strings_.Index(path);
    }
    Interval iv{ts, dur, call->second.first, index, s.Int(8), s.Int(9)};  // ret, file offset
    it->second.Add(iv);
    auto& dens = density_[tid];
    if (dens.empty()) dens.assign(o_.time_buckets, 0);
    ++dens[Bucket(ts)];
    SysHist& h = *call->second.second;
    ++h.count;
    h.total_ns += dur;
    h.worst_ns = std::max(h.worst_ns, dur);
    ++h.slots[Log2Slot(dur)];
  }));
  for (auto& [tid, l] : kept) {
    sys_totals_[tid] = {l.seen(), l.total_ns()};
    sys_[tid] = l.TakeByTime();
  }
  return {};
}

Status ReportBuilder::OffCpu() {
  std::map<int64_t, Longest> kept;
  SYSPGO_TRY(data::VisitWaits(db_, What("offcpu"), run_.id, [&](Stmt& s) {
    auto [it, added] = kept.try_emplace(s.Int(0), o_.max_offcpu_per_thread);
    Interval iv{s.Int(1), s.Int(2)};
    iv.a = strings_.Index(OffCpuStateName(s.Int(3)));
    std::string waker = s.Int(5) < 0    ? std::string("no wakeup seen (preempted, or woken before it left)")
                        : s.Int(5) == 0 ? std::string("an interrupt on an idle CPU (timer or device)")
                                        : s.Text(4) + " (tid " + std::to_string(s.Int(5)) + ")";
    iv.b = strings_.Index(waker);
    it->second.Add(iv);
  }));
  for (auto& [tid, l] : kept) {
    off_totals_[tid] = {l.seen(), l.total_ns()};
    off_[tid] = l.TakeByTime();
  }
  return {};
}

Status ReportBuilder::Block() {
  struct Dev {
    int64_t requests = 0, bytes = 0, rows = 0;
  };
  std::map<int64_t, Dev> devs;
  SYSPGO_TRY(data::VisitDeviceTotals(db_, What("block_rq"), run_.id, [&](Stmt& s) {
    devs[s.Int(0)] = {s.Int(1), s.Int(2), s.Int(3)};
  }));
  Longest kept(o_.max_block_requests);
  std::vector<int64_t> dev_of;  // Interval.d indexes this
  SYSPGO_TRY(data::VisitRequestsByDevice(db_, What("block_rq"), run_.id, [&](Stmt& s) {
    Interval iv{s.Int(1), s.Int(2)};
    iv.a = strings_.Index(s.Text(3));
    iv.b = s.Int(4);
    // Who asked for it: a traced thread (drawn on its row too) or another task.
    std::string who = s.Int(6) ? s.Text(7) + " (tid " + std::to_string(s.Int(6)) + ")" : "not seen";
    std::string file = s.Text(8);
    iv.c = strings_.Index(who + "\x1f" + file + "\x1f" + std::to_string(s.Int(5)) + "\x1f" +
                          std::to_string(s.Int(9) ? s.Int(6) : 0));
    iv.d = s.Int(0);
    kept.Add(iv);
  }));
  std::map<int64_t, std::vector<Interval>> by_dev;
  for (Interval& iv : kept.TakeByTime()) by_dev[iv.d].push_back(iv);
  Json& devices = data_["devices"] = Json::array();
  for (auto& [dev, d] : devs) {
    auto& rq = by_dev[dev];
    LaneAssigner lanes;
    std::vector<int> lane;
    for (auto& iv : rq) lane.push_back(lanes.Add(iv.ts, iv.dur));
    int nlanes = lanes.lanes();
    // [ts, dur, op (-> strings), bytes, lane, details (-> strings: who, file, flags, traced tid, \x1f-separated)]
    Json items = Json::array();
    for (size_t i = 0; i < rq.size(); ++i)
      items.push_back(Json::array({rq[i].ts, rq[i].dur, rq[i].a, rq[i].b, lane[i], rq[i].c}));
    devices.push_back({{"dev", DevName(dev)},
                       {"requests", d.requests},
                       {"rows", d.rows},
                       {"bytes", d.bytes},
                       {"shown", rq.size()},
                       {"lanes", nlanes},
                       {"items", std::move(items)}});
  }
  return {};
}

Status ReportBuilder::BlockHist() {
  // Per disk and op (partitions merged: the page has one chart per disk
  // direction). A run without histograms says why, on the page.
  struct Hist {
    int64_t count = 0, sum_ns = 0;
    std::map<int, int64_t> slots;
  };
  std::map<std::pair<std::string, std::string>, Hist> hists;
  auto rows = BlockHistograms(db_, run_.id);
  for (const BlockHistogram& b : rows.ok() ? *rows : std::vector<BlockHistogram>{}) {
    Hist& h = hists[{DevName(b.dev), b.op}];
    h.count += b.count;
    h.sum_ns += b.sum_ns;
    for (auto& [slot, n] : b.slots) h.slots[slot] += n;
  }
  data_["block_hist_note"] = rows.ok() ? std::string() : rows.error().message;
  auto buckets = [&](const std::map<int, int64_t>& slots) {
    Json out = Json::array();
    for (auto& [slot, n] : slots) out.push_back(Json::array({slot ? int64_t{1} << slot : 0, int64_t{1} << (slot + 1), n}));
    return out;
  };
  Json& block = data_["block_hist"] = Json::array();
  for (auto& [key, h] : hists)
    block.push_back({{"dev", key.first},
                     {"op", key.second},
                     {"count", h.count},
                     {"sum_ns", h.sum_ns},
                     {"buckets", buckets(h.slots)}});
  Json& sys = data_["sys_hist"] = Json::array();
  std::vector<std::pair<std::string, const SysHist*>> order;
  for (auto& [name, h] : sys_hist_) order.emplace_back(name, &h);
  std::stable_sort(order.begin(), order.end(),
                   [](auto& x, auto& y) { return x.second->total_ns > y.second->total_ns; });
  for (auto& [name, h] : order)
    sys.push_back({{"name", name},
                   {"count", h->count},
                   {"total_ns", h->total_ns},
                   {"worst_ns", h->worst_ns},
                   {"buckets", buckets(h->slots)}});
  return {};
}

void ReportBuilder::Findings(const FindingSet& set) {
  data_["analyses"] = {{"ran", set.analyses}, {"problems", set.problems}};
  Json& findings = data_["findings"] = Json::array();
  for (const Finding& f : set.findings) {
    Json facts = Json::array();
    for (auto& [k, v] : f.facts) facts.push_back(Json::array({k, v}));
    Json& j = findings.emplace_back(Json{{"kind", f.kind},
                                         {"title", f.title},
                                         {"facts", std::move(facts)},
                                         {"count", f.count},
                                         {"total_ns", f.total_ns},
                                         {"worst_ns", f.worst_ns},
                                         {"share", Number(f.share)},
                                         {"period", f.period},
                                         {"fix", f.fix},
                                         {"evidence", f.evidence}});
    std::vector<Occurrence> occ = f.occurrences;
    std::sort(occ.begin(), occ.end(), [](auto& x, auto& y) { return x.ts < y.ts; });
    j["occurrences"] = occ.size();
    if (occ.size() > o_.max_occurrences) {
      // Keep the longest, in time order: they are what the finding is about.
      std::stable_sort(occ.begin(), occ.end(), [](auto& x, auto& y) { return x.dur > y.dur; });
      occ.resize(o_.max_occurrences);
      std::sort(occ.begin(), occ.end(), [](auto& x, auto& y) { return x.ts < y.ts; });
    }
    Json& occ_rows = j["occ"] = Json::array();
    for (auto& o : occ) occ_rows.push_back(Json::array({o.ts, o.dur, o.tid}));
    // Wakeups on the way to the root, drawn as arrows: [ts, from tid, to tid].
    Json& links = j["links"] = Json::array();
    for (size_t i = 0; i < f.links.size() && i < o_.max_occurrences; ++i)
      links.push_back(Json::array({f.links[i].ts, f.links[i].cause_tid, f.links[i].tid}));
  }
}

Status ReportBuilder::Files() {
  auto files = FileSummary(db_, {run_.id, false, o_.top_files});
  if (!files) return files.error();
  Json& rows = data_["files"] = Json::array();
  for (const FileStats& f : *files)
    rows.push_back({{"path", f.path},
                    {"kind", f.kind},
                    {"reads", f.reads},
                    {"read_bytes", f.read_bytes},
                    {"writes", f.writes},
                    {"write_bytes", f.write_bytes},
                    {"syncs", f.syncs},
                    {"total_ns", f.total_ns},
                    {"worst_ns", f.worst_ns},
                    {"worst_syscall", f.worst_syscall}});
  return {};
}

Status ReportBuilder::PageCache(const DrawnSummaries& drawn) {
  Json& out = data_["pagecache"] = Json::object();
  if (!data::HasTable(db_, "page_cache")) {
    out["note"] = "no page-cache data in this run: the database predates the pagecache probe group";
    return {};
  }
  // The findings' page-cache analysis tallied the chart in its pass, unless
  // it could not run (or drew it on other buckets).
  std::shared_ptr<const PageCacheChart> chart = drawn.pagecache_chart;
  auto tier = RecordingTier(db_, run_.id, "pagecache");
  if (!tier) return tier.error();
  if (*tier == Tier::kLean) {
    auto lean = PageCacheChart::FromLeanTables(db_, run_.id, axis_);
    if (!lean) return lean.error();
    chart = std::make_shared<PageCacheChart>(std::move(*lean));
  } else if (!chart || !(chart->axis() == axis_)) {
    auto own = std::make_shared<PageCacheChart>(axis_, data::HasTable(db_, "page_cache_refault"));
    SYSPGO_TRY(data::VisitPageCacheForChart(db_, What("page_cache"), run_.id, [&](Stmt& s) {
      std::string comm = s.Text(6);
      own->Add({s.Int(0), s.Int(1), s.Int(2), s.Int(3), s.Int(4), s.Int(5), comm});
    }));
    chart = std::move(own);
  }
  int64_t rows = chart->rows();
  bool has_refaults = chart->has_refaults();
  std::vector<PageCacheChart::File> files = chart->files();
  const std::map<std::string, int64_t>& deleters = chart->deleters();
  if (rows == 0) {
    out["note"] = "no page-cache data in this run (the pagecache probe group was off, or nothing was added or "
                  "deleted)";
    return {};
  }
  out["note"] = "";
  out["added"] = chart->added();
  out["deleted"] = chart->deleted();
  out["refaulted"] = chart->refaulted();
  out["has_refaults"] = has_refaults;
  // The 15 files with the most pages deleted, then added.
  using File = PageCacheChart::File;
  std::sort(files.begin(), files.end(), [](const File& a, const File& b) {
    return std::tie(b.deleted, b.added, a.dev, a.ino) < std::tie(a.deleted, a.added, b.dev, b.ino);
  });
  if (files.size() > 15) files.resize(15);
  Json& rows_out = out["files"] = Json::array();
  for (const File& f : files) {
    auto it = paths_.find({f.dev, f.ino});
    std::string path =
        it != paths_.end() && !it->second.empty() ? it->second : DevName(f.dev) + " inode " + std::to_string(f.ino);
    rows_out.push_back({{"path", path}, {"added", f.added}, {"deleted", f.deleted}, {"refaulted", f.refaulted}});
  }
  // Who deleted the most pages, by task name.
  std::vector<std::pair<std::string, int64_t>> by_task(deleters.begin(), deleters.end());
  std::stable_sort(by_task.begin(), by_task.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (by_task.size() > 10) by_task.resize(10);
  Json& who = out["deleters"] = Json::array();
  for (const auto& [comm, pages] : by_task) who.push_back(Json::array({comm, pages}));
  return {};
}

// Where in each file the run's touches landed, over time: the access order a
// prefetch plan is made from. For the files with the most pages used, every
// page fault and read, and the pages the kernel added to the cache for them
// (readahead); fault-around windows are left out (mapped, not used). A
// database this cannot read gets a note, not a failed report.
void ReportBuilder::Access(const DrawnSummaries& drawn) {
  Json& out = data_["access"] = Json::object();
  // The findings' access analysis summarized it already, unless it did not run.
  std::shared_ptr<const AccessSummary> summary = drawn.access;
  std::string why;
  if (!summary) {
    auto own = SummarizeAccess(db_, run_.id);
    if (own.ok()) summary = std::make_shared<const AccessSummary>(std::move(*own));
    else why = own.error().message;
  }
  std::vector<const FileAccess*> top;
  if (summary)
    for (const FileAccess& f : summary->files)
      if (f.used_pages) top.push_back(&f);
  std::stable_sort(top.begin(), top.end(),
                   [](const FileAccess* a, const FileAccess* b) { return a->used_pages > b->used_pages; });
  if (top.size() > o_.access_files) top.resize(o_.access_files);
  if (!summary)
    out["note"] = "no access order: " + why;
  else if (top.empty())
    out["note"] = "no file was faulted on or read in this run (the faults and fileio probe groups record that)";
  else
    out["note"] = "";
  Json& rows = out["files"] = Json::array();
  for (const FileAccess* f : top) {
    size_t n = f->touches.size(), shown = std::min(n, o_.max_access_points);
    Json points = Json::array();
    for (size_t i = 0; i < shown; ++i) {
      const FileTouch& t = summary->order.touches[f->touches[i * n / shown]];
      points.push_back(Json::array({static_cast<int64_t>(t.ts_ns), static_cast<int64_t>(t.offset),
                                    static_cast<int64_t>(t.length), t.source == 'f' ? 0 : t.source == 'r' ? 1 : 2}));
    }
    rows.push_back({{"path", f->path},
                    {"size", static_cast<int64_t>(f->size)},
                    {"used_pages", static_cast<int64_t>(f->used_pages)},
                    {"touches", n},
                    {"shown", shown},
                    {"points", std::move(points)}});
  }
}

// The CPU samples as a flame graph: root -> process -> outermost frame ->
// ... -> innermost, inline frames expanded, kernel frames after user ones
// (the user code called into the kernel).
void ReportBuilder::Flame() {
  Json& out = data_["flame"] = Json::object();
  auto set = LoadCpuSamples(db_, run_.id);
  if (!set) {
    out["note"] = set.error().message;
    return;
  }
  Symbolizer sym({o_.debug_dirs, {}});
  Profile p = Symbolize(*set, sym);
  struct Node {
    std::string name;
    int kind = 0;  // 0 root, 1 process, 2 user frame, 3 kernel frame
    uint64_t value = 0;
    std::map<std::pair<std::string, int>, size_t> kids;
  };
  std::vector<Node> nodes(1);
  nodes[0].name = "all";
  auto child = [&](size_t parent, const std::string& name, int kind) {
    auto [it, added] = nodes[parent].kids.try_emplace({name, kind}, nodes.size());
    if (added) nodes.push_back(Node{name, kind});
    return it->second;
  };
  for (const ProfileSample& s : p.samples) {
    auto comm = p.comm.find(s.pid);
    std::string proc = (comm == p.comm.end() ? std::string("pid") : comm->second) + " (" + std::to_string(s.pid) + ")";
    size_t at = child(0, proc, 1);
    nodes[0].value += s.count;
    nodes[at].value += s.count;
    for (size_t i = s.stack.size(); i-- > 0;) {
      const Location& l = p.locations[s.stack[i]];
      int kind = l.binary == kKernelBinary ? 3 : 2;
      if (l.frames.empty()) {
        at = child(at, p.DisplayName(l), kind);
        nodes[at].value += s.count;
        continue;
      }
      for (size_t f = l.frames.size(); f-- > 0;) {
        at = child(at, p.functions[l.frames[f].function].display, kind);
        nodes[at].value += s.count;
      }
    }
  }
  uint64_t min_value = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(nodes[0].value * o_.flame_min_share)));
  int64_t omitted = 0;
  // [name, value, kind, [children...]], children in name order.
  auto tree = [&](auto&& self, size_t n) -> Json {
    Json kids = Json::array();
    for (auto& [key, k] : nodes[n].kids) {
      if (nodes[k].value >= min_value) kids.push_back(self(self, k));
      else ++omitted;
    }
    return Json::array({nodes[n].name, nodes[n].value, nodes[n].kind, std::move(kids)});
  };
  out["note"] = "";
  out["samples"] = p.total;
  out["period_ns"] = p.period_ns;
  out["min_samples"] = min_value;
  out["tree"] = tree(tree, 0);
  out["omitted"] = omitted;
  Json& problems = out["problems"] = Json::array();
  for (const ProfileBinary& b : p.binaries)
    if (!b.problem.empty()) problems.push_back(b.ref.path + ": " + b.problem);
}

Result<std::string> ReportBuilder::Build(const FindingSet& findings, const DrawnSummaries& drawn) {
  SYSPGO_TRY(RunHeader(drawn));
  SYSPGO_TRY(Threads());
  auto paths = data::ReadFileTable(db_, run_.id, What("file"));
  if (!paths) return paths.error();
  for (auto& [file, path] : *paths)
    paths_[{static_cast<int64_t>(file.first), static_cast<int64_t>(file.second)}] = std::move(path);
  SYSPGO_TRY(Syscalls());
  SYSPGO_TRY(OffCpu());
  // Thread rows in process order (by process start), main thread first.
  std::vector<const PageThread*> order;
  for (auto& [tid, t] : threads_) order.push_back(&t);
  std::stable_sort(order.begin(), order.end(), [](const PageThread* x, const PageThread* y) {
    if (x->process_start != y->process_start) return x->process_start < y->process_start;
    if (x->pid != y->pid) return x->pid < y->pid;
    if ((x->tid == x->pid) != (y->tid == y->pid)) return x->tid == x->pid;
    return x->tid < y->tid;
  });
  Json& threads = data_["threads"] = Json::array();
  for (const PageThread* t : order) {
    auto totals = [&](auto& m) {
      auto it = m.find(t->tid);
      return it != m.end() ? Json::array({it->second.first, it->second.second}) : Json::array({0, 0});
    };
    // [ts, dur, name (-> strings), file (-> strings), ret, offset]
    Json sys = Json::array();
    for (auto& iv : sys_[t->tid]) sys.push_back(Json::array({iv.ts, iv.dur, iv.a, iv.b, iv.c, iv.d}));
    // [ts, dur, state (-> strings), waker (-> strings)]
    Json off = Json::array();
    for (auto& iv : off_[t->tid]) off.push_back(Json::array({iv.ts, iv.dur, iv.a, iv.b}));
    threads.push_back({{"tid", t->tid},
                       {"pid", t->pid},
                       {"comm", t->comm},
                       {"process", t->process},
                       {"start", t->start},
                       {"end", t->end < 0 ? axis_.span : t->end},
                       {"sys_total", totals(sys_totals_)},
                       {"off_total", totals(off_totals_)},
                       {"sys", std::move(sys)},
                       {"off", std::move(off)},
                       {"density", density_[t->tid]}});
  }
  SYSPGO_TRY(Block());
  SYSPGO_TRY(BlockHist());
  Findings(findings);
  SYSPGO_TRY(Files());
  SYSPGO_TRY(PageCache(drawn));
  Access(drawn);
  Flame();
  data_["limits"] = {{"syscalls_per_thread", o_.max_syscalls_per_thread},
                     {"offcpu_per_thread", o_.max_offcpu_per_thread},
                     {"block_requests", o_.max_block_requests},
                     {"occurrences", o_.max_occurrences},
                     {"time_buckets", o_.time_buckets},
                     {"flame_min_share", Number(o_.flame_min_share)}};
  data_["strings"] = strings_.strings();
  return JsonForScript(data_);
}

std::string HtmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

Result<std::string> ReportData(Db& db, const RunInfo& run, const FindingSet& findings, const DrawnSummaries& drawn,
                               const ReportOptions& opts) {
  if (opts.time_buckets < 1) return MakeError("report: time_buckets must be at least 1");
  ReportBuilder b(db, run, opts);
  return b.Build(findings, drawn);
}

std::string ReportHtml(const std::string& data_json, const RunInfo& run) {
  std::string page = kReportPage;
  std::string title = "syspgo report: run " + std::to_string(run.id) + ": " + run.command;
  auto replace = [&](const std::string& mark, const std::string& with) {
    auto at = page.find(mark);
    if (at != std::string::npos) page.replace(at, mark.size(), with);
  };
  replace("@@TITLE@@", HtmlEscape(title));
  replace("@@DATA@@", data_json);  // JsonForScript escaped every '<', so it cannot end the <script>
  return page;
}

Result<std::string> BuildReport(Db& db, const RunInfo& run, const FindingSet& findings, const DrawnSummaries& drawn,
                                const ReportOptions& opts) {
  auto data = ReportData(db, run, findings, drawn, opts);
  if (!data) return data.error();
  return ReportHtml(*data, run);
}

}  // namespace syspgo
