//===- cmd_merge.cc - `syspgo merge INPUT... --emit KIND -o FILE` --------===//
// One artifact from several runs, databases or pprof profiles: the samples
// are merged (binaries matched by build-id) with each input's counts
// multiplied by its weight, optionally after scaling every input to the same
// total.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/command.h"
#include "optimize/profile_artifacts.h"

namespace syspgo::cli {
namespace {

const char kHelp[] = R"(usage: syspgo merge INPUT... --emit KIND -o FILE [--binary PATH] [OPTIONS]

Merges the CPU samples of several runs or pprof profiles into one artifact.

INPUT:
  DB             the newest run of a profile database
  DB:N           run N
  DB:all         every run of it that has CPU samples
  PPROF          a pprof CPU profile (gzipped or not: found by its content, or named *.pb,
                 *.pb.gz, *.pprof; --pprof FILE for any other name), e.g. a fleet's merged
                 export, or gperftools' through `go tool pprof -proto BINARY PROFILE`
  ...@W          counts of that input multiplied by W (a whole number, default 1)

Options:
  --emit KIND    sample-profile, sample-profile-binary, fdata, order, pprof, folded
  -o FILE        where to write it
  --binary PATH  the binary the artifact is for (matched by build-id in every run)
  --normalize    scale every input (run or pprof profile) to the same number of samples
                 before the weights, so a long run does not drown a short one
  --pprof FILE   take FILE[@W] as a pprof profile whatever its name
  --pid N        only samples of processes with this pid
  --debug-dir DIR  look for debug files under DIR/.build-id/ (repeatable)
  --sample-counts ip|ip-only|stacks  how a sample profile counts (see syspgo optimize --help)

Examples:
  syspgo merge small.db large.db:all --binary ./app --emit sample-profile -o app.prof
  syspgo merge run.db:1@3 run.db:2 --normalize --binary ./app --emit fdata -o app.fdata
  syspgo merge ci.db:all fleet.pb.gz --normalize --binary ./app --emit sample-profile -o app.prof
)";

int Merge(const std::vector<std::string>& args) {
  ArtifactRequest r;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& s = args[i];
    if (s == "-h" || s == "--help") {
      printf("%s", kHelp);
      return 0;
    } else if (s == "--normalize") {
      r.normalize = true;
    } else if (s == "--sample-counts") {
      if (i + 1 >= args.size()) return UsageError(std::string("--sample-counts needs ") + kSampleCountsChoices);
      auto c = ParseSampleCounts(args[++i]);
      if (!c) return UsageError(std::string("--sample-counts is ") + kSampleCountsChoices + ", got '" + args[i] + "'");
      r.sample_counts = *c;
    } else if (s == "--emit" || s == "-o" || s == "--binary" || s == "--debug-dir" || s == "--pid" || s == "--pprof") {
      if (i + 1 >= args.size()) return UsageError(s + " needs a value; see 'syspgo merge --help'");
      const std::string& v = args[++i];
      if (s == "--pprof") {
        auto in = ParseProfileInput(v, true);
        if (!in) return UsageError(in.error().message);
        r.inputs.push_back(*in);
      } else if (s == "--emit") r.kind = v;
      else if (s == "-o") r.output = v;
      else if (s == "--binary") r.binary = v;
      else if (s == "--debug-dir") r.debug_dirs.push_back(v);
      else {
        char* end;
        long long n = strtoll(v.c_str(), &end, 10);
        if (*end || n <= 0) return UsageError("--pid needs a number > 0, got '" + v + "'");
        r.pid = static_cast<uint32_t>(n);
      }
    } else if (!s.empty() && s[0] == '-') {
      return UsageError("unknown option '" + s + "'; see 'syspgo merge --help'");
    } else {
      auto in = ParseProfileInput(s);
      if (!in) return UsageError(in.error().message);
      r.inputs.push_back(*in);
    }
  }
  if (r.inputs.empty()) return UsageError("no INPUT given; see 'syspgo merge --help'");
  if (r.kind.empty()) return UsageError("--emit KIND is needed; see 'syspgo merge --help'");
  if (r.output.empty()) return UsageError("-o FILE is needed: where to write the artifact");
  auto s = WriteProfileArtifact(r);
  if (!s) return Fail(s.error().message);
  for (const std::string& w : s->warnings) Warn(w);
  std::string from = std::to_string(s->runs) + " runs";
  if (s->pprof_files) from = (s->runs ? from + " and " : "") + std::to_string(s->pprof_files) + " pprof profiles";
  fprintf(stderr, "syspgo: wrote %s (%s) from %s, %llu weighted samples\n", r.output.c_str(), r.kind.c_str(),
          from.c_str(), static_cast<unsigned long long>(s->samples));
  return 0;
}

const Command kMerge("merge", "merge the CPU samples of several runs into one profile artifact", &Merge);

}  // namespace
}  // namespace syspgo::cli
