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
  ASSERT_EQ(all.size(), 4u);

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
  std::vector<FindingFields> sleeper = ForThread(all, "sleeper");
  ASSERT_EQ(sleeper.size(), 1u);
  EXPECT_EQ(sleeper[0].at("cause"), "sleep");
  EXPECT_EQ(sleeper[0].at("block_requests"), "0");
  EXPECT_NE(sleeper[0].at("fix").find("This is not I/O"), std::string::npos) << sleeper[0].at("fix");
  // The loader's pipe and the waiter's futex both wait for train's work on
  // its CPU: one cause, one finding, which names each wait for what it is.
  std::vector<FindingFields> loader = ForThread(all, "loader");
  ASSERT_EQ(loader.size(), 1u);
  EXPECT_TRUE(ForThread(all, "waiter").empty());
  EXPECT_EQ(loader[0].at("cause"), "pipe");
  EXPECT_EQ(loader[0].at("block_requests"), "0");
  EXPECT_EQ(loader[0].at("waker"), "train (pid 100), writing to the pipe");
  EXPECT_EQ(loader[0].at("count"), "2");
  EXPECT_NE(loader[0].at("title").find("wait for train (the command)'s work on a CPU"), std::string::npos)
      << loader[0].at("title");
  EXPECT_NE(loader[0].at("stalls_too").find("waiter (thread) waits on a lock or condition (futex)"),
            std::string::npos)
      << loader[0].at("stalls_too");
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

// A pause on the CPU ends where the thread goes to sleep: the sleeper's
// 50 ms getrandom is the pause, the clock_nanosleep right after it (whose
// on-CPU time passed the recording bar, as the kernel's late accounting of
// the user time before it can make it) is a sleep, no part of it. At 6 s
// the same again, with the sleep's off-CPU record missing: the call's own
// on-CPU time says it slept.
TEST(AnalyzeStalls, APauseOnTheCpuEndsAtASleep) {
  TempDir dir;
  std::string db = FixtureDb(dir, "diagnose_fixture.sql");
  ASSERT_EQ(ExecSql(db,
                    "INSERT INTO syscall_oncpu (run_id, ts, dur, oncpu, pid, tid, nr, arg0, arg1, arg2, ret) VALUES "
                    "  (1, 3050000000, 49900000, 49000000, 100, 102, 318, 0, 1048576, 0, 1048576),"
                    "  (1, 3099950000, 200100000, 4000000, 100, 102, 230, 0, 0, 0, 0),"
                    "  (1, 6000000000, 40100000, 40000000, 100, 102, 318, 0, 1048576, 0, 1048576),"
                    "  (1, 6040150000, 200100000, 3000000, 100, 102, 230, 0, 0, 0, 0);"),
            "");
  std::string error;
  std::vector<FindingFields> f = ForThread(AnalyzeStalls(db, dir.File("stalls.json"), &error), "sleeper");
  ASSERT_TRUE(error.empty()) << error;
  std::vector<FindingFields> pause;
  for (const FindingFields& x : f)
    if (x.at("cause") == "kernel-cpu") pause.push_back(x);
  ASSERT_EQ(pause.size(), 1u);
  EXPECT_EQ(pause[0].at("syscalls"), R"(["getrandom"])");
  EXPECT_EQ(pause[0].at("count"), "2");
  EXPECT_EQ(pause[0].at("total_ns"), "90000000");
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
