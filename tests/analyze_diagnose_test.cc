//===- analyze_diagnose_test.cc - stalls, io, block, offcpu on a fixture --===//
// One fixture database (tests/data/diagnose_fixture.sql: a program whose
// threads wait for a checkpoint's I/O, a sleep, a pipe, a futex and a CPU),
// each pass run through the real CLI, and its expected output beside the
// fixture (STYLE.md #15). The fixture's comment says what every row is for.
#include <gtest/gtest.h>

#include "tests/findings_json.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

// Runs `syspgo analyze DB ARGS...` and compares stdout with tests/data/`expected`.
void ExpectOutput(const std::vector<std::string>& args, const std::string& expected) {
  TempDir dir;
  std::vector<std::string> argv = {SyspgoBin(), "analyze", FixtureDb(dir, "diagnose_fixture.sql")};
  argv.insert(argv.end(), args.begin(), args.end());
  CmdResult r = RunCmd(argv);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, TestData(expected));
}

TEST(AnalyzeStalls, TextMatchesExpected) { ExpectOutput({"stalls"}, "stalls_expected.txt"); }
TEST(AnalyzeStalls, VerboseMatchesExpected) { ExpectOutput({"stalls", "-v"}, "stalls_expected_verbose.txt"); }
TEST(AnalyzeStalls, JsonMatchesExpected) { ExpectOutput({"stalls", "--json"}, "stalls_expected.json"); }
TEST(AnalyzeIo, TableMatchesExpected) { ExpectOutput({"io"}, "io_expected.txt"); }
TEST(AnalyzeIo, AllKindsMatchExpected) { ExpectOutput({"io", "--all", "--slower", "0.01"}, "io_expected_all.txt"); }
TEST(AnalyzeBlock, HistogramsMatchExpected) { ExpectOutput({"block"}, "block_expected.txt"); }
TEST(AnalyzeOffCpu, FoldedStacksMatchExpected) { ExpectOutput({"offcpu"}, "offcpu_expected.txt"); }

// The same facts, field by field, so a wrong expected file cannot hide them.
TEST(AnalyzeStalls, NamesEachWaitForWhatItIs) {
  TempDir dir;
  std::string db = FixtureDb(dir, "diagnose_fixture.sql");
  std::string error;
  std::vector<FindingFields> all = AnalyzeStalls(db, dir.File("stalls.json"), &error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_EQ(all.size(), 5u);

  // The checkpoints: one finding for three files of one shape on one inode.
  std::vector<FindingFields> train = ForThread(all, "train");
  ASSERT_EQ(train.size(), 2u);
  const FindingFields& ck = train[0]["cause"] == "io" ? train[0] : train[1];
  EXPECT_EQ(ck.at("cause"), "io");
  EXPECT_EQ(ck.at("count"), "3");
  EXPECT_EQ(ck.at("file"), "/data/ckpt/step-<N>.bin");
  EXPECT_EQ(ck.at("paths"), R"(["/data/ckpt/step-4.bin","/data/ckpt/step-8.bin","/data/ckpt/step-12.bin"])");
  EXPECT_EQ(ck.at("syscalls"), R"(["openat","write","fsync","close"])");
  EXPECT_EQ(ck.at("inferred_syscalls"), R"(["unlink"])");
  EXPECT_EQ(ck.at("bytes_written"), "4194304");
  EXPECT_EQ(ck.at("synced_bytes"), "4194304");
  EXPECT_EQ(ck.at("block_bytes_by_op"), R"({"discard":12582912,"write":12582912})");
  EXPECT_EQ(ck.at("period_steps"), "4");
  EXPECT_EQ(ck.at("period_ns"), "2000000000");
  EXPECT_EQ(ck.at("total_ns"), "181500000");  // 3 x (openat .. end of the unlink wait)
  const FindingFields& cpu = train[0]["cause"] == "cpu" ? train[0] : train[1];
  EXPECT_EQ(cpu.at("cause"), "cpu");

  // Waits that are not I/O: named as such, no block request blamed, even
  // though another process's disk read completed during the pipe wait.
  std::vector<std::pair<std::string, std::string>> waits = {
      {"sleeper", "sleep"}, {"loader", "pipe"}, {"waiter", "lock"}};
  for (auto& [comm, cause] : waits) {
    std::vector<FindingFields> f = ForThread(all, comm);
    ASSERT_EQ(f.size(), 1u) << comm;
    EXPECT_EQ(f[0].at("cause"), cause) << comm;
    EXPECT_EQ(f[0].at("block_requests"), "0") << comm;
    EXPECT_NE(f[0].at("fix").find("This is not I/O"), std::string::npos) << f[0].at("fix");
  }
  EXPECT_EQ(ForThread(all, "loader")[0].at("waker"), "train (pid 100), writing to the pipe");
}

// A wait inside a path lookup (a stat, which opens nothing) names the path
// the program gave: file_lookup has no inode to name it by.
TEST(AnalyzeStalls, AStallInAPathLookupNamesItsPath) {
  TempDir dir;
  std::string db = FixtureDb(dir, "diagnose_fixture.sql");
  ASSERT_EQ(ExecSql(db,
                    "INSERT INTO thread (run_id, tid, pid, comm, start_ts) VALUES (1, 104, 100, 'statter', 1000);"
                    "INSERT INTO file_lookup (run_id, ts, dur, pid, tid, nr, path, flags, ret) VALUES "
                    "  (1, 9000000000, 30000000, 100, 104, 262, '/srv/cold/config.toml', 256, 0);"
                    "INSERT INTO offcpu (run_id, ts, dur, pid, tid, cpu, state, kernel_stack_id, user_stack_id, "
                    "  wake_ts, waker_pid, waker_tid, waker_comm, waker_kernel_stack_id, waker_user_stack_id) VALUES "
                    "  (1, 9000010000, 29900000, 100, 104, 1, 2, 1, 0, 9029900000, 0, 0, 'swapper/1', 7, 0);"),
            "");
  std::string error;
  std::vector<FindingFields> f = ForThread(AnalyzeStalls(db, dir.File("stalls.json"), &error), "statter");
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].at("file"), "/srv/cold/config.toml");
  EXPECT_EQ(f[0].at("syscalls"), R"(["newfstatat"])");
  EXPECT_EQ(f[0].at("total_ns"), "30000000");
}

TEST(AnalyzeStalls, ThresholdDropsShorterStalls) {
  TempDir dir;
  std::string db = FixtureDb(dir, "diagnose_fixture.sql");
  // At 100 ms only the sleeps (200 ms) and the pipe wait (150 ms) remain:
  // a checkpoint waits 47 ms in all.
  CmdResult r = RunCmd({SyspgoBin(), "analyze", db, "stalls", "--threshold", "100"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("2 findings from 3 stalls"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("fsync"), std::string::npos) << r.out;
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "analyze", db, "stalls", "--threshold", "0"}), 2,
                         "--threshold needs milliseconds"));
  EXPECT_TRUE(
      FailedWith(RunCmd({SyspgoBin(), "analyze", db, "io", "--slower", "soon"}), 2, "--slower needs milliseconds"));
}

// A run recorded without the groups a pass reads says so, and how to fix it.
TEST(AnalyzeDiagnose, RunWithoutTheGroupsSaysWhatToRecord) {
  TempDir dir;
  std::string db = FixtureDb(dir, "files_fixture.sql");  // fileio only
  CmdResult r = RunCmd({SyspgoBin(), "analyze", db, "stalls", "--run", "1"});
  EXPECT_TRUE(FailedWith(r, 1, "has no off-CPU data: the sched probe group was not recorded"));
  EXPECT_NE(r.err.find("syspgo collect --probes sched"), std::string::npos) << r.err;
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "analyze", db, "block", "--run", "1"}), 1,
                         "has no block latency histogram: the block probe group was not recorded"));
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "analyze", db, "offcpu", "--run", "1"}), 1, "has no off-CPU data"));
  r = RunCmd({SyspgoBin(), "analyze", db, "io", "--run", "1"});  // fileio was recorded: a table
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("/data/ckpt.bin"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace syspgo::test
