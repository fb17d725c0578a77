//===- emitter.cc - the profile emitter factory and shared helpers -------===//
#include "optimize/emitter.h"

#include <cerrno>
#include <cstring>

namespace syspgo {

const std::vector<ProfileEmitter::Kind>& ProfileEmitter::Kinds() {
  static const std::vector<Kind> kinds = {
      {"sample-profile", "LLVM sample profile, text (clang -fprofile-sample-use=FILE)", true},
      {"sample-profile-binary", "LLVM sample profile, extensible binary (same use, smaller, faster to read)", true},
      {"fdata", "BOLT profile, no_lbr form (llvm-bolt BIN -o OUT -data FILE)", true},
      {"order", "symbol ordering file, hot call chains together (ld.lld --symbol-ordering-file=FILE)", true},
      {"pprof", "gzipped pprof profile.proto (pprof, speedscope, Perfetto, pprof backends)", false, true},
      {"folded", "folded stacks, one 'frame;frame;... count' line each (flamegraph.pl, speedscope)", false},
  };
  return kinds;
}

Result<std::unique_ptr<ProfileEmitter>> ProfileEmitter::Create(std::string_view kind, SampleCounts counts,
                                                               ProfileKind profile) {
  if (kind == "sample-profile") return MakeSampleProfileEmitter(false, counts, profile);
  if (kind == "sample-profile-binary") return MakeSampleProfileEmitter(true, counts, profile);
  if (kind == "fdata") return MakeBoltFdataEmitter();
  if (kind == "order") return MakeSymbolOrderEmitter();
  if (kind == "pprof") return MakePprofEmitter();
  if (kind == "folded") return MakeFoldedEmitter();
  std::string names;
  for (const Kind& k : Kinds()) names += (names.empty() ? "" : ", ") + std::string(k.name);
  return MakeError("unknown profile artifact '" + std::string(kind) + "'; choose one of: " + names);
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
