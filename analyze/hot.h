//===- hot.h - where a run spent its CPU: functions, call edges, paths ---===//
// What `syspgo analyze DB hot` prints. Every frame of a sampled stack
// counts, inline frames included (an inlined helper is a function to the
// reader even if not to the linker): self = samples with the function
// innermost, total = samples with it anywhere on the stack (once per
// sample, so recursion does not count twice). Call edges and paths come
// from the same stacks, which need frame pointers in the sampled code.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "analyze/sample_set.h"
#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

struct HotQuery {
  int64_t run_id = 0;
  std::string binary;        // only samples through this file, functions in it ("" = all)
  uint32_t pid = 0;          // only this process (0 = all)
  size_t limit = 20;         // rows per table (0 = all)
  std::vector<std::string> debug_dirs;
};

struct HotFunction {
  std::string name, binary;
  uint64_t self = 0, total = 0;
};

struct HotEdge {
  std::string caller, callee;
  uint64_t count = 0;
};

struct HotPath {
  std::vector<std::string> frames;  // outermost first
  uint64_t count = 0;
};

struct HotReport {
  uint64_t samples = 0;          // after the filters
  uint64_t with_line = 0;        // samples whose innermost user frame has a source line
  std::vector<HotFunction> functions;  // most self first
  std::vector<HotEdge> edges;          // most samples first
  std::vector<HotPath> paths;          // most samples first
  std::vector<std::string> problems;   // binaries that could not be symbolized, and why
};

// Builds the report from a symbolized profile; `binary` (an index into
// p.binaries, or kNoBinary for all) keeps samples through it and its functions.
HotReport BuildHotReport(const Profile& p, uint32_t binary, size_t limit);

// Loads, filters and symbolizes the run, then builds the report.
Result<HotReport> AnalyzeHot(Db& db, const HotQuery& q);

std::string HotText(const HotReport& r);
std::string HotJson(const HotReport& r);

}  // namespace syspgo
