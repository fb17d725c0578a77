//===- fuzz_inputs.cc - what each fuzz target does with one input --------===//
// Readers take paths, so inputs are written to a scratch directory on tmpfs
// (one per process, removed at exit). Each promise checked here is one a
// user relies on: a damaged input is refused with a message naming it, and
// whatever is accepted behaves like a well-formed input.
#include "fuzz/fuzz_inputs.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

#include "analyze/files.h"
#include "analyze/io.h"
#include "analyze/run.h"
#include "common/profile_db.h"
#include "optimize/plan.h"

namespace syspgo::fuzz {
namespace {

// A private directory for the inputs, on tmpfs where there is one: the DB
// target writes a file per input, and a disk would make that the bottleneck.
const std::string& ScratchDir() {
  // Never destroyed: the atexit handler below runs after static destructors
  // registered later than it, and must still read the path.
  static const std::string* dir = [] {
    std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    std::string tmpl = base + "/syspgo-fuzz-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) abort();  // nothing can be fuzzed without it
    auto* made = new std::string(buf.data());
    atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(ScratchDir(), ec);
    });
    return made;
  }();
  return *dir;
}

void WriteFile(const std::string& path, const uint8_t* data, size_t size) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) abort();
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(fd, data + done, size - done);
    if (n <= 0) abort();
    done += static_cast<size_t>(n);
  }
  close(fd);
}

std::string AnalyzeRun(Db& db, int64_t requested) {
  auto run = ResolveRun(db, requested);
  if (!run) return MustName(run.error().message, db.path(), "ResolveRun");
  for (bool all : {false, true}) {
    FilesQuery q;
    q.run_id = run->id;
    q.all_kinds = all;
    auto files = FileSummary(db, q);
    if (!files) return MustName(files.error().message, db.path(), "FileSummary");
    IoQuery io;
    io.run_id = run->id;
    io.slower_ns = 0;  // every read, write and sync: the most rows, names and joins
    io.all_kinds = all;
    auto slow = IoReport(db, *run, io, /*json=*/all);  // the table once, the JSON once
    if (!slow) return MustName(slow.error().message, db.path(), "IoReport");
  }
  return "";
}

// What OpenProfileDb promises of a database it accepted, asked of SQLite
// directly: no SQL of anyone else's runs as the data is read.
constexpr char kForeignObjectsSql[] =
    "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' OR (type = 'view' AND name != 'page_cache_refault') "
    "OR sql LIKE 'CREATE VIRTUAL TABLE%' OR (name IN ('file_io', 'file', 'run', 'process', 'thread') AND type != "
    "'table')";

// The run lookup and the files and io analyses, as `syspgo analyze DB files`
// and `io` do them: the newest run, then each of the first few runs by id.
std::string AnalyzeAll(Db& db) {
  auto foreign = db.QueryInt(kForeignObjectsSql);
  if (!foreign) return MustName(foreign.error().message, db.path(), "reading sqlite_master");
  if (*foreign) return "OpenProfileDb accepted a database holding a trigger, a virtual table or a foreign view";
  if (std::string b = AnalyzeRun(db, 0); !b.empty()) return b;
  auto ids = db.Prepare("SELECT id FROM run ORDER BY id LIMIT 4");
  if (!ids) return MustName(ids.error().message, db.path(), "listing runs");
  std::vector<int64_t> found;
  while (ids->Step()) found.push_back(ids->Int(0));
  for (int64_t id : found) {
    if (id == 0) continue;  // 0 asks for the newest run: done above
    if (std::string b = AnalyzeRun(db, id); !b.empty()) return b;
  }
  return "";
}

}  // namespace

std::string MustName(const std::string& message, const std::string& name, const char* what) {
  if (message.find(name) != std::string::npos) return "";
  return std::string(what) + " refused an input without naming it: " + message;
}

std::string ScratchPath(const std::string& name) { return ScratchDir() + "/" + name; }

std::string ScratchInput(const std::string& name, const uint8_t* data, size_t size) {
  std::string path = ScratchPath(name);
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) unlink((path + suffix).c_str());
  WriteFile(path, data, size);
  return path;
}

std::string PlanInput(const uint8_t* data, size_t size) {
  const std::string name = ScratchInput("input.plan", data, size);
  auto parsed = ParsePlan(std::string(reinterpret_cast<const char*>(data), size), name);
  auto read = ReadPlan(name);
  if (parsed.ok() != read.ok()) return "ParsePlan and ReadPlan disagree on whether the input is a plan";
  if (!parsed) {
    if (std::string b = MustName(parsed.error().message, name, "ParsePlan"); !b.empty()) return b;
    return MustName(read.error().message, name, "ReadPlan");
  }
  const Plan& plan = parsed.value();
  if (!(read.value() == plan)) return "ReadPlan and ParsePlan read different plans from the same bytes";
  auto again = ParsePlan(SerializePlan(plan), name);
  if (!again) return "an accepted plan does not parse after writing it back: " + again.error().message;
  if (!(again.value() == plan)) return "an accepted plan changes when written back and read again";
  // What plan-show and the replayer compute from a plan they accepted.
  (void)ReplayOrder(plan);
  (void)ReplayListing(plan);
  (void)PlanJson(plan);
  auto merged = MergePlans({plan, plan});
  if (merged.ok()) {
    Status st = CheckPlan(merged.value(), "the merged plan");
    if (!st.ok()) return "merging an accepted plan with itself breaks an invariant: " + st.error().message;
  }
  return "";
}

std::string ProfileDbInput(const uint8_t* data, size_t size) {
  const std::string path = ScratchInput("input.db", data, size);
  // Read-only first (every analysis), then as collect opens it (which may
  // create the schema or migrate: it writes).
  for (DbMode mode : {DbMode::kReadOnly, DbMode::kCreateOrAppend}) {
    auto db = OpenProfileDb(path, mode);
    if (!db) {
      if (std::string b = MustName(db.error().message, path, "OpenProfileDb"); !b.empty()) return b;
      continue;
    }
    if (std::string b = AnalyzeAll(db.value()); !b.empty()) return b;
  }
  return "";
}

}  // namespace syspgo::fuzz
