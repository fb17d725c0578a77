//===- scopes_test.cc - collect --new-cgroup, --cgroup, --all ------------===//
// A command in a cgroup of its own; every process of a cgroup made here
// (not the collector's children), including one that joins while
// recording; every process of the host; and under sudo the refusal of the
// scopes that show what is not the user's.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/sudo_fixture.h"
#include "tests/test_util.h"

extern char** environ;

namespace syspgo::test {
namespace {

std::string Slurp(const std::string& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// The memory (v1) cgroup of this process, from /proc/self/cgroup.
std::string OwnMemoryCgroup() {
  std::istringstream is(Slurp("/proc/self/cgroup"));
  for (std::string line; std::getline(is, line);)
    if (auto at = line.find(":memory:"); at != std::string::npos) return line.substr(at + 8);
  return "";
}

// A fresh v1 memory cgroup below this process's, removed at the end.
struct TestCgroup {
  std::string dir;
  explicit TestCgroup(const std::string& name) {
    std::string own = OwnMemoryCgroup();
    dir = "/sys/fs/cgroup/memory" + (own == "/" ? "" : own) + "/" + name + "-" + std::to_string(getpid());
    mkdir(dir.c_str(), 0755);
  }
  void Add(pid_t pid) const { std::ofstream(dir + "/cgroup.procs") << pid << "\n"; }
  ~TestCgroup() { rmdir(dir.c_str()); }
};

pid_t Spawn(const std::vector<std::string>& argv) {
  std::vector<char*> a;
  for (auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  pid_t pid = -1;
  posix_spawnp(&pid, a[0], nullptr, nullptr, a.data(), environ);
  return pid;
}

int WaitExit(pid_t pid) {
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// A shell that waits for `go`, then reads `file` every 50 ms until `stop`.
std::vector<std::string> Reader(const std::string& go, const std::string& stop, const std::string& file) {
  return {"sh", "-c",
          "while [ ! -e " + go + " ]; do sleep 0.02; done; while [ ! -e " + stop + " ]; do cat " + file +
              " >/dev/null; sleep 0.05; done"};
}

// Waits (up to 60 s) until the recording holds reads of each of `files`
// (by the readers' `cat` children, whose pids the test does not know).
bool WaitReads(const std::string& db, const std::vector<std::string>& files) {
  for (int i = 0; i < 1200; ++i) {
    bool all = true;
    {
      Db d = OpenDb(db);
      for (auto& f : files)
        all = all && QueryInt(d, "SELECT COUNT(*) FROM file_io WHERE nr = 0 AND ino = " +
                                     std::to_string(StatFile(f).ino)) > 0;
    }
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::string MakeFile(TempDir& dir, const std::string& name) {
  std::string p = dir.File(name);
  std::ofstream(p) << std::string(8192, 'x');
  return p;
}

TEST(Scopes, NewCgroupRunsTheCommandInAFreshCgroupRemovedAfter) {
  TempDir dir;
  std::string db = dir.File("run.db"), out = dir.File("cgroup");
  auto r = RunCmd({SyspgoBin(), "collect", "-o", db, "--probes", "proc", "--new-cgroup", "--", "sh", "-c",
                   "cat /proc/self/cgroup > " + out});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string text = Slurp(out), mine = OwnMemoryCgroup();
  auto at = text.find(":memory:");
  ASSERT_NE(at, std::string::npos) << text;
  std::string memory = text.substr(at + 8, text.find('\n', at) - at - 8);
  EXPECT_EQ(memory.rfind((mine == "/" ? "" : mine) + "/syspgo-", 0), 0u) << memory;
  struct stat sb {};
  EXPECT_NE(stat(("/sys/fs/cgroup/memory" + memory).c_str(), &sb), 0) << memory << " still exists";
  Db d = OpenDb(db);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM run_probe WHERE probe_group = 'proc' AND detail LIKE '%new cgroup "
                        "/sys/fs/cgroup/memory" + memory + "%'"),
            1);
}

TEST(Scopes, CgroupRecordsItsProcessesAndThoseJoiningButNotOthers) {
  TempDir dir;
  TestCgroup cg("syspgo-scopes-test");
  std::string db = dir.File("run.db"), go = dir.File("go"), stop = dir.File("stop");
  std::string a = MakeFile(dir, "a"), b = MakeFile(dir, "b"), c = MakeFile(dir, "c"), j = MakeFile(dir, "j");
  pid_t pa = Spawn(Reader(go, stop, a)), pb = Spawn(Reader(go, stop, b)), outside = Spawn(Reader(go, stop, c));
  cg.Add(pa);
  cg.Add(pb);
  pid_t collector = Spawn({SyspgoBin(), "collect", "-o", db, "--probes", "proc,fileio", "--detail", "full",
                           "--cgroup", cg.dir, "--duration", "120"});
  bool attached = WaitAttached(db);
  pid_t joiner = Spawn(Reader(go, stop, j));
  cg.Add(joiner);  // after the start: found at a drain tick
  std::ofstream(go) << "go";
  bool read = attached && WaitReads(db, {a, b, j});
  std::ofstream(stop) << "stop";
  for (pid_t p : {pa, pb, outside, joiner}) WaitExit(p);
  kill(collector, SIGINT);
  EXPECT_EQ(WaitExit(collector), 0);
  ASSERT_TRUE(attached);
  ASSERT_TRUE(read);
  Db d = OpenDb(db);
  for (pid_t p : {pa, pb, joiner})
    EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE pid = " + std::to_string(p)), 1) << p;
  for (auto& [f, want] : std::vector<std::pair<std::string, bool>>{{a, true}, {b, true}, {j, true}, {c, false}})
    EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM file_io WHERE nr = 0 AND ino = " +
                              std::to_string(StatFile(f).ino)) > 0,
              want)
        << f;
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE pid = " + std::to_string(outside)), 0);
  EXPECT_EQ(QueryInt(d, "SELECT attached FROM run"), 1);
}

TEST(Scopes, AllRecordsAProcessSyspgoDidNotStart) {
  TempDir dir;
  std::string db = dir.File("run.db"), go = dir.File("go"), stop = dir.File("stop"), f = MakeFile(dir, "f");
  pid_t p = Spawn(Reader(go, stop, f));
  pid_t collector = Spawn({SyspgoBin(), "collect", "-o", db, "--probes", "proc,fileio", "--detail", "full", "--all",
                           "--duration", "120"});
  bool attached = WaitAttached(db);
  std::ofstream(go) << "go";
  bool read = attached && WaitReads(db, {f});
  std::ofstream(stop) << "stop";
  WaitExit(p);
  kill(collector, SIGINT);
  EXPECT_EQ(WaitExit(collector), 0);
  ASSERT_TRUE(read);
  Db d = OpenDb(db);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM process WHERE pid = " + std::to_string(p)), 1);
  EXPECT_GT(QueryInt(d, "SELECT COUNT(*) FROM file_io WHERE nr = 0 AND ino = " + std::to_string(StatFile(f).ino)),
            0);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM run_probe WHERE detail LIKE '%whole host%'"), 1);
}

TEST(Scopes, ScopesNeedOneTargetAndNewCgroupACommand) {
  TempDir dir;
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "collect", "-o", dir.File("r.db"), "--all", "--", "true"}), 2,
                         "not several"));
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "collect", "-o", dir.File("r.db"), "--new-cgroup", "--all"}), 2,
                         "--new-cgroup needs a command"));
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "collect", "-o", dir.File("r.db"), "--cgroup", dir.path()}), 1,
                         "not a cgroup directory"));
}

TEST_F(Sudo, AllAndAForeignCgroupAreRefusedUnderSudo) {
  UserDir mine;
  auto r = RunCmd(ViaSudo({SyspgoBin(), "collect", "-o", mine.File("a.db"), "--all", "--duration", "1"}));
  EXPECT_TRUE(FailedWith(r, 1, "needs real root")) << r.err;
  // The collector's own cgroup holds root's processes (this test's).
  TestCgroup cg("syspgo-scopes-sudo");
  pid_t p = Spawn({"sleep", "30"});
  cg.Add(p);
  r = RunCmd(ViaSudo({SyspgoBin(), "collect", "-o", mine.File("b.db"), "--cgroup", cg.dir, "--duration", "1"}));
  kill(p, SIGKILL);
  WaitExit(p);
  EXPECT_TRUE(FailedWith(r, 1, "needs real root")) << r.err;
}

}  // namespace
}  // namespace syspgo::test
