//===- analyze_files_test.cc - `analyze files` on a fixture --------------===//
// A small fixture database, the analysis, and the expected table, kept
// together in tests/data/ (STYLE.md #15).
#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace syspgo::test {
namespace {

TEST(AnalyzeFiles, TableMatchesExpected) {
  TempDir dir;
  std::string db = FixtureDb(dir, "files_fixture.sql");
  auto r = RunCmd({SyspgoBin(), "analyze", db, "files", "--run", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, TestData("files_expected.txt"));
}

TEST(AnalyzeFiles, JsonMatchesExpected) {
  TempDir dir;
  std::string db = FixtureDb(dir, "files_fixture.sql");
  auto r = RunCmd({SyspgoBin(), "analyze", db, "files", "--json", "--all", "--run", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, TestData("files_expected_all.json"));
}

TEST(AnalyzeFiles, PicksTheRunAndRefusesMissingOnes) {
  TempDir dir;
  std::string db = FixtureDb(dir, "files_fixture.sql");
  auto r = RunCmd({SyspgoBin(), "analyze", db, "files"});  // the newest run
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("run 2: other"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no file I/O recorded"), std::string::npos) << r.out;
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "analyze", db, "files", "--run", "9"}), 1,
                         "has no run 9 (it has 2 runs, newest 2)"));
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "analyze", db, "nosuch"}), 2, "unknown analysis 'nosuch'"));
}

}  // namespace
}  // namespace syspgo::test
