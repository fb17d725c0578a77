//===- profile_artifacts.h - runs in, one profile artifact out -----------===//
// What `syspgo optimize` and `syspgo merge` do, kept out of the CLI so the
// tests can call it: load the CPU samples of one or more runs (of one or
// more databases) or pprof profiles, weight and merge them, symbolize, pick
// the binary, and hand the profile to the emitter of the requested kind.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "optimize/emitter.h"

namespace syspgo {

struct ProfileInput {
  std::string db;             // a profile database, or with `pprof` a pprof profile
  bool pprof = false;
  std::vector<int64_t> runs;  // empty: the newest run (or every run with samples if all_runs)
  bool all_runs = false;
  uint64_t weight = 1;        // counts are multiplied by this
};

// Parses "DB", "DB:RUN", "DB:all", each optionally followed by "@WEIGHT",
// and "PPROF[@WEIGHT]" for a pprof profile (IsPprofFile, or any file when
// `pprof` says so, as --pprof does). A path that exists as given is taken
// whole, even with ':' or '@' in it.
Result<ProfileInput> ParseProfileInput(const std::string& spec, bool pprof = false);

// "ip", "ip-only" or "stacks" (optimize/merge/pgo --sample-counts); nullopt otherwise.
std::optional<ProfileEmitter::SampleCounts> ParseSampleCounts(std::string_view s);
// The name ParseSampleCounts reads as `c`.
const char* SampleCountsName(ProfileEmitter::SampleCounts c);
// For usage errors: "--sample-counts is " + kSampleCountsChoices + ", got ...".
inline constexpr const char* kSampleCountsChoices = "ip, ip-only or stacks";
// "flat", "cs" or "probe" (optimize/merge/pgo --profile-kind); nullopt otherwise.
std::optional<ProfileEmitter::ProfileKind> ParseProfileKind(std::string_view s);
const char* ProfileKindName(ProfileEmitter::ProfileKind k);
inline constexpr const char* kProfileKindChoices = "flat, cs or probe";

struct ArtifactRequest {
  std::vector<ProfileInput> inputs;
  std::string kind;       // a ProfileEmitter kind
  std::string binary;     // the binary to optimize ("" = the whole profile, for pprof and folded)
  std::string output;
  uint32_t pid = 0;       // only this process (0 = all)
  bool normalize = false; // scale every run to the same total before the weights, so long runs do not dominate
  std::vector<std::string> debug_dirs;
  ProfileEmitter::SampleCounts sample_counts = ProfileEmitter::SampleCounts::kIp;
  ProfileEmitter::ProfileKind profile_kind = ProfileEmitter::ProfileKind::kFlat;
};

struct ArtifactSummary {
  uint64_t runs = 0;
  uint64_t pprof_files = 0;
  uint64_t samples = 0;          // all samples merged (after weights)
  uint64_t binary_samples = 0;   // of them, with a frame in --binary
  uint64_t binary_leaf = 0;      // samples with their IP (innermost user frame) in --binary
  uint64_t binary_with_line = 0; // of those, at a source line
  std::vector<std::string> warnings;
};

Result<ArtifactSummary> WriteProfileArtifact(const ArtifactRequest& r);

// `optimize --json` and `merge --json`: what was written for which binary,
// from how many runs and samples, and the warnings; for machines (syspgo
// pgo reads it), where the line on stderr is for people.
nlohmann::ordered_json ArtifactSummaryJson(const ArtifactRequest& r, const ArtifactSummary& s);

}  // namespace syspgo
