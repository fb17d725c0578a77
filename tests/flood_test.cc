//===- flood_test.cc - more events than can be recorded --------------------===//
// Several processes doing 1-byte reads and writes, recorded with every
// probe group at the default memory budget. With --detail full they produce
// a row per call, and the test holds the database's write lock for the
// whole flood, as a slow disk or a busy machine would keep the writer from
// committing: the writer's pool fills to its cap and the ring buffers
// overflow whatever the machine's speed, in the flood and in the half
// flood it is compared with. The promises
// (README, "Limits"): the loss is counted and reported, never silent; the
// lean tier (the default) loses nothing, counting every call in the kernel;
// and the collector's peak RSS stays within the budget it prints at the
// start, however long the flood. All are behaviour, not speed: they hold on
// a slow or a loaded machine too.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/test_util.h"

extern char** environ;

namespace syspgo::test {
namespace {

// The budget's fixed part (program, libraries, libbpf) is a measurement on
// this machine kind, not a sum the collector can make: allow a little more.
constexpr long kBudgetMarginKiB = 4 * 1024;
// Two floods, one twice as long: peak RSS independent of the flood's length.
constexpr long kLengthIndependenceKiB = 8 * 1024;

struct Outcome {
  int status = -1;
  long max_rss_kib = 0;  // of the collector (its children are far smaller)
  std::string err;
};

// Four dd's copying `bytes` bytes one byte at a time (two syscalls a byte).
// With `gate`, they start once the file `gate`.go exists, and `gate`.done
// is made when they are over.
std::vector<std::string> FloodCommand(long bytes, const std::string& gate = "") {
  std::string dd = "dd if=/dev/zero of=/dev/null bs=1 count=" + std::to_string(bytes) + " 2>/dev/null & ";
  std::string script = dd + dd + dd + dd + "wait";
  if (!gate.empty())
    script = "while [ ! -e '" + gate + ".go' ]; do sleep 0.05; done; " + script + "; touch '" + gate + ".done'";
  return {"sh", "-c", script};
}

// Keeps the writer of the run in `db` from committing while the gated flood
// runs: the write lock is taken once the command is released, the flood let
// go, and the lock held until the flood is over (at most 45 s, well inside
// the 60 s the collector's busy handler waits).
void HoldWriteLockDuringFlood(const std::string& db, const std::string& gate) {
  ASSERT_TRUE(WaitAttached(db)) << "the run never released its command";
  auto d = Db::Open(db, SQLITE_OPEN_READWRITE);
  ASSERT_TRUE(d.ok()) << d.error().message;
  Status locked = d->Exec("BEGIN IMMEDIATE");
  ASSERT_TRUE(locked.ok()) << locked.error().message;
  std::ofstream(gate + ".go").put('\n');
  for (int i = 0; i < 900 && access((gate + ".done").c_str(), F_OK) != 0; ++i) usleep(50000);
  EXPECT_EQ(access((gate + ".done").c_str(), F_OK), 0) << "the flood did not end within 45 s";
  Status done = d->Exec("COMMIT");
  EXPECT_TRUE(done.ok()) << done.error().message;
}

// Runs argv with stderr to a file and returns its rusage-reported peak RSS.
// With `stall_db`, the writer of the run in that database is held up for
// the whole flood gated on `gate` (HoldWriteLockDuringFlood).
Outcome RunMeasured(const std::vector<std::string>& argv, const std::string& err_file,
                    const std::string& stall_db = "", const std::string& gate = "") {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  Outcome o;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return o;
  if (!stall_db.empty()) {
    HoldWriteLockDuringFlood(stall_db, gate);
    std::ofstream(gate + ".go").put('\n');  // let the flood go, even after a failed step
  }
  int st = 0;
  rusage ru{};
  wait4(pid, &st, 0, &ru);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  o.max_rss_kib = ru.ru_maxrss;
  std::ifstream f(err_file);
  std::stringstream ss;
  ss << f.rdbuf();
  o.err = ss.str();
  return o;
}

// The budget the collector printed at the start, in KiB; 0 if none.
long PrintedBudgetKiB(const std::string& err) {
  std::smatch m;
  if (!std::regex_search(err, m, std::regex(R"(memory budget ([0-9.]+) MiB)"))) return 0;
  return static_cast<long>(std::stod(m[1]) * 1024);
}

// `stall`: the writer cannot commit while the flood runs.
Outcome Collect(const TempDir& dir, const std::string& db, long bytes, const std::string& detail, bool stall) {
  std::vector<std::string> argv = {SyspgoBin(), "collect", "--detail", detail, "-o", db, "--"};
  std::string gate = stall ? db + ".flood" : "";
  for (auto& a : FloodCommand(bytes, gate)) argv.push_back(a);
  return RunMeasured(argv, dir.File("collect.err"), stall ? db : "", gate);
}

constexpr long kBytes = 400000;  // 3.2 M syscalls

// Within the budget printed at the start, and the same peak for half the
// flood (a queue or a table that grows with the events would show as a
// difference).
void ExpectBoundedMemory(const Outcome& traced, const Outcome& small) {
  long budget = PrintedBudgetKiB(traced.err);
  ASSERT_GT(budget, 0) << "no 'memory budget' line: " << traced.err;
  EXPECT_EQ(PrintedBudgetKiB(small.err), budget);
  EXPECT_LE(traced.max_rss_kib, budget + kBudgetMarginKiB)
      << "collector peak RSS " << traced.max_rss_kib << " KiB against a budget of " << budget << " KiB";
  EXPECT_LE(small.max_rss_kib, budget + kBudgetMarginKiB)
      << "collector peak RSS " << small.max_rss_kib << " KiB against a budget of " << budget << " KiB";
  EXPECT_LE(std::abs(traced.max_rss_kib - small.max_rss_kib), kLengthIndependenceKiB)
      << "peak RSS " << small.max_rss_kib << " KiB with half the flood, " << traced.max_rss_kib
      << " KiB with all of it";
}

// Each test records the flood into run.db (`traced`, opened as `d`) and one
// half its size (`small`, for the memory comparison).
class Flood : public ::testing::Test {
 protected:
  void CollectFloods(const std::string& detail, bool stall) {
    small = Collect(dir, dir.File("small.db"), kBytes / 2, detail, stall);
    ASSERT_EQ(small.status, 0) << small.err;
    traced = Collect(dir, dir.File("run.db"), kBytes, detail, stall);
    ASSERT_EQ(traced.status, 0) << traced.err;
    d = OpenDb(dir.File("run.db"));
  }

  TempDir dir;
  Outcome traced, small;
  Db d;
};

TEST_F(Flood, DropsAreCountedReportedAndPeakMemoryStaysWithinTheBudget) {
  ASSERT_NO_FATAL_FAILURE(CollectFloods("full", /*stall=*/true));

  // Counted and reported.
  EXPECT_NE(traced.err.find("LOST"), std::string::npos) << traced.err;
  int64_t dropped = QueryInt(d, "SELECT events_dropped FROM run WHERE id = 1");
  EXPECT_GT(dropped, 0) << "a writer held up for the whole flood, and nothing lost?";
  EXPECT_EQ(QueryInt(d, "SELECT SUM(dropped) FROM run_drop WHERE run_id = 1"), dropped);
  EXPECT_GT(QueryInt(d, "SELECT COALESCE(SUM(dropped), 0) FROM run_drop WHERE run_id = 1 AND probe_group = 'fileio'"),
            0);
  EXPECT_NE(traced.err.find(std::to_string(dropped) + " events were LOST"), std::string::npos) << traced.err;
  // fileio sends one event per syscall, at its exit: at most 8 per byte.
  int64_t kept = QueryInt(d, "SELECT COUNT(*) FROM file_io WHERE run_id = 1 AND nr IN (0, 1) AND req = 1");
  EXPECT_GT(kept, 0);
  EXPECT_LE(kept, 8 * kBytes);
  EXPECT_EQ(QueryRows(d, "SELECT status, exit_reason FROM run"), std::vector<std::string>{"complete\texited"});

  ExpectBoundedMemory(traced, small);
  long budget = PrintedBudgetKiB(traced.err);

  RecordProperty("collector_max_rss_kib", std::to_string(traced.max_rss_kib));
  printf("flood: %lld events kept, %lld lost, collector peak RSS %ld KiB (%ld KiB with half the flood), "
         "budget %ld KiB\n",
         static_cast<long long>(kept), static_cast<long long>(dropped), traced.max_rss_kib, small.max_rss_kib,
         budget);
}

// The default tier counts the flood in the kernel: nothing is lost, every
// call is counted once, and the rows are the few an analysis needs.
TEST_F(Flood, TheLeanTierCountsEveryCallAndLosesNothing) {
  ASSERT_NO_FATAL_FAILURE(CollectFloods("lean", /*stall=*/false));
  EXPECT_EQ(traced.err.find("LOST"), std::string::npos) << traced.err;
  EXPECT_EQ(QueryInt(d, "SELECT events_dropped FROM run WHERE id = 1"), 0);
  EXPECT_EQ(QueryInt(d, "SELECT SUM(overflow) FROM run_aggregate WHERE run_id = 1"), 0);
  // Each dd reads /dev/zero exactly kBytes times and writes /dev/null as
  // often, plus its closing statistics (to /dev/null too: 2>/dev/null).
  EXPECT_EQ(QueryInt(d, "SELECT SUM(t.calls) FROM file_io_total AS t JOIN file AS f USING (run_id, dev, ino) "
                        "WHERE t.run_id = 1 AND t.nr = 0 AND f.path = '/dev/zero'"),
            4 * kBytes);
  int64_t writes = QueryInt(d, "SELECT SUM(t.calls) FROM file_io_total AS t JOIN file AS f USING (run_id, dev, ino) "
                               "WHERE t.run_id = 1 AND t.nr = 1 AND f.path = '/dev/null'");
  EXPECT_GE(writes, 4 * kBytes);
  EXPECT_LE(writes, 4 * kBytes + 4 * 4);
  // The histogram holds the same calls.
  EXPECT_EQ(QueryInt(d, "SELECT SUM(calls) FROM file_io_hist WHERE run_id = 1"),
            QueryInt(d, "SELECT SUM(calls) FROM file_io_total WHERE run_id = 1"));
  // Rows only for what analyses need one by one: the first calls, and the
  // calls a preemption made slower than the off-CPU threshold.
  EXPECT_LT(QueryInt(d, "SELECT COUNT(*) FROM file_io WHERE run_id = 1"), 8 * kBytes / 100);
  ExpectBoundedMemory(traced, small);
  printf("flood, lean: collector peak RSS %ld KiB (%ld KiB with half the flood)\n", traced.max_rss_kib,
         small.max_rss_kib);
}

}  // namespace
}  // namespace syspgo::test
