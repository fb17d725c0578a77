//===- target_test.cc - the watched command crashes, is killed, daemonizes ===//
// Whatever the watched command does, the run ends cleanly with the reason
// recorded and the command's exit status kept, and the command is never
// held back by its collector. A run is finalized when its `status` is
// 'complete' with an end time.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "tests/test_util.h"

extern char** environ;

namespace syspgo::test {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string ReadFirstLine(const std::string& p) {
  std::ifstream f(p);
  std::string s;
  std::getline(f, s);
  return s;
}

bool WaitFile(const std::string& p, double seconds) {
  for (auto t0 = Clock::now(); Since(t0) < seconds; std::this_thread::sleep_for(std::chrono::milliseconds(20)))
    if (!ReadFirstLine(p).empty()) return true;
  return false;
}

const char kRunRow[] = "SELECT status, exit_reason, exit_code, end_ts > command_start_ts FROM run";

TEST(Target, CrashWithSigsegvKeepsStatus139AndFinalizesTheRun) {
  TempDir dir;
  std::string db = dir.File("run.db"), f = dir.File("before-crash");
  // A real invalid memory access (not a kill): Python reads address 0.
  // No core file: the test directory is not the place for one.
  auto r = RunCmd({SyspgoBin(), "collect", "-o", db, "--", "sh", "-c",
                   "ulimit -c 0; dd if=/dev/zero of=" + f +
                       " bs=4k count=2 2>/dev/null; exec /usr/bin/python3 -c 'import ctypes; ctypes.string_at(0)'"});
  EXPECT_EQ(r.status, 128 + SIGSEGV) << r.err;
  Db d = OpenDb(db);
  EXPECT_EQ(QueryRows(d, kRunRow), std::vector<std::string>{"complete\tsignaled\t139\t1"});
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE exit_code = 139"), 1);
  // What it did before crashing is there.
  DevIno di = StatFile(f);
  EXPECT_EQ(QueryInt(d, "SELECT SUM(ret) FROM file_io WHERE nr = 1 AND ino = " + std::to_string(di.ino)), 8192);
}

TEST(Target, CommandKilledFromOutsideEndsTheRunWithItsSignal) {
  TempDir dir;
  std::string db = dir.File("run.db"), pidfile = dir.File("pid");
  std::string bin = SyspgoBin(), script = "echo $$ > " + pidfile + "; exec sleep 30";
  const char* argv[] = {bin.c_str(), "collect", "-o", db.c_str(), "--", "sh", "-c", script.c_str(), nullptr};
  pid_t collector;
  ASSERT_EQ(posix_spawn(&collector, argv[0], nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  ASSERT_TRUE(WaitFile(pidfile, 20)) << "the command never started";
  auto t0 = Clock::now();
  ASSERT_EQ(kill(atoi(ReadFirstLine(pidfile).c_str()), SIGKILL), 0);
  int st;
  waitpid(collector, &st, 0);
  EXPECT_LT(Since(t0), 2.0) << "the collector did not notice its command died";
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 128 + SIGKILL);
  Db d = OpenDb(db);
  EXPECT_EQ(QueryRows(d, kRunRow), std::vector<std::string>{"complete\tsignaled\t137\t1"});
}

// Documented in docs/collection.md (Limits): the run ends when the root of the tree
// exits; a daemon it leaves behind keeps running, unrecorded from then on.
TEST(Target, DaemonizingCommandEndsTheRunWhenItsRootExits) {
  TempDir dir;
  std::string db = dir.File("run.db"), late = dir.File("late");
  // Double fork: the grandchild is re-parented, in a session of its own,
  // and outlives the root by 3 s.
  auto r = RunCmd({SyspgoBin(), "collect", "-o", db, "--", "sh", "-c",
                   "(setsid sh -c 'sleep 3; echo done > " + late + "' </dev/null >/dev/null 2>&1 &); exit 0"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(ReadFirstLine(late).empty()) << "the collection waited for the daemon";
  EXPECT_TRUE(WaitFile(late, 10)) << "the daemon did not survive the end of the collection";
  Db d = OpenDb(db);
  EXPECT_EQ(QueryRows(d, kRunRow), std::vector<std::string>{"complete\texited\t0\t1"});
  EXPECT_LT(QueryInt(d, "SELECT end_ts - command_start_ts FROM run"), 2000000000);
  // The daemon's sleep outlives the run, so no end of it can be recorded.
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE comm = 'sleep' AND exit_ts IS NOT NULL"), 0);
}

TEST(Target, ImmediatelyExitingCommandIsRecordedFromItsFirstSyscall) {
  TempDir dir;
  std::string db = dir.File("run.db"), f = dir.File("one");
  // dd's one write is its first file syscall after exec: it is recorded
  // because the command is held until every probe is attached.
  for (int i = 0; i < 3; ++i) {
    auto r = RunCmd({SyspgoBin(), "collect", "-o", db, "--probes", "fileio", "--", "dd", "if=/dev/zero",
                     "of=" + f, "bs=4k", "count=1"});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  auto r = RunCmd({SyspgoBin(), "collect", "-o", db, "--", "true"});
  ASSERT_EQ(r.status, 0) << r.err;
  Db d = OpenDb(db);
  DevIno di = StatFile(f);
  EXPECT_EQ(QueryRows(d, "SELECT run_id, SUM(ret) FROM file_io WHERE nr = 1 AND ino = " + std::to_string(di.ino) +
                             " GROUP BY run_id ORDER BY run_id"),
            (std::vector<std::string>{"1\t4096", "2\t4096", "3\t4096"}));
  EXPECT_EQ(QueryRows(d, "SELECT COUNT(*), MIN(status), MIN(exit_reason), MAX(exit_code) FROM run"),
            std::vector<std::string>{"4\tcomplete\texited\t0"});
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE run_id = 4 AND exe = '/usr/bin/true' AND exit_code = 0"), 1);
}

TEST(Target, AttachedProcessKilledDuringCollectionEndsCleanly) {
  TempDir dir;
  std::string db = dir.File("run.db");
  pid_t target;
  const char* targv[] = {"sleep", "30", nullptr};
  ASSERT_EQ(posix_spawnp(&target, "sleep", nullptr, nullptr, const_cast<char**>(targv), environ), 0);
  std::string bin = SyspgoBin(), spid = std::to_string(target);
  const char* argv[] = {bin.c_str(), "collect", "-o", db.c_str(), "-p", spid.c_str(), nullptr};
  pid_t collector;
  ASSERT_EQ(posix_spawn(&collector, argv[0], nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  // Attached once the run's command_start_ts is committed.
  bool attached = false;
  for (int i = 0; i < 400 && !attached; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto d = Db::Open(db, SQLITE_OPEN_READONLY);
    auto v = d.ok() ? d->QueryInt("SELECT COUNT(*) FROM run WHERE command_start_ts IS NOT NULL") : Result<int64_t>(0);
    attached = v.ok() && *v > 0;
  }
  auto t0 = Clock::now();
  kill(target, SIGKILL);
  int st;
  waitpid(target, &st, 0);  // reaped here: the collector sees it gone
  waitpid(collector, &st, 0);
  ASSERT_TRUE(attached);
  EXPECT_LT(Since(t0), 2.0) << "the collector did not notice its target died";
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0);
  Db d = OpenDb(db);
  EXPECT_EQ(QueryRows(d, "SELECT status, exit_reason, exit_code IS NULL, end_ts > command_start_ts FROM run"),
            std::vector<std::string>{"complete\ttarget-exited\t1\t1"});
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE pid = " + spid + " AND exit_code = 137"), 1);
}

}  // namespace
}  // namespace syspgo::test
