//===- pgo_test.cc - `syspgo pgo` and cmake/SysPGO.cmake, end to end ------===//
// Runs the real `syspgo pgo` on tests/workloads/pgo_demo built by make, by
// CMake and by plain compiler commands, and checks what a user and a CI job
// rely on: every stage's artifact, the manifest and summary fields, that the
// flags reached the compiler and linker, that the optimized binaries print
// what the plain one prints, and that a failing stage is named. The CMake
// module is checked on tests/data/pgo_cmake with a prepared profile, and on
// the demo's own CMake project with a directory a real pgo run wrote.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "common/util.h"
#include "pgo/pgo.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

// A wrapped message as one line: the line breaks, indents and the
// "syspgo pgo: " a wrapped progress line repeats are spaces.
std::string Unwrapped(const std::string& text) {
  std::string out;
  for (std::string w : Split(text, '\n')) {
    if (w.starts_with("syspgo pgo: ")) w = w.substr(sizeof("syspgo pgo: ") - 1);
    out += Trim(w) + " ";
  }
  return out;
}

namespace fs = std::filesystem;


// A copy of the workload's sources in `t`/src (the builds write there).
std::string CopyDemo(const TempDir& t, const char* from = SYSPGO_PGO_DEMO) {
  std::string src = t.File("src");
  fs::create_directories(src);
  for (auto& e : fs::directory_iterator(from)) fs::copy_file(e.path(), src + "/" + e.path().filename().string());
  return src;
}

// `syspgo pgo ARGS` run in directory `cwd`. A training run samples at
// 9999 Hz unless ARGS say otherwise or `thick` is false: kTrain then gives
// a profile thick enough that pgo does not train again (a test of its own
// checks that).
CmdResult Pgo(const std::string& cwd, const std::vector<std::string>& args, bool thick = true) {
  std::vector<std::string> argv = {SyspgoBin(), "pgo"};
  argv.insert(argv.end(), args.begin(), args.end());
  bool train = thick && std::find(args.begin(), args.end(), "--train") != args.end();
  if (train && std::find(args.begin(), args.end(), "--freq") == args.end()) argv.insert(argv.end(), {"--freq", "9999"});
  return Sh("cd " + ShellQuote(cwd) + " && exec " + JoinShell(argv));
}

// The stdout of a shell command, which must succeed.
std::string Out(const std::string& cmd) {
  auto r = Sh(cmd);
  EXPECT_EQ(r.status, 0) << cmd << ": " << r.err;
  return r.out;
}

// The member names of a JSON object in the file's order, joined by commas:
// the summary lists its stages and variants in the pipeline's order.
std::string Keys(const nlohmann::ordered_json& o) {
  std::string out;
  if (o.is_object())
    for (const auto& [k, v] : o.items()) out += (out.empty() ? "" : ",") + k;
  return out;
}

// The options of a BOLT command line that lay code out (-reorder-*, -split-*).
std::vector<std::string> LayoutOptions(const std::string& command) {
  std::vector<std::string> out;
  std::istringstream in(command);
  for (std::string o; in >> o;)
    if (o.starts_with("-reorder") || o.starts_with("-split")) out.push_back(o);
  return out;
}

// Compiler calls of one stage, as the wrapper logged them.
std::vector<std::string> Calls(const std::string& dir, const std::string& stage) {
  std::vector<std::string> out;
  std::istringstream in(ReadAll(dir + "/" + stage + "/compiler-calls.log"));
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

const char kTrain[] = "./demo train 40000";
const char kMakeBuild[] = "make clean >/dev/null; make";

TEST(PgoWrapper, AddsMissingFlagsOnceAndKeepsTheBuildsOwn) {
  TempDir t;
  std::string bin = t.File("bin"), log = t.File("calls.log");
  PgoStageNeeds needs;
  needs.frame_pointers = needs.profile_debug_info = needs.function_sections = needs.bolt_input = true;
  ASSERT_TRUE(WriteCompilerWrappers(bin, "base", "/usr/bin/clang-19", "/usr/bin/clang++-19", PgoCompileFlags(needs),
                                    PgoLinkFlags(needs), log)
                  .ok());
  std::ofstream(t.File("x.c")) << "int main(void) { return 0; }\n";
  // The build's own -g must not be lowered to line tables, and a flag it
  // already has is not added twice.
  auto c = Sh("cd " + t.path() + " && " + bin + "/cc -g -O1 -ffunction-sections -c x.c -o x.o && " + bin + "/gcc x.o -o x");
  ASSERT_EQ(c.status, 0) << c.err;
  std::istringstream in(ReadAll(log));
  std::string compile, link;
  std::getline(in, compile);
  std::getline(in, link);
  EXPECT_EQ(compile.rfind("compile ", 0), 0u) << compile;
  EXPECT_NE(compile.find("-g -O1"), std::string::npos) << compile;
  EXPECT_EQ(compile.find("-gline-tables-only"), std::string::npos) << compile;
  EXPECT_NE(compile.find("-fdebug-info-for-profiling"), std::string::npos) << compile;
  EXPECT_NE(compile.find("-fno-omit-frame-pointer"), std::string::npos) << compile;
  EXPECT_EQ(compile.find("-ffunction-sections"), compile.rfind("-ffunction-sections")) << compile;
  EXPECT_EQ(compile.find("-fuse-ld=lld"), std::string::npos) << "link flags on a compile-only call: " << compile;
  EXPECT_EQ(link.rfind("link ", 0), 0u) << link;
  EXPECT_NE(link.find("-fuse-ld=lld"), std::string::npos) << link;
  EXPECT_NE(link.find("-Wl,--emit-relocs"), std::string::npos) << link;
  // What reached the binary: clang and lld (through the name gcc), and
  // the relocations BOLT needs.
  std::string comment = Out("readelf -p .comment " + t.File("x"));
  EXPECT_NE(comment.find("clang version 19"), std::string::npos) << comment;
  EXPECT_NE(comment.find("Linker: Debian LLD 19"), std::string::npos) << comment;
  EXPECT_NE(Out("readelf -S " + t.File("x")).find(".rela.text"), std::string::npos);
}

// The consumers' reports, as llvm-bolt 19 and clang 19 word them. A line
// that mentions a figure in other words is returned as unread (pgo warns
// with it) instead of leaving the figure at a silent zero.
TEST(PgoReports, BoltProfileAndStaleLinesAreRead) {
  PgoBoltReport r = ReadBoltReport(
      "BOLT-INFO: 4 out of 14 functions in the binary (28.6%) have non-empty execution profile\n"
      "BOLT-WARNING: 3 (75.0% of all profiled) functions have invalid (possibly stale) profile. Use -report-stale to "
      "see the list.\n"
      "BOLT-WARNING: 120 out of 400 samples in the binary (30.0%) belong to functions with invalid (possibly stale) "
      "profile.\n");
  EXPECT_TRUE(r.has_profile_line);
  EXPECT_EQ(r.functions_with_profile, 4u);
  EXPECT_EQ(r.functions_in_binary, 14u);
  EXPECT_EQ(r.stale_functions, 3u);
  EXPECT_DOUBLE_EQ(r.stale_share, 0.75);
  EXPECT_TRUE(r.unread.empty());

  // No stale line: no stale functions, nothing unread.
  r = ReadBoltReport("BOLT-INFO: 4 out of 4 functions in the binary (100.0%) have non-empty execution profile\n");
  EXPECT_EQ(r.stale_functions, 0u);
  EXPECT_TRUE(r.unread.empty());

  // Reworded: said, with the line.
  r = ReadBoltReport("BOLT-INFO: 4 of 14 binary functions (28.6%) have non-empty execution profile\n"
                     "BOLT-WARNING: three functions have invalid (possibly stale) profile.\n");
  EXPECT_FALSE(r.has_profile_line);
  ASSERT_EQ(r.unread.size(), 2u);
  EXPECT_EQ(r.unread[0].figure, "bolt.functions_with_profile");
  EXPECT_EQ(r.unread[0].line, "BOLT-INFO: 4 of 14 binary functions (28.6%) have non-empty execution profile");
  EXPECT_EQ(r.unread[1].figure, "bolt.stale_functions");
}

// BOLT 19 on a PIE whose dispatch jumps through a jump table it cannot
// follow: the one profiled function is left as it was, and the stage is
// left out, saying why; a binary where BOLT used the profile is kept.
TEST(PgoReports, BoltThatUsedNoProfileIsLeftOutWithItsReason) {
  const std::string log =
      "BOLT-INFO: forcing -jump-tables=move as PIC jump table was detected in function vm_run\n"
      "BOLT-WARNING: failed to post-process indirect branches for vm_run\n"
      "BOLT-INFO: operating with basic samples profiling data (no LBR).\n"
      "BOLT-INFO: 0 out of 23 functions in the binary (0.0%) have non-empty execution profile\n"
      "BOLT-INFO: 1 function with profile could not be optimized\n";
  PgoBoltReport r = ReadBoltReport(log);
  EXPECT_EQ(r.profiled_not_optimized, 1u);
  ASSERT_EQ(r.indirect_branch_failures, std::vector<std::string>{"vm_run"});
  std::string why = BoltLeftOutReason(r, 1);
  EXPECT_EQ(why.rfind("BOLT applied the profile to none of its 1 function(s): 1 with a profile could not be optimized "
                      "(BOLT could not follow the indirect branches of vm_run: ", 0), 0u) << why;
  // Without the -v=1 line: still left out, without the name.
  why = BoltLeftOutReason(ReadBoltReport(
      "BOLT-INFO: 0 out of 23 functions in the binary (0.0%) have non-empty execution profile\n"), 3);
  EXPECT_EQ(why, "BOLT applied the profile to none of its 3 function(s)");
  // A profile BOLT used, or no profile line or no profile at all: kept.
  EXPECT_EQ(BoltLeftOutReason(ReadBoltReport(
      "BOLT-INFO: 1 out of 24 functions in the binary (4.2%) have non-empty execution profile\n"), 1), "");
  EXPECT_EQ(BoltLeftOutReason(ReadBoltReport("BOLT-INFO: done\n"), 1), "");
  EXPECT_EQ(BoltLeftOutReason(r, 0), "");
}

TEST(PgoReports, ClangCoverageWarningsAreSummedAndARewordedOneIsUnread) {
  PgoSampleCoverage c = ReadSampleCoverage(
      "demo.c:10:1: warning: 1 of 2 available profile samples (50%) were applied [-Wbackend-plugin]\n"
      "cc -O2 -c machine.c\n"
      "machine.c:3:1: warning: 30 of 40 available profile samples (75%) were applied [-Wbackend-plugin]\n");
  EXPECT_EQ(c.functions, 2);
  EXPECT_EQ(c.applied, 31u);
  EXPECT_EQ(c.available, 42u);
  EXPECT_TRUE(c.unread.empty());
  EXPECT_EQ(ReadSampleCoverage("make: nothing to be done\n").functions, 0);

  c = ReadSampleCoverage("demo.c:10:1: warning: applied 1 of 2 available profile samples [-Wbackend-plugin]\n");
  EXPECT_EQ(c.functions, 0);
  ASSERT_EQ(c.unread.size(), 1u);
  EXPECT_EQ(c.unread[0].figure, "samples_not_applied");
}

TEST(Pgo, MakeBuildEveryStageEndToEnd) {
  TempDir t;
  std::string src = CopyDemo(t), dir = t.File("pgo");
  auto r = Pgo(src, {"--build", kMakeBuild, "--binary", "./demo", "--train", kTrain, "--eval", "./demo eval 3000",
                     "--runs", "3", "--profile-kind", "flat", "--dir", dir});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("[1/9] plain"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[9/9] eval"), std::string::npos) << r.err;

  for (const char* f : {"plain/demo", "base/demo", "train/train.db", "profile/sample.prof", "profile/order.txt", "profile/bolt.fdata",
                        "sample/demo", "order/demo", "retrain/retrain.db", "bolt/demo", "bolt/bolt.log", "manifest.json",
                        "summary.json"})
    EXPECT_TRUE(fs::exists(dir + "/" + f)) << f;

  std::string sum = dir + "/summary.json", man = dir + "/manifest.json";
  nlohmann::ordered_json s = ReadOrderedJson(sum);
  nlohmann::json m = ReadJson(man);
  EXPECT_EQ(s["status"], "ok");
  EXPECT_TRUE(s.contains("failed_stage") && s["failed_stage"].is_null()) << s["failed_stage"];
  EXPECT_EQ(Keys(s["stages"]), "plain,build,train,profile,sample,order,retrain,bolt,eval");
  for (auto& [stage, status] : s["stages"].items()) EXPECT_EQ(status, "ok") << stage;
  // The final binary is the user's own build or a stage faster than it
  // with confidence, never the profiling build; every speedup has its
  // interval around it.
  nlohmann::ordered_json& final_json = s["final_stage"];
  std::string final_stage = final_json.is_string() ? final_json.get<std::string>() : final_json.dump();
  EXPECT_NE(final_stage, "base");
  if (final_stage != "plain") {
    EXPECT_EQ(s["eval"][final_stage]["verdict"], "faster") << s["eval"];
  }
  for (auto& [name, v] : s["eval"].items()) {
    EXPECT_LE(v["speedup_low"].get<double>(), v["speedup"].get<double>()) << name;
    EXPECT_GE(v["speedup_high"].get<double>(), v["speedup"].get<double>()) << name;
  }
  // The user's build is installed as built; a stage's less what only
  // syspgo read (BOLT's output carries none of it).
  bool shipped_as_built = final_stage == "plain" || final_stage == "bolt";
  EXPECT_EQ(s["final_binary"], dir + (shipped_as_built ? "/" + final_stage + "/demo" : "/ship/demo." + final_stage));
  EXPECT_NE(r.err.find("final: " + final_stage + ": "), std::string::npos) << r.err;
  nlohmann::ordered_json& profile = s["profile"];
  EXPECT_GE(profile["samples"].get<double>(), profile["binary_samples"].get<double>());
  EXPECT_GT(profile["binary_samples"].get<double>(), 50);
  // Same sources: every function is found, and clang applies all but at
  // most a stray sample. (It reported "1 of 2 available profile samples
  // were applied" for a cold loop once: the profile-guided build did not
  // make the loop copy whose discriminator held the other sample.)
  EXPECT_EQ(profile["functions_in_binary"].get<double>(), profile["profile_functions"].get<double>());
  EXPECT_GE(profile["match_share"].get<double>(), 0.98);
  EXPECT_GT(profile["bolt_matched_share"].get<double>(), 0.5);
  EXPECT_EQ(Keys(s["eval"]), "plain,base,sample,order,bolt");
  for (auto& [name, v] : s["eval"].items()) {
    EXPECT_GT(v["speedup"].get<double>(), 0) << name;
    EXPECT_FALSE(v["output_differs"].get<bool>()) << name;
  }

  EXPECT_EQ(m["inputs"]["build"], kMakeBuild);
  EXPECT_EQ(m["inputs"]["train"], kTrain);
  // The stages that build have a build ID (40 hex digits), each its own.
  std::vector<std::string> without_id;
  std::set<std::string> ids;
  for (auto& st : m["stages"]) {
    std::string id = st.value("build_id", "");
    if (id.size() != 40) without_id.push_back(st["name"].get<std::string>());
    if (st.contains("build_id")) ids.insert(id);
  }
  EXPECT_EQ(without_id, (std::vector<std::string>{"train", "profile", "retrain", "eval"}));
  EXPECT_EQ(ids.size(), 5u);
  for (auto& st : m["stages"]) {
    EXPECT_FALSE(st["commands"].empty()) << st;
    EXPECT_GE(st["seconds"].get<double>(), 0) << st;
  }
  EXPECT_GE(m["stages"][3]["sample-profile"]["functions"].get<double>(), 2);
  EXPECT_EQ(m["stages"][5]["order_match"]["in_order_share"].get<double>(), 1.0);
  EXPECT_GE(m["stages"][7]["bolt"]["functions_with_profile"].get<double>(), 2);
  // After the sample stage BOLT reorders functions only, and never splits.
  EXPECT_EQ(LayoutOptions(m["stages"][7]["commands"][0].get<std::string>()),
            (std::vector<std::string>{"-reorder-blocks=none", "-reorder-functions=hfsort"}));
  EXPECT_EQ(m["stages"][8]["variants"][0]["name"], "plain");
  EXPECT_GE(m["stages"][8]["variants"][3]["runs_s"].size(), 3u) << m["stages"][8];
  EXPECT_EQ(m["stages"][8]["variants"][3]["cpu_s"].size(), m["stages"][8]["variants"][3]["runs_s"].size());
  // The profile-quality line is kept in the manifest.
  ASSERT_FALSE(m["profile_quality"].empty()) << m;
  EXPECT_NE(m["profile_quality"].back()["line"].get<std::string>().find("profile quality: "), std::string::npos);
  EXPECT_NE(r.err.find("profile quality: "), std::string::npos) << r.err;

  // Each flag reached the compiler and linker calls of the stage that
  // needs it, and no other: the user's build has none of syspgo's, the
  // training build frame pointers and line tables, the sample rebuilds no
  // frame pointers, and only BOLT's input keeps its relocations.
  auto has = [](const std::string& c, const std::string& f) { return c.find(f) != std::string::npos; };
  for (auto& c : Calls(dir, "plain"))
    for (const char* f : {"-fno-omit-frame-pointer", "-fdebug-info-for-profiling", "-ffunction-sections",
                          "-gline-tables-only", "-fuse-ld=lld", "--emit-relocs"})
      EXPECT_FALSE(has(c, f)) << f << " in the user's own build: " << c;
  auto base = Calls(dir, "base");
  ASSERT_EQ(base.size(), 3u) << "two compiles and a link";
  for (auto& c : base) {
    EXPECT_TRUE(has(c, "-O2")) << "the Makefile's own flags were lost: " << c;
    EXPECT_TRUE(has(c, "-fdebug-info-for-profiling")) << c;
    EXPECT_TRUE(has(c, "-fno-omit-frame-pointer")) << c;
    EXPECT_FALSE(has(c, "-fprofile-sample-use")) << c;
  }
  EXPECT_FALSE(has(base[2], "--emit-relocs")) << "BOLT rewrites the order build, not this one: " << base[2];
  for (auto& c : Calls(dir, "sample")) {
    EXPECT_TRUE(has(c, "-fprofile-sample-use=" + dir + "/profile/sample.prof")) << c;
    EXPECT_TRUE(has(c, "-fsample-profile-use-profi")) << c;
    EXPECT_TRUE(has(c, "-fdebug-info-for-profiling")) << c;
    EXPECT_FALSE(has(c, "-fno-omit-frame-pointer")) << c;
    EXPECT_FALSE(has(c, "--emit-relocs")) << c;
  }
  EXPECT_EQ(Calls(dir, "sample")[2].find("--symbol-ordering-file"), std::string::npos);
  auto order = Calls(dir, "order");
  EXPECT_TRUE(has(order[2], "-Wl,--symbol-ordering-file=" + dir + "/profile/order.txt")) << order[2];
  EXPECT_TRUE(has(order[2], "-Wl,--emit-relocs")) << order[2];
  EXPECT_TRUE(has(order[0], "-ffunction-sections")) << order[0];
  EXPECT_FALSE(has(order[0], "-fno-omit-frame-pointer")) << order[0];

  // The profile is one clang reads; the hot functions are in it.
  std::string shown = Out("llvm-profdata-19 show --sample " + dir + "/profile/sample.prof");
  EXPECT_NE(shown.find("run_machine"), std::string::npos) << shown;
  EXPECT_NE(shown.find("hash_bytes"), std::string::npos) << shown;

  // Every variant prints what the plain build prints, on inputs it was not
  // trained on; the final binary is left at --binary.
  for (const char* args : {" eval 2000", " train 1234", " cold 50"}) {
    std::string want = Out(dir + "/plain/demo" + args);
    for (const char* v : {"base", "sample", "order", "bolt"}) EXPECT_EQ(Out(dir + "/" + v + "/demo" + args), want) << v << args;
  }
  EXPECT_EQ(Sh("cmp " + src + "/demo " + s["final_binary"].get<std::string>()).status, 0);
  // Every candidate was measured as it would be installed: less the line
  // tables, and the order stage's also less the relocations kept for BOLT.
  for (const char* v : {"base", "sample", "order"}) {
    std::string sections = Out("readelf -SW " + dir + "/ship/demo." + v);
    EXPECT_EQ(sections.find(".debug_"), std::string::npos) << v << "\n" << sections;
    EXPECT_EQ(sections.find(".rela.text"), std::string::npos) << v << "\n" << sections;
    EXPECT_EQ(Out(dir + "/ship/demo." + std::string(v) + " eval 2000"), Out(dir + "/plain/demo eval 2000")) << v;
  }
  EXPECT_NE(Out("readelf -SW " + dir + "/order/demo").find(".rela.text"), std::string::npos);
  EXPECT_NE(Out("readelf -S " + dir + "/bolt/demo").find(".note.bolt_info"), std::string::npos);
}

// A variant measured `rounds` times: `value` times a multiplicative noise
// of +-`noise` that repeats every 5 rounds, the same for every variant
// (paired rounds), plus a wobble of its own.
PgoEvalVariant Measured(const char* name, double value, double noise = 0.02, int rounds = 15) {
  PgoEvalVariant v;
  v.name = name;
  static const double pattern[] = {0, 1, -1, 0.5, -0.5};
  static const double own[] = {0.3, -0.2, 0.1, -0.3, 0.2, 0, -0.1};
  for (int k = 0; k < rounds; ++k)
    v.values.push_back(value * (1 + noise * pattern[k % 5] + noise * own[(k + static_cast<int>(value * 1000)) % 7]));
  return v;
}

// The evaluation's own step: every variant's interval against the first.
std::vector<PgoEvalVariant> Judged(std::vector<PgoEvalVariant> v) {
  for (auto& x : v) x.vs_plain = PairedSpeedup(v[0].values, x.values);
  return v;
}

TEST(PgoFinal, IntervalIsSeededAndAroundTheRatio) {
  auto a = Measured("plain", 1.0), b = Measured("sample", 0.9);
  PgoInterval iv = PairedSpeedup(a.values, b.values), again = PairedSpeedup(a.values, b.values);
  EXPECT_EQ(iv.low, again.low);
  EXPECT_EQ(iv.high, again.high);
  EXPECT_LE(iv.low, iv.ratio);
  EXPECT_GE(iv.high, iv.ratio);
  EXPECT_GT(iv.low, 1.05);
  EXPECT_LT(iv.high, 1.17);
  // Identical counts (instructions): a zero-width interval, no difference.
  PgoInterval same = PairedSpeedup({100, 100, 100}, {100, 100, 100});
  EXPECT_EQ(same.low, 1.0);
  EXPECT_EQ(same.high, 1.0);
  EXPECT_EQ(Judge(same), PgoVerdict::kNoDifference);
  EXPECT_EQ(DescribeSpeedup({1.25, 1.2, 1.3}), "faster 1.250x (95% CI 1.200-1.300)");
  EXPECT_EQ(DescribeSpeedup({0.9, 0.85, 0.95}), "slower 0.900x (95% CI 0.850-0.950)");
}

// Counts the same in every round (cachegrind's instructions) have no
// interval to give: the ratio is said with why, never as "CI 1.091-1.091";
// figures that vary between rounds (times, or counts that moved) keep it.
TEST(PgoFinal, CountsTheSameInEveryRoundAreSaidWithoutAnInterval) {
  const char kCounted[] = " (the same in every round: counted, not timed)";
  constexpr PgoMeasure kCount = PgoMeasure::kCounted;
  EXPECT_EQ(DescribeSpeedup(PairedSpeedup({1091, 1091}, {1000, 1000}, kCount)), std::string("faster 1.091x") + kCounted);
  EXPECT_EQ(DescribeSpeedup(PairedSpeedup({950, 950, 950}, {1000, 1000, 1000}, kCount)),
            std::string("slower 0.950x") + kCounted);
  EXPECT_EQ(DescribeSpeedup(PairedSpeedup({100, 100, 100}, {100, 100, 100}, kCount)),
            std::string("no significant difference 1.000x") + kCounted);
  // One count that moved: an interval again.
  std::string moved = DescribeSpeedup(PairedSpeedup({1091, 1093, 1091}, {1000, 1000, 1000}, kCount));
  EXPECT_EQ(moved.rfind("faster 1.091x (95% CI 1.091-1.09", 0), 0u) << moved;
  // The decision's line, which the final: line prints: the counted metric
  // without an interval, the time that refused the stage with its own.
  PgoEvalVariant plain = Measured("plain", 1.0), sample = Measured("sample", 1.1);
  plain.values = {1.1e9, 1.1e9, 1.1e9}, sample.values = {1.0e9, 1.0e9, 1.0e9};
  sample.vs_plain = PairedSpeedup(plain.values, sample.values, kCount);
  sample.wall_vs_plain = PairedSpeedup(Measured("", 1.0).values, Measured("", 1.1).values);
  std::string why;
  EXPECT_EQ(ChooseFinalVariant({plain, sample}, "instructions", &why), 0u);
  EXPECT_NE(why.find(std::string("sample faster 1.100x") + kCounted + ", but slower than your build in wall time: "
                     "slower 0.9"), std::string::npos) << why;
  EXPECT_NE(why.find("(95% CI 0.", why.find(kCounted)), std::string::npos) << "the time keeps its interval: " << why;
  EXPECT_EQ(why.find("CI 1.100-1.100"), std::string::npos) << why;
}

// A stage that did not help is said with the rounds its deciding metric
// was measured in: counted instructions settle after two rounds while the
// times go on (the demo: "2 paired rounds, 14 timed").
TEST(PgoFinal, AStageThatDidNotHelpIsSaidWithTheRoundsOfItsMetric) {
  PgoEvalVariant plain, probe;
  probe.name = "sample-probe";
  plain.seconds = Measured("", 1.0, 0.02, 14).values, probe.seconds = Measured("", 1.02, 0.02, 14).values;
  plain.values = {1.0e9, 1.0e9}, probe.values = {1.04e9, 1.04e9};
  probe.vs_plain = PairedSpeedup(plain.values, probe.values, PgoMeasure::kCounted);
  EXPECT_EQ(UnhelpfulStageText(probe, "instructions"),
            "the sample-probe stage did not help on the evaluation command (instructions, 2 rounds): against your "
            "build, slower 0.962x (the same in every round: counted, not timed)");
  probe.values.resize(1), plain.values.resize(1);
  probe.vs_plain = PairedSpeedup(plain.values, probe.values, PgoMeasure::kCounted);
  EXPECT_NE(UnhelpfulStageText(probe, "instructions").find("(instructions, 1 round)"), std::string::npos);
}

// One timed round cannot tell a difference from the machine's noise: a
// stage that counts fewer instructions is not refused for one slow run (the
// demo's and the bench's --runs 1), and the round is said as one, with no
// interval. A count measured once is still its whole result.
TEST(PgoFinal, OneTimedRoundHasNoIntervalAndRefusesNothing) {
  PgoInterval once = PairedSpeedup({1.0}, {1.25});
  EXPECT_TRUE(once.one_timed_round);
  EXPECT_FALSE(once.same_every_round);
  EXPECT_EQ(Judge(once), PgoVerdict::kNoDifference);
  EXPECT_EQ(DescribeSpeedup(once), "no significant difference (0.800x in one timed round: no interval)");
  PgoInterval counted = PairedSpeedup({1.1e9}, {1.0e9}, PgoMeasure::kCounted);
  EXPECT_TRUE(counted.same_every_round);
  EXPECT_EQ(Judge(counted), PgoVerdict::kFaster);
  // Two timed rounds that happen to agree are still times: an interval.
  EXPECT_FALSE(PairedSpeedup({1.0, 1.0}, {1.25, 1.25}).same_every_round);

  PgoEvalVariant plain = Measured("plain", 1.0, 0, 1), sample = Measured("sample", 1.0, 0, 1);
  plain.values = plain.instructions = {1.1e9}, sample.values = sample.instructions = {1.0e9};
  plain.seconds = plain.cpu_seconds = {1.0}, sample.seconds = sample.cpu_seconds = {1.25};
  for (PgoEvalVariant* x : {&plain, &sample}) {
    x->vs_plain = PairedSpeedup(plain.values, x->values, PgoMeasure::kCounted);
    x->wall_vs_plain = PairedSpeedup(plain.seconds, x->seconds);
    x->cpu_vs_plain = PairedSpeedup(plain.cpu_seconds, x->cpu_seconds);
  }
  std::string why;
  EXPECT_EQ(ChooseFinalVariant({plain, sample}, "instructions", &why), 1u) << why;
  EXPECT_EQ(why.find("but slower than your build"), std::string::npos) << why;
  // Faster in instructions while one round cannot judge its time: more
  // rounds would decide.
  EXPECT_TRUE(EvalUndecided({plain, sample}));
}

TEST(PgoFinal, AStageWithinNoiseIsNotChosen) {
  std::string why;
  // 1% faster with 8% noise and few rounds: the interval straddles 1.
  auto v = Judged({Measured("plain", 1.0, 0.08, 5), Measured("base", 1.03, 0.08, 5), Measured("sample", 0.99, 0.08, 5)});
  EXPECT_EQ(Judge(v[2].vs_plain), PgoVerdict::kNoDifference);
  EXPECT_EQ(ChooseFinalVariant(v, "wall time", &why), 0u);
  EXPECT_NE(why.find("no stage was faster than your build with confidence"), std::string::npos) << why;
  EXPECT_NE(why.find("sample no significant difference (95% CI "), std::string::npos) << why;
  EXPECT_EQ(why.find("base"), std::string::npos) << "the profiling build is never a candidate: " << why;
  EXPECT_TRUE(EvalUndecided(v)) << "more rounds could decide it";
}

TEST(PgoFinal, AClearlyFasterStageIsChosenAndASlowerOneNamed) {
  std::string why;
  // sample 10% faster; order no better than sample; bolt slower than the user's build.
  auto v = Judged({Measured("plain", 1.0), Measured("base", 1.05), Measured("sample", 0.90), Measured("order", 0.899),
                   Measured("bolt", 1.06)});
  EXPECT_EQ(ChooseFinalVariant(v, "wall time", &why), 2u);
  EXPECT_EQ(why.rfind("sample is faster than your build (wall time, 15 paired rounds: sample faster 1.1", 0), 0u) << why;
  EXPECT_NE(why.find("order faster 1.1"), std::string::npos) << why;
  EXPECT_NE(why.find("not faster than sample with confidence"), std::string::npos) << why;
  EXPECT_NE(why.find("bolt slower 0.9"), std::string::npos) << why;
  EXPECT_FALSE(EvalUndecided(v));
  // A later stage that beats the chosen one with confidence replaces it.
  v = Judged({Measured("plain", 1.0), Measured("sample", 0.90), Measured("order", 0.80)});
  EXPECT_EQ(ChooseFinalVariant(v, "instructions", &why), 2u);
  EXPECT_EQ(ChooseFinalVariant({Measured("plain", 1.0)}, "wall time", &why), 0u);
}

TEST(PgoQuality, HalvesAgreeOnAThickProfileAndNotOnAThinOne) {
  std::string thick = "hot:900000:1\n 1: 600000\n 2: 250000\n 3: 50000\nwarm:90000:1\n 1: 90000\n";
  PgoProfileQuality q = MeasureProfileQuality(thick, 990000, 1000000);
  EXPECT_FALSE(q.thin) << q.advice;
  EXPECT_GT(q.halves_agreement, 0.99);
  EXPECT_DOUBLE_EQ(q.run_share, 0.99);
  ASSERT_EQ(q.hot.size(), 2u);
  EXPECT_EQ(q.hot[0].first, "hot");
  EXPECT_EQ(q.Line("app"), "profile quality: 990,000 samples in app (99.0% of the training run's), hot: hot 91%, "
                           "warm 9%; halves agree " + std::to_string(q.halves_agreement * 100).substr(0, 4) + "%: enough");
  // A few samples over many lines: the halves disagree, and the advice
  // names what to change.
  std::string thin = "f:40:1\n";
  for (int i = 1; i <= 40; ++i) thin += " " + std::to_string(i) + ": 1\n";
  q = MeasureProfileQuality(thin, 40, 400);
  EXPECT_TRUE(q.thin);
  EXPECT_LT(q.halves_agreement, 0.9);
  EXPECT_NE(q.advice.find("--freq"), std::string::npos) << q.advice;
  EXPECT_NE(q.Line("app").find("TOO THIN"), std::string::npos);
  // Inlined call sites' headers are not lines of their own.
  q = MeasureProfileQuality("f:100:1\n 1: 50\n 2: g:50\n  1: 50\n", 100, 100);
  EXPECT_GT(q.halves_agreement, 0.5);
}

TEST(Pgo, CMakeProjectGetsTheFlagsThroughCC) {
  TempDir t;
  std::string src = CopyDemo(t), dir = t.File("pgo");
  // A build directory per stage: CMake fixes the compiler and flags at
  // the first configure, so one directory would not see a new profile.
  std::string build = "cmake -S . -B b-$SYSPGO_STAGE -DCMAKE_BUILD_TYPE=Release >/dev/null && "
                      "cmake --build b-$SYSPGO_STAGE && cp b-$SYSPGO_STAGE/demo demo";
  auto r = Pgo(src, {"--build", build, "--binary", "demo", "--train", kTrain, "--stages", "sample,order", "--dir", dir});
  ASSERT_EQ(r.status, 0) << r.err;
  // Without --eval only the last rebuild is made.
  EXPECT_EQ(Keys(ReadOrderedJson(dir + "/summary.json")["stages"]), "build,train,profile,order");
  std::string cache = ReadAll(src + "/b-base/CMakeCache.txt");
  EXPECT_NE(cache.find("CMAKE_C_COMPILER:FILEPATH=" + dir + "/bin/cc"), std::string::npos);
  EXPECT_NE(ReadAll(src + "/b-base/CMakeFiles/" + Trim(Out("cmake --version | head -1 | cut -d' ' -f3")) +
                    "/CMakeCCompiler.cmake").find("set(CMAKE_C_COMPILER_ID \"Clang\")"),
            std::string::npos);
  EXPECT_NE(ReadAll(src + "/b-base/compile_commands.json").find(dir + "/bin/cc"), std::string::npos);
  auto base = Calls(dir, "base");
  ASSERT_FALSE(base.empty());
  bool saw_release_compile = false;
  for (auto& c : base) {
    if (c.find(" -c ") == std::string::npos || c.find("demo.c") == std::string::npos) continue;  // CMake's own checks
    saw_release_compile = true;
    EXPECT_NE(c.find("-O3 -DNDEBUG"), std::string::npos) << "CMake's Release flags were lost: " << c;
    EXPECT_NE(c.find("-fdebug-info-for-profiling"), std::string::npos) << c;
  }
  EXPECT_TRUE(saw_release_compile);
  bool used = false;
  for (auto& c : Calls(dir, "order"))
    used |= c.find("-fprofile-sample-use=") != std::string::npos && c.find("demo.c") != std::string::npos &&
            c.find("-ffunction-sections") != std::string::npos;
  EXPECT_TRUE(used);
  EXPECT_EQ(Out(dir + "/order/demo eval 500"), Out(dir + "/base/demo eval 500"));
}

TEST(Pgo, PlainCompilerCommandNamingGccGetsClangAndBoltAlone) {
  TempDir t;
  std::string src = CopyDemo(t), dir = t.File("pgo");
  auto r = Pgo(src, {"--build", "gcc -O2 -o demo demo.c machine.c", "--binary", "./demo", "--train", kTrain, "--stages",
                     "bolt", "--dir", dir});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Keys(ReadOrderedJson(dir + "/summary.json")["stages"]), "build,train,profile,bolt");
  auto base = Calls(dir, "base");
  ASSERT_EQ(base.size(), 1u);
  EXPECT_NE(base[0].find("-fuse-ld=lld"), std::string::npos) << base[0];
  EXPECT_NE(Out("readelf -p .comment " + dir + "/base/demo").find("clang version 19"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir + "/profile/bolt.fdata"));
  EXPECT_FALSE(fs::exists(dir + "/profile/sample.prof"));
  EXPECT_EQ(Out(dir + "/bolt/demo eval 700"), Out(dir + "/base/demo eval 700"));
  // On the plain build BOLT lays blocks out too (and still does not split).
  nlohmann::json m = ReadJson(dir + "/manifest.json");
  std::vector<std::string> layout;
  for (auto& st : m["stages"])
    if (st["name"] == "bolt")
      for (const std::string& o : LayoutOptions(st["commands"][0].get<std::string>())) layout.push_back(o);
  EXPECT_EQ(layout, (std::vector<std::string>{"-reorder-blocks=ext-tsp", "-reorder-functions=hfsort"}));
}

TEST(Pgo, FailingBuildIsNamedAndExitsNonZero) {
  TempDir t;
  std::string src = CopyDemo(t), dir = t.File("pgo");
  auto r = Pgo(src, {"--build", "echo half-built; exit 1", "--binary", "./demo", "--train", kTrain, "--dir", dir});
  EXPECT_TRUE(FailedWith(r, 1, "stage 'build' failed"));
  EXPECT_NE(r.err.find("exited with status 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("half-built"), std::string::npos) << "the build's last lines are shown: " << r.err;
  nlohmann::ordered_json s = ReadOrderedJson(dir + "/summary.json");
  EXPECT_EQ(s["status"], "failed");
  EXPECT_EQ(s["failed_stage"], "build");
  EXPECT_EQ(s["stages"], nlohmann::ordered_json::object({{"build", "failed"}}));
  EXPECT_EQ(ReadJson(dir + "/manifest.json")["stages"][0]["status"], "failed");
}

TEST(Pgo, FailingTrainingIsNamedAndStopsThePipeline) {
  TempDir t;
  std::string src = CopyDemo(t), dir = t.File("pgo");
  EXPECT_TRUE(FailedWith(
      Pgo(src, {"--build", kMakeBuild, "--binary", "./demo", "--train", "./demo nosuchmode 1", "--dir", dir}), 1,
      "stage 'train' failed"));
  nlohmann::ordered_json s = ReadOrderedJson(dir + "/summary.json");
  EXPECT_EQ(s["failed_stage"], "train");
  EXPECT_EQ(Keys(s["stages"]), "build,train");
}

TEST(Pgo, BuildThatDoesNotRecompileIsCaught) {
  TempDir t;
  std::string src = CopyDemo(t), dir = t.File("pgo");
  // A second plain `make` finds everything up to date: the profile would
  // silently not be used.
  auto r = Pgo(src, {"--build", "make", "--binary", "./demo", "--train", kTrain, "--stages", "sample", "--dir", dir});
  EXPECT_TRUE(FailedWith(r, 1, "stage 'sample' failed"));
  EXPECT_NE(r.err.find("ran no compiler"), std::string::npos) << r.err;
  // The same build with --clean works.
  auto ok = Pgo(src, {"--build", "make", "--clean", "make clean", "--binary", "./demo", "--train", kTrain, "--stages",
                      "sample", "--dir", dir});
  EXPECT_EQ(ok.status, 0) << ok.err;
}

TEST(Pgo, OrderTheLinkerAlreadyFollowsIsAWarningNotAFailure) {
  TempDir t;
  std::string src = CopyDemo(t), first = t.File("first"), second = t.File("second");
  const std::string build = "make clean >/dev/null; make CFLAGS='-O2 -ffunction-sections' LDFLAGS=-fuse-ld=lld";
  auto r = Pgo(src, {"--build", build, "--binary", "./demo", "--train", kTrain, "--stages", "sample", "--dir", first});
  ASSERT_EQ(r.status, 0) << r.err;
  // A symbol order that is the sample build's own layout (its functions
  // before _start, by address): the order build links to the same bytes.
  // The build has the order stage's own needs already (function sections,
  // lld), so the order file is all the order stage adds.
  std::string order = first + "/profile/order.txt";
  ASSERT_EQ(Sh("nm -n " + first + "/sample/demo | awk '$3 == \"_start\" {exit} $2 ~ /^[Tt]$/ {print $3}' > " + order).status, 0);
  ASSERT_GE(std::stoi(Out("grep -c . " + order)), 2) << Out("cat " + order);
  // (--eval makes sample and order separate builds.)
  auto again = Pgo(src, {"--build", build, "--binary", "./demo", "--use-profile", first, "--stages", "sample,order",
                         "--dir", second, "--eval", "./demo eval 300", "--runs", "1", "--final", "last",
                         "--profile-kind", "flat"});
  ASSERT_EQ(again.status, 0) << "an order the linker already follows is not a build that skipped its work: " << again.err;
  std::string said = Unwrapped(again.err);
  EXPECT_NE(said.find("the order build is the same binary as the stage before"), std::string::npos) << again.err;
  EXPECT_NE(said.find("the linker already laid the functions out in the symbol order"), std::string::npos) << again.err;
  nlohmann::json m = ReadJson(second + "/manifest.json");
  std::vector<std::string> same;
  for (auto& st : m["stages"])
    if (st.value("same_as_previous", false)) same.push_back(st["name"].get<std::string>());
  EXPECT_EQ(same, std::vector<std::string>{"order"});
  EXPECT_EQ(ReadJson(second + "/summary.json")["final_stage"], "order");
}

TEST(Pgo, ChangedSourcesReportHowMuchOfTheProfileStillMatches) {
  TempDir t;
  std::string src = CopyDemo(t), first = t.File("first"), second = t.File("second");
  auto r = Pgo(src, {"--build", kMakeBuild, "--binary", "./demo", "--train", kTrain, "--stages", "sample", "--dir", first});
  ASSERT_EQ(r.status, 0) << r.err;
  // Without --eval no build of the user's is there to compare with: the
  // binary installed leaves out every section only syspgo's stages read.
  EXPECT_EQ(ReadJson(first + "/manifest.json")["final_binary"], first + "/ship/demo.sample");
  EXPECT_EQ(Out("readelf -SW " + src + "/demo").find(".debug_"), std::string::npos);
  // The sources move on: the hot hash function is renamed.
  ASSERT_EQ(Sh("cd " + src + " && sed -i 's/hash_bytes/digest_bytes/g' demo.c").status, 0);
  // A link left where the reused profile is copied to is replaced, not
  // written through: the file it names keeps its bytes.
  std::string elsewhere = t.File("elsewhere");
  std::ofstream(elsewhere) << "keep\n";
  fs::create_directories(second + "/profile");
  fs::create_symlink(elsewhere, second + "/profile/sample.prof");
  // --final last keeps the sample build whatever one evaluation run says.
  // The first run (without --eval) had no probe leg, so --profile-kind
  // auto's has no profile to reuse: it is left out in one line, and the
  // run goes on with the flat profile.
  auto again = Pgo(src, {"--build", kMakeBuild, "--binary", "./demo", "--use-profile", first, "--stages", "sample",
                         "--dir", second, "--eval", "./demo eval 300", "--runs", "1", "--final", "last"});
  ASSERT_EQ(again.status, 0) << "a stale profile still builds: " << again.err;
  EXPECT_NE(Unwrapped(again.err).find("of its samples match the code"), std::string::npos) << again.err;
  EXPECT_EQ(ReadAll(elsewhere), "keep\n");
  EXPECT_FALSE(fs::is_symlink(second + "/profile/sample.prof"));
  EXPECT_EQ(ReadAll(second + "/profile/sample.prof"), ReadAll(first + "/profile/sample.prof"));
  std::string sum = second + "/summary.json";
  nlohmann::ordered_json s = ReadOrderedJson(sum);
  EXPECT_EQ(Keys(s["stages"]), "plain,build,profile,sample,sample-probe,eval");
  EXPECT_EQ(s["stages"]["sample-probe"], "left out");
  EXPECT_NE(Unwrapped(again.err).find("left out: the probe leg's setup stage failed (--use-profile " + first +
                                     "/probe has no "),
            std::string::npos) << again.err;
  EXPECT_EQ(Keys(s["eval"]), "plain,base,sample");
  EXPECT_EQ(s["profile_kind"]["chosen"], "flat") << s["profile_kind"];
  EXPECT_EQ(s["final_stage"], "sample");
  // The binary installed is the sample stage's less the line tables only
  // the profile needed; the stage's own keeps them.
  EXPECT_EQ(s["final_binary"], second + "/ship/demo.sample");
  nlohmann::json m = ReadJson(second + "/manifest.json");
  EXPECT_EQ(m["final_built_binary"], second + "/sample/demo");
  EXPECT_TRUE(m.contains("final_reason"));
  EXPECT_NE(m["final_reason"], "");
  double share = s["profile"]["match_share"].get<double>();
  EXPECT_GT(share, 0);
  EXPECT_LT(share, 0.99);
  EXPECT_LT(s["profile"]["functions_in_binary"].get<double>(), s["profile"]["profile_functions"].get<double>());
}

// The stage of the manifest named `name` (null if none).
nlohmann::json StageOf(const nlohmann::json& manifest, const std::string& name) {
  for (auto& st : manifest["stages"])
    if (st["name"] == name) return st;
  return nullptr;
}

TEST(Pgo, ProfileDbAccumulatesRunsAndMergesThem) {
  TempDir t;
  std::string src = CopyDemo(t), db = t.File("ci.db");
  for (int i = 0; i < 2; ++i) {
    std::string dir = t.File("pgo" + std::to_string(i));
    // With --eval the probe leg runs too, and accumulates in its own DB.
    auto r = Pgo(src, {"--build", kMakeBuild, "--binary", "./demo", "--train", kTrain, "--stages", "sample", "--dir", dir,
                       "--profile-db", db, "--sample-counts", "ip", "--eval", "./demo eval 300", "--runs", "1"});
    ASSERT_EQ(r.status, 0) << r.err;
    nlohmann::json m = ReadJson(dir + "/manifest.json");
    std::string cmd = StageOf(m, "profile")["commands"][0].get<std::string>();
    EXPECT_NE(cmd.find(" merge " + db + ":all"), std::string::npos) << cmd;
    EXPECT_NE(cmd.find(" --sample-counts ip"), std::string::npos) << cmd;
    std::string probe = StageOf(m, "sample-probe")["commands"].dump();
    EXPECT_NE(probe.find(" merge " + t.File("ci.probe.db") + ":all"), std::string::npos) << probe;
  }
  for (const std::string& path : {db, t.File("ci.probe.db")}) {
    Db d = OpenDb(path);
    EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM run"), 2) << path;
  }
}

TEST(Pgo, TrainRunsCollectsEachRunAndMergesThem) {
  TempDir t;
  std::string src = CopyDemo(t), dir = t.File("pgo");
  auto r = Pgo(src, {"--build", kMakeBuild, "--binary", "./demo", "--train", kTrain, "--stages", "sample,bolt",
                     "--dir", dir, "--train-runs", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("training run 2 of 2"), std::string::npos) << r.err;
  // Both the training and BOLT's retraining hold two runs, and the
  // profiles come from merging them.
  Db train = OpenDb(dir + "/train/train.db"), retrain = OpenDb(dir + "/retrain/retrain.db");
  EXPECT_EQ(QueryInt(train, "SELECT COUNT(*) FROM run"), 2);
  EXPECT_EQ(QueryInt(retrain, "SELECT COUNT(*) FROM run"), 2);
  nlohmann::json m = ReadJson(dir + "/manifest.json"), runs = nlohmann::json::array();
  std::string cmd;
  for (auto& st : m["stages"]) {
    if (st["name"] == "train" || st["name"] == "retrain") runs.push_back(st.value("runs_collected", nlohmann::json()));
    if (st["name"] == "profile" && cmd.empty()) cmd = st["commands"][0].get<std::string>();
  }
  EXPECT_EQ(runs, nlohmann::json::array({2, 2}));
  EXPECT_EQ(m["inputs"]["train_runs"], 2);
  EXPECT_NE(cmd.find(" merge " + dir + "/train/train.db:all --normalize"), std::string::npos) << cmd;
  EXPECT_NE(ReadAll(dir + "/profile/sample-profile.log").find("from 2 runs"), std::string::npos);
  // merge --json: the profile's sample figures, which merge's line for
  // people never gave (the manifest went without them).
  nlohmann::json profile = ReadJson(dir + "/summary.json")["profile"];
  EXPECT_GE(profile["samples"].get<double>(), profile["binary_samples"].get<double>());
  EXPECT_GT(profile["binary_samples"].get<double>(), 50);
  EXPECT_GT(profile["line_share"].get<double>(), 0);
  EXPECT_LE(profile["line_share"].get<double>(), 1);
  EXPECT_EQ(Sh(dir + "/bolt/demo eval 300").out, Sh(dir + "/base/demo eval 300").out);
  EXPECT_NE(Pgo(src, {"--build", kMakeBuild, "--binary", "./demo", "--train", kTrain, "--train-runs", "0"}).status, 0);
}

// --profile-kind probe: the profiled build and the rebuild get
// -fpseudo-probe-for-profiling on every compiler call, the profile is keyed
// by probes (with checksums), and the rebuild finds every function of it.
TEST(Pgo, ProbeProfileKindBuildsWithPseudoProbes) {
  TempDir t;
  std::string src = CopyDemo(t), dir = t.File("pgo");
  auto r = Pgo(src, {"--build", kMakeBuild, "--binary", "./demo", "--train", kTrain, "--stages", "sample",
                     "--profile-kind", "probe", "--dir", dir});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* stage : {"base", "sample"}) {
    std::vector<std::string> calls = Calls(dir, stage);
    EXPECT_FALSE(calls.empty()) << stage;
    for (const std::string& c : calls)
      EXPECT_NE(c.find(" -fpseudo-probe-for-profiling"), std::string::npos) << stage << ": " << c;
  }
  EXPECT_NE(ReadAll(dir + "/profile/sample.prof").find("!CFGChecksum: "), std::string::npos);
  nlohmann::json profile = ReadJson(dir + "/summary.json")["profile"];
  EXPECT_GT(profile["profile_functions"].get<double>(), 0);
  EXPECT_EQ(profile["functions_in_binary"], profile["profile_functions"]) << profile;
  EXPECT_GE(profile["match_share"].get<double>(), 0.98) << profile;
}

// The hot function's prologues that set up a frame pointer.
int FramePointerPrologues(const std::string& binary, const std::string& function) {
  std::string dis = Out("objdump -d --no-show-raw-insn " + binary + " | awk '/<" + function + ">:/,/^$/'");
  std::istringstream in(dis);
  int n = 0;
  std::string prev;
  for (std::string l; std::getline(in, l); prev = l)
    n += prev.find("push   %rbp") != std::string::npos && l.find("mov    %rsp,%rbp") != std::string::npos;
  return n;
}

// Fewer instructions do not make a faster binary: a stage that runs fewer
// but is slower than the user's build in wall or CPU time, with confidence,
// is refused and named so; one whose times are within noise is chosen.
// The measurements are given, not timed.
TEST(PgoFinal, AStageSlowerInTimeIsRefusedWhateverItsInstructions) {
  auto with_times = [](PgoEvalVariant v, double wall, double cpu, double noise) {
    int rounds = static_cast<int>(v.values.size());
    v.seconds = Measured("", wall, noise, rounds).values;
    v.cpu_seconds = Measured("", cpu, noise, rounds).values;
    return v;
  };
  auto judged = [](std::vector<PgoEvalVariant> v) {
    for (auto& x : v) {
      x.vs_plain = PairedSpeedup(v[0].values, x.values, PgoMeasure::kCounted);
      x.wall_vs_plain = PairedSpeedup(v[0].seconds, x.seconds);
      x.cpu_vs_plain = PairedSpeedup(v[0].cpu_seconds, x.cpu_seconds);
    }
    return v;
  };
  PgoEvalVariant plain = with_times(Measured("plain", 100, 0), 0.020, 0.018, 0.02);
  // 12% fewer instructions, 10% more wall time.
  auto v = judged({plain, with_times(Measured("sample", 88, 0), 0.022, 0.018, 0.02)});
  EXPECT_EQ(Judge(v[1].vs_plain), PgoVerdict::kFaster);
  EXPECT_EQ(Judge(v[1].wall_vs_plain), PgoVerdict::kSlower);
  std::string why;
  EXPECT_EQ(ChooseFinalVariant(v, "instructions", &why), 0u);
  EXPECT_NE(why.find("no stage was faster than your build with confidence"), std::string::npos) << why;
  EXPECT_NE(why.find("sample faster 1.13"), std::string::npos) << why;
  EXPECT_NE(why.find("but slower than your build in wall time: slower 0.9"), std::string::npos) << why;
  EXPECT_FALSE(EvalUndecided(v));
  // The same in CPU time alone.
  v = judged({plain, with_times(Measured("sample", 88, 0), 0.020, 0.020, 0.02)});
  EXPECT_EQ(ChooseFinalVariant(v, "instructions", &why), 0u);
  EXPECT_NE(why.find("but slower than your build in CPU time: slower 0.9"), std::string::npos) << why;
  // A slower stage does not block a later one that is not.
  v = judged({plain, with_times(Measured("sample", 88, 0), 0.022, 0.018, 0.02),
              with_times(Measured("order", 87, 0), 0.018, 0.016, 0.02)});
  EXPECT_EQ(ChooseFinalVariant(v, "instructions", &why), 2u) << why;
  EXPECT_EQ(why.rfind("order is faster than your build", 0), 0u) << why;
  // Times within noise: not slower with confidence, so the metric decides;
  // wall time's point estimate beyond the threshold asks for more rounds.
  v = judged({Measured("plain", 100, 0, 5), Measured("sample", 88, 0, 5)});
  v[0].seconds = v[0].cpu_seconds = {1.00, 1.10, 0.95, 1.05, 0.90};
  v[1].seconds = v[1].cpu_seconds = {1.08, 1.02, 1.00, 1.12, 0.93};
  v = judged(v);
  EXPECT_EQ(Judge(v[1].wall_vs_plain), PgoVerdict::kNoDifference);
  EXPECT_EQ(ChooseFinalVariant(v, "instructions", &why), 1u) << why;
  EXPECT_TRUE(EvalUndecided(v));
}

// The demo's program, with --profile-kind auto (the default): the
// profile-guided stages beat the user's plain -O2 build in instructions
// (counted by cachegrind, the same every run, so no bound here depends on
// the machine's speed or load); the flat profile and the probe leg are both
// trained and rebuilt, and the final choice between them is the one the
// evaluation's own figures make; the final binary carries no frame
// pointers: only the training build needs them.
TEST(Pgo, InterpreterDemoTrainsBothKindsKeepsTheBetterAndShipsNoProfilingFlags) {
  TempDir t;
  std::string src = CopyDemo(t, SYSPGO_PGO_INTERP), dir = t.File("pgo");
  auto r = Pgo(src, {"--build", "make clean >/dev/null; make", "--binary", "./interp", "--train", "./interp train 100",
                     "--freq", "9999", "--sample-counts", "stacks", "--eval", "./interp eval 2", "--eval-metric",
                     "instructions", "--runs", "2", "--stages", "sample", "--dir", dir});
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::ordered_json s = ReadOrderedJson(dir + "/summary.json");
  std::string final_stage = s["final_stage"].get<std::string>();
  // Both legs ran: the flat one's stages and the probe leg's, each with its
  // own build, training and profile.
  EXPECT_EQ(Keys(s["stages"]), "plain,build,train,profile,sample,sample-probe,eval");
  for (auto& [stage, status] : s["stages"].items()) EXPECT_EQ(status, "ok") << stage << "\n" << r.err;
  EXPECT_EQ(Keys(s["eval"]), "plain,base,sample,sample-probe") << s["eval"];
  nlohmann::json m = ReadJson(dir + "/manifest.json"), probe = StageOf(m, "sample-probe");
  ASSERT_TRUE(probe.is_object()) << m["stages"];
  nlohmann::json leg = ReadJson(probe["manifest"].get<std::string>());
  EXPECT_EQ(leg["status"], "ok");
  EXPECT_EQ(leg["inputs"]["profile_kind"], "probe");
  EXPECT_EQ(leg["inputs"]["sample_counts"], "ip") << "probe profiles are counted at the sampled IP";
  EXPECT_EQ(probe["binary"], dir + "/probe/sample-probe/interp");
  EXPECT_EQ(probe["build_id"].get<std::string>().size(), 40u) << probe;
  EXPECT_NE(ReadAll(probe["profile"].get<std::string>()).find("!CFGChecksum: "), std::string::npos);
  EXPECT_NE(probe["profile_quality"]["line"].get<std::string>().find("profile quality: "), std::string::npos) << probe;
  EXPECT_NE(probe["compile_flags"].dump().find("-fpseudo-probe-for-profiling"), std::string::npos) << probe;
  EXPECT_EQ(StageOf(m, "sample")["compile_flags"].dump().find("-fpseudo-probe-for-profiling"), std::string::npos);
  // The probe leg's binary carries its probes; the flat stage's none.
  EXPECT_NE(Out("readelf -SW " + probe["binary"].get<std::string>()).find(".pseudo_probe"), std::string::npos);
  EXPECT_EQ(Out("readelf -SW " + dir + "/sample/interp").find(".pseudo_probe"), std::string::npos);
  // The kind kept is the better of the two by the evaluation's own
  // figures (a gain under kPgoMinEffect is no gain), unless that one lost
  // wall or CPU time with confidence, which no test here bounds (below).
  double flat = s["eval"]["sample"]["instructions"].get<double>();
  double probed = s["eval"]["sample-probe"]["instructions"].get<double>();
  std::string better = flat / probed > 1 + kPgoMinEffect ? "sample-probe" : "sample";
  if (final_stage != better) {
    EXPECT_NE(m["final_reason"].get<std::string>().find("but slower than your build in "), std::string::npos)
        << better << " (" << probed << " against " << flat << ") was not kept:\n" << r.err;
  }
  std::string kind = final_stage == "sample-probe" ? "probe" : final_stage == "sample" ? "flat" : "none";
  EXPECT_EQ(s["profile_kind"]["requested"], "auto");
  EXPECT_EQ(s["profile_kind"]["chosen"], kind) << s["profile_kind"];
  EXPECT_EQ(m["profile_kind"], s["profile_kind"]);
  std::string reason = s["profile_kind"]["reason"].get<std::string>();
  EXPECT_NE(reason.find("sample-probe against sample: instructions "), std::string::npos) << reason;
  EXPECT_NE(r.err.find("profile kind: " + (kind == "none" ? std::string("neither") : kind)), std::string::npos) << r.err;
  EXPECT_NE(final_stage, "base") << r.err;
  EXPECT_EQ(s["eval_metric"], "instructions");
  EXPECT_EQ(s["eval"]["sample"]["verdict"], "faster") << s["eval"];
  EXPECT_GT(s["eval"]["sample"]["speedup_low"].get<double>(), 1.0) << s["eval"];
  // Which binary is kept also depends on wall and CPU time, which no test
  // here bounds: a stage faster in instructions, or the user's build with
  // the time the stages lost in named.
  if (final_stage == "plain") {
    EXPECT_NE(Unwrapped(r.err).find("but slower than your build in "), std::string::npos) << r.err;
    // Its one warning names every stage: no warning of its own for each.
    EXPECT_EQ(r.err.find("stage did not help"), std::string::npos) << r.err;
  } else {
    EXPECT_EQ(s["eval"][final_stage]["verdict"], "faster") << s["eval"];
  }
  // What it says fits 120 columns, long paths and warnings wrapped.
  std::istringstream told(r.err);
  for (std::string l; std::getline(told, l);) {
    if (l.starts_with("syspgo pgo: ")) {
      EXPECT_LE(l.size(), 120u) << l;
    }
  }
  EXPECT_NE(Unwrapped(r.err).find("vs your build: instructions faster "), std::string::npos) << r.err;
  // Counts the same in every round are said without an interval, as the
  // summary marks them; times always keep theirs.
  if (s["eval"]["sample"]["same_every_round"].get<bool>()) {
    char said[96];
    snprintf(said, sizeof said, "instructions faster %.3fx (the same in every round: counted, not timed)",
             s["eval"]["sample"]["speedup"].get<double>());
    EXPECT_NE(Unwrapped(r.err).find(said), std::string::npos) << said << "\n" << r.err;
  }
  std::istringstream lines(r.err);
  for (std::string l; std::getline(lines, l);)
    if (l.find("vs your build: cpu ") != std::string::npos) {
      EXPECT_NE(l.find("(95% CI "), std::string::npos) << l;
    }
  EXPECT_NE(Unwrapped(r.err).find("vs the profiling build: instructions "), std::string::npos) << r.err;
  EXPECT_FALSE(s["profile_quality"]["thin"].get<bool>()) << s["profile_quality"];
  // The training build sets up frame pointers in the hot loop's function;
  // the sample build and the final binary do not.
  EXPECT_GT(FramePointerPrologues(dir + "/base/interp", "vm_run"), 0);
  EXPECT_EQ(FramePointerPrologues(dir + "/sample/interp", "vm_run"), 0);
  EXPECT_EQ(FramePointerPrologues(src + "/interp", "vm_run"), 0);
  EXPECT_EQ(FramePointerPrologues(probe["binary"].get<std::string>(), "vm_run"), 0);
  // What only syspgo's stages read (line tables, probes) stays in the
  // stage's binary in DIR and is left out of the copy measured and
  // installed, as the user's build does not carry it.
  if (final_stage != "plain") {
    std::string built = m["final_built_binary"].get<std::string>();
    EXPECT_NE(Out("readelf -SW " + built).find(".debug_line"), std::string::npos) << built;
    EXPECT_NE(m["final_left_out"].dump().find(".debug_line"), std::string::npos) << m["final_left_out"];
    EXPECT_NE(m["final_binary"], built);
  }
  for (const std::string& bin : {src + "/interp", m["final_binary"].get<std::string>()}) {
    std::string sections = Out("readelf -SW " + bin);
    EXPECT_EQ(sections.find(".debug_"), std::string::npos) << bin << "\n" << sections;
    EXPECT_EQ(sections.find(".pseudo_probe"), std::string::npos) << bin << "\n" << sections;
  }
  EXPECT_EQ(ReadAll(src + "/interp"), ReadAll(m["final_binary"].get<std::string>())) << "installed what was measured";
  for (const std::string& bin : {s["final_binary"].get<std::string>(), probe["binary"].get<std::string>()}) {
    EXPECT_EQ(Out(bin + " eval 1"), Out(dir + "/plain/interp eval 1")) << bin;
    EXPECT_EQ(Out(bin + " cold 1"), Out(dir + "/plain/interp cold 1")) << bin;
  }
}

// The --freq of the first collect command a stage ran, 0 if none.
int CollectFreq(const nlohmann::json& manifest, const std::string& stage) {
  for (auto& st : manifest["stages"]) {
    if (st["name"] != stage) continue;
    for (auto& c : st["commands"]) {
      std::string cmd = c.get<std::string>();
      size_t at = cmd.find(" collect ") == std::string::npos ? std::string::npos : cmd.find(" --freq ");
      if (at != std::string::npos) return atoi(cmd.c_str() + at + 8);
    }
  }
  return 0;
}

// A training run too short for 10,000 samples at collect's default rate
// (no --freq): pgo trains again faster, and says so in its output and
// manifest, which names the rate every attempt sampled at.
TEST(Pgo, ThinProfileIsTrainedAgainFaster) {
  TempDir t;
  std::string src = CopyDemo(t), dir = t.File("pgo");
  auto r = Pgo(src, {"--build", kMakeBuild, "--binary", "./demo", "--train", "./demo train 20000", "--stages", "sample",
                     "--dir", dir}, /*thick=*/false);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("TOO THIN"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("too thin: training again at "), std::string::npos) << r.err;
  nlohmann::json m = ReadJson(dir + "/manifest.json"), q = m["profile_quality"];
  ASSERT_GE(q.size(), 2u) << q;
  EXPECT_TRUE(q[0]["thin"].get<bool>());
  // The first attempt's rate is the one its collect ran at, not 0 for "not given".
  int first = CollectFreq(m, "train");
  EXPECT_GT(first, 0) << m["stages"];
  EXPECT_EQ(q[0]["freq_hz"], first) << q;
  EXPECT_EQ(ReadJson(dir + "/summary.json")["profile_quality"]["freq_hz"], q.back()["freq_hz"]);
  EXPECT_GT(q[1]["freq_hz"].get<int>(), first);
  EXPECT_GT(q.back()["binary_samples"].get<double>(), q[0]["binary_samples"].get<double>());
}

TEST(Pgo, MissingOptionsAreUsageErrors) {
  TempDir t;
  EXPECT_TRUE(FailedWith(Pgo(t.path(), {"--build", "make", "--binary", "./demo"}), 2, "--train"));
  EXPECT_TRUE(
      FailedWith(Pgo(t.path(), {"--build", "make", "--binary", "./demo", "--train", "x", "--stages", "sample,lto"}), 2,
                 "unknown stage 'lto'"));
  EXPECT_TRUE(
      FailedWith(Pgo(t.path(), {"--build", "make", "--binary", "./demo", "--train", "x", "--sample-counts", "lbr"}), 2,
                 "--sample-counts is ip, ip-only or stacks, got 'lbr'"));
  EXPECT_TRUE(FailedWith(Pgo(t.path(), {"--build", "make", "--binary", "./demo", "--train", "x", "--final", "best"}), 2,
                         "--final is fastest or last, got 'best'"));
  // auto is pgo's alone: optimize and merge make one profile of one kind.
  EXPECT_TRUE(FailedWith(Pgo(t.path(), {"--build", "make", "--binary", "./demo", "--train", "x", "--profile-kind",
                                        "lbr"}), 2, "--profile-kind is auto, flat, cs or probe, got 'lbr'"));
  auto optimize = Sh(SyspgoBin() + " optimize x.db --binary ./demo --emit sample-profile --profile-kind auto -o x");
  EXPECT_EQ(optimize.status, 2) << optimize.err;
}

// cmake/SysPGO.cmake on a project that only includes it.
struct CMakeProject {
  TempDir t;
  std::string src, build;
  explicit CMakeProject(const char* data = SYSPGO_TEST_DATA "/pgo_cmake") {
    src = t.File("src");
    build = t.File("build");
    fs::copy(data, src, fs::copy_options::recursive);
  }
  CmdResult Configure(const std::string& profile_dir, const std::vector<std::string>& more = {}) {
    std::vector<std::string> argv = {"cmake", "-S", src, "-B", build, "-DCMAKE_C_COMPILER=clang-19",
                                     "-DSYSPGO_PROFILE_DIR=" + profile_dir, "-DSYSPGO_MODULE_DIR=" SYSPGO_CMAKE_MODULES};
    argv.insert(argv.end(), more.begin(), more.end());
    return RunCmd(argv);
  }
  // The command CMake compiles the source file `name` with.
  std::string CompileCommand(const std::string& name) const {
    for (auto& e : ReadJson(build + "/compile_commands.json"))
      if (fs::path(e["file"].get<std::string>()).filename() == name) return e["command"].get<std::string>();
    return "";
  }
};

TEST(SysPgoCMake, ProfileFlagsReachCompileAndLinkLinesAndBoltRuns) {
  CMakeProject p;
  auto c = p.Configure(p.src);
  ASSERT_EQ(c.status, 0) << c.err << c.out;
  auto b = RunCmd({"make", "-C", p.build, "VERBOSE=1"});
  ASSERT_EQ(b.status, 0) << b.err << b.out;
  std::string cc = ReadAll(p.build + "/compile_commands.json");
  EXPECT_NE(cc.find("-fprofile-sample-use=" + p.src + "/profile/sample.prof"), std::string::npos) << cc;
  EXPECT_NE(cc.find("-fsample-profile-use-profi"), std::string::npos) << cc;
  EXPECT_NE(cc.find("-ffunction-sections"), std::string::npos) << cc;
  EXPECT_NE(cc.find("-fdebug-info-for-profiling"), std::string::npos) << cc;
  EXPECT_NE(cc.find("-O2"), std::string::npos) << "the project's own option is kept: " << cc;
  EXPECT_NE(b.out.find("-fuse-ld=lld"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("--symbol-ordering-file=" + p.src + "/profile/order.txt"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("--emit-relocs"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("llvm-bolt"), std::string::npos) << b.out;
  std::string app = p.build + "/pgo_cmake_app";
  EXPECT_NE(Out("readelf -S " + app).find(".note.bolt_info"), std::string::npos);
  EXPECT_EQ(Out("readelf -S " + app + ".prebolt").find(".note.bolt_info"), std::string::npos);
  EXPECT_EQ(Out(app + " 5000"), Out(app + ".prebolt 5000"));
  // Symbol order: mix before main, as the ordering file lists them.
  EXPECT_EQ(Out("nm -n " + app + ".prebolt | awk '$3==\"mix\"||$3==\"main\"{print $3}' | tr '\\n' ' '"), "mix main ");
  // A new profile in the same place rebuilds the objects.
  ASSERT_EQ(Sh("touch " + p.src + "/profile/sample.prof").status, 0);
  auto again = RunCmd({"make", "-C", p.build});
  EXPECT_NE(again.out.find("Building C object"), std::string::npos) << again.out;
}

TEST(SysPgoCMake, MissingProfileDirectoryIsAConfigureError) {
  CMakeProject p;
  auto c = p.Configure(p.t.File("no-such-dir"));
  EXPECT_NE(c.status, 0);
  std::string err = Unwrapped(c.err);
  EXPECT_NE(err.find("is not a directory"), std::string::npos) << c.err;
  EXPECT_NE(err.find("syspgo pgo --dir"), std::string::npos) << c.err;
}

// The decision of a `syspgo pgo` run, written into its manifest as pgo
// writes it when `final_stage` wins: which stage wins is measured, so a
// test cannot have pgo make it.
void Decide(const std::string& dir, const std::string& final_stage, const std::string& kind) {
  nlohmann::json m = ReadJson(dir + "/manifest.json");
  m["final_stage"] = final_stage;
  m["profile_kind"]["chosen"] = kind;
  std::ofstream(dir + "/manifest.json") << m.dump(2) << "\n";
}

// The profile flags of a compile command: what SysPGO.cmake adds of its own.
std::vector<std::string> ProfileFlags(const std::string& command) {
  std::vector<std::string> out;
  std::istringstream in(command);
  for (std::string w; in >> w;)
    if (w.starts_with("-fprofile-sample-use=") || w == "-fsample-profile-use-profi" ||
        w == "-fdebug-info-for-profiling" || w == "-fpseudo-probe-for-profiling")
      out.push_back(w);
  return out;
}

// A directory a real `syspgo pgo` run with --eval wrote for the demo in
// `t`: both kinds trained (the flat profile in DIR/profile, the probe
// leg's in DIR/probe) and the symbol order; its final stage is order
// (--final last). The demo's sources are in `*demo`; the tests build them
// as Release, as clang reads a sample profile only when it optimizes.
std::string PgoDirForCMake(const TempDir& t, std::string* demo) {
  *demo = CopyDemo(t);
  std::string dir = t.File("pgo");
  auto r = Pgo(*demo, {"--build", kMakeBuild, "--binary", "./demo", "--train", kTrain, "--stages", "sample,order",
                       "--dir", dir, "--eval", "./demo eval 300", "--runs", "1", "--final", "last"});
  EXPECT_EQ(r.status, 0) << r.err;
  nlohmann::json m = ReadJson(dir + "/manifest.json");
  EXPECT_EQ(m["final_stage"], "order") << r.err;
  EXPECT_EQ(m["profile_kind"]["chosen"], "flat") << m["profile_kind"];
  EXPECT_NE(ReadAll(dir + "/probe/profile/sample.prof").find("!CFGChecksum: "), std::string::npos)
      << "no probe leg:\n" << r.err;
  return dir;
}

// The module builds what `syspgo pgo` chose: the demo's own CMake project
// built with a real pgo directory after each decision pgo can write (the
// order stage, the flat sample stage, the probe leg's, your own build),
// each one reconfiguring the same build directory.
TEST(SysPgoCMake, BuildsWhatPgoChose) {
  TempDir t;
  std::string demo, dir = PgoDirForCMake(t, &demo);
  if (HasFailure()) return;
  std::string order = "--symbol-ordering-file=" + dir + "/profile/order.txt";
  std::string flat = dir + "/profile/sample.prof", probe = dir + "/probe/profile/sample.prof";
  nlohmann::json probe_flags = StageOf(ReadJson(dir + "/manifest.json"), "sample-probe")["compile_flags"];
  CMakeProject p(SYSPGO_TEST_DATA "/pgo_cmake_demo");
  std::string bin = p.build + "/demo/demo", link = p.build + "/demo/CMakeFiles/demo.dir/link.txt";
  auto make = [&] { return RunCmd({"make", "-C", p.build}); };
  auto c = p.Configure(dir, {"-DSYSPGO_DEMO_DIR=" + demo, "-DCMAKE_BUILD_TYPE=Release"});
  ASSERT_EQ(c.status, 0) << c.err << c.out;
  ASSERT_EQ(make().status, 0);
  // The order stage, as before: the line-keyed profile, no probes, the order.
  std::string cmd = p.CompileCommand("demo.c");
  EXPECT_NE(cmd.find(" -fprofile-sample-use=" + flat + " "), std::string::npos) << cmd;
  EXPECT_NE(cmd.find(" -fdebug-info-for-profiling"), std::string::npos) << cmd;
  EXPECT_EQ(cmd.find("-fpseudo-probe-for-profiling"), std::string::npos) << cmd;
  EXPECT_EQ(Out("readelf -SW " + bin).find(".pseudo_probe"), std::string::npos);
  EXPECT_NE(ReadAll(link).find(order), std::string::npos) << ReadAll(link);

  // pgo kept the sample stage over the order stage: the same profile
  // without the order.
  Decide(dir, "sample", "flat");
  auto b = make();
  ASSERT_EQ(b.status, 0) << b.err << b.out;
  EXPECT_EQ(p.CompileCommand("demo.c"), cmd);
  EXPECT_EQ(ReadAll(link).find("--symbol-ordering-file"), std::string::npos) << ReadAll(link);

  // pgo chose the probe leg: its profile, with pgo's own flags of its
  // sample-probe stage, and the binary carries the probes.
  Decide(dir, "sample-probe", "probe");
  b = make();
  ASSERT_EQ(b.status, 0) << b.err << b.out;
  EXPECT_NE(b.out.find("SysPGO: kind probe, profile " + probe), std::string::npos) << b.out;
  EXPECT_EQ(b.err.find("Pseudo-probe-based profile requires"), std::string::npos) << b.err;
  EXPECT_EQ(ReadAll(link).find("--symbol-ordering-file"), std::string::npos) << "made on the flat build";
  cmd = p.CompileCommand("demo.c");
  std::vector<std::string> flags = ProfileFlags(cmd);
  EXPECT_EQ(flags.size(), 4u) << cmd;
  EXPECT_NE(cmd.find(" -fprofile-sample-use=" + probe + " "), std::string::npos) << cmd;
  EXPECT_NE(cmd.find(" -fpseudo-probe-for-profiling"), std::string::npos) << cmd;
  for (const std::string& f : flags)
    EXPECT_NE(std::find(probe_flags.begin(), probe_flags.end(), f), probe_flags.end())
        << f << " is not among pgo's flags of sample-probe: " << probe_flags;
  EXPECT_NE(Out("readelf -SW " + bin).find(".pseudo_probe"), std::string::npos);
  EXPECT_EQ(Out(bin + " eval 300"), Out(demo + "/demo eval 300"));

  // pgo kept the user's build: no profile, said at configure time.
  Decide(dir, "plain", "none");
  b = make();
  ASSERT_EQ(b.status, 0) << b.err << b.out;
  EXPECT_NE(Unwrapped(b.out).find("'syspgo pgo' kept your own build"), std::string::npos) << b.out;
  cmd = p.CompileCommand("demo.c");
  EXPECT_EQ(cmd.find("-fprofile-sample-use"), std::string::npos) << cmd;
  EXPECT_EQ(cmd.find("-ffunction-sections"), std::string::npos) << cmd;
  // The user can still ask for a kind.
  c = p.Configure(dir, {"-DSYSPGO_PROFILE_KIND=probe"});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(p.CompileCommand("demo.c").find(" -fprofile-sample-use=" + probe + " "), std::string::npos);
}

// A directory keyed by probes alone (the probe leg's own, as --profile-kind
// probe writes one) has its probe profile in profile/, built with the
// probes; a manifest that chose probe without its profile is a configure
// error naming the file.
TEST(SysPgoCMake, ProbeProfileIsBuiltWithItsProbesOrRefused) {
  TempDir t;
  std::string demo, dir = PgoDirForCMake(t, &demo);
  if (HasFailure()) return;
  std::string probe = dir + "/probe/profile/sample.prof";
  CMakeProject leg(SYSPGO_TEST_DATA "/pgo_cmake_demo");
  auto c = leg.Configure(dir + "/probe", {"-DSYSPGO_DEMO_DIR=" + demo, "-DCMAKE_BUILD_TYPE=Release"});
  ASSERT_EQ(c.status, 0) << c.err;
  std::string cmd = leg.CompileCommand("demo.c");
  EXPECT_NE(cmd.find(" -fprofile-sample-use=" + probe + " "), std::string::npos) << cmd;
  EXPECT_NE(cmd.find(" -fpseudo-probe-for-profiling"), std::string::npos) << cmd;
  // Without the probes clang would only warn that it cannot read the profile.
  auto b = RunCmd({"make", "-C", leg.build});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(b.err.find("Pseudo-probe-based profile requires"), std::string::npos) << b.err;

  Decide(dir, "sample-probe", "probe");
  fs::remove(probe);
  CMakeProject p(SYSPGO_TEST_DATA "/pgo_cmake_demo");
  c = p.Configure(dir, {"-DSYSPGO_DEMO_DIR=" + demo, "-DCMAKE_BUILD_TYPE=Release"});
  EXPECT_NE(c.status, 0);
  std::string err = Unwrapped(c.err);
  EXPECT_NE(err.find(probe + " does not exist"), std::string::npos) << c.err;
  EXPECT_NE(err.find("with its probe/ subdirectory"), std::string::npos) << c.err;
}

}  // namespace
}  // namespace syspgo::test
