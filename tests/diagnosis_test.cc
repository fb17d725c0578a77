//===- diagnosis_test.cc - findings that hold on the scenarios as run -------===//
// Each scenario is recorded with `syspgo collect` as a user would, and what
// the analyses say is checked against what the program really did: a
// finding whose own facts contradict its title is a bug.
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace syspgo::test {
namespace {

// The demo's run (scripts/demo.sh): ten steps, a 50 MiB checkpoint written
// and fsynced every 5th; the program reads no file of its own.
const std::vector<std::string> kDemoArgs = {"--steps", "10", "--period", "5", "--mb", "50", "--step-ms", "100"};

std::string CollectDemo(const TempDir& dir) {
  std::string db = dir.File("run.db");
  std::vector<std::string> argv = {SyspgoBin(), "collect", "-o", db, "--", ExampleBin("checkpoint_stall")};
  argv.insert(argv.end(), kDemoArgs.begin(), kDemoArgs.end());
  argv.push_back(dir.path());
  CmdResult c = RunCmd(argv);
  EXPECT_EQ(c.status, 0) << c.err << c.out;
  return db;
}

// The checkpoints are written, never read: the pages the writes put in the
// page cache are not reads the kernel did for the program, so the access
// analysis counts none for them, and no finding says the kernel read more
// than the program used.
TEST(Diagnosis, WrittenPagesAreNotReads) {
  TempDir dir;
  std::string db = CollectDemo(dir);
  CmdResult access = RunCmd({SyspgoBin(), "analyze", db, "access", "--json"});
  ASSERT_EQ(access.status, 0) << access.err;
  nlohmann::json d = nlohmann::json::parse(access.out);
  int checkpoints = 0;
  for (const nlohmann::json& row : d["files"]) {
    std::string path = row["path"];
    if (path.find("checkpoint-step") == std::string::npos) continue;
    ++checkpoints;
    EXPECT_EQ(row["kernel_read_bytes"].get<int64_t>(), 0) << path << ": written, never read";
    EXPECT_EQ(row["used_bytes"].get<int64_t>(), 0) << path;
  }
  // Two checkpoints; the second may reuse the first's inode (it was
  // unlinked), and a file is its (dev, ino).
  EXPECT_GE(checkpoints, 1) << access.out;
  std::string hint = d["hint"];
  EXPECT_EQ(hint.find("what the program used"), std::string::npos) << hint;
  // The demo's own step: no stall finding claims a read that did not happen.
  CmdResult stalls = RunCmd({SyspgoBin(), "analyze", db, "stalls"});
  ASSERT_EQ(stalls.status, 0) << stalls.err;
  std::cout << stalls.out;
  EXPECT_EQ(stalls.out.find("what the program used"), std::string::npos) << stalls.out;
  EXPECT_NE(stalls.out.find("checkpoint-step<N>.bin"), std::string::npos) << stalls.out;
  // The fsync's data-less request is the disk's cache flush: said so, not "1 of ..., 0 B".
  EXPECT_FALSE(std::regex_search(stalls.out, std::regex(R"(\(tid \d+\), 0 B)"))) << stalls.out;
}

// `syspgo analyze DB stalls --json` of a run, printed as text in the log.
nlohmann::json StallsJson(const std::string& db) {
  CmdResult text = RunCmd({SyspgoBin(), "analyze", db, "stalls"});
  EXPECT_EQ(text.status, 0) << text.err;
  std::cout << text.out;
  CmdResult r = RunCmd({SyspgoBin(), "analyze", db, "stalls", "--json"});
  EXPECT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

// The stall findings of `cause` whose file has `file` in it.
std::vector<nlohmann::json> FindingsOf(const nlohmann::json& j, const std::string& cause, const std::string& file) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& f : j["findings"])
    if (f["detail"]["cause"] == cause && f["detail"]["file"].get<std::string>().find(file) != std::string::npos)
      out.push_back(f);
  return out;
}

// What the kernel did in an on-CPU stall, by name.
std::vector<std::string> KernelWork(const nlohmann::json& f) {
  std::vector<std::string> out;
  for (const nlohmann::json& w : f["detail"]["kernel_work"]) out.push_back(w["what"]);
  return out;
}

bool Has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The checkpoint the seed scenario writes: random bytes in one write, no
// fsync. The thread runs in the kernel in it (and where writeback falls
// behind, its write waits in dirty-page throttling, a wait of the same
// pause): one on-CPU stall a checkpoint, named by its file, its syscalls
// and the kernel's work, every 5th step (a step ends in its sleep); the
// sleeps are their own finding, and no I/O stall claims the checkpoint.
// tests/oncpu_stalls_test.cc holds the throttled write to that exactly.
void ExpectRandomCheckpoints(const nlohmann::json& j, const std::string& file, int64_t count) {
  std::vector<nlohmann::json> oncpu = FindingsOf(j, "kernel-cpu", file);
  ASSERT_EQ(oncpu.size(), 1u) << j["findings"].dump(1);
  const nlohmann::json& f = oncpu.front();
  EXPECT_EQ(f["count"], count) << f.dump(1);
  std::vector<std::string> calls = f["detail"]["syscalls"];
  EXPECT_TRUE(Has(calls, "getrandom")) << f.dump(1);
  EXPECT_TRUE(Has(calls, "write")) << f.dump(1);
  std::vector<std::string> work = KernelWork(f);
  EXPECT_TRUE(Has(work, "generating random bytes")) << f.dump(1);
  EXPECT_TRUE(Has(work, "copying into the page cache")) << f.dump(1);
  EXPECT_EQ(f["detail"]["period_steps"], 5) << f.dump(1);
  EXPECT_EQ(f["detail"]["bytes_written"], int64_t{50} << 20) << f.dump(1);
  EXPECT_TRUE(FindingsOf(j, "io", file).empty()) << j["findings"].dump(1);
  bool sleeps = false;
  for (const nlohmann::json& s : j["findings"]) sleeps = sleeps || s["detail"]["cause"] == "sleep";
  EXPECT_TRUE(sleeps) << "the loop's sleeps, a finding of their own";
}

TEST(Diagnosis, ARandomCheckpointIsAStallOnTheCpu) {
  TempDir dir;
  std::string db = dir.File("run.db");
  CmdResult c = RunCmd({SyspgoBin(), "collect", "-o", db, "--", ExampleBin("checkpoint_stall"), "--random", "--steps",
                        "15", "--period", "5", "--mb", "50", "--step-ms", "50", "--sleep-ms", "100", dir.path()});
  ASSERT_EQ(c.status, 0) << c.err << c.out;
  ExpectRandomCheckpoints(StallsJson(db), "checkpoint-step<N>.bin", 3);
}

// The fsync variant, beside it: the thread waits for the disk in fsync, an
// I/O stall of the same file every 5th step.
TEST(Diagnosis, AnFsyncedCheckpointIsAnIoStall) {
  TempDir dir;
  std::string db = dir.File("run.db");
  CmdResult c = RunCmd({SyspgoBin(), "collect", "-o", db, "--", ExampleBin("checkpoint_stall"), "--steps", "15",
                        "--period", "5", "--mb", "50", "--step-ms", "50", "--sleep-ms", "100", dir.path()});
  ASSERT_EQ(c.status, 0) << c.err << c.out;
  nlohmann::json j = StallsJson(db);
  std::vector<nlohmann::json> io = FindingsOf(j, "io", "checkpoint-step<N>.bin");
  ASSERT_EQ(io.size(), 1u) << j["findings"].dump(1);
  EXPECT_EQ(io.front()["count"], 3) << io.front().dump(1);
  std::vector<std::string> calls = io.front()["detail"]["syscalls"];
  EXPECT_TRUE(Has(calls, "fsync")) << io.front().dump(1);
  EXPECT_TRUE(FindingsOf(j, "kernel-cpu", "checkpoint-step").empty()) << "the copy is part of the I/O stall";
}

// The seed scenario itself, shortened (tests/data/seed_short.py): Python and
// numpy from Debian, as a user runs them.
TEST(Diagnosis, TheSeedScenarioPausesInTheKernelEveryFifthBatch) {
  TempDir dir;
  std::string db = dir.File("run.db");
  std::string script = std::string(SYSPGO_SOURCE_DIR) + "/tests/data/seed_short.py";
  CmdResult c = RunCmd({SyspgoBin(), "collect", "-o", db, "--", "/usr/bin/python3", script, dir.path()});
  ASSERT_EQ(c.status, 0) << c.err << c.out;
  ExpectRandomCheckpoints(StallsJson(db), "checkpoint_<N>.chk", 3);
}

}  // namespace
}  // namespace syspgo::test
