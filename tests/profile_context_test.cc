//===- profile_context_test.cc - sample profiles keyed by calling context ===//
// `--profile-kind cs`: a fixture database holds known stacks over
// tests/workloads/context (step() called from two sites whose calls take
// different paths through it: 600 samples on its even path under
// mostly_even, 400 on its odd path under mostly_odd, both called from
// main). The contexts must hold their own paths' counts where the flat
// profile mixes them, the pre-inliner must mark them for inlining,
// llvm-profdata and clang must take the profile (clang inlining as the
// marks say), and `syspgo merge` must double every count. `--profile-kind
// probe` runs on the same workload built with -fpseudo-probe-for-profiling,
// sampled for real.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "analyze/sample_set.h"
#include "common/profile_db.h"
#include "tests/pgo_workload.h"
#include "tests/sample_db_fixture.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

constexpr uint64_t kBase = 0x555555554000;

std::string Src() { return std::string(SYSPGO_CONTEXT_SRC) + "/context_app.c"; }
std::string App() { return std::string(SYSPGO_CONTEXT_BIN) + "/context_app"; }
std::string ProbeApp() { return std::string(SYSPGO_CONTEXT_BIN) + "/context_app_probe"; }

uint32_t Line(const std::string& text) {
  return static_cast<uint32_t>(std::stoul(Sh("grep -n -F '" + text + "' " + Src() + " | cut -d: -f1").out));
}

// One function's profile in a text sample profile: at top level, or
// inlined at a call site (then keyed by the path of names from the top).
struct Node {
  uint64_t total = 0;
  std::map<std::string, uint64_t> lines;  // "OFFSET[.DISC]" -> count
  uint32_t attributes = 0;
  uint64_t checksum = 0;  // a probe-keyed profile's CFG checksum
};

// The text profile as nodes keyed "main/mostly_even/step" (top-level
// functions alone: "step").
std::map<std::string, Node> Parse(const std::string& text) {
  std::map<std::string, Node> out;
  std::vector<std::string> path;  // by depth
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    size_t depth = line.find_first_not_of(' ');
    if (depth == std::string::npos) continue;
    std::string rest = line.substr(depth);
    if (depth == 0) {  // NAME:TOTAL:HEAD
      path = {rest.substr(0, rest.find(':'))};
      out[path[0]].total = std::stoull(rest.substr(rest.find(':') + 1));
      continue;
    }
    path.resize(depth);
    std::string key = path[0];
    for (size_t k = 1; k < path.size(); ++k) key += "/" + path[k];
    if (rest.rfind("!Attributes: ", 0) == 0) {
      out[key].attributes = static_cast<uint32_t>(std::stoul(rest.substr(13)));
      continue;
    }
    if (rest.rfind("!CFGChecksum: ", 0) == 0) {
      out[key].checksum = std::stoull(rest.substr(14));
      continue;
    }
    std::string loc = rest.substr(0, rest.find(':'));
    std::string after = Trim(rest.substr(rest.find(':') + 1));
    if (!after.empty() && !isdigit(static_cast<unsigned char>(after[0]))) {  // LOC: callee:TOTAL (inlined)
      path.push_back(after.substr(0, after.find(':')));
      out[key + "/" + path.back()].total = std::stoull(after.substr(after.find(':') + 1));
      continue;
    }
    out[key].lines[loc] += std::stoull(after);
  }
  return out;
}

// The count of a node's line at `offset` (any discriminator); 0 if absent.
uint64_t At(const Node& n, uint32_t offset) {
  uint64_t c = 0;
  for (const auto& [loc, count] : n.lines)
    if (static_cast<uint32_t>(std::stoul(loc)) == offset) c += count;
  return c;
}

class ProfileContext : public testing::Test {
 protected:
  void SetUp() override {
    auto starts = NmStarts(App());
    uint32_t decl = Line("OUT_OF_LINE unsigned long step(");
    even_ = Line("// the even path") - decl;
    odd_ = Line("// the odd path") - decl;
    uint64_t even_ip = AddressIn(App(), starts["step"], "step", decl + even_);
    uint64_t odd_ip = AddressIn(App(), starts["step"], "step", decl + odd_);
    uint64_t from_even = ReturnAddressOfCall(App(), "mostly_even", "step");
    uint64_t from_odd = ReturnAddressOfCall(App(), "mostly_odd", "step");
    uint64_t main_even = ReturnAddressOfCall(App(), "main", "mostly_even");
    uint64_t main_odd = ReturnAddressOfCall(App(), "main", "mostly_odd");
    ASSERT_TRUE(even_ip && odd_ip && from_even && from_odd && main_even && main_odd)
        << "could not find the workload's known addresses";
    db_ = dir_.File("run.db");
    auto db = OpenProfileDb(db_, DbMode::kCreateOrAppend);
    ASSERT_TRUE(db.ok()) << db.error().message;
    std::string sql =
        "INSERT INTO run (id, command, argv_json, target_pid, attached, host, kernel_release, syspgo_version, "
        "start_realtime_ns, start_monotonic_ns, end_ts, status, cpu_freq_hz) VALUES (1, 'context_app', '[]', 100, 0, "
        "'h', 'k', 't', 0, 0, 1000, 'complete', 1000);"
        "INSERT INTO process (run_id, pid, ppid, comm, start_ts) VALUES (1, 100, 1, 'context_app', 0);"
        "INSERT INTO run_probe (run_id, probe_group, attached, detail) VALUES (1, 'cpu', 1, '');"
        "INSERT INTO mapping (run_id, ts, pid, vm_start, vm_end, file_off, dev, ino, path, build_id) VALUES " +
        Mappings(App(), kBase, App(), *ReadBuildId(App()), 1) + ";" +
        SampledStack(1, {kBase + even_ip, kBase + from_even, kBase + main_even}, 600) +
        SampledStack(2, {kBase + odd_ip, kBase + from_odd, kBase + main_odd}, 400);
    Status st = db->Exec(sql);
    ASSERT_TRUE(st.ok()) << st.error().message;
  }
  // `syspgo optimize` of the fixture into `out` (text): its parsed nodes.
  std::map<std::string, Node> Optimize(const std::string& kind, const std::string& out) {
    auto r = RunCmd({SyspgoBin(), "optimize", db_, "--binary", App(), "--emit", "sample-profile", "--profile-kind",
                     kind, "-o", out});
    EXPECT_EQ(r.status, 0) << r.err;
    return Parse(Sh("cat " + out).out);
  }
  TempDir dir_;
  std::string db_;
  uint32_t even_ = 0, odd_ = 0;  // the two paths' line offsets in step()
};

TEST_F(ProfileContext, EachCallSiteKeepsItsOwnPath) {
  std::string cs = dir_.File("cs.prof"), flat = dir_.File("flat.prof");
  auto nodes = Optimize("cs", cs);
  std::string text = Sh("cat " + cs).out;
  ASSERT_TRUE(nodes.count("main/mostly_even/step") && nodes.count("main/mostly_odd/step")) << text;
  const Node& under_even = nodes["main/mostly_even/step"];
  const Node& under_odd = nodes["main/mostly_odd/step"];
  // Counts are in hundredths of a sample (block estimates); all of a
  // context's samples are in step's code, whose rows of no line (line 0)
  // count in the outermost function's total only.
  EXPECT_GE(under_even.total, 600u * 100 / 2) << text;
  EXPECT_LE(under_even.total, 600u * 100) << text;
  EXPECT_GE(under_odd.total, 400u * 100 / 2) << text;
  EXPECT_LE(under_odd.total, 400u * 100) << text;
  EXPECT_EQ(nodes["main"].total, 1000u * 100) << text;
  EXPECT_GT(At(under_even, even_), 0u) << text;
  EXPECT_EQ(At(under_even, odd_), 0u) << "the odd path is cold under mostly_even\n" << text;
  EXPECT_GT(At(under_odd, odd_), 0u) << text;
  EXPECT_EQ(At(under_odd, even_), 0u) << "the even path is cold under mostly_odd\n" << text;
  // The pre-inliner's decisions: every hot context is to be inlined
  // (ContextShouldBeInlined, 2), and no sample is left to step's own profile.
  EXPECT_EQ(under_even.attributes, 2u) << text;
  EXPECT_EQ(under_odd.attributes, 2u) << text;
  EXPECT_EQ(nodes["main/mostly_even"].attributes, 2u) << text;
  EXPECT_EQ(nodes.count("step"), 0u) << text;
  // The flat profile has one step() with both paths hot: the average.
  auto flat_nodes = Optimize("flat", flat);
  ASSERT_TRUE(flat_nodes.count("step")) << Sh("cat " + flat).out;
  EXPECT_GT(At(flat_nodes["step"], even_), 0u);
  EXPECT_GT(At(flat_nodes["step"], odd_), 0u);
  EXPECT_EQ(flat_nodes.count("main/mostly_even/step"), 0u);
}

TEST_F(ProfileContext, LlvmProfdataAndClangTakeIt) {
  std::string cs = dir_.File("cs.prof");
  Optimize("cs", cs);
  auto show = Sh("llvm-profdata-19 show --sample " + cs + " 2>&1");
  ASSERT_EQ(show.status, 0) << show.out;
  EXPECT_NE(show.out.find("Function: main:"), std::string::npos) << show.out;
  // The extensible binary form carries the marks too: it reads back to
  // the same text.
  std::string ext = dir_.File("cs.extbin"), back = dir_.File("back.prof");
  auto r = RunCmd({SyspgoBin(), "optimize", db_, "--binary", App(), "--emit", "sample-profile", "--format", "binary",
                   "--profile-kind", "cs", "-o", ext});
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(Sh("llvm-profdata-19 merge --sample --text " + ext + " -o " + back).status, 0);
  EXPECT_EQ(Sh("cat " + back).out, Sh("cat " + cs).out);
  // clang reads it as pre-inlined and inlines both contexts of step() into
  // main, as the marks say (the rebuild lets it inline them).
  std::string cc = "clang-19 -O2 -g -fdebug-info-for-profiling -fno-omit-frame-pointer -DOUT_OF_LINE= "
                   "-Rpass=sample-profile-inline -c " + Src() + " -o " + dir_.File("app.o") + " -fprofile-sample-use=";
  for (const std::string& prof : {cs, ext}) {
    auto built = Sh(cc + prof + " 2>&1");
    ASSERT_EQ(built.status, 0) << built.out;
    size_t first = built.out.find("'step' inlined into 'main'");
    ASSERT_NE(first, std::string::npos) << built.out;
    EXPECT_NE(built.out.find("'step' inlined into 'main'", first + 1), std::string::npos)
        << "step() inlined at one of its two call sites only\n" << built.out;
    EXPECT_NE(built.out.find("preinliner"), std::string::npos) << built.out;
  }
}

TEST_F(ProfileContext, MergeDoublesEveryCount) {
  auto one = Optimize("cs", dir_.File("one.prof"));
  std::string two = dir_.File("two.prof");
  auto r = RunCmd({SyspgoBin(), "merge", db_, db_ + ":1", "--binary", App(), "--emit", "sample-profile",
                   "--profile-kind", "cs", "-o", two});
  ASSERT_EQ(r.status, 0) << r.err;
  auto doubled = Parse(Sh("cat " + two).out);
  ASSERT_EQ(doubled.size(), one.size());
  ASSERT_TRUE(one.count("main/mostly_even/step"));
  // Each count is rounded to hundredths of a sample: twice the samples
  // may round one hundredth away from twice the count.
  auto twice = [](uint64_t got, uint64_t once) { return got + 1 >= 2 * once && got <= 2 * once + 1; };
  for (const auto& [key, n] : one) {
    EXPECT_TRUE(twice(doubled[key].total, n.total)) << key << ": " << doubled[key].total << " vs " << n.total;
    EXPECT_EQ(doubled[key].attributes, n.attributes) << key;
    for (const auto& [loc, c] : n.lines)
      EXPECT_TRUE(twice(doubled[key].lines[loc], c))
          << key << " " << loc << ": " << doubled[key].lines[loc] << " vs " << c;
  }
}

TEST_F(ProfileContext, StacksCountsAreRefused) {
  auto r = RunCmd({SyspgoBin(), "optimize", db_, "--binary", App(), "--emit", "sample-profile", "--profile-kind", "cs",
                   "--sample-counts", "stacks", "-o", dir_.File("x.prof")});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--sample-counts ip or ip-only"), std::string::npos) << r.err;
}

TEST_F(ProfileContext, ProbeProfileOfABinaryWithoutProbesIsRefused) {
  auto r = RunCmd({SyspgoBin(), "optimize", db_, "--binary", App(), "--emit", "sample-profile", "--profile-kind",
                   "probe", "-o", dir_.File("x.prof")});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find(App() + " has no pseudo-probes"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("-fpseudo-probe-for-profiling"), std::string::npos) << r.err;
}

// The flags context_app_probe is built with (tests/profiles.cmake).
const char kProbeFlags[] = " -O2 -g -fdebug-info-for-profiling -fno-omit-frame-pointer -fno-optimize-sibling-calls "
                           "-ffunction-sections -fpseudo-probe-for-profiling ";

// Each function's CFG checksum as clang computes it for `src` (the
// pseudo-probe descriptors of its IR: !{i64 GUID, i64 HASH, !"NAME"}).
std::map<std::string, uint64_t> ClangChecksums(const std::string& src) {
  std::string ir = Sh(std::string("clang-19") + kProbeFlags + "-S -emit-llvm -o - " + src).out;
  static const std::regex desc(R"re(!\{i64 -?\d+, i64 (-?\d+), !"(\w+)"\})re");
  std::map<std::string, uint64_t> out;
  for (auto it = std::sregex_iterator(ir.begin(), ir.end(), desc); it != std::sregex_iterator(); ++it)
    out[(*it)[2]] = static_cast<uint64_t>(std::stoll((*it)[1]));
  return out;
}

// The probe-keyed profile of a real run: step() holds nearly all the time,
// on its block probes; every profile carries the checksum clang computes
// for its function (else clang would take the counts as stale), and clang
// builds with the profile and gives step() an entry count from it.
TEST(ProbeProfile, RealRunKeyedByProbesWithClangsChecksums) {
  TempDir dir;
  std::string db = dir.File("run.db"), prof = dir.File("probe.prof");
  auto r = RunCmd({SyspgoBin(), "collect", "--probes", "cpu", "--freq", "999", "-o", db, "--", ProbeApp(),
                   "300000000"});
  ASSERT_EQ(r.status, 0) << r.err;
  r = RunCmd({SyspgoBin(), "optimize", db, "--binary", ProbeApp(), "--emit", "sample-profile", "--profile-kind",
              "probe", "-o", prof});
  ASSERT_EQ(r.status, 0) << r.err;
  auto nodes = Parse(Sh("cat " + prof).out);
  ASSERT_TRUE(nodes.count("step")) << Sh("cat " + prof).out;
  uint64_t on_probes = 0;
  for (const auto& [id, count] : nodes["step"].lines) on_probes += count;
  EXPECT_GT(on_probes, 0u) << Sh("cat " + prof).out;
  uint64_t all = 0;  // the top-level totals
  for (const auto& [key, n] : nodes) all += key.find('/') == std::string::npos ? n.total : 0;
  EXPECT_GT(nodes["step"].total, all / 2) << Sh("cat " + prof).out;
  // A function that never ran has no samples: its probes are in its own
  // code, not among those of the function before it.
  EXPECT_EQ(nodes.count("never_called"), 0u) << Sh("cat " + prof).out;
  auto expected = ClangChecksums(Src());
  ASSERT_TRUE(expected.count("step")) << "no pseudo-probe descriptor for step in clang's IR";
  for (const auto& [key, n] : nodes) {
    std::string fn = key.substr(key.rfind('/') + 1);
    EXPECT_EQ(n.checksum, expected[fn]) << key;
  }
  auto c = Sh(std::string("clang-19") + kProbeFlags + "-Werror -fprofile-sample-use=" + prof + " -S -emit-llvm -o - " +
              Src() + " 2>&1");
  ASSERT_EQ(c.status, 0) << c.out;
  std::smatch m;
  static const std::regex step_prof(R"re(define [^\n]*@step\([^\n]*!prof (![0-9]+))re");
  ASSERT_TRUE(std::regex_search(c.out, m, step_prof)) << "step() has no profile metadata";
  std::regex entry(m[1].str() + R"re( = !\{!"function_entry_count", i64 ([0-9]+)\})re");
  ASSERT_TRUE(std::regex_search(c.out, m, entry)) << "step() has no entry count";
  EXPECT_GT(std::stoull(m[1]), 0u);
}

}  // namespace
}  // namespace syspgo::test
