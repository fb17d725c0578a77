//===- robustness_test.cc - what survives a killed collector or a full disk ===//
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "tests/test_util.h"

extern char** environ;

namespace syspgo::test {
namespace {

TEST(Robustness, SigkillOfTheCollectorLeavesAReadableIncompleteRun) {
  TempDir dir;
  std::string db = dir.File("run.db"), f = dir.File("data"), done = dir.File("done");
  // Writes, then idles long enough for the writes to be committed, then
  // marks that it finished: the command must survive its collector.
  std::string script = "dd if=/dev/zero of=" + f + " bs=4k count=50 2>/dev/null; sleep 2; touch " + done;
  std::string bin = SyspgoBin();
  const char* argv[] = {bin.c_str(), "collect", "-o", db.c_str(), "--", "sh", "-c", script.c_str(), nullptr};
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  ASSERT_TRUE(WaitAttached(db));
  std::this_thread::sleep_for(std::chrono::milliseconds(800));  // dd, then a commit (every 200 ms)
  kill(pid, SIGKILL);
  int st;
  waitpid(pid, &st, 0);
  for (int i = 0; i < 60 && access(done.c_str(), F_OK) != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(access(done.c_str(), F_OK), 0) << "the command died with its collector";

  Db d = OpenDb(db);
  EXPECT_EQ(QueryRows(d, "PRAGMA integrity_check"), std::vector<std::string>{"ok"});
  EXPECT_EQ(QueryRows(d, "SELECT status FROM run"), std::vector<std::string>{"running"});
  DevIno di = StatFile(f);
  EXPECT_EQ(QueryInt(d, "SELECT SUM(ret) FROM file_io WHERE nr = 1 AND ino = " + std::to_string(di.ino)), 50 * 4096);
  // Readers see it as incomplete; the next collection marks it so.
  auto a = RunCmd({SyspgoBin(), "analyze", db, "files"});
  EXPECT_EQ(a.status, 0) << a.err;
  EXPECT_NE(a.err.find("run 1 is incomplete"), std::string::npos) << a.err;
  ASSERT_EQ(RunCmd({SyspgoBin(), "collect", "-o", db, "--", "true"}).status, 0);
  Db d2 = OpenDb(db);
  EXPECT_EQ(QueryRows(d2, "SELECT id, status, exit_reason FROM run ORDER BY id"),
            (std::vector<std::string>{"1\tincomplete\tcollector-died", "2\tcomplete\texited"}));
}

TEST(Robustness, CollectorKilledBeforeTheReleaseDoesNotLeaveTheCommandHanging) {
  TempDir dir;
  std::string db = dir.File("run.db"), ran = dir.File("ran");
  std::string bin = SyspgoBin(), script = "touch " + ran;
  const char* argv[] = {bin.c_str(), "collect", "-o", db.c_str(), "--", "sh", "-c", script.c_str(), nullptr};
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the child is forked, probes still loading
  kill(pid, SIGKILL);
  int st;
  waitpid(pid, &st, 0);
  // The held child sees the collector gone and exits instead of waiting.
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {
    gone = RunCmd({"pgrep", "-f", "^" + bin + " collect -o " + db}).status != 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(gone) << "a held child outlived its collector";
  EXPECT_NE(access(ran.c_str(), F_OK), 0) << "the command ran without being recorded";
}

TEST(Robustness, FullDiskStopsRecordingButNotTheCommand) {
  TempDir dir;
  std::string mnt = dir.File("small");
  ASSERT_EQ(mkdir(mnt.c_str(), 0755), 0);
  ASSERT_EQ(mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=1m"), 0) << strerror(errno);
  std::string db = mnt + "/run.db", out = dir.File("out");
  // Far more events than 1 MiB of database holds (each a row: the full tier).
  auto r = RunCmd({SyspgoBin(), "collect", "--detail", "full", "-o", db, "--", "sh", "-c",
                   "dd if=/dev/zero of=" + out + " bs=64 count=40000 2>/dev/null; exit 3"});
  EXPECT_TRUE(FailedWith(r, 3, "recording stopped"));
  EXPECT_NE(r.err.find("full"), std::string::npos) << r.err;
  struct stat sb {};
  ASSERT_EQ(stat(out.c_str(), &sb), 0);
  EXPECT_EQ(sb.st_size, 64 * 40000) << "the command was harmed";
  {
    Db d = OpenDb(db);
    EXPECT_EQ(QueryRows(d, "PRAGMA integrity_check"), std::vector<std::string>{"ok"});
    EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM run"), 1);
  }
  // It could not be finalized on a full disk: readers call it incomplete.
  auto a = RunCmd({SyspgoBin(), "analyze", db, "files"});
  EXPECT_EQ(a.status, 0) << a.err;
  EXPECT_NE(a.err.find("run 1 is incomplete"), std::string::npos) << a.err;
  umount2(mnt.c_str(), MNT_DETACH);
}

}  // namespace
}  // namespace syspgo::test
