//===- bolt_fdata.h - BOLT profiles (no_lbr fdata) from stack samples ----===//
// `llvm-bolt BIN -o OUT -data FILE` reads it. Functions are named as BOLT
// names them (locals "name/N"), offsets are hex from the function's start.
#pragma once
#include <memory>

#include "optimize/emitter.h"

namespace syspgo {

std::unique_ptr<ProfileEmitter> MakeBoltFdataEmitter();

}  // namespace syspgo
