//===- diagnose_test.cc - the stalls analysis on real runs of the scenarios -===//
// The checkpoint-stall story end to end: `syspgo collect` records
// examples/checkpoint_stall (C++, then the Python version with Debian's
// numpy) on this kernel, and `syspgo analyze DB stalls --json` must name
// the main thread, the write and fsync of the checkpoint file, about
// 50 MiB, the latency and a period of 5 steps. Then a program whose
// threads wait on a timer, a pipe and a lock while another thread keeps
// the disk busy: those waits must be named for what they are and never
// blamed on the I/O. Checkpoints go to a TempDir on /var/tmp: on tmpfs
// fsync waits for nothing.
#include <gtest/gtest.h>

#include <iostream>
#include <tuple>

#include "tests/findings_json.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

constexpr int64_t kMiB = 1 << 20;
constexpr int kSteps = 15, kPeriod = 5, kMb = 50, kStepMs = 200;

// Records `command` into DIR/run.db and returns the stall findings.
// Off-CPU intervals from 100 us, not the default 1 ms: fsync waits for the
// file's pages one after the other and wakes as each block request ends,
// so on a disk that ends them steadily every sleep can be under 1 ms and a
// 30 ms fsync leaves no interval at the default. That is the likely reason
// a CI machine missed the first of three checkpoints (the two that also
// waited for a discard were found). The analysis sums an operation's
// sleeps either way.
std::vector<FindingFields> CollectStalls(const TempDir& dir, const std::vector<std::string>& command) {
  std::string db = dir.File("run.db");
  std::vector<std::string> argv = {SyspgoBin(), "collect", "-o", db, "--offcpu-min-us", "100", "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  CmdResult c = RunCmd(argv);
  EXPECT_EQ(c.status, 0) << c.err << c.out;
  // A stall the analysis misses because its events were lost is the
  // recording's fault, not the analysis's: say which.
  Db conn = OpenDb(db);
  EXPECT_EQ(QueryInt(conn, "SELECT COALESCE(SUM(dropped), 0) FROM run_drop WHERE probe_group IN ('sched', 'fileio')"),
            0);
  std::string error;
  std::vector<FindingFields> all = AnalyzeStalls(db, dir.File("stalls.json"), &error);
  EXPECT_TRUE(error.empty()) << error;
  // In the test log: the command's own account of each step (a checkpoint
  // prints its write and fsync times), then the findings as people read
  // them with their evidence, so a failure here shows what the run was.
  std::cout << c.out;
  CmdResult text = RunCmd({SyspgoBin(), "analyze", db, "stalls", "-v"});
  std::cout << text.out << text.err;
  return all;
}

std::vector<std::string> CheckpointArgs(const TempDir& dir) {
  return {"--steps", std::to_string(kSteps), "--period", std::to_string(kPeriod), "--mb", std::to_string(kMb),
          "--step-ms", std::to_string(kStepMs), dir.path()};
}

// What both versions of checkpoint_stall must be diagnosed with.
void ExpectCheckpointFinding(const std::vector<FindingFields>& all, const TempDir& dir) {
  std::vector<FindingFields> found;
  for (const FindingFields& f : ForThread(all, "checkpoint_stal"))
    if (f.at("file").find("checkpoint-step") != std::string::npos) found.push_back(f);
  ASSERT_EQ(found.size(), 1u) << "not exactly one stall finding names the checkpoint files";
  const FindingFields& f = found[0];
  // The main thread, a synchronous write of the checkpoint file.
  EXPECT_EQ(f.at("main_thread"), "true");
  EXPECT_EQ(f.at("cause"), "io");
  EXPECT_EQ(f.at("file"), dir.path() + "/checkpoint-step<N>.bin");
  EXPECT_NE(f.at("syscalls").find("\"write\""), std::string::npos) << f.at("syscalls");
  EXPECT_NE(f.at("syscalls").find("\"fsync\""), std::string::npos) << f.at("syscalls");
  EXPECT_NE(f.at("title").find("write"), std::string::npos) << f.at("title");
  // One finding for all checkpoints (steps 5, 10, 15), each 50 MiB.
  EXPECT_EQ(f.at("count"), std::to_string(kSteps / kPeriod));
  EXPECT_EQ(std::stoll(f.at("bytes_written")), kMb * kMiB);
  EXPECT_EQ(std::stoll(f.at("synced_bytes")), kMb * kMiB);
  // The disk wrote them while the thread waited (by it or by writeback).
  EXPECT_GE(std::stoll(f.at("block_bytes")), 9 * kSteps / kPeriod * kMb * kMiB / 10) << f.at("block_bytes_by_op");
  // Its latency: each checkpoint costs at least its off-CPU wait (>= 10 ms,
  // the threshold) and well under a step.
  int64_t count = std::stoll(f.at("count")), worst = std::stoll(f.at("worst_ns"));
  EXPECT_GE(std::stoll(f.at("blocked_ns")) / count, 10'000'000);
  EXPECT_GE(worst, 10'000'000);
  EXPECT_LE(worst, 2'000'000'000);
  EXPECT_GE(std::stoll(f.at("total_ns")), std::stoll(f.at("blocked_ns")));
  EXPECT_GT(std::stod(f.at("share")), 0.0);
  // Every 5th step, found from the progress line each step prints.
  EXPECT_EQ(f.at("period_steps"), std::to_string(kPeriod)) << f.at("period");
  EXPECT_NE(f.at("period").find("every 5th step"), std::string::npos) << f.at("period");
  int64_t step = std::stoll(f.at("step_ns"));
  EXPECT_GE(step, kStepMs * 1'000'000 * 9 / 10);
  EXPECT_LE(step, kStepMs * 1'000'000 * 2);
  EXPECT_NE(f.at("fix").find("background writer"), std::string::npos) << f.at("fix");
}

TEST(Diagnose, CheckpointStallCpp) {
  TempDir dir;
  std::vector<std::string> cmd = {ExampleBin("checkpoint_stall")};
  for (const std::string& a : CheckpointArgs(dir)) cmd.push_back(a);
  ExpectCheckpointFinding(CollectStalls(dir, cmd), dir);
}

TEST(Diagnose, CheckpointStallPython) {
  TempDir dir;
  // Started through its shebang (/usr/bin/python3), as the README runs it.
  std::vector<std::string> cmd = {std::string(SYSPGO_SOURCE_DIR) + "/examples/checkpoint_stall/checkpoint_stall.py"};
  for (const std::string& a : CheckpointArgs(dir)) cmd.push_back(a);
  ExpectCheckpointFinding(CollectStalls(dir, cmd), dir);
}

TEST(Diagnose, WaitsThatAreNotIoAreNamedAsSuch) {
  TempDir dir;
  std::vector<FindingFields> all = CollectStalls(dir, {std::string(SYSPGO_WORKLOADS_BIN) + "/wait_kinds", dir.path()});
  // The pipe reader and the locker wait on the main thread, which writes
  // the pipe and releases the lock after a sleep: their waits come down to
  // that sleep (critical_path.h) and are listed in its finding.
  std::string merged;
  for (const FindingFields& x : all)
    if (x.at("cause") == "sleep") merged += x.at("stalls_too");
  std::vector<std::tuple<std::string, std::string, std::string>> waits = {
      {"sleeper", "sleep", ""}, {"pipe-reader", "pipe", "pipe-reader (thread) waits on a pipe"},
      {"locker", "lock", "locker (thread) waits on a lock"}};
  for (auto& [comm, cause, as_merged] : waits) {
    std::vector<FindingFields> f = ForThread(all, comm);
    if (!as_merged.empty() && merged.find(as_merged) != std::string::npos) continue;
    ASSERT_FALSE(f.empty()) << comm << " was not found stalled";
    for (const FindingFields& x : f) {
      if (x.at("cause") == "cpu") continue;  // it may also have been preempted on this busy machine
      EXPECT_EQ(x.at("cause"), cause) << comm << ": " << x.at("title");
      EXPECT_EQ(x.at("block_requests"), "0") << comm << " was blamed for block I/O: " << x.at("title");
      EXPECT_NE(x.at("fix").find("This is not I/O"), std::string::npos) << x.at("fix");
      EXPECT_GE(std::stoll(x.at("worst_ns")), 250'000'000) << comm;
    }
  }
  std::vector<FindingFields> reader = ForThread(all, "pipe-reader");
  if (!reader.empty()) {
    EXPECT_NE(reader[0].at("waker").find("wait_kinds"), std::string::npos) << "the main thread wrote to the pipe";
  }
  // The I/O did happen, on the thread that did it.
  bool syncer_io = false;
  for (const FindingFields& x : ForThread(all, "syncer"))
    syncer_io = syncer_io || (x.at("cause") == "io" && x.at("file") == dir.File("wait_kinds.dat"));
  EXPECT_TRUE(syncer_io) << "the syncer's fsync of wait_kinds.dat was not found";
}

}  // namespace
}  // namespace syspgo::test
