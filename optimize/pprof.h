//===- pprof.h - CPU samples as a gzipped pprof profile.proto ------------===//
// The schema is schemas/pprof_profile.proto (pprof's field numbers). One
// Location per sampled address with its inline chain, one Function per
// (binary, name), a "pid" label per sample; kernel frames in a
// "[kernel.kallsyms]" mapping.
#pragma once
#include <memory>

#include "optimize/emitter.h"

namespace syspgo {

std::unique_ptr<ProfileEmitter> MakePprofEmitter();

}  // namespace syspgo
