//===- emitter.cc - the profile emitter factory and shared helpers -------===//
#include "optimize/emitter.h"

#include <cerrno>
#include <cstring>

#include "optimize/artifact_kinds.h"

namespace syspgo {

Result<std::unique_ptr<ProfileEmitter>> ProfileEmitter::Create(std::string_view kind, SampleCounts counts,
                                                               ProfileKind profile) {
  const ArtifactKind* k = FindArtifactKind(kind);
  if (k && k->input == ArtifactInput::kCpuSamples) {
    switch (k->id) {
      case ArtifactKindId::kSampleProfile: return MakeSampleProfileEmitter(false, counts, profile);
      case ArtifactKindId::kSampleProfileBinary: return MakeSampleProfileEmitter(true, counts, profile);
      case ArtifactKindId::kFdata: return MakeBoltFdataEmitter();
      case ArtifactKindId::kOrder: return MakeSymbolOrderEmitter();
      case ArtifactKindId::kPprof: return MakePprofEmitter();
      case ArtifactKindId::kFolded: return MakeFoldedEmitter();
      default: break;
    }
  }
  return MakeError("unknown profile artifact '" + std::string(kind) +
                   "'; choose one of: " + ArtifactKindNames(ArtifactInput::kCpuSamples));
}

Status CheckBinary(const Profile& p, uint32_t binary, const char* what, bool ProfileBinary::*needs,
                   const char* lacks) {
  if (binary >= p.binaries.size()) return MakeError(std::string(what) + " is made for one binary: pass --binary PATH.");
  const ProfileBinary& b = p.binaries[binary];
  if (!b.problem.empty()) return MakeError("cannot symbolize " + b.ref.path + ": " + b.problem + ".");
  if (needs && !(b.*needs)) return MakeError(b.ref.path + lacks);
  return {};
}

bool SampleTouches(const Profile& p, const ProfileSample& s, uint32_t binary) {
  if (binary == kNoBinary) return true;
  for (size_t i = s.first_user; i < s.stack.size(); ++i)
    if (p.locations[s.stack[i]].binary == binary) return true;
  return false;
}

}  // namespace syspgo
