//===- cmd_export.cc - `syspgo export DB --format perfetto -o trace.json` -===//
#include <cstdio>
#include <cstdlib>

#include "analyze/report_findings.h"
#include "analyze/trace_export.h"
#include "cli/command.h"
#include "common/util.h"

namespace syspgo::cli {
namespace {

const char kHelp[] = R"(usage: syspgo export DB [OPTIONS] -o FILE

Writes one run of a profile database (the newest unless --run) in a trace
format that other tools open.

Formats:
  perfetto    Chrome trace-event JSON (the default). Open it at
              https://ui.perfetto.dev (Open trace file) or in chrome://tracing.
              One process per traced pid and one track per thread, with its
              file syscalls and off-CPU intervals; one process per block device
              with its requests; page-cache additions and deletions as instant
              events and a counter; the run's findings on their own tracks.
              Times are since the run's start.

Options:
  -o, --output FILE   the file to write (required; replaced if it exists)
  --format NAME       the format (default: perfetto)
  --run N             the run to export (default: the newest)
  -h, --help          this text

Examples:
  syspgo export run.db -o trace.json
  syspgo export run.db --run 2 --format perfetto -o run2.json
)";

int Export(const std::vector<std::string>& args) {
  std::string db_path, out, format = "perfetto";
  int64_t run_id = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& s = args[i];
    if (s == "-h" || s == "--help") {
      printf("%s", kHelp);
      return 0;
    } else if (s == "-o" || s == "--output" || s == "--format" || s == "--run") {
      if (i + 1 >= args.size()) return UsageError(s + " needs a value; see 'syspgo export --help'");
      const std::string& v = args[++i];
      if (s == "--format") {
        format = v;
      } else if (s == "--run") {
        char* end;
        long long n = strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end || n <= 0) return UsageError("--run needs a run number > 0, got '" + v + "'");
        run_id = n;
      } else {
        out = v;
      }
    } else if (!s.empty() && s[0] == '-') {
      return UsageError("unknown option '" + s + "'; see 'syspgo export --help'");
    } else if (db_path.empty()) {
      db_path = s;
    } else {
      return UsageError("unexpected argument '" + s + "': give one database; see 'syspgo export --help'");
    }
  }
  if (format != "perfetto")
    return UsageError("unknown format '" + format + "'; the formats are: perfetto (Chrome trace-event JSON)");
  if (db_path.empty()) return UsageError("usage: syspgo export DB -o FILE [--format perfetto] [--run N]; see --help");
  if (out.empty()) return UsageError("say where to write the trace with -o FILE");

  auto in = OpenRunWithFindings(db_path, run_id);
  if (!in) return Fail(in.error().message);
  const RunInfo* run = &in->run;
  const FindingSet& findings = in->findings;
  for (const std::string& p : findings.problems) Note(p);
  auto stats = ExportChromeTrace(in->db, *run, findings, out);
  if (!stats) return Fail(stats.error().message);
  printf("wrote %s: run %lld, %lld syscalls, %lld off-CPU intervals, %lld block requests, %lld page-cache events, "
         "%lld finding occurrences, %lld wakeup arrows. Open it at https://ui.perfetto.dev or in chrome://tracing.\n",
         out.c_str(), static_cast<long long>(run->id), static_cast<long long>(stats->syscalls),
         static_cast<long long>(stats->offcpu), static_cast<long long>(stats->block),
         static_cast<long long>(stats->page_cache), static_cast<long long>(stats->findings),
         static_cast<long long>(stats->flows));
  if (run->status != "complete")
    printf("note: run %lld is %s (the collector did not finish it); the trace covers what was recorded.\n",
           static_cast<long long>(run->id), TerminalSafe(run->status).c_str());
  return 0;
}

const Command kExport("export", "write a run as a trace for Perfetto or chrome://tracing", &Export);

}  // namespace
}  // namespace syspgo::cli
