//===- examples_test.cc - the failure scenarios behave as their READMEs say ===//
// The analyzer's tests prove that syspgo diagnoses the scenarios in
// examples/; these prove, without syspgo, that the scenarios fail the way
// they claim: the checkpoint steps stall (C++ and Python alike) and clean up
// after themselves, and the library thrashes under a small memory cgroup but
// not under a large one, with the cgroup gone afterwards. If a scenario
// stopped misbehaving, an analyzer test could pass for the wrong reason or
// fail for no visible one; this suite says which.
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/stats.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

namespace fs = std::filesystem;

// The short training run of the READMEs: two checkpoints in ten steps.
constexpr int kSteps = 10, kPeriod = 5;
const std::vector<std::string> kShortRun = {"--steps", "10", "--period", "5", "--mb", "50", "--step-ms", "100"};

// A 50 MiB write plus fsync takes tens of ms on a disk; this bound is a
// margin no scheduling noise in a compute-only step reaches.
constexpr double kMinStallMs = 15;
// Copying 50 MiB into the page cache can be as slow as the fsync on a
// virtual machine (even on tmpfs), so the step time alone does not
// prove the disk is involved; a real fsync does, and the analyzer needs the
// block I/O it waits for.
constexpr double kMinFsyncMs = 5;

std::string PythonScript() { return std::string(SYSPGO_SOURCE_DIR) + "/examples/checkpoint_stall/checkpoint_stall.py"; }
std::string MemcgRunner() { return std::string(SYSPGO_SOURCE_DIR) + "/examples/pagecache_thrash/run_in_memcg.sh"; }

struct Step {
  int n = 0;
  double ms = 0;
  bool checkpoint = false;
  double checkpoint_ms = 0, fsync_ms = 0;
  std::string line;
};

// Reads the per-step lines both versions print:
//   step 4/10: 100.3 ms (compute 100.3 ms)
//   step 5/10: 141.0 ms (compute 100.2 ms, checkpoint 40.8 ms: write 50 MiB 12.1 ms, fsync 20.3 ms, PATH)
std::vector<Step> ParseSteps(const std::string& out) {
  static const std::regex kLine(
      R"(^step (\d+)/\d+: ([0-9.]+) ms \(compute [0-9.]+ ms(, checkpoint ([0-9.]+) ms: write \d+ MiB [0-9.]+ ms, fsync ([0-9.]+) ms)?)");
  std::vector<Step> steps;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, kLine)) continue;
    Step s;
    s.n = std::stoi(m[1]);
    s.ms = std::stod(m[2]);
    s.checkpoint = m[3].matched;
    s.checkpoint_ms = s.checkpoint ? std::stod(m[4]) : 0;
    s.fsync_ms = s.checkpoint ? std::stod(m[5]) : 0;
    s.line = line;
    steps.push_back(s);
  }
  return steps;
}

// What both versions must show: every period-th step, and only those, write
// a checkpoint into the directory and take clearly longer than a plain step;
// nothing is left behind.
void ExpectCheckpointStall(const CmdResult& r, const TempDir& dir) {
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::vector<Step> steps = ParseSteps(r.out);
  ASSERT_EQ(steps.size(), static_cast<size_t>(kSteps)) << r.out;
  std::vector<double> plain;
  for (const Step& s : steps)
    if (!s.checkpoint) plain.push_back(s.ms);
  double median_plain = Median(plain);
  for (int i = 0; i < kSteps; ++i) {
    const Step& s = steps[i];
    EXPECT_EQ(s.n, i + 1) << s.line;
    EXPECT_EQ(s.checkpoint, s.n % kPeriod == 0) << s.line;
    if (!s.checkpoint) continue;
    EXPECT_NE(s.line.find(dir.File("checkpoint-step" + std::to_string(s.n) + ".bin")), std::string::npos)
        << "the checkpoint must go to the directory given: " << s.line;
    EXPECT_NE(s.line.find("write 50 MiB"), std::string::npos) << s.line;
    EXPECT_GE(s.checkpoint_ms, kMinStallMs) << s.line;
    EXPECT_GE(s.fsync_ms, kMinFsyncMs) << "the checkpoint must wait for the disk: " << s.line;
    EXPECT_GE(s.ms, median_plain + kMinStallMs) << "a checkpoint step must stand out from the plain steps\n" << r.out;
  }
  EXPECT_TRUE(fs::is_empty(dir.path())) << "checkpoints must be removed after they are written";
}

TEST(CheckpointStall, CheckpointStepsStallAndFilesAreRemoved) {
  TempDir dir;
  std::vector<std::string> argv = {ExampleBin("checkpoint_stall")};
  argv.insert(argv.end(), kShortRun.begin(), kShortRun.end());
  argv.push_back(dir.path());
  ExpectCheckpointStall(RunCmd(argv), dir);
}

TEST(CheckpointStall, PythonVersionBehavesTheSame) {
  TempDir dir;
  // Run as the README says, through its shebang: Debian's python3 with
  // Debian's python3-numpy.
  std::vector<std::string> argv = {PythonScript()};
  argv.insert(argv.end(), kShortRun.begin(), kShortRun.end());
  argv.push_back("--dir=" + dir.path());
  ExpectCheckpointStall(RunCmd(argv), dir);
}

TEST(CheckpointStall, BadOptionsAreRefusedBeforeAnyStep) {
  for (const std::string& prog : {ExampleBin("checkpoint_stall"), PythonScript()}) {
    EXPECT_TRUE(FailedWith(RunCmd({prog, "--steps", "0", "/var/tmp"}), 2, "--steps wants a whole number")) << prog;
    CmdResult r = RunCmd({prog, "--steps", "1", "/nonexistent/checkpoints"});
    EXPECT_TRUE(FailedWith(r, 2, "not a writable directory")) << prog;
    EXPECT_EQ(r.out.find("step 1/1"), std::string::npos) << prog << " trained before checking its directory";
  }
}

struct ThrashRun {
  CmdResult r;
  std::string cgroup;
  double later_pass_ms = -1;
  double last_pass_read_mib = -1;
  long limit_hits = -1;
};

// Runs the scenario through its runner, under a time limit so a machine that
// thrashes far worse than measured fails the test instead of hanging it; the
// runner's trap removes the cgroup also when `timeout` stops it.
ThrashRun RunThrash(const std::string& library, int limit_mb) {
  ThrashRun t;
  t.r = RunCmd({"timeout", "120", MemcgRunner(), "--bin", ExampleBin("pagecache_thrash"), "--file", library, "--mb",
             "32", "--passes", "2", "--limit-mb", std::to_string(limit_mb)});
  std::smatch m;
  static const std::regex kCgroup(R"(run_in_memcg\.sh: cgroup (\S+),)");
  static const std::regex kLater(R"(later passes ([0-9.]+) ms mean)");
  static const std::regex kLastPass(R"(pass 2/2: [0-9.]+ ms, \d+ major faults, ([0-9.]+) MiB read)");
  static const std::regex kHits(R"(limit reached (\d+) times)");
  if (std::regex_search(t.r.out, m, kCgroup)) t.cgroup = m[1];
  if (std::regex_search(t.r.out, m, kLater)) t.later_pass_ms = std::stod(m[1]);
  if (std::regex_search(t.r.out, m, kLastPass)) t.last_pass_read_mib = std::stod(m[1]);
  if (std::regex_search(t.r.out, m, kHits)) t.limit_hits = std::stol(m[1]);
  return t;
}

TEST(PagecacheThrash, SmallLimitThrashesLargeLimitDoesNot) {
  TempDir dir;
  std::string library = dir.File("libthrash.so");
  // 32 MiB of library: under 8 MiB every pass re-reads most of it (about 3 s
  // a pass here); under 64 MiB, twice the library, a later pass only runs.
  ThrashRun slow = RunThrash(library, 8);
  ASSERT_EQ(slow.r.status, 0) << slow.r.out << slow.r.err;
  ThrashRun fast = RunThrash(library, 64);
  ASSERT_EQ(fast.r.status, 0) << fast.r.out << fast.r.err;

  for (const ThrashRun* t : {&slow, &fast}) {
    ASSERT_FALSE(t->cgroup.empty()) << t->r.out;
    EXPECT_NE(t->cgroup.find("/syspgo-thrash-"), std::string::npos) << t->cgroup;
    EXPECT_FALSE(fs::exists(t->cgroup)) << "the runner must remove its cgroup: " << t->cgroup;
    ASSERT_GT(t->later_pass_ms, 0) << t->r.out;
  }
  // The cause, not just the effect: the small cgroup hit its limit and re-read
  // the library from storage on the second pass; the large one did neither.
  EXPECT_GT(slow.limit_hits, 0) << slow.r.out;
  EXPECT_GT(slow.last_pass_read_mib, 16) << slow.r.out;
  EXPECT_EQ(fast.limit_hits, 0) << fast.r.out;
  EXPECT_EQ(fast.last_pass_read_mib, 0) << fast.r.out;
  // Re-reading the library from storage costs orders of magnitude more than
  // a pass over cached pages: ten times is a floor no load on a shared
  // machine brings the thrashing case down to.
  EXPECT_GE(slow.later_pass_ms, 10 * fast.later_pass_ms) << slow.r.out << fast.r.out;
  EXPECT_TRUE(fs::exists(library)) << "a library given with --file is kept for the next run";
}

TEST(PagecacheThrash, RunnerRefusesBadOptionsWithoutMakingACgroup) {
  CmdResult r = RunCmd({MemcgRunner(), "--bin", ExampleBin("pagecache_thrash"), "--limit-mb", "2"});
  EXPECT_TRUE(FailedWith(r, 2, "--limit-mb wants a whole number from 4"));
  EXPECT_EQ(r.out.find("cgroup"), std::string::npos) << r.out;
  EXPECT_TRUE(
      FailedWith(RunCmd({MemcgRunner(), "--bin", "/nonexistent/pagecache_thrash"}), 2, "is not an executable file"));
}

}  // namespace
}  // namespace syspgo::test
