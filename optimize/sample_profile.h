//===- sample_profile.h - LLVM sample profiles from stack samples --------===//
// Written through LLVM's ProfileData library (SampleProfileWriter), text or
// extensible binary, for clang -fprofile-sample-use. How counts are derived
// without LBR, and what that loses against instrumentation, is in
// sample_profile.cc and docs/profiles.md.
#pragma once
#include <memory>

#include "optimize/emitter.h"

namespace syspgo {

// Declared in emitter.h; repeated here as this file's entry point.
std::unique_ptr<ProfileEmitter> MakeSampleProfileEmitter(bool extbinary);

}  // namespace syspgo
