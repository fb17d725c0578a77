//===- cmd_report.cc - `syspgo report DB -o report.html` -------------------===//
#include <cstdint>
#include <cstdio>
#include <tuple>

#include "analyze/report.h"
#include "analyze/report_common.h"
#include "analyze/report_findings.h"
#include "cli/command.h"
#include "cli/options.h"
#include "common/files.h"
#include "common/util.h"

namespace syspgo::cli {
namespace {

const char kAbout[] = R"(usage: syspgo report DB [OPTIONS] -o FILE.html

Writes one run of a profile database (the newest unless --run) as a single
HTML file that opens in any browser without a network: a timeline per thread
(on-CPU and off-CPU, file syscalls with their latency, block requests) with
the run's findings marked on it, block and syscall latency histograms, the top
files, page-cache churn over time, and a flame graph of the CPU samples.
)";

const char kExamples[] = R"(Examples:
  syspgo report run.db -o report.html
  syspgo report run.db --run 2 -o run2.html --max-syscalls 10000
)";

int Report(const std::vector<std::string>& args) {
  std::string db_path, out;
  int64_t run_id = 0;
  int verbose = 0;
  ReportOptions opts;
  auto app = NewApp("syspgo report", kAbout, kExamples);
  app->add_option("db", db_path, "the profile database");
  app->add_option("-o,--output", out, "the HTML file to write (required; replaced if it exists)")
      ->type_name("FILE")
      ->group("Output");
  app->add_option("--run", run_id, "the run to report (default: the newest)")
      ->type_name("N")
      ->transform(Whole(1, INT64_MAX, "a run number"))
      ->group("Run");
  app->option_defaults()->group("Size (the page draws the longest intervals up to these; counts cover all)");
  for (auto [name, dst, help] : {std::tuple{"--max-syscalls", &opts.max_syscalls_per_thread, "syscalls per thread"},
                                 std::tuple{"--max-offcpu", &opts.max_offcpu_per_thread, "off-CPU intervals per thread"},
                                 std::tuple{"--max-block", &opts.max_block_requests, "block requests in all"}})
    app->add_option(name, *dst, help)->type_name("N")->transform(Whole(0, 1000000, "a number"))->capture_default_str();
  Repeatable(app->add_option("--debug-dir", opts.debug_dirs, "also look for debug files under DIR (repeatable)"))
      ->type_name("DIR")
      ->group("Symbols");
  AddVerbosity(*app, &verbose, "list the findings and analyses as well")->group("Other");
  data::TaskFilter filter;
  AddTaskFilter(*app, &filter);
  if (auto exit = Parse(*app, args)) return *exit;
  if (db_path.empty()) return UsageError("usage: syspgo report DB -o FILE.html [--run N]; see --help");
  if (out.empty()) return UsageError("say where to write the page with -o FILE.html");

  auto in = OpenRunWithFindings(db_path, run_id, opts.time_buckets, filter);
  if (!in) return Fail(in.error().message);
  const RunInfo* run = &in->run;
  const FindingSet& findings = in->findings;
  for (const std::string& p : findings.problems) Note(p);
  auto page = BuildReport(in->db, *run, findings, in->drawn, opts);
  if (!page) return Fail(page.error().message);
  Status st = WriteFileAtomically(out, *page);
  if (!st.ok()) return Fail(st.error().message);
  printf("wrote %s (%s): run %lld, %zu finding%s\n", out.c_str(), FormatBytes(page->size()).c_str(),
         static_cast<long long>(run->id), findings.findings.size(), findings.findings.size() == 1 ? "" : "s");
  if (run->status != "complete")
    printf("note: run %lld is %s (the collector did not finish it); the page covers what was recorded.\n",
           static_cast<long long>(run->id), TerminalSafe(run->status).c_str());
  if (verbose) {
    std::string ran;
    for (const std::string& a : findings.analyses) ran += (ran.empty() ? "" : ", ") + a;
    printf("analyses: %s\n", ran.empty() ? "none available" : ran.c_str());
    for (size_t i = 0; i < findings.findings.size(); ++i)
      printf("  %zu. %s\n", i + 1, TerminalSafe(findings.findings[i].title).c_str());
  }
  return 0;
}

const Command kReport("report", "write a run as one self-contained HTML page", &Report);

}  // namespace
}  // namespace syspgo::cli
