//===- pagecache_scenario_test.cc - page-cache churn, on a fixture and for real ===//
// The pagecache pass through the real CLI on a fixture database (its rows
// and what each is for are in tests/data/pagecache_fixture.sql), and the
// page-cache thrash story end to end: `syspgo collect` records
// examples/pagecache_thrash/run_in_memcg.sh running the program over a
// 32 MiB library inside a child memory cgroup limited to 8 MiB; `syspgo
// analyze DB pagecache --json` must name the library, the cgroup, memcg
// reclaim and a limit that fixes it. The same run with that limit must then
// show no churn of the library.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "analyze/pagecache.h"
#include "common/profile_db.h"
#include "tests/findings_json.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

constexpr int64_t kMiB = 1 << 20;
constexpr int kLimitMb = 8, kLibMb = 32, kPasses = 2;

// The fixture in a profile database, with the files and page-cache rows
// of `more` (SQL) added to its run.
std::string LoadFixture(const TempDir& dir, const std::string& more = "") {
  std::string path = FixtureDb(dir, "pagecache_fixture.sql");
  EXPECT_EQ(ExecSql(path, more), "");
  return path;
}

// `syspgo analyze DB pagecache --json` kept in `json_path`, and its findings.
std::vector<FindingFields> Findings(const std::string& db, const std::string& json_path, std::string* raw) {
  CmdResult r = RunCmd({SyspgoBin(), "analyze", db, "pagecache", "--json"});
  EXPECT_EQ(r.status, 0) << r.err;
  *raw = r.out;
  std::ofstream(json_path) << r.out;
  std::string error;
  std::vector<FindingFields> all = ReadStallFindings(json_path, &error);
  EXPECT_TRUE(error.empty()) << error;
  return all;
}

TEST(AnalyzePagecache, TextMatchesExpected) {
  TempDir dir;
  CmdResult r = RunCmd({SyspgoBin(), "analyze", LoadFixture(dir), "pagecache"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, TestData("pagecache_expected.txt"));
}

// The same facts field by field, so a wrong expected file cannot hide them.
TEST(AnalyzePagecache, FixtureChurnIsMemcgReclaimNotDropCaches) {
  TempDir dir;
  std::string raw;
  std::vector<FindingFields> all = Findings(LoadFixture(dir), dir.File("pc.json"), &raw);
  ASSERT_EQ(all.size(), 1u) << raw;  // libc's 4 kswapd refaults and log.txt's truncation are no churn
  const FindingFields& f = all[0];  // the cgroup's own reclaim, with its one file
  EXPECT_EQ(f.at("files"), R"(["/opt/svc/lib/libbig.so"])");
  EXPECT_EQ(f.at("cgroup"), "/svc/syspgo-thrash-1");
  EXPECT_EQ(f.at("limit_bytes"), "1048576");
  EXPECT_EQ(f.at("reclaim"), "memcg reclaim");
  EXPECT_EQ(f.at("reclaim_path"), "memcg reclaim");
  EXPECT_EQ(f.at("churn_pages"), "32");  // only the reclaim's
  EXPECT_EQ(f.at("refault_bytes"), std::to_string(32 * 4096));
  EXPECT_EQ(f.at("working_set_pages"), "65");  // the 64 added and the fault on page 70
  EXPECT_EQ(f.at("total_ns"), "3000000");      // the read after the reclaim
  EXPECT_EQ(f.at("suggested_limit_bytes"), std::to_string(2 * kMiB));
  EXPECT_NE(f.at("fix").find("memory.limit_in_bytes"), std::string::npos) << f.at("fix");
  EXPECT_NE(f.at("fix").find("memory.low"), std::string::npos) << f.at("fix");
  EXPECT_NE(f.at("fix").find("vmtouch -l /opt/svc/lib/libbig.so"), std::string::npos) << f.at("fix");
  EXPECT_NE(f.at("fix").find("prefetch"), std::string::npos) << f.at("fix");
  EXPECT_NE(raw.find("\"kind\": \"pagecache-churn\""), std::string::npos);
  FindingFields big = PagecacheFileRow(dir.File("pc.json"), "file", "/opt/svc/lib/libbig.so");
  EXPECT_EQ(big["added_pages"], "96");
  EXPECT_EQ(big["deleted_pages"], "96");
  EXPECT_EQ(big["refaulted_pages"], "96");  // 64 after drop_caches, 32 after reclaim
  EXPECT_EQ(big["reclaimed_pages"], "32");
  EXPECT_EQ(big["refaults_by"], R"({"drop_caches":64,"memcg reclaim":32})");
  EXPECT_EQ(big["deleted_by"], R"({"drop_caches":64,"memcg reclaim":32})");
  EXPECT_EQ(big["block_read_bytes"], std::to_string(384 * 1024));

  FindingFields log = PagecacheFileRow(dir.File("pc.json"), "file", "/data/log.txt");
  EXPECT_EQ(log["refaults_by"], R"({"truncation":8})");
  EXPECT_EQ(log["churns"], "false");
  FindingFields libc = PagecacheFileRow(dir.File("pc.json"), "file", "/usr/lib/libc.so.6");
  EXPECT_EQ(libc["deleted_by"], R"({"kswapd":4})");
  EXPECT_EQ(libc["churn_pages"], "4");
  EXPECT_EQ(libc["churns"], "false");
}

// DAMON's proactive reclaim (a pageout scheme in kdamond, where one runs)
// evicts a file the service reads every 200 ms as idle. It is reclaim, so it
// is churn, but no memory limit was hit: the fix is the scheme's minimum age
// or a memcg filter, and no limit is suggested even in a limited cgroup.
// The advice depends on the scheme the run recorded (run_damon_scheme;
// `schemes` are its rows, (position, path, ops, min_age, aggr_us,
// min_age_us), or "" if none was found).
std::vector<FindingFields> DamonFindings(const TempDir& dir, const std::string& schemes, std::string* raw) {
  std::string db = LoadFixture(dir, R"sql(
INSERT INTO file (run_id, dev, ino, path) VALUES (1, 2049, 24, '/srv/model.bin');
INSERT INTO page_cache (run_id, ts, op, pid, tid, comm, dev, ino, idx, pages, task_cgroup, page_cgroup, why, stack_id) VALUES
  (1, 1900000000, 1, 200, 200, 'service', 2049, 24, 0, 32, 500, 500, 5, 0),
  (1, 2000000000, 2, 78, 78, 'kdamond.0', 2049, 24, 0, 32, 1, 500, 6, 5),
  (1, 2100000000, 1, 200, 200, 'service', 2049, 24, 0, 32, 500, 500, 5, 0);
)sql");
  if (!schemes.empty()) {
    EXPECT_EQ(ExecSql(db, "UPDATE run SET damon_read = 1; INSERT INTO run_damon_scheme (run_id, position, path, ops, "
                          "min_age, aggr_us, min_age_us) SELECT 1, * FROM (VALUES " + schemes + ")"),
              "");
  }
  return Findings(db, dir.File("pc.json"), raw);
}

// The finding whose cause evicted `path`.
const FindingFields* FileFinding(const std::vector<FindingFields>& all, const std::string& path) {
  for (const FindingFields& f : all)
    if (f.at("files").find("\"" + path + "\"") != std::string::npos) return &f;
  return nullptr;
}

TEST(AnalyzePagecache, DamonPageoutIsNamedAndNoLimitIsSuggested) {
  TempDir dir;
  std::string raw;
  std::vector<FindingFields> all = DamonFindings(dir, "", &raw);
  const FindingFields* model = FileFinding(all, "/srv/model.bin");
  ASSERT_NE(model, nullptr) << raw;
  EXPECT_EQ(model->at("reclaim"), "DAMON reclaim");
  EXPECT_EQ(model->at("churn_pages"), "32");
  EXPECT_EQ(model->at("suggested_limit_bytes"), "0");
  FindingFields row = PagecacheFileRow(dir.File("pc.json"), "file", "/srv/model.bin");
  EXPECT_EQ(row["deleted_by"], R"({"DAMON reclaim":32})");
  // Each page was loaded at 1.9 s and, evicted in between, again at 2.1 s.
  EXPECT_EQ(row["damon_reuse_ns"], "200000000");
  const std::string& fix = model->at("fix");
  EXPECT_NE(fix.find("a median of 200.00 ms after loading them before"), std::string::npos) << fix;
  EXPECT_NE(fix.find("schemes/<S>/access_pattern/age/min"), std::string::npos) << fix;
  EXPECT_NE(fix.find("memcg_path /svc/syspgo-thrash-1"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("memory.limit_in_bytes"), std::string::npos) << fix;
  // libbig.so's limit is still its own working set's, not model.bin's too.
  const FindingFields* big = FileFinding(all, "/opt/svc/lib/libbig.so");
  ASSERT_NE(big, nullptr) << raw;
  EXPECT_EQ(big->at("suggested_limit_bytes"), std::to_string(2 * kMiB));
}

// The fix for /srv/model.bin with `schemes` recorded ("" if none found).
std::string ModelFix(const std::string& schemes) {
  TempDir dir;
  std::string raw;
  std::vector<FindingFields> all = DamonFindings(dir, schemes, &raw);
  const FindingFields* model = FileFinding(all, "/srv/model.bin");
  if (!model) ADD_FAILURE() << "no finding for /srv/model.bin: " << raw;
  return model ? model->at("fix") : "";
}

// A scheme whose minimum age (6 x 10 ms) is below the 200 ms reuse: raise it,
// to 21 intervals, on that scheme's own path.
TEST(AnalyzePagecache, DamonSchemeWithAShortMinimumAgeIsToldTheAgeThatKeepsTheFile) {
  std::string fix = ModelFix("(0, 'kdamonds/0/contexts/0/schemes/1', 'paddr', 6, 10000, -1)");
  EXPECT_NE(fix.find("pageout scheme kdamonds/0/contexts/0/schemes/1 (minimum age 60.00 ms)"), std::string::npos) << fix;
  EXPECT_NE(fix.find("Raise the scheme's minimum age above 21 aggregation intervals of 10.00 ms "
                     "(/sys/kernel/mm/damon/admin/kdamonds/0/contexts/0/schemes/1/access_pattern/age/min"),
            std::string::npos)
      << fix;
  EXPECT_NE(fix.find("echo commit > /sys/kernel/mm/damon/admin/kdamonds/0/state"), std::string::npos) << fix;
  EXPECT_NE(fix.find("Or exclude the program's cgroup"), std::string::npos) << fix;
}

// A scheme whose minimum age (6 x 5 s) is already above the reuse: a longer
// age is not the fix (DAMON samples a page per region); the filter is.
TEST(AnalyzePagecache, DamonSchemeAlreadyOlderThanTheReuseIsToldToFilterTheCgroup) {
  std::string fix = ModelFix("(0, 'kdamonds/0/contexts/0/schemes/0', 'paddr', 6, 5000000, -1)");
  EXPECT_NE(fix.find("Its minimum age is already above that"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("Raise the scheme's minimum age"), std::string::npos) << fix;
  EXPECT_NE(fix.find("Instead, exclude the program's cgroup from the scheme with a memcg filter: raise "
                     "/sys/kernel/mm/damon/admin/kdamonds/0/contexts/0/schemes/0/filters/nr_filters by one"),
            std::string::npos)
      << fix;
  EXPECT_NE(fix.find("memcg_path /svc/syspgo-thrash-1, matching Y, allow N, then echo commit > "
                     "/sys/kernel/mm/damon/admin/kdamonds/0/state"),
            std::string::npos)
      << fix;
}

// damon_reclaim with a 10 s minimum age: a longer age is not the fix, and
// the module has no cgroup filter.
TEST(AnalyzePagecache, DamonReclaimModuleIsNamedWithItsOwnKnobs) {
  std::string fix = ModelFix("(0, 'damon_reclaim', '', -1, -1, 10000000)");
  EXPECT_NE(fix.find("pageout scheme damon_reclaim (minimum age 10.000 s)"), std::string::npos) << fix;
  EXPECT_NE(fix.find("Its minimum age is already above that"), std::string::npos) << fix;
  EXPECT_NE(fix.find("echo N > /sys/module/damon_reclaim/parameters/enabled"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("memcg filter"), std::string::npos) << fix;
}

// Records run_in_memcg.sh with the library at `lib` under `limit_mb` into
// `db` (with `extra` collect options), and prints the text report into the
// test log.
void CollectThrash(const std::string& db, const std::string& lib, int limit_mb,
                   const std::vector<std::string>& extra = {}) {
  std::string script = std::string(SYSPGO_SOURCE_DIR) + "/examples/pagecache_thrash/run_in_memcg.sh";
  std::vector<std::string> argv = {SyspgoBin(), "collect", "-o", db, "--as-root"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  for (std::string a : {"--", script.c_str(), "--bin"}) argv.push_back(a);
  for (std::string a : {ExampleBin("pagecache_thrash"), std::string("--file"), lib, std::string("--limit-mb"),
                        std::to_string(limit_mb), std::string("--mb"), std::to_string(kLibMb),
                        std::string("--passes"), std::to_string(kPasses)})
    argv.push_back(a);
  CmdResult c = RunCmd(argv);
  ASSERT_EQ(c.status, 0) << c.err << c.out;
  std::cout << c.out;
  CmdResult text = RunCmd({SyspgoBin(), "analyze", db, "pagecache", "--limit", "5"});
  std::cout << text.out;
}

// Everything AnalyzePagecache found, one line per file and per finding.
std::string Describe(const PagecacheReport& r) {
  auto map = [](const std::map<std::string, int64_t>& m) {
    std::string out;
    for (const auto& [k, v] : m) out += k + "=" + std::to_string(v) + ",";
    return out;
  };
  std::ostringstream out;
  out << "events " << r.events << "\n";
  for (const PagecacheFile& f : r.files)
    out << f.dev << ":" << f.ino << " " << f.path << " added " << f.added_pages << " deleted " << f.deleted_pages
        << " refaulted " << f.refaulted_pages << " churn " << f.churn_pages << " ws " << f.working_set_pages
        << " first_churn " << f.first_churn_ts << " damon_reuse " << f.damon_reuse_ns << " deleted_by "
        << map(f.deleted_by) << " refaults_by " << map(f.refaults_by) << " deleters " << map(f.deleters) << "\n";
  for (const Finding& f : r.findings) {
    out << f.title << " | " << f.fix << " |";
    for (const auto& [k, v] : f.facts) out << " " << k << "=" << v;
    out << "\n";
  }
  return out.str();
}

// The report tallies its page-cache chart in the analysis's pass, which then
// reads the rows file by file (PagecacheQuery::on_row) instead of in time
// order. What the analysis finds must not change with the order, here with
// two more files whose reclaims and refaults interleave with the fixture's.
TEST(AnalyzePagecache, FileByFileOrderFindsWhatTimeOrderFinds) {
  TempDir dir;
  std::string path = LoadFixture(dir, R"sql(
INSERT INTO file (run_id, dev, ino, path) VALUES (1, 2049, 31, '/srv/a.idx'), (1, 2049, 32, '/srv/b.idx');
INSERT INTO page_cache (run_id, ts, op, pid, tid, comm, dev, ino, idx, pages, task_cgroup, page_cgroup, why, stack_id) VALUES
  (1, 1050000000, 1, 200, 200, 'service', 2049, 31, 0, 16, 500, 500, 5, 0),
  (1, 1060000000, 1, 200, 200, 'service', 2049, 32, 0, 16, 500, 500, 5, 0),
  (1, 1250000000, 2, 50, 50, 'kswapd0', 2049, 31, 0, 16, 0, 500, 2, 0),
  (1, 1260000000, 2, 50, 50, 'kswapd0', 2049, 32, 0, 16, 0, 500, 2, 0),
  (1, 1500000000, 1, 200, 200, 'service', 2049, 31, 0, 16, 500, 500, 5, 0),
  (1, 1510000000, 1, 200, 200, 'service', 2049, 32, 0, 8, 500, 500, 5, 0),
  (1, 2200000000, 2, 50, 50, 'kswapd0', 2049, 31, 0, 16, 0, 500, 2, 0),
  (1, 2500000000, 1, 200, 200, 'service', 2049, 31, 0, 16, 500, 500, 5, 0),
  (1, 2600000000, 1, 200, 200, 'service', 2049, 31, 16, 16, 500, 500, 5, 0);
)sql");
  auto db = OpenProfileDb(path, DbMode::kReadOnly);
  ASSERT_TRUE(db.ok()) << db.error().message;
  auto by_time = AnalyzePagecache(*db, {1, 0});
  ASSERT_TRUE(by_time.ok()) << by_time.error().message;
  int64_t rows = 0, last_ts = -1;
  std::pair<int64_t, int64_t> last_file{-1, -1};
  std::set<std::pair<int64_t, int64_t>> files_seen;
  bool in_order = true;
  auto by_file = AnalyzePagecache(*db, {1, 0, [&](const PageCacheRow& r) {
                                         ++rows;
                                         std::pair<int64_t, int64_t> file{r.dev, r.ino};
                                         if (file != last_file) {
                                           in_order = in_order && files_seen.insert(file).second;
                                           last_file = file;
                                         } else {
                                           in_order = in_order && r.ts >= last_ts;
                                         }
                                         last_ts = r.ts;
                                       }});
  ASSERT_TRUE(by_file.ok()) << by_file.error().message;
  EXPECT_EQ(rows, by_time->events);
  EXPECT_TRUE(in_order) << "the rows came neither file by file nor in time order within a file";
  EXPECT_EQ(Describe(*by_file), Describe(*by_time));
  // The two files are really there: a.idx churned twice, b.idx half a folio.
  std::string d = Describe(*by_time);
  EXPECT_NE(d.find("2049:31 /srv/a.idx added 64 deleted 32 refaulted 32 churn 32"), std::string::npos) << d;
  EXPECT_NE(d.find("2049:32 /srv/b.idx added 24 deleted 16 refaulted 8 churn 8"), std::string::npos) << d;
}

TEST(PagecacheScenario, ThrashIsDiagnosedAndTheSuggestedLimitFixesIt) {
  TempDir dir;
  std::string lib = dir.File("libthrash.so");
  std::string db = dir.File("thrash.db");
  ASSERT_NO_FATAL_FAILURE(CollectThrash(db, lib, kLimitMb));
  std::string raw;
  std::vector<FindingFields> all = Findings(db, dir.File("thrash.json"), &raw);
  const FindingFields* found = FileFinding(all, lib);
  ASSERT_NE(found, nullptr) << "no churn finding names " << lib << ":\n" << raw;
  const FindingFields& f = *found;
  EXPECT_NE(f.at("cgroup").find("/syspgo-thrash-"), std::string::npos) << f.at("cgroup");
  EXPECT_NE(f.at("title").find(f.at("cgroup")), std::string::npos) << f.at("title");
  EXPECT_EQ(f.at("limit_bytes"), std::to_string(kLimitMb * kMiB));
  EXPECT_EQ(f.at("reclaim"), "memcg reclaim");
  EXPECT_NE(f.at("title").find("memcg reclaim"), std::string::npos) << f.at("title");
  // Each later pass faults most of the library back in.
  FindingFields lib_row = PagecacheFileRow(dir.File("thrash.json"), "file", lib);
  EXPECT_GE(std::stoll(lib_row["refault_bytes"]), (kLibMb - kLimitMb) * kMiB / 2) << lib_row["refault_bytes"];
  // The library's working set: nearly all of it touched.
  int64_t ws = std::stoll(lib_row["working_set_bytes"]);
  EXPECT_GE(ws, kLibMb * kMiB * 9 / 10);
  EXPECT_LE(ws, kLibMb * kMiB);
  // drop_caches by the runner is reported and not blamed.
  EXPECT_EQ(lib_row["refaults_by"].find("truncation"), std::string::npos) << lib_row["refaults_by"];
  int64_t suggested = std::stoll(f.at("suggested_limit_bytes"));
  EXPECT_EQ(suggested % kMiB, 0);
  EXPECT_GE(suggested, kLimitMb * kMiB + ws);
  EXPECT_NE(f.at("fix").find("memory.limit_in_bytes to at least " + std::to_string(suggested / kMiB) + " MiB"),
            std::string::npos)
      << f.at("fix");

  // The same run under the suggested limit: the library no longer churns.
  std::string fixed = dir.File("fixed.db");
  ASSERT_NO_FATAL_FAILURE(CollectThrash(fixed, lib, static_cast<int>(suggested / kMiB)));
  std::vector<FindingFields> after = Findings(fixed, dir.File("fixed.json"), &raw);
  EXPECT_EQ(FileFinding(after, lib), nullptr) << "still churns:\n" << raw;
  FindingFields row = PagecacheFileRow(dir.File("fixed.json"), "file", lib);
  ASSERT_FALSE(row.empty()) << "the library's pages were not recorded in the second run:\n" << raw;
  // The first pass reads the library in. Not all of it: pages of the file
  // just written by the first run can survive the runner's drop_caches.
  EXPECT_GE(std::stoll(row["added_pages"]), kLibMb * kMiB / 4096 / 2) << "the first pass reads it";
  EXPECT_LE(std::stoll(row["churn_pages"]) * 4096, kMiB / 4) << row["deleted_by"];
  EXPECT_EQ(row["churns"], "false");
}

// The lean tier (the default) counts in the kernel what the full
// tier records row by row. The same thrash recorded both ways must give
// the same diagnosis, with nothing lost and no map overflowing in lean:
// which file, which cgroup limit, which reclaim.
TEST(PagecacheScenario, LeanTierDiagnosesTheThrashAsTheFullTierDoes) {
  TempDir dir;
  std::string lib = dir.File("libthrash.so");
  std::string lean = dir.File("lean.db"), full = dir.File("full.db");
  ASSERT_NO_FATAL_FAILURE(CollectThrash(lean, lib, kLimitMb));
  ASSERT_NO_FATAL_FAILURE(CollectThrash(full, lib, kLimitMb, {"--detail", "full", "--ringbuf-mb", "64"}));
  {
    Db d = OpenDb(lean);
    EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM page_cache"), 0);
    EXPECT_GT(QueryInt(d, "SELECT COUNT(*) FROM page_cache_total"), 0);
    EXPECT_EQ(QueryInt(d, "SELECT COALESCE(SUM(dropped), 0) FROM run_drop WHERE probe_group = 'pagecache'"), 0);
    EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM run_aggregate WHERE probe_group = 'pagecache' AND map != "
                          "'pc_chunks.refaults'"),
              6);
    EXPECT_EQ(QueryInt(d, "SELECT COALESCE(SUM(overflow), 0) FROM run_aggregate WHERE map != 'pc_chunks.refaults'"),
              0);
  }
  {
    Db d = OpenDb(full);
    EXPECT_GT(QueryInt(d, "SELECT COUNT(*) FROM page_cache"), 0);
    EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM page_cache_total"), 0);
  }
  std::string raw_lean, raw_full;
  std::vector<FindingFields> a = Findings(lean, dir.File("lean.json"), &raw_lean);
  std::vector<FindingFields> b = Findings(full, dir.File("full.json"), &raw_full);
  EXPECT_NE(raw_lean.find("\"tier\": \"lean\""), std::string::npos);
  EXPECT_NE(raw_full.find("\"tier\": \"full\""), std::string::npos);
  ASSERT_FALSE(a.empty()) << raw_lean;
  ASSERT_FALSE(b.empty()) << raw_full;
  EXPECT_EQ(FileFinding(a, lib), &a[0]) << raw_lean;
  EXPECT_EQ(FileFinding(b, lib), &b[0]) << raw_full;
  for (const char* same : {"reclaim", "reclaim_path", "limit_bytes", "churns"})
    EXPECT_EQ(a[0].at(same), b[0].at(same)) << same;
  // How much reclaim a thrash does depends on timing, and what the second
  // run finds cached depends on the first (drop_caches keeps the library's
  // pages still being written back), so churn and working set may differ
  // between the two runs; the page counts of one run are checked exactly
  // in pagecache_test.cc. The lean run, first, reads the new library cold.
  int64_t ws_lean = std::stoll(PagecacheFileRow(dir.File("lean.json"), "file", lib)["working_set_pages"]);
  EXPECT_GE(ws_lean, kLibMb * kMiB / 4096 * 9 / 10) << "the thrash touches nearly every page of the library";
  EXPECT_LE(ws_lean, kLibMb * kMiB / 4096);
}

}  // namespace
}  // namespace syspgo::test
