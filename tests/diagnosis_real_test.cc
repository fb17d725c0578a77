//===- diagnosis_real_test.cc - diagnoses of real programs from Debian -----===//
// Programs nobody tuned syspgo for, recorded as a user would: a training
// loop on Debian's PyTorch and a parallel build of a Debian source
// package. What each really does was measured without syspgo (time, /proc,
// a timing wrapper around the compiler, torch.profiler); the tests check
// that the findings say that, name processes as processes, share no more
// than the run, and claim nothing else. The build's source comes from
// `apt-get source` at run time (deb-src, scripts/setup.sh); without it the
// test fails and says how to get it.
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "common/util.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

using nlohmann::json;

json Stalls(const std::string& db, std::string* text) {
  CmdResult t = RunCmd({SyspgoBin(), "analyze", db, "stalls"});
  EXPECT_EQ(t.status, 0) << t.err;
  std::cout << t.out;
  *text = t.out;
  CmdResult j = RunCmd({SyspgoBin(), "analyze", db, "stalls", "--json"});
  EXPECT_EQ(j.status, 0) << j.err;
  return json::parse(j.out);
}

// Every line of a text answer fits a terminal, and no share exceeds the run.
void ExpectReadable(const std::string& text, const json& d) {
  for (const std::string& line : Split(text, '\n')) EXPECT_LE(line.size(), 120u) << line;
  for (const json& f : d["findings"]) EXPECT_LE(f["share"].get<double>(), 1.0) << f["title"];
}

// The findings that matter: at least 1% of the run, and about more than a
// CPU the machine did not give (a busy machine preempts any program; that
// is not the program's doing, so the tests count the others).
constexpr double kMatters = 0.01;
std::vector<json> Matter(const json& d) {
  std::vector<json> out;
  for (const json& f : d["findings"])
    if (f["detail"]["cause"] != "cpu" && f["share"].get<double>() >= kMatters) out.push_back(f);
  return out;
}

std::set<std::string> Binaries(const json& work) {
  std::set<std::string> out;
  for (const json& b : work["binaries"]) out.insert(b["binary"].get<std::string>());
  return out;
}

// Measured (/proc, torch.profiler): the command's main thread runs the
// training on its CPU, about nine tenths of it in matrix products (aten::mm
// and addmm, Debian's BLAS sgemm_ under libtorch); the DataLoader's two
// workers are child processes (ppid = the command) that use little CPU
// and mostly wait for the main thread to take their batches; nothing is
// read or written but the libraries. The command's queue feeder threads
// wait for the main thread too: one cause with the workers, one finding.
TEST(DiagnosisReal, TorchTrainingLoop) {
  CmdResult torch = RunCmd({"/usr/bin/python3", "-c", "import torch"});
  ASSERT_EQ(torch.status, 0) << "python3-torch is not installed; run scripts/test-setup.sh\n" << torch.err;
  // What the run reads in the page cache, as after any earlier run (other
  // suites drop the cache, and DAMON pages it out): the waits on the disk
  // of a first start are another scenario. A short run of the same loop
  // first, not an import alone: training faults in pages of libtorch an
  // import does not, and only the workers load the DataLoader's modules.
  DamonPaused damon;
  const std::string train = std::string(SYSPGO_SOURCE_DIR) + "/tests/workloads/torch_train.py";
  CmdResult warm = RunCmd({"/usr/bin/python3", train, "10"});
  ASSERT_EQ(warm.status, 0) << warm.err;
  TempDir dir;
  std::string db = dir.File("run.db");
  CmdResult c = RunCmd({SyspgoBin(), "collect", "-o", db, "--", "/usr/bin/python3", train, "60"});
  ASSERT_EQ(c.status, 0) << c.err << c.out;
  std::string text;
  json d = Stalls(db, &text);
  ExpectReadable(text, d);
  const int64_t command = d["command_path"]["tid"];

  // What bounds the command: its own work, broken down by function, most
  // of it in the BLAS or libtorch.
  const json* work = nullptr;
  for (const json& r : d["command_path"]["roots"]) {
    if (r["kind"] == "cpu") continue;  // the first root that is not a CPU the machine withheld
    if (r["kind"] == "work" && r["tid"] == command) work = &r["work"];
    break;
  }
  ASSERT_NE(work, nullptr) << d["command_path"].dump(1);
  ASSERT_FALSE((*work)["functions"].empty()) << work->dump(1);
  std::string top = (*work)["functions"][0]["binary"];
  EXPECT_TRUE(top.find("blas") != std::string::npos || top.find("torch") != std::string::npos) << work->dump(1);
  bool libtorch = false;
  for (const std::string& b : Binaries(*work)) libtorch = libtorch || b.starts_with("libtorch");
  EXPECT_TRUE(libtorch) << work->dump(1);
  EXPECT_NE(text.find("sgemm"), std::string::npos) << "the matrix products are named";

  // The findings: the workers wait for the command's work; they are
  // processes, never threads of the command, and nothing waits on a disk.
  std::vector<json> found = Matter(d);
  ASSERT_EQ(found.size(), 1u) << text;
  const json& first = found.front();
  EXPECT_EQ(first["detail"]["roots"][0]["kind"], "work") << first.dump(1);
  EXPECT_FALSE(first["detail"]["roots"][0]["work"]["functions"].empty()) << first.dump(1);
  bool workers = false;
  for (const json& f : d["findings"]) {
    std::set<int64_t> pids(f["detail"]["pids"].begin(), f["detail"]["pids"].end());
    if (pids.size() > 1) {
      EXPECT_FALSE(pids.count(command)) << "the command's finding has its workers in it: " << f.dump(1);
      EXPECT_TRUE(f["facts"].contains("processes")) << f.dump(1);
      workers = true;
    }
  }
  // Where the command's own threads wait longest, the workers are a stall
  // too of their finding, named there as processes.
  EXPECT_TRUE(workers || text.find("child of python3") != std::string::npos ||
              text.find("python3 (2 processes)") != std::string::npos)
      << text;
  // The command's work is the command's, not its workers' (a fork has the
  // same argv: it is named by its pid).
  EXPECT_EQ(text.find("torch_train.py 100.0%"), std::string::npos) << text;
}

// Measured (a timing wrapper as CC): zlib's `make -j2` runs 34 compiles
// (17 sources, as static and as shared objects) two at a time and 6 short
// links; user CPU time is the compilers' (cc1), the longest compiles are
// deflate.c and inflate.c, then trees.c; make waits for gcc, gcc for cc1.
// Nothing waits on the disk (the sources are in the page cache).
TEST(DiagnosisReal, ParallelBuild) {
  DamonPaused damon;
  TempDir dir;
  CmdResult src = Sh("cd " + dir.path() + " && apt-get source -q zlib 2>&1 && cd zlib-*/ && ./configure 2>&1");
  ASSERT_EQ(src.status, 0) << "cannot fetch and configure Debian's zlib source (apt-get source needs deb-src, "
                              "which scripts/setup.sh enables, and deb.debian.org):\n"
                           << src.out;
  CmdResult where = Sh("cd " + dir.path() + " && ls -d zlib-*/");
  std::string tree = dir.path() + "/" + where.out.substr(0, where.out.find('/'));
  // Built once and cleaned, as an edit-compile cycle finds it, so that the
  // run is the compiles and not a first read of what a build reads: the
  // sources, the system headers they include, the compiler, the linker
  // plugins ar and ld load (LLVM's, with libLLVM behind it). Other suites
  // drop the page cache; a header read from disk is a finding of its own.
  CmdResult warm = Sh("make -C " + tree + " -j2 >/dev/null 2>&1 && make -C " + tree + " clean >/dev/null 2>&1");
  ASSERT_EQ(warm.status, 0) << warm.out;
  std::string db = dir.File("run.db");
  // The compiler's temporary files on a tmpfs, as /tmp is on many
  // systems: the disk here is shared with other suites, whose I/O would
  // add waits to the build that are not its own doing.
  CmdResult c = Sh("TMPDIR=/dev/shm " + SyspgoBin() + " collect -o " + db + " -- make -C " + tree + " -j2 2>&1");
  ASSERT_EQ(c.status, 0) << c.out;
  std::string text;
  json d = Stalls(db, &text);
  ExpectReadable(text, d);

  // One finding that matters: the waits of make and the compiler drivers
  // all come down to the compilers' work on a CPU, named by source file.
  std::vector<json> found = Matter(d);
  ASSERT_EQ(found.size(), 1u) << text;
  const json& f = found.front();
  const json& root = f["detail"]["roots"][0];
  EXPECT_EQ(root["kind"], "work") << f.dump(1);
  EXPECT_EQ(root["comm"], "cc1") << f.dump(1);
  const json& work = root["work"];
  EXPECT_GE(work["process_count"].get<int64_t>(), 10) << work.dump(1);
  std::set<std::string> inputs;
  for (size_t i = 0; i < work["processes"].size() && i < 4; ++i) inputs.insert(work["processes"][i]["input"]);
  EXPECT_TRUE(inputs.count("deflate.c") || inputs.count("inflate.c")) << work.dump(1);
  EXPECT_NE(text.find("deflate.c"), std::string::npos) << text;
}

}  // namespace
}  // namespace syspgo::test
