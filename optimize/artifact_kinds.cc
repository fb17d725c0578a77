//===- artifact_kinds.cc - every artifact syspgo writes, one row each ------===//
#include "optimize/artifact_kinds.h"

#include <iterator>

namespace syspgo {
namespace {

using enum ArtifactKindId;
constexpr ArtifactInput kSamples = ArtifactInput::kCpuSamples, kCold = ArtifactInput::kColdStart;

// In ArtifactKindId order (checked below), which is also --help's.
constexpr ArtifactKind kArtifactKinds[] = {
    {.id = kSampleProfile,
     .name = "sample-profile",
     .help = "LLVM sample profile for clang -fprofile-sample-use (text; --format binary: extbinary)",
     .input = kSamples,
     .needs_binary = true,
     .json_summary = true,
     .binary_form = "sample-profile-binary",
     .pgo_file = "sample.prof"},
    {.id = kSampleProfileBinary,
     .name = "sample-profile-binary",
     .help = "LLVM sample profile, extensible binary form",
     .input = kSamples,
     .needs_binary = true,
     .json_summary = true},
    {.id = kFdata,
     .name = "fdata",
     .help = "BOLT profile, no_lbr form: llvm-bolt BIN -o OUT -data FILE",
     .input = kSamples,
     .needs_binary = true,
     .json_summary = true,
     .pgo_file = "bolt.fdata"},
    {.id = kOrder,
     .name = "order",
     .help = "symbol ordering file: ld.lld --symbol-ordering-file=FILE (compile with -ffunction-sections)",
     .input = kSamples,
     .needs_binary = true,
     .json_summary = true,
     .pgo_file = "order.txt"},
    {.id = kPprof,
     .name = "pprof",
     .help = "gzipped pprof profile.proto (pprof, speedscope); --binary optional",
     .input = kSamples,
     .json_summary = true,
     .offcpu = true},
    {.id = kFolded,
     .name = "folded",
     .help = "folded stacks for flame graphs; --binary optional",
     .input = kSamples,
     .json_summary = true},
    {.id = kPlan,
     .name = "plan",
     .help = "prefetch plan for syspgo prefetch, from a cold start (collect --cold)",
     .input = kCold},
    {.id = kSquashfsSort,
     .name = "squashfs-sort",
     .help = "mksquashfs -sort file, first-touched first (--source-dir DIR, default /)",
     .input = kCold},
    {.id = kStartupOrder,
     .name = "startup-order",
     .help = "symbol ordering file from a cold start's text pages (--binary): ld.lld --symbol-ordering-file=FILE",
     .input = kCold,
     .needs_binary = true,
     .page_order = true},
    {.id = kErofs,
     .name = "erofs",
     .help = "EROFS image of --source-dir DIR, the plan's pages first in replay order (runs mkfs.erofs)",
     .input = kCold,
     .needs_source_dir = true,
     .json_summary = true},
    {.id = kPrefetchList,
     .name = "prefetch-list",
     .help = "ordered absolute paths, as Nydus/eStargz prefetch lists take (--image-root DIR)",
     .input = kCold},
    {.id = kReadahead,
     .name = "readahead",
     .help = "readahead plan for syspgo prefetch --readahead: per-file advice, per-device read_ahead_kb",
     .input = ArtifactInput::kFileAccess},
};

constexpr bool InIdOrder() {
  for (size_t i = 0; i < std::size(kArtifactKinds); ++i)
    if (static_cast<size_t>(kArtifactKinds[i].id) != i) return false;
  return std::size(kArtifactKinds) == static_cast<size_t>(kReadahead) + 1;
}
static_assert(InIdOrder(), "one row per ArtifactKindId, in its order");

}  // namespace

std::span<const ArtifactKind> ArtifactKinds() { return kArtifactKinds; }

const ArtifactKind* FindArtifactKind(std::string_view name) {
  for (const ArtifactKind& k : kArtifactKinds)
    if (name == k.name) return &k;
  return nullptr;
}

const ArtifactKind& ArtifactKindOf(ArtifactKindId id) { return kArtifactKinds[static_cast<size_t>(id)]; }

std::string ArtifactKindNames(ArtifactInput input) {
  std::string names;
  for (const ArtifactKind& k : kArtifactKinds)
    if (k.input == input) names += (names.empty() ? "" : ", ") + std::string(k.name);
  return names;
}

std::string PgoArtifactPath(const std::string& dir, ArtifactKindId id) {
  return dir + "/profile/" + ArtifactKindOf(id).pgo_file;
}

}  // namespace syspgo
