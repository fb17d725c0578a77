//===- emitter.h - one interface for every profile artifact --------------===//
// Each artifact built from CPU samples (LLVM sample profile, BOLT fdata,
// linker symbol order, pprof, folded stacks; the kCpuSamples rows of
// artifact_kinds.h) is a small ProfileEmitter in its own file, made by kind
// name through Create(), as LLVM's
// SampleProfileWriter::create does for its formats. An emitter reads only
// the symbolized Profile, and its output is sorted: the same samples give
// the same bytes.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/sample_set.h"
#include "common/result.h"

namespace syspgo {

class ProfileEmitter {
 public:
  virtual ~ProfileEmitter() = default;
  // How a sample profile counts (docs/profiles.md): kStacks, the IP
  // samples plus the time below each call site from the stacks, with call
  // targets and head samples; kIp, line counts from the IP samples only,
  // with the stacks' call targets at the call sites; kIpOnly, the IP
  // samples and nothing else, as llvm-profgen --leading-ip-only does.
  enum class SampleCounts { kStacks, kIp, kIpOnly };
  // What a sample profile is keyed by (docs/profiles.md): kFlat, each
  // function and the calls the profiled binary inlined; kContext, also the
  // calling context of each sample from the stacks, with the pre-inliner's
  // decisions (llvm_module.cc); kProbe, keyed by the pseudo-probes of a
  // binary built with -fpseudo-probe-for-profiling instead of lines.
  enum class ProfileKind { kFlat, kContext, kProbe };
  static Result<std::unique_ptr<ProfileEmitter>> Create(std::string_view kind,
                                                        SampleCounts counts = SampleCounts::kIp,
                                                        ProfileKind profile = ProfileKind::kFlat);

  // Writes the artifact for binary `binary` (an index into p.binaries, or
  // kNoBinary for the whole profile where the kind allows it) to `path`.
  // Errors say what the binary lacks and how to get it.
  virtual Status Write(const Profile& p, uint32_t binary, const std::string& path) const = 0;
};

// The emitters, one per file.
std::unique_ptr<ProfileEmitter> MakeSampleProfileEmitter(bool extbinary, ProfileEmitter::SampleCounts counts,
                                                         ProfileEmitter::ProfileKind profile);
std::unique_ptr<ProfileEmitter> MakeBoltFdataEmitter();
std::unique_ptr<ProfileEmitter> MakeSymbolOrderEmitter();
std::unique_ptr<ProfileEmitter> MakePprofEmitter();
std::unique_ptr<ProfileEmitter> MakeFoldedEmitter();


// The checks every per-binary emitter starts with: a binary was chosen
// (`what` names the artifact in the message) and it could be read; and, if
// `needs` is given, that the binary has what the artifact is made from, else
// the error is its path followed by `lacks` (what it lacks, how to get it).
Status CheckBinary(const Profile& p, uint32_t binary, const char* what, bool ProfileBinary::*needs = nullptr,
                   const char* lacks = "");

// True if some user frame of `s` is in `binary` (always, for kNoBinary).
bool SampleTouches(const Profile& p, const ProfileSample& s, uint32_t binary);

}  // namespace syspgo
