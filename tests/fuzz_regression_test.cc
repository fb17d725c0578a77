//===- fuzz_regression_test.cc - replay the fuzz corpora in the normal build ===//
// Every seed in fuzz/corpus/<target>/ and every input a fuzzer once crashed
// on, saved in fuzz/regressions/<target>/, goes through the same function
// the libFuzzer target runs (fuzz/fuzz_inputs.h), here without libFuzzer, in
// the g++ build. A crash fails the suite; so does a broken promise (an error
// that does not name its input, a plan that changes on a round trip).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fuzz/fuzz_inputs.h"

namespace syspgo {
namespace {

namespace fs = std::filesystem;
using Input = std::string (*)(const uint8_t*, size_t);

// Replays every file under fuzz/<dir>/<target>/, sorted; returns how many.
size_t Replay(const std::string& dir, const std::string& target, Input input) {
  fs::path root = fs::path(SYSPGO_SOURCE_DIR) / "fuzz" / dir / target;
  if (!fs::is_directory(root)) return 0;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_regular_file() && e.path().filename().string()[0] != '.') files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string bytes = ss.str();
    EXPECT_EQ(input(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), "") << f;
  }
  return files.size();
}

TEST(FuzzRegression, PlanCorpusAndSavedCrashes) {
  EXPECT_GE(Replay("corpus", "plan", fuzz::PlanInput), 3u) << "the plan seed corpus is missing";
  Replay("regressions", "plan", fuzz::PlanInput);
}

TEST(FuzzRegression, PlanReplayCorpusAndSavedCrashes) {
  EXPECT_GE(Replay("corpus", "plan_replay", fuzz::PlanReplayInput), 4u) << "the plan_replay seed corpus is missing";
  Replay("regressions", "plan_replay", fuzz::PlanReplayInput);
}

TEST(FuzzRegression, ProfileDbCorpusAndSavedCrashes) {
  EXPECT_GE(Replay("corpus", "profile_db", fuzz::ProfileDbInput), 3u) << "the profile_db seed corpus is missing";
  Replay("regressions", "profile_db", fuzz::ProfileDbInput);
}

TEST(FuzzRegression, ErofsImageCorpusAndSavedCrashes) {
  EXPECT_GE(Replay("corpus", "erofs_image", fuzz::ErofsImageInput), 4u) << "the erofs_image seed corpus is missing";
  Replay("regressions", "erofs_image", fuzz::ErofsImageInput);
}

TEST(FuzzRegression, CpuSamplesCorpusAndSavedCrashes) {
  EXPECT_GE(Replay("corpus", "cpu_samples", fuzz::CpuSamplesInput), 2u) << "the cpu_samples seed corpus is missing";
  Replay("regressions", "cpu_samples", fuzz::CpuSamplesInput);
}

TEST(FuzzRegression, PprofCorpusAndSavedCrashes) {
  EXPECT_GE(Replay("corpus", "pprof", fuzz::PprofInput), 3u) << "the pprof seed corpus is missing";
  Replay("regressions", "pprof", fuzz::PprofInput);
}

}  // namespace
}  // namespace syspgo
