//===- fuzz_main.cc - the libFuzzer entry point of every target ----------===//
// Each target compiles this file with SYSPGO_FUZZ_INPUT naming its function
// in fuzz_inputs.h (see fuzz/CMakeLists.txt). The work is there, shared with
// the regression test; a broken promise that is not a crash is turned into
// one here, so libFuzzer saves the input that broke it.
#include <cstdio>
#include <cstdlib>

#include "fuzz/fuzz_inputs.h"

#ifndef SYSPGO_FUZZ_INPUT
#error "compile with -DSYSPGO_FUZZ_INPUT=<function in fuzz_inputs.h>"
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string broken = syspgo::fuzz::SYSPGO_FUZZ_INPUT(data, size);
  if (!broken.empty()) {
    fprintf(stderr, "syspgo fuzz: %s\n", broken.c_str());
    abort();
  }
  return 0;
}
