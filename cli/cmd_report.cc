//===- cmd_report.cc - `syspgo report DB -o report.html` -------------------===//
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "analyze/report.h"
#include "analyze/report_common.h"
#include "analyze/report_findings.h"
#include "cli/command.h"
#include "common/files.h"
#include "common/util.h"

namespace syspgo::cli {
namespace {

const char kHelp[] = R"(usage: syspgo report DB [OPTIONS] -o FILE.html

Writes one run of a profile database (the newest unless --run) as a single
HTML file that opens in any browser without a network: a timeline per thread
(on-CPU and off-CPU, file syscalls with their latency, block requests) with
the run's findings marked on it, block and syscall latency histograms, the top
files, page-cache churn over time, and a flame graph of the CPU samples.

Output:
  -o, --output FILE      the HTML file to write (required; replaced if it exists)

Run:
  --run N                the run to report (default: the newest)

Size (the page draws the longest intervals up to these; counts cover all):
  --max-syscalls N       syscalls per thread             (default 3000, 0..1000000)
  --max-offcpu N         off-CPU intervals per thread    (default 3000, 0..1000000)
  --max-block N          block requests in all           (default 20000, 0..1000000)

Symbols:
  --debug-dir DIR        also look for debug files under DIR (repeatable)

Other:
  -v                     list the findings and analyses as well
  -h, --help             this text

Examples:
  syspgo report run.db -o report.html
  syspgo report run.db --run 2 -o run2.html --max-syscalls 10000
)";

int ParseCount(const std::string& opt, const std::string& value, size_t* out) {
  char* end;
  errno = 0;
  long long v = strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end || errno || v < 0 || v > 1000000)
    return UsageError(opt + " needs a number from 0 to 1000000, got '" + value + "'");
  *out = static_cast<size_t>(v);
  return 0;
}

int Report(const std::vector<std::string>& args) {
  std::string db_path, out;
  int64_t run_id = 0;
  bool verbose = false;
  ReportOptions opts;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& s = args[i];
    auto value = [&]() -> const std::string* { return i + 1 < args.size() ? &args[++i] : nullptr; };
    if (s == "-h" || s == "--help") {
      printf("%s", kHelp);
      return 0;
    } else if (s == "-v") {
      verbose = true;
    } else if (s == "-o" || s == "--output" || s == "--debug-dir") {
      const std::string* v = value();
      if (!v) return UsageError(s + " needs a path");
      if (s == "--debug-dir") opts.debug_dirs.push_back(*v);
      else out = *v;
    } else if (s == "--run") {
      const std::string* v = value();
      char* end;
      long long n = v ? strtoll(v->c_str(), &end, 10) : 0;
      if (!v || *end || n <= 0) return UsageError("--run needs a run number > 0, got '" + (v ? *v : "") + "'");
      run_id = n;
    } else if (s == "--max-syscalls" || s == "--max-offcpu" || s == "--max-block") {
      const std::string* v = value();
      if (!v) return UsageError(s + " needs a number");
      size_t* dst = s == "--max-syscalls" ? &opts.max_syscalls_per_thread
                    : s == "--max-offcpu" ? &opts.max_offcpu_per_thread
                                          : &opts.max_block_requests;
      if (int rc = ParseCount(s, *v, dst)) return rc;
    } else if (!s.empty() && s[0] == '-') {
      return UsageError("unknown option '" + s + "'; see 'syspgo report --help'");
    } else if (db_path.empty()) {
      db_path = s;
    } else {
      return UsageError("unexpected argument '" + s + "': give one database; see 'syspgo report --help'");
    }
  }
  if (db_path.empty()) return UsageError("usage: syspgo report DB -o FILE.html [--run N]; see --help");
  if (out.empty()) return UsageError("say where to write the page with -o FILE.html");

  auto in = OpenRunWithFindings(db_path, run_id, {opts.time_buckets});
  if (!in) return Fail(in.error().message);
  const RunInfo* run = &in->run;
  const FindingSet& findings = in->findings;
  for (const std::string& p : findings.problems) Note(p);
  auto page = BuildReport(in->db, *run, findings, opts);
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
