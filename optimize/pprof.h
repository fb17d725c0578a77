//===- pprof.h - CPU samples as a gzipped pprof profile.proto ------------===//
// The schema is schemas/pprof_profile.proto (pprof's field numbers). One
// Location per sampled address with its inline chain, one Function per
// (binary, name), one Mapping per executable segment with samples, a "pid"
// label per sample; kernel frames in a "[kernel.kallsyms]" mapping.
// analyze/sample_pprof.h reads it back (and other producers' profiles).
#pragma once
#include <memory>

#include "optimize/emitter.h"

namespace syspgo {

std::unique_ptr<ProfileEmitter> MakePprofEmitter();

}  // namespace syspgo
