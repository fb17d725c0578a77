//===- cmd_pgo.cc - `syspgo pgo`: profile-guided rebuild of a program -----===//
// Parses the options into a PgoOptions and hands them to optimize/pgo.h;
// prints the outcome and returns 0, or 1 naming the stage that failed.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/command.h"
#include "common/util.h"
#include "optimize/pgo.h"
#include "optimize/profile_artifacts.h"

namespace syspgo::cli {
namespace {

const char kHelp[] = R"(usage: syspgo pgo --build 'CMD' --binary PATH --train 'CMD' [OPTIONS]

Builds a program with the flags profiling needs, profiles a training run with
syspgo collect, rebuilds it with the LLVM sample profile and the symbol order,
profiles the rebuilt binary and rewrites it with BOLT; with --eval, times every
variant against the plain build. Every stage's commands, logs and binaries stay
in DIR with manifest.json (everything) and summary.json (for CI). PATH ends up
holding the final binary: the last stage's, or with --eval the earliest stage
whose median is within 1% of the fastest (a stage that does not help beyond
noise is left out, and the output says so). Exit status: 0, 1 if a stage
failed (named on stderr and in summary.json), 2 for bad options.

What to build and run (shell commands, run in the current directory):
  --build 'CMD'        builds PATH; gets CC/CXX (and cc, gcc, clang, c++, g++,
                       clang++ first on PATH) as syspgo's clang-19 wrappers that
                       add the profiling and profile-use flags; also
                       SYSPGO_STAGE (base, sample, order), SYSPGO_CFLAGS and
                       SYSPGO_LDFLAGS. It must recompile: make it build from
                       scratch, use a build directory per $SYSPGO_STAGE, or
                       give --clean
  --clean 'CMD'        run before every build (e.g. 'make clean')
  --binary PATH        the program the build writes
  --train 'CMD'        the training workload, run under syspgo collect
  --eval 'CMD'         the evaluation workload (should differ from training)

Pipeline:
  --stages LIST        of sample, order, bolt              (default sample,order,bolt)
  --dir DIR            where everything is kept            (default syspgo-pgo)
  --runs N             eval runs per variant, interleaved  (default 5, 1..1000)
  --final WHICH        fastest (default: chosen by --eval as above) or last
                       (the last stage's binary whatever --eval measured)
  --profile-db DB      accumulate every training run in DB (CI) and merge all
                       of its runs (syspgo merge --normalize) into the profiles
  --train-runs N       run the training command N times (and the retraining
                       for BOLT) and merge the runs into the profiles
                       (default 1): more samples where one run of a short
                       training command covers too little of the code
                       (docs/profiles.md)
  --use-profile DIR    reuse the profiles of an earlier 'syspgo pgo --dir DIR'
                       instead of training; reports how much still matches
  --probes LIST        probe groups for syspgo collect     (default cpu)
  --freq HZ            cpu sampling frequency              (default: collect's)
  --sample-counts C    ip, ip-only or stacks: how the sample profile
                       counts (default ip; see syspgo optimize --help)

Tools:
  --cc CC --cxx CXX    compilers the wrappers run          (default clang-19, clang++-19)
  --bolt PATH          llvm-bolt                           (default /usr/lib/llvm-19/bin/llvm-bolt)
  --bolt-arg ARG       added to llvm-bolt's options (repeatable), e.g.
                       --bolt-arg=-skip-funcs=luaV_execute/1
  --bolt-opts 'ARGS'   replace the default options: -reorder-functions=hfsort
                       -dyno-stats, with -reorder-blocks=none after the sample
                       stage (clang laid the blocks out from the profile) and
                       =ext-tsp otherwise; never splitting (with IP samples,
                       blocks that run seldom look cold)

Output:
  --json               print summary.json on stdout at the end
  -q                   no progress lines
  -h, --help           this text

Examples:
  sudo syspgo pgo --build 'make clean all' --binary ./app \
       --train './app train.in' --eval './app eval.in' --runs 10
  sudo syspgo pgo --build 'cmake -S . -B b-$SYSPGO_STAGE -DCMAKE_BUILD_TYPE=Release && \
       cmake --build b-$SYSPGO_STAGE && cp b-$SYSPGO_STAGE/app .' --binary ./app --train './app in'
  sudo syspgo pgo --build 'make clean all' --binary ./app --train './ci-tests.sh' \
       --profile-db /cache/app-profiles.db --json
)";

std::string SelfPath() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "syspgo";
}

int Pgo(const std::vector<std::string>& args) {
  PgoOptions o;
  o.syspgo = SelfPath();
  bool json = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i], v;
    bool inline_value = false;
    // --opt=value as well as --opt value (BOLT's options start with '-').
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
      v = a.substr(a.find('=') + 1);
      a = a.substr(0, a.find('='));
      inline_value = true;
    }
    auto value = [&]() {
      if (inline_value) return true;
      if (i + 1 >= args.size()) return false;
      v = args[++i];
      return true;
    };
    if (a == "-h" || a == "--help") {
      printf("%s", kHelp);
      return 0;
    } else if (a == "--json") {
      json = true;
    } else if (a == "-q") {
      o.progress = nullptr;
    } else if (a == "--build" || a == "--clean" || a == "--binary" || a == "--train" || a == "--eval" || a == "--dir" ||
               a == "--profile-db" || a == "--use-profile" || a == "--probes" || a == "--cc" || a == "--cxx" ||
               a == "--bolt" || a == "--bolt-arg" || a == "--bolt-opts" || a == "--stages" || a == "--runs" ||
               a == "--freq" || a == "--sample-counts" || a == "--final" || a == "--train-runs") {
      if (!value()) return UsageError(a + " needs a value; see 'syspgo pgo --help'");
      if (a == "--build") o.build_cmd = v;
      else if (a == "--clean") o.clean_cmd = v;
      else if (a == "--binary") o.binary = v;
      else if (a == "--train") o.train_cmd = v;
      else if (a == "--eval") o.eval_cmd = v;
      else if (a == "--dir") o.dir = v;
      else if (a == "--profile-db") o.profile_db = v;
      else if (a == "--use-profile") o.use_profile = v;
      else if (a == "--probes") o.probes = v;
      else if (a == "--final") {
        if (v != "fastest" && v != "last") return UsageError("--final is fastest or last, got '" + v + "'");
        o.final_last = v == "last";
      }
      else if (a == "--sample-counts") {
        if (!ParseSampleCounts(v)) return UsageError(std::string("--sample-counts is ") + kSampleCountsChoices + ", got '" + v + "'");
        o.sample_counts = v;
      }
      else if (a == "--cc") o.cc = v;
      else if (a == "--cxx") o.cxx = v;
      else if (a == "--bolt") o.llvm_bolt = v;
      else if (a == "--bolt-arg") o.bolt_extra.push_back(v);
      else if (a == "--bolt-opts") {
        for (auto& t : Split(v, ' '))
          if (!t.empty()) o.bolt_args.push_back(t);
      } else if (a == "--stages") {
        o.sample = o.order = o.bolt = false;
        for (auto& t : Split(v, ',')) {
          std::string s = Trim(t);
          if (s == "sample") o.sample = true;
          else if (s == "order") o.order = true;
          else if (s == "bolt") o.bolt = true;
          else return UsageError("unknown stage '" + s + "' in --stages; stages are sample, order, bolt");
        }
      } else {
        char* end = nullptr;
        long n = strtol(v.c_str(), &end, 10);
        long hi = a == "--runs" ? 1000 : a == "--train-runs" ? 100 : 10000;
        if (v.empty() || *end || n < 1 || n > hi)
          return UsageError(a + " needs a whole number from 1 to " + std::to_string(hi) + ", got '" + v + "'");
        if (a == "--runs") o.runs = static_cast<int>(n);
        else if (a == "--train-runs") o.train_runs = static_cast<int>(n);
        else o.freq_hz = static_cast<uint32_t>(n);
      }
    } else {
      return UsageError("unknown argument '" + args[i] + "'; see 'syspgo pgo --help'");
    }
  }
  if (o.build_cmd.empty() || o.binary.empty())
    return UsageError("--build 'CMD' and --binary PATH are needed; see 'syspgo pgo --help'");
  if (o.train_cmd.empty() && o.use_profile.empty())
    return UsageError("--train 'CMD' is needed (or --use-profile DIR to reuse earlier profiles)");

  PgoReport r = RunPgo(o);
  for (auto& w : r.warnings) fprintf(stderr, "syspgo pgo: warning: %s\n", TerminalSafeLines(w).c_str());
  if (json && !r.summary.empty()) {
    FILE* f = fopen(r.summary.c_str(), "r");
    char buf[4096];
    size_t n;
    while (f && (n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, stdout);
    if (f) fclose(f);
  }
  if (!r.ok) {
    fprintf(stderr, "syspgo pgo: stage '%s' failed: %s\n", r.failed_stage.c_str(), TerminalSafeLines(r.error).c_str());
    if (!r.manifest.empty()) fprintf(stderr, "syspgo pgo: details in %s\n", r.manifest.c_str());
    return 1;
  }
  fprintf(stderr, "syspgo pgo: done: %s stage, %s (also at %s); manifest %s\n", r.final_stage.c_str(),
          r.final_binary.c_str(), o.binary.c_str(), r.manifest.c_str());
  return 0;
}

const Command kPgo("pgo", "build, profile, rebuild with the profile and BOLT, and compare (profile-guided rebuild)",
                    &Pgo, Privilege::kRoot);

}  // namespace
}  // namespace syspgo::cli
