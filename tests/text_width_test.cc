//===- text_width_test.cc - text output of the analyses within 120 columns ===//
// Every fixture database under every text analysis (pagecache, access, io,
// files, and stalls), with and without --all: each line is at most 120
// columns. The pagecache fixture gains a file with a long path and a dozen
// cgroups that churn, so that tables must shorten paths and the findings
// list must stop at the first ten, saying how many more --all shows.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "common/util.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

constexpr size_t kWidth = 120;
constexpr int kExtraCgroups = 12;

// A long path and kExtraCgroups cgroups, each with a limit and a file its own
// reclaim evicted (32 pages) and that was read again: one finding each.
std::string ManyCauses() {
  std::string dir = "/opt/" + std::string(60, 'd') + "/lib/python3/dist-packages/a-rather-long-package-name/";
  std::string sql;
  for (int i = 0; i < kExtraCgroups; ++i) {
    std::string id = std::to_string(600 + i), ino = std::to_string(40 + i);
    sql += "INSERT INTO memory_cgroup (run_id, id, path, limit_bytes) VALUES (1, " + id + ", '/pods/" +
           std::string(40, 'p') + "/c" + std::to_string(i) + "', 4194304);\n";
    sql += "INSERT INTO file (run_id, dev, ino, path) VALUES (1, 2049, " + ino + ", '" + dir + "module_" +
           std::to_string(i) + ".cpython-311-x86_64-linux-gnu.so');\n";
    sql += "INSERT INTO page_cache (run_id, ts, op, pid, tid, comm, dev, ino, idx, pages, task_cgroup, page_cgroup, "
           "why, stack_id) VALUES (1, 1100000000, 1, 200, 200, 'service', 2049, " + ino + ", 0, 32, " + id + ", " +
           id + ", 1, 0), (1, 1200000000, 2, 200, 200, 'service', 2049, " + ino + ", 0, 32, " + id + ", " + id +
           ", 1, 1), (1, 1300000000, 1, 200, 200, 'service', 2049, " + ino + ", 0, 32, " + id + ", " + id +
           ", 1, 0);\n";
  }
  return sql;
}

// The lines of `text` longer than kWidth, each with its number.
std::string LongLines(const std::string& text) {
  std::string out;
  size_t n = 0;
  for (const std::string& line : Split(text, '\n')) {
    ++n;
    if (line.size() > kWidth) out += std::to_string(n) + " (" + std::to_string(line.size()) + "): " + line + "\n";
  }
  return out;
}

TEST(TextWidth, EveryAnalysisOfEveryFixtureFits120Columns) {
  TempDir dir;
  std::vector<std::string> dbs;
  for (const char* fixture : {"pagecache_fixture.sql", "files_fixture.sql", "diagnose_fixture.sql",
                              "report_fixture.sql"})
    dbs.push_back(FixtureDb(dir, fixture, std::string(fixture) + ".db"));
  ASSERT_EQ(ExecSql(dbs[0], ManyCauses()), "");
  int ran = 0;
  for (const std::string& db : dbs)
    for (const char* what : {"pagecache", "access", "io", "files", "stalls"})
      for (bool all : {false, true}) {
        std::vector<std::string> argv = {SyspgoBin(), "analyze", db, what};
        if (all) argv.push_back("--all");
        CmdResult r = RunCmd(argv);
        if (r.status != 0) continue;  // a fixture without that probe group's data
        ++ran;
        EXPECT_EQ(LongLines(r.out), "") << db << " " << what << (all ? " --all" : "");
      }
  EXPECT_GE(ran, 16) << "too few analyses ran on the fixtures";
}

TEST(TextWidth, TextShowsTheFirstTenFindingsAndAllShowsEvery) {
  TempDir dir;
  std::string db = FixtureDb(dir, "pagecache_fixture.sql");
  ASSERT_EQ(ExecSql(db, ManyCauses()), "");
  auto count = [](const std::string& text) {
    int n = 0;
    for (const std::string& line : Split(text, '\n')) n += std::regex_search(line, std::regex(R"(^[0-9]+\. cgroup )"));
    return n;
  };
  CmdResult top = RunCmd({SyspgoBin(), "analyze", db, "pagecache"});
  ASSERT_EQ(top.status, 0) << top.err;
  EXPECT_EQ(count(top.out), 10) << top.out;
  EXPECT_NE(top.out.find("and 3 more findings (--all shows every one)"), std::string::npos) << top.out;
  CmdResult all = RunCmd({SyspgoBin(), "analyze", db, "pagecache", "--all"});
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_EQ(count(all.out), kExtraCgroups + 1) << all.out;
  EXPECT_EQ(all.out.find("more findings"), std::string::npos) << all.out;
  CmdResult json = RunCmd({SyspgoBin(), "analyze", db, "pagecache", "--json"});
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["findings"].size(), static_cast<size_t>(kExtraCgroups + 1));
}

}  // namespace
}  // namespace syspgo::test
