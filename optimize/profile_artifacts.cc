//===- profile_artifacts.cc - runs in, one profile artifact out ----------===//
#include "optimize/profile_artifacts.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>
#include <vector>

#include "analyze/run.h"
#include "analyze/sample_db.h"
#include "analyze/sample_pprof.h"
#include "analyze/symbolize.h"
#include "common/profile_db.h"
#include "optimize/artifact_kinds.h"
#include "optimize/emitter.h"

namespace syspgo {

std::optional<ProfileEmitter::SampleCounts> ParseSampleCounts(std::string_view s) {
  if (s == "stacks") return ProfileEmitter::SampleCounts::kStacks;
  if (s == "ip") return ProfileEmitter::SampleCounts::kIp;
  if (s == "ip-only") return ProfileEmitter::SampleCounts::kIpOnly;
  return std::nullopt;
}

const char* SampleCountsName(ProfileEmitter::SampleCounts c) {
  switch (c) {
    case ProfileEmitter::SampleCounts::kStacks: return "stacks";
    case ProfileEmitter::SampleCounts::kIp: return "ip";
    case ProfileEmitter::SampleCounts::kIpOnly: return "ip-only";
  }
  return "ip";
}

namespace {
const std::pair<ProfileEmitter::ProfileKind, const char*> kProfileKindNames[] = {
    {ProfileEmitter::ProfileKind::kFlat, "flat"},
    {ProfileEmitter::ProfileKind::kContext, "cs"},
    {ProfileEmitter::ProfileKind::kProbe, "probe"},
};
}  // namespace

std::optional<ProfileEmitter::ProfileKind> ParseProfileKind(std::string_view s) {
  for (const auto& [kind, name] : kProfileKindNames)
    if (s == name) return kind;
  return std::nullopt;
}

const char* ProfileKindName(ProfileEmitter::ProfileKind k) {
  for (const auto& [kind, name] : kProfileKindNames)
    if (k == kind) return name;
  return "flat";
}

Result<ProfileInput> ParseProfileInput(const std::string& spec, bool pprof) {
  ProfileInput in;
  std::string rest = spec;
  std::error_code ec;
  const char* forms = pprof ? "PPROF[@WEIGHT]" : "DB[:RUN|:all][@WEIGHT] or PPROF[@WEIGHT]";
  if (!std::filesystem::exists(spec, ec)) {
    size_t at = rest.rfind('@');
    if (at != std::string::npos && at > 0) {
      char* end = nullptr;
      unsigned long long w = strtoull(rest.c_str() + at + 1, &end, 10);
      if (*end || w == 0)
        return MakeError("bad weight in '" + spec + "': expected " + forms + ", WEIGHT a whole number >= 1.");
      in.weight = w;
      rest = rest.substr(0, at);
    }
    size_t colon = rest.rfind(':');
    if (colon != std::string::npos && colon > 0 && !std::filesystem::exists(rest, ec)) {
      std::string run = rest.substr(colon + 1);
      rest = rest.substr(0, colon);
      if (run == "all") {
        in.all_runs = true;
      } else {
        char* end = nullptr;
        long long r = strtoll(run.c_str(), &end, 10);
        if (*end || r <= 0) return MakeError("bad run in '" + spec + "': expected " + forms + ", RUN a run id.");
        in.runs.push_back(r);
      }
    }
  }
  in.db = rest;
  in.pprof = pprof || IsPprofFile(rest);
  if (in.pprof && (in.all_runs || !in.runs.empty()))
    return MakeError("'" + rest + "' is a pprof profile, which has no runs: give it as " + rest +
                     (in.weight > 1 ? "@" + std::to_string(in.weight) : std::string()) + ", without ':RUN' or ':all'.");
  return in;
}

namespace {

// The sample sets read, each with the weight of its input.
using WeightedSets = std::vector<std::pair<SampleSet, uint64_t>>;

// A pprof profile's samples (`offcpu`: with its off-CPU ones).
Status LoadPprofInput(const ProfileInput& in, const ArtifactRequest& r, bool offcpu, WeightedSets* loaded,
                      ArtifactSummary* sum) {
  auto got = LoadPprofSamples(in.db);
  if (!got) return got.error();
  sum->warnings.insert(sum->warnings.end(), got->warnings.begin(), got->warnings.end());
  if (r.pid) got->set.KeepPid(r.pid);
  if (!offcpu) got->set.offcpu.clear();
  loaded->emplace_back(std::move(got->set), in.weight);
  return {};
}

// The runs of a database input: those it names, every run with CPU samples
// (DB:all), or the newest.
Result<std::vector<int64_t>> InputRuns(Db& db, const ProfileInput& in) {
  std::vector<int64_t> runs = in.runs;
  if (in.all_runs) {
    auto all = CpuRuns(db);
    if (!all) return all.error();
    if (all->empty())
      return MakeError("'" + in.db + "' has no run with CPU samples; record one with: syspgo collect --probes cpu -o " +
                       in.db + " -- COMMAND");
    runs = *all;
  }
  if (runs.empty()) {
    auto newest = ResolveRun(db, 0);
    if (!newest) return newest.error();
    runs.push_back(newest->id);
  }
  return runs;
}

// The samples of each run of a database input (`offcpu`: with their
// off-CPU intervals), warning of runs that lost events.
Status LoadDbInput(const ProfileInput& in, const ArtifactRequest& r, bool offcpu, WeightedSets* loaded,
                   ArtifactSummary* sum) {
  auto db = OpenProfileDb(in.db, DbMode::kReadOnly);
  if (!db) return db.error();
  auto runs = InputRuns(*db, in);
  if (!runs) return runs.error();
  for (int64_t run : *runs) {
    auto info = ResolveRun(*db, run);
    if (!info) return info.error();
    if (info->events_dropped)
      sum->warnings.push_back("run " + std::to_string(run) + " of " + in.db + " lost " +
                              std::to_string(info->events_dropped) + " events; its counts are lower bounds.");
    auto set = LoadCpuSamples(*db, run, offcpu);
    if (!set) return set.error();
    if (r.pid) set->KeepPid(r.pid);
    loaded->emplace_back(std::move(*set), in.weight);
  }
  return {};
}

// Every input's samples merged, each scaled first to the largest input's
// total with `normalize`, then by its weight; counts the runs and pprof
// files into *sum.
SampleSet MergeInputs(WeightedSets& loaded, bool normalize, ArtifactSummary* sum) {
  uint64_t largest = 0;
  for (auto& [set, w] : loaded) largest = std::max(largest, set.Total());
  SampleSet merged;
  for (auto& [set, w] : loaded) {
    uint64_t total = set.Total();
    if (normalize && total && total != largest) {
      double f = static_cast<double>(largest) / static_cast<double>(total);
      for (std::vector<StackSample>* v : {&set.samples, &set.offcpu})
        for (StackSample& s : *v) s.count = static_cast<uint64_t>(std::llround(static_cast<double>(s.count) * f));
    }
    merged.Merge(set, w);
    if (set.runs.empty()) ++sum->pprof_files;
    else ++sum->runs;
  }
  return merged;
}

// The binary r.binary names in `merged` (kNoBinary without one), and the
// file the symbolizer reads for it.
Result<uint32_t> PickBinary(const SampleSet& merged, const ArtifactRequest& r, SymbolizerOptions* opts,
                            ArtifactSummary* sum) {
  if (r.binary.empty()) return kNoBinary;
  auto b = FindBinary(merged, r.binary);
  if (!b) return b.error();
  // Read the file the user named: it is the one that will be rebuilt or
  // rewritten. (A binary without a build-id was matched by its path,
  // which is then the file read; files are keyed by build-id.)
  const BinaryRef& ref = merged.binaries[*b];
  if (!ref.build_id.empty()) {
    opts->files[ref.build_id] = r.binary;
  } else if (!merged.pprof_files.empty()) {
    auto id = ReadBuildId(r.binary);
    if (id.ok() && !id->empty())
      sum->warnings.push_back("the pprof profile names " + ref.path + " without a build-id, so it was matched to " +
                              r.binary + " (build-id " + *id + ") by path alone: if that file was rebuilt since the "
                              "profile was taken, the profile is stale. A profiler that records build-ids in its "
                              "mappings (syspgo, the OpenTelemetry eBPF profiler, Parca, perf) makes this check "
                              "exact; gperftools does not record them.");
  }
  return *b;
}

// Warnings for binaries with samples that could not be read, and the
// samples through `binary` and with their IP in it.
void SummarizeProfile(const Profile& p, uint32_t binary, ArtifactSummary* sum) {
  for (const ProfileBinary& b : p.binaries)
    if (!b.problem.empty() && b.samples && !b.ref.path.starts_with("["))
      sum->warnings.push_back(b.ref.path + " (" + std::to_string(b.samples) + " samples): " + b.problem);
  if (binary == kNoBinary) return;
  sum->binary_samples = p.binaries[binary].samples;
  for (const ProfileSample& s : p.samples) {
    if (s.first_user >= s.stack.size()) continue;
    const Location& l = p.locations[s.stack[s.first_user]];
    if (l.binary != binary) continue;
    sum->binary_leaf += s.count;
    if (l.has_line()) sum->binary_with_line += s.count;
  }
}

}  // namespace

Result<ArtifactSummary> WriteProfileArtifact(const ArtifactRequest& r) {
  auto emitter = ProfileEmitter::Create(r.kind, r.sample_counts, r.profile_kind);
  if (!emitter) return emitter.error();
  const ArtifactKind& kind = *FindArtifactKind(r.kind);  // Create() found it
  if (kind.needs_binary && r.binary.empty())
    return MakeError("--emit " + r.kind + " makes a profile for one binary: pass --binary PATH (the file to rebuild, "
                     "relink or rewrite).");
  if (r.inputs.empty()) return MakeError("no profile database or pprof profile given.");
  // Off-CPU time goes only to the emitter that writes it (pprof): the
  // others must not depend on whether the run recorded it.
  const bool offcpu = kind.offcpu;

  ArtifactSummary sum;
  WeightedSets loaded;
  for (const ProfileInput& in : r.inputs)
    SYSPGO_TRY(in.pprof ? LoadPprofInput(in, r, offcpu, &loaded, &sum) : LoadDbInput(in, r, offcpu, &loaded, &sum));
  SampleSet merged = MergeInputs(loaded, r.normalize, &sum);
  sum.samples = merged.Total();
  if (sum.samples == 0)
    return MakeError(r.pid ? "no CPU samples of process " + std::to_string(r.pid) + " in the given runs."
                           : "the given runs have no CPU samples.");

  SymbolizerOptions opts{r.debug_dirs, {}};
  auto binary = PickBinary(merged, r, &opts, &sum);
  if (!binary) return binary.error();
  Symbolizer sym(opts);
  Profile p = Symbolize(merged, sym);
  SummarizeProfile(p, *binary, &sum);
  Status st = (*emitter)->Write(p, *binary, r.output);
  if (!st.ok()) return st.error();
  return sum;
}

nlohmann::ordered_json ArtifactSummaryJson(const ArtifactRequest& r, const ArtifactSummary& s) {
  return {{"output", r.output},
          {"kind", r.kind},
          {"binary", r.binary.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.binary)},
          {"runs", s.runs},
          {"pprof_files", s.pprof_files},
          {"samples", s.samples},
          {"binary_samples", s.binary_samples},
          {"binary_leaf", s.binary_leaf},
          {"binary_with_line", s.binary_with_line},
          {"warnings", s.warnings}};
}

}  // namespace syspgo
