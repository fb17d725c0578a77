//===- artifact_kinds.h - every artifact syspgo writes, one row each -------===//
// The one list of artifact kinds: the name `--emit` takes, the line
// `syspgo optimize --help` shows, what the artifact is made from (which
// decides the commands and the writer that make it), what it needs besides
// its input, and the file `syspgo pgo` keeps it in. `optimize`, `merge`,
// `pgo`, the emitter factory (emitter.h) and the help text all read it, so
// a new artifact is one row here and its writer.
#pragma once
#include <span>
#include <string>
#include <string_view>

namespace syspgo {

// What an artifact is made from.
enum class ArtifactInput {
  kCpuSamples,  // CPU samples of runs or pprof profiles: optimize and merge, through emitter.h
  kColdStart,   // a cold start's prefetch plan (plan_from_run.h): optimize
  kFileAccess,  // how a run used each file (readahead_plan.h): optimize
};

enum class ArtifactKindId {
  kSampleProfile,
  kSampleProfileBinary,
  kFdata,
  kOrder,
  kPprof,
  kFolded,
  kPlan,
  kSquashfsSort,
  kStartupOrder,
  kErofs,
  kPrefetchList,
  kReadahead,
};

struct ArtifactKind {
  ArtifactKindId id;
  const char* name;  // what --emit takes
  const char* help;  // its line in optimize --help
  ArtifactInput input;
  bool needs_binary = false;      // made for one binary (--binary); else the whole run, or one binary's share
  bool needs_source_dir = false;  // made of one directory (--source-dir, not /)
  bool json_summary = false;      // optimize --json summarizes it
  bool offcpu = false;            // CPU samples: it writes off-CPU time too; the others never see it
  // Cold start: each page at its own first touch, and no gap between
  // ranges, rather than the plan's merged ranges.
  bool page_order = false;
  const char* binary_form = "";  // the kind optimize --format binary writes instead ("": none)
  const char* pgo_file = "";     // its file in `syspgo pgo --dir DIR`'s DIR/profile/ ("": pgo makes none)
};

// Every kind, in the order --help lists them.
std::span<const ArtifactKind> ArtifactKinds();
// The kind named `name`, or nullptr.
const ArtifactKind* FindArtifactKind(std::string_view name);
const ArtifactKind& ArtifactKindOf(ArtifactKindId id);
// The names of the kinds made from `input`, "a, b, c", for help and errors.
std::string ArtifactKindNames(ArtifactInput input);
// Where `syspgo pgo --dir DIR` keeps the artifact of kind `id`: DIR/profile/FILE.
std::string PgoArtifactPath(const std::string& dir, ArtifactKindId id);

}  // namespace syspgo
