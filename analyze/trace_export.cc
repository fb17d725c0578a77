//===- trace_export.cc - a run as a Chrome trace-event JSON file ---------===//
// Streams the run: each event table is read in time order by its own
// query and the streams are merged, so the trace is written in time order
// without holding the run in memory. Track names come first (metadata
// events), so a reader knows every track before its first event.
#include "analyze/trace_export.h"

#include <algorithm>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "analyze/blockhist.h"
#include "analyze/data/block.h"
#include "analyze/data/file_calls.h"
#include "analyze/data/offcpu.h"
#include "analyze/data/pagecache.h"
#include "analyze/file_calls.h"
#include "analyze/report_common.h"
#include "analyze/run.h"
#include "analyze/data/tasks.h"
#include "common/files.h"
#include "common/util.h"

namespace syspgo {
namespace {

using Json = nlohmann::ordered_json;

// ===--- Event text -------------------------------------------------------=== //

// Microseconds, the format's unit, with the nanosecond digits the database
// has: times count from the run's start, and a double holds every digit of
// them (printed in its shortest form: 1.5 for 1500 ns) for runs of up to
// 11 days.
double Micros(int64_t ns) { return ns < 0 ? 0.0 : static_cast<double>(ns) / 1000; }

// The same as text with all three decimals ("1.500"), for otherData.
std::string MicrosText(int64_t ns) {
  if (ns < 0) ns = 0;
  char buf[32];
  snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ns / 1000), static_cast<long long>(ns % 1000));
  return buf;
}

// An event with what every event starts with: name, cat, ph, pid and tid.
Json Event(const std::string& name, const char* cat, const char* ph, int64_t pid, int64_t tid) {
  Json e = {{"name", name}};
  if (*cat) e["cat"] = cat;
  e["ph"] = ph;
  e["pid"] = pid;
  e["tid"] = tid;
  return e;
}

// An event that lasts: an "X" (complete) event from ts to ts + dur.
Json Complete(const std::string& name, const char* cat, int64_t pid, int64_t tid, int64_t ts, int64_t dur) {
  Json e = Event(name, cat, "X", pid, tid);
  e["ts"] = Micros(ts);
  e["dur"] = Micros(dur);
  return e;
}

Json Metadata(const char* what, int64_t pid, int64_t tid, const std::string& key, Json value) {
  Json e = Event(what, "", "M", pid, tid);
  e["args"] = {{key, std::move(value)}};
  return e;
}

// One time-ordered stream of events.
struct Stream {
  std::function<bool(Status*)> next;  // reads the next events into ts/dur/events; false at the end or on error
  int64_t ts = 0, dur = 0;
  std::vector<Json> events;  // one, or an event and what goes with it
  bool has = false;
};

// Write's streams, and the statements they read, which live as long as it.
struct Streams {
  std::vector<Stream> list;
  std::vector<std::unique_ptr<CachedStmt>> stmts;
};

// The synthetic processes whose tracks hold the findings and the page
// cache counter (the block devices' follow from kTraceSyntheticPid + 2000).
constexpr int64_t kFindingsPid = kTraceSyntheticPid, kCounterPid = kTraceSyntheticPid + 1000;

class Exporter {
 public:
  Exporter(Db& db, const RunInfo& run, const FindingSet& findings) : db_(db), run_(run), findings_(findings) {}
  Status Gather();
  Status Write(FILE* out);
  const TraceStats& stats() const { return stats_; }

 private:
  std::string What(const std::string& table) const { return table + " of run " + std::to_string(run_.id); }
  Status Names();
  Status BlockLanes();
  void WriteHead(FILE* out);
  void WriteTrackNames(FILE* out);
  Status AddQueryStream(Streams& ss, Result<CachedStmt> st, std::function<Json(Stmt&)> format);
  Status AddFileCalls(Streams& ss);
  Status AddOffCpu(Streams& ss);
  Status AddBlockRequests(Streams& ss);
  Status AddPageCache(Streams& ss);
  void AddFindingOccurrences(Streams& ss);
  void AddWakeups(Streams& ss);
  Status Merge(Streams& ss, FILE* out);
  // One event into traceEvents: one line of JSON.
  void Emit(FILE* out, const Json& event) {
    fputs(first_ ? "\n" : ",\n", out);
    fputs(JsonText(event).c_str(), out);
    first_ = false;
  }

  Db& db_;
  const RunInfo& run_;
  const FindingSet& findings_;
  TraceStats stats_;
  bool first_ = true;
  bool has_page_cache_ = false;
  RunOrigin origin_;
  int64_t command_start_ = 0;
  struct Proc {
    std::string name;
    int64_t order = 0;  // place in Perfetto's list: traced processes in start order
  };
  std::map<int64_t, Proc> procs_;
  std::map<int64_t, std::pair<int64_t, std::string>> threads_;  // tid -> (pid, name)
  std::map<int64_t, int> device_lanes_;                         // dev -> lanes its requests need
  std::map<int64_t, int64_t> device_pid_;                       // dev -> synthetic pid
  int finding_lanes_ = 0;
  std::vector<std::pair<const Finding*, Occurrence>> occurrences_;  // in time order
  std::vector<FindingLink> links_;                                   // every finding's, in time order
  std::vector<int> occurrence_lane_;
};

Status Exporter::Names() {
  auto origin = ReadRunOrigin(db_, run_.id);
  if (!origin) return origin.error();
  origin_ = *origin;
  auto window = ReadRunWindow(db_, run_.id);
  if (!window) return window.error();
  command_start_ = window->command_start_ns;
  // The traced tree's tasks in start order (a pid or tid reused within the
  // run has a row per life): a task keeps its latest name, and a pid its
  // first place.
  auto tasks = Tasks::Load(db_, run_.id);
  if (!tasks) return tasks.error();
  for (const ThreadRow& t : tasks->threads()) threads_[t.tid] = {t.pid, t.comm};
  int64_t order = 0;
  for (const ProcessRow& p : tasks->processes()) {
    auto [it, added] = procs_.try_emplace(p.pid, Proc{"", order});
    if (added) ++order;
    it->second.name = p.comm;
  }
  auto add_task = [&](Stmt& s) {
    int64_t pid = s.Int(0), tid = s.Int(1);
    std::string comm = s.Text(2);
    if (!threads_.count(tid)) threads_[tid] = {pid, comm.empty() ? "tid " + std::to_string(tid) : comm};
    if (!procs_.count(pid)) procs_[pid] = {comm.empty() ? "pid " + std::to_string(pid) : comm, 1000000 + pid};
  };
  // Tasks with events but no thread row: threads the proc group missed, and
  // (page_cache) tasks outside the traced tree such as kswapd.
  SYSPGO_TRY(data::VisitEventTasks(db_, What("events"), run_.id, add_task));
  if (has_page_cache_) SYSPGO_TRY(data::VisitPageCacheTasks(db_, What("page_cache"), run_.id, add_task));
  return {};
}

Status Exporter::BlockLanes() {
  std::map<int64_t, LaneAssigner> lanes;
  // The requests in the order the export writes them (data::OpenRequestsByTime).
  SYSPGO_TRY(data::VisitRequestTimes(db_, What("block_rq"), run_.id,
                                     [&](Stmt& s) { lanes[s.Int(2)].Add(s.Int(0), s.Int(1)); }));
  int64_t pid = kTraceSyntheticPid + 2000;
  for (auto& [dev, l] : lanes) {
    device_lanes_[dev] = l.lanes();
    device_pid_[dev] = pid;
    pid += 1000;  // room for the slot tids pid+1 ... pid+999
  }
  return {};
}

Status Exporter::Gather() {
  has_page_cache_ = data::HasTable(db_, "page_cache");
  SYSPGO_TRY(Names());
  SYSPGO_TRY(BlockLanes());
  for (const Finding& f : findings_.findings)
    for (const Occurrence& o : f.occurrences) occurrences_.emplace_back(&f, o);
  std::stable_sort(occurrences_.begin(), occurrences_.end(), [](auto& x, auto& y) {
    return x.second.ts != y.second.ts ? x.second.ts < y.second.ts : x.second.dur > y.second.dur;
  });
  for (const Finding& f : findings_.findings) links_.insert(links_.end(), f.links.begin(), f.links.end());
  std::stable_sort(links_.begin(), links_.end(), [](auto& x, auto& y) { return x.ts < y.ts; });
  LaneAssigner lanes;
  for (auto& [f, o] : occurrences_) occurrence_lane_.push_back(lanes.Add(o.ts, o.dur));
  finding_lanes_ = lanes.lanes();
  return {};
}

Status Exporter::Write(FILE* out) {
  WriteHead(out);
  WriteTrackNames(out);
  // The streams: each ordered by ts, longer first at equal ts (a parent
  // before what nests in it), with ts and dur its columns 0 and 1.
  Streams ss;
  ss.list.reserve(5);
  SYSPGO_TRY(AddFileCalls(ss));
  SYSPGO_TRY(AddOffCpu(ss));
  SYSPGO_TRY(AddBlockRequests(ss));
  if (has_page_cache_) SYSPGO_TRY(AddPageCache(ss));
  AddFindingOccurrences(ss);
  AddWakeups(ss);
  SYSPGO_TRY(Merge(ss, out));
  fputs("\n]}\n", out);
  return {};
}

// Header and the run's description (otherData is shown by chrome://tracing).
// The document with traceEvents empty, written up to that array's '[':
// the events stream into it, one at a time.
void Exporter::WriteHead(FILE* out) {
  Json head = {{"displayTimeUnit", "ns"},
               {"otherData",
                {{"producer", "syspgo " + origin_.syspgo_version},
                 {"run", run_.id},
                 {"command", run_.command},
                 {"host", origin_.host},
                 {"kernel", origin_.kernel_release},
                 {"status", run_.status},
                 {"start_realtime_ns", origin_.start_realtime_ns},
                 {"command_start_us", MicrosText(command_start_)}}},
               {"traceEvents", Json::array()}};
  std::string h = JsonText(head);
  h.resize(h.size() - 2);  // "]}"
  fputs(h.c_str(), out);
}

// Track names, before any event: the viewers name and order a track by
// the metadata they have read when they first see it.
void Exporter::WriteTrackNames(FILE* out) {
  auto meta = [&](const char* what, int64_t pid, int64_t tid, const std::string& key, Json value) {
    Emit(out, Metadata(what, pid, tid, key, std::move(value)));
    ++stats_.metadata;
  };
  for (auto& [pid, p] : procs_) {
    meta("process_name", pid, pid, "name", p.name);
    meta("process_sort_index", pid, pid, "sort_index", p.order);
  }
  for (auto& [tid, t] : threads_) {
    meta("thread_name", t.first, tid, "name", t.second);
    meta("thread_sort_index", t.first, tid, "sort_index", tid == t.first ? 0 : tid);
  }
  for (auto& [dev, pid] : device_pid_) {
    meta("process_name", pid, pid, "name", "block device " + DevName(dev));
    meta("process_sort_index", pid, pid, "sort_index", 2000000 + (pid - kTraceSyntheticPid));
    for (int l = 0; l < device_lanes_[dev]; ++l)
      meta("thread_name", pid, pid + 1 + l, "name", "queue slot " + std::to_string(l));
  }
  if (has_page_cache_)
    meta("process_name", kCounterPid, kCounterPid, "name", "page cache (pages the run added minus deleted)");
  if (finding_lanes_) {
    meta("process_name", kFindingsPid, kFindingsPid, "name", "syspgo findings");
    meta("process_sort_index", kFindingsPid, kFindingsPid, "sort_index", -1);
    for (int l = 0; l < finding_lanes_; ++l)
      meta("thread_name", kFindingsPid, kFindingsPid + 1 + l, "name", "findings " + std::to_string(l));
  }
}

// A stream of one event per row of a query (`st`), made by `format`: most
// tables need nothing more than that.
Status Exporter::AddQueryStream(Streams& ss, Result<CachedStmt> st, std::function<Json(Stmt&)> format) {
  if (!st) return st.error();
  ss.stmts.push_back(std::make_unique<CachedStmt>(std::move(*st)));
  Stmt* s = &**ss.stmts.back();
  Stream stream;
  stream.next = [this, s, format = std::move(format), &ss, idx = ss.list.size()](Status* err) {
    Stream& me = ss.list[idx];
    if (!s->Step(err)) return false;
    me.ts = s->Int(0);
    me.dur = s->Int(1);
    me.events = {format(*s)};
    return true;
  };
  ss.list.push_back(std::move(stream));
  return {};
}

// File syscalls on their thread's track, with what they were called on and
// what they returned.
Status Exporter::AddFileCalls(Streams& ss) {
  return AddQueryStream(ss, data::OpenFileCallsByTime(db_, What("file_io, file_open and file_lookup"), run_.id),
                        [this](Stmt& s) {
    ++stats_.syscalls;
    Json e = Complete(s.Text(4), "syscall", s.Int(2), s.Int(3), s.Int(0), s.Int(1));
    Json& args = e["args"] = Json::object();
    int64_t ret = s.Int(7);
    if (s.Int(10)) {  // an open (1) or a lookup (2)
      args["path"] = s.Text(6);
      args["flags"] = s.Int(11);
      args[ret < 0 ? "errno" : s.Int(10) == 1 ? "fd" : "result"] = ret < 0 ? -ret : ret;
    } else {
      args["fd"] = s.Int(5);
      args["file"] = s.Text(6);
      args["requested"] = s.Int(9);
      args[ret >= 0 ? "done" : "errno"] = ret >= 0 ? ret : -ret;
      if (s.Int(8) >= 0) args["offset"] = s.Int(8);
    }
    return e;
  });
}

// Off-CPU intervals on their thread's track, with who woke them.
Status Exporter::AddOffCpu(Streams& ss) {
  return AddQueryStream(ss, data::OpenIntervalsByTime(db_, What("offcpu"), run_.id), [this](Stmt& s) {
    ++stats_.offcpu;
    std::string state = OffCpuStateName(s.Int(4));
    Json e = Complete("off-CPU " + state, "offcpu", s.Int(2), s.Int(3), s.Int(0), s.Int(1));
    Json& args = e["args"] = {{"state", state}, {"cpu", s.Int(5)}};
    if (s.Int(7) > 0) args["waker"] = s.Text(6) + " (tid " + std::to_string(s.Int(7)) + ")";
    else if (s.Int(7) == 0) args["waker"] = "interrupt on an idle CPU";
    if (s.Int(8) >= 0) args["runnable_us"] = Micros(s.Int(0) + s.Int(1) - s.Int(8));
    return e;
  });
}

// Block requests on their device's queue slots (BlockLanes), with the
// task and file they were for.
Status Exporter::AddBlockRequests(Streams& ss) {
  auto lanes = std::make_shared<std::map<int64_t, LaneAssigner>>();
  return AddQueryStream(ss, data::OpenRequestsByTime(db_, What("block_rq"), run_.id), [this, lanes](Stmt& s) {
    ++stats_.block;
    int64_t dev = s.Int(2);
    int lane = (*lanes)[dev].Add(s.Int(0), s.Int(1));
    int64_t pid = device_pid_[dev];
    Json e = Complete(s.Text(3), "block", pid, pid + 1 + lane, s.Int(0), s.Int(1));
    Json& args = e["args"] = {{"bytes", s.Int(4)}, {"sector", s.Int(5)}, {"flags", s.Int(6)}, {"error", s.Int(7)}};
    if (s.Int(8)) {
      args["for"] = s.Text(9) + " (tid " + std::to_string(s.Int(8)) + ")";
      args["traced"] = s.Int(12);
    }
    if (!s.Text(10).empty()) args["file"] = s.Text(10);
    if (s.Int(11) >= 0) args["queued_us"] = Micros(s.Int(11));
    return e;
  });
}

// Instant events, and the run's net pages as a counter at most once per
// millisecond (enough to see churn; the trace stays about the size of
// the events it describes), plus the final value when the stream ends.
Status Exporter::AddPageCache(Streams& ss) {
  auto st = data::OpenPageCacheByTime(db_, What("page_cache"), run_.id);
  if (!st) return st.error();
  ss.stmts.push_back(std::make_unique<CachedStmt>(std::move(*st)));
  Stmt* s = &**ss.stmts.back();
  struct Counter {
    int64_t net = 0, shown = 0;        // pages: now, and as last written
    int64_t last_ts = -1, shown_ts = -1;
    bool done = false;
  };
  auto c = std::make_shared<Counter>();
  auto counter = [](int64_t ts, int64_t pages) {
    Json e = Event("page cache pages", "page_cache", "C", kCounterPid, kCounterPid);
    e["ts"] = Micros(ts);
    e["args"] = {{"pages", pages}};
    return e;
  };
  Stream stream;
  stream.next = [this, s, c, counter, &ss, idx = ss.list.size()](Status* err) {
    Stream& me = ss.list[idx];
    if (c->done) return false;
    if (!s->Step(err)) {
      c->done = true;
      if (!err->ok() || c->last_ts < 0 || c->net == c->shown) return false;
      me.ts = c->last_ts;
      me.dur = 0;
      me.events = {counter(c->last_ts, c->net)};
      ++stats_.counters;
      return true;
    }
    ++stats_.page_cache;
    int64_t ts = s->Int(0);
    bool add = s->Int(4) == 1;
    Json e = Event(add ? "page cache add" : "page cache delete", "page_cache", "i", s->Int(2), s->Int(3));
    e["ts"] = Micros(ts);
    e["s"] = "t";
    std::string file =
        s->Text(7).empty() ? DevName(s->Int(8)) + " inode " + std::to_string(s->Int(9)) : s->Text(7);
    Json& args = e["args"] = {{"file", file}, {"index", s->Int(5)}, {"pages", s->Int(6)}};
    if (!s->Text(10).empty()) args["memory_cgroup"] = s->Text(10);
    me.ts = ts;
    me.dur = 0;
    me.events = {std::move(e)};
    c->net += add ? s->Int(6) : -s->Int(6);
    c->last_ts = ts;
    if (c->shown_ts < 0 || ts - c->shown_ts >= 1000000) {
      me.events.push_back(counter(ts, c->net));
      c->shown = c->net;
      c->shown_ts = ts;
      ++stats_.counters;
    }
    return true;
  };
  ss.list.push_back(std::move(stream));
  return {};
}

// The findings' occurrences on their own tracks (Gather's lanes), each
// with its fix.
void Exporter::AddFindingOccurrences(Streams& ss) {
  Stream stream;
  stream.next = [this, &ss, idx = ss.list.size(), i = size_t{0}](Status*) mutable {
    if (i >= occurrences_.size()) return false;
    auto& [f, o] = occurrences_[i];
    Stream& me = ss.list[idx];
    me.ts = o.ts;
    me.dur = o.dur;
    ++stats_.findings;
    Json e = Complete(f->title, "finding", kFindingsPid, kFindingsPid + 1 + occurrence_lane_[i], o.ts, o.dur);
    Json& args = e["args"] = {{"kind", f->kind}};
    if (o.tid) args["tid"] = o.tid;
    args["fix"] = f->fix;
    me.events = {std::move(e)};
    ++i;
    return true;
  };
  ss.list.push_back(std::move(stream));
}

// A wakeup on the way to a finding's root: a flow from the waker's track
// to the woken thread's, which Perfetto draws as an arrow between the
// slices there at that moment.
void Exporter::AddWakeups(Streams& ss) {
  Stream stream;
  stream.next = [this, &ss, idx = ss.list.size(), i = size_t{0}](Status*) mutable {
    if (i >= links_.size()) return false;
    const FindingLink& l = links_[i];
    Stream& me = ss.list[idx];
    me.ts = l.ts;
    me.dur = 0;
    Json from = Event("wakeup", "syspgo.wakeup", "s", l.cause_pid, l.cause_tid);
    from["id"] = i + 1;
    from["ts"] = Micros(l.ts);
    Json to = Event("wakeup", "syspgo.wakeup", "f", l.pid, l.tid);
    to["id"] = i + 1;
    to["bp"] = "e";
    to["ts"] = Micros(l.ts);
    me.events = {std::move(from), std::move(to)};
    ++stats_.flows;
    ++i;
    return true;
  };
  ss.list.push_back(std::move(stream));
}

// The streams merged into one time order, which the viewers need (a
// parent before what nests in it): always the earliest pending event, the
// longer at equal ts.
Status Exporter::Merge(Streams& ss, FILE* out) {
  Status err;
  for (Stream& s : ss.list) {
    s.has = s.next(&err);
    if (!err.ok()) return err;
  }
  for (;;) {
    Stream* best = nullptr;
    for (Stream& s : ss.list)
      if (s.has && (!best || s.ts < best->ts || (s.ts == best->ts && s.dur > best->dur))) best = &s;
    if (!best) break;
    for (const Json& e : best->events) Emit(out, e);
    best->has = best->next(&err);
    if (!err.ok()) return MakeError(What("events") + " from '" + db_.path() + "': " + err.error().message);
  }
  return {};
}

}  // namespace

Result<TraceStats> ExportChromeTrace(Db& db, const RunInfo& run, const FindingSet& findings, const std::string& out) {
  Exporter e(db, run, findings);
  SYSPGO_TRY(e.Gather());
  SYSPGO_TRY(WriteFileAtomically(out, [&](FILE* f) { return e.Write(f); }));
  return e.stats();
}

}  // namespace syspgo
