//===- concurrency_test.cc - two collections at once -----------------------===//
// Two `syspgo collect` on one machine share the kernel (every probe fires
// for both) but not their process trees: each database must hold only its
// own command's work. Two collections into one database share the file:
// WAL and the busy timeout must let both land their runs whole, also when
// both create the file at the same moment.
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

pid_t Spawn(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  EXPECT_EQ(posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), environ), 0);
  return pid;
}

int WaitExit(pid_t pid) {
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// Number of runs in `dbs` whose command has been released (probes live).
int Attached(const std::vector<std::string>& dbs) {
  int n = 0;
  for (const auto& p : dbs) {
    if (access(p.c_str(), F_OK) != 0) continue;
    auto d = Db::Open(p, SQLITE_OPEN_READONLY);
    if (!d.ok()) continue;
    auto v = d->QueryInt("SELECT COUNT(*) FROM run WHERE command_start_ts IS NOT NULL");
    if (v.ok()) n += static_cast<int>(*v);
  }
  return n;
}

bool WaitAttached(const std::vector<std::string>& dbs, int want) {
  for (int i = 0; i < 400; ++i) {
    if (Attached(dbs) >= want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// A command that waits for `go`, then writes `count` 4 KiB blocks to `out`
// one write at a time, interleaving with the other collection's command.
std::vector<std::string> Writer(const std::string& db, const std::string& go, const std::string& out, int count) {
  return {SyspgoBin(), "collect", "-o", db, "--probes", "fileio", "--", "sh", "-c",
          "while [ ! -e " + go + " ]; do sleep 0.02; done; i=0; while [ $i -lt " + std::to_string(count) +
              " ]; do dd if=/dev/zero of=" + out + " bs=4k count=1 seek=$i conv=notrunc 2>/dev/null; i=$((i+1)); done"};
}

int64_t BytesWritten(Db& d, int64_t run, const std::string& file) {
  DevIno di = StatFile(file);
  return QueryInt(d, "SELECT COALESCE(SUM(ret), 0) FROM file_io WHERE nr = 1 AND run_id = " + std::to_string(run) +
                         " AND dev = " + std::to_string(di.dev) + " AND ino = " + std::to_string(di.ino));
}

TEST(Concurrency, TwoCollectionsSeeOnlyTheirOwnTrees) {
  TempDir dir;
  std::string db_a = dir.File("a.db"), db_b = dir.File("b.db"), go = dir.File("go");
  std::string fa = dir.File("file_a"), fb = dir.File("file_b");
  pid_t a = Spawn(Writer(db_a, go, fa, 40)), b = Spawn(Writer(db_b, go, fb, 60));
  bool attached = WaitAttached({db_a, db_b}, 2);
  std::ofstream(go) << "go";
  EXPECT_EQ(WaitExit(a), 0);
  EXPECT_EQ(WaitExit(b), 0);
  ASSERT_TRUE(attached) << "the two collections never ran at the same time";
  Db da = OpenDb(db_a), dbb = OpenDb(db_b);
  EXPECT_EQ(BytesWritten(da, 1, fa), 40 * 4096);
  EXPECT_EQ(BytesWritten(dbb, 1, fb), 60 * 4096);
  EXPECT_EQ(BytesWritten(da, 1, fb), 0) << "collection A recorded B's writes";
  EXPECT_EQ(BytesWritten(dbb, 1, fa), 0) << "collection B recorded A's writes";
  EXPECT_EQ(QueryInt(da, "SELECT COUNT(*) FROM process WHERE argv LIKE '%file_b%'"), 0);
  EXPECT_EQ(QueryInt(dbb, "SELECT COUNT(*) FROM process WHERE argv LIKE '%file_a%'"), 0);
  EXPECT_EQ(QueryInt(da, "SELECT COUNT(*) FROM process WHERE comm = 'dd'"), 40);
  EXPECT_EQ(QueryInt(dbb, "SELECT COUNT(*) FROM process WHERE comm = 'dd'"), 60);
}

TEST(Concurrency, TwoWritersToOneDatabaseBothLandTheirRuns) {
  TempDir dir;
  // Neither exists yet: both collectors create it at the same moment.
  std::string db = dir.File("shared.db"), go = dir.File("go");
  std::string fa = dir.File("file_a"), fb = dir.File("file_b");
  pid_t a = Spawn(Writer(db, go, fa, 150)), b = Spawn(Writer(db, go, fb, 150));
  bool attached = WaitAttached({db}, 2);
  std::ofstream(go) << "go";
  int sa = WaitExit(a), sb = WaitExit(b);
  ASSERT_TRUE(attached) << "the two collections never ran at the same time";
  EXPECT_EQ(sa, 0);
  EXPECT_EQ(sb, 0);
  Db d = OpenDb(db);
  EXPECT_EQ(QueryRows(d, "PRAGMA integrity_check"), std::vector<std::string>{"ok"});
  EXPECT_EQ(QueryRows(d, "SELECT id, status, exit_reason, exit_code FROM run ORDER BY id"),
            (std::vector<std::string>{"1\tcomplete\texited\t0", "2\tcomplete\texited\t0"}));
  // Each run has its own file, whole, and none of the other's.
  int64_t run_a = QueryInt(d, "SELECT run_id FROM file WHERE path = '" + fa + "'");
  int64_t run_b = QueryInt(d, "SELECT run_id FROM file WHERE path = '" + fb + "'");
  ASSERT_NE(run_a, run_b);
  EXPECT_EQ(BytesWritten(d, run_a, fa), 150 * 4096);
  EXPECT_EQ(BytesWritten(d, run_b, fb), 150 * 4096);
  EXPECT_EQ(BytesWritten(d, run_a, fb), 0);
  EXPECT_EQ(BytesWritten(d, run_b, fa), 0);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM run_probe"), 4);  // proc + fileio, per run
}

}  // namespace
}  // namespace syspgo::test
