//===- folded.h - CPU samples as folded stacks ---------------------------===//
// One line per distinct stack, "comm;outermost;...;innermost count", sorted,
// as flamegraph.pl and speedscope read it. Inline frames are their own
// entries; kernel frames carry the "_[k]" suffix flamegraph.pl colors.
#pragma once
#include <memory>

#include "optimize/emitter.h"

namespace syspgo {

std::unique_ptr<ProfileEmitter> MakeFoldedEmitter();

}  // namespace syspgo
