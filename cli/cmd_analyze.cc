//===- cmd_analyze.cc - `syspgo analyze DB WHAT`: reports over a run ------===//
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>

#include "analyze/files.h"
#include "analyze/run.h"
#include "cli/command.h"
#include "common/profile_db.h"
#include "common/util.h"

namespace syspgo::cli {
namespace {

const char kHelp[] = R"(usage: syspgo analyze DB WHAT [OPTIONS]

Reports over one run of a profile database (the newest unless --run).

WHAT:
  files        per file: reads and writes (ops, bytes), syncs, total and worst
               syscall latency, most latency first

Options:
  --run N      the run to read (default: the newest)
  --json       JSON for machines instead of a table
  --all        files: include pipes, sockets and devices, not only regular files
  --limit N    at most N rows (default: all)

Examples:
  syspgo analyze run.db files
  syspgo analyze run.db files --json --run 2
)";

struct AnalyzeArgs {
  std::string db, what;
  int64_t run = 0;
  bool json = false, all = false;
  size_t limit = 0;
};

int Files(Db& db, const RunInfo& run, const AnalyzeArgs& a) {
  auto rows = FileSummary(db, {run.id, a.all, a.limit});
  if (!rows) return Fail(rows.error().message);
  Table t({{"path", "path", Table::Align::kLeft},
           {"reads", "reads", Table::Align::kRight, true},
           {"read", "read_bytes", Table::Align::kRight, true},
           {"writes", "writes", Table::Align::kRight, true},
           {"written", "write_bytes", Table::Align::kRight, true},
           {"syncs", "syncs", Table::Align::kRight, true},
           {"total lat", "total_ns", Table::Align::kRight, true},
           {"worst lat", "worst_ns", Table::Align::kRight, true},
           {"worst in", "worst_syscall", Table::Align::kLeft}});
  for (auto& f : *rows) {
    t.AddRow({f.path, std::to_string(f.reads), FormatBytes(f.read_bytes), std::to_string(f.writes),
              FormatBytes(f.write_bytes), std::to_string(f.syncs), FormatNs(f.total_ns), FormatNs(f.worst_ns),
              f.worst_syscall},
             {f.path, std::to_string(f.reads), std::to_string(f.read_bytes), std::to_string(f.writes),
              std::to_string(f.write_bytes), std::to_string(f.syncs), std::to_string(f.total_ns),
              std::to_string(f.worst_ns), f.worst_syscall});
  }
  if (a.json) {
    printf("%s", t.Json().c_str());
    return 0;
  }
  printf("run %lld: %s\n", static_cast<long long>(run.id), run.command.c_str());
  if (t.size() == 0) {
    printf("no file I/O recorded%s.\n", a.all ? "" : " on regular files (--all shows pipes, sockets, devices)");
    return 0;
  }
  printf("%s", t.Text().c_str());
  return 0;
}

const std::map<std::string, std::function<int(Db&, const RunInfo&, const AnalyzeArgs&)>>& Analyses() {
  static const std::map<std::string, std::function<int(Db&, const RunInfo&, const AnalyzeArgs&)>> m = {
      {"files", Files},
  };
  return m;
}

int Analyze(const std::vector<std::string>& args) {
  AnalyzeArgs a;
  std::vector<std::string> pos;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& s = args[i];
    if (s == "-h" || s == "--help") {
      printf("%s", kHelp);
      return 0;
    } else if (s == "--json") {
      a.json = true;
    } else if (s == "--all") {
      a.all = true;
    } else if (s == "--run" || s == "--limit") {
      if (i + 1 >= args.size()) return UsageError(s + " needs a number");
      char* end;
      long long v = strtoll(args[++i].c_str(), &end, 10);
      if (*end || v <= 0) return UsageError(s + " needs a number > 0, got '" + args[i] + "'");
      if (s == "--run") a.run = v;
      else a.limit = static_cast<size_t>(v);
    } else if (!s.empty() && s[0] == '-') {
      return UsageError("unknown option '" + s + "'; see 'syspgo analyze --help'");
    } else {
      pos.push_back(s);
    }
  }
  if (pos.size() != 2) return UsageError("usage: syspgo analyze DB WHAT [--json] [--run N]; see --help");
  a.db = pos[0];
  a.what = pos[1];
  auto it = Analyses().find(a.what);
  if (it == Analyses().end()) {
    std::string names;
    for (auto& [n, f] : Analyses()) names += (names.empty() ? "" : ", ") + n;
    return UsageError("unknown analysis '" + a.what + "'; choose one of: " + names);
  }
  auto db = OpenProfileDb(a.db, DbMode::kReadOnly);
  if (!db) return Fail(db.error().message);
  auto run = ResolveRun(*db, a.run);
  if (!run) return Fail(run.error().message);
  if (run->status != "complete" && !a.json)
    printf("note: run %lld is %s (the collector did not finish it); figures cover what was recorded.\n",
           static_cast<long long>(run->id), run->status.c_str());
  if (run->events_dropped && !a.json)
    printf("WARNING: run %lld lost %lld events; figures are lower bounds.\n", static_cast<long long>(run->id),
           static_cast<long long>(run->events_dropped));
  return it->second(*db, *run, a);
}

const Command kAnalyze("analyze", "report on a recorded run (files, ...)", &Analyze);

}  // namespace
}  // namespace syspgo::cli
