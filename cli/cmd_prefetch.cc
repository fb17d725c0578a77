//===- cmd_prefetch.cc - `syspgo prefetch`: warm the page cache from a plan ===//
//
// The options of a prefetch session; the session itself (the replay, the
// command beside it, the readahead library, --hold) is
// optimize/prefetch_session.h.
#include <algorithm>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/options.h"
#include "optimize/prefetch_session.h"

namespace syspgo::cli {
namespace {

const char kAbout[] =
    "usage: syspgo prefetch PLAN [OPTIONS] [-- CMD ARGS...]\n"
    "       syspgo prefetch [PLAN] --readahead FILE [OPTIONS] -- CMD ARGS...\n\n"
    "Looks up the paths the program looked up (so its path walks find directories\n"
    "and inodes in memory) and reads the byte ranges the plan lists into the page\n"
    "cache, both in the order the program first touched them. With a command,\n"
    "starts it once the first --lead MiB of the plan are queued at the disk and the\n"
    "paths it looked up by then are resolved (the rest of the replay then runs\n"
    "ahead of it), or after the whole replay with --before.\n"
    "Files changed or missing since the plan was made are skipped with a warning.\n";

const char kFooter[] =
    "Exit status: CMD's; without CMD, 0 once the plan was replayed (skipped files\n"
    "are warnings), 1 if the plan cannot be read, 2 for a usage error. With CMD, an\n"
    "unreadable plan is a warning and CMD runs without prefetching.\n\n"
    "Examples:\n"
    "  syspgo prefetch app.plan --dry-run\n"
    "  syspgo prefetch app.plan -- ./app --serve\n"
    "  syspgo prefetch app.plan --before --threads 8 -- clang-19 -c main.c\n"
    "  syspgo prefetch app.plan --readahead app.ra -- ./app\n"
    "  syspgo prefetch app.plan --hold 60 && systemctl start app\n";

// The tuning options as given (MiB, a name, a negation), before they
// become PrefetchOptions.
struct Tuning {
  uint64_t budget_mib, lead_mib;
  std::string io_priority;
  bool no_lookups;
};

Tuning TuningOf(const PrefetchOptions& p) {
  return {p.budget_bytes >> 20, p.lead_bytes >> 20, p.idle_io ? "idle" : "inherit", !p.lookups};
}

void ApplyTuning(const Tuning& t, PrefetchOptions* p) {
  p->budget_bytes = t.budget_mib << 20;
  p->lead_bytes = t.lead_mib << 20;
  p->idle_io = t.io_priority == "idle";
  p->lookups = !t.no_lookups;
}

// The plans to replay and to apply.
void AddPlanOptions(CLI::App* app, PrefetchSession* o) {
  app->add_option("plan", o->plan, "the prefetch plan (syspgo optimize --emit plan)");
  app->add_option("--readahead", o->readahead,
                  "a readahead plan (syspgo optimize --emit readahead): CMD runs with libsyspgo-readahead.so "
                  "preloaded, which advises the files the plan names as CMD maps and opens them (random: read what "
                  "is asked, not the window around it; sequential: a larger window). With or without PLAN; not "
                  "for static or setuid programs, which ignore LD_PRELOAD")
      ->type_name("FILE")
      ->check(NonEmpty("a readahead plan file"));
}

// Dry run, replay first, or hold the pages.
void AddActionOptions(CLI::App* app, PrefetchSession* o) {
  app->option_defaults()->group("What to do");
  app->add_flag("--dry-run", o->dry_run, "check the files and print what would be read; read nothing");
  app->add_flag("--before", o->before, "finish the replay before starting CMD");
  app->add_option("--hold", o->hold,
                  "without CMD: keep the replayed pages locked in memory (mlock) for SECONDS in a background "
                  "process, so that reclaim and DAMON leave them until the program starts; kill that process to "
                  "release them sooner. Under sudo that process runs as you, within your locked-memory limit "
                  "(ulimit -l): a plan past it is refused")
      ->type_name("SECONDS")
      ->transform(Whole(1, kPrefetchMaxHoldSeconds, "seconds"));
}

void AddTuningOptions(CLI::App* app, PrefetchSession* o, Tuning* t) {
  const uint64_t max_mib = kPrefetchMaxBudget >> 20;
  app->option_defaults()->group("Tuning");
  app->add_option("--threads", o->prefetch.threads, "reading threads")
      ->type_name("N")
      ->transform(Whole(1, kPrefetchMaxThreads, "a number of threads"))
      ->capture_default_str();
  app->add_option("--budget", t->budget_mib, "MiB being read at once (the memory budget)")
      ->type_name("MiB")
      ->transform(Whole(1, max_mib, "MiB"))
      ->capture_default_str();
  app->add_option("--lead", t->lead_mib, "MiB queued before CMD starts")
      ->type_name("MiB")
      ->transform(Whole(0, max_mib, "MiB"))
      ->capture_default_str();
  Choices(app->add_option("--io-priority", t->io_priority,
                          "idle: read in the idle I/O class, so that CMD's own reads go first; inherit: in this "
                          "process's class"),
          {"idle", "inherit"})
      ->capture_default_str();
  app->add_flag("--no-lookups", t->no_lookups, "skip the plan's path lookups and CMD's PATH search");
}

void AddOutputOptions(CLI::App* app, PrefetchSession* o) {
  app->option_defaults()->group("Output");
  AddVerbosity(*app, &o->verbose, "-v: print the summary also when running CMD (on stderr); -vv: also one line per file");
  app->add_option("--json", o->json,
                  "also write the summary as JSON to PATH ('-': stdout), with every file's outcome, and CMD's "
                  "exit status")
      ->type_name("PATH")
      ->check(NonEmpty("a file to write the summary to ('-' for stdout)"));
}

// Options that do not go together, in the order they are checked, each
// with what to do instead.
struct Conflict {
  bool (*applies)(const PrefetchSession& o);
  const char* message;
};
const Conflict kConflicts[] = {
    {[](const PrefetchSession& o) { return o.plan.empty() && o.readahead.empty(); },
     "prefetch: give a plan file, or --readahead FILE; see 'syspgo prefetch --help'"},
    {[](const PrefetchSession& o) { return !o.readahead.empty() && o.command.empty(); },
     "prefetch: --readahead advises the files of the program it starts: give the command after --"},
    {[](const PrefetchSession& o) { return o.plan.empty() && o.hold; },
     "prefetch: --hold holds the pages of a plan: give a plan file"},
    {[](const PrefetchSession& o) { return o.hold && !o.command.empty(); },
     "prefetch: --hold is for a replay ahead of the program; with a command the program uses the pages as they "
     "arrive, so drop --hold (or the command)"},
    {[](const PrefetchSession& o) { return o.hold && o.dry_run; },
     "prefetch: --dry-run reads nothing, so there is nothing to --hold"},
};

// Parses the options into *o. Returns -1 when parsed, else the exit status
// (0 after --help).
int Parse(const std::vector<std::string>& args, PrefetchSession* o) {
  auto app = NewApp("syspgo prefetch", kAbout, kFooter);
  Tuning t = TuningOf(o->prefetch);
  AddPlanOptions(app.get(), o);
  AddActionOptions(app.get(), o);
  AddTuningOptions(app.get(), o, &t);
  AddOutputOptions(app.get(), o);

  // The command is split off here: CLI11 would fill the plan, when none is
  // given (--readahead alone), from the words after "--".
  auto dashes = std::find(args.begin(), args.end(), "--");
  if (auto exit = Parse(*app, std::vector<std::string>(args.begin(), dashes), Tail::kAfterDashes, &o->command))
    return *exit;
  if (dashes != args.end()) o->command.assign(dashes + 1, args.end());
  ApplyTuning(t, &o->prefetch);
  for (const Conflict& c : kConflicts)
    if (c.applies(*o)) return UsageError(c.message);
  return -1;
}

int Prefetch(const std::vector<std::string>& args) {
  PrefetchSession s;
  if (int rc = Parse(args, &s); rc >= 0) return rc;
  s.prefetch.warn = [](const std::string& msg) { Warn(msg); };
  auto status = RunPrefetchSession(std::move(s));
  return status.ok() ? *status : Fail(status.error().message);
}

const Command kPrefetch("prefetch", "warm the page cache along a prefetch plan, then run a command",
                         Prefetch, Privilege::kRoot);

}  // namespace
}  // namespace syspgo::cli
