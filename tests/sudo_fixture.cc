//===- sudo_fixture.cc - a real unprivileged user who runs syspgo via sudo -===//
#include "tests/sudo_fixture.h"

#include "common/util.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace syspgo::test {

const TestUser& User() {
  static const TestUser u = [] {
    TestUser t;
    if (passwd* pw = getpwnam(kUser)) t = {pw->pw_uid, pw->pw_gid, pw->pw_dir};
    return t;
  }();
  return u;
}

std::string PrefetchBin() { return SyspgoBin() + "-prefetch"; }

std::string InstalledDir() { return "/usr/local/libexec/syspgo-test/" + std::to_string(getpid()); }

namespace {

// The binaries under test, copied where sudoers lets the test user run them
// as root (scripts/test-setup.sh: root's directory, so the user can neither change
// them nor add their own), laid out as the build lays them out: the `syspgo`
// front and the replayer, and in libexec/ the full tool the front execs with
// the LLVM module it loads from beside itself. The clone itself may lie
// where the user cannot enter.
class InstalledBinaries : public ::testing::Environment {
 public:
  void SetUp() override {
    std::string dir = InstalledDir(), cli = SyspgoBin().substr(0, SyspgoBin().rfind('/'));
    auto r = Sh("install -d -m 0755 " + ShellQuote(dir + "/libexec") + " && install -m 0755 " +
                ShellQuote(SyspgoBin()) + " " + ShellQuote(PrefetchBin()) + " " + ShellQuote(dir) +
                " && install -m 0755 " + ShellQuote(cli + "/libexec/syspgo") + " " +
                ShellQuote(cli + "/libexec/libsyspgo_llvm.so") + " " + ShellQuote(dir + "/libexec"));
    ASSERT_EQ(r.status, 0) << "cannot install the binaries under test into " << dir
                           << " (run scripts/test-setup.sh, which makes its parent): " << r.err;
  }
  void TearDown() override { Sh("rm -rf " + ShellQuote(InstalledDir())); }
};
const auto* const kInstalled = ::testing::AddGlobalTestEnvironment(new InstalledBinaries);

}  // namespace

std::vector<std::string> AsUser(std::vector<std::string> argv) {
  std::vector<std::string> out = {"sudo", "-u", kUser, "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::vector<std::string> ViaSudo(std::vector<std::string> argv) {
  if (argv[0] == SyspgoBin()) argv[0] = InstalledDir() + "/syspgo";
  if (argv[0] == PrefetchBin()) argv[0] = InstalledDir() + "/syspgo-prefetch";
  std::vector<std::string> out = AsUser({"sudo", "-n", "--"});
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

CmdResult ViaSudoIn(const std::string& cwd, const std::vector<std::string>& argv) {
  return Sh("cd " + ShellQuote(cwd) + " && exec " + JoinShell(ViaSudo(argv)));
}

void Sudo::SetUp() {
  ASSERT_NE(User().uid, 0u) << "no user " << kUser << ": run scripts/test-setup.sh, which creates it";
  auto r = RunCmd(ViaSudo({SyspgoBin(), "--version"}));
  ASSERT_EQ(r.status, 0) << kUser << " may not run " << InstalledDir()
                         << "/syspgo through sudo: run scripts/test-setup.sh, which allows it\n"
                         << r.err;
}

struct stat Lstat(const std::string& p) {
  struct stat sb {};
  EXPECT_EQ(lstat(p.c_str(), &sb), 0) << p;
  return sb;
}

bool Exists(const std::string& p) {
  struct stat sb {};
  return lstat(p.c_str(), &sb) == 0;
}

void WriteFile(const std::string& p, const std::string& bytes, mode_t mode) {
  int fd = open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  ASSERT_GE(fd, 0) << p;
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  ASSERT_EQ(fchmod(fd, mode), 0);
  close(fd);
}

UserDir::UserDir() {
  EXPECT_EQ(chown(path().c_str(), User().uid, User().gid), 0);
  chmod(path().c_str(), 0755);
}

RootDir::RootDir() { chmod(path().c_str(), 0755); }

std::string RecordRun(const TempDir& dir, const std::string& name) {
  std::string db = dir.File(name);
  auto r = RunCmd({SyspgoBin(), "collect", "--probes", "fileio,sched,cpu", "-o", db, "--", "sh", "-c",
                   "cat /etc/hostname /etc/os-release >/dev/null"});
  EXPECT_EQ(r.status, 0) << r.err;
  chmod(db.c_str(), 0644);
  return db;
}

}  // namespace syspgo::test
