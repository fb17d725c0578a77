//===- pgo_workload.h - finding known places in the profiles workload ----===//
// tests/workloads/pgo is built by tests/profiles.cmake; the symbolizer and
// emitter tests locate its call sites and source lines with the LLVM tools,
// independently of the code under test.
#pragma once
#include <cstdint>
#include <sstream>
#include <string>

#include "common/util.h"
#include "tests/test_util.h"

namespace syspgo::test {

inline std::string Pgo(const std::string& name) { return std::string(SYSPGO_PGO_BIN) + "/" + name; }

// The address after the first call in `caller` whose disassembly line
// contains `operand`: what a stack holds.
inline uint64_t ReturnAddressAfterCall(const std::string& bin, const std::string& caller, const std::string& operand) {
  std::istringstream in(Sh("llvm-objdump-19 -d --no-show-raw-insn --disassemble-symbols=" + caller + " " + bin).out);
  bool after_call = false;
  for (std::string line; std::getline(in, line);) {
    if (after_call) return std::stoull(Trim(line), nullptr, 16);
    after_call = line.find("call") != std::string::npos && line.find(operand) != std::string::npos;
  }
  return 0;
}

// The address after `caller`'s call to `callee`.
inline uint64_t ReturnAddressOfCall(const std::string& bin, const std::string& caller, const std::string& callee) {
  return ReturnAddressAfterCall(bin, caller, "<" + callee);
}

// The address after `caller`'s first indirect call ("call *...").
inline uint64_t ReturnAddressOfIndirectCall(const std::string& bin, const std::string& caller) {
  return ReturnAddressAfterCall(bin, caller, "*");
}

// The line of the workload's pgo_app.c that contains `text`.
inline uint32_t SourceLine(const std::string& text) {
  return static_cast<uint32_t>(
      std::stoul(Sh("grep -n -F '" + text + "' " SYSPGO_PGO_SRC "/pgo_app.c | cut -d: -f1").out));
}

}  // namespace syspgo::test
