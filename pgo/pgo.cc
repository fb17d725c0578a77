//===- pgo.cc - `syspgo pgo`: the profile-guided rebuild pipeline ---------===//
// Stages, in order: build (the plain build, with the flags profiling needs:
// every later variant is compared against it), train (the training command
// under `syspgo collect`), profile (`syspgo optimize`/`merge` emit the
// sample profile and symbol order), sample and order (rebuilds that use
// them), retrain (collect again on the rebuilt binary, since BOLT's profile
// must address that binary's code), bolt (llvm-bolt with the syspgo fdata),
// eval (every variant timed, interleaved). Each stage is a subprocess whose
// command line and output are kept in DIR; the statistics in the manifest
// come from the artifacts, syspgo's own --json summaries (never its lines
// for people) and the consumers' own reports (clang's profile coverage
// check, BOLT's "functions have non-empty execution profile"), where a line
// worded otherwise than expected is a warning, not a silent zero. The
// stages are rows of one table (Pipeline::Stages), which Run walks.
#include "pgo/pgo.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "analyze/sample_set.h"
#include "analyze/text_join.h"
#include "common/elf.h"
#include "common/files.h"
#include "common/identity.h"
#include "common/process.h"
#include "common/stats.h"
#include "common/util.h"
#include "optimize/artifact_kinds.h"

namespace syspgo {
namespace {

namespace fs = std::filesystem;

// The manifest and summary keep the order the pipeline wrote things in.
using Json = nlohmann::ordered_json;

// Text of `j` for the manifest and summary files: indented, and a byte that
// is not UTF-8 (a path) replaced rather than thrown on.

// ===--- Files and processes ------------------------------------------=== //

// Copies `from` over `to` with the invoking user's rights, reading the way
// every input a user names is read (OpenRegularAsUser: a FIFO or a
// directory there is refused, not waited on) and writing the way every
// file syspgo writes is (WriteFileAtomically: a temporary and a rename), so
// a program running from `to` keeps its old inode, a reader never sees half
// a file, and a link planted at `to` is replaced, not written through.
Status InstallFile(const std::string& from, const std::string& to, mode_t mode = 0755) {
  auto opened = OpenRegularAsUser(from);
  if (!opened) return opened.error();
  int fd = *opened;
  std::string bytes;
  char buf[1 << 16];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      return MakeError("cannot read " + from + ": " + strerror(e), e);
    }
    bytes.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return WriteFileAtomically(to, bytes, mode);
}

std::string Tail(const std::string& text, size_t lines) {
  size_t pos = text.size();
  if (pos && text[pos - 1] == '\n') --pos;
  for (size_t n = 0; n < lines && pos > 0; ++n) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) return text;
  }
  return text.substr(pos + 1);
}

// Whether `path` grants `mode` to the file access rights in force: the
// invoking user's under sudo (RunPgo acts as them), where access(2) would
// ask for root's real uid and tell apart a file in a directory the user
// cannot enter from a missing one.
bool MayAccess(const std::string& path, int mode) {
  return faccessat(AT_FDCWD, path.c_str(), mode, AT_EACCESS) == 0;
}

// `p` made absolute, or "" if it cannot be (the working directory is gone).
std::string Absolute(const std::string& p) {
  std::error_code ec;
  std::string a = fs::absolute(p, ec).string();
  return ec ? "" : a;
}

// The absolute path of program `name` on PATH, "" if none.
std::string Which(const std::string& name) {
  if (name.find('/') != std::string::npos) return MayAccess(name, X_OK) ? Absolute(name) : "";
  const char* path = getenv("PATH");
  for (const std::string& d : Split(path ? path : "/usr/bin:/bin", ':')) {
    std::string p = (d.empty() ? "." : d) + "/" + name;
    if (MayAccess(p, X_OK)) return Absolute(p);
  }
  return "";
}

// Who a command of the pipeline runs as. Under sudo the build, clean, eval
// and every tool run as the invoking user (common/identity.h); only
// `syspgo collect` keeps root, for its BPF programs, and it runs the
// training command as the user itself.
enum class RunAs { kUser, kRoot };

// Runs `spec` as `as` says (RunProcess: env on top of ours, or of the
// user's; a log file is opened with the user's rights whoever runs).
Result<ProcessResult> RunChild(ProcessSpec spec, RunAs as = RunAs::kUser) {
  auto user = InvokingUserOrNull();
  if (!user.ok()) return user.error();
  spec.user = as == RunAs::kUser ? *user : nullptr;
  return RunProcess(spec);
}

// argv with `env` added to ours (a key with an empty value is removed),
// stdout and stderr appended to `log`, so one log can hold several commands.
Result<ProcessResult> RunLogged(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                                const std::string& log, RunAs as = RunAs::kUser) {
  ProcessSpec spec;
  spec.argv = argv;
  spec.env = env;
  spec.out = ProcessOutput::File(log);
  spec.err_to_out = true;
  return RunChild(std::move(spec), as);
}

// ===--- Reading the artifacts and the consumers' reports -------------=== //

// Top-level records of a text sample profile: "name:total:head" at column 0.
std::map<std::string, uint64_t> SampleProfileFunctions(const std::string& path) {
  std::map<std::string, uint64_t> out;
  std::istringstream in(ReadFileOrEmpty(path));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == ' ' || line[0] == '\t') continue;
    size_t head = line.rfind(':');
    if (head == std::string::npos || head == 0) continue;
    size_t total = line.rfind(':', head - 1);
    if (total == std::string::npos) continue;
    out[line.substr(0, total)] += strtoull(line.c_str() + total + 1, nullptr, 10);
  }
  return out;
}

std::vector<std::string> NonEmptyLines(const std::string& path) {
  std::vector<std::string> out;
  std::istringstream in(ReadFileOrEmpty(path));
  for (std::string line; std::getline(in, line);)
    if (!Trim(line).empty()) out.push_back(Trim(line));
  return out;
}

// Defined symbols of a binary and their addresses (`nm --defined-only`).
std::map<std::string, uint64_t> Symbols(const std::string& binary) {
  std::map<std::string, uint64_t> out;
  ProcessSpec nm;
  nm.argv = {"nm", "--defined-only", binary};
  nm.err = ProcessOutput::Discard();
  auto r = RunChild(std::move(nm));
  if (!r || r->status != 0) return out;
  std::istringstream in(r->out);
  for (std::string line; std::getline(in, line);) {
    auto f = Split(line, ' ');
    if (f.size() == 3) out.emplace(f[2], strtoull(f[0].c_str(), nullptr, 16));
  }
  return out;
}

// From the --json summary of `syspgo optimize`/`merge`: the share of the
// samples that concerns the binary, and how much of what ran in it the
// symbolizer placed on a line (to a tenth of a percent, as the manifest has
// always had it).
void AddArtifactFigures(const Json& summary, Json& into) {
  uint64_t leaf = summary.value("binary_leaf", uint64_t{0}), with_line = summary.value("binary_with_line", uint64_t{0});
  into["binary_samples"] = summary.value("binary_samples", uint64_t{0});
  into["samples"] = summary.value("samples", uint64_t{0});
  into["line_share"] = leaf ? std::round(1000.0 * static_cast<double>(with_line) / static_cast<double>(leaf)) / 10 / 100 : 0.0;
}

// The first line of a tool's output that mentions `phrase` but that `re`
// does not read, as an unread line for `figure`; nothing if none.
void FindUnread(const std::string& text, const std::string& phrase, const std::regex& re, const std::string& figure,
                std::vector<PgoUnreadLine>* unread) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(phrase) != std::string::npos && !std::regex_search(line, re)) {
      unread->push_back({figure, Trim(line)});
      return;
    }
}

struct Stage {
  std::string name;
  std::string left_out;  // why a stage that is no more than a candidate made nothing, without failing the run
  Json j = Json::object();
  Json commands = Json::array();
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
};

// Sections a stage's build adds for syspgo's sake and the program does not
// run with. The copy of a stage's binary that is measured and installed
// (Pipeline::Ship) leaves out the ones the user's build lacks; the binary
// in DIR keeps them, for the stages that read them (order, BOLT) and for
// profiling it again. Only sections without SHF_ALLOC are looked at, so
// the loaded relocations (.rela.dyn, .rela.plt) are never matched.
struct UnshippedSection {
  const char* prefix;
  const char* what;
};
constexpr UnshippedSection kUnshipped[] = {
    {".debug_", "debug info for profiling"},
    {".rela.", "relocations kept for BOLT"},
    {".pseudo_probe", "pseudo-probes"},
};

// The probe leg's --profile-db beside the user's: ci.db -> ci.probe.db.
std::string ProbeProfileDb(const std::string& db) {
  return db.ends_with(".db") ? db.substr(0, db.size() - 3) + ".probe.db" : db + ".probe";
}

// " N times" for N > 1, for the progress lines.
std::string Times(int n) { return n > 1 ? " " + std::to_string(n) + " times" : ""; }

class Pipeline;
// One stage of the pipeline (Pipeline::Stages lists them).
struct StageRow {
  const char* name;
  bool (*wanted)(const Pipeline&);          // is it in this run: from the options alone
  std::string (*what)(const Pipeline&);     // its progress line, made when it starts
  const char* variant;                      // the variant it builds, or nullptr
  PgoStageNeeds (*needs)(const Pipeline&);  // with a variant: what that build needs
  Status (*run)(Pipeline&, Stage&);         // after the build, if any
};

class Pipeline {
 public:
  // `suffix` is added to the name of every variant this pipeline builds
  // (its directory and $SYSPGO_STAGE), `leg` to its progress lines: a leg
  // of another pipeline, which chooses no final binary of its own.
  explicit Pipeline(const PgoOptions& o, std::string suffix = "", std::string leg = "")
      : o_(o), suffix_(std::move(suffix)), leg_(std::move(leg)), freq_hz_(o.freq_hz ? o.freq_hz : o.collect_default_freq_hz),
        train_runs_(o.train_runs) {}
  PgoReport Run();

 private:
  static const std::vector<StageRow>& Stages();
  Json InputsJson() const;
  Json ToolchainJson() const;
  void Plan();
  bool RunStage(const StageRow& row);
  Status RunBody(const StageRow& row, Stage& s);
  bool Training() const { return o_.use_profile.empty(); }
  bool Evaluating() const { return !o_.eval_cmd.empty(); }
  bool Rebuilding(const std::string& r) const {
    return std::find(rebuilds_.begin(), rebuilds_.end(), r) != rebuilds_.end();
  }
  // The kind of the pipeline's own sample profile: auto's is flat, the
  // probe leg (ProbeLeg) being its other.
  std::string Kind() const { return o_.profile_kind == "auto" ? "flat" : o_.profile_kind; }
  bool WantsProbeLeg() const { return o_.profile_kind == "auto" && o_.sample && Evaluating(); }
  Status ProbeLeg(Stage& s);
  void ChooseKind();
  PgoStageNeeds TrainingBuildNeeds() const;
  PgoStageNeeds RebuildNeeds(const std::string& r) const;
  Status Profiles(Stage& s);
  Status ReuseProfiles(Stage& s);
  Status CheckRebuild(Stage& s, const std::string& r);
  Status Retrain(Stage& s);
  Status BoltLast(Stage& s);
  void Ship(Stage& s, size_t i);
  void ChooseFinal();
  void Say(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  void SayWrapped(const std::string& text);
  Stage& Begin(const std::string& name, const std::string& what);
  void End(Stage& s, const Status& st);
  Status Setup();
  Status Build(Stage& s, const std::string& variant, const PgoStageNeeds& needs);
  Status Collect(Stage& s, const std::string& db, const std::string& subdir, int k);
  Status CollectAll(Stage& s, const std::string& db, const std::string& subdir);
  // Profiles come from `syspgo merge` of every run in the DB, not one run.
  bool Merging() const { return !o_.profile_db.empty() || train_runs_ > 1; }
  Status Emit(Stage& s, const std::string& db, const std::string& kind, const std::string& out);
  Status SampleMatch(Stage& s, const std::string& binary);
  Status OrderCheck(Stage& s, const std::string& binary);
  Status Bolt(Stage& s, const std::string& input, const std::string& fdata, bool sample_built);
  Status Eval(Stage& s);
  Status EvalRun(size_t i, const std::string& bin, PgoEvalVariant& v, std::string* output);
  Status CountInstructions(size_t i, const std::string& bin, PgoEvalVariant& v);
  void JudgeEval(std::vector<PgoEvalVariant>& v) const;
  void SayEval(const std::vector<PgoEvalVariant>& v);
  Json EvalJson(const PgoEvalVariant& v) const;
  std::string MetricName() const { return o_.eval_metric == "instructions" ? "instructions" : "wall time"; }
  Status CheckProfileQuality(Stage& s);
  bool MoreSamples(const PgoProfileQuality& q);
  Status Shell(Stage& s, const std::string& cmd, const std::map<std::string, std::string>& env, const std::string& log,
               const std::string& what);
  Status Tool(Stage& s, const std::vector<std::string>& argv, const std::string& log, const std::string& what);
  void WarnUnread(const std::string& tool, const std::string& log, const std::vector<PgoUnreadLine>& unread);
  void Finish();
  // DIR/d, made if need be. One that cannot be made (a link there to where
  // the user cannot write or look) is kept in sub_error_, which ends the
  // stage that asked for it with a message naming it.
  std::string Sub(const std::string& d) {
    std::string p = dir_ + "/" + d;
    std::error_code ec;
    fs::create_directories(p, ec);
    if (ec && sub_error_.ok()) sub_error_ = MakeError("cannot create the directory " + p + ": " + ec.message(), ec.value());
    return p;
  }

  const PgoOptions& o_;
  std::string suffix_, leg_;
  PgoReport rep_;
  Json manifest_ = Json::object();
  Json stages_ = Json::array();
  Json profile_summary_ = Json::object();  // the profile figures CI watches, copied from the stages
  std::vector<Stage> done_;
  std::string dir_, binary_, name_, cc_, cxx_, bolt_, syspgo_, db_;
  std::string sample_prof_, order_file_, fdata_;
  std::string last_build_id_;
  // The rebuilds: with --eval one per step (sample, then sample+order), so
  // each step's gain is measured; without, only the last.
  std::vector<std::string> rebuilds_;
  // "the sample stage did not help ...": warned by ChooseFinal, unless the
  // final binary is the user's build, whose one warning names every stage.
  std::vector<std::string> unhelpful_;
  std::vector<std::pair<std::string, std::string>> variants_;  // name, binary copy in DIR
  // Per variant, once Ship made it: the copy measured and installed, and
  // the sections (kUnshipped) it leaves out.
  std::vector<std::string> shipped_;
  std::vector<std::vector<std::string>> left_out_;
  Status sub_error_;  // the first directory Sub could not make
  int step_ = 0, steps_ = 0;
  // The training's rate and runs: --freq (else collect's default, given to
  // collect all the same, so the manifest names the rate the samples were
  // taken at) and --train-runs, raised when the profile they gave was too
  // thin (CheckProfileQuality).
  uint32_t freq_hz_ = 0;
  int train_runs_ = 1;
  Json quality_ = Json::array();  // every profile-quality measurement, in order
  Json kind_ = Json::object();     // the profile kind: requested, chosen, and with auto why
  std::string probe_left_out_;     // why the probe leg made no stage ("" if it did)
};

void Pipeline::Say(const char* fmt, ...) {
  if (!o_.progress) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(o_.progress, "syspgo pgo: %s", leg_.c_str());
  vfprintf(o_.progress, fmt, ap);
  fprintf(o_.progress, "\n");
  fflush(o_.progress);
  va_end(ap);
}

// A progress line too long for 120 columns, broken at spaces, the rest
// indented under it.
void Pipeline::SayWrapped(const std::string& text) {
  const size_t width = Table::kTextWidth - (sizeof("syspgo pgo: ") - 1) - leg_.size();
  size_t lead = std::min(text.find_first_not_of(' '), text.size());
  for (const std::string& line : Split(text.substr(0, lead) + WrapWords(text.substr(lead), lead + 6, width), '\n'))
    Say("%s", line.c_str());
}

Stage& Pipeline::Begin(const std::string& name, const std::string& what) {
  done_.emplace_back();
  Stage& s = done_.back();
  s.name = name;
  s.j["name"] = name;
  Say("[%d/%d] %s: %s", ++step_, steps_, name.c_str(), what.c_str());
  return s;
}

void Pipeline::End(Stage& s, const Status& st) {
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - s.t0).count();
  s.j["status"] = !st.ok() ? "failed" : s.left_out.empty() ? "ok" : "left out";
  if (st.ok() && !s.left_out.empty()) {
    s.j["left_out"] = s.left_out;
    rep_.warnings.push_back("the " + s.name + " stage is left out: " + s.left_out);
    SayWrapped("      left out: " + s.left_out);
  }
  s.j["seconds"] = secs;
  s.j["commands"] = s.commands;
  if (!st.ok()) {
    s.j["error"] = st.error().message;
    rep_.failed_stage = s.name;
    rep_.error = st.error().message;
    // A leg's failure is said by the pipeline it is part of, in one line.
    if (leg_.empty()) Say("stage '%s' FAILED after %.1f s: %s", s.name.c_str(), secs, st.error().message.c_str());
  } else {
    Say("      %s done in %.1f s", s.name.c_str(), secs);
  }
  stages_.push_back(s.j);
}

Status Pipeline::Shell(Stage& s, const std::string& cmd, const std::map<std::string, std::string>& env,
                       const std::string& log, const std::string& what) {
  s.commands.push_back(cmd);
  auto r = RunLogged({"/bin/sh", "-c", cmd}, env, log);
  if (!r) return r.error();
  if (r->status != 0) {
    std::string tail = Tail(ReadFileOrEmpty(log), 15);
    return MakeError(what + " '" + cmd + "' exited with status " + std::to_string(r->status) + " (full output in " + log +
                     "); its last lines:\n" + tail);
  }
  return {};
}

Status Pipeline::Tool(Stage& s, const std::vector<std::string>& argv, const std::string& log, const std::string& what) {
  s.commands.push_back(JoinShell(argv));
  auto r = RunLogged(argv, {}, log);
  if (!r) return r.error();
  if (r->status != 0)
    return MakeError(what + " failed with status " + std::to_string(r->status) + ": " + JoinShell(argv) + "\n" +
                     Tail(ReadFileOrEmpty(log), 15) + "\n(full output in " + log + ")");
  return {};
}

// A warning per line of `tool`'s output in `log` that syspgo could not read:
// the line, and the figure of the manifest that goes without it.
void Pipeline::WarnUnread(const std::string& tool, const std::string& log, const std::vector<PgoUnreadLine>& unread) {
  for (const PgoUnreadLine& u : unread)
    rep_.warnings.push_back(tool + "'s output (" + log + ") has a line syspgo cannot read, so " + u.figure +
                            " leaves it out: " + u.line);
}

Status Pipeline::Setup() {
  if (o_.build_cmd.empty()) return MakeError("--build 'CMD' is needed: the command that builds the program");
  if (o_.binary.empty()) return MakeError("--binary PATH is needed: the program the build produces");
  if (o_.train_cmd.empty() && o_.use_profile.empty())
    return MakeError("--train 'CMD' is needed (the command that exercises the program while it is profiled), "
                     "unless --use-profile DIR reuses the profiles of an earlier run");
  if (!o_.sample && !o_.order && !o_.bolt) return MakeError("--stages is empty: give one or more of sample, order, bolt");
  if (o_.runs < 1) return MakeError("--runs must be at least 1");
  std::error_code ec;
  fs::create_directories(o_.dir, ec);
  if (ec) return MakeError("cannot create the pgo directory " + o_.dir + ": " + ec.message());
  dir_ = fs::canonical(o_.dir, ec).string();
  if (ec) return MakeError("cannot resolve the pgo directory " + o_.dir + ": " + ec.message());
  binary_ = fs::path(Absolute(o_.binary)).lexically_normal().string();
  if (binary_.empty()) return MakeError("cannot make the --binary path " + o_.binary + " absolute: the working "
                                        "directory is gone; run syspgo pgo from a directory that exists");
  name_ = fs::path(binary_).filename().string();
  cc_ = Which(o_.cc);
  cxx_ = Which(o_.cxx);
  if (cc_.empty() || cxx_.empty())
    return MakeError("cannot find " + (cc_.empty() ? o_.cc : o_.cxx) + " on PATH; install clang-19 (apt-get install clang-19 lld-19)");
  if (o_.bolt && !MayAccess(o_.llvm_bolt, X_OK))
    return MakeError("cannot run " + o_.llvm_bolt + "; install bolt-19 (apt-get install bolt-19) or leave bolt out of --stages");
  bolt_ = o_.llvm_bolt;
  syspgo_ = o_.syspgo;
  if (!o_.use_profile.empty()) {
    std::string up = o_.use_profile + "/profile";
    if (o_.sample && !MayAccess(up + "/sample.prof", R_OK))
      return MakeError("--use-profile " + o_.use_profile + " has no profile/sample.prof; give a directory an earlier "
                       "'syspgo pgo --dir' wrote, or leave sample out of --stages");
  }
  fs::create_directories(dir_ + "/bin", ec);
  if (ec) return MakeError("cannot create the directory " + dir_ + "/bin: " + ec.message());
  return {};
}

Status Pipeline::Build(Stage& s, const std::string& stage_variant, const PgoStageNeeds& needs) {
  const std::string &profile = needs.sample_profile, &order = needs.order_file;
  const std::string variant = stage_variant + suffix_;
  std::string sub = Sub(variant);
  std::string log = sub + "/build.log", calls = sub + "/compiler-calls.log";
  unlink(log.c_str());
  unlink(calls.c_str());
  auto cflags = PgoCompileFlags(needs);
  auto lflags = PgoLinkFlags(needs);
  SYSPGO_TRY(WriteCompilerWrappers(dir_ + "/bin", variant, cc_, cxx_, cflags, lflags, calls));
  const char* path = getenv("PATH");
  std::map<std::string, std::string> env = {
      {"CC", dir_ + "/bin/cc"},
      {"CXX", dir_ + "/bin/c++"},
      {"PATH", dir_ + "/bin:" + (path ? path : "/usr/bin:/bin")},
      {"SYSPGO_STAGE", variant},
      {"SYSPGO_CFLAGS", JoinShell(cflags)},
      {"SYSPGO_LDFLAGS", JoinShell(lflags)},
  };
  s.j["compile_flags"] = Json(cflags);
  s.j["link_flags"] = Json(lflags);
  if (!o_.clean_cmd.empty()) SYSPGO_TRY(Shell(s, o_.clean_cmd, env, log, "the clean command"));
  SYSPGO_TRY(Shell(s, o_.build_cmd, env, log, "the build command"));
  if (!MayAccess(binary_, X_OK))
    return MakeError("the build finished but " + binary_ + " does not exist or is not executable; check --binary "
                     "(relative paths are from the directory syspgo pgo runs in)");
  auto lines = NonEmptyLines(calls);
  int with_profile = 0, links = 0, with_order = 0;
  for (auto& l : lines) {
    with_profile += !profile.empty() && l.find("-fprofile-sample-use=") != std::string::npos;
    links += l.rfind("link ", 0) == 0;
    with_order += !order.empty() && l.rfind("link ", 0) == 0 && l.find("--symbol-ordering-file=") != std::string::npos;
  }
  s.j["compiler_calls"] = static_cast<int64_t>(lines.size());
  s.j["link_calls"] = links;
  if (!profile.empty()) s.j["compiler_calls_with_profile"] = with_profile;
  if (lines.empty())
    return MakeError("the build ran no compiler through syspgo's wrappers (" + dir_ + "/bin/cc, on PATH as cc, gcc, "
                     "clang, c++, g++, clang++): it used a compiler of its own choosing, or did not recompile. "
                     "Make --build rebuild from scratch with $CC/$CXX (a CMake build directory keeps the compiler "
                     "of its first configure: use a fresh one, e.g. -B build-$SYSPGO_STAGE), or add --clean 'CMD'");
  std::string copy = sub + "/" + name_;
  SYSPGO_TRY(InstallFile(binary_, copy));
  auto id = ReadBuildId(copy);
  if (!id) return id.error();
  s.j["binary"] = copy;
  s.j["build_id"] = *id;
  s.j["log"] = log;
  if (!last_build_id_.empty() && *id == last_build_id_) {
    // What this stage adds over the one before: the order file at the link
    // (order), else the profile at the compiles (sample). If it reached the
    // calls, the same binary means it changed nothing, which happens: the
    // linker's own layout can already be the hot-first order of a small
    // program. If it did not, the build skipped the work.
    bool reached = !order.empty() ? with_order > 0 : with_profile > 0;
    if (!reached)
      return MakeError("the " + variant + " build produced the same binary (build-id " + *id + ") as the stage before: "
                       "the build did not recompile and relink with the new flags. Make --build rebuild from scratch "
                       "(e.g. 'make clean all', or a fresh CMake build directory per $SYSPGO_STAGE) or add --clean 'CMD'");
    rep_.warnings.push_back("the " + variant + " build is the same binary as the stage before (build-id " + *id + "): " +
                            (!order.empty() ? "the linker already laid the functions out in the symbol order"
                                            : "the sample profile changed no code") +
                            ", so this stage changes nothing");
    Say("      %s", rep_.warnings.back().c_str());
    s.j["same_as_previous"] = true;
  }
  last_build_id_ = *id;
  variants_.emplace_back(variant, copy);
  return {};
}

Status Pipeline::Collect(Stage& s, const std::string& db, const std::string& subdir, int k) {
  std::string base = Sub(subdir) + (k == 1 ? std::string("/collect") : "/collect-" + std::to_string(k));
  std::string log = base + ".log", summary = base + ".json";
  unlink(log.c_str());
  unlink(summary.c_str());
  std::vector<std::string> argv = {syspgo_, "collect", "-o", db, "--json", summary, "--probes", o_.probes};
  argv.insert(argv.end(), {"--freq", std::to_string(freq_hz_), "--", "/bin/sh", "-c", o_.train_cmd});
  s.commands.push_back(JoinShell(argv));
  auto r = RunLogged(argv, {}, log, RunAs::kRoot);
  if (!r) return r.error();
  std::string text = ReadFileOrEmpty(log);
  if (r->status != 0)
    return MakeError("the training command under 'syspgo collect' exited with status " + std::to_string(r->status) +
                     " (output in " + log + "):\n" + Tail(text, 15));
  // collect --json: the run's figures for machines (its lines for people may change).
  Json run = Json::parse(ReadFileOrEmpty(summary), nullptr, false);
  if (run.is_discarded() || !run.is_object())
    return MakeError("'syspgo collect' wrote no readable summary to " + summary + " (output in " + log + ")");
  if (run.value("events_lost", uint64_t{0}) > 0)
    rep_.warnings.push_back("the " + subdir + " collection lost events (see " + log + "); the profile is thinner than it could be");
  s.j["db"] = db;
  s.j["runs_collected"] = static_cast<int64_t>(k);
  if (k > 1) return {};  // the stage's figures are its first run's
  s.j["log"] = log;
  s.j["train_seconds"] = r->seconds;
  s.j["run"] = run.value("run_id", int64_t{0});
  s.j["events"] = run.value("events", uint64_t{0});
  return {};
}

// The training runs of one collection stage, each into `db` (--train-runs):
// more samples where one run of a short training command covers too little
// of the code. On the bench's SQLite they did not steady the result: three
// merged runs' profiles spread as widely as single runs' (docs/profiles.md).
Status Pipeline::CollectAll(Stage& s, const std::string& db, const std::string& subdir) {
  for (int k = 1; k <= train_runs_; ++k) {
    if (train_runs_ > 1) Say("      training run %d of %d", k, train_runs_);
    SYSPGO_TRY(Collect(s, db, subdir, k));
  }
  return {};
}

// One artifact of `kind` for the binary at --binary, from `db` (every run of
// it through `syspgo merge` when runs accumulate there or --train-runs made
// several, else its newest).
Status Pipeline::Emit(Stage& s, const std::string& db, const std::string& kind, const std::string& out) {
  std::string log = dir_ + "/profile/" + kind + ".log", summary_path = dir_ + "/profile/" + kind + ".json";
  unlink(log.c_str());
  unlink(summary_path.c_str());
  std::vector<std::string> argv;
  if (Merging())
    argv = {syspgo_, "merge", db + ":all", "--normalize", "--binary", binary_, "--emit", kind, "-o", out};
  else
    argv = {syspgo_, "optimize", db, "--binary", binary_, "--emit", kind, "-o", out};
  argv.insert(argv.end(), {"--json", summary_path});
  if (kind == "sample-profile")
    argv.insert(argv.end(), {"--sample-counts", o_.sample_counts, "--profile-kind", Kind()});
  SYSPGO_TRY(Tool(s, argv, log, "emitting the " + kind + " profile"));
  // --json: the figures for machines (the line for people may change).
  Json summary = Json::parse(ReadFileOrEmpty(summary_path), nullptr, false);
  if (summary.is_discarded() || !summary.is_object())
    return MakeError("'syspgo " + argv[1] + "' wrote no readable summary to " + summary_path + " (output in " + log + ")");
  Json stats = Json::object();
  stats["file"] = out;
  AddArtifactFigures(summary, stats);
  // The run's figures, from the first artifact made from it.
  if (kind == "sample-profile" || (kind == "fdata" && !o_.sample)) AddArtifactFigures(summary, profile_summary_);
  if (kind == "sample-profile") {
    auto fns = SampleProfileFunctions(out);
    uint64_t total = 0;
    for (auto& [n, c] : fns) total += c;
    stats["functions"] = static_cast<uint64_t>(fns.size());
    stats["total_samples"] = total;
  } else if (kind == "order") {
    stats["symbols"] = static_cast<uint64_t>(NonEmptyLines(out).size());
  }
  s.j[kind] = stats;
  return {};
}

// How much of the sample profile the rebuild used: functions still defined
// in the binary, minus the samples clang's coverage check says it could not
// apply (lines that moved or vanished).
Status Pipeline::SampleMatch(Stage& s, const std::string& binary) {
  auto fns = SampleProfileFunctions(sample_prof_);
  auto syms = Symbols(binary);
  uint64_t total = 0, present = 0;
  size_t present_fns = 0;
  for (auto& [n, c] : fns) {
    total += c;
    if (syms.count(n)) present += c, ++present_fns;
  }
  std::string build_log = s.j.value("log", "");
  PgoSampleCoverage cov = ReadSampleCoverage(ReadFileOrEmpty(build_log));
  WarnUnread("clang", build_log, cov.unread);
  uint64_t lost = cov.available - cov.applied;
  double share = total ? std::max(0.0, static_cast<double>(present) - static_cast<double>(lost)) / static_cast<double>(total) : 0;
  Json m = Json::object();
  m["profile_functions"] = static_cast<uint64_t>(fns.size());
  m["functions_in_binary"] = static_cast<uint64_t>(present_fns);
  m["profile_samples"] = total;
  m["samples_in_functions_found"] = present;
  m["samples_not_applied"] = lost;
  m["partially_applied_functions"] = cov.functions;
  m["match_share"] = share;
  s.j["profile_match"] = m;
  profile_summary_["profile_functions"] = static_cast<uint64_t>(fns.size());
  profile_summary_["functions_in_binary"] = static_cast<uint64_t>(present_fns);
  profile_summary_["match_share"] = share;
  Say("      sample profile: %zu of %zu functions found, %.1f%% of its samples match the code", present_fns, fns.size(),
      100 * share);
  if (total && share < 0.5)
    rep_.warnings.push_back("only " + std::to_string(static_cast<int>(100 * share)) +
                            "% of the sample profile still matches the code (functions renamed or removed, lines "
                            "moved): it no longer helps much; profile the current sources again");
  return {};
}

// Whether the linker honoured the order: symbols found, and the share of
// neighbouring pairs in the file that are also in increasing address order.
Status Pipeline::OrderCheck(Stage& s, const std::string& binary) {
  auto order = NonEmptyLines(order_file_);
  auto syms = Symbols(binary);
  std::vector<uint64_t> addrs;
  for (auto& n : order)
    if (syms.count(n)) addrs.push_back(syms[n]);
  size_t increasing = 0;
  for (size_t k = 1; k < addrs.size(); ++k) increasing += addrs[k] > addrs[k - 1];
  Json m = Json::object();
  m["symbols"] = static_cast<uint64_t>(order.size());
  m["symbols_in_binary"] = static_cast<uint64_t>(addrs.size());
  m["in_order_share"] = addrs.size() > 1 ? static_cast<double>(increasing) / static_cast<double>(addrs.size() - 1) : 1.0;
  s.j["order_match"] = m;
  profile_summary_["order_symbols_in_binary"] = static_cast<uint64_t>(addrs.size());
  if (!order.empty() && addrs.size() * 2 < order.size())
    rep_.warnings.push_back("only " + std::to_string(addrs.size()) + " of the " + std::to_string(order.size()) +
                            " symbols in the ordering file are in the binary: the order no longer fits the code; profile again");
  return {};
}

Status Pipeline::Bolt(Stage& s, const std::string& input, const std::string& fdata, bool sample_built) {
  std::string sub = Sub("bolt");
  std::string out = sub + "/" + name_, log = sub + "/bolt.log";
  unlink(log.c_str());
  // -v=1: BOLT then names the functions it could not optimize, and why.
  std::vector<std::string> argv = {bolt_, input, "-o", out, "-data", fdata, "-v=1"};
  const std::vector<std::string>& opts = !o_.bolt_args.empty() ? o_.bolt_args
                                        : sample_built         ? kBoltOptionsAfterSampleProfile
                                                               : kDefaultBoltOptions;
  argv.insert(argv.end(), opts.begin(), opts.end());
  argv.insert(argv.end(), o_.bolt_extra.begin(), o_.bolt_extra.end());
  Status st = Tool(s, argv, log, "llvm-bolt");
  if (!st.ok()) {
    std::string msg = st.error().message;
    if (msg.find("unable to get new address") != std::string::npos)
      msg += "\nBOLT 19 cannot rewrite computed-goto dispatch in a PIE: build the program with -no-pie, or skip the "
             "function with --bolt-arg -skip-funcs=NAME/1";
    return MakeError(msg);
  }
  std::string text = ReadFileOrEmpty(log);
  std::set<std::string> fns;
  uint64_t samples = 0;
  std::istringstream in(ReadFileOrEmpty(fdata));
  for (std::string line; std::getline(in, line);) {
    auto f = Split(line, ' ');
    if (f.size() == 4 && f[0] != "0" && f[0] != "no_lbr") fns.insert(f[1]), samples += strtoull(f[3].c_str(), nullptr, 10);
  }
  Json b = Json::object();
  b["fdata"] = fdata;
  b["profile_functions"] = static_cast<uint64_t>(fns.size());
  b["profile_samples"] = samples;
  PgoBoltReport rb = ReadBoltReport(text);
  WarnUnread("llvm-bolt", log, rb.unread);
  if (rb.has_profile_line) {
    uint64_t with = rb.functions_with_profile;
    b["functions_with_profile"] = with;
    b["functions_in_binary"] = rb.functions_in_binary;
    double share = fns.empty() ? 0 : std::min(1.0, static_cast<double>(with) / static_cast<double>(fns.size()));
    b["matched_share"] = share;
    profile_summary_["bolt_matched_share"] = share;
    Say("      BOLT matched %llu of the %zu profiled functions (%.1f%%)", static_cast<unsigned long long>(with), fns.size(),
        100 * share);
    if (!fns.empty() && share < 0.5 && BoltLeftOutReason(rb, fns.size()).empty())
      rep_.warnings.push_back("BOLT found only " + std::to_string(static_cast<int>(100 * share)) +
                              "% of the fdata profile's functions in the binary: the profile is for other code");
  } else {
    rep_.warnings.push_back("BOLT's output (" + log + ") did not say how many functions have a profile");
  }
  b["stale_functions"] = rb.stale_functions;
  b["stale_share"] = rb.stale_share;
  s.j["bolt"] = b;
  profile_summary_["bolt_profile_functions"] = static_cast<uint64_t>(fns.size());
  profile_summary_["bolt_stale_share"] = rb.stale_share;
  s.j["binary"] = out;
  s.j["log"] = log;
  auto id = ReadBuildId(out);
  if (id) s.j["build_id"] = *id;
  std::string left_out = BoltLeftOutReason(rb, fns.size());
  if (!left_out.empty()) {
    // Nothing of the profile is in it: not a stage to evaluate or ship.
    s.j["bolt"]["left_out"] = left_out;
    rep_.warnings.push_back("the bolt stage is left out: " + left_out + " (" + log + ")");
    SayWrapped("      left out: " + left_out);
    return {};
  }
  variants_.emplace_back("bolt", out);
  return {};
}

// One run of the evaluation command on variant `i`, installed at --binary
// from `bin`: its wall time, and its CPU time (user + system of the command
// and everything it waited for) from the growth of RUSAGE_CHILDREN, which
// counts every child this process has reaped; the pipeline runs one at a time.
Status Pipeline::EvalRun(size_t i, const std::string& bin, PgoEvalVariant& v, std::string* output) {
  std::string sub = dir_ + "/eval", out = sub + "/stdout.tmp", log = sub + "/eval.log";
  SYSPGO_TRY(InstallFile(bin, binary_));
  unlink(out.c_str());
  ProcessSpec run;
  run.argv = {"/bin/sh", "-c", o_.eval_cmd};
  run.out = ProcessOutput::File(out);
  run.err = ProcessOutput::File(log);
  auto cpu = [] {
    rusage u{};
    getrusage(RUSAGE_CHILDREN, &u);
    auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
    return sec(u.ru_utime) + sec(u.ru_stime);
  };
  double cpu0 = cpu();
  auto r = RunChild(std::move(run));
  if (!r) return r.error();
  if (r->status != 0)
    return MakeError("the evaluation command '" + o_.eval_cmd + "' exited with status " + std::to_string(r->status) +
                     " on the " + variants_[i].first + " binary (stderr in " + log + ")");
  v.seconds.push_back(r->seconds);
  v.cpu_seconds.push_back(cpu() - cpu0);
  *output = ReadFileOrEmpty(out);
  unlink(out.c_str());
  return {};
}

// The instructions the program at --binary executes in one run of the
// evaluation command, counted by cachegrind (no PMU needed; the same count
// every run, so short or noisy evaluations can be decided). Only the
// processes that are the program count, not the shell around it: each
// writes its own cachegrind file, named by its command line. `bin` is a
// copy without debug sections: valgrind 3.19 cannot read clang 19's DWARF 5.
Status Pipeline::CountInstructions(size_t i, const std::string& bin, PgoEvalVariant& v) {
  std::string sub = dir_ + "/eval", log = sub + "/cachegrind.log", prefix = "cachegrind.out.";
  SYSPGO_TRY(InstallFile(bin, binary_));
  unlink(log.c_str());
  std::vector<std::string> argv = {"valgrind", "--tool=cachegrind", "--cache-sim=no", "--trace-children=yes",
                                   "--cachegrind-out-file=" + sub + "/" + prefix + "%p", "/bin/sh", "-c", o_.eval_cmd};
  ProcessSpec run;
  run.argv = argv;
  run.out = ProcessOutput::Discard();
  run.err = ProcessOutput::File(log);
  auto r = RunChild(std::move(run));
  if (!r) return r.error();
  if (r->status != 0)
    return MakeError("the evaluation command under cachegrind (" + JoinShell(argv) + ") exited with status " +
                     std::to_string(r->status) + " on the " + variants_[i].first + " binary (output in " + log +
                     "); install valgrind (apt-get install valgrind) or use --eval-metric wall");
  double count = 0;
  bool seen = false;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(sub, ec)) {
    std::string f = e.path().filename().string();
    if (f.rfind(prefix, 0) != 0) continue;
    std::istringstream in(ReadFileOrEmpty(e.path().string()));
    bool ours = false;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("cmd: ", 0) == 0) {
        std::string argv0 = Split(Trim(line.substr(5)), ' ')[0];
        ours = fs::path(argv0).filename().string() == name_;
      } else if (ours && line.rfind("summary: ", 0) == 0) {
        count += strtod(line.c_str() + 9, nullptr);
        seen = true;
      }
    }
    fs::remove(e.path(), ec);
  }
  if (!seen)
    return MakeError("cachegrind saw no run of " + name_ + " in the evaluation command '" + o_.eval_cmd + "' (output in " +
                     log + "): the command must run the program at --binary");
  v.instructions.push_back(count);
  return {};
}

// Whether the instructions of `x` need no more counting: its last two
// rounds agree to within a hundredth of a percent (a program that does the
// same work each run). Counting is the slow part of a round, under
// cachegrind; the rounds that follow still time every variant, so wall
// and CPU time get as many rounds as the decision needs.
bool InstructionsSettled(const PgoEvalVariant& x) {
  size_t n = x.instructions.size();
  if (n < 2) return false;
  double a = x.instructions[n - 2], b = x.instructions[n - 1];
  return std::fabs(a - b) <= 1e-4 * std::max(a, b);
}

// Every variant's intervals on the deciding metric: against the user's
// build (v[0]) and against the profiling build.
void Pipeline::JudgeEval(std::vector<PgoEvalVariant>& v) const {
  size_t base = v.size();
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].name == kPgoProfilingVariant) base = i;
  for (auto& x : v) {
    x.values = o_.eval_metric == "instructions" ? x.instructions : x.seconds;
    if (!x.failed.empty()) continue;
    x.vs_plain = PairedSpeedup(v[0].values, x.values, MeasureOf(MetricName()));
    x.wall_vs_plain = PairedSpeedup(v[0].seconds, x.seconds);
    x.cpu_vs_plain = PairedSpeedup(v[0].cpu_seconds, x.cpu_seconds);
  }
  // (The probe leg's stage has a profiling build of its own, not evaluated.)
  if (base < v.size() && v[base].failed.empty())
    for (auto& x : v)
      if (x.failed.empty() && x.name != kSampleProbeStage)
        x.vs_base = PairedSpeedup(v[base].values, x.values, MeasureOf(MetricName()));
}

std::string MedianText(const std::vector<double>& xs, const char* fmt, double scale) {
  if (xs.empty()) return "-";
  char b[48];
  snprintf(b, sizeof b, fmt, Median(xs) / scale);
  return b;
}

void Pipeline::SayEval(const std::vector<PgoEvalVariant>& v) {
  bool instr = o_.eval_metric == "instructions";
  for (const PgoEvalVariant& x : v) {
    if (!x.failed.empty()) {
      Say("      %-7s failed the evaluation command: left out", x.name.c_str());
      continue;
    }
    std::string head = "wall " + MedianText(x.seconds, "%.3f s", 1) + ", cpu " + MedianText(x.cpu_seconds, "%.3f s", 1);
    if (instr) head += ", " + MedianText(x.instructions, "%.1fM instructions", 1e6);
    Say("      %-7s %s", x.name.c_str(), head.c_str());
    if (x.name == kPgoPlainVariant) continue;
    // Every line names its metric: the deciding one first.
    const char* metric = instr ? "instructions" : "wall";
    const std::string pad(16, ' ');
    SayWrapped(pad + "vs your build: " + metric + " " + DescribeSpeedup(x.vs_plain));
    if (instr) SayWrapped(pad + "vs your build: wall " + DescribeSpeedup(x.wall_vs_plain));
    SayWrapped(pad + "vs your build: cpu " + DescribeSpeedup(x.cpu_vs_plain));
    if (x.name != kPgoProfilingVariant && x.vs_base.ratio > 0)
      SayWrapped(pad + "vs the profiling build: " + metric + " " + DescribeSpeedup(x.vs_base));
  }
}

Json IntervalJson(const PgoInterval& iv) {
  Json j = Json::object();
  j["speedup"] = iv.ratio;
  j["low"] = iv.low;
  j["high"] = iv.high;
  j["same_every_round"] = iv.same_every_round;  // then low and high are the speedup: no interval
  j["one_timed_round"] = iv.one_timed_round;    // then low and high are 0: no interval
  j["verdict"] = VerdictName(Judge(iv));
  return j;
}

Json Pipeline::EvalJson(const PgoEvalVariant& x) const {
  auto arr = [](const std::vector<double>& xs) {
    Json a = Json::array();
    for (double d : xs) a.push_back(d);
    return a;
  };
  Json e = Json::object();
  e["name"] = x.name;
  e["runs_s"] = arr(x.seconds);
  e["cpu_s"] = arr(x.cpu_seconds);
  if (!x.instructions.empty()) e["instructions"] = arr(x.instructions);
  e["vs_plain"] = IntervalJson(x.vs_plain);
  e["vs_plain"]["metric"] = MetricName();
  if (!x.instructions.empty()) e["vs_plain_wall"] = IntervalJson(x.wall_vs_plain);
  e["vs_plain_cpu"] = IntervalJson(x.cpu_vs_plain);
  if (x.vs_base.ratio > 0) e["vs_profiling_build"] = IntervalJson(x.vs_base);
  e["output_differs"] = static_cast<bool>(x.output_differs);
  e["failed"] = x.failed.empty() ? Json() : Json(x.failed);
  return e;
}

// Rounds of the evaluation command, every variant once per round in an
// order rotated each round (so drift and the cost of going first fall on
// all alike): --runs of them, then one more at a time while some stage's
// interval against the user's build still straddles the threshold, up to
// --max-runs and while within the time budget.
Status Pipeline::Eval(Stage& s) {
  std::string sub = Sub("eval");
  unlink((sub + "/eval.log").c_str());
  size_t n = variants_.size();
  bool instr = o_.eval_metric == "instructions";
  std::vector<PgoEvalVariant> v(n);
  std::vector<std::string> bins(n), first_out(n);
  std::vector<bool> stable(n, true);
  for (size_t i = 0; i < n; ++i) {
    v[i].name = variants_[i].first;
    // What is measured is what would be installed.
    Ship(s, i);
    bins[i] = shipped_[i];
    if (!instr) continue;
    // Valgrind cannot read all of clang-19's DWARF 5; instructions do not
    // depend on debug info, which a user's own build may carry.
    bins[i] = sub + "/" + name_ + "." + v[i].name + ".strip";
    // llvm-objcopy, not GNU strip: strip breaks the segments of a BOLTed binary.
    SYSPGO_TRY(Tool(s, {"llvm-objcopy-19", "--strip-debug", shipped_[i], bins[i]}, sub + "/strip.log",
                    "llvm-objcopy-19 --strip-debug"));
  }
  s.commands.push_back(o_.eval_cmd);
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  int round = 0;
  for (; round < o_.max_runs; ++round) {
    if (round >= o_.runs) {
      JudgeEval(v);
      if (!EvalUndecided(v) || elapsed() > o_.eval_budget_s) break;
      if (round == o_.runs)  // said once; the rounds it took are in the verdicts
        Say("      undecided after %d rounds: more, one at a time (at most %d, %.0f s)", round, o_.max_runs,
            o_.eval_budget_s);
    }
    for (size_t k = 0; k < n; ++k) {
      size_t i = (k + static_cast<size_t>(round)) % n;
      if (!v[i].failed.empty()) continue;
      std::string text;
      Status st = EvalRun(i, bins[i], v[i], &text);
      if (st.ok() && instr && !InstructionsSettled(v[i])) st = CountInstructions(i, bins[i], v[i]);
      // The user's build must run the command; a stage that fails it
      // (a crash, a wrong exit) is left out and never chosen.
      if (!st.ok() && i == 0) return st;
      if (!st.ok()) {
        v[i].failed = st.error().message;
        rep_.warnings.push_back("the " + v[i].name + " binary failed the evaluation command and is left out: " +
                                v[i].failed);
        Say("      %s failed the evaluation command: left out", v[i].name.c_str());
        continue;
      }
      if (round == 0) first_out[i] = text;
      else if (text != first_out[i]) stable[i] = false;
    }
    if (round < o_.runs) Say("      eval round %d/%d", round + 1, o_.runs);
  }
  JudgeEval(v);
  for (size_t i = 0; i < n; ++i)
    // Only a program whose plain build prints the same every time can be
    // held to the same output.
    v[i].output_differs = v[i].failed.empty() && stable[0] && stable[i] && first_out[i] != first_out[0];
  rep_.eval = v;
  SayEval(v);
  Json arr = Json::array();
  for (const PgoEvalVariant& x : v) {
    arr.push_back(EvalJson(x));
    if (x.output_differs)
      rep_.warnings.push_back("the " + x.name + " binary printed something else than your build for the evaluation "
                              "command: check it before using it");
    if (x.name == kPgoPlainVariant || x.name == kPgoProfilingVariant || !x.failed.empty()) continue;
    PgoVerdict verdict = Judge(x.vs_plain);
    if (verdict != PgoVerdict::kFaster) unhelpful_.push_back(UnhelpfulStageText(x, MetricName()));
  }
  s.j["metric"] = MetricName();
  s.j["runs"] = round;
  s.j["variants"] = arr;
  return {};
}

// Measures the sample profile just emitted, prints and keeps its quality
// line; when it is too thin and the training is this run's own, trains
// again faster or longer and emits the profiles again, a bounded number of
// times, then warns naming what to change.
Status Pipeline::CheckProfileQuality(Stage& s) {
  constexpr int kMaxRetrain = 2;
  for (int attempt = 0;; ++attempt) {
    PgoProfileQuality q = MeasureProfileQuality(ReadFileOrEmpty(sample_prof_),
                                                profile_summary_.value("binary_samples", uint64_t{0}),
                                                profile_summary_.value("samples", uint64_t{0}));
    Json j = Json::object();
    j["line"] = q.Line(name_);
    j["binary_samples"] = q.binary_samples;
    j["run_samples"] = q.run_samples;
    j["run_share"] = q.run_share;
    Json hot = Json::array();
    for (auto& [f, share] : q.hot) hot.push_back(Json::array({f, share}));
    j["hot_functions"] = hot;
    j["halves_agreement"] = q.halves_agreement;
    j["thin"] = q.thin;
    j["freq_hz"] = freq_hz_;
    j["train_runs"] = train_runs_;
    quality_.push_back(j);
    rep_.profile_quality = q;
    SayWrapped("      " + q.Line(name_));
    if (!q.thin) return {};
    bool ours = o_.use_profile.empty() && o_.profile_db.empty();
    if (attempt >= kMaxRetrain || !ours || !MoreSamples(q)) {
      rep_.warnings.push_back(q.advice + " [" + q.Line(name_) + "]");
      Say("      WARNING: %s", q.advice.c_str());
      return {};
    }
    Say("      too thin: training again at %u Hz, %d run(s)", freq_hz_, train_runs_);
    Stage again;
    again.name = "train";
    unlink(db_.c_str());
    SYSPGO_TRY(CollectAll(again, db_, "train"));
    for (auto& c : again.commands) s.commands.push_back(c);
    SYSPGO_TRY(Emit(s, db_, "sample-profile", sample_prof_));
    if (o_.order) SYSPGO_TRY(Emit(s, db_, "order", order_file_));
  }
}

// Raises the sampling rate, or once it is at collect's ceiling the number
// of training runs, by what the profile lacks: samples scale with both, and
// the halves' disagreement shrinks with the square root of the samples.
bool Pipeline::MoreSamples(const PgoProfileQuality& q) {
  constexpr uint32_t kMaxFreq = 10000;
  constexpr int kMaxTrainRuns = 10;
  double need = q.binary_samples ? static_cast<double>(kPgoMinBinarySamples) / static_cast<double>(q.binary_samples) : 100;
  double d = (1 - q.halves_agreement) / (1 - kPgoMinHalvesAgreement);
  double factor = std::max({need, d * d, 1.0}) * 1.2;
  if (freq_hz_ < kMaxFreq) {
    freq_hz_ = static_cast<uint32_t>(std::min<double>(kMaxFreq, std::ceil(freq_hz_ * factor)));
    return true;
  }
  if (train_runs_ < kMaxTrainRuns) {
    train_runs_ = static_cast<int>(std::min<double>(kMaxTrainRuns, std::ceil(train_runs_ * factor)));
    return true;
  }
  return false;
}

void Pipeline::Finish() {
  rep_.ok = rep_.failed_stage.empty();
  manifest_["status"] = rep_.ok ? "ok" : "failed";
  manifest_["failed_stage"] = rep_.ok ? Json() : Json(rep_.failed_stage);
  manifest_["error"] = rep_.ok ? Json() : Json(rep_.error);
  manifest_["stages"] = stages_;
  manifest_["final_binary"] = rep_.final_binary.empty() ? Json() : Json(rep_.final_binary);
  manifest_["final_stage"] = rep_.final_stage.empty() ? Json() : Json(rep_.final_stage);
  manifest_["final_reason"] = rep_.final_reason.empty() ? Json() : Json(rep_.final_reason);
  manifest_["profile_quality"] = quality_;
  kind_["requested"] = o_.profile_kind;
  manifest_["profile_kind"] = kind_;
  manifest_["warnings"] = Json(rep_.warnings);
  if (dir_.empty()) return;  // nowhere to write: the options were refused before a directory existed
  rep_.manifest = dir_ + "/manifest.json";
  rep_.summary = dir_ + "/summary.json";

  // The summary: what CI checks, flat, without the logs and command lines.
  Json sum = Json::object();
  sum["status"] = rep_.ok ? "ok" : "failed";
  sum["failed_stage"] = rep_.ok ? Json() : Json(rep_.failed_stage);
  sum["error"] = rep_.ok ? Json() : Json(rep_.error);
  sum["final_binary"] = rep_.final_binary.empty() ? Json() : Json(rep_.final_binary);
  sum["final_stage"] = rep_.final_stage.empty() ? Json() : Json(rep_.final_stage);
  sum["manifest"] = rep_.manifest;
  Json st = Json::object();
  for (auto& s : done_) st[s.name] = s.j.value("status", "ok");
  sum["stages"] = st;
  sum["profile"] = profile_summary_;
  if (!quality_.empty()) sum["profile_quality"] = quality_.back();
  sum["profile_kind"] = kind_;
  Json ev = Json::object();
  for (auto& v : rep_.eval) {
    Json e = Json::object();
    e["median_s"] = Median(v.seconds);
    e["cpu_median_s"] = Median(v.cpu_seconds);
    if (!v.instructions.empty()) e["instructions"] = Median(v.instructions);
    e["speedup"] = v.vs_plain.ratio;
    e["speedup_low"] = v.vs_plain.low;
    e["speedup_high"] = v.vs_plain.high;
    e["same_every_round"] = v.vs_plain.same_every_round;
    e["verdict"] = VerdictName(Judge(v.vs_plain));
    if (v.vs_base.ratio > 0) e["vs_profiling_build"] = IntervalJson(v.vs_base);
    e["output_differs"] = static_cast<bool>(v.output_differs);
    if (!v.failed.empty()) e["failed"] = v.failed;
    ev[v.name] = e;
  }
  if (!rep_.eval.empty()) sum["eval_metric"] = MetricName();
  sum["eval"] = ev;
  sum["warnings"] = Json(rep_.warnings);
  Status a = WriteFileAtomically(rep_.manifest, JsonText(manifest_, 2) + "\n");
  Status b = WriteFileAtomically(rep_.summary, JsonText(sum, 2) + "\n");
  if (!a.ok() || !b.ok()) rep_.warnings.push_back((a.ok() ? b : a).error().message);
}

}  // namespace

PgoBoltReport ReadBoltReport(const std::string& text) {
  static const std::regex prof(R"((\d+) out of (\d+) functions in the binary \(([0-9.]+)%\) have non-empty execution profile)");
  // "of all profiled" since BOLT 19; "has" for one function in older ones.
  static const std::regex stale(
      R"((\d+) \(([0-9.]+)%(?: of all profiled)?\) functions? ha(?:ve|s) invalid \(possibly stale\) profile)");
  PgoBoltReport r;
  std::smatch m;
  if (std::regex_search(text, m, prof)) {
    r.has_profile_line = true;
    r.functions_with_profile = std::stoull(m[1]);
    r.functions_in_binary = std::stoull(m[2]);
  } else {
    FindUnread(text, "have non-empty execution profile", prof, "bolt.functions_with_profile", &r.unread);
  }
  if (std::regex_search(text, m, stale)) r.stale_functions = std::stoull(m[1]), r.stale_share = std::stod(m[2]) / 100;
  else FindUnread(text, "have invalid (possibly stale) profile", stale, "bolt.stale_functions", &r.unread);
  static const std::regex unopt(R"((\d+) functions? with profile could not be optimized)");
  if (std::regex_search(text, m, unopt)) r.profiled_not_optimized = std::stoull(m[1]);
  static const std::regex indirect(R"(failed to post-process indirect branches for (\S+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), indirect); it != std::sregex_iterator(); ++it)
    r.indirect_branch_failures.push_back((*it)[1]);
  return r;
}

std::string BoltLeftOutReason(const PgoBoltReport& r, size_t profiled) {
  if (!r.has_profile_line || profiled == 0 || r.functions_with_profile > 0) return "";
  std::string why = "BOLT applied the profile to none of its " + std::to_string(profiled) + " function(s)";
  if (r.profiled_not_optimized)
    why += ": " + std::to_string(r.profiled_not_optimized) + " with a profile could not be optimized";
  if (!r.indirect_branch_failures.empty()) {
    std::string names;
    for (const std::string& f : r.indirect_branch_failures) names += (names.empty() ? "" : ", ") + f;
    // A PIE's jump table is read through a register holding its address;
    // when the compiler loads that register outside the jump's block,
    // BOLT 19 cannot tell the table's targets and leaves the function alone.
    why += " (BOLT could not follow the indirect branches of " + names + ": a jump table of a position-independent "
           "executable whose address is loaded away from the jump; a -no-pie build lets BOLT read it)";
  }
  return why;
}

PgoSampleCoverage ReadSampleCoverage(const std::string& build_log) {
  static const std::regex re(R"((\d+) of (\d+) available profile samples \((\d+)%\) were applied)");
  PgoSampleCoverage c;
  FindUnread(build_log, "available profile samples", re, "samples_not_applied", &c.unread);
  for (auto it = std::sregex_iterator(build_log.begin(), build_log.end(), re); it != std::sregex_iterator(); ++it) {
    c.applied += std::stoull((*it)[1]);
    c.available += std::stoull((*it)[2]);
    ++c.functions;
  }
  return c;
}

namespace {

// The flags each need of a stage adds, in one table (PgoStageNeeds says why).
struct NeedFlags {
  bool PgoStageNeeds::*need;
  std::vector<std::string> compile, link;
};
const NeedFlags kNeedFlags[] = {
    // syspgo's user stacks are walked through frame pointers.
    {&PgoStageNeeds::frame_pointers, {"-fno-omit-frame-pointer", "-mno-omit-leaf-frame-pointer"}, {}},
    // Line tables with discriminators: what samples are symbolized to and
    // what the sample profile is keyed by.
    {&PgoStageNeeds::profile_debug_info, {"-gline-tables-only", "-fdebug-info-for-profiling"}, {}},
    // So the symbol order can move functions one by one.
    {&PgoStageNeeds::function_sections, {"-ffunction-sections"}, {}},
    // Relocations kept: BOLT's full layout.
    {&PgoStageNeeds::bolt_input, {}, {"-fuse-ld=lld", "-Wl,--emit-relocs"}},
    // What a probe-keyed sample profile (--profile-kind probe) is keyed by,
    // in the build that is profiled and in the one that reads the profile.
    {&PgoStageNeeds::pseudo_probes, {"-fpseudo-probe-for-profiling"}, {}},
};

}  // namespace

std::vector<std::string> PgoCompileFlags(const PgoStageNeeds& n) {
  std::vector<std::string> f;
  for (const NeedFlags& t : kNeedFlags)
    if (n.*t.need) f.insert(f.end(), t.compile.begin(), t.compile.end());
  if (!n.sample_profile.empty()) {
    f.push_back("-fprofile-sample-use=" + n.sample_profile);
    // profi: block and edge counts inferred as a consistent flow from the
    // sampled lines, instead of each block taking its line's count alone.
    // With samples and no LBR it is the larger half of the gain: SQLite's
    // evaluation run went from 4.2% to 7.3% fewer instructions (cachegrind,
    // bench/pgo.py's profile and flags).
    f.push_back("-fsample-profile-use-profi");
    // clang's own account of how much of the profile fits the sources: a
    // warning per function below full coverage, read back from the build
    // log. Never fatal, even in a -Werror build.
    f.insert(f.end(), {"-Wno-error=backend-plugin", "-mllvm", "-sample-profile-check-sample-coverage=100"});
  }
  return f;
}

std::vector<std::string> PgoLinkFlags(const PgoStageNeeds& n) {
  std::vector<std::string> f;
  for (const NeedFlags& t : kNeedFlags)
    if (n.*t.need) f.insert(f.end(), t.link.begin(), t.link.end());
  if (!n.order_file.empty()) {
    // The ordering file is lld's.
    if (!n.bolt_input) f.push_back("-fuse-ld=lld");
    f.insert(f.end(), {"-Wl,--symbol-ordering-file=" + n.order_file, "-Wl,--no-warn-symbol-ordering"});
  }
  return f;
}

Status WriteCompilerWrappers(const std::string& bin_dir, const std::string& stage, const std::string& cc,
                             const std::string& cxx, const std::vector<std::string>& compile_flags,
                             const std::vector<std::string>& link_flags, const std::string& log) {
  auto add = [](const std::string& flag) {
    std::string q = ShellQuote(flag);
    return "case \" $* \" in *\" " + flag + " \"*) ;; *) set -- \"$@\" " + q + " ;; esac\n";
  };
  std::string sh =
      "#!/bin/sh\n"
      "# Written by 'syspgo pgo' for its " + stage + " build: runs clang with the build's own\n"
      "# arguments plus syspgo's flags that are not already there. Reached as $CC/$CXX\n"
      "# and, first on PATH, as cc, gcc, clang, c++, g++, clang++.\n"
      "case \"${0##*/}\" in\n  *++*) real=" + ShellQuote(cxx) + " ;;\n  *) real=" + ShellQuote(cc) + " ;;\nesac\n"
      "mode=link; hasg=; src=\n"
      "for a in \"$@\"; do\n"
      "  case \"$a\" in\n"
      "    -c|-S|-E|-M|-MM) mode=compile ;;\n"
      "    -g0) ;;\n"
      "    -g*) hasg=1 ;;\n"
      "    *.c|*.cc|*.cpp|*.cxx|*.C|*.c++) src=1 ;;\n"
      "  esac\n"
      "done\n";
  for (size_t i = 0; i < compile_flags.size(); ++i) {
    const std::string& f = compile_flags[i];
    if (f == "-mllvm" && i + 1 < compile_flags.size()) {
      // A backend option: only where code is compiled (a link-only call
      // would warn that it is unused).
      sh += "[ $mode = compile ] || [ -n \"$src\" ] && set -- \"$@\" -mllvm " + ShellQuote(compile_flags[++i]) + "\n";
    } else if (f == "-gline-tables-only") {
      sh += "[ -n \"$hasg\" ] || set -- \"$@\" -gline-tables-only\n";  // never lower the build's own -g
    } else {
      sh += add(f);
    }
  }
  if (!link_flags.empty()) {  // (an empty if-block is a syntax error in sh)
    sh += "if [ $mode = link ]; then\n";
    for (auto& f : link_flags) sh += "  " + add(f);
    sh += "fi\n";
  }
  sh += "printf '%s %s\\n' \"$mode\" \"$*\" >> " + ShellQuote(log) + "\n";
  sh += "exec \"$real\" \"$@\"\n";
  std::error_code ec;
  fs::create_directories(bin_dir, ec);
  if (ec) return MakeError("cannot create " + bin_dir + ": " + ec.message());
  std::string script = bin_dir + "/syspgo-cc";
  SYSPGO_TRY(WriteFileAtomically(script, sh, 0755));
  for (const char* n : {"cc", "gcc", "clang", "clang-19", "c++", "g++", "clang++", "clang++-19"}) {
    std::string link = bin_dir + "/" + n;
    unlink(link.c_str());
    if (symlink("syspgo-cc", link.c_str()) != 0)
      return MakeError("cannot create the compiler link " + link + ": " + strerror(errno), errno);
  }
  return {};
}

namespace {

// Every stage, in the order they run. Whether a stage is in a run follows
// from the options alone, so the progress lines count them up front; its
// line is made when it starts, as it may name a figure an earlier stage
// raised (the training runs).
const std::vector<StageRow>& Pipeline::Stages() {
  using P = Pipeline;
  static const std::vector<StageRow> rows = {
      // The user's own build, the reference every variant is compared with:
      // only needed to compare.
      {"plain", [](const P& p) { return p.Evaluating(); },
       [](const P& p) { return "your build as it is, the reference: " + p.o_.build_cmd; }, kPgoPlainVariant,
       [](const P&) { return PgoStageNeeds{}; }, nullptr},
      {"build", [](const P&) { return true; },
       [](const P& p) { return "the training build, with the flags profiling needs: " + p.o_.build_cmd; },
       kPgoProfilingVariant, [](const P& p) { return p.TrainingBuildNeeds(); }, nullptr},
      {"train", [](const P& p) { return p.Training(); },
       [](const P& p) {
         return "running the training command" + Times(p.o_.train_runs) + " under syspgo collect --probes " +
                p.o_.probes;
       },
       nullptr, nullptr, [](P& p, Stage& s) { return p.CollectAll(s, p.db_, "train"); }},
      {"profile", [](const P& p) { return p.o_.sample || p.o_.order || p.o_.bolt; },
       [](const P& p) {
         return p.Training() ? "emitting the profiles (syspgo " + std::string(p.Merging() ? "merge" : "optimize") + ")"
                             : "taking the profiles of " + p.o_.use_profile;
       },
       nullptr, nullptr, [](P& p, Stage& s) { return p.Profiles(s); }},
      {"sample", [](const P& p) { return p.Rebuilding("sample"); },
       [](const P&) { return std::string("rebuilding with the sample profile"); }, "sample",
       [](const P& p) { return p.RebuildNeeds("sample"); }, [](P& p, Stage& s) { return p.CheckRebuild(s, "sample"); }},
      {"order", [](const P& p) { return p.Rebuilding("order"); },
       [](const P& p) {
         return std::string(p.o_.sample ? "rebuilding with the sample profile and the symbol order"
                                        : "relinking with the symbol order");
       },
       "order", [](const P& p) { return p.RebuildNeeds("order"); },
       [](P& p, Stage& s) { return p.CheckRebuild(s, "order"); }},
      {"retrain", [](const P& p) { return p.o_.bolt && !p.rebuilds_.empty() && !p.o_.train_cmd.empty(); },
       [](const P& p) {
         return "running the training command" + Times(p.train_runs_) +
                " again on the rebuilt binary, for BOLT's profile";
       },
       nullptr, nullptr, [](P& p, Stage& s) { return p.Retrain(s); }},
      {"bolt", [](const P& p) { return p.o_.bolt; },
       [](const P&) { return std::string("llvm-bolt with the syspgo fdata profile"); }, nullptr, nullptr,
       [](P& p, Stage& s) { return p.BoltLast(s); }},
      // With --profile-kind auto: the same pipeline keyed by pseudo-probes,
      // up to its sample stage, a candidate beside the flat one.
      {"sample-probe", [](const P& p) { return p.WantsProbeLeg(); },
       [](const P&) {
         return std::string("the probe leg: a build with pseudo-probes, its training, probe profile and rebuild");
       },
       nullptr, nullptr, [](P& p, Stage& s) { return p.ProbeLeg(s); }},
      {"eval", [](const P& p) { return p.Evaluating(); },
       [](const P& p) {
         return "the evaluation command on every variant, " + std::to_string(p.o_.runs) + "+ paired rounds, " +
                (p.o_.eval_metric == "instructions" ? "counting instructions" : "timed");
       },
       nullptr, nullptr, [](P& p, Stage& s) { return p.Eval(s); }},
  };
  return rows;
}

PgoStageNeeds Pipeline::TrainingBuildNeeds() const {
  PgoStageNeeds n;
  n.frame_pointers = n.profile_debug_info = true;
  n.bolt_input = o_.bolt && rebuilds_.empty();  // BOLT alone rewrites this build
  n.pseudo_probes = o_.sample && Kind() == "probe";
  return n;
}

PgoStageNeeds Pipeline::RebuildNeeds(const std::string& r) const {
  bool with_order = r == "order";
  PgoStageNeeds n;
  n.profile_debug_info = !sample_prof_.empty();
  n.sample_profile = sample_prof_;
  n.pseudo_probes = !sample_prof_.empty() && Kind() == "probe";
  n.function_sections = with_order;
  n.order_file = with_order ? order_file_ : "";
  n.bolt_input = o_.bolt && r == rebuilds_.back();
  return n;
}

Status Pipeline::Profiles(Stage& s) {
  Sub("profile");
  sample_prof_ = o_.sample ? PgoArtifactPath(dir_, ArtifactKindId::kSampleProfile) : "";
  order_file_ = o_.order ? PgoArtifactPath(dir_, ArtifactKindId::kOrder) : "";
  if (!Training()) return ReuseProfiles(s);
  if (o_.sample) SYSPGO_TRY(Emit(s, db_, "sample-profile", sample_prof_));
  if (o_.order) SYSPGO_TRY(Emit(s, db_, "order", order_file_));
  if (o_.sample) SYSPGO_TRY(CheckProfileQuality(s));
  if (!rebuilds_.empty() || !o_.bolt) return {};
  // BOLT alone: the plain build is what gets rewritten, so its
  // training run is the BOLT profile's too.
  fdata_ = PgoArtifactPath(dir_, ArtifactKindId::kFdata);
  return Emit(s, db_, "fdata", fdata_);
}

// Reused profiles are copied in, so DIR stays complete.
Status Pipeline::ReuseProfiles(Stage& s) {
  const std::string& up = o_.use_profile;
  for (auto& [want, from] : {std::pair{sample_prof_, PgoArtifactPath(up, ArtifactKindId::kSampleProfile)},
                             std::pair{order_file_, PgoArtifactPath(up, ArtifactKindId::kOrder)}}) {
    if (want.empty()) continue;
    if (Status st = InstallFile(from, want, 0644); !st.ok())
      return MakeError(st.error().message + "; give --use-profile a directory an earlier 'syspgo pgo' wrote",
                       st.error().code);
    s.commands.push_back("cp " + ShellQuote(from) + " " + ShellQuote(want));
  }
  Json j = Json::object();
  if (o_.sample) {
    auto fns = SampleProfileFunctions(sample_prof_);
    uint64_t t = 0;
    for (auto& [n, c] : fns) t += c;
    j["functions"] = static_cast<uint64_t>(fns.size());
    j["total_samples"] = t;
  }
  s.j["reused"] = j;
  return {};
}

Status Pipeline::CheckRebuild(Stage& s, const std::string& r) {
  std::string bin = dir_ + "/" + r + suffix_ + "/" + name_;
  if (!sample_prof_.empty()) SYSPGO_TRY(SampleMatch(s, bin));
  if (r == "order") SYSPGO_TRY(OrderCheck(s, bin));
  return {};
}

Status Pipeline::Retrain(Stage& s) {
  std::string db = !o_.profile_db.empty() ? db_ : Sub("retrain") + "/retrain.db";
  if (o_.profile_db.empty()) unlink(db.c_str());
  SYSPGO_TRY(CollectAll(s, db, "retrain"));
  fdata_ = PgoArtifactPath(dir_, ArtifactKindId::kFdata);
  return Emit(s, db, "fdata", fdata_);
}

// BOLT on the last variant built, with the retraining's profile or else the
// reused one.
Status Pipeline::BoltLast(Stage& s) {
  if (fdata_.empty() && !o_.use_profile.empty()) fdata_ = PgoArtifactPath(o_.use_profile, ArtifactKindId::kFdata);
  if (!MayAccess(fdata_, R_OK))
    return MakeError("no BOLT profile at " + fdata_ + ": give --train so syspgo can profile the rebuilt binary");
  bool sample_built = !sample_prof_.empty() && variants_.back().first != kPgoProfilingVariant;
  return Bolt(s, variants_.back().second, fdata_, sample_built);
}

// The probe leg of --profile-kind auto: this pipeline again in DIR/probe,
// keyed by pseudo-probes and up to its sample stage (its own build with
// -fpseudo-probe-for-profiling, training, probe profile and rebuild), with
// no evaluation or final choice of its own. Its variants are named with
// -probe (base-probe, sample-probe), so a build directory per
// $SYSPGO_STAGE keeps them apart. Its rebuild joins the evaluation right
// after sample, so the existing rule keeps it only when it is faster than
// the flat stage; order and BOLT build on the flat one. A leg that fails
// is said in one line and the flat result stands.
Status Pipeline::ProbeLeg(Stage& s) {
  PgoOptions lo = o_;
  lo.profile_kind = "probe";
  lo.sample_counts = "ip";  // a probe profile is counted at the sampled IP, never over stacks
  lo.order = lo.bolt = false;
  lo.eval_cmd.clear();
  lo.dir = dir_ + "/probe";
  // Its runs are of another binary: a database of its own, beside the
  // user's, so that the probe profile accumulates as the flat one does.
  lo.profile_db = o_.profile_db.empty() ? "" : ProbeProfileDb(o_.profile_db);
  lo.use_profile = o_.use_profile.empty() ? "" : o_.use_profile + "/probe";
  lo.freq_hz = freq_hz_;  // the rate and runs the flat training settled on
  lo.train_runs = train_runs_;
  Pipeline leg(lo, "-probe", "probe leg: ");
  PgoReport r = leg.Run();
  for (const Json& st : leg.stages_)
    for (const Json& c : st["commands"]) s.commands.push_back(c);
  for (const std::string& w : r.warnings) rep_.warnings.push_back("probe leg: " + w);
  s.j["manifest"] = r.manifest.empty() ? Json() : Json(r.manifest);
  if (!r.ok) {
    probe_left_out_ = "the probe leg's " + r.failed_stage + " stage failed (" + r.error.substr(0, r.error.find('\n')) +
                      "); going on with the flat profile";
    s.left_out = probe_left_out_;
    return {};
  }
  for (const Json& st : leg.stages_) {
    if (st["name"] == "profile" && st.contains("sample-profile")) s.j["sample-profile"] = st["sample-profile"];
    if (st["name"] != "sample") continue;
    for (const char* k : {"compile_flags", "link_flags", "binary", "build_id", "log", "compiler_calls",
                          "compiler_calls_with_profile", "profile_match"})
      if (st.contains(k)) s.j[k] = st[k];
  }
  s.j["profile"] = leg.sample_prof_;
  if (!leg.quality_.empty()) s.j["profile_quality"] = leg.quality_.back();
  auto sample = std::find_if(variants_.begin(), variants_.end(), [](const auto& v) { return v.first == "sample"; });
  variants_.insert(sample == variants_.end() ? sample : sample + 1, {kSampleProbeStage, leg.variants_.back().second});
  return {};
}

// The profile kind the final binary was built with; with auto, why: the
// probe leg's stage against the flat sample stage, judged as every stage
// is, beside the final choice that decided between them.
void Pipeline::ChooseKind() {
  const std::string& fin = rep_.final_stage;
  rep_.profile_kind = fin == kSampleProbeStage ? "probe"
                      : fin.empty() || fin == kPgoPlainVariant || sample_prof_.empty() ? "none"
                                                                                      : Kind();
  kind_["chosen"] = rep_.profile_kind;
  if (o_.profile_kind != "auto") return;
  auto find = [&](const std::string& n) {
    auto it = std::find_if(rep_.eval.begin(), rep_.eval.end(), [&](const PgoEvalVariant& v) { return v.name == n; });
    return it == rep_.eval.end() || !it->failed.empty() ? nullptr : &*it;
  };
  const PgoEvalVariant *flat = find("sample"), *probe = find(kSampleProbeStage);
  std::string why;
  if (!WantsProbeLeg()) {
    why = "no probe leg (it needs --eval and the sample stage to be compared)";
  } else if (!probe_left_out_.empty()) {
    why = probe_left_out_;
  } else if (!flat || !probe) {
    why = std::string(!flat ? "sample" : kSampleProbeStage) + " failed the evaluation command";
  } else {
    PgoInterval iv = PairedSpeedup(flat->values, probe->values, MeasureOf(MetricName()));
    kind_["sample_probe_vs_sample"] = IntervalJson(iv);
    kind_["sample_probe_vs_sample"]["metric"] = MetricName();
    why = std::string(kSampleProbeStage) + " against sample: " + (o_.eval_metric == "instructions" ? "instructions" : "wall") +
          " " + DescribeSpeedup(iv);
  }
  std::string won = rep_.profile_kind == "probe" ? "probe (" + fin + ")"
                    : rep_.profile_kind == "flat" ? "flat (" + fin + (fin == "sample" ? "" : ", built on the flat sample stage") + ")"
                                                  : "neither (the final binary is your build)";
  rep_.profile_kind_reason = won + ": " + why;
  kind_["reason"] = rep_.profile_kind_reason;
  SayWrapped("profile kind: " + rep_.profile_kind_reason);
}

Json Pipeline::InputsJson() const {
  Json in = Json::object();
  in["build"] = o_.build_cmd;
  in["clean"] = o_.clean_cmd.empty() ? Json() : Json(o_.clean_cmd);
  in["binary"] = o_.binary;
  in["train"] = o_.train_cmd.empty() ? Json() : Json(o_.train_cmd);
  in["eval"] = o_.eval_cmd.empty() ? Json() : Json(o_.eval_cmd);
  std::vector<std::string> stage_names;
  if (o_.sample) stage_names.push_back("sample");
  if (o_.order) stage_names.push_back("order");
  if (o_.bolt) stage_names.push_back("bolt");
  in["stages"] = Json(stage_names);
  in["runs"] = o_.runs;
  in["max_runs"] = o_.max_runs;
  in["eval_metric"] = o_.eval_metric;
  in["profile_db"] = o_.profile_db.empty() ? Json() : Json(o_.profile_db);
  in["train_runs"] = static_cast<int64_t>(o_.train_runs);
  in["use_profile"] = o_.use_profile.empty() ? Json() : Json(o_.use_profile);
  in["probes"] = o_.probes;
  in["sample_counts"] = o_.sample_counts;
  in["profile_kind"] = o_.profile_kind;
  std::error_code cwd_error;
  in["cwd"] = fs::current_path(cwd_error).string();
  return in;
}

Json Pipeline::ToolchainJson() const {
  Json tc = Json::object();
  tc["cc"] = cc_;
  tc["cxx"] = cxx_;
  tc["llvm_bolt"] = o_.bolt ? Json(bolt_) : Json();
  tc["syspgo"] = syspgo_;
  tc["wrapper"] = dir_ + "/bin/syspgo-cc";
  return tc;
}

// The rebuilds this run makes, and the training database.
void Pipeline::Plan() {
  if (o_.sample) rebuilds_.push_back("sample");
  if (o_.order) rebuilds_.push_back("order");
  if (o_.eval_cmd.empty() && rebuilds_.size() > 1) rebuilds_.erase(rebuilds_.begin());
  db_ = !o_.profile_db.empty() ? Absolute(o_.profile_db) : Sub("train") + "/train.db";
  if (o_.profile_db.empty()) unlink(db_.c_str());  // a fresh run each time, unless runs are meant to accumulate
}

// One stage, unless one before it failed; false if it does not succeed.
bool Pipeline::RunStage(const StageRow& row) {
  if (!rep_.failed_stage.empty()) return false;
  Stage& s = Begin(row.name, row.what(*this));
  Status r = sub_error_.ok() ? RunBody(row, s) : sub_error_;
  if (!sub_error_.ok()) r = sub_error_;  // what failed in the body was the directory
  End(s, r);
  return r.ok();
}

Status Pipeline::RunBody(const StageRow& row, Stage& s) {
  if (row.variant) SYSPGO_TRY(Build(s, row.variant, row.needs(*this)));
  return row.run ? row.run(*this, s) : Status{};
}

// Makes shipped_[i]: variant i's binary less the sections of kUnshipped
// that the user's build (variant 0 with --eval; without, there is none to
// look at, and all of them go) does not carry, in DIR/ship; the binary
// itself when there are none, or (warned) when the copy fails: the binary
// runs the same either way.
void Pipeline::Ship(Stage& s, size_t i) {
  shipped_.resize(variants_.size()), left_out_.resize(variants_.size());
  if (!shipped_[i].empty()) return;
  const std::string& built = variants_[i].second;
  shipped_[i] = built;
  bool have_users = variants_[0].first == kPgoPlainVariant;
  if (i == 0 && have_users) return;
  auto users = have_users ? ReadUnloadedSections(variants_[0].second) : std::vector<std::string>{};
  auto ours = ReadUnloadedSections(built);
  Status st = !users ? Status(users.error()) : !ours ? Status(ours.error()) : Status{};
  std::vector<std::string> argv = {"llvm-objcopy-19"}, left_out;
  for (const std::string& sec : ours ? *ours : std::vector<std::string>{}) {
    bool unshipped = std::any_of(std::begin(kUnshipped), std::end(kUnshipped),
                                 [&](const UnshippedSection& u) { return sec.starts_with(u.prefix); });
    if (!unshipped || (users && std::find(users->begin(), users->end(), sec) != users->end())) continue;
    argv.push_back("--remove-section=" + sec);
    left_out.push_back(sec);
  }
  if (st.ok() && left_out.empty()) return;
  std::string sub = Sub("ship"), out = sub + "/" + name_ + "." + variants_[i].first;
  if (st.ok()) st = sub_error_;
  if (st.ok()) {
    argv.insert(argv.end(), {built, out});
    st = Tool(s, argv, sub + "/objcopy.log", "llvm-objcopy-19");
  }
  if (!st.ok()) {
    std::vector<std::string> what;
    for (const UnshippedSection& u : kUnshipped) what.push_back(u.what);
    rep_.warnings.push_back("the " + variants_[i].first + " binary is measured and installed with what only syspgo's "
                            "stages need (" + Join(what, ", ") + "): " + st.error().message);
    return;
  }
  shipped_[i] = out;
  left_out_[i] = left_out;
}

// The result is the last variant built, or with --eval the one
// ChooseFinalVariant picks; it is left at --binary, where the build put
// its own output, and stays in DIR with every other stage's.
void Pipeline::ChooseFinal() {
  if (variants_.empty()) return;
  // The last stage is the pipeline's own, not the probe leg's candidate beside it.
  size_t pick = variants_.size() - 1;
  if (pick > 0 && variants_[pick].first == kSampleProbeStage) --pick;
  if (rep_.eval.size() == variants_.size()) {
    size_t fastest = ChooseFinalVariant(rep_.eval, MetricName(), &rep_.final_reason);
    if (!o_.final_last) pick = fastest;
    else if (fastest != pick)
      rep_.final_reason = "the last stage (--final last); the evaluation chose " + variants_[fastest].first + ": " +
                          rep_.final_reason;
    if (pick == 0) unhelpful_ = {"the final binary is your own build: " + rep_.final_reason};
  } else {
    rep_.final_reason = o_.eval_cmd.empty() ? "the last stage (no --eval to compare them)" : "the last stage";
  }
  rep_.warnings.insert(rep_.warnings.end(), unhelpful_.begin(), unhelpful_.end());
  rep_.final_stage = variants_[pick].first;
  // Without --eval nothing was shipped yet: the copy is made here, its
  // command kept in the manifest beside the final binary.
  Stage ship{"ship"};
  Ship(ship, pick);
  rep_.final_binary = shipped_[pick];
  manifest_["final_built_binary"] = variants_[pick].second;
  manifest_["final_left_out"] = Json(left_out_[pick]);
  if (!ship.commands.empty()) manifest_["final_commands"] = ship.commands;
  if (!rep_.final_reason.empty()) SayWrapped("final: " + rep_.final_stage + ": " + rep_.final_reason);
  ChooseKind();
  Status in_place = InstallFile(rep_.final_binary, binary_);
  if (!in_place.ok()) rep_.warnings.push_back(in_place.error().message);
}

PgoReport Pipeline::Run() {
  manifest_["syspgo_version"] = SYSPGO_VERSION;
  manifest_["inputs"] = InputsJson();
  Status st = Setup();
  if (!st.ok()) {
    rep_.failed_stage = "setup";
    rep_.error = st.error().message;
    if (leg_.empty()) Say("%s", rep_.error.c_str());
    Finish();
    return rep_;
  }
  manifest_["dir"] = dir_;
  manifest_["toolchain"] = ToolchainJson();
  Plan();
  std::vector<const StageRow*> run;
  for (const StageRow& row : Stages())
    if (row.wanted(*this)) run.push_back(&row);
  steps_ = static_cast<int>(run.size());
  for (const StageRow* row : run)
    if (!RunStage(*row)) break;
  if (leg_.empty()) ChooseFinal();
  Finish();
  return rep_;
}

}  // namespace

PgoReport RunPgo(const PgoOptions& o) {
  // Under sudo everything the pipeline reads and writes itself (its
  // directory, logs, manifest, the binaries it installs) is done with the
  // invoking user's rights, for the whole run (this thread; the pipeline
  // runs on one).
  ActAsUser as_user;
  if (!as_user.ok()) {
    PgoReport failed;
    failed.error = as_user.error().message;
    return failed;
  }
  return Pipeline(o).Run();
}

}  // namespace syspgo
