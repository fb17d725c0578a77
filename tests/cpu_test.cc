//===- cpu_test.cc - the cpu group on the real kernel --------------------===//
// tests/workloads/cpu_burn spends its life in burn_hot, called through
// burn_middle and burn_outer from main. Sampled at 999 Hz, it must get a
// sample per ms of CPU time it used, and at least 90% of its samples must have their user IP inside burn_hot and a user stack
// through those callers. Addresses are mapped back into the binary the way
// a symbolizer would: the mapping table gives the file offset, the ELF
// program headers the virtual address, nm the functions' ranges. The
// mapping must also carry the binary's build-id, and kallsyms must be
// stored once for two runs.
#include <fcntl.h>
#include <gelf.h>
#include <gtest/gtest.h>
#include <libelf.h>
#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace syspgo::test {
namespace {

struct Range {
  uint64_t lo = 0, hi = 0;
  bool Has(uint64_t a) const { return a >= lo && a < hi; }
};

// Defined functions of a binary with their sizes, from `nm -S`.
std::map<std::string, Range> NmFunctions(const std::string& bin) {
  std::map<std::string, Range> out;
  for (const auto& [name, sym] : NmSymbols(bin))
    if (sym.type == 't' || sym.type == 'T') out[name] = Range{sym.start, sym.start + sym.size};
  return out;
}

struct Load {
  uint64_t offset, vaddr, filesz;
};

// PT_LOAD segments, to turn a file offset into a virtual address.
std::vector<Load> LoadSegments(const std::string& bin) {
  std::vector<Load> out;
  elf_version(EV_CURRENT);
  int fd = open(bin.c_str(), O_RDONLY);
  if (fd < 0) return out;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  size_t n = 0;
  if (elf && elf_getphdrnum(elf, &n) == 0) {
    for (size_t i = 0; i < n; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD)
        out.push_back({ph.p_offset, ph.p_vaddr, ph.p_filesz});
    }
  }
  if (elf) elf_end(elf);
  close(fd);
  return out;
}

struct Mapping {
  uint64_t start, end, off;
};

std::vector<uint64_t> HexFrames(const std::string& hex) {
  std::vector<uint64_t> out;
  for (size_t i = 0; i + 16 <= hex.size(); i += 16) {
    uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = v << 8 | std::stoul(hex.substr(i + 2 * b, 2), nullptr, 16);
    out.push_back(v);
  }
  return out;
}

TEST(Cpu, HotFunctionSamplesWithCallerStacks) {
  TempDir dir;
  std::string db_path = dir.File("run.db");
  char real[PATH_MAX];
  ASSERT_TRUE(realpath((std::string(SYSPGO_WORKLOADS_BIN) + "/cpu_burn").c_str(), real));
  std::string bin = real;
  auto r = RunCmd({SyspgoBin(), "collect", "--probes", "cpu", "--freq", "999", "-o", db_path, "--", bin, "1000"});
  ASSERT_EQ(r.status, 0) << r.err;

  auto fns = NmFunctions(bin);
  ASSERT_TRUE(fns.count("burn_hot") && fns.count("burn_middle") && fns.count("burn_outer") && fns.count("main"));
  auto loads = LoadSegments(bin);
  ASSERT_FALSE(loads.empty());
  DevIno id = StatFile(bin);

  Db db = OpenDb(db_path);
  EXPECT_EQ(QueryInt(db, "SELECT attached FROM run_probe WHERE probe_group = 'cpu'"), 1);
  std::string pid = std::to_string(QueryInt(db, "SELECT target_pid FROM run"));

  // The binary's mappings: its real path and the build-id readelf reports.
  std::string where = " FROM mapping WHERE pid = " + pid + " AND dev = " + std::to_string(id.dev) +
                      " AND ino = " + std::to_string(id.ino);
  auto paths = QueryRows(db, "SELECT DISTINCT path, IFNULL(build_id, '')" + where + " ORDER BY path");
  ASSERT_EQ(paths.size(), 1u) << "mappings of " << bin;
  std::string readelf = Sh("readelf -n " + bin + " | sed -n 's/.*Build ID: *//p'").out;
  while (!readelf.empty() && isspace(static_cast<unsigned char>(readelf.back()))) readelf.pop_back();
  ASSERT_FALSE(readelf.empty());
  EXPECT_EQ(paths[0], bin + "\t" + readelf);
  std::vector<Mapping> maps;
  for (auto& row : QueryRows(db, "SELECT vm_start, vm_end, file_off" + where + " ORDER BY vm_start")) {
    Mapping m{};
    ASSERT_EQ(sscanf(row.c_str(), "%lu\t%lu\t%lu", &m.start, &m.end, &m.off), 3) << row;
    maps.push_back(m);
  }
  // An address of the process as a virtual address of the binary (0: elsewhere).
  auto to_vaddr = [&](uint64_t a) -> uint64_t {
    for (auto& m : maps) {
      if (a < m.start || a >= m.end) continue;
      uint64_t off = a - m.start + m.off;
      for (auto& l : loads)
        if (off >= l.offset && off < l.offset + l.filesz) return off - l.offset + l.vaddr;
    }
    return 0;
  };

  auto samples = QueryRows(db, "SELECT s.kernel, s.ip, IFNULL(hex(st.frames), '') FROM cpu_sample s LEFT JOIN stack st "
                               "ON st.run_id = s.run_id AND st.id = s.user_stack_id WHERE s.pid = " + pid +
                               " ORDER BY s.ts");
  // cpu-clock fires every 1/999 s of CPU time: as many samples as the
  // process ran, give or take timer slack.
  unsigned long long cpu_ns = 0;
  ASSERT_EQ(sscanf(r.out.c_str(), "cpu_ns=%llu", &cpu_ns), 1) << r.out;
  double expected = cpu_ns * 999e-9;
  ASSERT_GE(samples.size(), 0.7 * expected) << cpu_ns << " ns of CPU time";
  EXPECT_LE(samples.size(), 1.2 * expected) << cpu_ns << " ns of CPU time";
  size_t hot = 0, chained = 0, user = 0, ip_first = 0;
  for (auto& row : samples) {
    std::istringstream in(row);
    std::string kernel, ip, hex;
    std::getline(in, kernel, '\t');
    std::getline(in, ip, '\t');
    std::getline(in, hex, '\t');
    auto frames = HexFrames(hex);
    if (kernel == "0") {
      ++user;
      if (!frames.empty() && frames[0] == static_cast<uint64_t>(std::stoll(ip))) ++ip_first;
    }
    if (frames.empty() || !fns["burn_hot"].Has(to_vaddr(frames[0]))) continue;
    ++hot;
    if (frames.size() >= 4 && fns["burn_middle"].Has(to_vaddr(frames[1])) &&
        fns["burn_outer"].Has(to_vaddr(frames[2])) && fns["main"].Has(to_vaddr(frames[3])))
      ++chained;
  }
  EXPECT_EQ(ip_first, user) << "a user-mode sample's first user frame is its IP";
  EXPECT_GE(hot * 10, samples.size() * 9) << hot << " of " << samples.size() << " samples in burn_hot";
  EXPECT_GE(chained * 10, samples.size() * 9) << chained << " of " << samples.size()
                                              << " samples in burn_hot via burn_middle, burn_outer, main";

  // A run without kernel stacks keeps none.
  db = Db();
  auto r2 = RunCmd({SyspgoBin(), "collect", "--probes", "fileio", "-o", db_path, "--", "true"});
  ASSERT_EQ(r2.status, 0) << r2.err;
  db = OpenDb(db_path);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM run_kallsyms WHERE run_id = 2"), 0);
}

}  // namespace
}  // namespace syspgo::test
