//===- sample_profile.h - LLVM sample profiles from stack samples --------===//
// Written through LLVM's ProfileData library (SampleProfileWriter), text or
// extensible binary, for clang -fprofile-sample-use. The LLVM part lives in
// the loadable module libsyspgo_llvm.so (llvm_module.h), dlopen()ed on first
// use so that syspgo does not link libLLVM. How counts are derived without
// LBR, and what that loses against instrumentation, is in llvm_module.cc and
// docs/profiles.md.
#pragma once
#include <memory>

#include "optimize/emitter.h"

namespace syspgo {

// Declared in emitter.h; repeated here as this file's entry point.
std::unique_ptr<ProfileEmitter> MakeSampleProfileEmitter(bool extbinary, ProfileEmitter::SampleCounts counts,
                                                         ProfileEmitter::ProfileKind profile);

}  // namespace syspgo
