//===- emit_test.cc - every profile artifact, checked by its consumer ----===//
// A fixture database holds a known sample set over the clang-built
// workload (a PIE and its shared library): 600 + 200 samples in
// hot_kernel (one set inside its inlined rotate_mix), 300 in warm_local,
// 100 in lib_mix, all called from run_rounds from main. Each artifact that
// `syspgo optimize` writes from it goes to its real consumer:
// llvm-profdata (counts), clang -fprofile-sample-use with LLVM's own
// coverage checks as errors (line offsets and discriminators must match
// the compiler's view), llvm-bolt, ld.lld + nm, and the pprof proto parser.
// `syspgo merge` must double counts. Bad inputs must fail with a message
// that says what is missing. The last test samples the real workload on
// the real kernel and feeds the result to the same consumers.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyze/sample_set.h"
#include "analyze/stack_names.h"
#include "common/profile_db.h"
#include "common/util.h"
#include "optimize/artifact_kinds.h"
#include "optimize/symbol_order.h"
#include "schemas/pprof_profile.pb.h"
#include "tests/pgo_workload.h"
#include "tests/sample_db_fixture.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

const char kFlags[] = " -O2 -g -fdebug-info-for-profiling -fno-omit-frame-pointer -fno-optimize-sibling-calls "
                      "-ffunction-sections ";

using Counts = std::pair<uint64_t, uint64_t>;  // a function's total and head samples

constexpr uint64_t kAppBase = 0x555555554000, kLibBase = 0x7f0000000000;

// Where the fixture's stacks point: ELF addresses, placed at kAppBase and
// kLibBase at run time (both are position-independent).
struct Workload {
  std::string app = Pgo("pgo_app"), lib = Pgo("libpgo_lib.so");
  uint64_t hot_ip = 0, rotate_ip = 0, warm_ip = 0, lib_ip = 0;
  uint64_t ret_hot = 0, ret_warm = 0, ret_lib = 0, ret_run = 0;

  Workload() {
    auto a = NmStarts(app), l = NmStarts(lib);
    rotate_ip = AddressIn(app, a["hot_kernel"], "rotate_mix", SourceLine("return x * 0x9E3779B97F4A7C15ull"));
    hot_ip = AddressIn(app, a["hot_kernel"], "hot_kernel", SourceLine("if ((a ^ i) & 1)"));
    warm_ip = AddressIn(app, a["warm_local"], "warm_local", SourceLine("x = x * 2862933555777941757ull"));
    lib_ip = l["lib_mix"] + 0x10;
    ret_hot = ReturnAddressOfCall(app, "run_rounds", "hot_kernel");
    ret_warm = ReturnAddressOfCall(app, "run_rounds", "warm_local");
    ret_lib = ReturnAddressOfCall(app, "run_rounds", "lib_mix");
    ret_run = ReturnAddressOfCall(app, "main", "run_rounds");
  }
  bool ok() const { return hot_ip && rotate_ip && warm_ip && ret_hot && ret_warm && ret_lib && ret_run; }
};

// A profile database with one run of the known samples (`app_path`
// recorded with `app_build_id`). `with_samples` false: the run has none.
// `beyond`: frames added past main's, as frame-pointer unwinding reads on
// past a frame without a frame pointer.
void MakeFixture(const std::string& db_path, const Workload& w, const std::string& app_path,
                 const std::string& app_build_id, bool with_samples = true, const std::vector<uint64_t>& beyond = {}) {
  auto db = OpenProfileDb(db_path, DbMode::kCreateOrAppend);
  ASSERT_TRUE(db.ok()) << db.error().message;
  std::string lib_id = *ReadBuildId(w.lib);
  std::string sql =
      "INSERT INTO run (id, command, argv_json, target_pid, attached, host, kernel_release, syspgo_version, "
      "start_realtime_ns, start_monotonic_ns, end_ts, status, cpu_freq_hz) VALUES (1, 'pgo_app', '[]', 100, 0, "
      "'h', 'k', 't', 0, 0, 1000, 'complete', 1000);"
      "INSERT INTO process (run_id, pid, ppid, comm, start_ts) VALUES (1, 100, 1, 'pgo_app', 0);"
      "INSERT INTO run_probe (run_id, probe_group, attached, detail) VALUES (1, 'cpu', 1, '');";
  if (with_samples) {
    sql += "INSERT INTO mapping (run_id, ts, pid, vm_start, vm_end, file_off, dev, ino, path, build_id) VALUES " +
           Mappings(w.app, kAppBase, app_path, app_build_id, 1) + ", " + Mappings(w.lib, kLibBase, w.lib, lib_id, 2) +
           ";";
    auto A = [](uint64_t a) { return a + kAppBase; };
    auto L = [](uint64_t a) { return a + kLibBase; };
    std::vector<std::pair<std::vector<uint64_t>, int>> stacks = {
        {{A(w.rotate_ip), A(w.ret_hot), A(w.ret_run)}, 600},
        {{A(w.hot_ip), A(w.ret_hot), A(w.ret_run)}, 200},
        {{A(w.warm_ip), A(w.ret_warm), A(w.ret_run)}, 300},
        {{L(w.lib_ip), A(w.ret_lib), A(w.ret_run)}, 100},
    };
    for (size_t i = 0; i < stacks.size(); ++i) {
      stacks[i].first.insert(stacks[i].first.end(), beyond.begin(), beyond.end());
      sql += SampledStack(static_cast<int>(i + 1), stacks[i].first, stacks[i].second);
    }
  }
  Status st = db->Exec(sql);
  ASSERT_TRUE(st.ok()) << st.error().message;
}

class Emit : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(w_.ok()) << "could not find the workload's known addresses";
    app_id_ = *ReadBuildId(w_.app);
    db_ = dir_.File("run.db");
    MakeFixture(db_, w_, w_.app, app_id_);
  }
  CmdResult Optimize(const std::string& kind, const std::string& out, const std::string& binary,
                     const std::string& counts = "") {
    std::vector<std::string> argv = {SyspgoBin(), "optimize", db_, "--emit", kind, "-o", out};
    if (!binary.empty()) argv.insert(argv.end(), {"--binary", binary});
    if (!counts.empty()) argv.insert(argv.end(), {"--sample-counts", counts});
    return RunCmd(argv);
  }
  // The lines of a text profile under top-level function `fn`'s header.
  static std::string Body(const std::string& text, const std::string& fn) {
    std::string body;
    std::istringstream in(text);
    bool in_fn = false;
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line[0] != ' ') in_fn = line.rfind(fn + ":", 0) == 0;
      else if (in_fn) body += line + "\n";
    }
    return body;
  }
  // "Function: NAME: TOTAL, HEAD, ..." lines of llvm-profdata show.
  static std::map<std::string, Counts> ProfdataShow(const std::string& file) {
    std::map<std::string, Counts> out;
    std::istringstream in(Sh("llvm-profdata-19 show --sample " + file).out);
    std::string line;
    while (std::getline(in, line)) {
      char name[256];
      unsigned long long total, head;
      if (sscanf(line.c_str(), "Function: %255[^:]: %llu, %llu", name, &total, &head) == 3) out[name] = {total, head};
    }
    return out;
  }
  Workload w_;
  TempDir dir_;
  std::string db_, app_id_;
};

TEST_F(Emit, SampleProfileCountsReadBackByLlvmProfdata) {
  std::string prof = dir_.File("app.prof");
  auto r = Optimize("sample-profile", prof, w_.app, "stacks");
  ASSERT_EQ(r.status, 0) << r.err;
  auto fns = ProfdataShow(prof);
  // Totals: own samples plus the time below each call site; heads: calls in from sampled callers.
  EXPECT_EQ(fns["hot_kernel"], Counts(800, 800)) << Sh("cat " + prof).out;
  EXPECT_EQ(fns["warm_local"], Counts(300, 300));
  EXPECT_EQ(fns["run_rounds"], Counts(1200, 1200));
  EXPECT_EQ(fns["main"], Counts(1200, 0));
  EXPECT_EQ(fns.count("lib_mix"), 0u) << "another binary's function in this binary's profile";
  std::string text = Sh("cat " + prof).out;
  EXPECT_NE(text.find(": rotate_mix:600"), std::string::npos) << "inlined call site\n" << text;
  EXPECT_NE(text.find("lib_mix:100"), std::string::npos) << "call target into the shared library\n" << text;
  // Lines of a sampled function that no sample hit are listed with 0 (cold,
  // not unknown): main's call of never_called (line 61, main is at 58).
  std::string main_body = Body(text, "main");
  EXPECT_NE(main_body.find(" 3: 0\n"), std::string::npos) << "main's unsampled line 61 as a zero\n" << text;
  EXPECT_NE(main_body.find(" 2.1: 1200 run_rounds:1200\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("never_called"), std::string::npos) << "a function without samples\n" << text;

  // The extensible binary form reads back to the same profile.
  std::string ext = dir_.File("app.extbin");
  ASSERT_EQ(Optimize("sample-profile-binary", ext, w_.app, "stacks").status, 0);
  EXPECT_NE(Sh("tr -d '\\000' < " + ext + " | wc -c").out, Sh("wc -c < " + ext).out) << "not a binary profile";
  EXPECT_EQ(Sh("llvm-profdata-19 show --sample " + ext).out, Sh("llvm-profdata-19 show --sample " + prof).out);
  std::string back = dir_.File("back.txt");
  ASSERT_EQ(Sh("llvm-profdata-19 merge --sample --text " + ext + " -o " + back).status, 0);
  EXPECT_EQ(ProfdataShow(back), fns);

  // Same samples, same bytes.
  std::string again = dir_.File("again.prof");
  ASSERT_EQ(Optimize("sample-profile", again, w_.app, "stacks").status, 0);
  EXPECT_EQ(Sh("cmp " + prof + " " + again).status, 0);
  ASSERT_EQ(Optimize("sample-profile-binary", again, w_.app, "stacks").status, 0);
  EXPECT_EQ(Sh("cmp " + ext + " " + again).status, 0);
}

// --sample-counts ip-only: only the IP samples count (llvm-profgen
// --leading-ip-only): totals are a function's own samples (in hundredths:
// the block estimates), with no call targets, no head samples, and no
// function that only calls.
TEST_F(Emit, IpOnlySampleCountsLeaveCallersOut) {
  std::string prof = dir_.File("ip.prof");
  auto r = RunCmd({SyspgoBin(), "optimize", db_, "--emit", "sample-profile", "--sample-counts", "ip-only", "-o", prof,
                   "--binary", w_.app});
  ASSERT_EQ(r.status, 0) << r.err;
  auto fns = ProfdataShow(prof);
  std::string text = Sh("cat " + prof).out;
  EXPECT_EQ(fns["hot_kernel"], Counts(80000, 0)) << text;
  EXPECT_EQ(fns["warm_local"], Counts(30000, 0)) << text;
  EXPECT_EQ(fns.count("run_rounds"), 0u) << "a function with no IP sample\n" << text;
  EXPECT_EQ(fns.count("main"), 0u) << text;
  EXPECT_EQ(text.find("lib_mix"), std::string::npos) << "no call targets\n" << text;
  EXPECT_NE(text.find(": rotate_mix:"), std::string::npos) << "inlined frames still nest\n" << text;
  EXPECT_TRUE(FailedWith(
      RunCmd({SyspgoBin(), "optimize", db_, "--emit", "sample-profile", "--sample-counts", "both", "-o", prof}), 2,
      "--sample-counts is ip, ip-only or stacks, got 'both'"));
}

// --sample-counts ip (the default): the line counts of ip-only, plus the
// call targets of the call sites in functions that have IP samples, so
// clang can promote indirect calls. Here run_rounds and main get IP samples
// of their own (at the instruction after a call), and a sample in
// hot_kernel's prologue, before its frame exists, shows main as its caller:
// that is not a call main made.
TEST_F(Emit, IpSampleCountsAddCallTargetsToSampledFunctions) {
  uint64_t hot_entry = NmStarts(w_.app)["hot_kernel"], base = kAppBase;
  std::string sql = SampledStack(10, {base + w_.ret_warm, base + w_.ret_run}, 40) +
                    SampledStack(11, {base + w_.ret_run}, 20) + SampledStack(12, {base + hot_entry, base + w_.ret_run}, 10);
  ASSERT_EQ(ExecSql(db_, sql), "");
  std::string ip = dir_.File("ip.prof"), only = dir_.File("only.prof"), plain = dir_.File("default.prof");
  auto r = Optimize("sample-profile", ip, w_.app, "ip");
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(Optimize("sample-profile", only, w_.app, "ip-only").status, 0);
  ASSERT_EQ(Optimize("sample-profile", plain, w_.app).status, 0);
  EXPECT_EQ(Sh("cmp " + ip + " " + plain).status, 0) << "the default is not --sample-counts ip";
  std::string text = Sh("cat " + ip).out;
  auto fns = ProfdataShow(ip);
  EXPECT_EQ(fns, ProfdataShow(only)) << "call targets change no total and add no head samples\n" << text;
  EXPECT_EQ(fns["run_rounds"], Counts(4000, 0)) << text;
  EXPECT_EQ(fns["hot_kernel"], Counts(81000, 0)) << "the prologue sample counts in the total\n" << text;
  // run_rounds' calls list their targets, each with the count of its call's
  // line (one target each, so all of it); lib_mix is in another binary,
  // where clang cannot promote a call to.
  std::smatch m;
  EXPECT_TRUE(std::regex_search(text, m, std::regex(" [0-9.]+: ([1-9][0-9]*) hot_kernel:\\1\n"))) << text;
  EXPECT_TRUE(std::regex_search(text, m, std::regex(" [0-9.]+: ([1-9][0-9]*) warm_local:\\1\n"))) << text;
  EXPECT_EQ(text.find("lib_mix"), std::string::npos) << text;
  // main called run_rounds; the prologue sample is not a call main made.
  std::string main_body = Body(text, "main");
  EXPECT_TRUE(std::regex_search(main_body, m, std::regex(" [0-9.]+: ([1-9][0-9]*) run_rounds:\\1\n"))) << text;
  EXPECT_EQ(main_body.find(" hot_kernel:"), std::string::npos) << "the prologue sample as a call main made\n" << text;
  // Without the targets, the same lines and counts.
  std::string stripped = Sh("sed -E 's/^( +[0-9.]+: [0-9]+)( [A-Za-z_][A-Za-z0-9_.]*:[0-9]+)+$/\\1/' " + ip).out;
  EXPECT_NE(stripped, text) << "no call targets to strip";
  EXPECT_EQ(stripped, Sh("cat " + only).out);
}

// A call site's targets share its line's count by calls, not by the time
// below the call: each target's entry block says how often it was entered,
// and the site gets its share of those entries by its share of the
// target's time. Here the call that run_rounds makes to hot_kernel also
// shows warm_local below it (as an indirect call would) with less time
// (300 samples against 800), but warm_local's entry block has 100 times
// hot_kernel's samples: warm_local is entered far more often, so it gets
// the larger count. By time, hot_kernel would. (Call targets are listed in
// functions with IP samples: run_rounds gets some in the call's block.)
TEST_F(Emit, IpCallTargetsShareTheirSiteByCallsNotTime) {
  auto starts = NmStarts(w_.app);
  uint64_t base = kAppBase, hot_entry = starts["hot_kernel"], warm_entry = starts["warm_local"];
  std::string sql = SampledStack(20, {base + w_.warm_ip, base + w_.ret_hot, base + w_.ret_run}, 300) +
                    SampledStack(21, {base + warm_entry, base + w_.ret_warm, base + w_.ret_run}, 500) +
                    SampledStack(22, {base + hot_entry, base + w_.ret_hot, base + w_.ret_run}, 5) +
                    SampledStack(23, {base + w_.ret_hot, base + w_.ret_run}, 40);  // the call's own block
  ASSERT_EQ(ExecSql(db_, sql), "");
  std::string prof = dir_.File("ip.prof");
  auto r = Optimize("sample-profile", prof, w_.app, "ip");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string text = Sh("cat " + prof).out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex(" [0-9.]+: ([0-9]+) (hot_kernel|warm_local):([0-9]+) "
                                                    "(hot_kernel|warm_local):([0-9]+)\n")))
      << "no call site with both targets\n" << text;
  std::map<std::string, uint64_t> count = {{m[2], std::stoull(m[3])}, {m[4], std::stoull(m[5])}};
  EXPECT_GT(count["warm_local"], count["hot_kernel"]) << m[0] << "\n" << text;
  EXPECT_NEAR(static_cast<double>(count["warm_local"] + count["hot_kernel"]), std::stod(m[1]), 2.0)
      << "the targets share out the call line's count\n" << m[0];
}

// At an indirect call only functions whose address the program takes are
// call targets: warm_local below main's call through pointer_to can only
// have been jumped to (a tail call from the real target, whose frame it
// took over), and clang stops promoting a site's targets at the first
// whose type does not fit. A direct call keeps every target (the test
// above lists warm_local under hot_kernel's call). A binary without its
// code's relocations cannot tell, and then nothing is dropped.
TEST_F(Emit, IndirectCallTargetsAreFunctionsWhoseAddressIsTaken) {
  uint64_t ret_ptr = ReturnAddressOfIndirectCall(w_.app, "main");
  uint64_t in_via = ReturnAddressOfCall(w_.app, "via_pointer", "never_called");
  ASSERT_NE(ret_ptr, 0u);
  ASSERT_NE(in_via, 0u);
  uint64_t base = kAppBase;
  std::string sql = SampledStack(30, {base + w_.warm_ip, base + ret_ptr}, 300) +
                    SampledStack(31, {base + in_via, base + ret_ptr}, 100) +
                    SampledStack(32, {base + ret_ptr}, 40);  // main's own samples, at the call's line
  ASSERT_EQ(ExecSql(db_, sql), "");
  auto targets = [&](const std::string& binary) {
    std::string prof = dir_.File("indirect.prof");
    auto r = Optimize("sample-profile", prof, binary, "ip");
    EXPECT_EQ(r.status, 0) << r.err;
    std::string main_body = Body(Sh("cat " + prof).out, "main");
    // The call sites' targets, but for main's call of run_rounds.
    std::regex site(" [0-9.]+: [0-9]+((?: [a-z_]+:[0-9]+)+)\n");
    for (auto it = std::sregex_iterator(main_body.begin(), main_body.end(), site); it != std::sregex_iterator(); ++it)
      if ((*it)[1].str().find("run_rounds") == std::string::npos) return (*it)[1].str();
    ADD_FAILURE() << "no call site through the pointer in main\n" << main_body;
    return std::string();
  };
  std::string with_relocs = targets(w_.app);
  EXPECT_NE(with_relocs.find(" via_pointer:"), std::string::npos) << with_relocs;
  EXPECT_EQ(with_relocs.find("warm_local"), std::string::npos) << "a function whose address is never taken\n"
                                                              << with_relocs;

  std::string bare = dir_.File("pgo_app.norelocs");
  // What a link without --emit-relocs leaves: the dynamic relocations only.
  ASSERT_EQ(Sh("llvm-objcopy-19 --wildcard --remove-section='.rela.[!dp]*' " + w_.app + " " + bare).status, 0);
  ASSERT_EQ(Sh("readelf -SW " + bare + " | grep -c '\\.rela\\.text'").out, "0\n");
  std::string without = targets(bare);
  EXPECT_NE(without.find(" via_pointer:"), std::string::npos) << without;
  EXPECT_NE(without.find(" warm_local:"), std::string::npos) << "without the code's relocations nothing is known\n"
                                                             << without;
}

// IP counts are block estimates: a basic block's samples are shared by its
// instructions, so samples that land on another instruction of the same
// block (timer skid moves them) make the same profile, and the lines of the
// block all get the block's count, not the samples that hit each.
TEST_F(Emit, IpCountsAreTheirBasicBlocksSamplesSharedOut) {
  // The instruction after warm_ip, which is no branch: the same block.
  std::string dump = Sh("llvm-objdump-19 -d --no-show-raw-insn --start-address=" + std::to_string(w_.warm_ip) +
                        " --stop-address=" + std::to_string(w_.warm_ip + 32) + " " + w_.app).out;
  std::vector<std::pair<uint64_t, std::string>> insns;
  std::istringstream in(dump);
  for (std::string line; std::getline(in, line);) {
    unsigned long long a;
    char mnemonic[32];
    if (sscanf(line.c_str(), " %llx: %31s", &a, mnemonic) == 2) insns.push_back({a, mnemonic});
  }
  ASSERT_GE(insns.size(), 2u) << dump;
  ASSERT_EQ(insns[0].first, w_.warm_ip) << dump;
  ASSERT_TRUE(insns[0].second[0] != 'j' && insns[0].second.rfind("ret", 0) != 0) << "warm_ip ends its block\n" << dump;
  Workload moved = w_;
  moved.warm_ip = insns[1].first;
  std::string moved_db = dir_.File("moved.db");
  MakeFixture(moved_db, moved, w_.app, app_id_);

  std::string here = dir_.File("here.prof"), there = dir_.File("there.prof");
  auto r = Optimize("sample-profile", here, w_.app, "ip-only");
  ASSERT_EQ(r.status, 0) << r.err;
  r = RunCmd({SyspgoBin(), "optimize", moved_db, "--emit", "sample-profile", "--sample-counts", "ip-only", "-o", there,
              "--binary", w_.app});
  ASSERT_EQ(r.status, 0) << r.err;
  auto body = [](const std::string& text, const std::string& fn) {  // line -> count
    std::map<std::string, uint64_t> lines;
    std::istringstream in(Body(text, fn));
    for (std::string line; std::getline(in, line);) {
      char loc[32];
      unsigned long long n;
      if (sscanf(line.c_str(), " %31[0-9.]: %llu", loc, &n) == 2) lines[loc] = n;
    }
    return lines;
  };
  std::string a = Sh("cat " + here).out, b = Sh("cat " + there).out;
  auto lines = body(a, "warm_local");
  EXPECT_EQ(lines, body(b, "warm_local")) << "samples moved within a block changed the profile\n" << a << "\n" << b;
  // 300 samples, in hundredths, shared by the block's instructions: no line
  // holds all of them, and more than one line has the block's count.
  uint64_t top = 0;
  for (const auto& [loc, n] : lines) top = std::max(top, n);
  size_t at_top = 0;
  for (const auto& [loc, n] : lines) at_top += n == top;
  EXPECT_GT(top, 0u) << a;
  EXPECT_LT(top, 30000u) << a;
  EXPECT_GE(at_top, 2u) << a;
}

TEST_F(Emit, ClangUsesTheSampleProfileWithoutComplaint) {
  std::string prof = dir_.File("app.prof");
  ASSERT_EQ(Optimize("sample-profile", prof, w_.app).status, 0);
  // LLVM's own coverage checks: every record and every sample of the
  // profile must land on the compiled code, or clang warns (here: fails).
  std::string cc = std::string("clang-19") + kFlags + "-Werror -mllvm -sample-profile-check-record-coverage=100 "
                   "-mllvm -sample-profile-check-sample-coverage=100 -c " SYSPGO_PGO_SRC "/pgo_app.c -o " +
                   dir_.File("app.o") + " -fprofile-sample-use=";
  auto r = Sh(cc + prof + " 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "");
  auto ext = dir_.File("app.extbin");
  ASSERT_EQ(Optimize("sample-profile-binary", ext, w_.app).status, 0);
  r = Sh(cc + ext + " 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  // The checks bite: a profile whose hot_kernel lines are shifted by 40 fails them.
  std::string bad = dir_.File("bad.prof");
  ASSERT_EQ(Sh("awk '/^hot_kernel/{h=1;print;next} /^[^ ]/{h=0} h && /^ [0-9]/{sub(/^ /,\" 4\")} {print}' " + prof +
               " > " + bad).status, 0);
  ASSERT_NE(Sh("cat " + bad).out, Sh("cat " + prof).out);
  r = Sh(cc + bad + " 2>&1");
  EXPECT_NE(r.status, 0) << "clang accepted a profile with wrong line offsets";
  EXPECT_NE(r.out.find("profile"), std::string::npos) << r.out;
}

TEST_F(Emit, BoltMatchesTheFdataToTheSampledFunctions) {
  std::string fdata = dir_.File("app.fdata");
  auto r = Optimize("fdata", fdata, w_.app);
  ASSERT_EQ(r.status, 0) << r.err;
  std::string text = Sh("cat " + fdata).out;
  EXPECT_EQ(text.substr(0, 18), "no_lbr cpu-clock:\n");
  EXPECT_NE(text.find("1 warm_local/1 "), std::string::npos) << "local symbols are name/N to BOLT\n" << text;
  auto starts = NmStarts(w_.app);
  char want[64];
  snprintf(want, sizeof want, "1 hot_kernel %llx 600\n",
           static_cast<unsigned long long>(w_.rotate_ip - starts["hot_kernel"]));
  EXPECT_NE(text.find(want), std::string::npos) << want << text;
  auto b = Sh("/usr/lib/llvm-19/bin/llvm-bolt " + w_.app + " -o " + dir_.File("app.bolt") + " -data " + fdata +
              " 2>&1");
  ASSERT_EQ(b.status, 0) << b.out;
  // hot_kernel, warm_local, run_rounds, main: the sampled functions of this binary.
  EXPECT_NE(b.out.find("BOLT-INFO: 4 out of "), std::string::npos) << b.out;
  EXPECT_EQ(b.out.find("BOLT-ERROR"), std::string::npos) << b.out;
  EXPECT_EQ(b.out.find("stale"), std::string::npos) << b.out;
}

TEST_F(Emit, LinkerPlacesTheOrderedFunctionsTogether) {
  std::string order = dir_.File("app.order");
  ASSERT_EQ(Optimize("order", order, w_.app).status, 0);
  std::vector<std::string> listed = Split(Trim(Sh("cat " + order).out), '\n');
  // main calls run_rounds, which calls the hot pair: one chain, never_called left out.
  EXPECT_EQ(listed, (std::vector<std::string>{"main", "run_rounds", "hot_kernel", "warm_local"}));
  std::string out = dir_.File("app.ordered");
  auto r = Sh("clang-19" + std::string(kFlags) + "-fPIE -pie -fuse-ld=lld -o " + out + " " SYSPGO_PGO_SRC
              "/pgo_app.c -L" + std::string(SYSPGO_PGO_BIN) + " -lpgo_lib -Wl,--symbol-ordering-file=" + order +
              " 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "") << "the linker warned about the order file";
  // In address order, the listed functions come one after another, as listed.
  std::vector<std::string> text_syms;
  std::istringstream in(Sh("nm -n " + out + " | awk '$2 ~ /^[tT]$/ {print $3}'").out);
  for (std::string s; std::getline(in, s);) text_syms.push_back(s);
  auto first = std::find(text_syms.begin(), text_syms.end(), listed[0]);
  ASSERT_NE(first, text_syms.end());
  ASSERT_LE(static_cast<size_t>(text_syms.end() - first), text_syms.size());
  std::vector<std::string> placed(first, first + std::min<size_t>(listed.size(), text_syms.end() - first));
  EXPECT_EQ(placed, listed);
  // Without the order file, source order: never_called sits between them.
  auto plain = Sh("nm -n " + w_.app + " | awk '$2 ~ /^[tT]$/ {print $3}' | grep -n never_called").out;
  EXPECT_NE(plain, "");
}

TEST(CallChainOrder, HeaviestCallerChainsAndDensity) {
  // a calls b (heavy) and c (light); d is alone and dense; e is huge and cold.
  std::vector<OrderNode> n = {{"a", 100, 10}, {"b", 100, 500}, {"c", 100, 5}, {"d", 10, 50}, {"e", 2 << 20, 1}};
  std::vector<OrderEdge> e = {{0, 1, 500}, {0, 2, 5}, {0, 4, 1}};
  std::vector<std::string> names;
  for (uint32_t i : CallChainOrder(n, e)) names.push_back(n[i].name);
  EXPECT_EQ(names, (std::vector<std::string>{"d", "a", "b", "c", "e"}));
}

TEST_F(Emit, PprofParsesBackThroughTheProto) {
  std::string out = dir_.File("run.pb.gz");
  auto r = Optimize("pprof", out, "");
  ASSERT_EQ(r.status, 0) << r.err;
  gzFile gz = gzopen(out.c_str(), "rb");
  ASSERT_NE(gz, nullptr);
  std::string bytes;
  char buf[65536];
  for (int n; (n = gzread(gz, buf, sizeof buf)) > 0;) bytes.append(buf, n);
  gzclose(gz);
  perftools::profiles::Profile p;
  ASSERT_TRUE(p.ParseFromString(bytes));
  ASSERT_EQ(p.string_table(0), "");
  ASSERT_EQ(p.sample_type_size(), 2);
  EXPECT_EQ(p.string_table(p.sample_type(1).type()), "cpu");
  EXPECT_EQ(p.period(), 1000000);
  std::map<uint64_t, const perftools::profiles::Location*> locs;
  for (const auto& l : p.location()) locs[l.id()] = &l;
  std::map<uint64_t, std::string> fns;
  for (const auto& f : p.function()) fns[f.id()] = p.string_table(f.name());
  std::map<std::string, int64_t> leaf, inlined_leaf;
  int64_t total = 0;
  for (const auto& s : p.sample()) {
    total += s.value(0);
    EXPECT_EQ(s.value(1), s.value(0) * 1000000);
    const auto* l = locs.at(s.location_id(0));
    leaf[fns[l->line(l->line_size() - 1).function_id()]] += s.value(0);
    inlined_leaf[fns[l->line(0).function_id()]] += s.value(0);
    EXPECT_EQ(fns[locs.at(s.location_id(s.location_id_size() - 1))->line(0).function_id()], "main");
  }
  EXPECT_EQ(total, 1200);
  EXPECT_EQ(leaf["hot_kernel"], 800);
  EXPECT_EQ(inlined_leaf["rotate_mix"], 600);
  EXPECT_EQ(leaf["lib_mix"], 100);
  bool lib_mapping = false;
  for (const auto& m : p.mapping())
    if (p.string_table(m.filename()) == w_.lib) {
      lib_mapping = true;
      EXPECT_EQ(p.string_table(m.build_id()), *ReadBuildId(w_.lib));
      EXPECT_TRUE(m.has_inline_frames());
    }
  EXPECT_TRUE(lib_mapping);
}

TEST_F(Emit, FoldedStacks) {
  std::string out = dir_.File("run.folded");
  ASSERT_EQ(Optimize("folded", out, "").status, 0);
  std::string text = Sh("cat " + out).out;
  EXPECT_NE(text.find("pgo_app;main;run_rounds;hot_kernel;rotate_mix 600\n"), std::string::npos) << text;
  EXPECT_NE(text.find("pgo_app;main;run_rounds;lib_mix 100\n"), std::string::npos) << text;
  EXPECT_EQ(Split(Trim(text), '\n').size(), 4u);
}

// What unwinding reads past a frame without a frame pointer is not a
// return address: a user stack ends at the first address no user mapping
// can hold (here all ones, then a non-canonical one, as a real run of
// `sleep` had), so the artifacts are those of the stacks without them, and
// a pprof file of the run reads back the same (PprofRun).
TEST_F(Emit, AUserStackEndsAtTheFirstAddressNoMappingCanHold) {
  std::string garbled = dir_.File("garbled.db");
  MakeFixture(garbled, w_, w_.app, app_id_, true, {~0ull, 0x69667a7400524943ull});
  std::string clean = dir_.File("clean.folded"), out = dir_.File("garbled.folded");
  ASSERT_EQ(Optimize("folded", clean, "").status, 0);
  auto r = RunCmd({SyspgoBin(), "optimize", garbled, "--emit", "folded", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadAll(out), ReadAll(clean));
  EXPECT_FALSE(ReadAll(clean).empty());
}

// The stall analyses name user stacks through StackNames: the same cut.
TEST_F(Emit, AnAnalysisUserStackEndsAtTheFirstAddressNoMappingCanHold) {
  std::string garbled = dir_.File("garbled.db");
  MakeFixture(garbled, w_, w_.app, app_id_, true, {~0ull, 0x69667a7400524943ull});
  auto names = [](const std::string& path) {
    std::vector<std::vector<std::string>> out;
    auto db = OpenProfileDb(path, DbMode::kReadOnly);
    EXPECT_TRUE(db.ok()) << path;
    if (!db.ok()) return out;
    auto n = StackNames::Load(*db, 1);
    EXPECT_TRUE(n.ok()) << path;
    if (!n.ok()) return out;
    for (int64_t id = 1; id <= 4; ++id) out.push_back((*n)->User(id, 100, 1));
    return out;
  };
  auto clean = names(db_), cut = names(garbled);
  ASSERT_EQ(clean.size(), 4u);
  EXPECT_FALSE(clean[0].empty());
  EXPECT_EQ(cut, clean);
}

TEST_F(Emit, MergeWeighsRuns) {
  std::string one = dir_.File("one.prof"), two = dir_.File("two.prof"), three = dir_.File("three.prof");
  ASSERT_EQ(Optimize("sample-profile", one, w_.app).status, 0);
  auto r = RunCmd({SyspgoBin(), "merge", db_, db_ + ":1", "--binary", w_.app, "--emit", "sample-profile", "-o", two});
  ASSERT_EQ(r.status, 0) << r.err;
  r = RunCmd({SyspgoBin(), "merge", db_ + ":1@3", "--binary", w_.app, "--emit", "sample-profile", "-o", three});
  ASSERT_EQ(r.status, 0) << r.err;
  auto a = ProfdataShow(one), b = ProfdataShow(two), c = ProfdataShow(three);
  ASSERT_FALSE(a.empty());
  for (const auto& [fn, counts] : a) {
    EXPECT_EQ(b[fn], Counts(counts.first * 2, counts.second * 2)) << fn;
    EXPECT_EQ(c[fn], Counts(counts.first * 3, counts.second * 3)) << fn;
  }
  // --normalize: a run of twice the samples counts the same as the other.
  std::string big = dir_.File("big.db"), norm = dir_.File("norm.prof");
  MakeFixture(big, w_, w_.app, app_id_);
  {
    Db db = OpenDb(big);
    db = Db();
    auto rw = OpenProfileDb(big, DbMode::kReadWrite);
    ASSERT_TRUE(rw.ok());
    ASSERT_TRUE(rw->Exec("INSERT INTO cpu_sample (run_id, ts, pid, tid, cpu, kernel, ip, user_stack_id, kernel_stack_id) "
                         "SELECT run_id, ts + 100000, pid, tid, cpu, kernel, ip, user_stack_id, kernel_stack_id "
                         "FROM cpu_sample").ok());
  }
  r = RunCmd({SyspgoBin(), "merge", db_, big, "--normalize", "--binary", w_.app, "--emit", "sample-profile", "-o", norm});
  ASSERT_EQ(r.status, 0) << r.err;
  auto n = ProfdataShow(norm);
  // (IP counts are in hundredths of a sample: the block estimates.)
  EXPECT_EQ(n["hot_kernel"].first, 800u * 4 * 100) << "each run scaled to the larger one's 2400 samples";
}

// --json: the counts machines read (syspgo pgo does) instead of the line on
// stderr, which is for people and may change; both say the same.
TEST_F(Emit, JsonSummaryHasTheCountsOfTheLineForPeople) {
  std::string out = dir_.File("app.prof");
  auto r = RunCmd({SyspgoBin(), "optimize", db_, "--binary", w_.app, "--emit", "sample-profile", "-o", out, "--json", "-"});
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["output"], out);
  EXPECT_EQ(j["kind"], "sample-profile");
  EXPECT_EQ(j["binary"], w_.app);
  EXPECT_EQ(j["runs"], 1);
  EXPECT_EQ(j["samples"], 1200);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex(R"((\d+) of (\d+) samples pass through .*, (\d+) have their IP in it)")))
      << r.err;
  EXPECT_EQ(j["binary_samples"].get<uint64_t>(), std::stoull(m[1]));
  EXPECT_EQ(j["samples"].get<uint64_t>(), std::stoull(m[2]));
  EXPECT_EQ(j["binary_leaf"].get<uint64_t>(), std::stoull(m[3]));
  EXPECT_GT(j["binary_with_line"].get<uint64_t>(), 0u);
  EXPECT_LE(j["binary_with_line"], j["binary_leaf"]);

  // merge: the same figures, for every run merged.
  std::string json = dir_.File("merge.json");
  r = RunCmd({SyspgoBin(), "merge", db_, db_, "--binary", w_.app, "--emit", "order", "-o", dir_.File("order.txt"),
              "--json", json});
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json k = nlohmann::json::parse(ReadAll(json), nullptr, false);
  ASSERT_TRUE(k.is_object()) << ReadAll(json);
  EXPECT_EQ(k["kind"], "order");
  EXPECT_EQ(k["runs"], 2);
  EXPECT_EQ(k["samples"].get<uint64_t>(), 2 * j["samples"].get<uint64_t>());
  EXPECT_EQ(k["binary_samples"].get<uint64_t>(), 2 * j["binary_samples"].get<uint64_t>());

  // A cold-start artifact has no such summary: refused, not ignored.
  EXPECT_TRUE(FailedWith(
      RunCmd({SyspgoBin(), "optimize", db_, "--emit", "plan", "-o", dir_.File("x.plan"), "--json", "-"}), 2, "--json"));
}

TEST_F(Emit, AnalyzeHotListsFunctionsEdgesAndPaths) {
  auto r = RunCmd({SyspgoBin(), "analyze", db_, "hot", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["samples"], 1200) << r.out;
  auto has = [&](const char* list, const nlohmann::json& row) {
    const nlohmann::json& rows = j[list];
    return std::find(rows.begin(), rows.end(), row) != rows.end();
  };
  EXPECT_TRUE(has("functions", {{"name", "hot_kernel"}, {"binary", "pgo_app"}, {"self", 200}, {"total", 800}})) << r.out;
  EXPECT_TRUE(has("edges", {{"caller", "run_rounds"}, {"callee", "hot_kernel"}, {"samples", 800}})) << r.out;
  EXPECT_TRUE(has("paths", {{"samples", 600}, {"frames", {"main", "run_rounds", "hot_kernel", "rotate_mix"}}})) << r.out;
  r = RunCmd({SyspgoBin(), "analyze", db_, "hot", "--binary", w_.lib});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("100 samples"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("warm_local"), std::string::npos) << "samples not through the library\n" << r.out;
  EXPECT_TRUE(
      FailedWith(RunCmd({SyspgoBin(), "analyze", db_, "hot", "--pid", "999"}), 1, "run 1 has no process of pid 999"));
}

TEST_F(Emit, BadInputsSayWhatIsMissing) {
  // A run without CPU samples.
  std::string empty = dir_.File("empty.db");
  MakeFixture(empty, w_, w_.app, app_id_, false);
  auto r = RunCmd({SyspgoBin(), "optimize", empty, "--binary", w_.app, "--emit", "sample-profile", "-o", dir_.File("x")});
  EXPECT_TRUE(FailedWith(r, 1, "has no CPU samples"));
  EXPECT_NE(r.err.find("--probes cpu"), std::string::npos) << r.err;

  // A binary the run never mapped.
  r = Optimize("fdata", dir_.File("x"), "/bin/true");
  EXPECT_TRUE(FailedWith(r, 1, "never mapped"));
  EXPECT_NE(r.err.find(w_.app), std::string::npos) << "lists what was sampled: " << r.err;

  // A binary without debug info: symbols are enough for BOLT, not for a sample profile.
  std::string nodebug_db = dir_.File("nodebug.db");
  MakeFixture(nodebug_db, w_, Pgo("pgo_app_nodebug"), *ReadBuildId(Pgo("pgo_app_nodebug")));
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "optimize", nodebug_db, "--binary", Pgo("pgo_app_nodebug"), "--emit",
                                 "sample-profile", "-o", dir_.File("x")}),
                         1, "Build with -g or -gline-tables-only"));
  // A stripped binary has nothing for BOLT to match names against.
  std::string stripped_db = dir_.File("stripped.db");
  MakeFixture(stripped_db, w_, Pgo("pgo_app.stripped"), app_id_);
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "optimize", stripped_db, "--binary", Pgo("pgo_app.stripped"), "--emit",
                                 "fdata", "-o", dir_.File("x")}),
                         1, "no symbol table"));

  // A profile for a different build-id: the path now holds another build.
  std::string moved = dir_.File("pgo_app");
  ASSERT_EQ(Sh("cp " + w_.app + " " + moved).status, 0);
  std::string stale_db = dir_.File("stale.db");
  MakeFixture(stale_db, w_, moved, app_id_);
  ASSERT_EQ(Sh("cp " + Pgo("pgo_app_nodebug") + " " + moved).status, 0);
  r = RunCmd({SyspgoBin(), "optimize", stale_db, "--binary", moved, "--emit", "sample-profile", "-o", dir_.File("x")});
  EXPECT_TRUE(FailedWith(r, 1, "rebuilt or replaced"));
  EXPECT_NE(r.err.find(app_id_), std::string::npos) << r.err;

  // Missing options.
  EXPECT_TRUE(
      FailedWith(RunCmd({SyspgoBin(), "optimize", db_, "--emit", "order", "-o", dir_.File("x")}), 1, "--binary PATH"));
  EXPECT_TRUE(
      FailedWith(RunCmd({SyspgoBin(), "optimize", db_, "--emit", "bogus", "-o", dir_.File("x")}), 2, "sample-profile"));
}

// One list of kinds (optimize/artifact_kinds.h) serves both commands: the
// help of optimize shows every kind, merge takes the CPU-sample kinds only.
TEST_F(Emit, EveryArtifactKindIsInTheHelpAndMergeTakesTheSampleKinds) {
  CmdResult help = RunCmd({SyspgoBin(), "optimize", "--help"});
  ASSERT_EQ(help.status, 0) << help.err;
  for (const ArtifactKind& k : ArtifactKinds())
    EXPECT_NE(help.out.find(std::string(k.name) + " "), std::string::npos) << k.name << " missing from optimize --help";
  const std::string sample_kinds = ArtifactKindNames(ArtifactInput::kCpuSamples);
  EXPECT_EQ(sample_kinds, "sample-profile, sample-profile-binary, fdata, order, pprof, folded");
  help = RunCmd({SyspgoBin(), "merge", "--help"});
  EXPECT_NE(help.out.find(sample_kinds), std::string::npos) << help.out;
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "merge", db_, "--emit", "plan", "-o", dir_.File("x")}), 1,
                         "unknown profile artifact 'plan'; choose one of: " + sample_kinds));
}

// The whole path on the real kernel: sample the workload, then every consumer.
TEST(EmitEndToEnd, CollectOptimizeConsume) {
  TempDir dir;
  std::string db = dir.File("run.db"), app = Pgo("pgo_app");
  auto r = RunCmd({SyspgoBin(), "collect", "--probes", "cpu", "--freq", "999", "-o", db, "--", app, "1500"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string prof = dir.File("app.prof");
  r = RunCmd({SyspgoBin(), "optimize", db, "--binary", app, "--emit", "sample-profile", "--sample-counts", "stacks",
              "-o", prof});
  ASSERT_EQ(r.status, 0) << r.err;
  // hot_kernel (with its inlined rotate_mix) and warm_local take most of the
  // time (about 40% and 35% here; lib_mix the rest, outside this binary).
  std::string shown = Sh("llvm-profdata-19 show --sample " + prof).out;
  char name[256];
  unsigned long long total, head;
  std::map<std::string, uint64_t> totals;
  std::istringstream in(shown);
  for (std::string line; std::getline(in, line);)
    if (sscanf(line.c_str(), "Function: %255[^:]: %llu, %llu", name, &total, &head) == 3) totals[name] = total;
  EXPECT_GT(totals["hot_kernel"], 1500u * 25 / 100) << shown;
  EXPECT_GT(totals["warm_local"], 1500u * 15 / 100) << shown;
  EXPECT_GT(totals["hot_kernel"] + totals["warm_local"], 1500u * 6 / 10) << shown;
  EXPECT_GE(totals["run_rounds"], totals["hot_kernel"] + totals["warm_local"]);
  auto c = Sh(std::string("clang-19") + kFlags + "-Werror -fprofile-sample-use=" + prof + " -c " SYSPGO_PGO_SRC
              "/pgo_app.c -o " + dir.File("app.o") + " 2>&1");
  EXPECT_EQ(c.status, 0) << c.out;

  std::string fdata = dir.File("app.fdata");
  ASSERT_EQ(RunCmd({SyspgoBin(), "optimize", db, "--binary", app, "--emit", "fdata", "-o", fdata}).status, 0);
  auto b = Sh("/usr/lib/llvm-19/bin/llvm-bolt " + app + " -o " + dir.File("app.bolt") + " -data " + fdata + " 2>&1");
  EXPECT_EQ(b.status, 0) << b.out;
  EXPECT_NE(b.out.find("BOLT-INFO: 4 out of "), std::string::npos) << b.out;

  std::string order = dir.File("app.order");
  ASSERT_EQ(RunCmd({SyspgoBin(), "optimize", db, "--binary", app, "--emit", "order", "-o", order}).status, 0);
  auto listed = Split(Trim(Sh("cat " + order).out), '\n');
  // Callers first, along the chain; the two callees of run_rounds follow in
  // the order of their sample density, which is close between them (about
  // 40% and 35% of the time), so a real run may give either.
  ASSERT_EQ(listed.size(), 4u) << Sh("cat " + order).out;
  EXPECT_EQ(std::vector<std::string>(listed.begin(), listed.begin() + 2), (std::vector<std::string>{"main", "run_rounds"}));
  std::sort(listed.begin() + 2, listed.end());
  EXPECT_EQ(std::vector<std::string>(listed.begin() + 2, listed.end()), (std::vector<std::string>{"hot_kernel", "warm_local"}));

  auto hot = RunCmd({SyspgoBin(), "analyze", db, "hot", "--binary", Pgo("libpgo_lib.so")});
  ASSERT_EQ(hot.status, 0) << hot.err;
  EXPECT_NE(hot.out.find("lib_mix"), std::string::npos) << "shared library frames resolve\n" << hot.out;
}

}  // namespace
}  // namespace syspgo::test
