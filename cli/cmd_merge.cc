//===- cmd_merge.cc - `syspgo merge INPUT... --emit KIND -o FILE` --------===//
// One artifact from several runs, databases or pprof profiles: the samples
// are merged (binaries matched by build-id) with each input's counts
// multiplied by its weight, optionally after scaling every input to the same
// total.
#include <cstdio>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/options.h"
#include "optimize/artifact_kinds.h"
#include "optimize/profile_artifacts.h"

namespace syspgo::cli {
namespace {

const char kAbout[] = R"(usage: syspgo merge INPUT... --emit KIND -o FILE [--binary PATH] [OPTIONS]

Merges the CPU samples of several runs or pprof profiles into one artifact.

INPUT:
  DB             the newest run of a profile database
  DB:N           run N
  DB:all         every run of it that has CPU samples
  PPROF          a pprof CPU profile (gzipped or not: found by its content, or named *.pb,
                 *.pb.gz, *.pprof; --pprof FILE for any other name), e.g. a fleet's merged
                 export, or gperftools' through `go tool pprof -proto BINARY PROFILE`
  ...@W          counts of that input multiplied by W (a whole number, default 1)
)";

const char kExamples[] = R"(Examples:
  syspgo merge small.db large.db:all --binary ./app --emit sample-profile -o app.prof
  syspgo merge run.db:1@3 run.db:2 --normalize --binary ./app --emit fdata -o app.fdata
  syspgo merge ci.db:all fleet.pb.gz --normalize --binary ./app --emit sample-profile -o app.prof
)";

int Merge(const std::vector<std::string>& args) {
  ArtifactRequest r;
  std::vector<std::string> inputs, pprofs;
  std::string json;
  std::string sample_counts = SampleCountsName(r.sample_counts);
  std::string profile_kind = ProfileKindName(r.profile_kind);
  int64_t pid = 0;
  auto app = NewApp("syspgo merge", kAbout, kExamples);
  CLI::Option* input_opt = app->add_option("inputs", inputs, "the runs and profiles to merge");
  app->option_defaults()->group("Options");
  app->add_option("--emit", r.kind, ArtifactKindNames(ArtifactInput::kCpuSamples))
      ->type_name("KIND");
  app->add_option("-o", r.output, "where to write it")->type_name("FILE");
  AddJsonSummary(*app, &json,
                 "also write a summary as JSON to FILE ('-': stdout): the runs and samples merged, those in "
                 "--binary and at a source line, the warnings");
  app->add_option("--binary", r.binary, "the binary the artifact is for (matched by build-id in every run)")
      ->type_name("PATH");
  app->add_flag("--normalize", r.normalize,
                "scale every input (run or pprof profile) to the same number of samples before the weights, so a "
                "long run does not drown a short one");
  CLI::Option* pprof_opt =
      Repeatable(app->add_option("--pprof", pprofs, "take FILE[@W] as a pprof profile whatever its name"))
          ->type_name("FILE");
  app->add_option("--pid", pid, "only samples of processes with this pid")
      ->type_name("N")
      ->transform(Whole(1, UINT32_MAX, "a process id"));
  Repeatable(app->add_option("--debug-dir", r.debug_dirs, "look for debug files under DIR/.build-id/ (repeatable)"))
      ->type_name("DIR");
  app->add_option("--sample-counts", sample_counts, "how a sample profile counts (see syspgo optimize --help)")
      ->type_name("ip|ip-only|stacks")
      ->check(Accepts([](const std::string& v) { return ParseSampleCounts(v).has_value(); }, kSampleCountsChoices))
      ->capture_default_str();
  app->add_option("--profile-kind", profile_kind, "what a sample profile is keyed by (see syspgo optimize --help)")
      ->type_name("flat|cs|probe")
      ->check(Accepts([](const std::string& v) { return ParseProfileKind(v).has_value(); }, kProfileKindChoices))
      ->capture_default_str();
  if (auto exit = Parse(*app, args)) return *exit;
  r.sample_counts = *ParseSampleCounts(sample_counts);
  r.profile_kind = *ParseProfileKind(profile_kind);
  r.pid = static_cast<uint32_t>(pid);
  // In the order given, INPUTs and --pprof files alike.
  size_t next_input = 0, next_pprof = 0;
  for (const CLI::Option* o : app->parse_order()) {
    bool pprof = o == pprof_opt;
    if (o != input_opt && !pprof) continue;
    auto in = ParseProfileInput(pprof ? pprofs[next_pprof++] : inputs[next_input++], pprof);
    if (!in) return UsageError(in.error().message);
    r.inputs.push_back(*in);
  }
  if (r.inputs.empty()) return UsageError("no INPUT given; see 'syspgo merge --help'");
  if (r.kind.empty()) return UsageError("--emit KIND is needed; see 'syspgo merge --help'");
  if (r.output.empty()) return UsageError("-o FILE is needed: where to write the artifact");
  auto s = WriteProfileArtifact(r);
  if (!s) return Fail(s.error().message);
  for (const std::string& w : s->warnings) Warn(w);
  WriteJsonSummary(json, ArtifactSummaryJson(r, *s));
  std::string from = std::to_string(s->runs) + " runs";
  if (s->pprof_files) from = (s->runs ? from + " and " : "") + std::to_string(s->pprof_files) + " pprof profiles";
  fprintf(stderr, "syspgo: wrote %s (%s) from %s, %llu weighted samples\n", r.output.c_str(), r.kind.c_str(),
          from.c_str(), static_cast<unsigned long long>(s->samples));
  return 0;
}

const Command kMerge("merge", "merge the CPU samples of several runs into one profile artifact", &Merge);

}  // namespace
}  // namespace syspgo::cli
