//===- kallsyms_test.cc - the kernel symbols a run stores, cached per boot -===//
// KernelSymbols against a plain reading of /proc/kallsyms on this kernel:
// the symbol named for an address is the same whether it came from
// /proc/kallsyms or from the cache, and a cache that is stale, not root's,
// or a symlink is never believed.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "collect/kallsyms.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

struct Sym {
  uint64_t addr;
  std::string line;
};

// The code symbols as /proc/kallsyms lists them, in its order.
std::vector<Sym> ProcSymbols() {
  std::vector<Sym> out;
  std::ifstream f("/proc/kallsyms");
  for (std::string line; std::getline(f, line);) {
    char* end = nullptr;
    uint64_t a = strtoull(line.c_str(), &end, 16);
    if (a == 0 || !end || *end != ' ' || !strchr("tTwW", end[1]) || end[1] == 0) continue;
    if (line.find("\t[bpf]") != std::string::npos || line.find("\t[__builtin__") != std::string::npos) continue;
    out.push_back({a, line});
  }
  return out;
}

// The oracle, by brute force: for each address the highest symbol at or
// below it, the last listed of equals; each line once, by address.
std::string Expected(const std::vector<Sym>& syms, const std::vector<uint64_t>& ips) {
  std::string out;
  const Sym* last = nullptr;
  for (uint64_t ip : ips) {
    const Sym* best = nullptr;
    for (const Sym& s : syms)
      if (s.addr <= ip && (!best || s.addr >= best->addr)) best = &s;
    if (!best || (last && best->addr == last->addr)) continue;
    last = best;
    out += best->line + "\n";
  }
  return out;
}

// Addresses inside, at and just past a spread of symbols, and one below all.
std::vector<uint64_t> SomeAddresses(const std::vector<Sym>& syms) {
  std::vector<uint64_t> ips = {1};
  for (size_t i = 0; i < syms.size(); i += syms.size() / 40 + 1) {
    ips.push_back(syms[i].addr);
    ips.push_back(syms[i].addr + 7);
  }
  std::sort(ips.begin(), ips.end());
  return ips;
}

TEST(KernelSymbols, TheCacheNamesWhatProcKallsymsNames) {
  TempDir dir;
  std::vector<Sym> syms = ProcSymbols();
  ASSERT_GT(syms.size(), 10000u) << "this kernel shows no symbol addresses to root";
  std::vector<uint64_t> ips = SomeAddresses(syms);
  std::string want = Expected(syms, ips);
  ASSERT_GT(std::count(want.begin(), want.end(), '\n'), 20);

  KernelSymbols first = KernelSymbols::Load(dir.path());
  ASSERT_TRUE(first.readable());
  EXPECT_FALSE(first.from_cache());
  EXPECT_EQ(first.LinesFor(ips), want);
  struct stat st {};
  ASSERT_EQ(lstat(dir.File("kallsyms").c_str(), &st), 0) << "no cache was written";
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  KernelSymbols second = KernelSymbols::Load(dir.path());
  EXPECT_TRUE(second.from_cache());
  EXPECT_EQ(second.text(), first.text());
  EXPECT_EQ(second.LinesFor(ips), want);
}

TEST(KernelSymbols, AStaleForeignOrLinkedCacheIsReadAgainFromProc) {
  TempDir dir;
  std::string cache = dir.File("kallsyms");
  std::vector<Sym> syms = ProcSymbols();
  std::vector<uint64_t> ips = SomeAddresses(syms);
  std::string want = Expected(syms, ips);
  ASSERT_FALSE(KernelSymbols::Load(dir.path()).from_cache());
  std::string good = ReadAll(cache);

  // Made on another boot, naming a symbol that is not there.
  std::string lie = "ffffffff81000000 T planted\n";
  std::string stale = "syspgo kallsyms cache 1 boot=00000000-0000-0000-0000-000000000000 modules=0\n" + lie;
  { std::ofstream(cache, std::ios::trunc) << stale; }
  chmod(cache.c_str(), 0600);
  KernelSymbols a = KernelSymbols::Load(dir.path());
  EXPECT_FALSE(a.from_cache());
  EXPECT_EQ(a.LinesFor(ips), want);
  EXPECT_EQ(ReadAll(cache), good) << "the stale cache was not replaced";

  // The right key, but another user's file: a user could have written it.
  std::string key = good.substr(0, good.find('\n') + 1);
  { std::ofstream(cache, std::ios::trunc) << key << lie; }
  ASSERT_EQ(chown(cache.c_str(), 65534, 65534), 0);
  EXPECT_FALSE(KernelSymbols::Load(dir.path()).from_cache());
  EXPECT_EQ(ReadAll(cache), good) << "the foreign cache was not replaced";

  // A symlink to a file with the right key: not followed, and replaced by
  // a file of its own (the link's target is left alone).
  std::string target = dir.File("elsewhere");
  { std::ofstream(target) << key << lie; }
  chmod(target.c_str(), 0600);
  unlink(cache.c_str());
  ASSERT_EQ(symlink(target.c_str(), cache.c_str()), 0);
  EXPECT_FALSE(KernelSymbols::Load(dir.path()).from_cache());
  struct stat st {};
  ASSERT_EQ(lstat(cache.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(ReadAll(target), key + lie);
  EXPECT_TRUE(KernelSymbols::Load(dir.path()).from_cache());

  // A directory others can write is not used at all.
  chmod(dir.path().c_str(), 0777);
  unlink(cache.c_str());
  KernelSymbols open_dir = KernelSymbols::Load(dir.path());
  EXPECT_FALSE(open_dir.from_cache());
  EXPECT_EQ(open_dir.LinesFor(ips), want);
  EXPECT_NE(access(cache.c_str(), F_OK), 0) << "a cache was written where others can write";
  chmod(dir.path().c_str(), 0700);
}

}  // namespace
}  // namespace syspgo::test
