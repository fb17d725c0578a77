//===- critical_path_test.cc - stalls followed to their root, on real runs --===//
// examples/wait_chains makes a thread wait on another task whose own wait
// or work is the cause: an RPC to a slow server thread over loopback, a
// lock held across a sleep and across an fdatasync, a pipe line whose first
// process reads from the disk, a thread pool short of CPUs, a parent
// waiting for a child that faults on a cold file. Each is recorded for real
// and `syspgo analyze DB stalls --json` must name the true root and the
// chain of threads that leads there: in the findings (the waiting thread's
// stall merged into the root's) and in the critical path of the command's
// main thread. Waits in the scenarios are tens of milliseconds long and the
// checks compare causes, not durations, so a busy machine (which adds
// waits for a CPU everywhere) does not change them: CPU-contention roots
// are left out where the question is which wait chain bounds the command.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/test_util.h"

namespace syspgo::test {
namespace {

using nlohmann::json;

// Records one mode (after `prepare` for the disk modes) and returns the
// stalls analysis as JSON.
json Analyze(const TempDir& dir, const std::string& mode) {
  std::string bin = ExampleBin("wait_chains"), db = dir.File(mode + ".db");
  EXPECT_EQ(RunCmd({bin, "prepare", dir.path()}).status, 0);
  // Off-CPU intervals from 100 us: the disk waits of a fast virtual disk
  // are short, and the chain must see them.
  CmdResult c = RunCmd({SyspgoBin(), "collect", "--probes", "sched,fileio,block,cpu,faults", "--offcpu-min-us", "100",
                        "-o", db, "--", bin, mode, dir.path()});
  EXPECT_EQ(c.status, 0) << c.err;
  CmdResult text = RunCmd({SyspgoBin(), "analyze", db, "stalls"});
  std::cout << text.out;  // as people read it, in the test log
  CmdResult r = RunCmd({SyspgoBin(), "analyze", db, "stalls", "--json"});
  EXPECT_EQ(r.status, 0) << r.err;
  json j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

// The command's critical path roots that are waits, not contention for a
// CPU (kind "cpu"): what bounds the command however busy the machine is.
std::vector<json> WaitRoots(const json& j) {
  std::vector<json> out;
  for (const json& r : j["command_path"]["roots"])
    if (r["kind"] != "cpu") out.push_back(r);
  return out;
}

// The first of `roots` of `kind`, or nullptr.
const json* RootOfKind(const std::vector<json>& roots, const std::string& kind) {
  for (const json& r : roots)
    if (r["kind"] == kind) return &r;
  return nullptr;
}

bool Has(const json& text, const std::string& part) { return text.get<std::string>().find(part) != std::string::npos; }

// The finding that speaks for the main thread's waits of `cause` (lock,
// socket, child, ...): its own, or the root's finding it was merged into
// (whose "stalls too" names it by the words `merged_as`).
const json* WaitFinding(const json& j, const std::string& cause, const std::string& merged_as) {
  int64_t main_tid = j["command_path"]["tid"];
  for (const json& f : j["findings"]) {
    const json& d = f["detail"];
    for (const json& t : d["tids"])
      if (t.get<int64_t>() == main_tid && d["cause"] == cause) return &f;
    for (const json& s : d["stalls_too"])
      if (Has(s, "main thread") && Has(s, merged_as)) return &f;
  }
  return nullptr;
}

// `root` is reached from the main thread in one hop, a wait whose words hold `waits_in`.
void ExpectOneHopFromMain(const json& root, int64_t main_tid, const std::string& waits_in) {
  ASSERT_EQ(root["hops"].size(), 1u) << root.dump(1);
  EXPECT_EQ(root["hops"][0]["tid"], main_tid);
  EXPECT_TRUE(Has(root["hops"][0]["doing"], waits_in)) << root["hops"][0].dump();
}

// The main thread's waits of `cause` come down to the disk, reading
// `file`: a root of the command's critical path one hop (a wait whose
// words hold `waits_in`) from the main thread, and the root of the finding
// that speaks for those waits (merged as `merged_as`). Returns that root,
// or null after a failed check.
json DiskRootOneHopFromMain(const json& j, const std::string& file, const std::string& waits_in,
                            const std::string& cause, const std::string& merged_as) {
  std::vector<json> roots = WaitRoots(j);
  const json* disk = RootOfKind(roots, "disk");
  EXPECT_NE(disk, nullptr) << j["command_path"].dump(1);
  if (!disk) return nullptr;
  EXPECT_TRUE(Has((*disk)["what"], file)) << disk->dump();
  ExpectOneHopFromMain(*disk, j["command_path"]["tid"].get<int64_t>(), waits_in);
  const json* waits = WaitFinding(j, cause, merged_as);
  EXPECT_NE(waits, nullptr) << j["findings"].dump(1);
  if (waits) {
    EXPECT_EQ((*waits)["detail"]["roots"][0]["kind"], "disk") << waits->dump(1);
  }
  return *disk;
}

std::string Chain(const json& hops) {
  std::string out;
  for (const json& h : hops) out += h["comm"].get<std::string>() + "/" + std::to_string(h["tid"].get<int64_t>()) + " ";
  return out;
}

TEST(CriticalPath, RpcToASlowServerThreadComesDownToItsSleep) {
  TempDir dir;
  json j = Analyze(dir, "rpc");
  ASSERT_FALSE(j["findings"].empty());
  int64_t main_tid = j["command_path"]["tid"];
  const json& top = j["findings"][0];
  const json& root = top["detail"]["roots"][0];
  EXPECT_EQ(root["kind"], "timer") << top.dump(1);
  EXPECT_NE(root["what"].get<std::string>().find("clock_nanosleep"), std::string::npos) << root.dump();
  EXPECT_NE(root["tid"].get<int64_t>(), main_tid) << "the sleep is the server thread's, not the client's";
  // The client's socket wait is the same problem: merged into the root's finding.
  EXPECT_EQ(WaitFinding(j, "socket", "socket"), &top) << j["findings"].dump(1);
  // What bounds the command: the server's sleep, through the client.
  std::vector<json> roots = WaitRoots(j);
  ASSERT_FALSE(roots.empty());
  EXPECT_EQ(roots[0]["kind"], "timer");
  EXPECT_EQ(roots[0]["tid"], root["tid"]);
  EXPECT_GT(roots[0]["ns"].get<int64_t>(), 600'000'000) << "10 replies, 80 ms of sleep each";

  // The wakeups on the way, as arrows from the server to the client: flow
  // events in the Perfetto export, links in the report's data.
  int64_t server = root["tid"];
  std::string db = dir.File("rpc.db"), trace = dir.File("trace.json"), page = dir.File("report.html");
  ASSERT_EQ(RunCmd({SyspgoBin(), "export", db, "-o", trace}).status, 0);
  json t = json::parse(ReadAll(trace), nullptr, false);
  ASSERT_FALSE(t.is_discarded());
  std::map<int64_t, std::pair<int64_t, int64_t>> flows;  // id -> (from tid, to tid)
  for (const json& e : t["traceEvents"]) {
    if (e.value("cat", "") != "syspgo.wakeup") continue;
    (e["ph"] == "s" ? flows[e["id"]].first : flows[e["id"]].second) = e["tid"];
  }
  // One arrow per reply the client slept for: on a loaded machine a reply
  // can arrive before the client is back in recvfrom (no wait, no arrow),
  // and the server's own accept can wait long enough to be a stall, with
  // an arrow from the client's connect.
  size_t replies = std::count_if(flows.begin(), flows.end(),
                                 [&](auto& f) { return f.second == std::make_pair(server, main_tid); });
  EXPECT_GE(replies, 5u) << "an arrow from the server to the client for most of the 10 replies";
  ASSERT_EQ(RunCmd({SyspgoBin(), "report", db, "-o", page}).status, 0);
  std::string html = ReadAll(page);
  size_t from = html.find("id=\"syspgo-data\">"), to = html.find("</script>", from);
  ASSERT_NE(from, std::string::npos);
  from = html.find('>', from) + 1;
  json data = json::parse(html.substr(from, to - from), nullptr, false);
  ASSERT_FALSE(data.is_discarded());
  const json& links = data["findings"][0]["links"];
  EXPECT_GE(links.size(), 5u) << "the report links most replies, as the export draws them";
  for (const json& l : links) EXPECT_EQ(std::make_pair(l[1].get<int64_t>(), l[2].get<int64_t>()), std::make_pair(server, main_tid));
}

TEST(CriticalPath, ALockHeldAcrossASleepComesDownToTheHoldersSleep) {
  TempDir dir;
  json j = Analyze(dir, "lock-sleep");
  int64_t main_tid = j["command_path"]["tid"];
  // The waiter's futex waits are merged into the holders' sleep: the top finding.
  const json* waits = WaitFinding(j, "lock", "futex");
  ASSERT_NE(waits, nullptr) << j["findings"].dump(1);
  EXPECT_EQ(waits, &j["findings"][0]);
  EXPECT_EQ((*waits)["detail"]["roots"][0]["kind"], "timer") << waits->dump(1);
  EXPECT_EQ((*waits)["detail"]["cause"], "sleep");
  std::vector<json> roots = WaitRoots(j);
  ASSERT_FALSE(roots.empty());
  EXPECT_EQ(roots[0]["kind"], "timer");
  ExpectOneHopFromMain(roots[0], main_tid, "futex");
}

// A disk root names the block requests that completed while its thread
// waited, and the thread that made them: here the waiter itself (a read or
// a page fault makes its own requests).
void ExpectRequestsBy(const json& disk) {
  const std::string detail = disk["detail"];
  EXPECT_TRUE(Has(detail, "block requests completed meanwhile: ")) << disk.dump();
  EXPECT_TRUE(Has(detail, " of " + disk["comm"].get<std::string>() + " (tid " +
                              std::to_string(disk["tid"].get<int64_t>()) + "), "))
      << disk.dump();
}

TEST(CriticalPath, ALockHeldAcrossAnFdatasyncComesDownToTheDisk) {
  TempDir dir;
  json j = Analyze(dir, "lock-fsync");
  // Of the waits the main thread's time comes down to, the disk under the
  // holder's lock; the holders' own work (dirtying pages) is outside it.
  // The finding for the main thread's futex waits names the disk as root
  // (its own, or the holders' I/O stall it was merged into).
  json disk = DiskRootOneHopFromMain(j, "locked.dat", "futex", "lock", "futex");
  ASSERT_FALSE(disk.is_null());
  EXPECT_NE(disk["tid"], j["command_path"]["tid"]);
}

// A writer thread dirties and syncs a file 5 times, sleeping 50 ms after
// each: the sleeps are no part of the I/O. Each burst is its own stall (one
// finding of up to five, as many as waited for the disk the threshold or
// more), none holds a sleep, and the sleeps are a finding of their own.
TEST(CriticalPath, ASleepBetweenIoBurstsSplitsThem) {
  TempDir dir;
  json j = Analyze(dir, "write-sleep");
  std::vector<const json*> io;
  const json* sleeps = nullptr;
  for (const json& f : j["findings"]) {
    if (f["detail"]["cause"] == "io" && f["detail"]["file"].get<std::string>().find("locked.dat") != std::string::npos)
      io.push_back(&f);
    if (f["detail"]["cause"] == "sleep") sleeps = &f;
  }
  ASSERT_EQ(io.size(), 1u) << j["findings"].dump(1);
  const json& f = *io.front();
  EXPECT_GE(f["count"].get<int64_t>(), 3) << f.dump(1);
  EXPECT_LE(f["count"].get<int64_t>(), 5) << f.dump(1);
  EXPECT_EQ(f["facts"]["waited for"].get<std::string>().find("slept"), std::string::npos) << f.dump(1);
  ASSERT_NE(sleeps, nullptr) << j["findings"].dump(1);
  EXPECT_EQ((*sleeps)["detail"]["tids"], f["detail"]["tids"]) << "the writer's own sleeps";
  EXPECT_GE((*sleeps)["count"].get<int64_t>(), 4) << sleeps->dump(1);
}

TEST(CriticalPath, APipeLineComesDownToTheDiskTwoProcessesUp) {
  TempDir dir;
  json j = Analyze(dir, "pipeline");
  int64_t main_tid = j["command_path"]["tid"];
  std::vector<json> roots = WaitRoots(j);
  const json* disk = RootOfKind(roots, "disk");
  ASSERT_NE(disk, nullptr) << j["command_path"].dump(1);
  EXPECT_NE((*disk)["what"].get<std::string>().find("pipeline.dat"), std::string::npos);
  // main (reads the last pipe) <- the middle process (reads the first) <- the reader of the disk.
  const json& hops = (*disk)["hops"];
  ASSERT_EQ(hops.size(), 2u) << Chain(hops);
  EXPECT_EQ(hops[0]["tid"], main_tid);
  EXPECT_NE(hops[0]["doing"].get<std::string>().find("pipe"), std::string::npos);
  EXPECT_NE(hops[1]["tid"], main_tid);
  EXPECT_NE(hops[1]["doing"].get<std::string>().find("pipe"), std::string::npos);
  EXPECT_NE((*disk)["tid"], hops[1]["tid"]);
  EXPECT_NE((*disk)["pid"], hops[1]["pid"]) << "three processes";
  // The block requests the reader waited for, and who made them: the reader.
  ExpectRequestsBy(*disk);
}

TEST(CriticalPath, AStarvedThreadPoolComesDownToTheCpu) {
  TempDir dir;
  json j = Analyze(dir, "pool");
  int64_t main_tid = j["command_path"]["tid"];
  // The workers: preempted, their root the CPU, which the other workers had
  // (or, on a machine busy with more than this test, tasks outside it).
  const json* starved = nullptr;
  for (const json& f : j["findings"])
    if (f["detail"]["cause"] == "cpu" && f["detail"]["tids"].size() > 1) starved = &f;
  ASSERT_NE(starved, nullptr) << j["findings"].dump(1);
  const json& root = (*starved)["detail"]["roots"][0];
  EXPECT_EQ(root["kind"], "cpu");
  EXPECT_TRUE(Has(root["detail"], " ran wait_chains (tid ") || Has(root["detail"], " ran tasks outside the traced tree"))
      << root.dump();
  // The main thread joins them: its wait comes down to the workers (their
  // work, or their wait for a CPU), never to itself.
  const json* join = WaitFinding(j, "lock", "futex");
  ASSERT_NE(join, nullptr) << j["findings"].dump(1);
  const json& joined = (*join)["detail"]["roots"][0];
  EXPECT_TRUE(joined["kind"] == "work" || joined["kind"] == "cpu") << joined.dump();
  EXPECT_NE(joined["tid"], main_tid);
}

TEST(CriticalPath, AParentWaitingForAFaultingChildComesDownToTheDisk) {
  TempDir dir;
  json j = Analyze(dir, "child-fault");
  // The finding for the parent's wait names the child's faults as its root.
  json disk = DiskRootOneHopFromMain(j, "mapped.dat", "child", "child", "child process");
  ASSERT_FALSE(disk.is_null());
  EXPECT_NE(disk["pid"], j["command_path"]["tid"]) << "the child's faults";
  ExpectRequestsBy(disk);  // the child's page-ins, made by the child
}

}  // namespace
}  // namespace syspgo::test
