//===- cmd_optimize.cc - `syspgo optimize DB --emit KIND -o FILE` --------===//
// Turns a recorded run into an artifact for a compiler, linker, binary
// rewriter or viewer. The kinds are the rows of optimize/artifact_kinds.h;
// what each is made from picks the function here that makes it.
#include <cstdio>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/options.h"
#include "common/files.h"
#include "common/util.h"
#include "analyze/run.h"
#include "analyze/sample_pprof.h"
#include "optimize/artifact_kinds.h"
#include "optimize/deploy_lists.h"
#include "optimize/erofs_image.h"
#include "optimize/plan_from_run.h"
#include "optimize/profile_artifacts.h"
#include "optimize/readahead_plan.h"
#include "optimize/startup_order.h"

namespace syspgo::cli {
namespace {

struct OptimizeArgs {
  std::string db, binary, emit, output, format = "text";
  std::string json;  // --json FILE: the summary of a CPU-sample artifact or of an EROFS layout
  std::vector<std::string> pprof;  // --pprof FILE: pprof profiles in place of (or beside) DB
  std::string source_dir = "/";  // squashfs-sort, erofs: the directory the image is made of
  std::string compress;          // erofs: mkfs.erofs's compressor, empty for none
  std::string image_root = "/";  // prefetch-list: where the image is mounted when the trace was taken
  std::string relocate;           // plan: FROM=TO, the recorded directory and where its image is mounted
  std::string pages = "auto";     // plan: which pages (PlanPages)
  std::string sample_counts = SampleCountsName(ArtifactRequest().sample_counts);  // sample-profile
  std::string profile_kind = ProfileKindName(ArtifactRequest().profile_kind);     // sample-profile
  int64_t gap_kib = kPlanDefaultMergeGap >> 10;  // plan: merge gap
  int64_t run = 0, pid = 0;
  std::vector<std::string> debug_dirs;
  int verbose = 0;
};

// CPU-sample artifacts: every kind goes through optimize/emitter.h.
int EmitProfile(const OptimizeArgs& a, const ArtifactKind& kind) {
  ArtifactRequest r;
  if (!a.db.empty()) {
    auto in = ParseProfileInput(a.db);
    if (!in) return UsageError(in.error().message);
    if (a.run && in->pprof) return UsageError("--run picks a run of a database; '" + a.db + "' is a pprof profile");
    if (a.run) in->runs.push_back(a.run);
    r.inputs.push_back(*in);
  }
  for (const std::string& f : a.pprof) {
    auto in = ParseProfileInput(f, true);
    if (!in) return UsageError(in.error().message);
    r.inputs.push_back(*in);
  }
  r.kind = *kind.binary_form && a.format == "binary" ? kind.binary_form : kind.name;
  r.binary = a.binary;
  r.output = a.output;
  r.pid = static_cast<uint32_t>(a.pid);
  r.debug_dirs = a.debug_dirs;
  r.sample_counts = *ParseSampleCounts(a.sample_counts);
  r.profile_kind = *ParseProfileKind(a.profile_kind);
  auto s = WriteProfileArtifact(r);
  if (!s) return Fail(s.error().message);
  for (const std::string& w : s->warnings) Warn(w);
  WriteJsonSummary(a.json, ArtifactSummaryJson(r, *s));
  if (!a.binary.empty()) {
    double line_pct =
        s->binary_leaf ? 100.0 * static_cast<double>(s->binary_with_line) / static_cast<double>(s->binary_leaf) : 0;
    fprintf(stderr,
            "syspgo: wrote %s (%s): %llu of %llu samples pass through %s, %llu have their IP in it, %.1f%% of "
            "those at a source line\n",
            a.output.c_str(), r.kind.c_str(), static_cast<unsigned long long>(s->binary_samples),
            static_cast<unsigned long long>(s->samples), a.binary.c_str(),
            static_cast<unsigned long long>(s->binary_leaf), line_pct);
  } else if (a.verbose) {
    fprintf(stderr, "syspgo: wrote %s (%s) from %llu samples\n", a.output.c_str(), r.kind.c_str(),
            static_cast<unsigned long long>(s->samples));
  }
  if (s->pprof_files > 1 || (s->pprof_files && s->runs))
    fprintf(stderr, "syspgo: the samples of %llu runs and %llu pprof profiles were merged\n",
            static_cast<unsigned long long>(s->runs), static_cast<unsigned long long>(s->pprof_files));
  return 0;
}

// A plan's bytes and extents.
std::pair<uint64_t, uint64_t> PlanSize(const Plan& plan) {
  uint64_t bytes = 0, extents = 0;
  for (const PlanFile& f : plan.files)
    for (const PlanExtent& e : f.extents) bytes += e.length, ++extents;
  return {bytes, extents};
}

// What an artifact left out, a line each (paths from the plan, shown
// through TerminalSafe).
void PrintLeftOut(const std::vector<std::string>& left_out) {
  for (const std::string& w : left_out) fprintf(stderr, "syspgo: left out: %s\n", TerminalSafe(w).c_str());
}

// A cold start recorded with readahead on gives a plan of mapped pages: each
// fault's fault-around window, since readahead and fault-around hide which
// pages were used. What a user does first (`collect --cold`) so makes a
// larger plan than needed; say by how much, from this run's own touched
// pages (a lower bound: fault-around mapped some used pages without a fault).
void NoteReadaheadCost(Db& db, int64_t run, PlanFromRunOptions po, uint64_t mapped_bytes) {
  po.pages = PlanPages::kTouched;
  auto touched = PlanFromRun(db, run, po);
  if (!touched) return;
  uint64_t touched_bytes = PlanSize(touched->plan).first;
  if (touched_bytes >= mapped_bytes) return;
  char msg[512];
  snprintf(msg, sizeof msg,
           "run %lld was recorded with readahead on, so this plan holds every fault's fault-around window: "
           "%.1f MiB, where the pages seen used are %.1f MiB. For a page-exact plan, record the cold start with "
           "`syspgo collect --cold --no-readahead` (readahead is off machine-wide while the command runs).",
           static_cast<long long>(run), mapped_bytes / 1048576.0, touched_bytes / 1048576.0);
  Note(msg);
}

// The cold start's plan as an artifact, optionally moved to where an image
// of the recorded directory is mounted (--relocate).
int WriteColdStartPlan(const OptimizeArgs& a, Db& db, int64_t run, const PlanFromRunOptions& po,
                       PlanFromRunResult& p) {
  auto [bytes, extents] = PlanSize(p.plan);
  const uint64_t recorded_bytes = bytes;  // before --relocate leaves files out
  if (!a.relocate.empty()) {
    size_t eq = a.relocate.find('=');
    auto r = RelocatePlan(p.plan, a.relocate.substr(0, eq), a.relocate.substr(eq + 1));
    if (!r) return UsageError("--relocate: " + r.error().message);
    PrintLeftOut(r->left_out);
    fprintf(stderr, "syspgo: %zu of %zu files moved to %s\n", r->moved, p.plan.files.size(),
            a.relocate.substr(eq + 1).c_str());
    p.plan = std::move(r->plan);
    std::tie(bytes, extents) = PlanSize(p.plan);
  }
  if (Status s = WritePlan(p.plan, a.output); !s.ok()) return Fail(s.error().message);
  fprintf(stderr, "syspgo: wrote %s: %zu files, %llu extents, %.1f MiB (%s pages), from %llu touches of run %lld\n",
          a.output.c_str(), p.plan.files.size(), static_cast<unsigned long long>(extents), bytes / 1048576.0,
          PlanPagesName(p.pages), static_cast<unsigned long long>(p.touches), static_cast<long long>(run));
  if (po.pages == PlanPages::kAuto && p.pages == PlanPages::kMapped) NoteReadaheadCost(db, run, po, recorded_bytes);
  return 0;
}

int WriteStartupOrder(const OptimizeArgs& a, const Plan& plan) {
  auto order = StartupOrderFromPlan(plan, a.binary);
  if (!order) return Fail(order.error().message);
  if (Status s = WriteFileAtomically(a.output, StartupOrderText(*order)); !s.ok()) return Fail(s.error().message);
  fprintf(stderr, "syspgo: wrote %s: %zu functions on the %zu text pages of %zu the start touched in %s, in "
          "first-touch order (ld.lld --symbol-ordering-file, code built with -ffunction-sections)\n",
          a.output.c_str(), order->symbols.size(), order->text_pages, order->pages, a.binary.c_str());
  return 0;
}

int WriteErofs(const OptimizeArgs& a, const Plan& plan) {
  std::string mkfs_args;
  for (const std::string& arg : MkfsErofsLayoutArgs(a.compress)) mkfs_args += " " + arg;
  fprintf(stderr, "syspgo: making %s from %s (mkfs.erofs%s, then the plan's %llu pages first)\n", a.output.c_str(),
          a.source_dir.c_str(), mkfs_args.c_str(),
          static_cast<unsigned long long>(PlanSize(plan).first / kPlanPageSize));
  auto laid = BuildErofsImage(a.source_dir, a.output, plan, a.compress);
  if (!laid) return Fail(laid.error().message);
  PrintLeftOut(laid->left_out);
  if (laid->files_flat)
    fprintf(stderr, "syspgo: %zu files of the plan are stored flat by mkfs.erofs (small, inline or not "
            "compressible) and stay where it put them\n", laid->files_flat);
  fprintf(stderr, "syspgo: wrote %s: %zu files, %llu of its %llu data blocks first, in replay order\n",
          a.output.c_str(), laid->files_placed, static_cast<unsigned long long>(laid->blocks_placed),
          static_cast<unsigned long long>(laid->data_blocks));
  // blocks_placed is what a replay of the plan reads from the image (for
  // a compressed one, fewer bytes than the plan's pages).
  WriteJsonSummary(a.json, {{"artifact", "erofs"},
                            {"output", a.output},
                            {"compress", a.compress.empty() ? "none" : a.compress},
                            {"files_placed", laid->files_placed},
                            {"files_flat", laid->files_flat},
                            {"blocks_placed", laid->blocks_placed},
                            {"data_blocks", laid->data_blocks},
                            {"block_size", kErofsBlockSize},
                            {"left_out", laid->left_out}});
  return 0;
}

// The deploy lists: paths in first-touch order, for mksquashfs or an image's prefetch.
int WriteDeployList(const OptimizeArgs& a, const ArtifactKind& kind, const Plan& plan) {
  auto list = kind.id == ArtifactKindId::kSquashfsSort ? SquashfsSortList(plan, a.source_dir)
                                                       : PrefetchPathList(plan, a.image_root);
  if (!list) return Fail(list.error().message);
  PrintLeftOut(list->left_out);
  if (Status s = WriteFileAtomically(a.output, list->text); !s.ok()) return Fail(s.error().message);
  fprintf(stderr, "syspgo: wrote %s: %zu paths in first-touch order\n", a.output.c_str(), list->listed);
  return 0;
}

// Cold-start artifacts: the plan, and what is made from it.
int EmitFromPlan(const OptimizeArgs& a, const ArtifactKind& kind) {
  if (!a.pprof.empty() || a.db.empty() || IsPprofFile(a.db))
    return UsageError("--emit " + a.emit + " is made from a cold start recorded in a profile database "
                      "(syspgo collect --cold); a pprof profile holds CPU samples only");
  if (!a.json.empty() && !kind.json_summary)
    return UsageError("--json summarizes an artifact made from CPU samples (sample-profile, fdata, order, pprof, "
                      "folded) or an EROFS image, not --emit " + a.emit);
  // What each artifact needs besides the run, checked before the plan is built (it reads every file).
  if (kind.needs_binary && a.binary.empty())
    return UsageError("--emit " + a.emit + " orders one program's functions: give it with --binary PATH");
  if (kind.needs_source_dir && a.source_dir == "/")
    return UsageError("--emit " + a.emit + " makes an image of one directory: give it with --source-dir DIR (the "
                      "directory the recorded run read its files from, e.g. through chroot DIR)");
  auto opened = OpenRun(a.db, a.run);
  if (!opened) return Fail(opened.error().message);
  auto& [db, run] = *opened;
  PlanFromRunOptions po;
  po.pages = *ParsePlanPages(a.pages);
  po.merge_gap = static_cast<uint64_t>(a.gap_kib) << 10;
  po.keep_pieces = kind.page_order;
  auto p = PlanFromRun(db, run.id, po);
  if (!p) return Fail(p.error().message);
  for (const std::string& w : p->warnings) Warn(w);
  switch (kind.id) {
    case ArtifactKindId::kPlan: return WriteColdStartPlan(a, db, run.id, po, *p);
    case ArtifactKindId::kStartupOrder: return WriteStartupOrder(a, p->plan);
    case ArtifactKindId::kErofs: return WriteErofs(a, p->plan);
    default: return WriteDeployList(a, kind, p->plan);
  }
}

// The readahead plan: per file the advice that fits how the run used it.
int EmitReadahead(const OptimizeArgs& a, const ArtifactKind&) {
  if (!a.pprof.empty() || a.db.empty() || IsPprofFile(a.db))
    return UsageError("--emit readahead is made from a run recorded in a profile database with the fileio and "
                      "faults groups (syspgo collect --cold); a pprof profile holds CPU samples only");
  auto opened = OpenRun(a.db, a.run);
  if (!opened) return Fail(opened.error().message);
  auto& [db, run] = *opened;
  auto p = ReadaheadPlanFromRun(db, run.id);
  if (!p) return Fail(p.error().message);
  PrintLeftOut(p->warnings);
  if (Status s = WriteFileAtomically(a.output, ReadaheadPlanText(*p)); !s.ok()) return Fail(s.error().message);
  size_t by_advice[3] = {};
  for (const ReadaheadFile& f : p->files) by_advice[static_cast<int>(f.advice)]++;
  fprintf(stderr, "syspgo: wrote %s: %zu files random, %zu sequential, %zu left to the kernel, from run %lld\n",
          a.output.c_str(), by_advice[static_cast<int>(ReadaheadAdvice::kRandom)],
          by_advice[static_cast<int>(ReadaheadAdvice::kSequential)],
          by_advice[static_cast<int>(ReadaheadAdvice::kDefault)], static_cast<long long>(run.id));
  for (const ReadaheadDevice& d : p->devices)
    if (d.advised_kb >= 0 && d.advised_kb != d.read_ahead_kb)
      fprintf(stderr, "syspgo: device %s: read_ahead_kb %lld, advised %lld (by hand: echo %lld > %s): %s\n",
              d.block.c_str(), static_cast<long long>(d.read_ahead_kb), static_cast<long long>(d.advised_kb),
              static_cast<long long>(d.advised_kb), d.sysfs.c_str(), d.why.c_str());
  if (p->files.empty()) Note("the run touched no file the plan could name; nothing to advise");
  return 0;
}

// The function that makes each kind, by what it is made from.
int Emit(const OptimizeArgs& a, const ArtifactKind& kind) {
  switch (kind.input) {
    case ArtifactInput::kCpuSamples: return EmitProfile(a, kind);
    case ArtifactInput::kColdStart: return EmitFromPlan(a, kind);
    case ArtifactInput::kFileAccess: return EmitReadahead(a, kind);
  }
  return 1;
}

// The usage lines, what the command does and its artifacts (ArtifactKinds()).
std::string About() {
  std::string kinds;
  for (const ArtifactKind& k : ArtifactKinds()) {
    char line[256];
    snprintf(line, sizeof line, "  %-22s %s\n", k.name, k.help);
    kinds += line;
  }
  return "usage: syspgo optimize DB --emit KIND -o FILE [--binary PATH] [OPTIONS]\n"
         "       syspgo optimize --pprof FILE [--pprof FILE...] --emit KIND -o FILE [--binary PATH] [OPTIONS]\n\n"
         "Writes an artifact from one run of a profile database (the newest unless --run), or from the\n"
         "CPU samples of pprof profiles (merged; a DB argument that is a pprof file counts as one).\n\nKIND:\n" +
         kinds;
}

const char kExamples[] =
    "Several runs or databases: syspgo merge. How counts are made: docs/profiles.md.\n\n"
    "Examples:\n"
    "  syspgo collect --probes cpu -o run.db -- ./app input\n"
    "  syspgo optimize run.db --binary ./app --emit sample-profile -o app.prof\n"
    "  clang -O2 -g -fprofile-sample-use=app.prof app.c -o app\n"
    "  syspgo optimize run.db --binary ./app --emit fdata -o app.fdata\n"
    "  llvm-bolt ./app -o app.bolt -data app.fdata -reorder-blocks=ext-tsp\n"
    "  syspgo optimize run.db --binary ./app --emit order -o app.order\n"
    "  syspgo optimize run.db --emit pprof -o run.pb.gz\n"
    "  syspgo optimize --pprof fleet.pb.gz --binary ./app --emit sample-profile -o app.prof\n"
    "  syspgo collect --cold --no-readahead -o cold.db -- ./app  # drops the page cache first\n"
    "  syspgo optimize cold.db --emit plan -o app.plan && syspgo prefetch app.plan -- ./app\n"
    "  syspgo optimize cold.db --emit readahead -o app.ra && syspgo prefetch --readahead app.ra -- ./app\n"
    "  syspgo optimize cold.db --emit erofs --source-dir /srv/root -o app.erofs  # mount -t erofs -o loop,ro\n"
    "  syspgo optimize cold.db --emit squashfs-sort --source-dir /srv/root -o sort.txt\n"
    "  mksquashfs /srv/root app.img -sort sort.txt && mount -o loop,ro app.img /mnt/app\n"
    "  syspgo optimize cold.db --emit plan --relocate /srv/root=/mnt/app -o app.plan  # docs/coldstart.md\n";

// What the artifact is made from: the run or profiles, the binary, the process.
void AddInputOptions(CLI::App* app, OptimizeArgs& a) {
  app->add_option("db", a.db, "the profile database, or a pprof profile");

  app->option_defaults()->group("What to read");
  app->add_option("--binary", a.binary,
                  "the binary the artifact is for, matched to the run by build-id (needed by sample-profile, fdata, "
                  "order); in a pprof profile by the mapping's build-id, else its path")
      ->type_name("PATH");
  Repeatable(app->add_option("--pprof", a.pprof,
                             "a pprof CPU profile (gzipped or not; repeatable): syspgo's own, gperftools' through `go "
                             "tool pprof -proto BINARY PROFILE`, or a backend's merged export; weight one with "
                             "FILE@W. Several runs or databases: syspgo merge"))
      ->type_name("FILE");
  app->add_option("--run", a.run, "the run (default: the newest)")
      ->type_name("N")
      ->transform(Whole(1, INT64_MAX, "a run number"));
  app->add_option("--pid", a.pid, "only samples of this process")
      ->type_name("N")
      ->transform(Whole(1, UINT32_MAX, "a process id"));
  Repeatable(app->add_option("--debug-dir", a.debug_dirs,
                             "look for debug files under DIR/.build-id/ and DIR/<path> (repeatable; /usr/lib/debug "
                             "and .gnu_debuglink are always searched)"))
      ->type_name("DIR");
}

// What to write and where, and the summary for machines.
void AddOutputOptions(CLI::App* app, OptimizeArgs& a) {
  app->option_defaults()->group("Output");
  app->add_option("--emit", a.emit, "what to write (above)")->type_name("KIND");
  app->add_option("-o", a.output, "where")->type_name("FILE");
  AddJsonSummary(*app, &a.json,
                 "also write a summary as JSON to FILE ('-': stdout): the samples read, those in --binary and "
                 "at a source line, the warnings (CPU-sample kinds); erofs: the files and blocks laid out first");
  Choices(app->add_option("--format", a.format, "sample-profile: text or extensible binary"), {"text", "binary"})
      ->capture_default_str();
}

// How a sample profile counts and what it is keyed by.
void AddSampleProfileOptions(CLI::App* app, OptimizeArgs& a) {
  app->add_option("--sample-counts", a.sample_counts,
                  "sample-profile: ip (line counts from IP samples only, each basic block's shared over its "
                  "instructions, plus each call site's targets from the stacks, for indirect-call promotion), "
                  "ip-only (those line counts and nothing else, as llvm-profgen --leading-ip-only) or stacks (IP "
                  "samples per line plus the time below each call site, call targets, head samples); compared in "
                  "docs/profiles.md")
      ->type_name("ip|ip-only|stacks")
      ->check(Accepts([](const std::string& v) { return ParseSampleCounts(v).has_value(); }, kSampleCountsChoices))
      ->capture_default_str();
  app->add_option("--profile-kind", a.profile_kind,
                  "sample-profile: flat (each function's samples, nested where the binary inlined calls) or cs "
                  "(also each sample's calling context from the stacks: the calls a pre-inliner picks from them are "
                  "nested and marked for clang to inline; with --sample-counts ip or ip-only) or probe (keyed by "
                  "the pseudo-probes of a binary built with -fpseudo-probe-for-profiling, which the rebuild needs "
                  "too; with --sample-counts ip or ip-only); compared in docs/profiles.md")
      ->type_name("flat|cs|probe")
      ->check(Accepts([](const std::string& v) { return ParseProfileKind(v).has_value(); }, kProfileKindChoices))
      ->capture_default_str();
}

// The cold-start artifacts' own options: images, lists and plans.
void AddColdStartOptions(CLI::App* app, OptimizeArgs& a) {
  app->add_option("--source-dir", a.source_dir, "squashfs-sort, erofs: the directory the image is made of")
      ->type_name("DIR")
      ->capture_default_str();
  Choices(app->add_option("--compress", a.compress,
                          "erofs: compress the image (mkfs.erofs -zALG -Elegacy-compress, whose index lets each "
                          "4 KiB block move); fewer bytes to read, each decompressed as it is read"),
          {"lz4", "lz4hc"});
  app->add_option("--image-root", a.image_root, "prefetch-list: where the image was mounted in the traced run")
      ->type_name("DIR")
      ->capture_default_str();
  app->add_option("--relocate", a.relocate,
                  "plan: the run's files under FROM are replayed from TO, where an image of FROM is mounted; each "
                  "is fingerprinted there and left out unless its bytes are the same")
      ->type_name("FROM=TO")
      ->check(Accepts([](const std::string& v) { return v.find('=') != std::string::npos; }, "FROM=TO"));
  app->add_option("--pages", a.pages,
                  "plan: touched (pages read or faulted on, and the fault-around windows in files the collector "
                  "maps itself, such as libc and libstdc++), mapped (plus each fault's fault-around window), cached "
                  "(every page the cold run read, readahead included) or auto (touched if the run was recorded "
                  "with collect --no-readahead, else mapped)")
      ->type_name("WHICH")
      ->check(Accepts([](const std::string& v) { return ParsePlanPages(v).has_value(); },
                      "touched, mapped, cached or auto"))
      ->capture_default_str();
  app->add_option("--gap", a.gap_kib, "plan: read ranges this close together as one (0 = only touching ranges)")
      ->type_name("KiB")
      ->transform(Whole(0, 1 << 20, "KiB"))
      ->capture_default_str();
}

// The parsed options checked against each other, then the artifact made.
int CheckAndEmit(const OptimizeArgs& a) {
  if (a.db.empty() && a.pprof.empty())
    return UsageError("usage: syspgo optimize DB --emit KIND -o FILE, or syspgo optimize --pprof FILE --emit KIND -o "
                      "FILE; see --help");
  if (a.output.empty()) return UsageError("-o FILE is needed: where to write the artifact");
  const ArtifactKind* kind = FindArtifactKind(a.emit);
  if (!a.compress.empty() && (!kind || kind->id != ArtifactKindId::kErofs))
    return UsageError("--compress compresses an EROFS image: it goes with --emit erofs, not --emit " + a.emit);
  if (kind) return Emit(a, *kind);
  std::string names;
  for (const ArtifactKind& k : ArtifactKinds()) names += (names.empty() ? "" : ", ") + std::string(k.name);
  return UsageError((a.emit.empty() ? std::string("--emit KIND is needed") : "unknown --emit '" + a.emit + "'") +
                    "; choose one of: " + names);
}

int Optimize(const std::vector<std::string>& args) {
  OptimizeArgs a;
  auto app = NewApp("syspgo optimize", About(), kExamples);
  AddInputOptions(app.get(), a);
  AddOutputOptions(app.get(), a);
  AddSampleProfileOptions(app.get(), a);
  AddColdStartOptions(app.get(), a);
  AddVerbosity(*app, &a.verbose, "say what was written even without --binary");

  if (auto exit = Parse(*app, args)) return *exit;
  return CheckAndEmit(a);
}

const Command kOptimize("optimize", "write a profile artifact for a compiler, linker or viewer", &Optimize);

}  // namespace
}  // namespace syspgo::cli
