//===- plan_replay_input.cc - a fuzzed plan replayed over real files ------===//
// The replayer behind `syspgo prefetch` (optimize/prefetch.h) on plans that
// nobody vetted. The input is a syspgo.PrefetchPlan message alone: the
// header and its checksum are added here, so that mutations reach the plan
// and not the checksum, and ParsePlan reads the result as `prefetch` reads
// a file. Its paths are then pointed at small real files of every kind in a
// scratch directory (a path whose last component names one, "/x/fifo", gets
// that one; any other gets one by its hash), and a file whose recorded inode
// is 0 gets that file's real fingerprint, so that its fuzzed extents (2^62
// bytes over 6, past the end, ...) are really read. Then the dry run, the
// replay (threads, budget and lead from the plan's creation fields) and
// --hold's locking run on it.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "fuzz/fuzz_inputs.h"
#include "optimize/plan.h"
#include "optimize/prefetch.h"

namespace syspgo::fuzz {
namespace {

struct Target {
  const char* name;   // last path component that picks it
  std::string path;
  const char* kind;   // what a refusal must name; "" for the others
  bool regular = false;
  FileFingerprint fingerprint;  // real, for regular files
  uint64_t size = 0;            // bytes; 0 for the others
};

void WriteBytes(const std::string& name, size_t n) {
  std::string bytes(n, 'x');
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<char>('a' + i % 26);
  ScratchInput(name, reinterpret_cast<const uint8_t*>(bytes.data()), n);
}

// The files, made once per process in the scratch directory. The socket
// stays bound (its descriptor open) for the life of the process.
const std::vector<Target>& Targets() {
  static const std::vector<Target> targets = [] {
    std::vector<Target> t = {{"short", ScratchPath("short"), ""},
                             {"empty", ScratchPath("empty"), ""},
                             {"pages", ScratchPath("pages"), ""},
                             {"fifo", ScratchPath("fifo"), "FIFO"},
                             {"dir", ScratchPath("dir"), "directory"},
                             {"sock", ScratchPath("sock"), "socket"},
                             {"null", "/dev/null", "character device"},
                             {"missing", ScratchPath("missing"), ""}};
    WriteBytes("short", 6);
    WriteBytes("empty", 0);
    WriteBytes("pages", 3 * kPlanPageSize + 10);
    if (mkfifo(t[3].path.c_str(), 0600) != 0 || mkdir(t[4].path.c_str(), 0700) != 0) abort();
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (s < 0 || t[5].path.size() >= sizeof addr.sun_path) abort();
    strcpy(addr.sun_path, t[5].path.c_str());
    if (bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) abort();
    for (int i = 0; i < 3; ++i) {
      auto fp = ComputeFingerprint(t[i].path);
      if (!fp) abort();
      t[i].regular = true;
      t[i].fingerprint = *fp;
      t[i].size = fp->size;
    }
    return t;
  }();
  return targets;
}

const Target& TargetFor(const std::string& path) {
  const auto& t = Targets();
  std::string last = path.substr(path.rfind('/') + 1);
  for (const Target& x : t)
    if (last == x.name) return x;
  return t[std::hash<std::string>()(path) % t.size()];
}

// The header ParsePlan expects before the message (schemas/prefetch_plan.proto).
std::string WithHeader(const uint8_t* data, size_t size) {
  uint64_t sum = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < size; ++i) sum = (sum ^ data[i]) * 0x100000001b3ULL;
  std::string out = "SYSPGOPF";
  auto le = [&](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  le(1, 4);
  le(0, 4);
  le(size, 8);
  le(sum, 8);
  return out + std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace

std::string PlanReplayInput(const uint8_t* data, size_t size) {
  auto parsed = ParsePlan(WithHeader(data, size), "fuzzed.plan");
  if (!parsed) return MustName(parsed.error().message, "fuzzed.plan", "ParsePlan");
  Plan plan = std::move(*parsed);
  std::vector<const Target*> targets;
  for (PlanFile& f : plan.files) {
    const Target& t = TargetFor(f.path);
    targets.push_back(&t);
    f.path = t.path;
    if (f.fingerprint.inode == 0 && t.regular) f.fingerprint = t.fingerprint;
  }

  PrefetchOptions o;
  o.lookups = false;   // the fuzzed lookups' paths are anywhere on this machine
  o.idle_io = false;
  o.threads = 1 + plan.creation.merged_runs % 4;
  o.budget_bytes = kPlanPageSize << (plan.creation.merged_runs / 4 % 12);
  const auto& ids = plan.creation.source_run_ids;
  o.lead_bytes = ids.empty() ? 0 : static_cast<uint64_t>(ids[0]) % (64 << 20);
  int queued = 0;
  o.on_queued = [&] { ++queued; };

  std::string listing;
  PrefetchStats dry = DryRun(plan, o, &listing);
  PrefetchStats replayed = Replay(plan, o);
  if (queued != 1) return "the replay signalled its lead " + std::to_string(queued) + " times, not once";
  for (size_t i = 0; i < plan.files.size(); ++i) {
    const Target& t = *targets[i];
    const PrefetchFileResult& d = dry.files[i];
    const PrefetchFileResult& r = replayed.files[i];
    if (*t.kind && (d.outcome != FileOutcome::kFailed || d.reason.find(t.kind) == std::string::npos))
      return "the dry run did not refuse " + t.path + " as a " + t.kind + ": " + d.reason;
    if (*t.kind && r.outcome != FileOutcome::kFailed && r.outcome != FileOutcome::kNotReached)
      return "the replay did not refuse " + t.path + " as a " + t.kind + ": " + r.reason;
    if (r.bytes_read > t.size || d.bytes_read > t.size)
      return "read " + std::to_string(r.bytes_read) + " bytes of " + t.path + ", which has " + std::to_string(t.size);
    if (r.outcome == FileOutcome::kRead && r.bytes_read != d.bytes_read)
      return "the replay read " + std::to_string(r.bytes_read) + " bytes of " + t.path + " where the dry run said " +
             std::to_string(d.bytes_read);
  }
  auto held = HoldPlanPages(plan, replayed);
  uint64_t most = 0;  // each file of the plan, whole
  for (const Target* t : targets) {
    if (!held && held.error().message.find(t->path) != std::string::npos) return "";  // refused, naming the file
    most += (t->size + kPlanPageSize - 1) / kPlanPageSize * kPlanPageSize;
  }
  if (!held) return "HoldPlanPages failed without naming a file: " + held.error().message;
  if (held->bytes > most) return "--hold locked more than the files hold";
  (void)PrefetchStatsJson(plan, replayed);
  (void)PlanJson(plan);
  return "";
}

}  // namespace syspgo::fuzz
