//===- cmd_prefetch.cc - `syspgo prefetch`: warm the page cache from a plan ===//
//
// Replays a prefetch plan, alone or ahead of the program it was made for.
// Prefetching only ever speeds a program up, so with a command nothing here
// may stop it from running: an unreadable plan or a failing file is a
// warning, and the exit status is the command's.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/options.h"
#include "common/damon.h"
#include "common/files.h"
#include "common/identity.h"
#include "common/install_layout.h"
#include "common/process.h"
#include "common/util.h"
#include "optimize/prefetch.h"
#include "optimize/readahead_plan.h"

namespace syspgo::cli {
namespace {

// The longest --hold: a day.
constexpr unsigned kMaxHoldSeconds = 86400;

struct Options {
  std::string plan;
  std::string readahead;  // --readahead FILE
  std::string json;  // --json PATH ("-": stdout)
  bool dry_run = false, before = false;
  int verbose = 0;
  unsigned hold = 0;  // --hold SECONDS; 0: none
  PrefetchOptions prefetch;
  std::vector<std::string> command;
};

// Parses the options into *o. Returns -1 when parsed, else the exit status
// (0 after --help).
int Parse(const std::vector<std::string>& args, Options* o) {
  auto app = NewApp("syspgo prefetch",
                    "usage: syspgo prefetch PLAN [OPTIONS] [-- CMD ARGS...]\n"
                    "       syspgo prefetch [PLAN] --readahead FILE [OPTIONS] -- CMD ARGS...\n\n"
                    "Looks up the paths the program looked up (so its path walks find directories\n"
                    "and inodes in memory) and reads the byte ranges the plan lists into the page\n"
                    "cache, both in the order the program first touched them. With a command,\n"
                    "starts it once the first --lead MiB of the plan are queued at the disk and the\n"
                    "paths it looked up by then are resolved (the rest of the replay then runs\n"
                    "ahead of it), or after the whole replay with --before.\n"
                    "Files changed or missing since the plan was made are skipped with a warning.\n",
                    "Exit status: CMD's; without CMD, 0 once the plan was replayed (skipped files\n"
                    "are warnings), 1 if the plan cannot be read, 2 for a usage error. With CMD, an\n"
                    "unreadable plan is a warning and CMD runs without prefetching.\n\n"
                    "Examples:\n"
                    "  syspgo prefetch app.plan --dry-run\n"
                    "  syspgo prefetch app.plan -- ./app --serve\n"
                    "  syspgo prefetch app.plan --before --threads 8 -- clang-19 -c main.c\n"
                    "  syspgo prefetch app.plan --readahead app.ra -- ./app\n"
                    "  syspgo prefetch app.plan --hold 60 && systemctl start app\n");
  const uint64_t max_mib = kPrefetchMaxBudget >> 20;
  uint64_t budget_mib = o->prefetch.budget_bytes >> 20, lead_mib = o->prefetch.lead_bytes >> 20;
  std::string io_priority = o->prefetch.idle_io ? "idle" : "inherit";
  bool no_lookups = !o->prefetch.lookups;
  app->add_option("plan", o->plan, "the prefetch plan (syspgo optimize --emit plan)");
  app->add_option("--readahead", o->readahead,
                  "a readahead plan (syspgo optimize --emit readahead): CMD runs with libsyspgo-readahead.so "
                  "preloaded, which advises the files the plan names as CMD maps and opens them (random: read what "
                  "is asked, not the window around it; sequential: a larger window). With or without PLAN; not "
                  "for static or setuid programs, which ignore LD_PRELOAD")
      ->type_name("FILE")
      ->check(NonEmpty("a readahead plan file"));

  app->option_defaults()->group("What to do");
  app->add_flag("--dry-run", o->dry_run, "check the files and print what would be read; read nothing");
  app->add_flag("--before", o->before, "finish the replay before starting CMD");
  app->add_option("--hold", o->hold,
                  "without CMD: keep the replayed pages locked in memory (mlock) for SECONDS in a background "
                  "process, so that reclaim and DAMON leave them until the program starts; kill that process to "
                  "release them sooner. Under sudo that process runs as you, within your locked-memory limit "
                  "(ulimit -l): a plan past it is refused")
      ->type_name("SECONDS")
      ->transform(Whole(1, kMaxHoldSeconds, "seconds"));

  app->option_defaults()->group("Tuning");
  app->add_option("--threads", o->prefetch.threads, "reading threads")
      ->type_name("N")
      ->transform(Whole(1, kPrefetchMaxThreads, "a number of threads"))
      ->capture_default_str();
  app->add_option("--budget", budget_mib, "MiB being read at once (the memory budget)")
      ->type_name("MiB")
      ->transform(Whole(1, max_mib, "MiB"))
      ->capture_default_str();
  app->add_option("--lead", lead_mib, "MiB queued before CMD starts")
      ->type_name("MiB")
      ->transform(Whole(0, max_mib, "MiB"))
      ->capture_default_str();
  Choices(app->add_option("--io-priority", io_priority,
                          "idle: read in the idle I/O class, so that CMD's own reads go first; inherit: in this "
                          "process's class"),
          {"idle", "inherit"})
      ->capture_default_str();
  app->add_flag("--no-lookups", no_lookups, "skip the plan's path lookups and CMD's PATH search");

  app->option_defaults()->group("Output");
  AddVerbosity(*app, &o->verbose, "-v: print the summary also when running CMD (on stderr); -vv: also one line per file");
  app->add_option("--json", o->json,
                  "also write the summary as JSON to PATH ('-': stdout), with every file's outcome, and CMD's "
                  "exit status")
      ->type_name("PATH")
      ->check(NonEmpty("a file to write the summary to ('-' for stdout)"));

  // The command is split off here: CLI11 would fill the plan, when none is
  // given (--readahead alone), from the words after "--".
  auto dashes = std::find(args.begin(), args.end(), "--");
  if (auto exit = Parse(*app, std::vector<std::string>(args.begin(), dashes), Tail::kAfterDashes, &o->command))
    return *exit;
  if (dashes != args.end()) o->command.assign(dashes + 1, args.end());
  o->prefetch.budget_bytes = budget_mib << 20;
  o->prefetch.lead_bytes = lead_mib << 20;
  o->prefetch.idle_io = io_priority == "idle";
  o->prefetch.lookups = !no_lookups;
  if (o->plan.empty() && o->readahead.empty())
    return UsageError("prefetch: give a plan file, or --readahead FILE; see 'syspgo prefetch --help'");
  if (!o->readahead.empty() && o->command.empty())
    return UsageError("prefetch: --readahead advises the files of the program it starts: give the command after --");
  if (o->plan.empty() && o->hold) return UsageError("prefetch: --hold holds the pages of a plan: give a plan file");
  if (o->hold && !o->command.empty())
    return UsageError("prefetch: --hold is for a replay ahead of the program; with a command the program uses the "
                      "pages as they arrive, so drop --hold (or the command)");
  if (o->hold && o->dry_run) return UsageError("prefetch: --dry-run reads nothing, so there is nothing to --hold");
  return -1;
}

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

// The variables that preload the readahead shim with plan `file`, after
// checking that the file is a readahead plan (the shim reads it again, as
// the program, and does nothing with one it finds at fault); none, with a
// warning, if something is amiss: the program then runs with the kernel's
// readahead.
std::map<std::string, std::string> ReadaheadEnv(const std::string& file, const Plan* plan, int verbose) {
  auto fd = OpenRegularAsUser(file, "readahead plan");
  if (!fd.ok()) {
    Warn(fd.error().message + "; running without its advice");
    return {};
  }
  char head[sizeof kReadaheadHeader];  // the header and its line break
  ssize_t got = pread(*fd, head, sizeof head, 0);
  close(*fd);
  char real[PATH_MAX];
  if (got != static_cast<ssize_t>(sizeof head) || memcmp(head, kReadaheadHeader, sizeof head - 1) != 0 ||
      head[sizeof head - 1] != '\n') {
    Warn(file + " is no readahead plan (syspgo optimize --emit readahead writes them); running without it");
    return {};
  }
  // Resolved with the user's rights, as it was opened: a link swapped in
  // since must not make root walk where the user cannot.
  int resolve_error = [&] {
    ActAsUser as_user;
    if (!as_user.ok()) return EPERM;
    return realpath(file.c_str(), real) ? 0 : errno;
  }();
  if (resolve_error) {
    Warn("cannot resolve " + file + ": " + strerror(resolve_error) + "; running without its advice");
    return {};
  }
  std::string shim = FindInstalledPart(InstalledPart::kReadaheadShim);
  if (shim.empty() || shim.find_first_of(": ") != std::string::npos) {
    Warn(shim.empty() ? "libsyspgo-readahead.so is not in lib/ of syspgo's prefix (or cli/libexec/ of a build tree); "
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
  if (verbose) fprintf(stderr, "syspgo: readahead plan %s, applied by %s\n", real, shim.c_str());
  // After the libraries LD_PRELOAD names already, so that theirs interpose first.
  const char* preload = getenv("LD_PRELOAD");
  std::map<std::string, std::string> env = {
      {"LD_PRELOAD", (preload && *preload ? std::string(preload) + ":" : "") + shim}, {"SYSPGO_READAHEAD", real}};
  // The files the prefetch plan replays are left to the kernel (the shim
  // says why), up to a size an environment holds easily.
  std::string skip;
  for (size_t i = 0; plan && i < plan->files.size() && skip.size() < (64 << 10); ++i)
    skip += (skip.empty() ? "" : ",") + std::to_string(plan->files[i].fingerprint.device) + ":" +
            std::to_string(plan->files[i].fingerprint.inode);
  if (!skip.empty()) env["SYSPGO_READAHEAD_SKIP"] = skip;
  return env;
}

// Runs argv with `env` on top of the environment and waits; returns its
// status as a shell reports it (126, or 127 for a program not found, when it
// cannot start). Like system(), ignores SIGINT and SIGQUIT meanwhile: the
// terminal sends them to the command too, and its status is what counts.
// Under sudo the command runs as the user who asked, with what `sudo -u`
// gives them, as with collect.
int RunProgram(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
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
bool WriteJsonText(const Options& o, const std::string& text) {
  if (o.json.empty()) return true;
  if (o.json == "-") return fwrite(text.data(), 1, text.size(), stdout) == text.size() && fflush(stdout) == 0;
  Status st = WriteFileAtomically(o.json, text);
  if (!st.ok())
    fprintf(stderr, "syspgo: warning: cannot write the JSON summary to %s: %s\n", o.json.c_str(),
            st.error().message.c_str());
  return st.ok();
}

bool WriteJson(const Options& o, const Plan& plan, const PrefetchStats& s, const nlohmann::ordered_json& extra) {
  return WriteJsonText(o, o.json.empty() ? "" : PrefetchStatsJson(plan, s, &extra));
}

// Warming the cache ahead of the program meets DAMON's proactive reclaim
// where it runs: its pageout schemes (paddr) page out whole physical regions
// that looked idle, and the pages just read sit in them, their own access
// bits ignored. On the benchmark VM (a kdamond pageout after 30 s idle) 12-19%
// of clang's plan was gone a second after its replay.
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

int Prefetch(const std::vector<std::string>& args) {
  Options o;
  if (int rc = Parse(args, &o); rc >= 0) return rc;
  o.prefetch.warn = [](const std::string& msg) { Warn(msg); };
  bool with_command = !o.command.empty();
  std::map<std::string, std::string> env;  // set once the plan is read
  auto RunProgram = [&env](const std::vector<std::string>& argv) { return cli::RunProgram(argv, env); };
  auto SetReadaheadEnv = [&](const Plan* p) {
    if (!o.readahead.empty() && !o.dry_run) env = ReadaheadEnv(o.readahead, p, o.verbose);
  };
  if (o.plan.empty()) {  // --readahead alone
    SetReadaheadEnv(nullptr);
    if (o.dry_run) {
      printf("would run: %s, with the readahead plan %s\n", JoinShell(o.command).c_str(), o.readahead.c_str());
      return 0;
    }
    int status = RunProgram(o.command);
    WriteJsonText(o, StatusJson(status).dump() + "\n");
    return status;
  }

  auto plan = ReadPlan(o.plan);
  SetReadaheadEnv(plan.ok() ? &plan.value() : nullptr);
  if (!plan.ok()) {
    if (!with_command) return Fail(plan.error().message);
    Warn(plan.error().message);
    fprintf(stderr, "syspgo: running %s without prefetching\n", TerminalSafe(JoinShell(o.command)).c_str());
    int status = RunProgram(o.command);
    nlohmann::ordered_json failed = {{"error", plan.error().message}, {"command_status", status}};
    WriteJsonText(o, JsonDocument(failed));
    return status;
  }

  if (o.dry_run) {
    // Which lookups would go before the first read: with a command started
    // beside the replay, those before the lead; else none (--before).
    if (with_command && !o.before) o.prefetch.command = o.command;
    std::string listing;
    PrefetchStats s = DryRun(plan.value(), o.prefetch, &listing);
    if (o.json != "-") {  // else the JSON is the output
      printf("%s", listing.c_str());
      if (o.verbose >= 2) PrintStats(stdout, plan.value(), s, o.verbose);
      if (with_command) printf("then would run: %s\n", JoinShell(o.command).c_str());
    }
    return WriteJson(o, plan.value(), s, {{"dry_run", true}}) ? 0 : 1;
  }

  if (!with_command || o.before) {
    if (with_command) o.prefetch.command = o.command;
    PrefetchStats s = Replay(plan.value(), o.prefetch);
    bool json_out = o.json == "-" && !with_command;  // the JSON is the output
    if ((!with_command || o.verbose) && !json_out)
      PrintStats(with_command ? stderr : stdout, plan.value(), s, o.verbose);
    if (!with_command) {
      DamonPageouts damon = ReadDamonPageouts();
      nlohmann::ordered_json extra = {{"damon_pageout", DamonSchemesJson(damon.schemes)}};
      int rc = 0;
      if (o.hold) {
        auto holder = StartPageHolder(plan.value(), s, o.hold);
        if (holder.ok()) {
          fprintf(json_out ? stderr : stdout,
                  "holding    %s of %zu files in memory for %u s (process %d; kill it to release them sooner)\n",
                  FormatBytes(holder->bytes).c_str(), holder->files, o.hold, static_cast<int>(holder->pid));
          extra["hold"] = {{"pid", holder->pid}, {"seconds", o.hold}, {"bytes", holder->bytes},
                           {"files", holder->files}};
        } else {
          fprintf(stderr, "syspgo: error: the plan was replayed, but %s\n",
                  TerminalSafeLines(holder.error().message).c_str());
          extra["hold"] = {{"error", holder.error().message}};
          rc = 1;
        }
      }
      if (!o.hold) WarnOfDamon(damon);
      return WriteJson(o, plan.value(), s, extra) && rc == 0 ? 0 : 1;
    }
    int status = RunProgram(o.command);
    WriteJson(o, plan.value(), s, StatusJson(status));
    return status;
  }

  // In parallel: the replay starts first and stays ahead of the command's
  // own reads; once the command is done, reading further is pointless.
  o.prefetch.command = o.command;
  std::atomic<bool> cancel{false};
  o.prefetch.cancel = &cancel;
  std::promise<void> queued;
  o.prefetch.on_queued = [&] { queued.set_value(); };
  PrefetchStats s;
  std::thread replay([&] { s = Replay(plan.value(), o.prefetch); });
  queued.get_future().wait();  // the first budget's worth is queued; see PrefetchOptions::on_queued
  int status = RunProgram(o.command);
  cancel = true;
  replay.join();
  if (o.verbose) PrintStats(stderr, plan.value(), s, o.verbose);
  WriteJson(o, plan.value(), s, StatusJson(status));
  return status;
}

const Command kPrefetch("prefetch", "warm the page cache along a prefetch plan, then run a command",
                         Prefetch, Privilege::kRoot);

}  // namespace
}  // namespace syspgo::cli
