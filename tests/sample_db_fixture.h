//===- sample_db_fixture.h - profile databases of known samples ----------===//
// The emitter tests write a run's mappings and stacks into a profile
// database by SQL, so that the samples (and so every count of the
// artifacts) are known exactly.
#pragma once
#include <cstdint>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/util.h"
#include "tests/test_util.h"

namespace syspgo::test {

inline std::map<std::string, uint64_t> NmStarts(const std::string& bin) {
  std::map<std::string, uint64_t> out;
  std::istringstream in(Sh("nm --defined-only " + bin).out);
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long a;
    char type, name[256];
    if (sscanf(line.c_str(), "%llx %c %255s", &a, &type, name) == 3) out[name] = a;
  }
  return out;
}

// First address in [fn, fn+0x100) whose innermost frame (llvm-symbolizer)
// is function `inner` at source line `line`: a sample there is one a
// compiler can attribute (not a prologue).
inline uint64_t AddressIn(const std::string& bin, uint64_t fn, const std::string& inner, uint32_t line) {
  for (uint64_t a = fn; a < fn + 0x100; ++a) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "llvm-symbolizer-19 --obj=%s 0x%llx | head -2", bin.c_str(),
             static_cast<unsigned long long>(a));
    auto out = Split(Sh(cmd).out, '\n');
    if (out.size() >= 2 && out[0] == inner && out[1].find(":" + std::to_string(line) + ":") != std::string::npos) return a;
  }
  return 0;
}

inline std::string Frames(const std::vector<uint64_t>& f) {
  std::string hex = "X'";
  char b[3];
  for (uint64_t v : f)
    for (int i = 0; i < 8; ++i) {
      snprintf(b, sizeof b, "%02x", static_cast<unsigned>((v >> (8 * i)) & 0xff));
      hex += b;
    }
  return hex + "'";
}

// SQL for stack `id` of run 1 (absolute addresses, innermost first) and
// `n` CPU samples of it, pid and tid 100.
inline std::string SampledStack(int id, const std::vector<uint64_t>& frames, int n) {
  return "INSERT INTO stack (run_id, id, frames) VALUES (1, " + std::to_string(id) + ", " + Frames(frames) + ");" +
         "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < " + std::to_string(n) +
         ") INSERT INTO cpu_sample (run_id, ts, pid, tid, cpu, kernel, ip, user_stack_id, kernel_stack_id) "
         "SELECT 1, k, 100, 100, 0, 0, " + std::to_string(frames[0]) + ", " + std::to_string(id) + ", 0 FROM n;";
}

// The mappings a process would have for `bin` loaded at `base`: one per
// PT_LOAD, page-aligned, as the mapping table stores them.
inline std::string Mappings(const std::string& bin, uint64_t base, const std::string& path, const std::string& id,
                            int ino) {
  std::string rows;
  std::istringstream in(Sh("llvm-readelf-19 -lW " + bin + " | awk '$1 == \"LOAD\" {print $2, $3, $6}'").out);
  for (std::string line; std::getline(in, line);) {
    unsigned long long off, vaddr, memsz;
    if (sscanf(line.c_str(), "%llx %llx %llx", &off, &vaddr, &memsz) != 3) continue;
    uint64_t start = base + (vaddr & ~0xfffull), end = (base + vaddr + memsz + 0xfff) & ~0xfffull;
    rows += std::string(rows.empty() ? "" : ", ") + "(1, 0, 100, " + std::to_string(start) + ", " +
            std::to_string(end) + ", " + std::to_string(off & ~0xfffull) + ", 1, " + std::to_string(ino) + ", '" +
            path + "', '" + id + "')";
  }
  return rows;
}

}  // namespace syspgo::test
