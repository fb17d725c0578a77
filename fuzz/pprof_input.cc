//===- pprof_input.cc - the pprof reader on a fuzzed file -----------------===//
// A file of its own, as cpu_samples_input.cc is, because the reader
// (analyze/sample_pprof.cc) needs the pprof schema, zlib and the sample
// model's libelf; the other targets need none of them. The bytes are a
// pprof file as a user would name it (gzipped or not): whatever is
// accepted must be samples every later stage can use.
#include <set>

#include "analyze/sample_pprof.h"
#include "analyze/symbolize.h"
#include "fuzz/fuzz_inputs.h"

namespace syspgo::fuzz {

std::string PprofInput(const uint8_t* data, size_t size) {
  const std::string path = ScratchInput("input.pb.gz", data, size);
  auto got = LoadPprofSamples(path);
  if (!got) return MustName(got.error().message, path, "LoadPprofSamples");
  const SampleSet& set = got->set;
  if (set.samples.empty()) return "an accepted pprof profile has no CPU samples";
  for (const auto* list : {&set.samples, &set.offcpu})
    for (const StackSample& s : *list) {
      if (s.count == 0) return "an accepted pprof profile has a sample of count 0";
      if (s.user.empty() && s.kernel.empty()) return "an accepted pprof profile has an empty stack";
      for (const UserFrame& f : s.user)
        if (f.binary != kNoBinary && f.binary >= set.binaries.size())
          return "a user frame refers to binary " + std::to_string(f.binary) + " of " +
                 std::to_string(set.binaries.size());
    }
  for (const std::string& w : got->warnings)
    if (std::string b = MustName(w, path, "a warning of LoadPprofSamples"); !b.empty()) return b;
  // What merge and the symbolizer do next, without opening any binary.
  SampleSet all;
  all.Merge(set, 3);
  all.Merge(set, 1);
  if (all.Total() != set.Total() * 4) return "merging an accepted profile with weights 3 and 1 does not give 4x its samples";
  Symbolizer sym;
  sym.SetKallsyms(set.kallsyms);
  for (const StackSample& s : set.samples)
    for (uint64_t a : s.kernel) (void)sym.KernelName(a);
  return "";
}

}  // namespace syspgo::fuzz
