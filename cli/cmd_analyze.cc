//===- cmd_analyze.cc - `syspgo analyze DB WHAT`: reports over a run ------===//
#include <cstdio>
#include <cstdint>
#include <functional>
#include <map>

#include "analyze/access_summary.h"
#include "analyze/blockhist.h"
#include "analyze/files.h"
#include "analyze/finding_print.h"
#include "analyze/hot.h"
#include "analyze/io.h"
#include "analyze/offcpu.h"
#include "analyze/pagecache.h"
#include "analyze/run.h"
#include "analyze/stalls.h"
#include "cli/command.h"
#include "cli/options.h"
#include "common/util.h"

namespace syspgo::cli {
namespace {

const char kAbout[] = R"(usage: syspgo analyze DB WHAT [OPTIONS]

Reports over one run of a profile database (the newest unless --run).

WHAT:
  files        per file: reads and writes (ops, bytes), syncs, total and worst
               syscall latency, most latency first
  hot          CPU samples: top functions by self and total samples, call
               edges, hottest paths (needs a run with --probes cpu)
  stalls       findings: why threads were off-CPU for --threshold or more, named
               across layers (syscall, file, bytes, block I/O, stacks, waker),
               same causes grouped, with period and a fix (-v: the evidence)
  io           file reads, writes and syncs slower than --slower, one per line
  block        block I/O latency histograms per disk and direction
  offcpu       off-CPU time as folded stacks for flamegraph.pl / speedscope
  pagecache    per memory cgroup and per file: pages added, deleted, added again
               (refaults), who deleted them (memcg reclaim, kswapd, another
               cgroup's reclaim, truncation, drop_caches), the cgroup's limit, the
               I/O re-read; one finding per cgroup and reclaim path, with the
               files it evicts ranked, the working set and one fix
  access       per file, in the order the run first touched them: how much it
               used (pages faulted on or read), how much the kernel read for it
               (readahead included), whether in order; what to do when a cold
               start pages large files in at random (a prefetch plan)
)";

const char kExamples[] = R"(Examples:
  syspgo analyze run.db files
  syspgo analyze run.db files --json --run 2
  syspgo analyze run.db hot --binary ./my_program --limit 10
  syspgo analyze run.db stalls -v --threshold 20
  syspgo analyze run.db pagecache --json
  syspgo analyze cold.db access --limit 10
  syspgo analyze run.db offcpu > offcpu.folded && flamegraph.pl offcpu.folded > offcpu.svg
)";

struct AnalyzeArgs {
  std::string db, what;
  int64_t run = 0;
  bool json = false, all = false;
  size_t limit = 0;
  std::string binary;                   // hot: --binary
  int64_t pid = 0;                      // hot: --pid
  std::vector<std::string> debug_dirs;  // hot: --debug-dir
  int64_t threshold_ns = kDefaultStallThresholdNs;  // stalls: --threshold
  int64_t slower_ns = kDefaultSlowerNs;             // io: --slower
  int verbose = 0;                                  // stalls: -v
};

int Files(Db& db, const RunInfo& run, const AnalyzeArgs& a) {
  auto rows = FileSummary(db, {run.id, a.all, a.limit});
  if (!rows) return Fail(rows.error().message);
  Table t({{"path", "path", Table::Align::kLeft},
           {"reads", "reads", Table::Align::kRight, true},
           {"read", "read_bytes", Table::Align::kRight, true},
           {"writes", "writes", Table::Align::kRight, true},
           {"written", "write_bytes", Table::Align::kRight, true},
           {"syncs", "syncs", Table::Align::kRight, true},
           {"total lat", "total_ns", Table::Align::kRight, true},
           {"worst lat", "worst_ns", Table::Align::kRight, true},
           {"worst in", "worst_syscall", Table::Align::kLeft}});
  for (auto& f : *rows) {
    t.AddRow({f.path, std::to_string(f.reads), FormatBytes(f.read_bytes), std::to_string(f.writes),
              FormatBytes(f.write_bytes), std::to_string(f.syncs), FormatNs(f.total_ns), FormatNs(f.worst_ns),
              f.worst_syscall},
             {f.path, std::to_string(f.reads), std::to_string(f.read_bytes), std::to_string(f.writes),
              std::to_string(f.write_bytes), std::to_string(f.syncs), std::to_string(f.total_ns),
              std::to_string(f.worst_ns), f.worst_syscall});
  }
  if (a.json) {
    printf("%s", t.Json().c_str());
    return 0;
  }
  printf("%s", RunHeadline(run).c_str());
  auto tier = RecordingTier(db, run.id, "fileio");
  if (tier.ok() && *tier == Tier::kLean) printf("from the lean tier's counts per file and syscall (file_io_total)\n");
  if (t.size() == 0) {
    printf("no file I/O recorded%s.\n", a.all ? "" : " on regular files (--all shows pipes, sockets, devices)");
    return 0;
  }
  printf("%s", t.Text().c_str());
  return 0;
}

int Hot(Db& db, const RunInfo& run, const AnalyzeArgs& a) {
  auto r = AnalyzeHot(db, {run.id, a.binary, static_cast<uint32_t>(a.pid), a.limit ? a.limit : 20, a.debug_dirs});
  if (!r) return Fail(r.error().message);
  if (a.json) {
    printf("%s", HotJson(*r).c_str());
    return 0;
  }
  printf("%s%s", RunHeadline(run).c_str(), HotText(*r).c_str());
  return 0;
}

// Prints what an analysis rendered, or its error.
int Print(const Result<std::string>& r) { return r.ok() ? (printf("%s", r.value().c_str()), 0) : Fail(r.error().message); }

const std::map<std::string, std::function<int(Db&, const RunInfo&, const AnalyzeArgs&)>>& Analyses() {
  static const std::map<std::string, std::function<int(Db&, const RunInfo&, const AnalyzeArgs&)>> m = {
      {"files", Files},
      {"hot", Hot},
      {"stalls", [](Db& db, const RunInfo& r, const AnalyzeArgs& a) { return Print(StallsReportText(db, r, {r.id, a.threshold_ns}, a.json, a.verbose > 0, a.all)); }},
      {"io", [](Db& db, const RunInfo& r, const AnalyzeArgs& a) { return Print(IoReport(db, r, {r.id, a.slower_ns, a.all, a.limit}, a.json)); }},
      {"block", [](Db& db, const RunInfo& r, const AnalyzeArgs& a) { return Print(BlockReport(db, r, a.json)); }},
      {"offcpu", [](Db& db, const RunInfo& r, const AnalyzeArgs& a) { return Print(OffCpuReport(db, r, a.limit, a.json)); }},
      {"pagecache", [](Db& db, const RunInfo& r, const AnalyzeArgs& a) { return Print(PagecacheReportText(db, r, {r.id, a.limit}, a.json, a.all)); }},
      {"access", [](Db& db, const RunInfo& r, const AnalyzeArgs& a) { return Print(AccessReportText(db, r, a.limit, a.json)); }},
  };
  return m;
}

int Analyze(const std::vector<std::string>& args) {
  AnalyzeArgs a;
  double threshold_ms = static_cast<double>(a.threshold_ns) / 1e6, slower_ms = static_cast<double>(a.slower_ns) / 1e6;
  auto app = NewApp("syspgo analyze", kAbout, kExamples);
  app->add_option("db", a.db, "the profile database");
  app->add_option("what", a.what, "the analysis");

  app->option_defaults()->group("What to read");
  app->add_option("--run", a.run, "the run to read (default: the newest)")
      ->type_name("N")
      ->transform(Whole(1, INT64_MAX, "a run number"));
  app->add_flag("--all", a.all,
                "show everything: every finding (text shows the first " + std::to_string(kTopFindings) +
                    "; JSON always has all), every row of a finding's table and of pagecache's files; files, io: "
                    "pipes, sockets and devices too, not only regular files");
  app->add_option("--binary", a.binary, "hot: only samples through this binary, and its functions")->type_name("PATH");
  app->add_option("--pid", a.pid, "only this process (every analysis)")
      ->type_name("N")
      ->transform(Whole(1, UINT32_MAX, "a process id"));
  Repeatable(app->add_option("--debug-dir", a.debug_dirs, "hot: also look for debug files under DIR/.build-id (repeatable)"))
      ->type_name("DIR");

  data::TaskFilter filter;
  AddTaskFilter(*app, &filter, false);

  app->option_defaults()->group("Thresholds");
  Decimal(app->add_option("--threshold", threshold_ms, "stalls: shortest off-CPU time that is a stall, ms"), "MS",
          0.001, 3.6e6, "milliseconds")
      ->capture_default_str();
  Decimal(app->add_option("--slower", slower_ms, "io: shortest operation listed, ms"), "MS", 0.001, 3.6e6,
          "milliseconds")
      ->capture_default_str();

  app->option_defaults()->group("Output");
  app->add_flag("--json", a.json, "JSON for machines instead of a table");
  app->add_option("--limit", a.limit,
                  "at most N rows (default: all; hot: 20 per table; pagecache: files, 20 in text; access: files)")
      ->type_name("N")
      ->transform(Whole(1, SIZE_MAX, "a number of rows"));
  AddVerbosity(*app, &a.verbose, "stalls: show each finding's evidence (histogram, stacks, times)", "-v,--verbose");

  if (auto exit = Parse(*app, args)) return *exit;
  a.threshold_ns = static_cast<int64_t>(threshold_ms * 1e6);
  a.slower_ns = static_cast<int64_t>(slower_ms * 1e6);
  if (a.db.empty() || a.what.empty())
    return UsageError("usage: syspgo analyze DB WHAT [--json] [--run N]; see --help");
  auto it = Analyses().find(a.what);
  if (it == Analyses().end()) {
    std::string names;
    for (auto& [n, f] : Analyses()) names += (names.empty() ? "" : ", ") + n;
    return UsageError("unknown analysis '" + a.what + "'; choose one of: " + names);
  }
  filter.pid = a.pid;
  auto opened = OpenRun(a.db, a.run, filter);
  if (!opened) return Fail(opened.error().message);
  auto& [db, run] = *opened;
  // To stderr: stdout carries the analysis itself (folded stacks piped to
  // flamegraph.pl, JSON read by machines), which a note would corrupt.
  if (run.status != "complete")
    fprintf(stderr, "syspgo: note: run %lld is %s (the collector did not finish it); figures cover what was recorded.\n",
            static_cast<long long>(run.id), TerminalSafe(run.status).c_str());
  if (run.events_dropped)
    fprintf(stderr, "syspgo: WARNING: run %lld lost %lld events; figures are lower bounds.\n",
            static_cast<long long>(run.id), static_cast<long long>(run.events_dropped));
  return it->second(db, run, a);
}

const Command kAnalyze("analyze", "report on a recorded run (files, ...)", &Analyze);

}  // namespace
}  // namespace syspgo::cli
