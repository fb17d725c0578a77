//===- prefetch_session.cc - `syspgo prefetch`: a plan replayed, a program run ===//
#include "optimize/prefetch_session.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "common/damon.h"
#include "common/files.h"
#include "common/identity.h"
#include "common/install_layout.h"
#include "common/process.h"
#include "common/util.h"
#include "shim/readahead_format.h"

namespace syspgo {
namespace {

using Environment = std::map<std::string, std::string>;

void PrintStats(FILE* f, const Plan& plan, const PrefetchStats& s, int verbose) {
  double secs = s.elapsed_ns / 1e9;
  std::string rate = secs > 0 ? ", " + FormatBytes(static_cast<uint64_t>(s.bytes_read / secs)) + "/s" : "";
  fprintf(f, "prefetched  %s in %llu extents of %zu files, %s (%u threads%s)\n", FormatBytes(s.bytes_read).c_str(),
          static_cast<unsigned long long>(s.extents_read), s.files_read, FormatNs(s.elapsed_ns).c_str(), s.threads,
          rate.c_str());
  fprintf(f, "skipped     %zu changed, %zu missing, %zu failed, %zu not reached\n", s.files_changed, s.files_missing,
          s.files_failed, s.files_not_reached);
  if (s.lookups_planned)
    fprintf(f, "looked up   %zu paths (%zu found), %s; %zu of them before the first read, %s\n", s.lookups_planned,
            s.lookups_found, FormatNs(s.lookup_ns).c_str(), s.lookups_first, FormatNs(s.lookup_first_ns).c_str());
  if (verbose < 2) return;
  Table t({{"outcome", "outcome", Table::Align::kLeft},
           {"read", "bytes_read", Table::Align::kRight, true},
           {"planned", "bytes_planned", Table::Align::kRight, true},
           {"file", "path", Table::Align::kLeft},
           {"why", "reason", Table::Align::kLeft}});
  for (size_t i = 0; i < plan.files.size(); ++i)
    t.AddRow({OutcomeName(s.files[i].outcome), FormatBytes(s.files[i].bytes_read), FormatBytes(plan.files[i].Bytes()),
              plan.files[i].path, s.files[i].reason});
  fprintf(f, "\n%s", t.Text().c_str());
}

// Whether `file` (opened as the user) starts as a readahead plan does; the
// library reads it again, as the program, and does nothing with one it
// finds at fault, so this only spares the user a silent no-op.
bool IsReadaheadPlan(int fd) {
  char head[sizeof SYSPGO_READAHEAD_HEADER];  // the header and its line break
  ssize_t got = pread(fd, head, sizeof head, 0);
  return got == static_cast<ssize_t>(sizeof head) && memcmp(head, SYSPGO_READAHEAD_HEADER, sizeof head - 1) == 0 &&
         head[sizeof head - 1] == '\n';
}

// The variables that preload the readahead library with plan `file`: none,
// after a warning, if something is amiss; the program then runs with the
// kernel's readahead.
Environment ReadaheadEnvironment(const std::string& file, const Plan* plan, const PrefetchSession& s) {
  const auto& warn = s.prefetch.warn;
  auto fd = OpenRegularAsUser(file, "readahead plan");
  if (!fd.ok()) {
    warn(fd.error().message + "; running without its advice");
    return {};
  }
  bool is_plan = IsReadaheadPlan(*fd);
  close(*fd);
  if (!is_plan) {
    warn(file + " is no readahead plan (syspgo optimize --emit readahead writes them); running without it");
    return {};
  }
  // Resolved with the user's rights, as it was opened: a link swapped in
  // since must not make root walk where the user cannot.
  char real[PATH_MAX];
  int resolve_error = [&] {
    ActAsUser as_user;
    if (!as_user.ok()) return EPERM;
    return realpath(file.c_str(), real) ? 0 : errno;
  }();
  if (resolve_error) {
    warn("cannot resolve " + file + ": " + strerror(resolve_error) + "; running without its advice");
    return {};
  }
  std::string shim = FindInstalledPart(InstalledPart::kReadaheadShim);
  if (shim.empty() || shim.find_first_of(": ") != std::string::npos) {
    warn(shim.empty() ? "libsyspgo-readahead.so is not in lib/ of syspgo's prefix (or cli/libexec/ of a build tree); "
                        "running without readahead advice"
                      : "the path of " + shim + " cannot go in LD_PRELOAD; running without readahead advice");
    return {};
  }
  // Both are read as the program starts, and from a cold cache each is a
  // read of its own, queued behind the plan's: ask for them first.
  for (int f : {open(shim.c_str(), O_RDONLY | O_CLOEXEC), OpenAsUser(real, kOpenUntrustedFlags)}) {
    if (f < 0) continue;
    posix_fadvise(f, 0, 0, POSIX_FADV_WILLNEED);
    close(f);
  }
  if (s.verbose) fprintf(stderr, "syspgo: readahead plan %s, applied by %s\n", real, shim.c_str());
  // After the libraries LD_PRELOAD names already, so that theirs interpose first.
  const char* preload = getenv("LD_PRELOAD");
  Environment env = {{"LD_PRELOAD", (preload && *preload ? std::string(preload) + ":" : "") + shim},
                     {SYSPGO_READAHEAD_ENV, real}};
  // The files the prefetch plan replays are left to the kernel (the
  // library says why), up to a size an environment holds easily.
  std::string skip;
  for (size_t i = 0; plan && i < plan->files.size() && skip.size() < (64 << 10); ++i)
    skip += (skip.empty() ? "" : ",") + std::to_string(plan->files[i].fingerprint.device) + ":" +
            std::to_string(plan->files[i].fingerprint.inode);
  if (!skip.empty()) env[SYSPGO_READAHEAD_SKIP_ENV] = skip;
  return env;
}

// Runs argv with `env` on top of the environment and waits; returns its
// status as a shell reports it (126, or 127 for a program not found, when it
// cannot start). Like system(), ignores SIGINT and SIGQUIT meanwhile: the
// terminal sends them to the command too, and its status is what counts.
// Under sudo the command runs as the user who asked, with what `sudo -u`
// gives them, as with collect.
int RunProgram(const std::vector<std::string>& argv, const Environment& env) {
  auto user = InvokingUserOrNull();  // checked before anything ran (RunCommand)
  ProcessSpec spec;
  spec.argv = argv;
  spec.env = env;
  spec.user = user.ok() ? *user : nullptr;
  spec.out = spec.err = ProcessOutput::Inherit();
  spec.inherit_stdin = true;
  spec.ignore_interrupts = true;
  auto run = RunProcess(spec);
  if (run.ok()) return run->status;
  fprintf(stderr, "syspgo: %s\n", run.error().message.c_str());
  return run.error().code == ENOENT ? 127 : 126;
}

nlohmann::ordered_json StatusJson(int status) { return {{"command_status", status}}; }

// Writes `text` where --json asked; false (with a warning) if it could not
// be written.
bool WriteJsonText(const PrefetchSession& s, const std::string& text) {
  if (s.json.empty()) return true;
  if (s.json == "-") return fwrite(text.data(), 1, text.size(), stdout) == text.size() && fflush(stdout) == 0;
  Status st = WriteFileAtomically(s.json, text);
  if (!st.ok())
    fprintf(stderr, "syspgo: warning: cannot write the JSON summary to %s: %s\n", s.json.c_str(),
            st.error().message.c_str());
  return st.ok();
}

bool WriteJson(const PrefetchSession& s, const Plan& plan, const PrefetchStats& stats,
               const nlohmann::ordered_json& extra) {
  return WriteJsonText(s, s.json.empty() ? "" : PrefetchStatsJson(plan, stats, &extra));
}

// Warming the cache ahead of the program meets DAMON's proactive reclaim
// where it runs: its pageout schemes (paddr) page out whole physical regions
// that looked idle, and the pages just read sit in them, their own access
// bits ignored (bench/RESULTS.md, coldstart: the runs warmed ahead of time,
// with --hold and without).
void WarnOfDamon(const DamonPageouts& damon) {
  if (damon.descriptions.empty()) return;
  std::string list;
  for (const auto& d : damon.descriptions) list += (list.empty() ? "" : "; ") + d;
  fprintf(stderr,
          "syspgo: warning: DAMON proactive reclaim is on (%s). It pages out whole physical memory regions it saw "
          "idle, pages just read included, so the cache this replay warmed can lose part of the plan within "
          "seconds. Start the program with the replay instead (syspgo prefetch PLAN -- CMD), so that it uses the "
          "pages at once, or keep them locked in memory until it starts (--hold SECONDS).\n",
          list.c_str());
}

// The session's state once its environment is known.
struct Session {
  PrefetchSession& s;
  Environment env;  // the readahead library's, if any
  bool with_command() const { return !s.command.empty(); }
  int Run() const { return RunProgram(s.command, env); }
};

// A readahead plan alone: the command with its advice.
int RunReadaheadAlone(const Session& x) {
  if (x.s.dry_run) {
    printf("would run: %s, with the readahead plan %s\n", JoinShell(x.s.command).c_str(), x.s.readahead.c_str());
    return 0;
  }
  int status = x.Run();
  WriteJsonText(x.s, StatusJson(status).dump() + "\n");
  return status;
}

// A plan that cannot be read, with a command: it runs without prefetching.
int RunWithoutPlan(const Session& x, const Error& error) {
  x.s.prefetch.warn(error.message);
  fprintf(stderr, "syspgo: running %s without prefetching\n", TerminalSafe(JoinShell(x.s.command)).c_str());
  int status = x.Run();
  nlohmann::ordered_json failed = {{"error", error.message}, {"command_status", status}};
  WriteJsonText(x.s, JsonDocument(failed));
  return status;
}

int DryRunSession(Session& x, const Plan& plan) {
  PrefetchSession& s = x.s;
  // Which lookups would go before the first read: with a command started
  // beside the replay, those before the lead; else none (--before).
  if (x.with_command() && !s.before) s.prefetch.command = s.command;
  std::string listing;
  PrefetchStats stats = DryRun(plan, s.prefetch, &listing);
  if (s.json != "-") {  // else the JSON is the output
    printf("%s", listing.c_str());
    if (s.verbose >= 2) PrintStats(stdout, plan, stats, s.verbose);
    if (x.with_command()) printf("then would run: %s\n", JoinShell(s.command).c_str());
  }
  return WriteJson(s, plan, stats, {{"dry_run", true}}) ? 0 : 1;
}

// After a replay alone: the pages held (--hold) or DAMON warned of, and
// the summary. 0, or 1 when the hold or the JSON failed.
int FinishReplayAlone(const PrefetchSession& s, const Plan& plan, const PrefetchStats& stats, bool json_out) {
  DamonPageouts damon = ReadDamonPageouts();
  nlohmann::ordered_json extra = {{"damon_pageout", DamonSchemesJson(damon.schemes)}};
  int rc = 0;
  if (s.hold) {
    auto holder = StartPageHolder(plan, stats, s.hold);
    if (holder.ok()) {
      fprintf(json_out ? stderr : stdout,
              "holding    %s of %zu files in memory for %u s (process %d; kill it to release them sooner)\n",
              FormatBytes(holder->bytes).c_str(), holder->files, s.hold, static_cast<int>(holder->pid));
      extra["hold"] = {{"pid", holder->pid}, {"seconds", s.hold}, {"bytes", holder->bytes}, {"files", holder->files}};
    } else {
      fprintf(stderr, "syspgo: error: the plan was replayed, but %s\n",
              TerminalSafeLines(holder.error().message).c_str());
      extra["hold"] = {{"error", holder.error().message}};
      rc = 1;
    }
  }
  if (!s.hold) WarnOfDamon(damon);
  return WriteJson(s, plan, stats, extra) && rc == 0 ? 0 : 1;
}

// The replay first, then the command if any (--before).
int ReplayFirst(Session& x, const Plan& plan) {
  PrefetchSession& s = x.s;
  bool with_command = x.with_command();
  if (with_command) s.prefetch.command = s.command;
  PrefetchStats stats = Replay(plan, s.prefetch);
  bool json_out = s.json == "-" && !with_command;  // the JSON is the output
  if ((!with_command || s.verbose) && !json_out) PrintStats(with_command ? stderr : stdout, plan, stats, s.verbose);
  if (!with_command) return FinishReplayAlone(s, plan, stats, json_out);
  int status = x.Run();
  WriteJson(s, plan, stats, StatusJson(status));
  return status;
}

// In parallel: the replay starts first and stays ahead of the command's
// own reads; once the command is done, reading further is pointless.
int ReplayBeside(Session& x, const Plan& plan) {
  PrefetchSession& s = x.s;
  s.prefetch.command = s.command;
  std::atomic<bool> cancel{false};
  s.prefetch.cancel = &cancel;
  std::promise<void> queued;
  s.prefetch.on_queued = [&] { queued.set_value(); };
  PrefetchStats stats;
  std::thread replay([&] { stats = Replay(plan, s.prefetch); });
  queued.get_future().wait();  // the first budget's worth is queued; see PrefetchOptions::on_queued
  int status = x.Run();
  cancel = true;
  replay.join();
  if (s.verbose) PrintStats(stderr, plan, stats, s.verbose);
  WriteJson(s, plan, stats, StatusJson(status));
  return status;
}

}  // namespace

Result<int> RunPrefetchSession(PrefetchSession s) {
  Session x{s, {}};
  auto set_readahead_env = [&](const Plan* p) {
    if (!s.readahead.empty() && !s.dry_run) x.env = ReadaheadEnvironment(s.readahead, p, s);
  };
  if (s.plan.empty()) {
    set_readahead_env(nullptr);
    return RunReadaheadAlone(x);
  }
  auto plan = ReadPlan(s.plan);
  set_readahead_env(plan.ok() ? &plan.value() : nullptr);
  if (!plan.ok()) {
    if (!x.with_command()) return plan.error();
    return RunWithoutPlan(x, plan.error());
  }
  if (s.dry_run) return DryRunSession(x, *plan);
  if (!x.with_command() || s.before) return ReplayFirst(x, *plan);
  return ReplayBeside(x, *plan);
}

}  // namespace syspgo
