//===- privilege_files_test.cc - held pages, the database's close, checks as the user ===//
// The second round of the sudo attack suite (privilege_test.cc has the
// first), for what root does with the files and memory of the user who ran
// sudo: pages held locked for them (prefetch --hold), the profile
// database's close (which deletes -wal and -shm by path), and the checks
// and directory walks made on paths they name (pgo). Each test runs the
// attack through real sudo as the real unprivileged user syspgo-test and
// asserts that it is refused or harmless.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <thread>

#include "common/util.h"
#include "optimize/plan.h"
#include "tests/sudo_fixture.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

// A plan over `file` (whole), written by root to `path`, readable by all.
void WriteWholeFilePlan(const std::string& file, uint64_t size, const std::string& path) {
  PlanBuilder b;
  DevIno di = StatFile(file);
  b.Add({file, di.dev, di.ino, 0, size, 0});
  ASSERT_TRUE(WritePlan(b.Build().plan, path).ok());
  chmod(path.c_str(), 0644);
}

// argv through the user's sudo (ViaSudo), from a shell of theirs whose
// locked-memory limit (ulimit -l) is `kib`.
std::vector<std::string> ViaSudoWithMemlock(const std::vector<std::string>& argv, unsigned kib) {
  std::vector<std::string> sudo = ViaSudo(argv);
  std::vector<std::string> theirs(sudo.begin() + AsUser({}).size(), sudo.end());
  return AsUser({"sh", "-c", "ulimit -l " + std::to_string(kib) + " && exec " + JoinShell(theirs)});
}

// The value of line `key` ("VmLck:", "Uid:") of /proc/PID/status, as words.
std::vector<std::string> StatusLine(pid_t pid, const std::string& key) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::vector<std::string> words;
  for (std::string line; std::getline(f, line);) {
    if (line.rfind(key, 0) != 0) continue;
    std::istringstream in(line.substr(key.size()));
    for (std::string w; in >> w;) words.push_back(w);
  }
  return words;
}

// Whether process `pid` has ended (gone, or a zombie its new parent has not
// reaped yet); waits for it up to 30 s.
bool Ended(pid_t pid) {
  for (int i = 0; i < 300; ++i) {
    auto state = StatusLine(pid, "State:");
    if (state.empty() || state[0] == "Z") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// ---- Row 5: prefetch --hold within the user's locked-memory limit, ended by them ----

TEST_F(Sudo, HeldPagesStayWithinTheUsersMemlockLimitAndTheUserCanEndTheHolder) {
  DamonPaused damon;
  UserDir mine;
  constexpr unsigned kLimitKib = 4096;
  const uint64_t big = 32 << 20, small = 1 << 20;
  std::string big_file = mine.File("big.bin"), small_file = mine.File("small.bin");
  WriteFile(big_file, std::string(big, 'b'), 0644);
  WriteFile(small_file, std::string(small, 's'), 0644);
  chown(big_file.c_str(), User().uid, User().gid);
  chown(small_file.c_str(), User().uid, User().gid);
  std::string big_plan = mine.File("big.plan"), small_plan = mine.File("small.plan");
  ASSERT_NO_FATAL_FAILURE(WriteWholeFilePlan(big_file, big, big_plan));
  ASSERT_NO_FATAL_FAILURE(WriteWholeFilePlan(small_file, small, small_plan));
  for (const std::string& bin : {SyspgoBin(), PrefetchBin()}) {
    std::vector<std::string> argv = {bin};
    if (bin == SyspgoBin()) argv.push_back("prefetch");
    // Past the limit: refused, naming it; nothing is left holding pages.
    std::vector<std::string> over = argv;
    over.insert(over.end(), {big_plan, "--hold", "120"});
    auto r = RunCmd(ViaSudoWithMemlock(over, kLimitKib));
    EXPECT_EQ(r.status, 1) << bin << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("RLIMIT_MEMLOCK"), std::string::npos) << bin << ": " << r.err;
    EXPECT_NE(r.err.find("4.0 MiB"), std::string::npos) << bin << ": the limit is not named: " << r.err;
    EXPECT_EQ(r.out.find("holding"), std::string::npos) << bin << ": " << r.out;

    // Within it: held by a process of the user's, locking no more than the
    // limit, which the user may kill.
    std::vector<std::string> within = argv;
    within.insert(within.end(), {small_plan, "--hold", "120"});
    r = RunCmd(ViaSudoWithMemlock(within, kLimitKib));
    ASSERT_EQ(r.status, 0) << bin << ": " << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex("process ([0-9]+)"))) << r.out;
    pid_t holder = std::stoi(m[1]);
    auto uids = StatusLine(holder, "Uid:");
    ASSERT_EQ(uids.size(), 4u) << "no holder " << holder;
    for (const auto& u : uids) EXPECT_EQ(u, std::to_string(User().uid)) << bin << ": the holder is not the user's";
    auto locked = StatusLine(holder, "VmLck:");
    ASSERT_EQ(locked.size(), 2u);
    EXPECT_GE(std::stoul(locked[0]), small >> 10) << bin;
    EXPECT_LE(std::stoul(locked[0]), kLimitKib) << bin << ": locked past the user's limit";
    auto k = RunCmd(AsUser({"kill", std::to_string(holder)}));
    EXPECT_EQ(k.status, 0) << bin << ": the user cannot end the holder: " << k.err;
    if (k.status != 0) kill(holder, SIGKILL);
    EXPECT_TRUE(Ended(holder)) << bin << ": holder " << holder << " still runs";
  }
}

// ---- Row 7: the database closed as the user -------------------------------------

// The user swaps the directory of the database for a link to a sticky
// directory (as /tmp is) while the run records, with a hard link to their
// database beside root's files of the same names and -wal, -shm: the close
// (checkpoint, then unlink of -wal and -shm by path) must not delete root's.
// The command of the run makes the swap: it runs as the user before the
// database is closed.
TEST_F(Sudo, TheDatabaseIsClosedAsTheUserSoASwappedDirectoryCostsRootNothing) {
  UserDir mine;
  TempDir sticky;  // /tmp's kind: root's, world-writable, sticky; same file system as `mine`
  ASSERT_EQ(chmod(sticky.path().c_str(), 01777), 0);
  std::string out = mine.File("out"), moved = mine.File("out.real"), db = out + "/x.db";
  ASSERT_EQ(mkdir(out.c_str(), 0755), 0);
  ASSERT_EQ(chown(out.c_str(), User().uid, User().gid), 0);
  const std::string roots = "root's\n";
  for (const char* suffix : {"-wal", "-shm"}) WriteFile(sticky.File(std::string("x.db") + suffix), roots, 0644);
  std::string swap = "mv " + ShellQuote(out) + " " + ShellQuote(moved) + " && ln -s " + ShellQuote(sticky.path()) +
                     " " + ShellQuote(out) + " && ln " + ShellQuote(moved + "/x.db") + " " +
                     ShellQuote(sticky.File("x.db"));
  auto r = RunCmd(ViaSudo({SyspgoBin(), "collect", "--probes", "proc", "-o", db, "--", "sh", "-c", swap}));
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(Exists(sticky.File("x.db"))) << "the swap did not happen: " << r.err;
  for (const char* suffix : {"-wal", "-shm"}) {
    std::string victim = sticky.File(std::string("x.db") + suffix);
    ASSERT_TRUE(Exists(victim)) << "root's " << victim << " was deleted";
    EXPECT_EQ(Lstat(victim).st_uid, 0u) << victim;
    EXPECT_EQ(ReadAll(victim), roots) << victim;
  }
  // The user's database holds the run, whole.
  Db d = OpenDb(moved + "/x.db");
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM run WHERE status = 'complete'"), 1);
}

// ---- Row 9: checks with the user's rights -----------------------------------------

// `text` with every occurrence of `from` made `to`.
std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
  return text;
}

// A path in a directory only root may enter answers as a missing one does:
// the errors tell the user nothing about what root's directory holds.
TEST_F(Sudo, APathInARootOnlyDirectoryAnswersAsAMissingOne) {
  UserDir mine;
  TempDir secret;  // 0700, root's
  std::string there = secret.File("cc"), missing = secret.File("nothing");
  WriteFile(there, "#!/bin/sh\nexit 0\n", 0755);
  WriteFile(secret.File("x.db"), "", 0644);
  struct Case {
    std::string what;
    std::function<std::vector<std::string>(const std::string&)> argv;
    std::string existing;
  };
  const std::vector<Case> cases = {
      {"pgo --cc",
       [&](const std::string& p) {
         return std::vector<std::string>{SyspgoBin(), "pgo", "--build", "true", "--binary", mine.File("app"),
                                         "--train", "true", "--dir", mine.File("pgo"), "--cc", p};
       },
       there},
      {"pgo --bolt",
       [&](const std::string& p) {
         return std::vector<std::string>{SyspgoBin(), "pgo", "--build", "true", "--binary", mine.File("app"),
                                         "--train", "true", "--dir", mine.File("pgo"), "--bolt", p};
       },
       there},
      {"collect -o",
       [&](const std::string& p) { return std::vector<std::string>{SyspgoBin(), "collect", "-o", p, "--", "true"}; },
       secret.File("x.db")},
  };
  for (const Case& c : cases) {
    auto found = RunCmd(ViaSudo(c.argv(c.existing)));
    auto absent = RunCmd(ViaSudo(c.argv(missing)));
    EXPECT_NE(found.status, 0) << c.what << ": " << found.err;
    EXPECT_EQ(found.status, absent.status) << c.what;
    EXPECT_EQ(Replaced(found.err, c.existing, "PATH"), Replaced(absent.err, missing, "PATH"))
        << c.what << ": a file in root's 0700 directory answers unlike a missing one";
  }
}

// ---- Row 10: filesystem errors are messages, not aborts --------------------------

TEST_F(Sudo, PgoDirWithALinkToARootDirectoryFailsWithAMessageNamingIt) {
  UserDir mine;
  TempDir secret;  // 0700, root's
  std::string target = secret.File("sub"), dir = mine.File("pgo"), link = dir + "/base";
  ASSERT_EQ(mkdir(target.c_str(), 0755), 0);
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  ASSERT_EQ(chown(dir.c_str(), User().uid, User().gid), 0);
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  auto r = RunCmd(ViaSudo({SyspgoBin(), "pgo", "--build", "true", "--binary", mine.File("app"), "--train", "true",
                           "--dir", dir}));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("cannot create the directory " + link), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(target)) ++entries, (void)e;
  EXPECT_EQ(entries, 0) << "pgo wrote into root's directory";
}

}  // namespace
}  // namespace syspgo::test
