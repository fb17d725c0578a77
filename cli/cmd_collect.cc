//===- cmd_collect.cc - `syspgo collect`: record a command's whole system -===//
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "collect/collector.h"
#include "common/files.h"
#include "common/util.h"

namespace syspgo::cli {
namespace {

const char kHelp[] = R"(usage: syspgo collect [OPTIONS] -- COMMAND [ARGS...]
       syspgo collect [OPTIONS] -p PID

Records COMMAND and every process it starts (forks, threads, execs) into a
profile database. COMMAND is held before it starts until every probe is
attached, so nothing early is missed. The exit status is COMMAND's.

Output:
  -o, --output DB        profile database to create or append a run to (default: syspgo.db)
  --json FILE            also write the run's summary as JSON to FILE ('-': stdout): run id,
                         events, events lost, the command's exit, each probe group

Target:
  -p, --pid PID          attach to a running process and its future children
  --duration SECONDS     stop recording after SECONDS (a spawned command keeps running)
  --cold                 drop the page cache just before COMMAND starts (a cold start, for
                         prefetch plans; affects the whole machine)
  --no-readahead         turn block-device readahead off until COMMAND ends, so that each
                         page it uses is read and recorded by itself (for prefetch plans:
                         optimize --pages touched; affects the whole machine meanwhile)

Probes:
  --probes LIST          comma-separated probe groups (default: all). Groups: %s
  --freq HZ              cpu sampling frequency                         (default 999, 1..10000)
  --memory-mb MB         the collector's whole memory: ring buffers, rows waiting for
                         SQLite, SQLite's cache, the program; printed at the start (default 96)
  --ringbuf-mb MB        ring buffer per group, MiB, a power of two (default: from --memory-mb,
                         2 MiB or less; 1..1024)
  --detail lean|full     lean: count in the kernel what analyses only count, keep single
                         events where an analysis needs them; full: every event as a row
                         (larger databases, events may be lost at high rates) (default lean)
  --offcpu-min-us US     shortest off-CPU interval recorded, us         (default 1000);
                         lean: also the shortest file read/write kept one by one
  --irq-min-us US        interrupt handler runs recorded one by one, us (default 100)

Other:
  --as-root              under sudo, run COMMAND as root instead of the invoking user
  -v, -vv, -vvv          more detail (libbpf warnings, info, debug)
  -h, --help             this text

Examples:
  sudo syspgo collect -o run.db -- dd if=/dev/zero of=f bs=1M count=10 conv=fsync
  sudo syspgo collect -o run.db --probes fileio,block -- ./train.sh
  sudo syspgo collect -o run.db -p 1234 --duration 30
)";

void OnSignal(int sig) { g_collect_stop_signal.store(sig); }
void OnChild(int) {}  // only interrupts the poll, so a finished command ends the run at once

bool ParseNum(const std::string& s, double lo, double hi, double* out) {
  char* end = nullptr;
  double v = strtod(s.c_str(), &end);
  if (s.empty() || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

int Collect(const std::vector<std::string>& args) {
  CollectRequest req;
  req.db_path = "syspgo.db";
  for (auto& g : AllProbeGroupNames()) req.opts.probes.insert(g);
  bool as_root = false;
  std::string json_path;  // --json
  std::string groups_list;
  for (auto& g : AllProbeGroupNames()) groups_list += (groups_list.empty() ? "" : ", ") + g;

  size_t i = 0;
  auto value = [&](const std::string& opt, std::string* out) {
    if (i + 1 >= args.size()) return false;
    *out = args[++i];
    (void)opt;
    return true;
  };
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string v;
    double d;
    if (a == "--") {
      ++i;
      break;
    } else if (a == "-h" || a == "--help") {
      printf(kHelp, groups_list.c_str());
      return 0;
    } else if (a == "-o" || a == "--output") {
      if (!value(a, &req.db_path)) return UsageError(a + " needs a file path");
    } else if (a == "-p" || a == "--pid") {
      if (!value(a, &v) || !ParseNum(v, 1, 1 << 30, &d)) return UsageError(a + " needs a process id, e.g. -p 1234");
      req.attach_pid = static_cast<pid_t>(d);
    } else if (a == "--duration") {
      if (!value(a, &v) || !ParseNum(v, 0.001, 1e7, &d)) return UsageError("--duration needs seconds > 0, e.g. --duration 10");
      req.duration_s = d;
    } else if (a == "--probes") {
      if (!value(a, &v)) return UsageError("--probes needs a list, e.g. --probes fileio,block");
      req.opts.probes.clear();
      for (auto& p : Split(v, ',')) {
        std::string name = Trim(p);
        bool known = false;
        for (auto& g : AllProbeGroupNames()) known |= g == name;
        if (!known) return UsageError("unknown probe group '" + name + "' in --probes; groups are: " + groups_list);
        req.opts.probes.insert(name);
      }
    } else if (a == "--freq") {
      if (!value(a, &v) || !ParseNum(v, 1, 10000, &d)) return UsageError("--freq needs a frequency from 1 to 10000 Hz");
      req.opts.freq_hz = static_cast<uint32_t>(d);
    } else if (a == "--ringbuf-mb") {
      if (!value(a, &v) || !ParseNum(v, 1, 1024, &d) || (static_cast<uint64_t>(d) & (static_cast<uint64_t>(d) - 1)))
        return UsageError("--ringbuf-mb needs a power of two from 1 to 1024");
      req.opts.ringbuf_bytes = static_cast<uint64_t>(d) << 20;
    } else if (a == "--memory-mb") {
      if (!value(a, &v) || !ParseNum(v, 16, 1 << 20, &d))
        return UsageError("--memory-mb needs a size in MiB from 16 up, e.g. --memory-mb 256");
      req.opts.memory_bytes = static_cast<uint64_t>(d) << 20;
    } else if (a == "--detail") {
      if (!value(a, &v) || (v != "lean" && v != "full")) return UsageError("--detail needs 'lean' or 'full'");
      req.opts.detail = v == "full" ? Detail::kFull : Detail::kLean;
    } else if (a == "--offcpu-min-us") {
      if (!value(a, &v) || !ParseNum(v, 0, 1e9, &d)) return UsageError("--offcpu-min-us needs microseconds >= 0");
      req.opts.offcpu_min_ns = static_cast<uint64_t>(d * 1000);
    } else if (a == "--irq-min-us") {
      if (!value(a, &v) || !ParseNum(v, 0, 1e9, &d)) return UsageError("--irq-min-us needs microseconds >= 0");
      req.opts.irq_min_ns = static_cast<uint64_t>(d * 1000);
    } else if (a == "--cold") {
      req.cold = true;
    } else if (a == "--no-readahead") {
      req.no_readahead = true;
    } else if (a == "--as-root") {
      as_root = true;
    } else if (a == "--json") {
      if (!value(a, &json_path) || json_path.empty()) return UsageError("--json needs a file path ('-' for stdout)");
    } else if (a == "-v" || a == "-vv" || a == "-vvv") {
      req.opts.verbose = static_cast<int>(a.size()) - 1;
    } else if (!a.empty() && a[0] == '-') {
      return UsageError("unknown option '" + a + "'; see 'syspgo collect --help'");
    } else {
      break;  // the command starts here (the -- is optional)
    }
  }
  req.argv.assign(args.begin() + std::min(i, args.size()), args.end());
  if (req.attach_pid && !req.argv.empty())
    return UsageError("give either -p PID or a command, not both");
  if (!req.attach_pid && req.argv.empty())
    return UsageError("no command to record: syspgo collect -o run.db -- COMMAND [ARGS...] (or -p PID)");

  req.as_root = as_root;

  if (req.cold)
    fprintf(stderr, "syspgo: --cold: dropping the page cache of the whole machine before the command starts\n");

  struct sigaction sa {};
  sa.sa_handler = OnSignal;  // no SA_RESTART: poll returns EINTR and the loop ends cleanly
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  sa.sa_handler = OnChild;
  sigaction(SIGCHLD, &sa, nullptr);

  auto r = syspgo::Collect(req);
  if (!r) return Fail(r.error().message);
  const CollectResult& res = *r;

  Table t({{"group", "group", Table::Align::kLeft},
           {"attached", "attached", Table::Align::kLeft},
           {"events", "events", Table::Align::kRight, true},
           {"dropped", "dropped", Table::Align::kRight, true}});
  for (auto& g : res.groups)
    t.AddRow({g.name, g.attached ? "yes" : "no", std::to_string(g.events), std::to_string(g.dropped)});
  fprintf(stderr, "\nsyspgo: run %lld recorded into %s: %llu events in %.2f s (%s), command %s with status %d\n",
          static_cast<long long>(res.run_id), req.db_path.c_str(), static_cast<unsigned long long>(res.events),
          res.seconds, res.exit_reason.c_str(), req.attach_pid ? "(attached)" : "exited", res.exit_status);
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
                                {"exit_status", res.exit_status}, {"write_error", res.write_error}};
    for (auto& g : res.groups)
      j["groups"].push_back({{"group", g.name}, {"attached", g.attached}, {"events", g.events}, {"lost", g.dropped}});
    std::string text = j.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    if (json_path == "-") fputs(text.c_str(), stdout);
    else if (Status st = WriteFileAtomically(json_path, text); !st.ok())
      fprintf(stderr, "syspgo: warning: cannot write the JSON summary to %s: %s\n", json_path.c_str(),
              st.error().message.c_str());
  }
  return req.attach_pid ? 0 : res.exit_status;
}

const Command kCollect("collect", "record a command's syscalls, files, faults, I/O and CPU into a profile DB", &Collect,
                        Privilege::kRoot);

}  // namespace
}  // namespace syspgo::cli
