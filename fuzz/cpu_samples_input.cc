//===- cpu_samples_input.cc - the CPU-sample reader on a fuzzed database --===//
// A separate file from fuzz_inputs.cc because the reader it drives
// (analyze/sample_db.cc, analyze/symbolize.cc) links libdw and libelf; the
// other targets do not need them. Nothing here opens a binary: the samples
// are loaded, merged and their kernel frames named from the database alone.
#include <set>

#include "analyze/sample_db.h"
#include "analyze/symbolize.h"
#include "common/profile_db.h"
#include "fuzz/fuzz_inputs.h"

namespace syspgo::fuzz {

std::string CpuSamplesInput(const uint8_t* data, size_t size) {
  const std::string path = ScratchInput("samples.db", data, size);
  auto db = OpenProfileDb(path, DbMode::kReadOnly);
  if (!db) return MustName(db.error().message, path, "OpenProfileDb");
  auto runs = CpuRuns(*db);
  if (!runs) return MustName(runs.error().message, path, "CpuRuns");
  SampleSet all;
  std::set<int64_t> tried;
  for (int64_t run : *runs) {
    if (!tried.insert(run).second || tried.size() > 4) continue;
    auto set = LoadCpuSamples(*db, run, /*offcpu=*/true);
    if (!set) {
      if (std::string b = MustName(set.error().message, path, "LoadCpuSamples"); !b.empty()) return b;
      continue;
    }
    all.Merge(*set, 2);
    Symbolizer sym;
    sym.SetKallsyms(set->kallsyms);
    for (const auto* list : {&set->samples, &set->offcpu})
      for (const auto& s : *list)
        for (uint64_t a : s.kernel) (void)sym.KernelName(a);
  }
  all.Normalize();
  return "";
}

}  // namespace syspgo::fuzz
