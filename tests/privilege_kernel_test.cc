//===- privilege_kernel_test.cc - the kernel's secrets under sudo ---------===//
// A user who runs collect through sudo must learn no more of the kernel and
// of other users' work than they could themselves (docs/privileges.md,
// "Kernel addresses and machine-wide groups under sudo"): no kernel address
// when their /proc/kallsyms reads zeros, and of the groups that see the
// whole machine (block, irq, pagecache) only what their own processes and
// files did, with the rest counted. Each attack runs through real sudo as
// syspgo-test (tests/sudo_fixture.h); the same run as real root keeps
// everything.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "collect/kallsyms.h"
#include "common/util.h"
#include "tests/sudo_fixture.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

// Every address range of /proc/kallsyms as root reads it: [lowest, highest]
// of the kernel's own symbols, and of each module's (BPF programs and
// trampolines included).
std::vector<std::pair<uint64_t, uint64_t>> RealKernelRanges() {
  std::map<std::string, std::pair<uint64_t, uint64_t>> by_owner;
  std::istringstream in(ReadAll("/proc/kallsyms"));
  for (std::string line; std::getline(in, line);) {
    uint64_t addr = strtoull(line.c_str(), nullptr, 16);
    if (!addr) continue;
    size_t tab = line.find('\t');
    std::string owner = tab == std::string::npos ? "" : line.substr(tab + 1);
    auto [it, fresh] = by_owner.try_emplace(owner, addr, addr);
    it->second.first = std::min(it->second.first, addr);
    it->second.second = std::max(it->second.second, addr);
  }
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (auto& [owner, r] : by_owner) out.push_back(r);
  return out;
}

bool InRealRange(const std::vector<std::pair<uint64_t, uint64_t>>& ranges, uint64_t a) {
  for (auto& [lo, hi] : ranges)
    if (a >= lo && a <= hi) return true;
  return false;
}

// The frames of every stack of the newest run.
std::vector<uint64_t> AllFrames(Db& db) {
  std::vector<uint64_t> out;
  for (const std::string& hex : QueryRows(db, "SELECT hex(frames) FROM stack")) {
    for (size_t at = 0; at + 16 <= hex.size(); at += 16) {
      uint64_t v = 0;
      for (int b = 7; b >= 0; --b) v = v << 8 | std::stoul(hex.substr(at + 2 * b, 2), nullptr, 16);
      out.push_back(v);
    }
  }
  return out;
}

// The names of the code symbols in /proc/kallsyms.
std::set<std::string> RealSymbolNames() {
  std::set<std::string> names;
  std::istringstream in(ReadAll("/proc/kallsyms"));
  for (std::string line; std::getline(in, line);) {
    if (line.size() < 20) continue;
    std::string name = line.substr(19);
    names.insert(name.substr(0, name.find('\t')));
  }
  return names;
}

// While it lives, the test user cannot read kernel addresses: if this
// machine lets everyone (kptr_restrict 0 and perf_event_paranoid <= 1),
// kptr_restrict is 1 for the test.
class KernelAddressesHidden {
 public:
  KernelAddressesHidden() {
    if (Trim(RunCmd(AsUser({"head", "-c", "16", "/proc/kallsyms"})).out) == std::string(16, '0')) return;
    saved_ = Trim(ReadAll("/proc/sys/kernel/kptr_restrict"));
    Sh("echo 1 > /proc/sys/kernel/kptr_restrict");
  }
  ~KernelAddressesHidden() {
    if (!saved_.empty()) Sh("echo " + saved_ + " > /proc/sys/kernel/kptr_restrict");
  }

 private:
  std::string saved_;
};

// A command that spends time in the kernel (reads of /dev/zero) and sleeps
// in it (a pipe), so cpu samples and off-CPU intervals have kernel stacks.
const std::vector<std::string> kKernelWork = {
    "sh", "-c", "dd if=/dev/zero of=/dev/null bs=64k count=40000 2>/dev/null; sleep 0.3 | cat"};

std::vector<std::string> Collect(const std::string& db, const std::string& probes,
                                 const std::vector<std::string>& command) {
  std::vector<std::string> argv = {SyspgoBin(), "collect", "--probes", probes, "-o", db, "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

// ---- 4. Kernel addresses ---------------------------------------------------------------

TEST(SyntheticKernelAddresses, KeepTheSymbolAndOffsetAndNothingOfTheAddress) {
  TempDir cache;
  KernelSymbols real = KernelSymbols::Load(cache.path());
  ASSERT_TRUE(real.readable() && !real.hidden()) << "run as root";
  // A few real symbols from the middle of the kernel's text.
  std::istringstream in{std::string(real.text())};
  std::vector<uint64_t> picked;
  int n = 0;
  for (std::string line; std::getline(in, line);)
    if (++n % 5000 == 0) picked.push_back(strtoull(line.c_str(), nullptr, 16));
  ASSERT_GT(picked.size(), 3u);
  SyntheticKernelAddresses synth;
  auto ranges = RealKernelRanges();
  std::vector<uint64_t> mapped;
  for (uint64_t addr : picked) {
    uint64_t s = synth.Map(addr + 3);
    EXPECT_FALSE(InRealRange(ranges, s)) << std::hex << s;
    EXPECT_TRUE(SyntheticKernelAddresses::IsSynthetic(s));
    EXPECT_EQ(synth.Map(addr + 3), s) << "a second time, the same";
    mapped.push_back(s);
  }
  EXPECT_EQ(synth.Map(0x7f0000001000ull), 0x7f0000001000ull) << "user addresses stay";
  uint64_t unknown = synth.Map(0xffff800000000000ull);  // below every symbol
  std::string text = synth.Text();
  EXPECT_TRUE(text.starts_with(SyntheticKernelAddresses::kMarker)) << text.substr(0, 200);
  Kallsyms ks(text);
  for (size_t i = 0; i < picked.size(); ++i) {
    // Of symbols at one address the one the real lines name.
    std::string line = real.LinesFor({picked[i] + 3});
    std::string want = line.substr(19, line.find_first_of("\t\n", 19) - 19);
    EXPECT_EQ(ks.Name(mapped[i]), want);
    EXPECT_EQ(ks.Name(mapped[i] - 3), want) << "the offset in the symbol is kept";
  }
  EXPECT_EQ(ks.Name(unknown), SyntheticKernelAddresses::kUnknown);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    EXPECT_FALSE(InRealRange(ranges, strtoull(line.c_str(), nullptr, 16))) << line;
}

TEST_F(Sudo, AUserWhoCannotSeeKernelAddressesGetsNoneButNamedKernelStacks) {
  KernelAddressesHidden hidden;
  UserDir mine;
  std::string db = mine.File("k.db");
  auto r = RunCmd(ViaSudo(Collect(db, "cpu,sched", kKernelWork)));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("kernel addresses are synthetic"), std::string::npos) << r.err;
  auto ranges = RealKernelRanges();
  ASSERT_FALSE(ranges.empty());
  {
    Db d = OpenDb(db);
    std::string text = RunKallsymsText(d);
    ASSERT_TRUE(text.starts_with(SyntheticKernelAddresses::kMarker)) << text.substr(0, 300);
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
      EXPECT_FALSE(InRealRange(ranges, strtoull(line.c_str(), nullptr, 16))) << line;
    size_t kernel = 0;
    for (uint64_t ip : AllFrames(d)) {
      EXPECT_FALSE(InRealRange(ranges, ip)) << std::hex << ip;
      kernel += ip >> 63;
    }
    EXPECT_GT(kernel, 0u) << "no kernel frame recorded";
    for (const std::string& ip : QueryRows(d, "SELECT ip FROM cpu_sample"))
      EXPECT_FALSE(InRealRange(ranges, static_cast<uint64_t>(std::stoll(ip)))) << ip;
    EXPECT_GT(QueryInt(d, "SELECT COUNT(*) FROM cpu_sample WHERE kernel = 1"), 0);
    // Every kernel frame still names a real kernel function (or the unknown one).
    Kallsyms ks(text);
    std::set<std::string> real = RealSymbolNames();
    size_t named = 0;
    for (uint64_t ip : AllFrames(d)) {
      if (!(ip >> 63)) continue;
      std::string name = ks.Name(ip);
      EXPECT_TRUE(name == SyntheticKernelAddresses::kUnknown || real.count(name)) << name;
      named += real.count(name);
    }
    EXPECT_GT(named, 0u);
  }
  // The analyses name the kernel frames as before.
  std::string folded = mine.File("k.folded");
  r = RunCmd(ViaSudo({SyspgoBin(), "optimize", db, "--emit", "folded", "-o", folded}));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(ReadAll(folded).find("do_syscall_64"), std::string::npos) << ReadAll(folded).substr(0, 2000);

  // As real root: the kernel's own addresses and lines.
  TempDir roots;
  std::string rdb = roots.File("k.db");
  r = RunCmd(Collect(rdb, "cpu,sched", kKernelWork));
  ASSERT_EQ(r.status, 0) << r.err;
  Db d = OpenDb(rdb);
  std::string text = RunKallsymsText(d);
  EXPECT_FALSE(text.starts_with(SyntheticKernelAddresses::kMarker));
  size_t real_frames = 0;
  for (uint64_t ip : AllFrames(d)) real_frames += InRealRange(ranges, ip);
  EXPECT_GT(real_frames, 0u);
}

// ---- 8. Machine-wide groups --------------------------------------------------------------

// The count a group's note gives for what it left out ("N ... left out"), 0 if none.
int64_t LeftOut(Db& db, const std::string& group) {
  auto rows = QueryRows(db, "SELECT detail FROM run_probe WHERE probe_group = '" + group + "'");
  if (rows.empty()) return 0;
  size_t at = rows[0].find(" left out");
  if (at == std::string::npos) return 0;
  size_t start = rows[0].rfind(". ", at);
  start = start == std::string::npos ? 0 : start + 2;
  return std::stoll(rows[0].substr(start));
}

// Records block, irq and pagecache while root reads a root-only file, once
// with O_DIRECT and once after the page cache was dropped; the traced
// command waits until root is done (it creates `done`, at most a minute).
// Returns collect's result.
CmdResult RecordWhileRootReads(const std::string& db, const std::string& secret, const std::string& done,
                               bool via_sudo) {
  std::string wait = "i=0; while [ ! -e " + done + " ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done";
  auto argv = Collect(db, "block,irq,pagecache", {"sh", "-c", wait});
  CmdResult r;
  std::thread collect([&] { r = RunCmd(via_sudo ? ViaSudo(argv) : argv); });
  bool attached = WaitAttached(db);
  if (attached) {
    Sh("dd if=" + secret + " of=/dev/null bs=1M iflag=direct 2>/dev/null");
    Sh("sync; echo 3 > /proc/sys/vm/drop_caches; cat " + secret + " > /dev/null");
  }
  Sh("touch " + done);
  collect.join();
  EXPECT_TRUE(attached) << "the collector never attached: " << r.err;
  return r;
}

TEST_F(Sudo, MachineWideGroupsKeepOnlyTheUsersOwnIo) {
  RootDir roots;
  std::string secret = roots.File("secret");
  Sh("head -c 16777216 /dev/urandom > " + secret + " && chmod 600 " + secret + " && sync");
  uint64_t ino = StatFile(secret).ino;
  UserDir mine;
  std::string db = mine.File("io.db");
  CmdResult r = RecordWhileRootReads(db, secret, mine.File("done"), true);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("left out (collect under sudo)"), std::string::npos) << r.err;
  {
    Db d = OpenDb(db);
    std::string of_ino = " WHERE ino = " + std::to_string(ino);
    EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM block_rq WHERE comm IN ('dd', 'cat') OR file_ino = " +
                              std::to_string(ino)), 0);
    EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM block_rq WHERE target = 0 AND file_ino = 0"), 0);
    EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM irq_run WHERE target = 0"), 0);
    EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM page_cache" + of_ino), 0);
    EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM page_cache_total" + of_ino), 0);
    EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM page_cache_page" + of_ino), 0);
    EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM page_cache WHERE comm IN ('dd', 'cat')"), 0);
    EXPECT_GT(LeftOut(d, "block"), 0);
  }

  // As real root the same run keeps root's requests.
  TempDir as_root;
  std::string rdb = as_root.File("io.db");
  r = RecordWhileRootReads(rdb, secret, as_root.File("done"), false);
  ASSERT_EQ(r.status, 0) << r.err;
  Db d = OpenDb(rdb);
  EXPECT_GT(QueryInt(d, "SELECT COUNT(*) FROM block_rq WHERE comm = 'dd'"), 0);
  EXPECT_GT(QueryInt(d, "SELECT COUNT(*) FROM block_rq WHERE file_ino = " + std::to_string(ino)), 0);
  EXPECT_EQ(LeftOut(d, "block"), 0);
}

}  // namespace
}  // namespace syspgo::test
