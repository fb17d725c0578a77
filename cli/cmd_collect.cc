//===- cmd_collect.cc - `syspgo collect`: record a command's whole system -===//
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/options.h"
#include "collect/collector.h"
#include "collect/container.h"
#include "common/util.h"

namespace syspgo::cli {
namespace {

const char kAbout[] = R"(usage: syspgo collect [OPTIONS] -- COMMAND [ARGS...]
       syspgo collect [OPTIONS] -p PID
       syspgo collect [OPTIONS] --cgroup PATH | --container NAME | --all [--duration SECONDS]

Records COMMAND and every process it starts (forks, threads, execs) into a
profile database. COMMAND is held before it starts until every probe is
attached, so nothing early is missed. The exit status is COMMAND's.
)";

const char kExamples[] = R"(Examples:
  sudo syspgo collect -o run.db -- dd if=/dev/zero of=f bs=1M count=10 conv=fsync
  sudo syspgo collect -o run.db --probes fileio,block -- ./train.sh
  sudo syspgo collect -o run.db -p 1234 --duration 30
  syspgo collect -o run.db --new-cgroup -- ./train.sh
  syspgo collect -o run.db --cgroup /sys/fs/cgroup/memory/job --duration 30
  syspgo collect -o run.db --container web --duration 30
  syspgo collect -o run.db --all --duration 10
)";

void OnSignal(int sig) { g_collect_stop_signal.store(sig); }
void OnChild(int) {}  // only interrupts the poll, so a finished command ends the run at once

// The probe options as given (lists, MiB, names, microseconds), before
// they become CollectOptions.
struct ProbeFlags {
  std::string probes, detail;
  uint64_t memory_mb = 0, ringbuf_mb = 0;
  double offcpu_us = 0, irq_us = 0;
};

ProbeFlags ProbeFlagsOf(const CollectOptions& o) {
  ProbeFlags f;
  f.detail = o.detail == Detail::kFull ? "full" : "lean";
  f.offcpu_us = static_cast<double>(o.offcpu_min_ns) / 1000;
  f.irq_us = static_cast<double>(o.irq_min_ns) / 1000;
  return f;
}

// `probe_list_given`: --probes was on the command line (else every group stays on).
void ApplyProbeFlags(const ProbeFlags& f, bool probe_list_given, CollectOptions* o) {
  if (probe_list_given) {
    o->probes.clear();
    for (auto& p : Split(f.probes, ',')) o->probes.insert(Trim(p));
  }
  if (f.memory_mb) o->memory_bytes = f.memory_mb << 20;
  if (f.ringbuf_mb) o->ringbuf_bytes = f.ringbuf_mb << 20;
  o->detail = f.detail == "full" ? Detail::kFull : Detail::kLean;
  o->offcpu_min_ns = static_cast<uint64_t>(f.offcpu_us * 1000);
  o->irq_min_ns = static_cast<uint64_t>(f.irq_us * 1000);
}

// --ringbuf-mb: a power of two from 1 to 1024.
CLI::Validator RingbufMib() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        bool digits = !v.empty() && v.size() < 6 && v.find_first_not_of("0123456789") == std::string::npos;
        uint64_t n = digits ? std::stoull(v) : 0;
        if (n >= 1 && n <= 1024 && !(n & (n - 1))) return "";
        return "needs a power of two from 1 to 1024 (MiB), got '" + v + "'";
      },
      "1..1024");
}

void AddOutputOptions(CLI::App* app, CollectRequest* req, std::string* json_path) {
  app->option_defaults()->group("Output");
  app->add_option("-o,--output", req->db_path, "profile database to create or append a run to")
      ->type_name("DB")
      ->capture_default_str();
  AddJsonSummary(*app, json_path,
                 "also write the run's summary as JSON to FILE ('-': stdout): run id, events, events lost, the "
                 "command's exit, each probe group");
}

// What is recorded: a command, a process, a cgroup, a container or the host.
void AddTargetOptions(CLI::App* app, CollectRequest* req) {
  app->option_defaults()->group("Target");
  app->add_option("-p,--pid", req->attach_pid, "attach to a running process and its future children")
      ->type_name("PID")
      ->transform(Whole(1, 1 << 30, "a process id"));
  app->add_option("--cgroup", req->cgroup,
                  "record every process of this cgroup (a v1 or v2 directory under /sys/fs/cgroup) and those that "
                  "join it while recording; under sudo only if all its processes are yours")
      ->type_name("PATH");
  app->add_option("--container", req->container,
                  "record a running container: its runtime (podman, docker, crictl) names its init process, whose "
                  "cgroup is then recorded as --cgroup records one; its files by their paths on the host. To record "
                  "its start, create and initialize it first (podman init), then start it")
      ->type_name("NAME|ID");
  app->add_flag("--all", req->all, "record every process of the host (like perf record -a); needs real root");
  app->add_flag("--new-cgroup", req->new_cgroup,
                "run COMMAND in a fresh cgroup of its own (memory v1 under the collector's, and v2 if mounted), so "
                "its page-cache charges, memory pressure and reclaim are its own; removed at the end");
  Decimal(app->add_option("--duration", req->duration_s,
                          "stop recording after SECONDS (a spawned command keeps running)"),
          "SECONDS", 0.001, 1e7, "seconds");
  app->add_flag("--cold", req->cold,
                "drop the page cache just before COMMAND starts (a cold start, for prefetch plans; affects the "
                "whole machine)");
  app->add_flag("--no-readahead", req->no_readahead,
                "turn block-device readahead off until COMMAND ends, so that each page it uses is read and "
                "recorded by itself (for prefetch plans: optimize --pages touched; affects the whole machine "
                "meanwhile)");
}

void AddProbeOptions(CLI::App* app, CollectRequest* req, ProbeFlags* f) {
  std::string groups;
  for (auto& g : AllProbeGroupNames()) groups += (groups.empty() ? "" : ", ") + g;
  app->option_defaults()->group("Probes");
  app->add_option("--probes", f->probes, "comma-separated probe groups (default: all). Groups: " + groups)
      ->type_name("LIST")
      ->check(ListOf(AllProbeGroupNames(), "probe group"));
  app->add_option("--freq", req->opts.freq_hz, "cpu sampling frequency")
      ->type_name("HZ")
      ->transform(Whole(1, 10000, "a frequency in Hz"))
      ->capture_default_str();
  app->add_option("--memory-mb", f->memory_mb,
                  "the collector's whole memory: ring buffers, rows waiting for SQLite, SQLite's cache, the "
                  "program; printed at the start. Under sudo at most " +
                      std::to_string(kCollectSudoMemoryCapBytes >> 20) + " MiB, ring buffers included")
      ->type_name("MB")
      ->transform(Whole(16, 1 << 20, "a size in MiB"))
      ->default_str(std::to_string(kCollectDefaultMemoryBytes >> 20));
  app->add_option("--ringbuf-mb", f->ringbuf_mb,
                  "ring buffer per group, MiB, a power of two (default: from --memory-mb, 2 MiB or less); under "
                  "sudo the whole budget must stay within " + std::to_string(kCollectSudoMemoryCapBytes >> 20) +
                      " MiB")
      ->type_name("MB")
      ->transform(RingbufMib());
  Choices(app->add_option("--detail", f->detail,
                          "lean: count in the kernel what analyses only count, keep single events where an analysis "
                          "needs them; full: every event as a row (larger databases, events may be lost at high "
                          "rates)"),
          {"lean", "full"})
      ->capture_default_str();
  Decimal(app->add_option("--offcpu-min-us", f->offcpu_us,
                          "shortest off-CPU interval recorded, us; lean: also the shortest file read/write kept one "
                          "by one"),
          "US", 0, 1e9, "microseconds")
      ->capture_default_str();
  Decimal(app->add_option("--irq-min-us", f->irq_us, "interrupt handler runs recorded one by one, us"), "US", 0, 1e9,
          "microseconds")
      ->capture_default_str();
}

void AddOtherOptions(CLI::App* app, CollectRequest* req) {
  app->option_defaults()->group("Other");
  app->add_flag("--as-root", req->as_root,
                "run COMMAND as root, not as the user who ran sudo: only for root itself (refused under sudo for "
                "any other user)");
  AddVerbosity(*app, &req->opts.verbose, "more detail: -v libbpf warnings, -vv info, -vvv debug");
}

// The targets given: exactly one is needed.
int Targets(const CollectRequest& r) {
  return (r.attach_pid != 0) + !r.argv.empty() + !r.cgroup.empty() + !r.container.empty() + r.all;
}

// Requests that cannot be recorded, in the order they are checked, each
// with what to give instead.
struct Conflict {
  bool (*applies)(const CollectRequest& r);
  const char* message;
};
const Conflict kConflicts[] = {
    {[](const CollectRequest& r) { return Targets(r) > 1; },
     "give one of a command, -p PID, --cgroup PATH, --container NAME or --all, not several"},
    {[](const CollectRequest& r) { return Targets(r) == 0; },
     "no command to record: syspgo collect -o run.db -- COMMAND [ARGS...] (or -p PID, --cgroup PATH, --all)"},
    {[](const CollectRequest& r) { return r.new_cgroup && r.argv.empty(); },
     "--new-cgroup needs a command: --new-cgroup -- COMMAND"},
};

// The request `args` ask for, or the exit status of a usage error or --help.
std::optional<int> ParseRequest(const std::vector<std::string>& args, CollectRequest* req, std::string* json_path) {
  req->db_path = "syspgo.db";
  ProbeFlags f = ProbeFlagsOf(req->opts);
  auto app = NewApp("syspgo collect", kAbout, kExamples);
  AddOutputOptions(app.get(), req, json_path);
  AddTargetOptions(app.get(), req);
  AddProbeOptions(app.get(), req, &f);
  AddOtherOptions(app.get(), req);

  if (auto exit = Parse(*app, args, Tail::kFirstWord, &req->argv)) return exit;
  ApplyProbeFlags(f, app->count("--probes"), &req->opts);
  req->opts.verbose = std::min(req->opts.verbose, 3);
  for (const Conflict& c : kConflicts)
    if (c.applies(*req)) return UsageError(c.message);
  return std::nullopt;
}

int Collect(const std::vector<std::string>& args) {
  CollectRequest req;
  for (auto& g : AllProbeGroupNames()) req.opts.probes.insert(g);
  std::string json_path;  // --json
  if (auto exit = ParseRequest(args, &req, &json_path)) return *exit;

  if (req.cold)
    fprintf(stderr, "syspgo: --cold: dropping the page cache of the whole machine before the command starts\n");
  if (req.cold && !req.no_readahead)
    Note("--cold without --no-readahead: readahead and fault-around hide which pages the command uses, so a plan "
         "from this run holds whole fault-around windows (optimize --emit plan says how much more); add "
         "--no-readahead for a page-exact plan");

  struct sigaction sa {};
  sa.sa_handler = OnSignal;  // no SA_RESTART: poll returns EINTR and the loop ends cleanly
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  sa.sa_handler = OnChild;
  sigaction(SIGCHLD, &sa, nullptr);

  if (!req.container.empty()) {
    auto c = ResolveContainer(req.container);
    if (!c) return Fail(c.error().message);
    req.cgroup = c->cgroup;
    req.container = c->runtime + " container " + req.container + " (" + c->id.substr(0, 12) + ")";
  }
  auto r = syspgo::Collect(req);
  if (!r) return Fail(r.error().message);
  const CollectResult& res = *r;

  Table t({{"group", "group", Table::Align::kLeft},
           {"attached", "attached", Table::Align::kLeft},
           {"events", "events", Table::Align::kRight, true},
           {"dropped", "dropped", Table::Align::kRight, true}});
  for (auto& g : res.groups)
    t.AddRow({g.name, g.attached ? "yes" : "no", std::to_string(g.events), std::to_string(g.dropped)});
  char done[160];
  snprintf(done, sizeof done, ": %llu events in %.2f s (%s), command %s with status %d",
           static_cast<unsigned long long>(res.events), res.seconds, res.exit_reason.c_str(),
           req.Attached() ? "(attached)" : "exited", res.exit_status);
  std::string said = "run " + std::to_string(res.run_id) + " recorded into " + req.db_path + done;
  fprintf(stderr, "\nsyspgo: %s\n", WrapWords(said, 8, 120).c_str());
  fprintf(stderr, "%s", t.Text().c_str());
  if (res.dropped)
    fprintf(stderr,
            "syspgo: WARNING: %llu events were LOST (ring buffer full); the profile is incomplete. "
            "Use a larger --memory-mb or fewer --probes.\n",
            static_cast<unsigned long long>(res.dropped));
  if (!res.write_error.empty())
    fprintf(stderr, "syspgo: WARNING: recording stopped early: %s. What was committed before is intact.\n",
            res.write_error.c_str());
  if (!json_path.empty()) {
    // For machines (syspgo pgo reads it): the same facts as the lines above.
    nlohmann::ordered_json j = {{"run_id", res.run_id},          {"db", req.db_path},
                                {"events", res.events},          {"events_lost", res.dropped},
                                {"seconds", res.seconds},        {"exit_reason", res.exit_reason},
                                {"exit_status", res.exit_status}, {"write_error", res.write_error},
                                {"processes_left_out", res.left_out}};
    for (auto& g : res.groups)
      j["groups"].push_back({{"group", g.name}, {"attached", g.attached}, {"events", g.events}, {"lost", g.dropped}});
    WriteJsonSummary(json_path, j);
  }
  return req.Attached() ? 0 : res.exit_status;
}

const Command kCollect("collect", "record a command's syscalls, files, faults, I/O and CPU into a profile DB", &Collect,
                        Privilege::kRoot);

}  // namespace
}  // namespace syspgo::cli
