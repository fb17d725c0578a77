//===- run_settings_test.cc - run.settings_json written and read in one place -===//
// What collect stores must read back whole, and a database from someone
// else (hand-edited, another tool's, truncated) must read as far as it is
// sound and never stop an analysis.
#include "common/run_settings.h"

#include <gtest/gtest.h>

namespace syspgo {
namespace {

TEST(RunSettings, WhatCollectStoresReadsBackWhole) {
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
  s.collector_files = {{2049, 1234}, {2049, 99}};
  s.kernel_build_id = "ab12";
  s.vdso_build_id = "cd34";
  s.damon = std::vector<DamonScheme>{{"kdamonds/0/contexts/0/schemes/1", "paddr", 6, 5000000, -1},
                                     {"damon_reclaim", "", -1, -1, 120000000}};
  RunSettings r = ParseSettings(SettingsJson(s));
  EXPECT_EQ(r.probes, s.probes);
  EXPECT_EQ(r.ringbuf_bytes, s.ringbuf_bytes);
  EXPECT_EQ(r.memory_budget_bytes, s.memory_budget_bytes);
  EXPECT_EQ(r.freq_hz, 999u);
  EXPECT_EQ(r.offcpu_min_ns, 1000000);
  EXPECT_EQ(r.irq_min_ns, 100000);
  EXPECT_EQ(r.detail, "lean");
  EXPECT_TRUE(r.cold);
  EXPECT_TRUE(r.no_readahead);
  EXPECT_EQ(r.collector_files, s.collector_files);
  EXPECT_EQ(r.kernel_build_id, "ab12");
  EXPECT_EQ(r.vdso_build_id, "cd34");
  ASSERT_TRUE(r.damon.has_value());
  EXPECT_EQ(*r.damon, *s.damon);
}

TEST(RunSettings, NoDamonMemberIsNotAnEmptyList) {
  RunSettings s;
  EXPECT_FALSE(ParseSettings(SettingsJson(s)).damon.has_value()) << "recorded without the pagecache group";
  s.damon.emplace();
  EXPECT_TRUE(ParseSettings(SettingsJson(s)).damon.has_value()) << "recorded, and no scheme was in force";
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
