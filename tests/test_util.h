//===- test_util.h - helpers for suites that run the real syspgo ---------===//
// Tests run the built `syspgo` binary as a user would, on real workloads,
// and check what lands in the profile database.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/sqlite.h"

namespace syspgo::test {

struct CmdResult {
  int status = -1;      // exit status as a shell reports it (128+N for signal N)
  std::string out;      // stdout
  std::string err;      // stderr
};

// Runs argv (no shell) and captures its output and exit status. (Not
// "Run": inside a TEST body that name is testing::Test::Run.)
CmdResult RunCmd(const std::vector<std::string>& argv);
// Runs `sh -c script`.
CmdResult Sh(const std::string& script);
// Whether r exited with `status` and its stderr holds `message`: the check
// of a command that must fail and say why, as
//   EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), ...}), 2, "--threshold needs milliseconds"));
// A failure shows the status, stdout and stderr the command gave.
testing::AssertionResult FailedWith(const CmdResult& r, int status, std::string_view message);
// Path of the syspgo binary under test, and of a built example program.
std::string SyspgoBin();
std::string ExampleBin(const std::string& name);

// A fresh directory under /var/tmp (a real disk, not tmpfs), removed at
// destruction. Block I/O tests need a real device.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Stops the machine's running kdamonds while it lives and starts them again
// (same sysfs settings) when it goes. A DAMON pageout scheme on physical
// memory (where the machine runs one) pages out freshly read page cache
// within seconds, whatever its access bits say: a test that checks which
// pages a replay made resident would otherwise lose a few at random. Tests
// run one at a time.
// While they are stopped, a mark file in mark_dir names them and this
// process: a test killed meanwhile (a timeout's SIGKILL, a crash) cannot
// start them again, so the next test binary does (RestartDamonsOfDeadTests).
inline constexpr char kDamonAdmin[] = "/sys/kernel/mm/damon/admin/kdamonds/";
inline constexpr char kDamonMarkDir[] = "/run";
class DamonPaused {
 public:
  explicit DamonPaused(const std::string& admin = kDamonAdmin, const std::string& mark_dir = kDamonMarkDir);
  ~DamonPaused();
  DamonPaused(const DamonPaused&) = delete;
  DamonPaused& operator=(const DamonPaused&) = delete;

 private:
  std::vector<std::string> stopped_;  // state files of the kdamonds stopped here
  std::string mark_;                  // the mark file, "" if none was written
};

// Starts the kdamonds that marks in mark_dir name for processes that are
// gone, removes those marks and returns how many kdamonds it started. Every
// test binary calls it once as it starts.
int RestartDamonsOfDeadTests(const std::string& mark_dir = kDamonMarkDir);

// The whole contents of a file ("" if it cannot be read).
std::string ReadAll(const std::string& path);
// The contents of tests/data/`name`; a file missing or empty fails the test.
std::string TestData(const std::string& name);

// The JSON document in `file`, read by nlohmann's strict parser; a file
// that is missing or not JSON fails the test and gives null.
nlohmann::json ReadJson(const std::string& file);
// The same, with each object's members in the file's order (nlohmann::json
// sorts them), for checks of that order: pgo's stages, a compact dump.
nlohmann::ordered_json ReadOrderedJson(const std::string& file);

// A new, empty profile database `name` in `dir`, made by the real code (a
// failure fails the test); its path.
std::string NewProfileDb(const TempDir& dir, const std::string& name = "new.db");
// A profile database `name` in `dir` (its schema applied by the real code)
// holding the rows of tests/data/`fixture`; its path. A fixture that does
// not load fails the test.
std::string FixtureDb(const TempDir& dir, const std::string& fixture, const std::string& name = "fixture.db");
// Opens a profile database read-only (asserts on failure).
Db OpenDb(const std::string& path);
// Runs SQL on a database opened for writing (adds what a test needs to a
// recorded or fixture database); the error message, "" on success.
std::string ExecSql(const std::string& path, const std::string& sql);
// Runs a query returning one integer (NULL -> 0).
int64_t QueryInt(Db& db, const std::string& sql);
// Runs a query and returns every row as tab-separated text.
std::vector<std::string> QueryRows(Db& db, const std::string& sql);

// Kernel code symbols from /proc/kallsyms-format text, sorted by address.
class Kallsyms {
 public:
  explicit Kallsyms(const std::string& text);
  size_t size() const { return syms_.size(); }
  // The symbol an address falls in ("" before the first).
  std::string Name(uint64_t addr) const;

 private:
  std::vector<std::pair<uint64_t, std::string>> syms_;
};
// A binary's defined symbols, from `nm -S --defined-only`: name -> address,
// size and nm's type letter ('t' or 'T' for code).
struct NmSymbol {
  uint64_t start = 0, size = 0;
  char type = 0;
};
std::map<std::string, NmSymbol> NmSymbols(const std::string& bin);

// The kallsyms text the newest run of the database keeps ("" if none).
std::string RunKallsymsText(Db& db);

// Waits (up to 30 s) until a collector writing `db` has released its
// command (it commits run.command_start_ts once every probe is attached), so
// tests do not depend on how long loading takes.
bool WaitAttached(const std::string& db);

// stat() of a path: st_dev and st_ino, as the database stores them.
struct DevIno {
  uint64_t dev = 0, ino = 0;
};
DevIno StatFile(const std::string& path);

// A process a test started and must never leave behind: on every path out
// of the test, the failing ones included, it is killed (SIGKILL) and reaped
// when the object goes. Its output goes to /dev/null, its stderr to
// `stderr_file` when one is given.
class OwnedChild {
 public:
  explicit OwnedChild(const std::vector<std::string>& argv, const std::string& stderr_file = "");
  OwnedChild(const OwnedChild&) = delete;
  OwnedChild& operator=(const OwnedChild&) = delete;
  ~OwnedChild() { Kill(); }
  pid_t pid() const { return pid_; }
  // Waits up to `limit` for it to exit. Its status as a shell reports it
  // (128+N for signal N), or -1 if it still runs (it is left running).
  int WaitExit(std::chrono::seconds limit);
  // Sends `sig`, waits up to `grace`, and kills and reaps it past that.
  // Its status as WaitExit gives it, or -1 if it had to be killed.
  int Stop(int sig, std::chrono::seconds grace);
  // SIGKILL and reap, unless it is reaped already.
  void Kill();

 private:
  pid_t pid_ = -1;
  int status_ = -1;  // once reaped
};

}  // namespace syspgo::test
