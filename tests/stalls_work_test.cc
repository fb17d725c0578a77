//===- stalls_work_test.cc - findings that come down to work, on their own -===//
// analyze/stalls_work.h and work_breakdown.h without a database: what a
// compiler's argv names, the wall time of overlapping stalls, and the
// merging of findings whose waits come down to the same work on a CPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyze/stalls_work.h"
#include "analyze/work_breakdown.h"

namespace syspgo::test {
namespace {

TEST(StallsWork, ArgvNamesTheSourceFiles) {
  EXPECT_EQ(ArgvInputs("/usr/lib/gcc/x86_64-linux-gnu/12/cc1 -quiet -I . -D HAVE_HIDDEN deflate.c -quiet -dumpbase "
                       "deflate.c -dumpbase-ext .c -O3 -o /tmp/ccx.s"),
            "deflate.c");
  EXPECT_EQ(ArgvInputs("as --64 -o deflate.o /tmp/ccx.s"), "/tmp/ccx.s");
  EXPECT_EQ(ArgvInputs("cc1 -quiet deflate.c -o /tmp/ccx.s"), "deflate.c");
  EXPECT_EQ(ArgvInputs("python3 train.py 60"), "train.py");
  EXPECT_EQ(ArgvInputs("make -j2"), "");
}

TEST(StallsWork, OverlappingStallsCountOnce) {
  // Two threads stalled at once for 10 ns, then one alone for 5.
  EXPECT_EQ(CoveredNs({{0, 10, 1}, {0, 10, 2}, {20, 5, 1}}), 15);
  EXPECT_EQ(CoveredNs({{0, 10, 1}, {5, 10, 2}}), 15);
  EXPECT_EQ(CoveredNs({}), 0);
}

FoundStall Waiting(const std::string& comm, int64_t tid, int64_t ts, int64_t dur, const std::string& root_comm) {
  FoundStall s;
  s.first.title = comm + " waits for a child process in wait4";
  s.first.count = 1;
  s.first.total_ns = s.first.worst_ns = dur;
  s.first.occurrences.push_back({ts, dur, tid});
  s.second.comm = comm;
  s.second.tids = {tid};
  s.second.main_thread = true;  // a process of its own, as make and the shells are
  RootShare r;
  r.root = {PathRoot::Kind::kWork, 100, 100, root_comm, "runs on a CPU"};
  r.ns = dur;
  r.spans.push_back({100, 100, ts, ts + dur});
  s.second.roots.push_back(r);
  return s;
}

// A parallel build: make and the shells wait for the compilers at once;
// summed, their waits are more than the run. One finding, named for the
// work, whose time is the wall time they covered.
TEST(StallsWork, WaitsForTheSameWorkAreOneFinding) {
  std::vector<FoundStall> found = {Waiting("make", 1, 0, 80, "cc1"), Waiting("sh", 2, 10, 70, "cc1"),
                                   Waiting("bash", 3, 20, 60, "cc1"), Waiting("make", 1, 90, 5, "as")};
  std::vector<FoundStall> out = MergeByWorkRoot(found, 100);
  ASSERT_EQ(out.size(), 1u);
  const Finding& f = out[0].first;
  EXPECT_EQ(f.title, "make, sh and bash wait for the work of cc1 and as on a CPU");
  EXPECT_EQ(f.count, 4);
  EXPECT_EQ(f.total_ns, 85);  // not 215
  EXPECT_DOUBLE_EQ(f.share, 0.85);
  EXPECT_EQ(out[0].second.stalls_too.size(), 3u);
  EXPECT_EQ(out[0].second.roots[0].spans.size(), 4u);
}

TEST(StallsWork, OneWaiterOfOneProgram) {
  std::vector<FoundStall> out =
      MergeByWorkRoot({Waiting("make", 1, 0, 80, "cc1"), Waiting("make", 1, 90, 5, "cc1")}, 100);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first.title, "make waits for cc1's work on a CPU");
}

TEST(StallsWork, TextNamesFunctionsAndProcesses) {
  WorkBreakdown w;
  w.ns = 1000;
  w.samples = 100;
  w.kernel_samples = 5;
  w.functions = {{"sgemm_", "libblas.so.3", 80}, {"", "cc1", 15}, {"clear_page_erms", "kernel", 5}};
  w.binaries = {{"libblas.so.3", 80}, {"cc1", 15}, {"kernel", 5}};
  w.process_count = 2;
  w.processes = {{10, "cc1", "deflate.c", 600}, {11, "python3", "", 400}};
  EXPECT_EQ(WorkFunctionsText(w), "80.0% sgemm_ (libblas.so.3), 15.0% cc1 (code without symbols), 5.0% "
                                  "clear_page_erms (kernel); by binary: libblas.so.3 80.0%, cc1 15.0%, kernel 5.0%; "
                                  "in the kernel 5.0% (100 CPU samples)");
  EXPECT_EQ(WorkProcessesText(w), "2 processes; cc1 deflate.c 60.0%, python3 (pid 11) 40.0%");
  w.programs = {{"cc1", 600}, {"python3", 400}};
  EXPECT_EQ(WorkProcessesText(w),
            "2 processes (cc1 60.0%, python3 40.0%); cc1 deflate.c 60.0%, python3 (pid 11) 40.0%");
  EXPECT_EQ(WorkJson(w)["functions"][0]["function"], "sgemm_");
}

}  // namespace
}  // namespace syspgo::test
