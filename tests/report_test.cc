//===- report_test.cc - `syspgo report` and `syspgo export`, read back ----===//
// The HTML report is loaded in headless Chromium (Debian's `chromium`) and
// checked through the DOM it leaves behind (--dump-dom): the page's own
// #report-status element says whether every panel drew and counts what it
// drew, script errors are also caught from Chromium's console log, and
// the labels, findings, markers, charts and tables are looked for by
// their ids and classes. The trace is read back by nlohmann's strict
// parser (what `syspgo export` writes must be valid JSON, not just
// JavaScript), and its event counts, names and ordering are compared with
// the database.
//
// Fixture tests use tests/data/report_fixture.sql with findings made here;
// the end-to-end test records examples/fileio_demo and a sleep for real.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "analyze/pagecache_chart.h"
#include "analyze/report.h"
#include "analyze/report_findings.h"
#include "analyze/run.h"
#include "analyze/trace_export.h"
#include "common/profile_db.h"
#include "common/util.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

constexpr char kChromium[] = "/usr/bin/chromium";


void WriteAll(const std::string& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

size_t Count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + needle.size())) ++n;
  return n;
}

// Text as the DOM serializer writes it inside an element.
std::string HtmlText(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

// ===--- Chromium ------------------------------------------------------=== //

struct Page {
  std::string dom;  // the DOM after the page's scripts ran
  std::string log;  // Chromium's stderr: console messages, "Uncaught ..." errors
  // Attributes of #report-status, the page's account of itself.
  std::map<std::string, std::string> status;
};

std::vector<std::string> ChromiumArgs(const TempDir& dir) {
  static int n = 0;
  std::string profile = dir.File("chromium-profile-" + std::to_string(++n));
  mkdir(profile.c_str(), 0700);
  return {kChromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--user-data-dir=" + profile, "--hide-scrollbars"};
}

Page Load(const TempDir& dir, const std::string& html) {
  Page p;
  struct stat st;
  if (stat(kChromium, &st) != 0) {
    ADD_FAILURE() << kChromium << " is not installed; these tests need Debian's chromium (apt-get install chromium; "
                  << "scripts/setup.sh installs it)";
    return p;
  }
  auto args = ChromiumArgs(dir);
  for (const char* a : {"--enable-logging=stderr", "--v=0", "--dump-dom"}) args.push_back(a);
  args.push_back("file://" + html);
  auto r = RunCmd(args);
  EXPECT_EQ(r.status, 0) << r.err;
  p.dom = r.out;
  p.log = r.err;
  std::smatch m;
  if (std::regex_search(p.dom, m, std::regex("<div id=\"report-status\"([^>]*)>"))) {
    std::string attrs = m[1];
    std::regex kv("(data-[a-z-]+)=\"([^\"]*)\"");
    for (auto it = std::sregex_iterator(attrs.begin(), attrs.end(), kv); it != std::sregex_iterator(); ++it)
      p.status[(*it)[1]] = (*it)[2];
  }
  return p;
}

// The element with this id, with everything in it, for checks that must
// not match elsewhere on the page ("" if there is none).
std::string Part(const std::string& dom, const std::string& id) {
  size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  size_t start = dom.rfind('<', at);
  size_t name_end = dom.find_first_of(" >", start);
  std::string tag = dom.substr(start + 1, name_end - start - 1);
  int depth = 0;
  for (size_t i = start; i < dom.size(); ++i) {
    if (dom.compare(i, tag.size() + 3, "</" + tag + ">") == 0) {
      if (--depth == 0) return dom.substr(start, i + tag.size() + 3 - start);
    } else if (dom.compare(i, tag.size() + 1, "<" + tag) == 0 &&
               (dom[i + tag.size() + 1] == ' ' || dom[i + tag.size() + 1] == '>')) {
      ++depth;
    }
  }
  return dom.substr(start);
}

std::set<std::string> Matches(const std::string& s, const std::string& re) {
  std::set<std::string> out;
  std::regex r(re);
  for (auto it = std::sregex_iterator(s.begin(), s.end(), r); it != std::sregex_iterator(); ++it) out.insert((*it)[1]);
  return out;
}

void ExpectDrawnCleanly(const Page& p) {
  EXPECT_EQ(p.log.find("Uncaught"), std::string::npos) << "script error in the console:\n" << p.log;
  EXPECT_EQ(p.status.count("data-state") ? p.status.at("data-state") : "", "ok") << Part(p.dom, "js-errors");
  EXPECT_EQ(p.status.count("data-errors") ? p.status.at("data-errors") : "", "0");
}

// ===--- Trace read-back -------------------------------------------------=== //

struct TraceFacts {
  bool valid = false;
  std::string error;
  std::map<std::string, int64_t> n;           // "events", "tracks", "nonmonotonic", "misnested", "badts"
  std::map<std::string, int64_t> cat;         // "syscall X" -> events
  std::map<int64_t, std::string> process;     // pid -> process_name
  std::map<int64_t, std::pair<int64_t, std::string>> thread;  // tid -> (pid, thread_name)
  double max_ts_us = 0;
};

TraceFacts ReadTrace(const std::string& path) {
  using Json = nlohmann::json;
  TraceFacts t;
  Json doc = Json::parse(ReadAll(path), nullptr, false);
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
    t.error = "not a valid trace: " + path;
    return t;
  }
  t.valid = true;
  const Json& events = doc["traceEvents"];
  t.n = {{"events", static_cast<int64_t>(events.size())}, {"nonmonotonic", 0}, {"misnested", 0}, {"badts", 0}};
  using Track = std::pair<int64_t, int64_t>;  // pid, tid
  std::map<Track, double> last;                // per track: the ts of its latest event
  std::map<Track, std::vector<double>> open;   // per track: ends of the complete events enclosing it
  for (const Json& e : events) {
    std::string ph = e.at("ph");
    ++t.cat[e.value("cat", "-") + " " + ph];
    if (ph == "M") {
      int64_t pid = e.at("pid"), tid = e.at("tid");
      std::string name = e.at("args").value("name", "");
      if (e.at("name") == "process_name") t.process[pid] = name;
      else if (e.at("name") == "thread_name") t.thread[tid] = {pid, name};
      continue;
    }
    // A timed event needs a number ts >= 0, and a complete one a dur >= 0 too.
    double ts = -1, dur = 0;
    if (e.contains("ts") && e["ts"].is_number()) ts = e["ts"];
    bool ok = ts >= 0;
    if (ph == "X") {
      ok = ok && e.contains("dur") && e["dur"].is_number();
      if (ok) dur = e["dur"];
      ok = ok && dur >= 0;
    }
    if (!ok) {
      ++t.n["badts"];
      continue;
    }
    Track track{e.at("pid").get<int64_t>(), e.at("tid").get<int64_t>()};
    auto seen = last.find(track);
    if (seen != last.end() && ts < seen->second) ++t.n["nonmonotonic"];
    last[track] = ts;
    t.max_ts_us = std::max(t.max_ts_us, ts + dur);
    if (ph == "X") {
      std::vector<double>& ends = open[track];
      while (!ends.empty() && ends.back() <= ts) ends.pop_back();
      if (!ends.empty() && ts + dur > ends.back() + 1e-6) ++t.n["misnested"];
      ends.push_back(ts + dur);
    }
  }
  t.n["tracks"] = static_cast<int64_t>(last.size());
  return t;
}

// The events of each kind a trace must hold, and the order every trace
// keeps: time order per track, nesting complete events, valid timestamps.
void ExpectTrace(const TraceFacts& t, int64_t syscalls, int64_t offcpu, int64_t block, int64_t page_cache,
                 int64_t findings) {
  auto n = [](const std::map<std::string, int64_t>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? int64_t{0} : it->second;
  };
  EXPECT_EQ(n(t.cat, "syscall X"), syscalls);
  EXPECT_EQ(n(t.cat, "offcpu X"), offcpu);
  EXPECT_EQ(n(t.cat, "block X"), block);
  EXPECT_EQ(n(t.cat, "page_cache i"), page_cache);
  EXPECT_EQ(n(t.cat, "finding X"), findings);
  EXPECT_EQ(n(t.n, "nonmonotonic"), 0);
  EXPECT_EQ(n(t.n, "misnested"), 0);
  EXPECT_EQ(n(t.n, "badts"), 0);
  EXPECT_GT(n(t.n, "events"), 0);
}

int64_t Occurrences(const FindingSet& s) {
  int64_t n = 0;
  for (const Finding& f : s.findings) n += static_cast<int64_t>(f.occurrences.size());
  return n;
}

// ===--- Findings for the fixture -------------------------------------------=== //

FindingSet FixtureFindings() {
  FindingSet s;
  s.analyses = {"fixture-stalls", "fixture-pagecache"};
  Finding stall;
  stall.kind = "stall";
  stall.title = "writer (tid 101) stalls in write and fsync of /data/ckpt.bin, 50.0 MiB each time";
  stall.facts = {{"thread", "writer (tid 101)"}, {"syscall", "write, fsync"}, {"file", "/data/ckpt.bin"}};
  stall.count = 3;
  stall.total_ns = 3 * 130'900'000;
  stall.worst_ns = 130'900'000;
  stall.share = 0.196;
  stall.period = "every 500 ms";
  stall.fix = "move the checkpoint write to a background writer thread";
  stall.evidence = {"block write latency: 8-16 ms x 6"};
  for (int i = 0; i < 3; ++i) stall.occurrences.push_back({500'100'000 + i * 500'000'000, 130'900'000, 101});
  Finding churn;
  churn.kind = "pagecache-churn";
  churn.title = "/data/input.txt was dropped by kswapd0 and read again";
  churn.facts = {{"file", "/data/input.txt"}, {"memory cgroup", "/syspgo-test"}};
  churn.count = 1;
  churn.total_ns = 900'000'000;
  churn.worst_ns = 900'000'000;
  churn.fix = "raise the cgroup's memory limit";
  churn.occurrences = {{700'000'000, 900'000'000, 0}};
  s.findings = {stall, churn};
  return s;
}

struct FixtureRun {
  Db db;
  RunInfo run;
};
// A fixture database made in `dir` and opened read-only, with its run 1.
Result<FixtureRun> OpenFixtureRun(const TempDir& dir) {
  auto db = OpenProfileDb(FixtureDb(dir, "report_fixture.sql"), DbMode::kReadOnly);
  if (!db) return db.error();
  auto run = ResolveRun(*db, 1);
  if (!run) return run.error();
  return FixtureRun{std::move(*db), std::move(*run)};
}

Result<std::string> FixtureReport(const std::string& db_path, int64_t run_id, const FindingSet& findings,
                                  const ReportOptions& opts = {}) {
  auto db = OpenProfileDb(db_path, DbMode::kReadOnly);
  if (!db) return db.error();
  auto run = ResolveRun(*db, run_id);
  if (!run) return run.error();
  return BuildReport(*db, *run, findings, {}, opts);
}

// ===--- The report on the fixture -------------------------------------------=== //

TEST(ReportPage, FixtureDrawsEveryPanelWithTheFindingsMarked) {
  TempDir dir;
  std::string db = FixtureDb(dir, "report_fixture.sql");
  auto html = FixtureReport(db, 1, FixtureFindings());
  ASSERT_TRUE(html.ok()) << html.error().message;
  // Self-contained: nothing is loaded from anywhere.
  EXPECT_EQ(html->find("<link"), std::string::npos);
  EXPECT_EQ(html->find(" src="), std::string::npos);
  EXPECT_EQ(Count(*html, "<script"), 3u);  // the error catcher, the data, the code
  std::string path = dir.File("report.html");
  WriteAll(path, *html);
  Page p = Load(dir, path);
  ExpectDrawnCleanly(p);

  // A timeline row per thread, and one per block device.
  EXPECT_EQ(p.status["data-threads"], "3");
  EXPECT_EQ(Matches(p.dom, "class=\"tl-label\" data-tid=\"(\\d+)\""), (std::set<std::string>{"100", "101", "200"}));
  EXPECT_EQ(p.status["data-devices"], "1");
  EXPECT_NE(p.dom.find("data-dev=\"8:0\""), std::string::npos);
  EXPECT_NE(Part(p.dom, "tl-note").find("Drawn: 21 of 21 syscalls, 8 of 8 off-CPU intervals, 10 of 10 block requests"),
            std::string::npos)
      << Part(p.dom, "tl-note");

  // The findings, listed and marked: the stall's three occurrences on the
  // writer's row, the churn across every row (tid 0).
  EXPECT_EQ(p.status["data-findings"], "2");
  std::string listed = Part(p.dom, "findings-body");
  for (const Finding& f : FixtureFindings().findings)
    EXPECT_NE(listed.find(HtmlText(f.title)), std::string::npos) << f.title;
  EXPECT_NE(listed.find("Fix: move the checkpoint write to a background writer thread"), std::string::npos);
  EXPECT_NE(listed.find("every 500 ms"), std::string::npos);
  EXPECT_EQ(p.status["data-markers"], "4");
  EXPECT_EQ(Count(p.dom, "class=\"occ\" data-finding=\"0\" data-tid=\"101\""), 3u);
  EXPECT_EQ(Count(p.dom, "class=\"occ\" data-finding=\"1\" data-tid=\"0\""), 1u);

  // Histograms: one per device and op from block_latency_hist, one per syscall.
  std::string latency = Part(p.dom, "latency");
  EXPECT_EQ(Count(Part(p.dom, "block-hist"), "<figure class=\"chart\">"), 3u);
  for (const char* h : {"block 8:0 read", "block 8:0 write", "block 8:0 flush", "6 requests, mean 13.5 ms"})
    EXPECT_NE(latency.find(h), std::string::npos) << h;
  EXPECT_EQ(Count(Part(p.dom, "sys-hist"), "<figure class=\"chart\">"), 5u);
  for (const char* h :
       {">fsync <", ">write <", ">read <", ">openat <", ">close <", "3 calls, total 240 ms, worst 80.0 ms"})
    EXPECT_NE(latency.find(h), std::string::npos) << h;

  // Top files, as `analyze files` ranks them.
  std::string files = Part(p.dom, "files-body");
  ASSERT_NE(files.find("/data/ckpt.bin"), std::string::npos);
  EXPECT_LT(files.find("/data/ckpt.bin"), files.find("/data/input.txt"));
  EXPECT_NE(files.find("150.0 MiB"), std::string::npos);

  // Page cache: totals, the refaults (16 pages of input.txt, 32 of the
  // checkpoint re-added after kswapd dropped them), who deleted.
  std::string pc = Part(p.dom, "pc-body");
  EXPECT_NE(pc.find("80 added (320.0 KiB), 64 deleted, 48 refaulted"), std::string::npos) << pc.substr(0, 600);
  EXPECT_NE(pc.find("kswapd0"), std::string::npos);
  EXPECT_NE(pc.find("class=\"pc-chart\""), std::string::npos);

  // No CPU samples in the fixture: the flame graph says why and how to get them.
  EXPECT_NE(Part(p.dom, "flame-note").find("No flame graph: run 1 of"), std::string::npos);
  EXPECT_NE(Part(p.dom, "flame-note").find("--probes cpu"), std::string::npos);
}

// `syspgo report` asks the findings' page-cache pass to tally the chart as
// well (DrawnSummaries); the page must be the one the report's own pass
// draws. A chart on other buckets is not used, and none is made unasked.
TEST(ReportPage, PageCacheChartFromTheFindingsPassIsTheReportsOwn) {
  TempDir dir;
  auto fx = OpenFixtureRun(dir);
  ASSERT_TRUE(fx.ok()) << fx.error().message;
  ReportOptions o;
  o.time_buckets = 50;
  DrawnSummaries shared{o.time_buckets};
  FindingSet found = CollectFindings(fx->db, fx->run, &shared);
  ASSERT_NE(shared.pagecache_chart, nullptr) << (found.problems.empty() ? "" : found.problems[0]);
  const PageCacheChart& chart = *shared.pagecache_chart;
  EXPECT_EQ(chart.rows(), 27);
  EXPECT_EQ(chart.axis().buckets, 50);
  int64_t refaulted = 0;
  for (int64_t n : chart.refaulted()) refaulted += n;
  EXPECT_EQ(refaulted, 48);  // the writer's file twice and the app's once, added again after kswapd took them
  DrawnSummaries own = shared;
  own.pagecache_chart.reset();
  auto a = ReportData(fx->db, fx->run, found, shared, o);
  auto b = ReportData(fx->db, fx->run, found, own, o);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(*a, *b);
  DrawnSummaries other{7};
  CollectFindings(fx->db, fx->run, &other);
  ASSERT_NE(other.pagecache_chart, nullptr);
  auto c = ReportData(fx->db, fx->run, found, other, o);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(*c, *b);
  DrawnSummaries unasked;
  CollectFindings(fx->db, fx->run, &unasked);
  EXPECT_EQ(unasked.pagecache_chart, nullptr);
}

TEST(ReportPage, CapsKeepTheLongestIntervalsAndSaySo) {
  TempDir dir;
  ReportOptions o;
  o.max_syscalls_per_thread = 2;
  o.max_offcpu_per_thread = 1;
  o.max_block_requests = 3;
  auto fx = OpenFixtureRun(dir);
  ASSERT_TRUE(fx.ok()) << fx.error().message;
  auto data = ReportData(fx->db, fx->run, {}, {}, o);
  ASSERT_TRUE(data.ok()) << data.error().message;
  // The writer's two longest syscalls are fsyncs of 80 ms (ties go to the
  // earlier): the first two, not the third, nor any write.
  EXPECT_NE(data->find("[551000000,80000000,"), std::string::npos);
  EXPECT_NE(data->find("[1051000000,80000000,"), std::string::npos);
  EXPECT_EQ(data->find("[1551000000,80000000,"), std::string::npos);
  EXPECT_EQ(data->find("[500100000,50000000,"), std::string::npos);
  std::string path = dir.File("capped.html");
  WriteAll(path, ReportHtml(*data, fx->run));
  Page p = Load(dir, path);
  ExpectDrawnCleanly(p);
  std::string note = Part(p.dom, "tl-note");
  EXPECT_NE(note.find("Drawn: 6 of 21 syscalls, 3 of 8 off-CPU intervals, 3 of 10 block requests (the longest"),
            std::string::npos)
      << note;
  // The histograms still count every call.
  EXPECT_NE(Part(p.dom, "latency").find("3 calls, total 240 ms"), std::string::npos);
}

TEST(ReportPage, EmptyRunAndADatabaseWithoutPageCacheTables) {
  TempDir dir;
  std::string db = FixtureDb(dir, "report_fixture.sql");
  // Run 2 (the newest) has no events at all: every panel says so.
  auto r = RunCmd({SyspgoBin(), "report", db, "-o", dir.File("empty.html")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("run 2, 0 findings"), std::string::npos) << r.out;
  Page p = Load(dir, dir.File("empty.html"));
  ExpectDrawnCleanly(p);
  EXPECT_EQ(p.status["data-threads"], "1");
  EXPECT_NE(Part(p.dom, "files-body").find("No file I/O on regular files recorded in this run."), std::string::npos);
  EXPECT_NE(Part(p.dom, "block-hist").find("has no block latency histogram: the block probe group was not recorded"),
            std::string::npos);
  EXPECT_NE(Part(p.dom, "pc-body").find("no page-cache data in this run (the pagecache probe group was off"),
            std::string::npos);
  EXPECT_NE(Part(p.dom, "access-body").find("no file was faulted on or read in this run"), std::string::npos);
  EXPECT_EQ(p.status["data-access-charts"], "0");

  // A database written before the pagecache group existed.
  {
    auto w = OpenProfileDb(db, DbMode::kReadWrite);
    ASSERT_TRUE(w.ok()) << w.error().message;
    Status st = w->Exec("DROP VIEW page_cache_refault; DROP TABLE page_cache;");
    ASSERT_TRUE(st.ok()) << st.error().message;
  }
  r = RunCmd({SyspgoBin(), "report", db, "--run", "1", "-o", dir.File("old.html")});
  ASSERT_EQ(r.status, 0) << r.err;
  p = Load(dir, dir.File("old.html"));
  ExpectDrawnCleanly(p);
  EXPECT_NE(Part(p.dom, "pc-body").find("no page-cache data in this run: the database predates"), std::string::npos);
  EXPECT_NE(Part(p.dom, "access-body").find("no access order: "), std::string::npos) << Part(p.dom, "access-body");
  EXPECT_EQ(p.status["data-threads"], "3");
}

// A report read for some processes (--comm, as --pid, --cgroup and
// --container) says which, in the words of the text's "only:" line; an
// unfiltered one says nothing of the kind.
TEST(ReportPage, AFilteredReportSaysWhichProcessesItCovers) {
  TempDir dir;
  std::string db = FixtureDb(dir, "report_fixture.sql");
  auto text = RunCmd({SyspgoBin(), "analyze", db, "files", "--run", "1", "--comm", "helper"});
  ASSERT_EQ(text.status, 0) << text.err;
  size_t at = text.out.find("only: ");
  ASSERT_NE(at, std::string::npos) << text.out;
  std::string only = text.out.substr(at, text.out.find('\n', at) - at);
  EXPECT_EQ(only, "only: comm helper (1 of 2 processes)");
  auto r = RunCmd({SyspgoBin(), "report", db, "--run", "1", "--comm", "helper", "-o", dir.File("helper.html")});
  ASSERT_EQ(r.status, 0) << r.err;
  Page p = Load(dir, dir.File("helper.html"));
  ExpectDrawnCleanly(p);
  EXPECT_EQ(p.status["data-threads"], "1");
  EXPECT_NE(Part(p.dom, "run-meta").find(">" + HtmlText(only) + "<"), std::string::npos) << Part(p.dom, "run-meta");

  r = RunCmd({SyspgoBin(), "report", db, "--run", "1", "-o", dir.File("all.html")});
  ASSERT_EQ(r.status, 0) << r.err;
  p = Load(dir, dir.File("all.html"));
  ExpectDrawnCleanly(p);
  EXPECT_EQ(p.status["data-threads"], "3");
  EXPECT_EQ(Part(p.dom, "run-meta").find("only:"), std::string::npos) << Part(p.dom, "run-meta");
}

// The page with `script` run after its own (to act as a user would).
std::string WithScript(const std::string& html, const std::string& script) {
  std::string out = html;
  out.insert(out.rfind("</body>"), "<script>\n" + script + "\n</script>\n");
  return out;
}

// Hovering, zooming and the findings' buttons, driven by synthetic events;
// what the page did is written into #interaction for the test to read.
constexpr char kInteractions[] = R"js(
(function () {
  const out = [];
  const box = document.getElementById('tl-canvas-box');
  const r = box.getBoundingClientRect();
  const row = TL.rows.find(x => x.kind === 'thread' && x.t.tid === 101);
  const hover = (t, lane) => {
    box.dispatchEvent(new MouseEvent('mousemove', {clientX: r.left + TL.x(t), bubbles: true,
                                                   clientY: r.top + row.y + GAP + lane * (LANE + GAP) + 5}));
    return document.getElementById('tl-tip').textContent.replace(/\n/g, ' | ');
  };
  out.push('cpu: ' + hover(530e6, 0));
  out.push('sys: ' + hover(525e6, 1));
  out.push('blk: ' + hover(526e6, 2));
  const w0 = TL.v1 - TL.v0;
  box.dispatchEvent(new WheelEvent('wheel', {deltaY: -400, clientX: r.left + TL.x(525e6), clientY: r.top + 5,
                                            bubbles: true, cancelable: true}));
  out.push('zoomed in: ' + (TL.v1 - TL.v0 < w0 / 2) + ', around 525 ms: ' + (TL.v0 < 525e6 && TL.v1 > 525e6));
  document.querySelector('#finding-1 button').click();
  out.push('finding 2 shown: ' + (TL.v0 <= 700e6 && TL.v1 >= 1600e6 && TL.v1 - TL.v0 < w0));
  document.getElementById('tl-reset').click();
  out.push('reset: ' + (TL.v0 === TL.home[0] && TL.v1 === TL.home[1]));
  const d = document.createElement('pre');
  d.id = 'interaction';
  d.textContent = out.join('\n');
  document.body.append(d);
})();
)js";

TEST(ReportPage, HoverZoomAndFindingButtonsWork) {
  TempDir dir;
  std::string db = FixtureDb(dir, "report_fixture.sql");
  auto html = FixtureReport(db, 1, FixtureFindings());
  ASSERT_TRUE(html.ok()) << html.error().message;
  std::string path = dir.File("interact.html");
  WriteAll(path, WithScript(*html, kInteractions));
  Page p = Load(dir, path);
  ExpectDrawnCleanly(p);
  std::string got = Part(p.dom, "interaction");
  for (const char* want : {"cpu: writer (tid 101, pid 100) | off-CPU 35.0 ms: D (uninterruptible, usually I/O)",
                           "sys: writer (tid 101, pid 100) | write 50.0 ms · 50.0 MiB at offset 0 | "
                           "file: /data/ckpt.bin",
                           "blk: writer (tid 101, pid 100) | block write 1.00 MiB · 15.0 ms | at 521 ms | "
                           "for: writer (tid 101)",
                           "zoomed in: true, around 525 ms: true", "finding 2 shown: true", "reset: true"})
    EXPECT_NE(got.find(want), std::string::npos) << want << "\nin:\n" << got;
}

// About 180 000 events on top of the fixture: 100 000 syscalls on 8
// threads, 10 000 off-CPU intervals on 8 others, 20 000 block requests,
// 50 000 page-cache events. The page must stay a few MiB and draw.
constexpr char kLargeRunSql[] = R"sql(
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99999)
INSERT INTO file_io (run_id, ts, dur, pid, tid, nr, fd, dev, ino, kind, pos, req, ret)
SELECT 1, 100000000 + i * 19000, 2000 + (i * 7919) % 50000, 100, 1000 + i % 8, i % 2, 3, 2049, 12, 32768,
       i * 4096, 4096, 4096
FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 9999)
INSERT INTO offcpu (run_id, ts, dur, pid, tid, cpu, state, kernel_stack_id, user_stack_id)
SELECT 1, 100000000 + i * 190000, 1000000 + i % 50000, 100, 2000 + i % 8, 0, 1, 0, 0
FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 19999)
INSERT INTO block_rq (run_id, ts, dur, queue_dur, dev, part_dev, sector, bytes, op, flags, cmd_flags, error, pid,
                      tid, comm, target, issue_pid, issue_tid, file_dev, file_ino, file_index)
SELECT 1, 100000000 + i * 95000, 50000 + (i * 104729) % 400000, NULL, 2048, 2049, i * 8, 4096, i % 2, 0, 0, 0,
       100, 1000 + i % 8, 'worker', 1, 0, 0, 2049, 12, i
FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 49999)
INSERT INTO page_cache (run_id, ts, op, pid, tid, comm, dev, ino, idx, pages, task_cgroup, page_cgroup, why, stack_id)
SELECT 1, 100000000 + i * 38000, 1 + i % 2, 100, 100, 'fixture_app', 2049, 12, (i / 2) % 5000, 1, 7, 7, 1, 0
FROM n;
)sql";

TEST(ReportPage, LargeRunIsCappedAndStillDraws) {
  TempDir dir;
  std::string db = FixtureDb(dir, "report_fixture.sql");
  {
    auto w = OpenProfileDb(db, DbMode::kReadWrite);
    ASSERT_TRUE(w.ok()) << w.error().message;
    Status st = w->Exec(kLargeRunSql);
    ASSERT_TRUE(st.ok()) << st.error().message;
  }
  std::string html = dir.File("large.html");
  auto r = RunCmd({SyspgoBin(), "report", db, "--run", "1", "-o", html});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_LT(ReadAll(html).size(), 4u << 20);
  Page p = Load(dir, html);
  ExpectDrawnCleanly(p);
  EXPECT_EQ(p.status["data-threads"], "19");  // the fixture's 3, and 16 more
  // 3000 on each of the 8 busy threads and the fixture's 21; every off-CPU
  // interval; the 20 000 longest block requests.
  EXPECT_NE(Part(p.dom, "tl-note").find("Drawn: 24,021 of 100,021 syscalls, 10,008 of 10,008 off-CPU intervals, "
                                        "20,000 of 20,010 block requests (the longest"),
            std::string::npos)
      << Part(p.dom, "tl-note");
  EXPECT_NE(Part(p.dom, "sys-hist").find(">read <small>50,005 calls"), std::string::npos);  // 50 000 + the fixture's 5

  std::string trace = dir.File("large.json");
  r = RunCmd({SyspgoBin(), "export", db, "--run", "1", "-o", trace});
  ASSERT_EQ(r.status, 0) << r.err;
  TraceFacts t = ReadTrace(trace);
  ASSERT_TRUE(t.valid) << t.error;
  auto in = OpenRunWithFindings(db, 1);
  ASSERT_TRUE(in.ok()) << in.error().message;
  ExpectTrace(t, 100021, 10008, 20010, 50027, Occurrences(in->findings));
  EXPECT_EQ(t.thread[1003].second, "tid 1003");  // no thread row: named by its tid
}

// The checks above can fail: a page whose data is broken reports the error
// in #report-status and in its red box, and Chromium logs nothing uncaught
// because every panel catches its own error.
TEST(ReportPage, AScriptErrorIsReportedByThePage) {
  TempDir dir;
  RunInfo run;
  run.id = 1;
  run.command = "broken";
  std::string path = dir.File("broken.html");
  WriteAll(path, ReportHtml("{\"strings\": [], \"run\": {\"probes\": []}}", run));
  Page p = Load(dir, path);
  EXPECT_EQ(p.status["data-state"], "error");
  EXPECT_NE(p.status["data-errors"], "0");
  EXPECT_NE(Part(p.dom, "js-errors").find("Report error: "), std::string::npos);
}

TEST(ReportCli, RefusesBadArguments) {
  TempDir dir;
  std::string db = FixtureDb(dir, "report_fixture.sql");
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "report", db}), 2, "-o FILE.html"));
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "report", db, "-o", dir.File("x.html"), "--max-syscalls", "lots"}), 2,
                         "--max-syscalls needs a number from 0 to 1000000, got 'lots'"));
  EXPECT_TRUE(
      FailedWith(RunCmd({SyspgoBin(), "report", dir.File("missing.db"), "-o", dir.File("x.html")}), 1, "missing.db"));
  EXPECT_TRUE(
      FailedWith(RunCmd({SyspgoBin(), "report", db, "--run", "7", "-o", dir.File("x.html")}), 1, "has no run 7"));
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "report", db, "-o", "/nonexistent-dir/x.html"}), 1,
                         "cannot write '/nonexistent-dir/x.html': cannot create a file in /nonexistent-dir"));
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "export", db, "--format", "protobuf", "-o", dir.File("t.json")}), 2,
                         "unknown format 'protobuf'; the formats are: perfetto"));
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "export", db}), 2, "-o FILE"));
}

// ===--- The trace on the fixture --------------------------------------------=== //

TEST(TraceExport, FixtureTraceReadsBackWithEveryEventAndName) {
  TempDir dir;
  auto fx = OpenFixtureRun(dir);
  ASSERT_TRUE(fx.ok()) << fx.error().message;
  std::string out = dir.File("trace.json");
  auto stats = ExportChromeTrace(fx->db, fx->run, FixtureFindings(), out);
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  TraceFacts t = ReadTrace(out);
  ASSERT_TRUE(t.valid) << t.error;
  ExpectTrace(t, 21, 8, 10, 27, 4);
  EXPECT_GT(t.cat["page_cache C"], 0);
  EXPECT_EQ(stats->syscalls, 21);
  // Names: the traced processes and threads, kswapd (it deleted pages), the device.
  EXPECT_EQ(t.process[100], "fixture_app");
  EXPECT_EQ(t.process[200], "helper");
  EXPECT_EQ(t.process[50], "kswapd0");
  EXPECT_EQ(t.thread[101], (std::pair<int64_t, std::string>{100, "writer"}));
  EXPECT_EQ(t.thread[200], (std::pair<int64_t, std::string>{200, "helper"}));
  EXPECT_EQ(t.process[kTraceSyntheticPid + 2000], "block device 8:0");
  // Two write requests are in flight together each step: two queue slots.
  EXPECT_EQ(t.thread[kTraceSyntheticPid + 2001].second, "queue slot 0");
  EXPECT_EQ(t.thread[kTraceSyntheticPid + 2002].second, "queue slot 1");
  EXPECT_EQ(t.thread.count(kTraceSyntheticPid + 2003), 0u);
  EXPECT_EQ(t.process[kTraceSyntheticPid], "syspgo findings");
  // Microseconds: the last event is kswapd's last deletion, at 1 800 003 000 ns.
  EXPECT_NEAR(t.max_ts_us, 1'800'003, 0.001);
  // The counter ends at what the run added minus what it deleted: 80 - 64 pages.
  EXPECT_NE(ReadAll(out).find("\"ts\":1800003.0,\"args\":{\"pages\":16}}\n]}"), std::string::npos);
  // Microseconds as numbers in their shortest form.
  std::string text = ReadAll(out);
  EXPECT_NE(text.find("\"ts\":151050.0,\"dur\":80.0"), std::string::npos);
  EXPECT_NE(text.find("\"ts\":500100.0,\"dur\":50000.0"), std::string::npos);
}

// ===--- End to end: a real run ------------------------------------------------=== //

TEST(ReportEndToEnd, RealRunOfFileioDemoAndSleep) {
  TempDir dir;
  std::string db = dir.File("run.db");
  auto r = RunCmd({SyspgoBin(), "collect", "-o", db, "--", "/bin/sh", "-c",
                   ExampleBin("fileio_demo") + " " + dir.File("demo.dat") + " 16 && sleep 0.2"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::string html = dir.File("report.html");
  r = RunCmd({SyspgoBin(), "report", db, "-o", html, "-v"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + html), std::string::npos) << r.out;

  Db d = OpenDb(db);
  std::set<std::string> tids;
  for (const std::string& t : QueryRows(d, "SELECT tid FROM thread WHERE run_id = 1 UNION SELECT tid FROM offcpu "
                                           "WHERE run_id = 1 UNION SELECT tid FROM file_io WHERE run_id = 1 UNION "
                                           "SELECT tid FROM file_open WHERE run_id = 1 UNION SELECT tid FROM file_lookup "
                                           "WHERE run_id = 1 ORDER BY 1"))
    tids.insert(t);
  ASSERT_GE(tids.size(), 3u);  // sh, fileio_demo, sleep
  Page p = Load(dir, html);
  ExpectDrawnCleanly(p);
  EXPECT_EQ(p.status["data-threads"], std::to_string(tids.size()));
  EXPECT_EQ(Matches(p.dom, "class=\"tl-label\" data-tid=\"(\\d+)\""), tids);
  // fileio_demo's row counts its syscalls: 16 writes, an fsync, reads, opens, closes, lookups.
  int64_t demo_pid = QueryInt(d, "SELECT pid FROM process WHERE run_id = 1 AND comm = 'fileio_demo'");
  ASSERT_GT(demo_pid, 0);
  std::string tid = std::to_string(demo_pid);
  int64_t demo_calls = QueryInt(d, "SELECT (SELECT COUNT(*) FROM file_io WHERE run_id = 1 AND tid = " + tid +
                                       ") + (SELECT COUNT(*) FROM file_open WHERE run_id = 1 AND tid = " + tid +
                                       ") + (SELECT COUNT(*) FROM file_lookup WHERE run_id = 1 AND tid = " + tid + ")");
  EXPECT_GT(demo_calls, 18);
  EXPECT_NE(p.dom.find("tid " + std::to_string(demo_pid) + " · main · " + std::to_string(demo_calls) + " syscalls"),
            std::string::npos);

  // The findings of this run, as CollectFindings gives them, are all on the page.
  auto in = OpenRunWithFindings(db, 0);
  ASSERT_TRUE(in.ok()) << in.error().message;
  const FindingSet& fs = in->findings;
  // The 0.2 s sleep is a stall, whatever else the analyses find.
  EXPECT_FALSE(fs.findings.empty());
  EXPECT_EQ(p.status["data-findings"], std::to_string(fs.findings.size()));
  std::string listed = Part(p.dom, "findings-body");
  size_t occurrences = 0;
  for (size_t i = 0; i < fs.findings.size(); ++i) {
    EXPECT_NE(listed.find(HtmlText(fs.findings[i].title)), std::string::npos) << fs.findings[i].title;
    EXPECT_NE(p.dom.find("id=\"finding-" + std::to_string(i) + "\""), std::string::npos);
    occurrences += fs.findings[i].occurrences.size();
  }
  EXPECT_EQ(p.status["data-markers"], std::to_string(std::min<size_t>(occurrences, 400)));
  for (const std::string& a : fs.analyses) EXPECT_NE(listed.find(a), std::string::npos) << a;

  // Histograms: one per (device, op) the block group kept; syscalls.
  int64_t hists =
      QueryInt(d, "SELECT COUNT(*) FROM (SELECT DISTINCT dev, op FROM block_latency_hist WHERE run_id = 1)");
  EXPECT_GT(hists, 0);  // the fsync wrote 16 MiB to the disk
  EXPECT_EQ(static_cast<int64_t>(Count(Part(p.dom, "block-hist"), "<figure class=\"chart\">")), hists);
  EXPECT_NE(Part(p.dom, "sys-hist").find(">fsync <"), std::string::npos);
  // Top files: the demo's file, with its 16 MiB written.
  std::string files = Part(p.dom, "files-body");
  EXPECT_NE(files.find(dir.File("demo.dat")), std::string::npos) << files.substr(0, 2000);
  EXPECT_NE(files.find("16.0 MiB"), std::string::npos);
  // Page cache: the demo's pages were added (and deleted when it unlinked
  // the file), counted in the kernel (the lean tier, the default).
  EXPECT_GT(QueryInt(d, "SELECT COUNT(*) FROM page_cache_total WHERE run_id = 1 AND op = 1"), 0);
  EXPECT_GT(QueryInt(d, "SELECT COUNT(*) FROM page_cache_series WHERE run_id = 1"), 0);
  EXPECT_NE(Part(p.dom, "pc-body").find("class=\"pc-chart\""), std::string::npos);
  // File access order: the demo read its whole file back, so it has a chart
  // with at least a mark for each of its 16 reads of 1 MiB.
  std::string access = Part(p.dom, "access-body");
  EXPECT_NE(access.find(dir.File("demo.dat") + " · 16.0 MiB, 16.0 MiB of it used"), std::string::npos)
      << access.substr(0, 2000);
  EXPECT_GE(std::stoll(p.status["data-access-charts"]), 1);
  EXPECT_GE(std::stoll(p.status["data-access-points"]), 16);
  // Flame graph: drawn when the cpu group sampled anything.
  if (QueryInt(d, "SELECT COUNT(*) FROM cpu_sample WHERE run_id = 1") > 0) {
    EXPECT_GT(std::stoll(p.status["data-flame-frames"]), 1);
    // Clicking a process's box zooms into it; "Show all" goes back.
    WriteAll(dir.File("flame.html"), WithScript(ReadAll(html), R"js(
      const fr = document.querySelectorAll('#flame-box .fr');
      fr[1].dispatchEvent(new MouseEvent('click', {bubbles: true}));
      const d = document.createElement('pre');
      d.id = 'interaction';
      d.textContent = 'zoomed: ' + document.getElementById('flame-path').textContent;
      document.getElementById('flame-reset').click();
      d.textContent += ' | reset: "' + document.getElementById('flame-path').textContent + '"';
      document.body.append(d);
    )js"));
    Page f = Load(dir, dir.File("flame.html"));
    ExpectDrawnCleanly(f);
    std::string got = Part(f.dom, "interaction");
    EXPECT_NE(got.find("zoomed: zoomed into all → "), std::string::npos) << got;
    EXPECT_NE(got.find("reset: \"\""), std::string::npos) << got;
  } else {
    EXPECT_NE(Part(p.dom, "flame-note").find("No flame graph"), std::string::npos);
  }

  // A picture of it (kept with SYSPGO_KEEP_TEST_DIRS=1, to be looked at).
  auto args = ChromiumArgs(dir);
  args.push_back("--window-size=1400,2400");
  args.push_back("--screenshot=" + dir.File("report.png"));
  args.push_back("file://" + html);
  r = RunCmd(args);
  EXPECT_EQ(r.status, 0) << r.err;
  std::string png = ReadAll(dir.File("report.png"));
  EXPECT_EQ(png.substr(0, 4), "\x89PNG");
  EXPECT_GT(png.size(), 40000u);  // a blank page of that size is a few KiB

  // The trace of the same run.
  std::string trace = dir.File("trace.json");
  r = RunCmd({SyspgoBin(), "export", db, "--format", "perfetto", "-o", trace});
  ASSERT_EQ(r.status, 0) << r.err;
  TraceFacts t = ReadTrace(trace);
  ASSERT_TRUE(t.valid) << t.error;
  ExpectTrace(t,
              QueryInt(d, "SELECT (SELECT COUNT(*) FROM file_io WHERE run_id = 1) + "
                          "(SELECT COUNT(*) FROM file_open WHERE run_id = 1) + "
                          "(SELECT COUNT(*) FROM file_lookup WHERE run_id = 1)"),
              QueryInt(d, "SELECT COUNT(*) FROM offcpu WHERE run_id = 1"),
              QueryInt(d, "SELECT COUNT(*) FROM block_rq WHERE run_id = 1"),
              QueryInt(d, "SELECT COUNT(*) FROM page_cache WHERE run_id = 1"), static_cast<int64_t>(occurrences));
  for (const std::string& row : QueryRows(d, "SELECT pid, comm FROM process WHERE run_id = 1 ORDER BY start_ts")) {
    int64_t pid = std::stoll(row.substr(0, row.find('\t')));
    EXPECT_EQ(t.process[pid], row.substr(row.find('\t') + 1)) << row;  // pids do not repeat in so short a run
  }
  for (const std::string& row : QueryRows(d, "SELECT tid, pid, comm FROM thread WHERE run_id = 1 ORDER BY start_ts")) {
    auto f = Split(row, '\t');
    EXPECT_EQ(t.thread[std::stoll(f[0])], (std::pair<int64_t, std::string>{std::stoll(f[1]), f[2]})) << row;
  }
  // Microseconds since the run's start: the last event ends by the run's end.
  int64_t end_ns = QueryInt(d, "SELECT end_ts FROM run WHERE id = 1");
  EXPECT_LE(t.max_ts_us, end_ns / 1000.0 + 1);
  EXPECT_GT(t.max_ts_us, QueryInt(d, "SELECT command_start_ts FROM run WHERE id = 1") / 1000.0);
}

}  // namespace
}  // namespace syspgo::test
