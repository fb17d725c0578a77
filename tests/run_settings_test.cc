//===- run_settings_test.cc - a run's settings written and read in one place -===//
// What collect stores (WriteRunSettings) must read back whole
// (ReadRunSettings); a database from someone else (hand-edited, another
// tool's) must read as far as it is sound and never stop an analysis; and
// the settings_json of a database before schema version 5, which the
// migration reads with ParseSettings, likewise.
#include "common/run_settings.h"

#include <gtest/gtest.h>

#include "analyze/run.h"
#include "common/profile_db.h"
#include "tests/test_util.h"

namespace syspgo {
namespace {

RunSettings Everything() {
  RunSettings s;
  s.probes = {"proc", "fileio", "pagecache"};
  s.ringbuf_bytes = 2 << 20;
  s.memory_budget_bytes = 96 << 20;
  s.freq_hz = 999;
  s.offcpu_min_ns = 1000000;
  s.irq_min_ns = 100000;
  s.detail = "lean";
  s.cold = true;
  s.no_readahead = true;
  s.collector_files = {{2049, 1234}, {2049, 99}, {UINT64_MAX, 1}};
  s.kernel_build_id = "ab12";
  s.vdso_build_id = "cd34";
  s.damon = std::vector<DamonScheme>{{"kdamonds/0/contexts/0/schemes/1", "paddr", 6, 5000000, -1},
                                     {"damon_reclaim", "", -1, -1, 120000000}};
  return s;
}

// A new database with runs 1..n, their settings the columns' defaults.
Db WithRuns(const test::TempDir& dir, int n) {
  auto db = OpenProfileDb(dir.File("s.db"), DbMode::kCreateOrAppend);
  EXPECT_TRUE(db.ok()) << db.error().message;
  if (!db.ok()) return Db();
  for (int i = 0; i < n; ++i) {
    Status st = db->Exec(
        "INSERT INTO run (command, argv_json, target_pid, attached, host, kernel_release, syspgo_version, "
        "start_realtime_ns, start_monotonic_ns) VALUES ('true', '[\"true\"]', 1, 0, 'h', 'k', 'v', 0, 0)");
    EXPECT_TRUE(st.ok()) << st.error().message;
  }
  return std::move(db.value());
}

TEST(RunSettings, WhatCollectStoresReadsBackWhole) {
  test::TempDir dir;
  Db db = WithRuns(dir, 2);
  RunSettings s = Everything(), other;
  other.probes = {"cpu"};
  other.collector_files = {{1, 2}};
  ASSERT_TRUE(WriteRunSettings(db, 1, s).ok());
  ASSERT_TRUE(WriteRunSettings(db, 2, other).ok());
  auto r = ReadRunSettings(db, 1);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, s);
  auto r2 = ReadRunSettings(db, 2);
  ASSERT_TRUE(r2.ok()) << r2.error().message;
  SCOPED_TRACE("one run's lists are not another's");
  EXPECT_EQ(*r2, other);
  EXPECT_FALSE(ReadRunSettings(db, 3).ok()) << "no run 3";
}

// Absent (recorded without the pagecache group) is not empty (recorded,
// and no scheme was in force).
TEST(RunSettings, NoDamonSchemesReadIsNotAnEmptyList) {
  test::TempDir dir;
  Db db = WithRuns(dir, 2);
  RunSettings none, empty;
  empty.damon.emplace();
  ASSERT_TRUE(WriteRunSettings(db, 1, none).ok());
  ASSERT_TRUE(WriteRunSettings(db, 2, empty).ok());
  EXPECT_FALSE(ReadRunSettings(db, 1)->damon.has_value()) << "recorded without the pagecache group";
  EXPECT_TRUE(ReadRunSettings(db, 2)->damon.has_value()) << "recorded, and no scheme was in force";
}

// A run inserted without its settings (the test fixtures' runs) reads as
// the defaults; values out of range in a hand-edited database read as the
// setting's default, as ParseSettings reads them in JSON.
TEST(RunSettings, DefaultsAndValuesOutOfRange) {
  test::TempDir dir;
  Db db = WithRuns(dir, 1);
  auto r = ReadRunSettings(db, 1);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, RunSettings{});
  ASSERT_TRUE(db.Exec("UPDATE run SET ringbuf_bytes = -1, memory_budget_bytes = 'lots', cpu_freq_hz = 4294967296, "
                      "offcpu_min_ns = -5, irq_min_ns = -1, cold = 7, detail = 42, damon_read = 1; "
                      "INSERT INTO run_damon_scheme (run_id, position, path, ops, min_age, aggr_us, min_age_us) "
                      "VALUES (1, 0, 'p', 'o', -9, -2, -100)")
                  .ok());
  r = ReadRunSettings(db, 1);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->ringbuf_bytes, 0u);
  EXPECT_EQ(r->memory_budget_bytes, 0u) << "text is not a number";
  EXPECT_EQ(r->freq_hz, 0u) << "beyond 32 bits: out of range";
  EXPECT_EQ(r->offcpu_min_ns, 0);
  EXPECT_EQ(r->irq_min_ns, 0);
  EXPECT_TRUE(r->cold);
  EXPECT_EQ(r->detail, "42");
  ASSERT_TRUE(r->damon.has_value());
  EXPECT_EQ(*r->damon, (std::vector<DamonScheme>{{"p", "o", -1, -1, -1}}));
}

// ---- settings_json, before schema version 5 ---------------------------------

// As the version 4 collector wrote it for Everything().
constexpr char kVersion4Json[] =
    R"({"probes":["proc","fileio","pagecache"],"ringbuf_bytes":2097152,"memory_budget_bytes":100663296,)"
    R"("freq_hz":999,"offcpu_min_ns":1000000,"irq_min_ns":100000,"detail":"lean","cold":true,"no_readahead":true,)"
    R"("collector_files":[[2049,1234],[2049,99],[18446744073709551615,1]],"kernel_build_id":"ab12",)"
    R"("vdso_build_id":"cd34","damon":[{"path":"kdamonds/0/contexts/0/schemes/1","ops":"paddr","min_age":6,)"
    R"("aggr_us":5000000},{"path":"damon_reclaim","min_age_us":120000000}]})";

TEST(RunSettings, Version4JsonReadsWhole) {
  EXPECT_EQ(ParseSettings(kVersion4Json), Everything());
  EXPECT_FALSE(ParseSettings(R"({"probes": []})").damon.has_value()) << "recorded without the pagecache group";
  EXPECT_TRUE(ParseSettings(R"({"damon": []})").damon.has_value()) << "recorded, and no scheme was in force";
}

// Settings of runs recorded before a member existed, or written by hand.
TEST(RunSettings, AbsentMembersKeepTheirDefaults) {
  RunSettings r = ParseSettings(R"({"freq_hz": 1000})");
  EXPECT_EQ(r.freq_hz, 1000u);
  EXPECT_EQ(r.offcpu_min_ns, 0);
  EXPECT_FALSE(r.no_readahead);
  EXPECT_TRUE(r.probes.empty());
}

TEST(RunSettings, HostileOrBrokenTextGivesDefaultsNotACrash) {
  for (const char* text : {"", "not json", "[1, 2]", "{\"freq_hz\": ", "null", "{\"freq_hz\": 1e400}"}) {
    RunSettings r = ParseSettings(text);
    EXPECT_EQ(r.freq_hz, 0u) << text;
    EXPECT_TRUE(r.probes.empty()) << text;
  }
  RunSettings r = ParseSettings(
      R"({"freq_hz": -5, "offcpu_min_ns": "1000", "no_readahead": 1, "probes": ["cpu", 7, null],)"
      R"( "collector_files": [[1, 2], [3], "x", [-1, 4]], "damon": [{"path": 3, "min_age": -9}, 5],)"
      R"( "detail": ["lean"], "ringbuf_bytes": 18446744073709551615})");
  EXPECT_EQ(r.freq_hz, 0u) << "a negative rate is no rate";
  EXPECT_EQ(r.offcpu_min_ns, 0) << "a string is not a number";
  EXPECT_FALSE(r.no_readahead) << "1 is not true";
  EXPECT_EQ(r.probes, std::vector<std::string>{"cpu"});
  EXPECT_EQ(r.collector_files, (std::vector<std::pair<uint64_t, uint64_t>>{{1, 2}}));
  ASSERT_TRUE(r.damon.has_value());
  ASSERT_EQ(r.damon->size(), 1u);
  EXPECT_EQ((*r.damon)[0].path, "");
  EXPECT_EQ((*r.damon)[0].min_age, -1);
  EXPECT_EQ(r.detail, "");
  EXPECT_EQ(r.ringbuf_bytes, 0u) << "beyond int64: out of range";
}

}  // namespace
}  // namespace syspgo
