//===- sudo_fixture.h - a real unprivileged user who runs syspgo via sudo -===//
// The privilege suites attack syspgo through real sudo as the real user
// syspgo-test, whom scripts/test-setup.sh creates (with a supplementary group)
// and allows to run copies of this build's syspgo and syspgo-prefetch as
// root and nothing else. Linking sudo_fixture.cc into a suite installs
// those copies for the suite's lifetime (a gtest global environment).
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace syspgo::test {

inline constexpr char kUser[] = "syspgo-test";

struct TestUser {
  uid_t uid = 0;
  gid_t gid = 0;
  std::string home;
};
const TestUser& User();

std::string PrefetchBin();

// Where the copies under test live (root's directory below the one
// scripts/test-setup.sh makes, named after this process).
std::string InstalledDir();

// argv run as the test user (no sudo of theirs).
std::vector<std::string> AsUser(std::vector<std::string> argv);
// argv run by the test user through their own sudo, as root: what a
// sudoers grant of syspgo gives them (the installed copies).
std::vector<std::string> ViaSudo(std::vector<std::string> argv);
// The same, from directory `cwd`.
CmdResult ViaSudoIn(const std::string& cwd, const std::vector<std::string>& argv);

// Every privilege test: the user exists and may run the copies via sudo.
class Sudo : public ::testing::Test {
 protected:
  void SetUp() override;
};

struct stat Lstat(const std::string& p);
bool Exists(const std::string& p);
void WriteFile(const std::string& p, const std::string& bytes, mode_t mode);

// A directory the test user owns (where their outputs go).
struct UserDir : TempDir {
  UserDir();
};

// A root-owned directory the test user may enter and read but not write,
// holding root's files (0755 here: a 0700 one is made where a test needs it).
struct RootDir : TempDir {
  RootDir();
};

// A small real run as root, for the commands that read one.
std::string RecordRun(const TempDir& dir, const std::string& name = "run.db");

}  // namespace syspgo::test
