//===- pgo.h - `syspgo pgo`: build, train, profile, rebuild, BOLT, evaluate ===//
// The whole profile-guided rebuild of a user's program, driven through the
// user's own build command and the `syspgo` CLI as subprocesses (collect,
// optimize, merge), so this file knows the stages only by their command
// lines and artifacts. Every stage leaves its inputs, logs and outputs in
// one directory with a JSON manifest; a failed stage stops the pipeline and
// is named in the result, so CI can tell a broken build from a bad profile.
//
// How the profiling flags reach a build: through compiler wrappers, not
// CFLAGS. DIR/bin holds one shell script per stage, reached as $CC and $CXX
// and, first on PATH, as cc, gcc, clang, clang-19, c++, g++, clang++ and
// clang++-19 (builds that name their compiler themselves, like Lua's
// Makefile). The script runs clang-19 or clang++-19 with the project's own
// arguments plus those of syspgo's flags that are not already there.
// CFLAGS/CXXFLAGS/LDFLAGS are left alone on purpose: setting them replaces
// a project's defaults (a Makefile's `CFLAGS ?= -O2`, autoconf's `-g -O2`),
// and CMake reads them only when a build directory is first configured. The
// flags are also exported as SYSPGO_CFLAGS and SYSPGO_LDFLAGS for a build
// that wants to place them itself, and SYSPGO_STAGE names the stage (for a
// build directory per stage).
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/result.h"
#include "pgo/pgo_eval.h"

namespace syspgo {

// llvm-bolt's options when none are given: block and function reordering,
// no function splitting. syspgo's BOLT profiles are IP samples (this VM has
// no LBR), in which a block that runs now and then often has no sample and
// looks never run; split out of line, each run of it costs a jump away and
// back and an I-cache line. With cachegrind on the bench's evaluation runs,
// adding -split-functions -split-all-cold to these options cost 1.0-2.0M
// more instructions and 1.2-6.6x the I1 misses on SQLite and Lua, on the
// plain build and on the profile-guided one alike. The CMake module
// (cmake/SysPGO.cmake) has the same default.
inline const std::vector<std::string> kDefaultBoltOptions = {"-reorder-blocks=ext-tsp", "-reorder-functions=hfsort",
                                                             "-dyno-stats"};
// The same for a binary built with the sample profile: functions only.
// clang has laid its blocks out from samples already, with profi inferring
// the branch counts from them; BOLT's no-LBR block layout, from the same
// kind of samples, undid part of that. On the sample+order builds, with
// cachegrind: SQLite 433.4M instructions with ext-tsp against 430.9M
// without (I1 misses 629k against 557k), Lua 1049.7M against 1048.3M.
inline const std::vector<std::string> kBoltOptionsAfterSampleProfile = {
    "-reorder-blocks=none", "-reorder-functions=hfsort", "-dyno-stats"};

struct PgoOptions {
  std::string build_cmd;    // shell command that builds `binary` (run with sh -c, in the current directory)
  std::string clean_cmd;    // optional shell command run before every build
  std::string binary;       // the program the build produces
  std::string train_cmd;    // shell command that exercises `binary` while it is profiled
  std::string eval_cmd;     // optional: timed, on every variant, to compare them
  bool sample = true;       // rebuild with the LLVM sample profile
  bool order = true;        // link with the symbol ordering file
  bool bolt = true;         // rewrite the last build with BOLT and a syspgo fdata profile
  std::string dir = "syspgo-pgo";
  int runs = 5;             // eval rounds to start with (each runs every variant once, in rotating order)
  int max_runs = 30;        // rounds at most, added one by one while a stage's interval straddles 1
  double eval_budget_s = 300;  // and while the evaluation has taken less than this
  std::string eval_metric = "wall";  // wall or instructions (cachegrind): what the final choice is made on
  bool final_last = false;  // keep the last stage's binary even when --eval found an earlier one as fast
  std::string profile_db;   // accumulate runs here and merge all of them (CI); else DIR/train/train.db
  int train_runs = 1;       // training runs per collection, merged into the profiles
  std::string use_profile;  // an earlier pgo DIR whose profiles to reuse instead of training
  std::string probes = "cpu";
  std::string sample_counts = "ip";  // optimize --sample-counts for the sample profile
  // optimize --profile-kind for the sample profile, or auto: the flat
  // profile for the pipeline's stages and, with --eval, a probe leg beside
  // them (its own build with pseudo-probes, training, probe profile and
  // rebuild: the candidate stage kSampleProbeStage), the evaluation keeping
  // whichever kind is faster.
  std::string profile_kind = "auto";
  uint32_t freq_hz = 0;     // collect's --freq; 0 is collect's default, the next field
  uint32_t collect_default_freq_hz = 999;  // that default, from which a thin profile's rate is raised
  std::vector<std::string> bolt_args;  // replace kDefaultBoltOptions (kBoltOptionsAfterSampleProfile) when non-empty
  std::vector<std::string> bolt_extra; // appended to them (e.g. -skip-funcs=...)
  std::string syspgo;       // the syspgo command the stages run
  std::string cc = "clang-19";
  std::string cxx = "clang++-19";
  std::string llvm_bolt = "/usr/lib/llvm-19/bin/llvm-bolt";
  int verbose = 0;
  FILE* progress = stderr;  // lines for people; nullptr for none
};

// The probe leg's rebuild, a candidate stage beside `sample` with
// --profile-kind auto.
inline constexpr const char* kSampleProbeStage = "sample-probe";

struct PgoReport {
  bool ok = false;
  std::string failed_stage;  // "" when ok
  std::string error;         // what failed and what to do
  std::string manifest;      // DIR/manifest.json
  std::string summary;       // DIR/summary.json
  std::string final_binary;  // the chosen variant's binary (also installed at --binary)
  std::string final_stage;   // its name: plain, sample, sample-probe, order or bolt
  std::string final_reason;  // why that one, for people
  // The profile kind the final binary was built with (flat, cs, probe, or
  // none for the user's build), and with auto why: the probe leg's sample
  // stage against the flat one's, in the evaluation's own words.
  std::string profile_kind;
  std::string profile_kind_reason;
  std::vector<std::string> warnings;
  std::vector<PgoEvalVariant> eval;
  PgoProfileQuality profile_quality;
};

// What a stage's build needs from syspgo, and so what its wrappers add: the
// final binary carries only what its own stage needs. The user's own build
// (`plain`) needs nothing; the training build is walked by frame pointers
// and symbolized by line tables; the sample-profile rebuild needs the line
// tables and discriminators the profile is keyed by (not frame pointers);
// the symbol order needs function sections and lld; BOLT's input needs its
// relocations kept.
struct PgoStageNeeds {
  bool frame_pointers = false;     // -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
  bool profile_debug_info = false; // -gline-tables-only -fdebug-info-for-profiling
  bool function_sections = false;  // -ffunction-sections
  bool bolt_input = false;         // -fuse-ld=lld -Wl,--emit-relocs
  bool pseudo_probes = false;      // -fpseudo-probe-for-profiling
  std::string sample_profile;      // -fprofile-sample-use=... and its companions
  std::string order_file;          // -fuse-ld=lld -Wl,--symbol-ordering-file=...
};
std::vector<std::string> PgoCompileFlags(const PgoStageNeeds& n);
std::vector<std::string> PgoLinkFlags(const PgoStageNeeds& n);

// Writes DIR/bin: the wrapper script for `stage` and its compiler names.
// `log` receives one line per compiler call (its full arguments).
Status WriteCompilerWrappers(const std::string& bin_dir, const std::string& stage, const std::string& cc,
                             const std::string& cxx, const std::vector<std::string>& compile_flags,
                             const std::vector<std::string>& link_flags, const std::string& log);

// What the pipeline reads from the consumers' own reports (exposed for
// tests). Their wording is the tools', not syspgo's: `unread` holds each
// line that mentions a figure in words the pattern does not read (a
// reworded report), with the manifest figure it leaves out, so that the
// figure's zero is said in a warning rather than silent.
struct PgoUnreadLine {
  std::string figure, line;
};
// llvm-bolt's "N out of M functions in the binary (P%) have non-empty
// execution profile" and "N (P% of all profiled) functions have invalid
// (possibly stale) profile" (the latter only when there are any).
struct PgoBoltReport {
  bool has_profile_line = false;
  uint64_t functions_with_profile = 0, functions_in_binary = 0;
  uint64_t stale_functions = 0;
  double stale_share = 0;
  // "N functions with profile could not be optimized": BOLT could not build
  // their control flow (non-simple functions), so it left them as they were.
  uint64_t profiled_not_optimized = 0;
  std::vector<std::string> indirect_branch_failures;  // "failed to post-process indirect branches for F"
  std::vector<PgoUnreadLine> unread;
};
PgoBoltReport ReadBoltReport(const std::string& text);
// Why the bolt stage is left out ("" if it is not): BOLT gave none of the
// profiled functions a profile, so its output is the input with functions
// moved and nothing the profile asked for. `profiled` is the number of
// functions in the fdata profile.
std::string BoltLeftOutReason(const PgoBoltReport& r, size_t profiled);
// clang's -sample-profile-check-sample-coverage warnings in a build log,
// "N of M available profile samples (P%) were applied", one per function
// whose profile did not fully apply; none at all is a profile that applied
// in full.
struct PgoSampleCoverage {
  uint64_t available = 0, applied = 0;
  int functions = 0;
  std::vector<PgoUnreadLine> unread;
};
PgoSampleCoverage ReadSampleCoverage(const std::string& build_log);

// Runs the pipeline. Never throws; a failed stage is a report with ok=false
// (the manifest and summary are written either way).
PgoReport RunPgo(const PgoOptions& o);

}  // namespace syspgo
