//===- plan_test.cc - prefetch plans: build, store, merge, deploy lists ---===//
//
// The plan is what a profile turns into and what `syspgo prefetch` trusts,
// so these tests pin down its behaviour exactly: how touches become
// extents, that a stored plan reads back identical and a damaged one is
// refused with a message that says so, that merging unions ranges without
// doubling and orders by the median, and that the deploy lists have the
// exact format their consumers (mksquashfs, Nydus) parse.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "analyze/access_order.h"
#include "analyze/data/query.h"
#include "analyze/run.h"
#include "common/profile_db.h"
#include "optimize/deploy_lists.h"
#include "optimize/plan.h"
#include "tests/test_util.h"

namespace syspgo {
namespace {

using test::ReadAll;
using test::TempDir;
constexpr uint64_t kPage = kPlanPageSize;

// Deterministic, position-dependent bytes, different per seed.
std::string Pattern(size_t size, uint32_t seed) {
  std::string s(size, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (auto& c : s) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}


TouchRecord Touch(const std::string& path, uint64_t offset, uint64_t length, uint64_t ts) {
  auto id = test::StatFile(path);
  return {path, id.dev, id.ino, offset, length, ts};
}

std::vector<PlanExtent> Extents(std::initializer_list<PlanExtent> e) { return e; }

// ---- Building ---------------------------------------------------------------

TEST(PlanBuilder, AlignsToPagesKeepsFirstTouchAndMergesTouchingRanges) {
  TempDir dir;
  std::string a = dir.File("a");
  WriteFile(a, Pattern(64 * 1024, 1));
  PlanBuilder b;
  b.SetMergeGap(0);
  b.Add(Touch(a, 100, 10, 50));        // inside page 0
  b.Add(Touch(a, 40000, 1, 55));       // page 9
  b.Add(Touch(a, 4096, 8192, 60));     // pages 1-2: touch page 0, so they join its extent
  b.Add(Touch(a, 0, 8192, 70));        // pages 0-1 again: already touched, adds nothing
  b.Add(Touch(a, 0, 20000, 80));       // pages 0-4: only 3-4 are new, and continue pages 1-2
  b.Add(Touch(a, 50000, 0, 1));        // empty: ignored
  b.Add(Touch(a, 13 * kPage, 1, 40));  // page 13, touched first: its own extent, first in order
  auto out = b.Build();
  EXPECT_TRUE(out.warnings.empty()) << out.warnings.front();
  ASSERT_EQ(out.plan.files.size(), 1u);
  const PlanFile& f = out.plan.files[0];
  EXPECT_EQ(f.path, a);
  // One read per run of pages, at the time the run was first touched.
  EXPECT_EQ(f.extents, Extents({{13 * kPage, kPage, 40}, {0, 5 * kPage, 50}, {9 * kPage, kPage, 55}}));
  EXPECT_EQ(f.fingerprint.size, 64u * 1024);
  EXPECT_EQ(f.fingerprint.inode, test::StatFile(a).ino);
  EXPECT_EQ(out.plan.creation.syspgo_version, SYSPGO_VERSION);
}

TEST(PlanBuilder, LookupsKeepTheirFirstTimeAndSkipPathsWithNoDiskBehindThem) {
  TempDir dir;
  std::string a = dir.File("a");
  WriteFile(a, Pattern(4096, 3));
  PlanBuilder b;
  b.Add(Touch(a, 0, 1, 10));
  b.AddLookup("/usr/lib/x86_64-linux-gnu/libm.so.6", 30);
  b.AddLookup("/opt/app/lib/glibc-hwcaps/x86-64-v3/libm.so.6", 20);  // a miss of a library search
  b.AddLookup("/usr/lib/x86_64-linux-gnu/libm.so.6", 5);             // looked up again, earlier
  b.AddLookup("lib/relative.so", 1);                                 // relative to an unknown directory
  b.AddLookup("/proc/self/maps", 2);
  b.AddLookup("/sys/devices/system/cpu/online", 3);
  b.AddLookup("/dev/null", 4);
  b.AddLookup("", 6);
  auto out = b.Build();
  EXPECT_EQ(out.plan.lookups, (std::vector<PlanLookup>{{"/usr/lib/x86_64-linux-gnu/libm.so.6", 5},
                                                       {"/opt/app/lib/glibc-hwcaps/x86-64-v3/libm.so.6", 20}}));
  EXPECT_TRUE(CheckPlan(out.plan, "built").ok());
}

TEST(PlanBuilder, RangesWithinTheMergeGapAreReadAsOneWithTheGap) {
  TempDir dir;
  std::string a = dir.File("a");
  WriteFile(a, Pattern(64 * kPage, 1));
  auto build = [&](uint64_t gap) {
    PlanBuilder b;
    b.SetMergeGap(gap);
    b.Add(Touch(a, 0, kPage, 30));            // page 0
    b.Add(Touch(a, 5 * kPage, kPage, 10));    // page 5: 4 pages after page 0
    b.Add(Touch(a, 20 * kPage, kPage, 20));   // page 20: 14 pages after page 5
    return b.Build().plan.files.at(0).extents;
  };
  EXPECT_EQ(build(0), Extents({{5 * kPage, kPage, 10}, {20 * kPage, kPage, 20}, {0, kPage, 30}}));
  // A 4-page gap joins pages 0 and 5 (reading 1-4 too) at the earlier touch.
  EXPECT_EQ(build(4 * kPage), Extents({{0, 6 * kPage, 10}, {20 * kPage, kPage, 20}}));
  EXPECT_EQ(build(4 * kPage + 100), build(4 * kPage)) << "the gap is counted in whole pages";
  EXPECT_EQ(build(3 * kPage), build(0));
  EXPECT_EQ(build(14 * kPage), Extents({{0, 21 * kPage, 10}}));
  EXPECT_EQ(kPlanDefaultMergeGap, 16u * 1024);
}

TEST(PlanBuilder, OrdersFilesByFirstTouchAndInterleavesTheirExtents) {
  TempDir dir;
  std::string a = dir.File("a"), b = dir.File("b");
  WriteFile(a, Pattern(16 * kPage, 2));
  WriteFile(b, Pattern(16 * kPage, 3));
  PlanBuilder pb;
  pb.Add(Touch(a, 0, 1, 10));
  pb.Add(Touch(b, 0, 1, 5));
  pb.Add(Touch(a, 8 * kPage, 1, 20));
  pb.Add(Touch(b, 8 * kPage, 1, 15));
  Plan plan = pb.Build().plan;
  ASSERT_EQ(plan.files.size(), 2u);
  EXPECT_EQ(plan.files[0].path, b);  // first touched at 5
  EXPECT_EQ(plan.files[1].path, a);
  std::vector<std::pair<uint32_t, uint32_t>> order;
  for (auto s : ReplayOrder(plan)) order.push_back({s.file, s.extent});
  // b@5, a@10, b@15, a@20
  EXPECT_EQ(order, (std::vector<std::pair<uint32_t, uint32_t>>{{0, 0}, {1, 0}, {0, 1}, {1, 1}}));
}

TEST(PlanBuilder, AFileIsNamedByThePathOfItsFirstTouch) {
  // Two names of one inode (a hard link): the plan lists the file once,
  // under the name the program touched it by first, whatever order the
  // touches were added in.
  TempDir dir;
  std::string a = dir.File("a"), link = dir.File("link");
  WriteFile(a, Pattern(4 * kPage, 5));
  ASSERT_EQ(::link(a.c_str(), link.c_str()), 0);
  for (bool link_first : {true, false}) {
    SCOPED_TRACE(link_first ? "link touched first" : "a touched first");
    PlanBuilder pb;
    pb.SetMergeGap(0);
    pb.Add(Touch(a, 2 * kPage, 1, link_first ? 30 : 10));
    pb.Add(Touch(link, 0, 1, 20));
    pb.Add(Touch(a, kPage, 0, 1));  // empty: no touch, and no name
    Plan plan = pb.Build().plan;
    ASSERT_EQ(plan.files.size(), 1u);
    EXPECT_EQ(plan.files[0].path, link_first ? link : a);
    EXPECT_EQ(plan.files[0].extents.size(), 2u);
  }
}

// The access order is sorted after reading: rows come from four tables,
// each in the order the collector wrote them. Here they are inserted out of
// time order. At one time, touches go by file (dev, inode), then offset.
// Touches before the command's start, and the root's touches before its
// exec of files the exec does not load, are not the command's.
TEST(AccessOrder, TouchesAreInTimeOrderWhateverOrderTheTablesHold) {
  TempDir dir;
  auto db = OpenProfileDb(dir.File("run.db"), DbMode::kCreateOrAppend);
  ASSERT_TRUE(db.ok()) << db.error().message;
  Status st = db->Exec(R"sql(
INSERT INTO run (id, command, argv_json, target_pid, attached, host, kernel_release, syspgo_version,
                 start_realtime_ns, start_monotonic_ns, command_start_ts, status)
  VALUES (1, 'x', '["x"]', 100, 0, 'h', 'k', 'v', 0, 0, 1000, 'complete');
INSERT INTO exec (run_id, ts, pid, tid, filename, argv) VALUES (1, 2000, 100, 100, '/nonexistent/x', 'x');
INSERT INTO file (run_id, dev, ino, path) VALUES (1, 1, 10, '/a'), (1, 1, 20, '/b');
INSERT INTO page_cache (run_id, ts, op, pid, tid, comm, dev, ino, idx, pages, task_cgroup, page_cgroup, why, stack_id)
  VALUES (1, 9000, 1, 101, 101, 'x', 1, 20, 5, 1, 0, 0, 1, 0),
         (1, 5000, 1, 101, 101, 'x', 1, 10, 0, 1, 0, 0, 1, 0),
         (1, 500, 1, 101, 101, 'x', 1, 10, 7, 1, 0, 0, 1, 0),
         (1, 1500, 1, 100, 100, 'x', 1, 10, 9, 1, 0, 0, 1, 0);
INSERT INTO file_io (run_id, ts, dur, pid, tid, nr, fd, dev, ino, kind, pos, req, ret)
  VALUES (1, 5000, 10, 101, 101, 17, 3, 1, 20, 32768, 0, 100, 100),
         (1, 5000, 10, 101, 101, 17, 4, 1, 10, 32768, 8192, 100, 100);
INSERT INTO page_fault (run_id, ts, pid, tid, addr, ip, error_code, dev, ino, pgoff, vm_start, vm_flags,
                        major, filemap, around_first, around_last)
  VALUES (1, 3000, 101, 101, 8192, 4096, 4, 1, 20, 2, 0, 1, 1, 1, 0, 3);
)sql");
  ASSERT_TRUE(st.ok()) << st.error().message;
  auto order = FileAccessOrder(*db, 1);
  ASSERT_TRUE(order.ok()) << order.error().message;
  ASSERT_EQ(order->files.size(), 2u);
  EXPECT_EQ(order->files[0].path, "/b") << "first touched at 2000 ns";
  EXPECT_EQ(order->files[1].path, "/a");
  std::string got;
  for (const FileTouch& t : order->touches)
    got += std::to_string(t.ts_ns) + " " + order->files[t.file].path + " " + t.source + " " + std::to_string(t.offset) +
           "+" + std::to_string(t.length) + "\n";
  EXPECT_EQ(got,
            "2000 /b a 0+16384\n"
            "2000 /b f 8192+4096\n"
            "4000 /a p 0+4096\n"
            "4000 /a r 8192+100\n"
            "4000 /b r 0+100\n"
            "8000 /b p 20480+4096\n");
  EXPECT_EQ(order->reads, 2u);
  EXPECT_EQ(order->faults, 1u);
  EXPECT_EQ(order->around, 1u);
  EXPECT_EQ(order->additions, 2u);
  EXPECT_TRUE(order->unnamed.empty());
}

// A query over one run's rows scans the table when the database holds that
// run alone, and goes through the run_id index when it holds others too.
TEST(RunTables, ScanTheTableWhenTheDatabaseHoldsOneRun) {
  TempDir dir;
  auto db = OpenProfileDb(dir.File("run.db"), DbMode::kCreateOrAppend);
  ASSERT_TRUE(db.ok()) << db.error().message;
  auto add_run = [&](int id) {
    return db->Exec("INSERT INTO run (id, command, argv_json, target_pid, attached, host, kernel_release, "
                    "syspgo_version, start_realtime_ns, start_monotonic_ns, status) VALUES (" +
                    std::to_string(id) + ", 'x', '[\"x\"]', 1, 0, 'h', 'k', 'v', 0, 0, 'complete')");
  };
  auto plan = [&](const std::string& sql) {
    auto st = db->Prepare("EXPLAIN QUERY PLAN " + sql);
    std::string out;
    if (!st.ok()) return st.error().message;
    Status err;
    while (st->Step(&err)) out += st->Text(3) + "\n";
    return out;
  };
  const std::string sql = "SELECT ts FROM {page_cache} WHERE run_id = 1 ORDER BY ts";
  ASSERT_TRUE(add_run(1).ok());
  std::string one = data::WithRunTables(*db, sql);
  EXPECT_EQ(one, "SELECT ts FROM page_cache NOT INDEXED WHERE run_id = 1 ORDER BY ts");
  EXPECT_NE(plan(one).find("SCAN page_cache"), std::string::npos) << plan(one);
  ASSERT_TRUE(add_run(2).ok());
  std::string two = data::WithRunTables(*db, sql);
  EXPECT_EQ(two, "SELECT ts FROM page_cache WHERE run_id = 1 ORDER BY ts");
  EXPECT_NE(plan(two).find("INDEX page_cache_by_page"), std::string::npos) << plan(two);
  EXPECT_EQ(data::WithRunTables(*db, "SELECT 1 FROM {page_fault}, {page_cache}"),
            "SELECT 1 FROM page_fault, page_cache");
}

TEST(PlanBuilder, ClampsToTheFileAndLeavesOutReplacedAndMissingFiles) {
  TempDir dir;
  std::string small = dir.File("small"), gone = dir.File("gone"), swapped = dir.File("swapped");
  WriteFile(small, Pattern(5000, 4));
  WriteFile(gone, "x");
  WriteFile(swapped, "y");
  PlanBuilder b;
  b.Add(Touch(small, 0, 1 << 20, 1));  // 1 MiB read of a 5000-byte file
  b.Add(Touch(small, 1 << 20, 4096, 2));  // wholly beyond the end
  b.Add(Touch(gone, 0, 1, 3));
  TouchRecord old = Touch(swapped, 0, 1, 4);
  old.ino += 1000;  // the profile saw another file under this name
  b.Add(old);
  ASSERT_EQ(unlink(gone.c_str()), 0);
  auto out = b.Build();
  ASSERT_EQ(out.plan.files.size(), 1u);
  EXPECT_EQ(out.plan.files[0].extents, Extents({{0, 2 * kPage, 1}}));
  ASSERT_EQ(out.warnings.size(), 2u);
  std::string all = out.warnings[0] + "\n" + out.warnings[1];
  EXPECT_NE(all.find("left out " + gone + ": cannot open"), std::string::npos) << all;
  EXPECT_NE(all.find("left out " + swapped), std::string::npos) << all;
  EXPECT_NE(all.find("replaced after the profile was recorded"), std::string::npos) << all;
}

// ---- Fingerprints -----------------------------------------------------------

// The checksum exactly as the schema defines it, written independently.
uint64_t SpecChecksum(const std::string& bytes) {
  uint64_t blocks = (bytes.size() + kPage - 1) / kPage, h = 0xcbf29ce484222325ULL;
  for (uint64_t i = 0; i < std::min<uint64_t>(blocks, 8); ++i) {
    uint64_t b = blocks <= 8 ? i : i * (blocks - 1) / 7;
    for (uint64_t p = b * kPage; p < std::min<uint64_t>(bytes.size(), (b + 1) * kPage); ++p)
      h = (h ^ static_cast<unsigned char>(bytes[p])) * 0x100000001b3ULL;
  }
  return h;
}

TEST(Fingerprint, ChecksumFollowsTheSchemaDefinition) {
  TempDir dir;
  for (size_t size : {size_t{0}, size_t{100}, 3 * kPage, 8 * kPage + 1, 100 * kPage + 100}) {
    std::string path = dir.File("f" + std::to_string(size)), bytes = Pattern(size, 5);
    WriteFile(path, bytes);
    auto fp = ComputeFingerprint(path);
    ASSERT_TRUE(fp.ok()) << fp.error().message;
    EXPECT_EQ(fp->checksum, SpecChecksum(bytes)) << "size " << size;
    EXPECT_EQ(fp->size, size);
  }
  EXPECT_EQ(ComputeFingerprint(dir.File("f0"))->checksum, 0xcbf29ce484222325ULL);
}

TEST(Fingerprint, SampledContentChangeIsDetectedEvenWithSizeAndMtimeKept) {
  TempDir dir;
  std::string path = dir.File("f"), bytes = Pattern(100 * kPage, 6);
  WriteFile(path, bytes);
  auto before = ComputeFingerprint(path);
  ASSERT_TRUE(before.ok());
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  bytes[14 * kPage + 7] ^= 0x5a;  // block 14 = floor(1 * 99 / 7), a sampled block
  WriteFile(path, bytes);
  timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  auto after = ComputeFingerprint(path);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->size, before->size);
  EXPECT_EQ(after->mtime_ns, before->mtime_ns);
  EXPECT_NE(after->checksum, before->checksum);
  EXPECT_EQ(DescribeMismatch(before.value(), after.value()), "sampled contents changed");
  EXPECT_EQ(DescribeMismatch(before.value(), before.value()), "");
}

// ---- Storing ----------------------------------------------------------------

Plan SamplePlan() {
  Plan p;
  p.creation = {"9.9.9", "host-a", {3, 7}, 2};
  p.files.push_back({"/opt/app/lib/libbig.so", {1ULL << 40, -12345, 99, 2049, 0xfeedfacecafebeefULL, 1700000000987654321},
                     {{0, 8 * kPage, 0}, {16 * kPage, kPage, 1000000}, {(1ULL << 39), kPage, 1000000}}});
  p.files.push_back({"/opt/app/data/a b\u00e9", {5000, 1700000000123456789, 12, 2049, 1},
                     {{0, 2 * kPage, 5}}});
  p.lookups = {{"/opt/app/bin/app", 0}, {"/opt/app/lib/libbig.so", 7}, {"/opt/app/lib/tls/libbig.so", 7}};
  return p;
}

TEST(PlanFile, RoundTripsExactlyAndDeterministically) {
  TempDir dir;
  Plan p = SamplePlan();
  ASSERT_TRUE(CheckPlan(p, "sample").ok()) << CheckPlan(p, "sample").error().message;
  std::string path = dir.File("app.plan");
  ASSERT_TRUE(WritePlan(p, path).ok());
  auto back = ReadPlan(path);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value(), p);
  std::string first = ReadAll(path);
  ASSERT_TRUE(WritePlan(back.value(), path).ok());
  EXPECT_EQ(ReadAll(path), first);
  EXPECT_EQ(first.substr(0, 8), "SYSPGOPF");
}

// Writes `bytes` as a plan file and returns the error ReadPlan gives for it.
std::string ReadError(const TempDir& dir, const std::string& name, const std::string& bytes) {
  std::string path = dir.File(name);
  WriteFile(path, bytes);
  auto r = ReadPlan(path);
  EXPECT_FALSE(r.ok()) << name << " was accepted";
  if (r.ok()) return "";
  EXPECT_NE(r.error().message.find(path), std::string::npos) << r.error().message;
  return r.error().message;
}

TEST(PlanFile, DamagedFilesAreRefusedWithAClearError) {
  TempDir dir;
  std::string good = SerializePlan(SamplePlan());
  EXPECT_NE(ReadError(dir, "garbage", "#!/bin/sh\necho this is not a plan\n").find(
                "is not a syspgo prefetch plan (it does not start with \"SYSPGOPF\")"),
            std::string::npos);
  EXPECT_NE(ReadError(dir, "empty", "").find("is empty"), std::string::npos);
  std::string cut = ReadError(dir, "cut", good.substr(0, good.size() - 7));
  EXPECT_NE(cut.find("is truncated: its header announces " + std::to_string(good.size() - 32) +
                     " bytes of plan data but only " + std::to_string(good.size() - 39) + " follow"),
            std::string::npos)
      << cut;
  EXPECT_NE(ReadError(dir, "cut-header", good.substr(0, 20)).find("is truncated: it ends inside the 32-byte header"),
            std::string::npos);
  EXPECT_NE(ReadError(dir, "cut-magic", good.substr(0, 5)).find("truncated"), std::string::npos);
  std::string flipped = good;
  flipped[40] ^= 1;
  EXPECT_NE(ReadError(dir, "flipped", flipped).find("is corrupted: the checksum"), std::string::npos);
  EXPECT_NE(ReadError(dir, "long", good + "x").find("is corrupted: unexpected bytes follow the"), std::string::npos);
  std::string huge = good;
  huge[23] = 0x7f;  // announces about 2^62 bytes; must not try to read them
  EXPECT_NE(ReadError(dir, "huge", huge).find("more than any plan holds"), std::string::npos);
  std::string newer = good;
  newer[8] = 2;
  EXPECT_NE(ReadError(dir, "newer", newer).find("container version 2, which this syspgo"), std::string::npos);

  Plan overlap = SamplePlan();
  overlap.files[0].extents.push_back({4 * kPage, kPage, 2000000});
  EXPECT_NE(ReadError(dir, "overlap", SerializePlan(overlap)).find("has overlapping extents"), std::string::npos);
  Plan relative = SamplePlan();
  relative.lookups[1].path = "lib/tls/libbig.so";
  EXPECT_NE(ReadError(dir, "relative", SerializePlan(relative)).find("lookup #1 (lib/tls/libbig.so) is not an absolute path"),
            std::string::npos);
  Plan twice = SamplePlan();
  twice.lookups.push_back({"/opt/app/bin/app", 9});
  EXPECT_NE(ReadError(dir, "twice", SerializePlan(twice)).find("lookup #3 (/opt/app/bin/app) is listed twice"),
            std::string::npos);
  Plan unordered = SamplePlan();
  std::swap(unordered.lookups[1], unordered.lookups[2]);  // same time: ties go by path
  EXPECT_NE(ReadError(dir, "unordered", SerializePlan(unordered)).find("is out of first-lookup order"),
            std::string::npos);
  Plan future = SamplePlan();
  future.format_version = 2;
  EXPECT_NE(ReadError(dir, "future", SerializePlan(future)).find("format version 2"), std::string::npos);
  EXPECT_FALSE(WritePlan(overlap, dir.File("never")).ok());
  EXPECT_NE(access(dir.File("never").c_str(), F_OK), 0);
  auto missing = ReadPlan(dir.File("no-such.plan"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot open plan " + dir.File("no-such.plan")), std::string::npos);
}

// ---- Merging ----------------------------------------------------------------

PlanFile File(const std::string& path, std::vector<PlanExtent> extents, uint64_t checksum = 1) {
  return {path, {1 << 20, 1, 2, 3, checksum}, std::move(extents)};
}

TEST(MergePlans, UnionsRangesOnceAndOrdersByMedianFirstTouch) {
  Plan p1, p2;
  p1.creation = {"0.1.0", "host-b", {4}, 1};
  p2.creation = {"0.1.0", "host-a", {2}, 1};
  p1.files = {File("/b", {{0, kPage, 50}}), File("/a", {{2 * kPage, kPage, 100}, {0, kPage, 300}})};
  p2.files = {File("/c", {{0, kPage, 10}}), File("/a", {{0, kPage, 100}, {4 * kPage, kPage, 200}})};
  auto m = MergePlans({p1, p2});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->files.size(), 3u);
  EXPECT_EQ(m->files[0].path, "/c");
  EXPECT_EQ(m->files[1].path, "/b");
  EXPECT_EQ(m->files[2].path, "/a");
  // Page 0 of /a: 300 and 100 -> median 200; each range appears once.
  EXPECT_EQ(m->files[2].extents, Extents({{2 * kPage, kPage, 100}, {0, kPage, 200}, {4 * kPage, kPage, 200}}));
  EXPECT_EQ(m->Bytes(), 5 * kPage);
  EXPECT_EQ(m->creation.merged_runs, 2u);
  EXPECT_EQ(m->creation.source_run_ids, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(m->creation.host, "host-a,host-b");
  EXPECT_TRUE(CheckPlan(m.value(), "merged").ok());
}

TEST(MergePlans, MedianIgnoresAnOutlierRunAndSelfMergeIsIdentity) {
  Plan p1, p2, p3;
  p1.files = {File("/x", {{0, kPage, 10}}), File("/y", {{0, kPage, 15}})};
  p2.files = {File("/x", {{0, kPage, 1000}}), File("/y", {{0, kPage, 15}})};
  p3.files = {File("/x", {{0, kPage, 20}}), File("/y", {{0, 2 * kPage, 15}})};
  auto m = MergePlans({p1, p2, p3});
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->files.size(), 2u);
  EXPECT_EQ(m->files[0].path, "/y");  // 15 < median(10, 1000, 20); the earliest run (10) would put /x first
  EXPECT_EQ(m->files[1].extents, Extents({{0, kPage, 20}}));  // not the mean, 343
  EXPECT_EQ(m->files[0].extents, Extents({{0, 2 * kPage, 15}}));
  EXPECT_EQ(m->creation.merged_runs, 3u);

  Plan one = SamplePlan();
  auto self = MergePlans({one, one});
  ASSERT_TRUE(self.ok());
  EXPECT_EQ(self->files, one.files);
  EXPECT_FALSE(MergePlans({}).ok());
}

TEST(MergePlans, KeepsOnlyRangesThatDescribeTheNewestContents) {
  Plan older, newer;
  older.files = {File("/f", {{0, kPage, 5}}, /*checksum=*/111)};
  newer.files = {File("/f", {{8 * kPage, kPage, 7}}, /*checksum=*/222)};
  auto m = MergePlans({older, newer});
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->files.size(), 1u);
  EXPECT_EQ(m->files[0].fingerprint.checksum, 222u);
  EXPECT_EQ(m->files[0].extents, Extents({{8 * kPage, kPage, 7}}));
  // A ctime alone (a chmod between the runs) is the same contents: both
  // plans' ranges, and the newer fingerprint.
  older.files[0].fingerprint.checksum = 222;
  newer.files[0].fingerprint.ctime_ns = 99;
  m = MergePlans({older, newer});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->files[0].extents, Extents({{0, kPage, 5}, {8 * kPage, kPage, 7}}));
  EXPECT_EQ(m->files[0].fingerprint.ctime_ns, 99);
}

TEST(MergePlans, LookupsAreTheUnionAtTheirMedianTime) {
  Plan p1, p2, p3;
  p1.files = p2.files = p3.files = {File("/x", {{0, kPage, 10}})};
  p1.lookups = {{"/a", 10}, {"/b", 40}};
  p2.lookups = {{"/b", 20}};
  p3.lookups = {{"/a", 30}, {"/b", 30}, {"/c", 25}};
  auto m = MergePlans({p1, p2, p3});
  ASSERT_TRUE(m.ok()) << m.error().message;
  // /a: 10 and 30 -> 20; /b: 20, 30, 40 -> 30; /c only in one plan.
  EXPECT_EQ(m->lookups, (std::vector<PlanLookup>{{"/a", 20}, {"/c", 25}, {"/b", 30}}));
  EXPECT_TRUE(CheckPlan(m.value(), "merged").ok());
  // A plan written before lookups existed merges as one with none.
  p1.lookups.clear();
  m = MergePlans({p1});
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->lookups.empty());
}

TEST(PlanJson, ListsFilesFingerprintsAndExtents) {
  std::string text = PlanJson(SamplePlan());
  auto j = nlohmann::json::parse(text, nullptr, false);
  ASSERT_TRUE(j.is_object()) << text;
  EXPECT_EQ(j["host"], "host-a");
  EXPECT_EQ(j["merged_runs"], 2);
  EXPECT_EQ(j["source_run_ids"], nlohmann::json::array({3, 7}));
  const nlohmann::json* big = nullptr;
  for (const auto& f : j["files"])
    if (f["path"] == "/opt/app/lib/libbig.so") big = &f;
  ASSERT_NE(big, nullptr) << text;
  EXPECT_EQ((*big)["size"], 1099511627776);
  EXPECT_EQ((*big)["mtime_ns"], -12345);
  EXPECT_EQ((*big)["inode"], 99);
  EXPECT_EQ((*big)["device"], 2049);
  EXPECT_EQ((*big)["ctime_ns"], 1700000000987654321);
  EXPECT_EQ((*big)["sample_checksum"], "feedfacecafebeef");
  EXPECT_EQ((*big)["bytes"], 40960);
  nlohmann::json far = {{"offset", 549755813888}, {"length", 4096}, {"first_touch_ns", 1000000}};
  EXPECT_NE(std::find((*big)["extents"].begin(), (*big)["extents"].end(), far), (*big)["extents"].end()) << text;
  ASSERT_FALSE(j["lookups"].empty());
  EXPECT_EQ(j["lookups"][0], nlohmann::json({{"path", "/opt/app/bin/app"}, {"first_touch_ns", 0}}));
}

// ---- Deploy lists -----------------------------------------------------------

Plan DeployPlan(const std::string& root) {
  Plan p;
  for (std::string rel : {"bin/app", "lib/libx.so", "OUTSIDE", "data/with space", "#hash", "back\\slash",
                          "tab\there", "new\nline"}) {
    std::string path = rel == "OUTSIDE" ? "/usr/lib/outside.so" : root + "/" + rel;
    p.files.push_back(File(path, {{0, kPage, p.files.size()}}));
  }
  return p;
}

TEST(DeployLists, SquashfsSortFileHasTheExactFormat) {
  auto l = SquashfsSortList(DeployPlan("/srv/root"), "/srv/root/");
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ(l->text,
            "bin/app 32767\n"
            "lib/libx.so 32766\n"
            "data/with\\ space 32765\n"
            "\\#hash 32764\n"
            "back\\\\slash 32763\n"
            "tab\\\there 32762\n");
  EXPECT_EQ(l->listed, 6u);
  EXPECT_EQ(l->left_out,
            (std::vector<std::string>{"/usr/lib/outside.so: not under /srv/root/",
                                      "/srv/root/new\nline: the name contains a newline"}));
  auto relative = SquashfsSortList(DeployPlan("/srv/root"), "srv/root");
  ASSERT_FALSE(relative.ok());
  EXPECT_NE(relative.error().message.find("'srv/root' must be an absolute path"), std::string::npos);
}

TEST(DeployLists, SortPrioritiesStayAboveUnlistedFiles) {
  Plan p;
  for (int i = 0; i < 40000; ++i) p.files.push_back(File("/r/f" + std::to_string(i), {{0, kPage, uint64_t(i)}}));
  auto l = SquashfsSortList(p, "/r");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->text.substr(0, 12), "f0 32767\nf1 ");
  EXPECT_NE(l->text.find("\nf32766 1\nf32767 1\n"), std::string::npos);
  EXPECT_EQ(l->text.substr(l->text.size() - 9), "f39999 1\n");
}

TEST(DeployLists, PrefetchListHasAbsolutePathsInFirstTouchOrder) {
  auto in_image = PrefetchPathList(DeployPlan("/srv/root"), "/srv/root");
  ASSERT_TRUE(in_image.ok());
  EXPECT_EQ(in_image->text, "/bin/app\n/lib/libx.so\n/data/with space\n/#hash\n/back\\slash\n/tab\there\n");
  auto host = PrefetchPathList(DeployPlan("/srv/root"));
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->text,
            "/srv/root/bin/app\n/srv/root/lib/libx.so\n/usr/lib/outside.so\n/srv/root/data/with space\n"
            "/srv/root/#hash\n/srv/root/back\\slash\n/srv/root/tab\there\n");
  EXPECT_EQ(host->left_out.size(), 1u);
}

// The real consumer: mksquashfs must accept the sort file and place the
// listed files first, in plan order (checked in an uncompressed image).
TEST(DeployLists, MksquashfsAcceptsTheSortFileAndHonoursTheOrder) {
  TempDir dir;
  std::string src = dir.File("src");
  ASSERT_EQ(mkdir(src.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((src + "/sub dir").c_str(), 0755), 0);
  // Named so that the directory order differs from the plan order.
  std::vector<std::string> order = {"zz_first", "sub dir/#second", "aa_third"};
  PlanBuilder b;
  for (size_t i = 0; i < order.size(); ++i) {
    WriteFile(src + "/" + order[i], Pattern(3000, 10 + i) + "<marker-" + std::to_string(i) + ">");
    b.Add(Touch(src + "/" + order[i], 0, 1, 100 * (i + 1)));
  }
  WriteFile(src + "/unlisted", Pattern(3000, 20) + "<marker-unlisted>");
  auto list = SquashfsSortList(b.Build().plan, src);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->listed, 3u);
  std::string sort = dir.File("sort.txt"), img = dir.File("out.img");
  WriteFile(sort, list->text);
  auto r = test::RunCmd({"mksquashfs", src, img, "-sort", sort, "-noappend", "-noI", "-noD", "-noF", "-noX",
                      "-no-fragments", "-no-progress", "-quiet"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_EQ(r.err.find("Cannot stat sortlist entry"), std::string::npos) << r.err;
  std::string image = ReadAll(img);
  std::vector<size_t> at;
  for (std::string m : {"<marker-0>", "<marker-1>", "<marker-2>", "<marker-unlisted>"}) at.push_back(image.find(m));
  for (size_t i = 0; i < at.size(); ++i) ASSERT_NE(at[i], std::string::npos) << i;
  EXPECT_LT(at[0], at[1]);
  EXPECT_LT(at[1], at[2]);
  EXPECT_LT(at[2], at[3]);
}

// A plan recorded in a directory, moved to where the directory's image is
// mounted: each file is fingerprinted at its new place (its own device and
// inode), kept only with the same bytes; files elsewhere stay as they were.
TEST(DeployLists, RelocateMovesFilesUnderTheRootAndChecksTheirBytes) {
  TempDir dir;
  std::string from = dir.File("root"), to = dir.File("mnt"), other = dir.File("host.so");
  for (const std::string& d : {from, to}) ASSERT_EQ(mkdir(d.c_str(), 0755), 0);
  PlanBuilder b;
  for (const char* name : {"same", "changed", "missing"}) {
    WriteFile(from + "/" + name, Pattern(20000, 5));
    b.Add(Touch(from + "/" + name, 0, 1, 10 + b.Build().plan.files.size()));
  }
  WriteFile(other, Pattern(8000, 6));
  b.Add(Touch(other, 4096, 1, 20));
  b.AddLookup(from + "/same", 5);
  b.AddLookup("/etc/hosts", 6);
  Plan recorded = b.Build().plan;
  ASSERT_EQ(recorded.files.size(), 4u);
  WriteFile(to + "/same", Pattern(20000, 5));
  WriteFile(to + "/changed", Pattern(20000, 7));

  auto r = RelocatePlan(recorded, from + "/", to);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->moved, 1u);
  std::map<std::string, const PlanFile*> by_path;
  for (const PlanFile& f : r->plan.files) by_path[f.path] = &f;
  ASSERT_EQ(by_path.size(), 2u);
  ASSERT_EQ(by_path.count(to + "/same"), 1u);
  auto fp = ComputeFingerprint(to + "/same");
  ASSERT_TRUE(fp.ok());
  EXPECT_TRUE(SameContents(by_path[to + "/same"]->fingerprint, *fp)) << "fingerprinted where it is now";
  ASSERT_EQ(by_path.count(other), 1u);
  EXPECT_EQ(*by_path[other], recorded.files.back()) << "a file outside the root stays as it was";
  ASSERT_EQ(r->left_out.size(), 2u);
  EXPECT_EQ(r->left_out[0].rfind(to + "/changed: not the same contents as " + from + "/changed", 0), 0u)
      << r->left_out[0];
  EXPECT_EQ(r->left_out[1].rfind(to + "/missing: ", 0), 0u) << r->left_out[1];
  ASSERT_EQ(r->plan.lookups.size(), 2u);
  EXPECT_EQ(r->plan.lookups[0].path, to + "/same");
  EXPECT_EQ(r->plan.lookups[1].path, "/etc/hosts");
  EXPECT_FALSE(RelocatePlan(recorded, "root", to).ok());
}

}  // namespace
}  // namespace syspgo
