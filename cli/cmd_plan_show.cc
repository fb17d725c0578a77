//===- cmd_plan_show.cc - `syspgo plan-show`: what a prefetch plan holds ---===//
//
// A plan is binary, so people and scripts need a way to look inside one:
// which files, how many bytes, in what order, and where it came from.
#include <cstdio>

#include "cli/command.h"
#include "cli/options.h"
#include "common/util.h"
#include "optimize/plan.h"

namespace syspgo::cli {
namespace {

const char kAbout[] = R"(usage: syspgo plan-show PLAN [--json] [-v]

Prints a prefetch plan: where it was made, then its files in first-touch
order with their extents and bytes.
)";

const char kExamples[] = R"(Examples:
  syspgo plan-show app.plan
  syspgo plan-show app.plan --json | jq '.files[].path'
)";

std::string Runs(const std::vector<int64_t>& ids) {
  std::string out;
  for (int64_t id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
  return out.empty() ? "none recorded" : out;
}

void PrintText(const std::string& name, const Plan& plan, bool verbose) {
  const PlanCreation& c = plan.creation;
  // A plan is outside input: what it says about itself is shown TerminalSafe.
  printf("plan     %s (format %u, written by syspgo %s)\n", TerminalSafe(name).c_str(), plan.format_version,
         TerminalSafe(c.syspgo_version).c_str());
  printf("made on  %s from %u run(s): %s\n", c.host.empty() ? "unknown host" : TerminalSafe(c.host).c_str(), c.merged_runs,
         Runs(c.source_run_ids).c_str());
  printf("looks up %zu paths\n", plan.lookups.size());
  printf("reads    %s (%llu bytes) in %zu extents of %zu files\n\n", FormatBytes(plan.Bytes()).c_str(),
         static_cast<unsigned long long>(plan.Bytes()), plan.ExtentCount(), plan.files.size());

  Table files({{"#", "index", Table::Align::kRight, true},
               {"first touch", "first_touch_ns", Table::Align::kRight, true},
               {"extents", "extents", Table::Align::kRight, true},
               {"bytes", "bytes", Table::Align::kRight, true},
               {"size", "size", Table::Align::kRight, true},
               {"file", "path", Table::Align::kLeft}});
  for (size_t i = 0; i < plan.files.size(); ++i) {
    const PlanFile& f = plan.files[i];
    files.AddRow({std::to_string(i + 1), FormatNs(f.extents.front().first_touch_ns), std::to_string(f.extents.size()),
                  FormatBytes(f.Bytes()), FormatBytes(f.fingerprint.size), f.path});
  }
  printf("%s", files.Text().c_str());
  if (!verbose) return;

  if (!plan.lookups.empty()) {
    Table lookups({{"order", "order", Table::Align::kRight, true},
                   {"first lookup", "first_touch_ns", Table::Align::kRight, true},
                   {"path", "path", Table::Align::kLeft}});
    for (const PlanLookup& l : plan.lookups)
      lookups.AddRow({std::to_string(lookups.size() + 1), FormatNs(l.first_touch_ns), l.path});
    printf("\n%s", lookups.Text().c_str());
  }
  printf("\n%s", ReplayListing(plan).c_str());
}

int PlanShow(const std::vector<std::string>& args) {
  std::string path;
  bool json = false;
  int verbose = 0;
  auto app = NewApp("syspgo plan-show", kAbout, kExamples);
  app->add_option("plan", path, "the plan file");
  app->option_defaults()->group("Output");
  app->add_flag("--json", json, "the whole plan as JSON (every file, fingerprint, extent and lookup)");
  AddVerbosity(*app, &verbose, "also list every path looked up and every extent, in replay order");
  if (auto exit = Parse(*app, args)) return *exit;
  if (path.empty()) return UsageError("plan-show: give a plan file; see 'syspgo plan-show --help'");
  auto plan = ReadPlan(path);
  if (!plan.ok()) return Fail(plan.error().message);
  if (json) printf("%s", PlanJson(plan.value()).c_str());
  else PrintText(path, plan.value(), verbose > 0);
  return 0;
}

const Command kPlanShow("plan-show", "print what a prefetch plan holds (files, extents, bytes)", &PlanShow);

}  // namespace
}  // namespace syspgo::cli
