//===- writer_test.cc - the collector's row writer keeps its memory bounded -===//
// The writer (collect/writer.h) is what a long recording's memory rests
// on: its row pool may grow when SQLite falls behind, and must shrink back
// once the load is light again; its stack dedup table must not grow with
// every new process's stacks. Both are checked on a real database, with a
// second connection holding SQLite's write lock to make the queue deep.
#include "collect/writer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "common/profile_db.h"
#include "tests/test_util.h"

namespace syspgo {
namespace {

constexpr int64_t kRun = 1;

int64_t StackRows(const std::string& path) {
  auto db = Db::Open(path, SQLITE_OPEN_READONLY);
  EXPECT_TRUE(db.ok());
  auto n = db->QueryInt("SELECT COUNT(*) FROM stack WHERE run_id = 1");
  EXPECT_TRUE(n.ok());
  return n.ok() ? *n : -1;
}

// A distinct 8-frame stack for each i.
int64_t Stack(Writer& w, uint64_t i) {
  std::vector<uint64_t> ips(8);
  for (size_t f = 0; f < ips.size(); ++f) ips[f] = 0x400000 + i * 64 + f;
  return w.StackId(ips.data(), ips.size());
}

TEST(Writer, GivesADeepQueuesPoolBackOnceTheLoadIsLight) {
  test::TempDir dir;
  std::string path = dir.path() + "/w.db";
  auto db = OpenProfileDb(path, DbMode::kCreateOrAppend);
  ASSERT_TRUE(db.ok()) << db.error().message;
  Writer::Limits limits;
  limits.queue_bytes = 8 << 20;
  limits.idle_ns = 100'000'000;
  Writer w(std::move(*db), kRun, limits);
  ASSERT_TRUE(w.Start().ok());

  // While another connection holds the write lock, rows can only queue.
  auto blocker = Db::Open(path, SQLITE_OPEN_READWRITE);
  ASSERT_TRUE(blocker.ok()) << blocker.error().message;
  ASSERT_TRUE(blocker->Exec("BEGIN IMMEDIATE").ok());
  constexpr uint64_t kDeep = 40000;  // about 4 MiB of stack rows, half the pool
  for (uint64_t i = 0; i < kDeep; ++i) Stack(w, i);
  w.MaybeFlush();
  uint64_t deep = w.pool_bytes();
  EXPECT_GE(deep, uint64_t{3} << 20);
  ASSERT_TRUE(blocker->Exec("COMMIT").ok());
  ASSERT_TRUE(w.Drain().ok());

  // A light load for many idle periods: the chunks it never needed go.
  for (uint64_t i = 0; i < 40; ++i) {
    Stack(w, kDeep + i);
    w.MaybeFlush();
    usleep(25'000);
  }
  ASSERT_TRUE(w.Drain().ok());
  EXPECT_LE(w.pool_bytes(), uint64_t{1} << 20) << "the pool held " << deep << " bytes when the queue was deep";
  ASSERT_TRUE(w.Stop().ok());
  EXPECT_EQ(StackRows(path), static_cast<int64_t>(kDeep + 40)) << "every row queued while the pool shrank landed";
}

TEST(Writer, StackDedupForgetsOnlyWhatAWholeGenerationDidNotSee) {
  test::TempDir dir;
  std::string path = dir.path() + "/w.db";
  auto db = OpenProfileDb(path, DbMode::kCreateOrAppend);
  ASSERT_TRUE(db.ok()) << db.error().message;
  Writer w(std::move(*db), kRun, Writer::Limits{});
  ASSERT_TRUE(w.Start().ok());
  constexpr uint64_t kGen = Writer::kStacksPerGeneration;

  // Two generations of distinct stacks; then stack 0, from the older one,
  // is still known, and moves into a new generation with its id.
  int64_t kept = Stack(w, 0), dropped = Stack(w, 1);
  for (uint64_t i = 2; i < 2 * kGen; ++i) Stack(w, i);
  EXPECT_EQ(Stack(w, 0), kept) << "a stack seen within the last two generations keeps its id";
  // That move began a generation: the first one, with stack 1, is gone.
  int64_t again = Stack(w, 1);
  EXPECT_NE(again, dropped) << "a stack unseen for a whole generation is stored anew";
  EXPECT_EQ(Stack(w, 1), again);
  ASSERT_TRUE(w.Stop().ok());
  EXPECT_EQ(StackRows(path), static_cast<int64_t>(2 * kGen + 1));
}

}  // namespace
}  // namespace syspgo
