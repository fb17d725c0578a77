//===- diagnosis_test.cc - findings that hold on the scenarios as run -------===//
// Each scenario is recorded with `syspgo collect` as a user would, and what
// the analyses say is checked against what the program really did: a
// finding whose own facts contradict its title is a bug.
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace syspgo::test
