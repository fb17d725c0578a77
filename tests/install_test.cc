//===- install_test.cc - the .deb, unpacked into a fresh root and run -----===//
// The package is what users get: cpack -G DEB packs this build (the ctest
// fixture Install.Package), dpkg -x unpacks it into an empty directory, and the installed binaries run from
// there, far from the build tree, so every part they need must be found
// relative to themselves (common/install_layout.h) and be in the package.
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "common/util.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

namespace fs = std::filesystem;

// The package (made by the ctest fixture Install.Package, tests/install.cmake),
// unpacked once for the suite.
class Install : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    deb_ = SYSPGO_PACKAGE_DIR "/syspgo_" SYSPGO_VERSION "_" + Trim(Sh("dpkg --print-architecture").out) + ".deb";
    ASSERT_TRUE(fs::exists(deb_)) << deb_ << " is missing: run through ctest, whose Install.Package makes it";
    auto x = RunCmd({"dpkg", "-x", deb_, dir_->File("root")});
    ASSERT_EQ(x.status, 0) << x.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(dir_ && fs::exists(deb_)) << "the package was not unpacked (see the first failure)"; }

  static std::string Root(const std::string& path) { return dir_->File("root") + path; }
  static std::string Syspgo() { return Root("/usr/bin/syspgo"); }
  static std::string Field(const std::string& name) { return Sh("dpkg-deb -f " + ShellQuote(deb_) + " " + name).out; }

  static TempDir* dir_;
  static std::string deb_;
};
TempDir* Install::dir_ = nullptr;
std::string Install::deb_;

// `cmd` run by sh in `cwd`.
CmdResult ShIn(const std::string& cwd, const std::string& cmd) { return Sh("cd " + ShellQuote(cwd) + " && " + cmd); }

TEST_F(Install, PackageHoldsTheLayoutAndDeclaresItsDependencies) {
  for (const char* path : {"/usr/bin/syspgo", "/usr/bin/syspgo-prefetch", "/usr/libexec/syspgo/syspgo",
                           "/usr/libexec/syspgo/libsyspgo_llvm.so", "/usr/lib/libsyspgo-readahead.so",
                           "/usr/share/man/man1/syspgo.1", "/usr/share/man/man1/syspgo-collect.1",
                           "/usr/share/man/man1/syspgo-prefetch.1", "/usr/share/bash-completion/completions/syspgo",
                           "/usr/lib/cmake/SysPGO/SysPGOConfig.cmake", "/usr/lib/cmake/SysPGO/SysPGOConfigVersion.cmake",
                           "/usr/lib/cmake/SysPGO/SysPGO.cmake", "/usr/share/doc/syspgo/README.md",
                           "/usr/share/doc/syspgo/install.md"})
    EXPECT_TRUE(fs::exists(Root(path))) << path << " is not in " << deb_;
  // From dpkg-shlibdeps on the binaries and the LLVM module, and by hand for
  // the tools pgo runs.
  std::string depends = Field("Depends"), recommends = Field("Recommends");
  for (const char* dep : {"libbpf1", "libelf1", "libsqlite3-0", "libprotobuf32", "libllvm19", "libc6"})
    EXPECT_NE(depends.find(dep), std::string::npos) << dep << " not in Depends: " << depends;
  for (const char* rec : {"clang-19", "lld-19", "bolt-19"})
    EXPECT_NE(recommends.find(rec), std::string::npos) << rec << " not in Recommends: " << recommends;
}

// The installed binaries name no directory of the build: everything they
// load is found relative to themselves. (Debug info may name the sources;
// the strings a program uses at run time sit in .rodata.)
TEST_F(Install, BinariesHoldNoBuildTreePath) {
  for (const char* path : {"/usr/bin/syspgo", "/usr/bin/syspgo-prefetch", "/usr/libexec/syspgo/syspgo"}) {
    auto r = Sh("readelf -p .rodata " + ShellQuote(Root(path)));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.find(SYSPGO_BUILD_DIR), std::string::npos) << path << " holds the build directory's path";
  }
}

TEST_F(Install, InstalledToolCollectsAnalyzesOptimizesAndReplays) {
  std::string src = dir_->File("demo");
  fs::create_directories(src);
  for (auto& e : fs::directory_iterator(SYSPGO_PGO_DEMO_DIR)) fs::copy_file(e.path(), src + "/" + e.path().filename().string());
  ASSERT_EQ(ShIn(src, "make CC=clang-19 'CFLAGS=-O2 -g -fno-omit-frame-pointer' >/dev/null").status, 0);

  auto collect = RunCmd({Syspgo(), "collect", "-o", src + "/run.db", "--", src + "/demo", "train", "10000"});
  ASSERT_EQ(collect.status, 0) << collect.err;
  auto hot = RunCmd({Syspgo(), "analyze", src + "/run.db", "hot", "--binary", src + "/demo"});
  ASSERT_EQ(hot.status, 0) << hot.err;
  EXPECT_NE(hot.out.find("hash_bytes"), std::string::npos) << "the demo's hot function is not listed:\n" << hot.out;

  // The sample profile is written by the LLVM module from libexec/syspgo/,
  // and read back by LLVM's own tool.
  auto prof = RunCmd({Syspgo(), "optimize", src + "/run.db", "--binary", src + "/demo", "--emit", "sample-profile",
                      "-o", src + "/demo.prof"});
  ASSERT_EQ(prof.status, 0) << prof.err;
  auto show = RunCmd({"llvm-profdata-19", "show", "--sample", src + "/demo.prof"});
  EXPECT_EQ(show.status, 0) << show.err;

  // The readahead library is preloaded from lib/ of the installed tree.
  auto ra = RunCmd({Syspgo(), "optimize", src + "/run.db", "--emit", "readahead", "-o", src + "/demo.ra"});
  ASSERT_EQ(ra.status, 0) << ra.err;
  auto replay = RunCmd({Syspgo(), "prefetch", "--readahead", src + "/demo.ra", "-v", "--", src + "/demo", "eval", "10"});
  EXPECT_EQ(replay.status, 0) << replay.err;
  EXPECT_NE(replay.err.find("applied by " + Root("/usr/lib/libsyspgo-readahead.so")), std::string::npos) << replay.err;
  auto version = RunCmd({Root("/usr/bin/syspgo-prefetch"), "--version"});
  EXPECT_EQ(version.out, "syspgo-prefetch " SYSPGO_VERSION "\n") << version.err;
}

TEST_F(Install, InstalledPgoRebuildsTheDemo) {
  std::string src = dir_->File("pgo-src");
  fs::create_directories(src);
  for (auto& e : fs::directory_iterator(SYSPGO_PGO_DEMO_DIR)) fs::copy_file(e.path(), src + "/" + e.path().filename().string());
  auto r = ShIn(src, JoinShell({Syspgo(), "pgo", "--build", "make clean >/dev/null; make", "--binary", "./demo",
                                "--train", "./demo train 3000", "--eval", "./demo eval 300", "--runs", "1", "--dir",
                                dir_->File("pgo")}));
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  for (const char* file : {"/profile/sample.prof", "/profile/order.txt", "/profile/bolt.fdata", "/summary.json"})
    EXPECT_TRUE(fs::exists(dir_->File("pgo") + file)) << file;
}

TEST_F(Install, ManPagesAndCompletionComeFromTheCommands) {
  auto man = Sh("MANWIDTH=100 man -l " + ShellQuote(Root("/usr/share/man/man1/syspgo-collect.1")) + " | col -b");
  ASSERT_EQ(man.status, 0) << man.err;
  EXPECT_NE(man.out.find("syspgo-collect - record a command"), std::string::npos) << man.out;
  EXPECT_NE(man.out.find("--no-readahead"), std::string::npos) << man.out;
  auto top = Sh("MANWIDTH=100 man -l " + ShellQuote(Root("/usr/share/man/man1/syspgo.1")) + " | col -b");
  EXPECT_NE(top.out.find("syspgo-pgo(1)"), std::string::npos) << "SEE ALSO lists the commands' pages:\n" << top.out;

  // Completion: an option of prefetch's table, and the values of one that
  // takes one of a list.
  std::string script = ShellQuote(Root("/usr/share/bash-completion/completions/syspgo"));
  auto opts = RunCmd({"bash", "-c", "source " + script +
                                        "; COMP_WORDS=(syspgo prefetch --io); COMP_CWORD=2; _syspgo; "
                                        "echo \"${COMPREPLY[*]}\""});
  EXPECT_EQ(opts.out, "--io-priority\n") << opts.err;
  auto values = RunCmd({"bash", "-c", "source " + script +
                                          "; COMP_WORDS=(syspgo-prefetch --io-priority ''); COMP_CWORD=2; "
                                          "_syspgo_prefetch; echo \"${COMPREPLY[*]}\""});
  EXPECT_EQ(values.out, "idle inherit\n") << values.err;
}

TEST_F(Install, FindPackageGivesTheCMakeModule) {
  std::string src = dir_->File("app"), build = dir_->File("app-build");
  fs::copy(SYSPGO_TEST_DATA "/pgo_cmake", src, fs::copy_options::recursive);
  fs::copy_file(SYSPGO_TEST_DATA "/install_find_package/CMakeLists.txt", src + "/CMakeLists.txt",
                fs::copy_options::overwrite_existing);
  auto c = RunCmd({"cmake", "-S", src, "-B", build, "-DCMAKE_C_COMPILER=clang-19", "-DCMAKE_PREFIX_PATH=" + Root("/usr"),
                   "-DSYSPGO_PROFILE_DIR=" + src});
  ASSERT_EQ(c.status, 0) << c.out << c.err;
  EXPECT_NE(c.out.find("found syspgo " SYSPGO_VERSION ": " + Root("/usr/bin/syspgo")), std::string::npos) << c.out;
  auto b = RunCmd({"cmake", "--build", build});
  ASSERT_EQ(b.status, 0) << b.out << b.err;
  std::string cc = ReadAll(build + "/compile_commands.json");
  EXPECT_NE(cc.find("-fprofile-sample-use=" + src + "/profile/sample.prof"), std::string::npos) << cc;

  // Without a profile directory the package is not found, and says why.
  auto none = RunCmd({"cmake", "-S", src, "-B", dir_->File("none-build"), "-DCMAKE_C_COMPILER=clang-19",
                      "-DCMAKE_PREFIX_PATH=" + Root("/usr")});
  EXPECT_NE(none.status, 0);
  EXPECT_NE(none.err.find("SYSPGO_PROFILE_DIR"), std::string::npos) << none.err;
}

}  // namespace
}  // namespace syspgo::test
