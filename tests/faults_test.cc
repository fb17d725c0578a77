//===- faults_test.cc - the faults group on the real kernel --------------===//
// The workload is this test binary itself, re-run by `syspgo collect` with
// FAULTS_TEST_CHILD set: before GoogleTest starts it maps a file, touches
// chosen pages and a page of anonymous memory, prints the addresses it
// used, and exits. The test checks the page_fault rows against those
// addresses, stat(2) of the file, and what the page cache held at each touch.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace syspgo::test {
namespace {

constexpr int64_t kPage = 4096;
constexpr int64_t kFilePages = 1024;  // 4 MiB
constexpr int64_t kColdPage = 100;    // first touch, file not cached: a major fault
constexpr int64_t kWarmPage = 600;    // after the whole file was read: minor, mapped around

// FAULTS_TEST_CHILD=<file>: the workload. Runs before main(), so GoogleTest
// never starts in the child.
__attribute__((constructor)) void FaultsChild() {
  const char* path = getenv("FAULTS_TEST_CHILD");
  if (!path) return;
  int fd = open(path, O_RDONLY);
  if (fd < 0) _exit(2);
  auto* base = static_cast<volatile char*>(mmap(nullptr, kFilePages * kPage, PROT_READ, MAP_SHARED, fd, 0));
  if (base == MAP_FAILED) _exit(3);
  char sink = base[kColdPage * kPage];
  // Wait for every page to be read and uptodate, so the next touch finds
  // it cached and fault-around maps its neighbours.
  std::vector<char> buf(kFilePages * kPage);
  if (pread(fd, buf.data(), buf.size(), 0) != static_cast<ssize_t>(buf.size())) _exit(4);
  sink += base[kWarmPage * kPage];
  sink += base[(kWarmPage + 1) * kPage];  // mapped by the previous fault's fault-around
  auto* anon = static_cast<volatile char*>(
      mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (anon == MAP_FAILED) _exit(5);
  anon[0] = sink;
  printf("base=%" PRIuPTR " anon=%" PRIuPTR "\n", reinterpret_cast<uintptr_t>(base),
         reinterpret_cast<uintptr_t>(anon));
  fflush(stdout);
  _exit(0);
}

std::string SelfExe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, n) : "";
}

// The value of `key=` in the workload's output line.
uint64_t OutputValue(const std::string& out, const std::string& key) {
  size_t p = out.find(key + "=");
  return p == std::string::npos ? 0 : std::stoull(out.substr(p + key.size() + 1));
}

TEST(FaultsGroup, FileFaultsNamePageMajorMinorAndFaultAround) {
  TempDir dir;
  std::string data = dir.File("mapped");
  ASSERT_TRUE(Sh("head -c " + std::to_string(kFilePages * kPage) + " /dev/urandom > " + data + " && sync " + data +
                 " && echo 1 > /proc/sys/vm/drop_caches")
                  .status == 0);
  DevIno f = StatFile(data);
  std::string db_path = dir.File("run.db");
  CmdResult r = RunCmd({SyspgoBin(), "collect", "-o", db_path, "--probes", "faults", "--", "/usr/bin/env",
                     "FAULTS_TEST_CHILD=" + data, SelfExe()});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  uint64_t base = OutputValue(r.out, "base"), anon = OutputValue(r.out, "anon");
  ASSERT_NE(base, 0u) << r.out;
  ASSERT_NE(anon, 0u) << r.out;

  Db db = OpenDb(db_path);
  EXPECT_EQ(QueryRows(db, "SELECT attached, detail FROM run_probe WHERE probe_group = 'faults'"),
            std::vector<std::string>{"1\t"});
  std::string of_file = " FROM page_fault WHERE dev = " + std::to_string(f.dev) + " AND ino = " + std::to_string(f.ino);

  // The cold page: not cached, so the fault read it (major) through the
  // ->fault handler; the retried fault then mapped the pages around it.
  auto cold = QueryRows(db, "SELECT addr, vm_start, major, filemap, error_code & 6, around_first <= pgoff, "
                            "around_last >= pgoff, ip != 0, pid IN (SELECT pid FROM process)" +
                                of_file + " AND pgoff = " + std::to_string(kColdPage) + " ORDER BY ts");
  ASSERT_EQ(cold.size(), 1u);
  EXPECT_EQ(cold[0], std::to_string(base + kColdPage * kPage) + "\t" + std::to_string(base) +
                         "\t1\t1\t4\t1\t1\t1\t1");  // user read, major, handler ran, page in the range

  // The warm page: cached and uptodate, so fault-around mapped it and its
  // neighbours without the handler and without I/O.
  auto warm = QueryRows(db, "SELECT addr, major, filemap, around_first <= pgoff, around_last >= pgoff, "
                            "around_last - around_first + 1 >= 2" +
                                of_file + " AND pgoff = " + std::to_string(kWarmPage) + " ORDER BY ts");
  ASSERT_EQ(warm.size(), 1u);
  EXPECT_EQ(warm[0], std::to_string(base + kWarmPage * kPage) + "\t0\t0\t1\t1\t1");
  // Its neighbour was mapped by that fault: touching it did not fault.
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*)" + of_file + " AND pgoff = " + std::to_string(kWarmPage + 1)), 0);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*)" + of_file), 2);

  // The anonymous page: a user write, no file, no page index.
  auto an = QueryRows(db, "SELECT ino, dev, pgoff, error_code & 6, major, vm_start <= addr FROM page_fault "
                          "WHERE addr = " + std::to_string(anon) + " ORDER BY ts");
  ASSERT_EQ(an.size(), 1u);
  EXPECT_EQ(an[0], "0\t0\t-1\t6\t0\t1");  // the vma may have merged with a neighbour
}

}  // namespace
}  // namespace syspgo::test
