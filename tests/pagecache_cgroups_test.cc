//===- pagecache_cgroups_test.cc - page cache deleted by another cgroup's task ===//
// The seed case of issue 44: a process in a small memory cgroup whose
// page-cache pages another task deletes. Two v1 memory cgroups share a
// parent limited to 64 MiB: `victim` (limit 48 MiB) reads a 32 MiB file,
// then `other` (no limit of its own) streams a 128 MiB file with dd, whose
// reclaim for the parent's limit evicts the victim's pages; the victim then
// reads its file again. Measured beforehand with fincore, memory.stat and
// /proc/vmstat: dd's read leaves 0 of the victim's 8192 pages cached, the
// victim's limit is never hit (failcnt 0) while the parent's is, and the
// second read refaults about 8200 pages. Recorded with `collect --cgroup
// VICTIM` and with `collect --all`, `analyze pagecache` must name the
// victim's cgroup, dd as the deleting task, its cgroup as another one, and
// with --all rank the victim's cgroup first. With dd in the parent itself,
// its cgroup is named as the victim's ancestor.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <thread>

#include "common/util.h"
#include "tests/findings_json.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

constexpr int64_t kMiB = 1 << 20;
constexpr int64_t kVictimPages = 32 * kMiB / 4096;

std::string OwnMemoryCgroup() {
  std::istringstream is(ReadAll("/proc/self/cgroup"));
  for (std::string line; std::getline(is, line);)
    if (auto at = line.find(":memory:"); at != std::string::npos) return line.substr(at + 8);
  return "";
}

// How long the collector may take to stop after SIGINT before the test
// kills it: its stop is bounded (it detaches its programs, then writes
// what its buffers already hold), so this only keeps a broken stop from
// outliving the test; generous, for a loaded machine.
constexpr auto kStopLimit = std::chrono::seconds(300);

bool WaitFile(const std::string& path) {
  for (int i = 0; i < 1200; ++i) {
    if (access(path.c_str(), F_OK) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// parent (64 MiB) with children victim (48 MiB) and other (no limit),
// under this process's own memory cgroup; removed at the end.
struct Cgroups {
  std::string rel, parent, victim, other;
  Cgroups() {
    std::string own = OwnMemoryCgroup();
    rel = (own == "/" ? "" : own) + "/syspgo-seed-" + std::to_string(getpid());
    parent = "/sys/fs/cgroup/memory" + rel;
    victim = parent + "/victim";
    other = parent + "/other";
    for (const std::string& d : {parent, victim, other}) mkdir(d.c_str(), 0755);
    std::ofstream(parent + "/memory.limit_in_bytes") << 64 * kMiB;
    std::ofstream(victim + "/memory.limit_in_bytes") << 48 * kMiB;
  }
  ~Cgroups() {
    for (const std::string& d : {victim, other, parent})
      for (int i = 0; i < 50 && rmdir(d.c_str()) != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
};

// Records the story with collect `scope` (and -o DB) and returns the
// database. The victim's shell is in its cgroup before the collector starts;
// dd runs in `reclaimer` (the other cgroup unless said).
std::string RecordStory(const TempDir& dir, const Cgroups& cg, const std::vector<std::string>& scope,
                        const std::string& name, std::string reclaimer = "") {
  if (reclaimer.empty()) reclaimer = cg.other;
  std::string victim_file = dir.File("victim.bin"), stream = dir.File("stream.bin");
  if (access(victim_file.c_str(), F_OK) != 0) {
    EXPECT_EQ(Sh("head -c " + std::to_string(32 * kMiB) + " /dev/urandom > " + victim_file + " && head -c " +
                 std::to_string(128 * kMiB) + " /dev/urandom > " + stream).status, 0);
  }
  EXPECT_EQ(Sh("sync && echo 3 > /proc/sys/vm/drop_caches").status, 0);
  std::string db = dir.File(name + ".db"), go1 = dir.File(name + ".go1"), go2 = dir.File(name + ".go2");
  std::string read1 = dir.File(name + ".read1"), read2 = dir.File(name + ".read2");
  auto wait = [](const std::string& f) { return "while [ ! -e " + f + " ]; do sleep 0.02; done; "; };
  OwnedChild victim({"sh", "-c", "echo $$ > " + cg.victim + "/cgroup.procs; " + wait(go1) + "cat " + victim_file +
                                      " >/dev/null; touch " + read1 + "; " + wait(go2) + "cat " + victim_file +
                                      " >/dev/null; touch " + read2});
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // in its cgroup before the collector looks
  std::vector<std::string> collect = {SyspgoBin(), "collect", "-o", db, "--probes", "proc,fileio,pagecache,faults",
                                      "--ringbuf-mb", "64", "--duration", "120"};
  collect.insert(collect.end(), scope.begin(), scope.end());
  std::string collect_err = dir.File(name + ".collect.err");
  OwnedChild collector(collect, collect_err);
  bool attached = WaitAttached(db);
  std::ofstream(go1) << "go";
  bool first = attached && WaitFile(read1);
  // The other cgroup's dd: its charges push the parent past its limit.
  EXPECT_EQ(Sh("echo $$ > " + reclaimer + "/cgroup.procs && exec dd if=" + stream + " of=/dev/null bs=1M status=none")
                .status,
            0);
  CmdResult left = Sh("fincore -nb " + victim_file + " | awk '{print $1}'");
  std::cout << "victim's file cached after dd: " << left.out;
  std::ofstream(go2) << "go";
  bool second = first && WaitFile(read2);
  if (!second) victim.Kill();
  EXPECT_EQ(collector.Stop(SIGINT, kStopLimit), 0) << ReadAll(collect_err);
  EXPECT_GE(victim.WaitExit(kStopLimit), 0);  // gone (killed above if its second read never came)
  EXPECT_TRUE(attached && first && second);
  Db d = OpenDb(db);
  EXPECT_EQ(QueryRows(d, "SELECT status FROM run"), std::vector<std::string>{"complete"});
  return db;
}

// The finding whose cause evicted `path`, from `analyze DB pagecache --json`.
FindingFields FindingOf(const std::string& db, const std::string& json, const std::string& path) {
  CmdResult r = RunCmd({SyspgoBin(), "analyze", db, "pagecache", "--json"});
  EXPECT_EQ(r.status, 0) << r.err;
  std::ofstream(json) << r.out;
  std::string error;
  for (const FindingFields& f : ReadStallFindings(json, &error))
    if (f.at("files").find("\"" + path + "\"") != std::string::npos) return f;
  ADD_FAILURE() << "no finding evicted " << path << ": " << error << "\n" << r.out;
  return {};
}

// What every recording must say: the victim's cgroup, dd, and the pages.
void ExpectNamed(const FindingFields& f, const Cgroups& cg, const std::string& json, const std::string& file) {
  if (f.empty()) return;
  EXPECT_EQ(f.at("cgroup"), cg.rel + "/victim");
  EXPECT_EQ(f.at("limit_bytes"), std::to_string(48 * kMiB));
  EXPECT_EQ(f.at("reclaim"), "memcg reclaim");
  EXPECT_NE(f.at("deleters").find("\"dd\""), std::string::npos) << f.at("deleters");
  EXPECT_NE(f.at("title").find(cg.rel + "/victim"), std::string::npos) << f.at("title");
  FindingFields row = PagecacheFileRow(json, "file", file);
  // dd evicted the whole file and the second read brought it all back.
  EXPECT_GE(std::stoll(row["churn_pages"]), kVictimPages * 9 / 10) << row["churn_pages"];
  EXPECT_LE(std::stoll(row["churn_pages"]), kVictimPages);
}

// The full tier records the deleting task's cgroup: another one, so the fix
// is not the victim's limit, which was never hit.
void ExpectAnotherCgroup(const FindingFields& f, const Cgroups& cg) {
  if (f.empty()) return;
  EXPECT_EQ(f.at("reclaim_path"), "another cgroup's reclaim");
  EXPECT_NE(f.at("deleter_cgroups").find(cg.rel + "/other"), std::string::npos) << f.at("deleter_cgroups");
  EXPECT_NE(f.at("title").find("tasks of another cgroup (" + cg.rel + "/other)"), std::string::npos) << f.at("title");
  EXPECT_EQ(f.at("suggested_limit_bytes"), "0");
  EXPECT_NE(f.at("fix").find("Give " + cg.rel + "/other a memory.limit_in_bytes"), std::string::npos) << f.at("fix");
}

TEST(PagecacheCgroups, AnotherCgroupsReclaimIsNamedRecordingTheCgroup) {
  DamonPaused no_damon;
  TempDir dir;
  Cgroups cg;
  std::string db = RecordStory(dir, cg, {"--cgroup", cg.victim, "--detail", "full"}, "cgroup");
  FindingFields f = FindingOf(db, dir.File("cgroup.json"), dir.File("victim.bin"));
  ExpectNamed(f, cg, dir.File("cgroup.json"), dir.File("victim.bin"));
  ExpectAnotherCgroup(f, cg);
}

TEST(PagecacheCgroups, AnotherCgroupsReclaimIsNamedAndRankedRecordingTheHost) {
  DamonPaused no_damon;
  TempDir dir;
  Cgroups cg;
  std::string db = RecordStory(dir, cg, {"--all", "--detail", "full"}, "all");
  std::string json = dir.File("all.json");
  FindingFields f = FindingOf(db, json, dir.File("victim.bin"));
  ExpectNamed(f, cg, json, dir.File("victim.bin"));
  ExpectAnotherCgroup(f, cg);
  // The host's cgroups ranked: the victim's churned most.
  nlohmann::json doc = ReadJson(json);
  ASSERT_GE(doc["cgroups"].size(), 2u) << doc["cgroups"].dump();
  EXPECT_EQ(doc["cgroups"][0]["cgroup"], cg.rel + "/victim") << doc["cgroups"].dump();
  CmdResult text = RunCmd({SyspgoBin(), "analyze", db, "pagecache"});
  EXPECT_NE(text.out.find("memory cgroups, most pages evicted by reclaim and read again first"), std::string::npos)
      << text.out;
}

// dd in the parent itself: the victim's ancestor reclaims for its own limit,
// so the fix is that limit or a cgroup of dd's own below it, not "a limit
// of its own" for a cgroup that has one.
TEST(PagecacheCgroups, AnAncestorsReclaimIsNamedAsTheAncestors) {
  DamonPaused no_damon;
  TempDir dir;
  Cgroups cg;
  std::string db = RecordStory(dir, cg, {"--cgroup", cg.victim, "--detail", "full"}, "ancestor", cg.parent);
  FindingFields f = FindingOf(db, dir.File("ancestor.json"), dir.File("victim.bin"));
  ExpectNamed(f, cg, dir.File("ancestor.json"), dir.File("victim.bin"));
  if (f.empty()) return;
  EXPECT_EQ(f.at("reclaim_path"), "an ancestor cgroup's reclaim");
  EXPECT_NE(f.at("title").find("tasks of its ancestor cgroup (" + cg.rel + ")"), std::string::npos) << f.at("title");
  EXPECT_NE(f.at("fix").find("move those tasks into a child cgroup of " + cg.rel), std::string::npos) << f.at("fix");
}

// The lean tier (the default) counts deletions per deleting task's name, not
// its cgroup: dd and the victim's cgroup are named, the other cgroup is not.
TEST(PagecacheCgroups, LeanTierNamesTheDeletingTask) {
  DamonPaused no_damon;
  TempDir dir;
  Cgroups cg;
  std::string db = RecordStory(dir, cg, {"--cgroup", cg.victim}, "lean");
  FindingFields f = FindingOf(db, dir.File("lean.json"), dir.File("victim.bin"));
  ExpectNamed(f, cg, dir.File("lean.json"), dir.File("victim.bin"));
  // Another cgroup's task reclaimed: the lean tier cannot tell, so the title
  // must not say the cgroup's own tasks did.
  CmdResult text = RunCmd({SyspgoBin(), "analyze", db, "pagecache", "--all"});
  EXPECT_EQ(text.out.find("by its own tasks"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("whose tasks reclaimed is recorded by --detail full"), std::string::npos) << text.out;
}

// Issue 42's real-size story: a real program mapping large native
// libraries (Debian's python3 importing numpy: about 25 MiB of shared
// objects, and its .py files), started 5 times in a memory cgroup limited
// to 32 MiB. Measured beforehand with tests/workloads/repeat_in_memcg.sh:
// the cgroup hits its limit about 19000 times and the kernel counts about
// 15800 file refaults (/proc/vmstat workingset_refault_file); with 48 MiB,
// 7 hits and about 50. One cause: the cgroup's own limit. So one finding,
// memcg reclaim by the cgroup's own tasks, its table holding numpy's
// libraries, no more refaults than the kernel counted or lost count of (a
// page whose shadow entry it reclaimed), and a fix that raises that
// cgroup's limit.
TEST(PagecacheCgroups, RealProgramStartedFiveTimesInASmallCgroupIsOneFinding) {
  DamonPaused no_damon;
  TempDir dir;
  std::string db = dir.File("numpy.db");
  std::string script = std::string(SYSPGO_SOURCE_DIR) + "/tests/workloads/repeat_in_memcg.sh";
  CmdResult c = RunCmd({SyspgoBin(), "collect", "-o", db, "--", script, "32", "5", "/usr/bin/python3", "-c",
                        "import numpy"});
  ASSERT_EQ(c.status, 0) << c.err << c.out;
  std::cout << c.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(c.out, m, std::regex(R"(workingset_refault_file \+(\d+))"))) << c.out;
  int64_t kernel_refaults = std::stoll(m[1]);
  // The kernel counts a refault only while the page's shadow entry lasts;
  // each shadow node it reclaims drops up to 64 of them (XA_CHUNK_SIZE),
  // and their pages come back uncounted.
  ASSERT_TRUE(std::regex_search(c.out, m, std::regex(R"(workingset_nodereclaim \+(\d+))"))) << c.out;
  int64_t uncounted = 64 * std::stoll(m[1]);
  ASSERT_TRUE(std::regex_search(c.out, m, std::regex(R"(cgroup (\S+) limit)"))) << c.out;
  std::string cgroup = m[1];
  CmdResult j = RunCmd({SyspgoBin(), "analyze", db, "pagecache", "--json"});
  ASSERT_EQ(j.status, 0) << j.err;
  std::string json = dir.File("numpy.json");
  std::ofstream(json) << j.out;
  std::string error;
  std::vector<FindingFields> all = ReadStallFindings(json, &error);
  ASSERT_EQ(all.size(), 1u) << error << j.out.substr(0, 20000);
  const FindingFields& f = all[0];
  EXPECT_EQ(f.at("cgroup"), cgroup);
  EXPECT_EQ(f.at("limit_bytes"), std::to_string(32 * kMiB));
  EXPECT_EQ(f.at("reclaim_path"), "memcg reclaim");
  EXPECT_NE(f.at("files").find("numpy/core/_multiarray_umath"), std::string::npos) << f.at("files");
  EXPECT_NE(f.at("fix").find("memory.limit_in_bytes to at least"), std::string::npos) << f.at("fix");
  int64_t churn = std::stoll(f.at("churn_pages"));
  EXPECT_GE(churn, kernel_refaults / 2) << "the kernel counted " << kernel_refaults;
  EXPECT_LE(churn, kernel_refaults + uncounted + 256)
      << "the kernel counted " << kernel_refaults << ", and lost the shadow entries of up to " << uncounted;
  CmdResult text = RunCmd({SyspgoBin(), "analyze", db, "pagecache"});
  ASSERT_EQ(text.status, 0) << text.err;
  std::cout << text.out;
  EXPECT_NE(text.out.find("\n1 finding, one per memory cgroup"), std::string::npos);
}

}  // namespace
}  // namespace syspgo::test
