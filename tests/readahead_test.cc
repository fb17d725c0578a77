//===- readahead_test.cc - readahead plans, made and applied -------------===//
// On the real kernel and disk: a program maps a 16 MiB file and touches four
// scattered pages of it, and reads a second file front to back. Recorded by
// the collector, `optimize --emit readahead` advises the first random and
// the second sequential. Then `syspgo prefetch --readahead` runs the same
// program with that plan: the kernel reads the four pages of the mapped file
// and hardly more, where without the plan each fault reads a readahead
// window around it. A plan the shim cannot parse changes nothing, and a file
// that is no plan at all is refused with a warning; the program runs either
// way.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace syspgo::test {
namespace {

constexpr uint64_t kPage = 4096;

void Evict(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  fdatasync(fd);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
}

std::string MakeFile(const TempDir& dir, const std::string& name, int mib) {
  std::string path = dir.File(name);
  EXPECT_EQ(Sh("head -c " + std::to_string(mib << 20) + " /dev/urandom > " + path + " && sync " + path).status, 0);
  Evict(path);
  return path;
}

// Pages of `path` in the page cache.
uint64_t Resident(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat sb {};
  fstat(fd, &sb);
  size_t pages = (static_cast<size_t>(sb.st_size) + kPage - 1) / kPage;
  void* m = mmap(nullptr, sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return 0;
  std::vector<unsigned char> vec(pages);
  uint64_t n = 0;
  if (mincore(m, sb.st_size, vec.data()) == 0)
    for (unsigned char v : vec) n += v & 1;
  munmap(m, sb.st_size);
  return n;
}

// Touches pages 3, 700, 2000 and 3500 of `mapped` through mmap, then reads
// `streamed` whole, 64 KiB at a time.
std::vector<std::string> Program(const std::string& mapped, const std::string& streamed) {
  return {"python3", "-c",
          "import mmap, sys\n"
          "f = open(sys.argv[1], 'rb')\n"
          "m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)\n"
          "s = sum(m[p * 4096] for p in (3, 700, 2000, 3500))\n"
          "with open(sys.argv[2], 'rb', buffering=0) as g:\n"
          "    while g.read(65536): pass\n"
          "print(s)\n",
          mapped, streamed};
}

// The advice the plan at `ra` gives each file it lists, by path.
std::map<std::string, std::string> Advice(const std::string& ra) {
  std::map<std::string, std::string> out;
  std::ifstream in(ra);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, '\t');) f.push_back(x);
    if (f.size() == 11 && f[0] == "file") out[f[10]] = f[1];
  }
  return out;
}

TEST(Readahead, PlanFromARecordedRunAdvisesAndTheReplayerAppliesIt) {
  TempDir dir;
  std::string mapped = MakeFile(dir, "mapped.bin", 16), streamed = MakeFile(dir, "streamed.bin", 2);
  std::string db = dir.File("run.db"), ra = dir.File("app.ra");
  auto prog = Program(mapped, streamed);
  std::vector<std::string> argv = {SyspgoBin(), "collect", "--probes", "proc,fileio,faults,pagecache", "-o", db, "--"};
  argv.insert(argv.end(), prog.begin(), prog.end());
  CmdResult c = RunCmd(argv);
  ASSERT_EQ(c.status, 0) << c.err;
  CmdResult o = RunCmd({SyspgoBin(), "optimize", db, "--emit", "readahead", "-o", ra});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("syspgo: wrote " + ra + ": "), std::string::npos) << o.err;
  std::string text = ReadAll(ra);
  ASSERT_EQ(text.rfind("syspgo-readahead 1\n", 0), 0u) << text;
  auto advice = Advice(ra);
  EXPECT_EQ(advice[mapped], "random") << text;
  EXPECT_EQ(advice[streamed], "sequential") << text;

  // The same program, cold, with the plan and without it.
  Evict(mapped);
  std::vector<std::string> with = {SyspgoBin() + "-prefetch", "--readahead", ra, "--"};
  with.insert(with.end(), prog.begin(), prog.end());
  CmdResult r = RunCmd(with);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const uint64_t advised = Resident(mapped);
  Evict(mapped);
  r = RunCmd(prog);
  ASSERT_EQ(r.status, 0) << r.err;
  const uint64_t kernel = Resident(mapped);
  EXPECT_GE(advised, 4u);
  EXPECT_LE(advised, 16u) << "with the plan, a fault should read the page it needs (4 were touched)";
  EXPECT_GE(kernel, 4 * advised) << "without the plan, each fault reads a window: " << kernel << " pages against "
                                 << advised;

  // `syspgo prefetch`, the command users type, applies it the same way.
  Evict(mapped);
  with[0] = SyspgoBin();
  with.insert(with.begin() + 1, "prefetch");
  r = RunCmd(with);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_LE(Resident(mapped), 16u);
}

TEST(Readahead, AFaultyPlanChangesNothingAndTheProgramRuns) {
  TempDir dir;
  std::string mapped = MakeFile(dir, "mapped.bin", 16), streamed = MakeFile(dir, "streamed.bin", 1);
  struct stat sb {};
  ASSERT_EQ(stat(mapped.c_str(), &sb), 0);
  // A good line for the mapped file, then one the format has no place for:
  // the shim takes none of it.
  std::string bad = dir.File("bad.ra"), notplan = dir.File("not.ra");
  std::ofstream(bad) << "syspgo-readahead 1\nfile\trandom\t" << sb.st_dev << "\t" << sb.st_ino
                     << "\t0\t0\t0\t0\t0\tx\t" << mapped << "\nfile\trandom\t12x\t5\n";
  std::ofstream(notplan) << "{\"files\": []}\n";
  auto prog = Program(mapped, streamed);
  std::vector<std::string> with = {SyspgoBin() + "-prefetch", "--readahead", bad, "--"};
  with.insert(with.end(), prog.begin(), prog.end());
  CmdResult r = RunCmd(with);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_GT(Resident(mapped), 16u) << "a plan with a faulty line should advise nothing";

  Evict(mapped);
  with[2] = notplan;
  r = RunCmd(with);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("is no readahead plan"), std::string::npos) << r.err;

  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin() + "-prefetch", "--readahead", bad}), 2, "give the command after --"));
}

}  // namespace
}  // namespace syspgo::test
