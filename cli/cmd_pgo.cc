//===- cmd_pgo.cc - `syspgo pgo`: profile-guided rebuild of a program -----===//
// Parses the options into a PgoOptions and hands them to pgo/pgo.h;
// prints the outcome and returns 0, or 1 naming the stage that failed.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "cli/options.h"
#include "collect/probe_group.h"
#include "common/util.h"
#include "pgo/pgo.h"
#include "optimize/profile_artifacts.h"

namespace syspgo::cli {
namespace {

const char kAbout[] = R"(usage: syspgo pgo --build 'CMD' --binary PATH --train 'CMD' [OPTIONS]

Builds a program with the flags profiling needs, profiles a training run with
syspgo collect, rebuilds it with the LLVM sample profile and the symbol order,
profiles the rebuilt binary and rewrites it with BOLT. With --eval it also
builds your program as it is (your flags, none of syspgo's), trains and
rebuilds it a second time with a profile keyed by pseudo-probes (stage
sample-probe, beside the flat profile's sample: --profile-kind auto), and
runs every variant against your build in paired, interleaved rounds; a
stage becomes the final binary only when it is faster than your build with
95% confidence (a bootstrap interval of the ratio of medians) and not
slower in wall or CPU time with confidence, and every speedup is printed
with its interval; the line "profile kind:" says which kind won and why.
Each build carries only the flags its stage needs. Every stage's commands, logs
and binaries stay in DIR with manifest.json (everything) and summary.json
(for CI); PATH ends up holding the final binary. Exit status: 0, 1 if a
stage failed (named on stderr and in summary.json), 2 for bad options.
)";

const char kExamples[] = R"(Examples:
  sudo syspgo pgo --build 'make clean all' --binary ./app \
       --train './app train.in' --eval './app eval.in' --runs 10
  sudo syspgo pgo --build 'cmake -S . -B b-$SYSPGO_STAGE -DCMAKE_BUILD_TYPE=Release && \
       cmake --build b-$SYSPGO_STAGE && cp b-$SYSPGO_STAGE/app .' --binary ./app --train './app in'
  sudo syspgo pgo --build 'make clean all' --binary ./app --train './ci-tests.sh' \
       --profile-db /cache/app-profiles.db --json
)";

std::string SelfPath() {
  std::string self = ReadLinkOrEmpty("/proc/self/exe");
  return self.empty() ? "syspgo" : self;
}

// The stages --stages names, each with the switch of PgoOptions it sets.
std::vector<std::pair<std::string, bool*>> StageSwitches(PgoOptions& o) {
  return {{"sample", &o.sample}, {"order", &o.order}, {"bolt", &o.bolt}};
}

// The options as given (lists, names, one string of arguments), before
// they become PgoOptions, and those of the output.
struct PgoFlags {
  bool json = false, quiet = false;
  std::string stages, final_choice, bolt_opts;
};

PgoFlags PgoFlagsOf(PgoOptions& o) {
  PgoFlags f;
  f.final_choice = o.final_last ? "last" : "fastest";
  for (const auto& [name, on] : StageSwitches(o))
    if (*on) f.stages += (f.stages.empty() ? "" : ",") + name;
  return f;
}

void ApplyFlags(const PgoFlags& f, PgoOptions* o) {
  if (f.quiet) o->progress = nullptr;
  o->collect_default_freq_hz = CollectOptions{}.freq_hz;
  if (o->max_runs < o->runs) o->max_runs = o->runs;
  o->final_last = f.final_choice == "last";
  for (const auto& [name, on] : StageSwitches(*o)) {
    *on = false;
    for (const std::string& t : Split(f.stages, ',')) *on |= Trim(t) == name;
  }
  for (auto& t : Split(f.bolt_opts, ' '))
    if (!t.empty()) o->bolt_args.push_back(t);
}

void AddBuildOptions(CLI::App* app, PgoOptions& o) {
  app->option_defaults()->group("What to build and run (shell commands, run in the current directory)");
  app->add_option("--build", o.build_cmd,
                  "builds PATH; gets CC/CXX (and cc, gcc, clang, c++, g++, clang++ first on PATH) as syspgo's "
                  "clang-19 wrappers that add the flags each stage needs; also SYSPGO_STAGE (plain, base, sample, "
                  "order, and base-probe, sample-probe for the probe leg), SYSPGO_CFLAGS and SYSPGO_LDFLAGS. It must recompile: make it build from scratch, use a "
                  "build directory per $SYSPGO_STAGE, or give --clean")
      ->type_name("'CMD'");
  app->add_option("--clean", o.clean_cmd, "run before every build (e.g. 'make clean')")->type_name("'CMD'");
  app->add_option("--binary", o.binary, "the program the build writes")->type_name("PATH");
  app->add_option("--train", o.train_cmd, "the training workload, run under syspgo collect")->type_name("'CMD'");
  app->add_option("--eval", o.eval_cmd, "the evaluation workload (should differ from training)")->type_name("'CMD'");
}

// Which stages run, where they are kept, and how the final binary is chosen.
void AddPipelineOptions(CLI::App* app, PgoOptions& o, PgoFlags& f) {
  std::vector<std::string> stage_names;
  for (const auto& [name, on] : StageSwitches(o)) stage_names.push_back(name);
  app->option_defaults()->group("Pipeline");
  app->add_option("--stages", f.stages, "of " + OrList(stage_names))
      ->type_name("LIST")
      ->check(ListOf(stage_names, "stage"))
      ->capture_default_str();
  app->add_option("--dir", o.dir, "where everything is kept")->type_name("DIR")->capture_default_str();
  app->add_option("--runs", o.runs, "eval rounds to start with (each runs every variant once, interleaved)")
      ->type_name("N")
      ->transform(Whole(1, 1000, "a whole number"))
      ->capture_default_str();
  app->add_option("--max-runs", o.max_runs,
                  "rounds at most: more are added one at a time while a stage's interval still straddles 1")
      ->type_name("N")
      ->transform(Whole(1, 1000, "a whole number"))
      ->capture_default_str();
  app->add_option("--eval-budget", o.eval_budget_s, "add rounds only while the evaluation has taken less than this")
      ->type_name("SECONDS")
      ->capture_default_str();
  Choices(app->add_option("--eval-metric", o.eval_metric,
                          "what the final choice is made on: wall time, or instructions counted by cachegrind (the "
                          "same every run: for short or noisy evaluations; needs valgrind)"),
          {"wall", "instructions"})
      ->capture_default_str();
  Choices(app->add_option("--final", f.final_choice,
                          "fastest: chosen by --eval as above; last: the last stage's binary whatever --eval "
                          "measured"),
          {"fastest", "last"})
      ->capture_default_str();
}

// How the training runs are recorded and turned into profiles.
void AddProfileOptions(CLI::App* app, PgoOptions& o) {
  app->add_option("--profile-db", o.profile_db,
                  "accumulate every training run in DB (CI) and merge all of its runs (syspgo merge --normalize) "
                  "into the profiles; the probe leg of --profile-kind auto keeps its own beside it (ci.db: ci.probe.db)")
      ->type_name("DB");
  app->add_option("--train-runs", o.train_runs,
                  "run the training command N times (and the retraining for BOLT) and merge the runs into the "
                  "profiles: more samples where one run of a short training command covers too little of the code "
                  "(docs/profiles.md)")
      ->type_name("N")
      ->transform(Whole(1, 100, "a whole number"))
      ->capture_default_str();
  app->add_option("--use-profile", o.use_profile,
                  "reuse the profiles of an earlier 'syspgo pgo --dir DIR' instead of training; reports how much "
                  "still matches")
      ->type_name("DIR");
  app->add_option("--probes", o.probes, "probe groups for syspgo collect")
      ->type_name("LIST")
      ->check(ListOf(AllProbeGroupNames(), "probe group"))
      ->capture_default_str();
  app->add_option("--freq", o.freq_hz,
                  "cpu sampling frequency (default: collect's; raised, up to 10000, when the profile is too thin)")
      ->type_name("HZ")
      ->transform(Whole(1, 10000, "a whole number"));
  app->add_option("--sample-counts", o.sample_counts,
                  "ip, ip-only or stacks: how the sample profile counts (see syspgo optimize --help)")
      ->type_name("C")
      ->check(Accepts([](const std::string& v) { return ParseSampleCounts(v).has_value(); }, kSampleCountsChoices))
      ->capture_default_str();
  app->add_option("--profile-kind", o.profile_kind,
                  "auto, flat, cs or probe: what the sample profile is keyed by (see syspgo optimize --help); probe "
                  "adds -fpseudo-probe-for-profiling to the profiled build and the rebuilds. auto: the stages use the "
                  "flat profile and, with --eval, a probe leg in DIR/probe (its own build with pseudo-probes, "
                  "training, probe profile with --sample-counts ip, as probe profiles need, and rebuild) adds the "
                  "stage sample-probe; the evaluation keeps whichever kind is faster, order and BOLT build on the "
                  "flat one. A probe leg that fails is said and the flat result stands")
      ->type_name("K")
      ->check(Accepts([](const std::string& v) { return v == "auto" || ParseProfileKind(v).has_value(); },
                      std::string("auto, ") + kProfileKindChoices))
      ->capture_default_str();
}

void AddToolOptions(CLI::App* app, PgoOptions& o, PgoFlags& f) {
  app->option_defaults()->group("Tools");
  app->add_option("--cc", o.cc, "the C compiler the wrappers run")->type_name("CC")->capture_default_str();
  app->add_option("--cxx", o.cxx, "the C++ compiler the wrappers run")->type_name("CXX")->capture_default_str();
  app->add_option("--bolt", o.llvm_bolt, "llvm-bolt")->type_name("PATH")->capture_default_str();
  Repeatable(app->add_option("--bolt-arg", o.bolt_extra,
                             "added to llvm-bolt's options (repeatable), e.g. --bolt-arg=-skip-funcs=luaV_execute/1"))
      ->type_name("ARG");
  app->add_option("--bolt-opts", f.bolt_opts,
                  "replace the default options: -reorder-functions=hfsort -dyno-stats, with -reorder-blocks=none "
                  "after the sample stage (clang laid the blocks out from the profile) and =ext-tsp otherwise; never "
                  "splitting (with IP samples, blocks that run seldom look cold)")
      ->type_name("'ARGS'");
}

void AddOutputOptions(CLI::App* app, PgoFlags& f) {
  app->option_defaults()->group("Output");
  app->add_flag("--json", f.json, "print summary.json on stdout at the end");
  app->add_flag("-q", f.quiet, "no progress lines");
}

// What a run needs, in the order it is checked, each with what to give.
struct Missing {
  bool (*applies)(const PgoOptions& o);
  const char* message;
};
const Missing kMissing[] = {
    {[](const PgoOptions& o) { return o.build_cmd.empty() || o.binary.empty(); },
     "--build 'CMD' and --binary PATH are needed; see 'syspgo pgo --help'"},
    {[](const PgoOptions& o) { return o.train_cmd.empty() && o.use_profile.empty(); },
     "--train 'CMD' is needed (or --use-profile DIR to reuse earlier profiles)"},
};

// The file at `path` on stdout, if it can be read.
void CopyToStdout(const std::string& path) {
  FILE* f = fopen(path.c_str(), "r");
  char buf[4096];
  size_t n;
  while (f && (n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, stdout);
  if (f) fclose(f);
}

// Prints the outcome of RunPgo; returns the exit status.
int PrintOutcome(const PgoReport& r, const PgoOptions& o, bool json) {
  // Under 120 columns, continued under the text (a warning holding lines of
  // its own, such as a build's output, keeps them).
  constexpr const char* kWarn = "syspgo pgo: warning: ";
  for (auto& w : r.warnings) {
    std::string safe = TerminalSafeLines(w);
    if (safe.find('\n') == std::string::npos) safe = WrapWords(safe, strlen(kWarn), Table::kTextWidth);
    fprintf(stderr, "%s%s\n", kWarn, safe.c_str());
  }
  if (json && !r.summary.empty()) CopyToStdout(r.summary);
  if (!r.ok) {
    fprintf(stderr, "syspgo pgo: stage '%s' failed: %s\n", r.failed_stage.c_str(), TerminalSafeLines(r.error).c_str());
    if (!r.manifest.empty()) fprintf(stderr, "syspgo pgo: details in %s\n", r.manifest.c_str());
    return 1;
  }
  std::string kind = r.profile_kind.empty() || r.profile_kind == "none" ? "" : " (" + r.profile_kind + " profile)";
  std::string done = "done: " + r.final_stage + " stage" + kind + ", " + r.final_binary + " (also at " + o.binary +
                     "); manifest " + r.manifest;
  fprintf(stderr, "syspgo pgo: %s\n", WrapWords(done, strlen("syspgo pgo: "), Table::kTextWidth).c_str());
  return 0;
}

int Pgo(const std::vector<std::string>& args) {
  PgoOptions o;
  o.syspgo = SelfPath();
  PgoFlags f = PgoFlagsOf(o);
  auto app = NewApp("syspgo pgo", kAbout, kExamples);
  AddBuildOptions(app.get(), o);
  AddPipelineOptions(app.get(), o, f);
  AddProfileOptions(app.get(), o);
  AddToolOptions(app.get(), o, f);
  AddOutputOptions(app.get(), f);

  if (auto exit = Parse(*app, args)) return *exit;
  ApplyFlags(f, &o);
  for (const Missing& m : kMissing)
    if (m.applies(o)) return UsageError(m.message);
  return PrintOutcome(RunPgo(o), o, f.json);
}

const Command kPgo("pgo", "build, profile, rebuild with the profile and BOLT, and compare (profile-guided rebuild)",
                    &Pgo, Privilege::kRoot);

}  // namespace
}  // namespace syspgo::cli
