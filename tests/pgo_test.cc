//===- pgo_test.cc - `syspgo pgo` and cmake/SysPGO.cmake, end to end ------===//
// Runs the real `syspgo pgo` on tests/workloads/pgo_demo built by make, by
// CMake and by plain compiler commands, and checks what a user and a CI job
// rely on: every stage's artifact, the manifest and summary fields, that the
// flags reached the compiler and linker, that the optimized binaries print
// what the plain one prints, and that a failing stage is named. The CMake
// module is checked on tests/data/pgo_cmake with a prepared profile.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "common/util.h"
#include "optimize/pgo.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

namespace fs = std::filesystem;


// A copy of the workload's sources in `t`/src (the builds write there).
std::string CopyDemo(const TempDir& t) {
  std::string src = t.File("src");
  fs::create_directories(src);
  for (auto& e : fs::directory_iterator(SYSPGO_PGO_DEMO)) fs::copy_file(e.path(), src + "/" + e.path().filename().string());
  return src;
}

// `syspgo pgo ARGS` run in directory `cwd`.
CmdResult Pgo(const std::string& cwd, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {SyspgoBin(), "pgo"};
  argv.insert(argv.end(), args.begin(), args.end());
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

const char kTrain[] = "./demo train 10000";
const char kMakeBuild[] = "make clean >/dev/null; make";

TEST(PgoWrapper, AddsMissingFlagsOnceAndKeepsTheBuildsOwn) {
  TempDir t;
  std::string bin = t.File("bin"), log = t.File("calls.log");
  ASSERT_TRUE(WriteCompilerWrappers(bin, "base", "/usr/bin/clang-19", "/usr/bin/clang++-19", PgoCompileFlags(""),
                                    PgoLinkFlags(""), log)
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
                     "--runs", "3", "--dir", dir});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("[1/8] build"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[8/8] eval"), std::string::npos) << r.err;

  for (const char* f : {"base/demo", "train/train.db", "profile/sample.prof", "profile/order.txt", "profile/bolt.fdata",
                        "sample/demo", "order/demo", "retrain/retrain.db", "bolt/demo", "bolt/bolt.log", "manifest.json",
                        "summary.json"})
    EXPECT_TRUE(fs::exists(dir + "/" + f)) << f;

  std::string sum = dir + "/summary.json", man = dir + "/manifest.json";
  nlohmann::ordered_json s = ReadOrderedJson(sum);
  nlohmann::json m = ReadJson(man);
  EXPECT_EQ(s["status"], "ok");
  EXPECT_TRUE(s.contains("failed_stage") && s["failed_stage"].is_null()) << s["failed_stage"];
  EXPECT_EQ(Keys(s["stages"]), "build,train,profile,sample,order,retrain,bolt,eval");
  for (auto& [stage, status] : s["stages"].items()) EXPECT_EQ(status, "ok") << stage;
  // The final binary is the one the evaluation chose: the earliest stage
  // within 1% of the fastest median.
  nlohmann::ordered_json& final_json = s["final_stage"];
  std::string final_stage = final_json.is_string() ? final_json.get<std::string>() : final_json.dump(), chosen;
  double fastest = -std::numeric_limits<double>::infinity();
  for (auto& [name, v] : s["eval"].items()) fastest = std::max(fastest, v["speedup"].get<double>());
  for (auto& [name, v] : s["eval"].items())
    if (chosen.empty() && v["speedup"].get<double>() * 1.01 >= fastest) chosen = name;
  EXPECT_EQ(final_stage, chosen) << s["eval"];
  EXPECT_EQ(s["final_binary"], dir + "/" + final_stage + "/demo");
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
  EXPECT_EQ(Keys(s["eval"]), "base,sample,order,bolt");
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
  EXPECT_EQ(ids.size(), 4u);
  for (auto& st : m["stages"]) {
    EXPECT_FALSE(st["commands"].empty()) << st;
    EXPECT_GE(st["seconds"].get<double>(), 0) << st;
  }
  EXPECT_GE(m["stages"][2]["sample-profile"]["functions"].get<double>(), 2);
  EXPECT_EQ(m["stages"][4]["order_match"]["in_order_share"].get<double>(), 1.0);
  EXPECT_GE(m["stages"][6]["bolt"]["functions_with_profile"].get<double>(), 2);
  // After the sample stage BOLT reorders functions only, and never splits.
  EXPECT_EQ(LayoutOptions(m["stages"][6]["commands"][0].get<std::string>()),
            (std::vector<std::string>{"-reorder-blocks=none", "-reorder-functions=hfsort"}));
  EXPECT_EQ(m["stages"][7]["variants"][0]["name"], "base");
  EXPECT_EQ(m["stages"][7]["variants"][3]["runs_s"].size(), 3u) << m["stages"][7];

  // Each flag reached the compiler and linker calls of its stage.
  auto base = Calls(dir, "base");
  ASSERT_EQ(base.size(), 3u) << "two compiles and a link";
  for (auto& c : base) {
    EXPECT_NE(c.find("-O2"), std::string::npos) << "the Makefile's own flags were lost: " << c;
    EXPECT_NE(c.find("-fdebug-info-for-profiling"), std::string::npos) << c;
    EXPECT_EQ(c.find("-fprofile-sample-use"), std::string::npos) << c;
  }
  EXPECT_NE(base[2].find("-Wl,--emit-relocs"), std::string::npos) << base[2];
  for (auto& c : Calls(dir, "sample")) {
    EXPECT_NE(c.find("-fprofile-sample-use=" + dir + "/profile/sample.prof"), std::string::npos) << c;
    EXPECT_NE(c.find("-fsample-profile-use-profi"), std::string::npos) << c;
  }
  EXPECT_EQ(Calls(dir, "sample")[2].find("--symbol-ordering-file"), std::string::npos);
  EXPECT_NE(Calls(dir, "order")[2].find("-Wl,--symbol-ordering-file=" + dir + "/profile/order.txt"), std::string::npos);

  // The profile is one clang reads; the hot functions are in it.
  std::string shown = Out("llvm-profdata-19 show --sample " + dir + "/profile/sample.prof");
  EXPECT_NE(shown.find("run_machine"), std::string::npos) << shown;
  EXPECT_NE(shown.find("hash_bytes"), std::string::npos) << shown;

  // Every variant prints what the plain build prints, on inputs it was not
  // trained on; the final binary is left at --binary.
  for (const char* args : {" eval 2000", " train 1234", " cold 50"}) {
    std::string want = Out(dir + "/base/demo" + args);
    for (const char* v : {"sample", "order", "bolt"}) EXPECT_EQ(Out(dir + "/" + v + "/demo" + args), want) << v << args;
  }
  EXPECT_EQ(Sh("cmp " + src + "/demo " + dir + "/" + final_stage + "/demo").status, 0);
  EXPECT_NE(Out("readelf -S " + dir + "/bolt/demo").find(".note.bolt_info"), std::string::npos);
}

PgoEvalVariant Timed(const char* name, double speedup) {
  PgoEvalVariant v;
  v.name = name;
  v.speedup = speedup;
  return v;
}

TEST(PgoFinal, KeepsALaterStageOnlyForAGainBeyondNoise) {
  std::string why;
  // Each stage faster than the last: the last one.
  EXPECT_EQ(ChooseFinalVariant({Timed("base", 1), Timed("sample", 1.10), Timed("order", 1.12), Timed("bolt", 1.20)}, &why), 3u);
  EXPECT_EQ(why, "speedup 1.200x on the evaluation command");
  // BOLT slows the program down (SQLite's case in bench/RESULTS.md): order.
  EXPECT_EQ(ChooseFinalVariant({Timed("base", 1), Timed("sample", 1.10), Timed("order", 1.12), Timed("bolt", 1.05)}, &why), 2u);
  EXPECT_EQ(why, "speedup 1.120x on the evaluation command; later stages: bolt 1.050x");
  // BOLT's 0.5% over sample is noise: the earlier stage, and the output says why.
  EXPECT_EQ(ChooseFinalVariant({Timed("base", 1), Timed("sample", 1.100), Timed("order", 1.09), Timed("bolt", 1.105)}, &why), 1u);
  EXPECT_EQ(why, "speedup 1.100x on the evaluation command; bolt 1.105x is within 1% of it, no gain beyond noise; "
                 "later stages: order 1.090x");
  // Nothing helped: the plain build.
  EXPECT_EQ(ChooseFinalVariant({Timed("base", 1), Timed("sample", 1.004), Timed("bolt", 0.97)}, &why), 0u);
  EXPECT_EQ(why, "no stage was faster than the plain build by more than 1% (sample 1.004x, bolt 0.970x)");
  EXPECT_EQ(ChooseFinalVariant({Timed("base", 1)}, &why), 0u);
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
    EXPECT_NE(c.find("-ffunction-sections"), std::string::npos) << c;
  }
  EXPECT_TRUE(saw_release_compile);
  bool used = false;
  for (auto& c : Calls(dir, "order")) used |= c.find("-fprofile-sample-use=") != std::string::npos && c.find("demo.c") != std::string::npos;
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
  auto r = Pgo(src, {"--build", kMakeBuild, "--binary", "./demo", "--train", kTrain, "--stages", "sample", "--dir", first});
  ASSERT_EQ(r.status, 0) << r.err;
  // A symbol order that is the sample build's own layout (its functions
  // before _start, by address): the order build links to the same bytes.
  std::string order = first + "/profile/order.txt";
  ASSERT_EQ(Sh("nm -n " + first + "/sample/demo | awk '$3 == \"_start\" {exit} $2 ~ /^[Tt]$/ {print $3}' > " + order).status, 0);
  ASSERT_GE(std::stoi(Out("grep -c . " + order)), 2) << Out("cat " + order);
  // (--eval makes sample and order separate builds.)
  auto again = Pgo(src, {"--build", kMakeBuild, "--binary", "./demo", "--use-profile", first, "--stages", "sample,order",
                         "--dir", second, "--eval", "./demo eval 300", "--runs", "1", "--final", "last"});
  ASSERT_EQ(again.status, 0) << "an order the linker already follows is not a build that skipped its work: " << again.err;
  EXPECT_NE(again.err.find("the order build is the same binary as the stage before"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("the linker already laid the functions out in the symbol order"), std::string::npos) << again.err;
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
  // The sources move on: the hot hash function is renamed.
  ASSERT_EQ(Sh("cd " + src + " && sed -i 's/hash_bytes/digest_bytes/g' demo.c").status, 0);
  // --final last keeps the sample build whatever one evaluation run says.
  auto again = Pgo(src, {"--build", kMakeBuild, "--binary", "./demo", "--use-profile", first, "--stages", "sample",
                         "--dir", second, "--eval", "./demo eval 300", "--runs", "1", "--final", "last"});
  ASSERT_EQ(again.status, 0) << "a stale profile still builds: " << again.err;
  EXPECT_NE(again.err.find("of its samples match the code"), std::string::npos) << again.err;
  std::string sum = second + "/summary.json";
  nlohmann::ordered_json s = ReadOrderedJson(sum);
  EXPECT_EQ(Keys(s["stages"]), "build,profile,sample,eval");
  EXPECT_EQ(s["final_stage"], "sample");
  EXPECT_EQ(s["final_binary"], second + "/sample/demo");
  nlohmann::json m = ReadJson(second + "/manifest.json");
  EXPECT_TRUE(m.contains("final_reason"));
  EXPECT_NE(m["final_reason"], "");
  double share = s["profile"]["match_share"].get<double>();
  EXPECT_GT(share, 0);
  EXPECT_LT(share, 0.99);
  EXPECT_LT(s["profile"]["functions_in_binary"].get<double>(), s["profile"]["profile_functions"].get<double>());
}

TEST(Pgo, ProfileDbAccumulatesRunsAndMergesThem) {
  TempDir t;
  std::string src = CopyDemo(t), db = t.File("ci.db");
  for (int i = 0; i < 2; ++i) {
    std::string dir = t.File("pgo" + std::to_string(i));
    auto r = Pgo(src, {"--build", kMakeBuild, "--binary", "./demo", "--train", kTrain, "--stages", "sample", "--dir", dir,
                       "--profile-db", db, "--sample-counts", "ip"});
    ASSERT_EQ(r.status, 0) << r.err;
    std::string cmd = ReadJson(dir + "/manifest.json")["stages"][2]["commands"][0].get<std::string>();
    EXPECT_NE(cmd.find(" merge " + db + ":all"), std::string::npos) << cmd;
    EXPECT_NE(cmd.find(" --sample-counts ip"), std::string::npos) << cmd;
  }
  Db d = OpenDb(db);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM run"), 2);
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
}

// cmake/SysPGO.cmake on a project that only includes it.
struct CMakeProject {
  TempDir t;
  std::string src, build;
  CMakeProject() {
    src = t.File("src");
    build = t.File("build");
    fs::copy(SYSPGO_TEST_DATA "/pgo_cmake", src, fs::copy_options::recursive);
  }
  CmdResult Configure(const std::string& profile_dir) {
    return RunCmd({"cmake", "-S", src, "-B", build, "-DCMAKE_C_COMPILER=clang-19", "-DSYSPGO_PROFILE_DIR=" + profile_dir,
                   "-DSYSPGO_MODULE_DIR=" SYSPGO_CMAKE_MODULES});
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
  // CMake wraps its messages: compare with the line breaks taken out.
  std::string err;
  for (auto& w : Split(c.err, '\n')) err += Trim(w) + " ";
  EXPECT_NE(err.find("is not a directory"), std::string::npos) << c.err;
  EXPECT_NE(err.find("syspgo pgo --dir"), std::string::npos) << c.err;
}

}  // namespace
}  // namespace syspgo::test
