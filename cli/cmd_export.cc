//===- cmd_export.cc - `syspgo export DB --format perfetto -o trace.json` -===//
#include <cstdio>
#include <cstdint>

#include "analyze/report_findings.h"
#include "analyze/trace_export.h"
#include "cli/command.h"
#include "cli/options.h"
#include "common/util.h"

namespace syspgo::cli {
namespace {

const char kAbout[] = R"(usage: syspgo export DB [OPTIONS] -o FILE

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
)";

const char kExamples[] = R"(Examples:
  syspgo export run.db -o trace.json
  syspgo export run.db --run 2 --format perfetto -o run2.json
)";

int Export(const std::vector<std::string>& args) {
  std::string db_path, out, format = "perfetto";
  int64_t run_id = 0;
  auto app = NewApp("syspgo export", kAbout, kExamples);
  app->add_option("db", db_path, "the profile database");
  app->option_defaults()->group("Options");
  app->add_option("-o,--output", out, "the file to write (required; replaced if it exists)")->type_name("FILE");
  app->add_option("--format", format, "the format")->type_name("NAME")->capture_default_str();
  app->add_option("--run", run_id, "the run to export (default: the newest)")
      ->type_name("N")
      ->transform(Whole(1, INT64_MAX, "a run number"));
  data::TaskFilter filter;
  AddTaskFilter(*app, &filter);
  if (auto exit = Parse(*app, args)) return *exit;
  // Not a validator: the message says what each format is.
  if (format != "perfetto")
    return UsageError("unknown format '" + format + "'; the formats are: perfetto (Chrome trace-event JSON)");
  if (db_path.empty()) return UsageError("usage: syspgo export DB -o FILE [--format perfetto] [--run N]; see --help");
  if (out.empty()) return UsageError("say where to write the trace with -o FILE");

  auto in = OpenRunWithFindings(db_path, run_id, 0, filter);
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
