//===- prefetch.cc - replay a prefetch plan into the page cache ------------===//
//
// How the pages are read, and why, for a range of an evicted file longer
// than the device's readahead window:
// - readahead(2) and POSIX_FADV_WILLNEED return after queueing I/O: right
//   after the call no page of the range is resident yet, and only the
//   first readahead window ever becomes resident. Neither is reliable
//   alone, and neither says when the data has arrived.
// - pread() is synchronous but the kernel's own readahead adds a window
//   past the range, which the plan did not ask for.
// - pread() on a descriptor marked POSIX_FADV_RANDOM reads exactly the
//   range, and every page is resident when it returns.
// - Issuing POSIX_FADV_WILLNEED on a chunk (kPrefetchMaxChunk at most,
//   inside the window) and then pread()ing through it with a small reused
//   buffer is the fastest of these with a few threads: the whole chunk is
//   queued at once, and the pread waits for it.
// So: FADV_RANDOM per descriptor, WILLNEED per chunk, then pread. The copy
// into the buffer costs little next to the disk and buys exactness and a
// completion signal. WILLNEED queues at most the device's readahead window;
// on a device whose window is smaller than a chunk, the pread fetches the
// rest, and without FADV_RANDOM it would add a window past the chunk. WILLNEED
// is issued ahead of the reads, for every chunk within the budget of the
// one being read (QueueUpTo): a cold start's plan is hundreds of extents a
// few pages long, and with one chunk per thread in flight the disk sits idle
// between them. The bytes in flight stay within the budget plus a chunk per
// thread.
#include "optimize/prefetch.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/files.h"
#include "common/identity.h"
#include "common/util.h"

namespace syspgo {
namespace {

constexpr uint64_t kMaxBuffer = 256 << 10;  // per-thread copy buffer, stays in cache

struct Chunk {
  uint32_t file = 0;
  uint64_t offset = 0, length = 0;
  bool first_of_extent = false;
};

// The plan's extents in replay order, each within its file's recorded size
// (ExtentBytesWithin), cut into chunks of at most `max` bytes numbered from
// 0. Only the extents are kept, with the number of the first chunk and of
// the first byte of each: a chunk is worked out when asked for. A plan is
// outside input, and one claiming a file of 2^62 bytes with an extent to
// match would otherwise ask for 2^40 chunk entries up front (std::bad_alloc
// before any file was opened, let alone found to differ from the plan).
class ChunkIndex {
 public:
  ChunkIndex(const Plan& plan, uint64_t max) : max_(max) {
    std::vector<bool> listed(plan.files.size());
    for (const PlanStep& s : ReplayOrder(plan)) {
      const PlanFile& f = plan.files[s.file];
      const PlanExtent& e = f.extents[s.extent];
      uint64_t length = ExtentBytesWithin(e, f.fingerprint.size);
      if (length == 0) continue;
      runs_.push_back({s.file, e.offset, length, chunks_, bytes_});
      chunks_ += (length - 1) / max_ + 1;
      bytes_ += std::min(length, UINT64_MAX - bytes_);  // saturates: claimed sizes may sum past 2^64
      if (!listed[s.file]) listed[s.file] = true, file_order_.push_back(s.file);
    }
  }

  uint64_t size() const { return chunks_; }

  Chunk At(uint64_t i) const {
    const Run& r = RunOf(i);
    uint64_t off = (i - r.first_chunk) * max_;
    return {r.file, r.offset + off, std::min(max_, r.length - off), off == 0};
  }

  // One past the last chunk whose bytes from chunk i's start fit `budget`;
  // always more than i, so that a chunk is queued before it is read.
  uint64_t Ahead(uint64_t i, uint64_t budget) const {
    uint64_t start = BytesBefore(i), lo = i + 1, hi = chunks_;
    while (lo < hi) {  // the last j in [lo, hi] with BytesBefore(j) - start <= budget
      uint64_t mid = lo + (hi - lo + 1) / 2;
      if (BytesBefore(mid) - start <= budget) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  // The first chunk by which `bytes` of the plan (in replay order) are
  // covered, or size() when the plan is shorter.
  uint64_t Covering(uint64_t bytes) const {
    uint64_t lo = 0, hi = chunks_;
    while (lo < hi) {
      uint64_t mid = lo + (hi - lo) / 2;
      if (BytesBefore(mid) >= bytes) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  // One past the last chunk of chunk i's extent: where the work goes on
  // when the file is skipped, so that a skipped claim of 2^62 bytes costs
  // no more time than memory.
  uint64_t ExtentEnd(uint64_t i) const {
    const Run& r = RunOf(i);
    return r.first_chunk + (r.length - 1) / max_ + 1;
  }

  // The files with something to read, in the order the chunks reach them.
  const std::vector<uint32_t>& file_order() const { return file_order_; }

 private:
  struct Run {  // one extent, in replay order
    uint32_t file;
    uint64_t offset, length;
    uint64_t first_chunk, first_byte;
  };

  const Run& RunOf(uint64_t chunk) const {
    auto it = std::upper_bound(runs_.begin(), runs_.end(), chunk,
                               [](uint64_t c, const Run& r) { return c < r.first_chunk; });
    return *std::prev(it);
  }

  // Bytes of the chunks before chunk i (i <= size()): within an extent,
  // every chunk but the last is `max_` long.
  uint64_t BytesBefore(uint64_t i) const {
    if (i >= chunks_) return bytes_;
    const Run& r = RunOf(i);
    return r.first_byte + std::min((i - r.first_chunk) * max_, UINT64_MAX - r.first_byte);
  }

  uint64_t max_;
  std::vector<Run> runs_;
  std::vector<uint32_t> file_order_;
  uint64_t chunks_ = 0, bytes_ = 0;
};

struct Sizing {
  unsigned threads;
  uint64_t chunk;
  uint64_t budget;  // bytes queued ahead of the reads
};

Sizing Size(const PrefetchOptions& o) {
  uint64_t budget = std::clamp<uint64_t>(o.budget_bytes, kPlanPageSize, kPrefetchMaxBudget);
  unsigned threads = std::clamp<unsigned>(o.threads, 1, kPrefetchMaxThreads);
  threads = static_cast<unsigned>(std::min<uint64_t>(threads, budget / kPlanPageSize));
  uint64_t chunk = std::min(kPrefetchMaxChunk, budget / threads) / kPlanPageSize * kPlanPageSize;
  return {threads, chunk, budget};
}

// While it lives (and `on`), the calling thread's I/O is in the idle class
// (ioprio_set(2) sets one thread's). With mq-deadline and BFQ, the
// scheduler then dispatches any other task's read first: a read the
// command makes for a page the plan missed, or has queued but not sent
// yet, goes past the replay's queue instead of waiting behind up to a
// budget of it (bench/RESULTS.md, coldstart: *plan, bare* reads in the
// command's class). A disk without a scheduler
// ("none", common for NVMe) dispatches in arrival order whatever the class.
class IdleIo {
 public:
  explicit IdleIo(bool on) {
    if (!on) return;
    old_ = static_cast<int>(syscall(SYS_ioprio_get, kWhoProcess, 0));
    if (old_ >= 0 && syscall(SYS_ioprio_set, kWhoProcess, 0, kIdle) != 0) old_ = -1;
  }
  ~IdleIo() {
    if (old_ >= 0) syscall(SYS_ioprio_set, kWhoProcess, 0, old_);
  }
  IdleIo(const IdleIo&) = delete;
  IdleIo& operator=(const IdleIo&) = delete;

 private:
  static constexpr int kWhoProcess = 1;   // IOPRIO_WHO_PROCESS: one thread, 0 = the caller
  static constexpr int kIdle = 3 << 13;   // IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)
  int old_ = -1;
};

// Under sudo every file is opened, and every path looked up, with the
// invoking user's rights (common/identity.h): a plan is outside input and
// could list /etc/shadow, and reading it would at least reveal through the
// page cache that it was touched. It may also name a FIFO, which a plain
// open would wait on forever: kOpenUntrustedFlags, and CheckFile refuses
// anything but a regular file. Fails closed (EPERM) if the rights could not
// be taken on.
int OpenForReading(const std::string& path) { return OpenAsUser(path, kOpenUntrustedFlags); }

// The paths execvp(3) tries for `command` with `path` as PATH: the command
// itself when it names a path (holds a '/'), else each directory of PATH
// (an empty entry is the current directory) joined with it.
std::vector<std::string> CommandSearch(const std::string& command, const std::string& path) {
  if (command.empty()) return {};
  if (command.find('/') != std::string::npos) return {command};
  std::vector<std::string> out;
  size_t from = 0;
  for (;;) {
    size_t colon = path.find(':', from);
    std::string dir = path.substr(from, colon == std::string::npos ? std::string::npos : colon - from);
    out.push_back((dir.empty() ? std::string(".") : dir) + "/" + command);
    if (colon == std::string::npos) break;
    from = colon + 1;
  }
  return out;
}

// PATH as execvp(3) reads it: the system default when it is unset.
std::string ExecPath() {
  if (const char* env = getenv("PATH")) return env;
  std::string path(confstr(_CS_PATH, nullptr, 0), '\0');
  if (!path.empty()) confstr(_CS_PATH, path.data(), path.size());
  path.resize(strlen(path.c_str()));
  return path;
}

// Programs that run a command named later on their line, through
// execvp(3), after their own options.
bool IsWrapper(const std::string& arg0) {
  static const std::set<std::string> kWrappers = {"chrt",   "env",    "ionice",  "nice", "nohup",
                                                  "setsid", "stdbuf", "taskset", "time", "timeout"};
  size_t slash = arg0.rfind('/');
  return kWrappers.count(slash == std::string::npos ? arg0 : arg0.substr(slash + 1)) > 0;
}

// Looks up (stat, as the invoking user) `argv`'s PATH search up to the first
// file exec can run, as execvp(3) makes it. When argv[0] is a wrapper
// (IsWrapper), its command comes later on the line, after options whose
// arguments only the wrapper knows (`nice -n 5 cc`, `time -f %e cc`,
// `env X=1 cc`). So each later argument that is no option (a leading '-') and no
// assignment (an '=') is searched in turn, up to the first that names a file
// exec can run. A word that is no command costs misses in directories the
// search before it has just read. `env PATH=...` sets the PATH of the
// searches after it; a wrapper found in turn (`env nice cc`) is followed the
// same way. Adds the paths looked up to *planned and those that resolved to
// *found.
void ResolveCommandSearch(const std::vector<std::string>& argv, const std::atomic<bool>* cancel, size_t* planned,
                          size_t* found) {
  ActAsUser ids;
  if (argv.empty() || !ids.ok()) return;
  std::string path = ExecPath();
  auto search = [&](const std::string& command) {
    std::vector<std::string> tries = CommandSearch(command, path);
    *planned += tries.size();
    for (const std::string& t : tries) {
      if (cancel && cancel->load(std::memory_order_relaxed)) return false;
      struct stat sb {};
      if (stat(t.c_str(), &sb) != 0) continue;
      ++*found;
      if (S_ISREG(sb.st_mode) && (sb.st_mode & 0111)) return true;  // else execvp goes on
    }
    return false;
  };
  search(argv[0]);
  bool wrapped = IsWrapper(argv[0]);
  for (size_t i = 1; wrapped && i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.empty() || a[0] == '-') continue;
    if (size_t eq = a.find('='); eq != std::string::npos) {
      if (a.compare(0, eq, "PATH") == 0) path = a.substr(eq + 1);
      continue;
    }
    if (search(a)) wrapped = IsWrapper(a);
  }
}

// Resolves the plan's lookups (stat, as the invoking user), `threads` at a
// time, and returns how many resolved to something. A path walk on a cold
// start reads a block per directory and inode it misses, one after another;
// several walks at once keep more of those reads in flight.
// With idle_io, the walks' reads are in the idle I/O class.
size_t ResolveLookups(const std::vector<PlanLookup>& lookups, unsigned threads, const std::atomic<bool>* cancel,
                      bool idle_io = false) {
  std::atomic<size_t> next{0}, found{0};
  auto walk = [&] {
    IdleIo idle(idle_io);
    ActAsUser ids;
    if (!ids.ok()) return;
    for (;;) {
      if (cancel && cancel->load(std::memory_order_relaxed)) return;
      size_t i = next.fetch_add(1);
      if (i >= lookups.size()) return;
      struct stat sb {};
      if (stat(lookups[i].path.c_str(), &sb) == 0) found.fetch_add(1);
    }
  };
  threads = static_cast<unsigned>(std::min<size_t>(threads, lookups.size()));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(walk);
  if (threads > 0) walk();
  for (auto& t : pool) t.join();
  return found.load();
}

// Which lookups to resolve before the first extent is queued (*first) and
// which beside the reads (*beside), each in first-touch order. A path walk
// on a cold start reads a block per directory and inode it misses, one
// after another; resolved all first, the hundreds of lookups of a start
// such as `python3 -c 'import numpy'` hold it up, though most of them come
// after its first reads. So with a command,
// those it made by the time of the lead's last first touch (the lead
// is queued before it starts) go first, and the rest run beside the reads,
// in their I/O class, so that the command's own reads pass them. Without a
// command nothing waits on them, and all run beside the reads.
void SplitLookups(const Plan& plan, const PrefetchOptions& options, bool with_command, std::vector<PlanLookup>* first,
                  std::vector<PlanLookup>* beside) {
  uint64_t until = 0;
  if (with_command) {
    // A lead of the whole plan (or an empty plan): the command starts after
    // everything, so every lookup goes first.
    uint64_t bytes = 0;
    until = UINT64_MAX;
    for (const PlanStep& st : ReplayOrder(plan)) {
      const PlanExtent& e = plan.files[st.file].extents[st.extent];
      bytes += e.length;
      if (bytes >= options.lead_bytes) {
        until = e.first_touch_ns;  // the steps are in first-touch order
        break;
      }
    }
  }
  for (const PlanLookup& l : plan.lookups) (with_command && l.first_touch_ns <= until ? first : beside)->push_back(l);
  auto by_time = [](const PlanLookup& a, const PlanLookup& b) { return a.first_touch_ns < b.first_touch_ns; };
  std::stable_sort(first->begin(), first->end(), by_time);
  std::stable_sort(beside->begin(), beside->end(), by_time);
}

// Opening a file and checking its fingerprint, for Replay and DryRun alike.
// On success *fd is open (the caller closes it). Anything but a regular
// file is refused before a byte of it is read: a plan is outside input.
PrefetchFileResult CheckFile(const PlanFile& f, int* fd) {
  PrefetchFileResult r;
  *fd = OpenForReading(f.path);
  if (*fd < 0) {
    int e = errno;
    r.outcome = e == ENOENT || e == ENOTDIR ? FileOutcome::kMissing : FileOutcome::kFailed;
    r.reason = r.outcome == FileOutcome::kMissing ? "it does not exist" : DescribeOpenError(f.path, e, "it");
    if (auto user = InvokingUserOrNull(); e == EACCES && user.ok() && *user)
      r.reason += " (opened as uid " + std::to_string((*user)->uid) + ", the user who ran sudo)";
    return r;
  }
  if (Status regular = RequireRegularFile(*fd, "it"); !regular.ok()) {  // else clears O_NONBLOCK
    close(*fd);
    *fd = -1;
    r.outcome = FileOutcome::kFailed;
    r.reason = regular.error().message;
    return r;
  }
  auto now = ComputeFingerprint(*fd, f.path, &f.fingerprint);
  std::string why = now.ok() ? DescribeMismatch(f.fingerprint, now.value()) : "";
  if (!now.ok() || !why.empty()) {
    close(*fd);
    *fd = -1;
    r.outcome = now.ok() ? FileOutcome::kChanged : FileOutcome::kFailed;
    r.reason = now.ok() ? "changed since the plan was made: " + why : now.error().message;
    return r;
  }
  r.outcome = FileOutcome::kRead;
  return r;
}

std::string SkipWarning(const PlanFile& f, const PrefetchFileResult& r) {
  return "skipping " + f.path + " (" + OutcomeName(r.outcome) + "): " + r.reason;
}

void Tally(PrefetchStats& s) {
  for (const auto& f : s.files) {
    s.bytes_read += f.bytes_read;
    switch (f.outcome) {
      case FileOutcome::kRead: ++s.files_read; break;
      case FileOutcome::kChanged: ++s.files_changed; break;
      case FileOutcome::kMissing: ++s.files_missing; break;
      case FileOutcome::kFailed: ++s.files_failed; break;
      case FileOutcome::kNotReached: ++s.files_not_reached; break;
    }
  }
}

class Replayer {
 public:
  Replayer(const Plan& plan, const PrefetchOptions& options, Sizing sizing)
      : plan_(plan), options_(options), sizing_(sizing), chunks_(plan, sizing.chunk),
        slots_(plan.files.size()), results_(plan.files.size()),
        lead_end_(std::max<uint64_t>(chunks_.Covering(options.lead_bytes), 1)) {}

  ~Replayer() {
    for (auto& s : slots_)
      if (s.fd >= 0) close(s.fd);
  }

  std::vector<PrefetchFileResult> Run() {
    if (chunks_.size() == 0) SignalQueued();
    std::vector<std::thread> workers;
    for (unsigned t = 1; t < sizing_.threads; ++t)
      workers.emplace_back([this] {
        IdleIo idle(options_.idle_io);
        CheckAhead();
        Work();
      });
    {
      IdleIo idle(options_.idle_io);
      Work();
    }
    for (auto& w : workers) w.join();
    SignalQueued();  // cancelled before the first window was queued
    return std::move(results_);
  }

  uint64_t extents_read() const { return extents_read_; }

 private:
  struct Slot {
    std::mutex mu;      // held while the file is checked, so it is checked once
    bool checked = false;
    bool failed = false;  // a read failed: the rest of the file is skipped
    int fd = -1;          // open and matching, else -1
  };

  // The other threads check every file's fingerprint first, in the order
  // the chunks reach them, while the first thread starts queueing. A check
  // is a few O_DIRECT reads; made on first use, they would wait behind the
  // queued reads, one file at a time, and hold up the queueing of that
  // file's chunks.
  void CheckAhead() {
    for (;;) {
      if (options_.cancel && options_.cancel->load(std::memory_order_relaxed)) return;
      size_t i = next_check_.fetch_add(1);
      if (i >= chunks_.file_order().size()) return;
      Open(chunks_.file_order()[i]);
    }
  }

  void Work() {
    std::unique_ptr<char[]> buf(new char[std::min(sizing_.chunk, kMaxBuffer)]);
    for (;;) {
      if (options_.cancel && options_.cancel->load(std::memory_order_relaxed)) return;
      uint64_t i = next_.fetch_add(1);
      if (i >= chunks_.size()) return;
      QueueUpTo(chunks_.Ahead(i, sizing_.budget));
      const Chunk c = chunks_.At(i);
      int fd = Open(c.file);
      if (fd >= 0) Read(fd, c, buf.get());
      else SkipTo(next_, chunks_.ExtentEnd(i));
    }
  }

  // Moves `cursor` on to `end` unless it is there already: the rest of an
  // extent of a file that is skipped (changed, missing, failed) has
  // nothing to queue or read.
  static void SkipTo(std::atomic<uint64_t>& cursor, uint64_t end) {
    uint64_t now = cursor.load(std::memory_order_relaxed);
    while (now < end && !cursor.compare_exchange_weak(now, end)) {
    }
  }

  // Queues (WILLNEED, which returns once the I/O is submitted) every chunk
  // before `end` not queued yet, each by one thread. The reads then find
  // their chunk arriving or arrived, and the device sees up to the budget
  // in flight instead of one chunk per thread: the plan's extents are
  // mostly small, and one at a time per thread left the disk idle between
  // them.
  void QueueUpTo(uint64_t end) {
    uint64_t k = queued_.load(std::memory_order_relaxed);
    while (k < end) {
      if (!queued_.compare_exchange_weak(k, k + 1)) continue;
      const Chunk c = chunks_.At(k);
      int fd = Open(c.file);
      uint64_t done = k + 1;  // chunks before this one are queued, or this thread's to skip
      if (fd >= 0) {
        posix_fadvise(fd, static_cast<off_t>(c.offset), static_cast<off_t>(c.length), POSIX_FADV_WILLNEED);
      } else {
        done = chunks_.ExtentEnd(k);
        SkipTo(queued_, done);
      }
      if (done >= lead_end_) SignalQueued();
      k = queued_.load(std::memory_order_relaxed);
    }
  }

  void SignalQueued() {
    if (options_.on_queued && !signalled_.exchange(true)) options_.on_queued();
  }

  int Open(uint32_t file) {
    Slot& s = slots_[file];
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.checked) {
      s.checked = true;
      results_[file] = CheckFile(plan_.files[file], &s.fd);
      if (s.fd >= 0) posix_fadvise(s.fd, 0, 0, POSIX_FADV_RANDOM);  // no readahead past the plan
      else Warn(SkipWarning(plan_.files[file], results_[file]));
    }
    return s.failed ? -1 : s.fd;
  }

  void Read(int fd, const Chunk& c, char* buf) {
    uint64_t step = std::min(sizing_.chunk, kMaxBuffer), done = 0;
    while (done < c.length) {
      ssize_t n = pread(fd, buf, std::min(step, c.length - done), static_cast<off_t>(c.offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Fail(c.file, "read failed at offset " + std::to_string(c.offset + done) + ": " + strerror(errno));
      if (n == 0) break;  // end of file inside the last page-rounded extent
      done += static_cast<uint64_t>(n);
    }
    std::lock_guard<std::mutex> lock(slots_[c.file].mu);
    results_[c.file].bytes_read += done;
    if (c.first_of_extent) ++extents_read_;
  }

  void Fail(uint32_t file, const std::string& why) {
    Slot& s = slots_[file];
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.failed) return;  // another chunk of it failed first
    s.failed = true;
    results_[file].outcome = FileOutcome::kFailed;
    results_[file].reason = why;
    Warn(SkipWarning(plan_.files[file], results_[file]));
  }

  void Warn(const std::string& msg) {
    if (!options_.warn) return;
    std::lock_guard<std::mutex> lock(warn_mu_);
    options_.warn(msg);
  }

  const Plan& plan_;
  const PrefetchOptions& options_;
  const Sizing sizing_;
  const ChunkIndex chunks_;
  std::vector<Slot> slots_;
  std::vector<PrefetchFileResult> results_;
  std::atomic<uint64_t> next_{0};
  std::atomic<size_t> next_check_{0};  // into chunks_.file_order()
  std::atomic<uint64_t> queued_{0};
  std::atomic<bool> signalled_{false};
  const uint64_t lead_end_;  // chunks before this one are the lead
  std::atomic<uint64_t> extents_read_{0};
  std::mutex warn_mu_;
};

}  // namespace

const char* OutcomeName(FileOutcome o) {
  switch (o) {
    case FileOutcome::kRead: return "read";
    case FileOutcome::kChanged: return "changed";
    case FileOutcome::kMissing: return "missing";
    case FileOutcome::kFailed: return "failed";
    case FileOutcome::kNotReached: return "not reached";
  }
  return "?";
}

PrefetchStats Replay(const Plan& plan, const PrefetchOptions& options) {
  uint64_t start = NowNs(CLOCK_MONOTONIC);
  Sizing sizing = Size(options);
  PrefetchStats s;
  std::vector<PlanLookup> first, beside;
  std::atomic<size_t> found_beside{0};
  std::thread walks;
  if (options.lookups) {
    size_t searched = 0;
    ResolveCommandSearch(options.command, options.cancel, &searched, &s.lookups_found);
    SplitLookups(plan, options, static_cast<bool>(options.on_queued), &first, &beside);
    s.lookups_planned = searched + plan.lookups.size();
    s.lookups_first = searched + first.size();
    s.lookups_found += ResolveLookups(first, sizing.threads, options.cancel);
    s.lookup_first_ns = s.lookup_ns = NowNs(CLOCK_MONOTONIC) - start;
    if (!beside.empty())
      walks = std::thread([&] {
        found_beside = ResolveLookups(beside, sizing.threads, options.cancel, options.idle_io);
        s.lookup_ns = NowNs(CLOCK_MONOTONIC) - start;
      });
  }
  Replayer replayer(plan, options, sizing);
  s.files = replayer.Run();
  if (walks.joinable()) walks.join();
  s.lookups_found += found_beside.load();
  s.extents_read = replayer.extents_read();
  s.bytes_planned = plan.Bytes();
  s.threads = sizing.threads;
  s.chunk_bytes = sizing.chunk;
  Tally(s);
  s.elapsed_ns = NowNs(CLOCK_MONOTONIC) - start;
  return s;
}

std::string PrefetchStatsJson(const Plan& plan, const PrefetchStats& s, const nlohmann::ordered_json* extra) {
  nlohmann::ordered_json j = {
      {"elapsed_ns", s.elapsed_ns},
      {"threads", s.threads},
      {"chunk_bytes", s.chunk_bytes},
      {"bytes_planned", s.bytes_planned},
      {"bytes_read", s.bytes_read},
      {"extents_read", s.extents_read},
      {"lookups",
       {{"planned", s.lookups_planned},
        {"found", s.lookups_found},
        {"ns", s.lookup_ns},
        {"first", s.lookups_first},
        {"first_ns", s.lookup_first_ns}}},
      {"files_read", s.files_read},
      {"files_changed", s.files_changed},
      {"files_missing", s.files_missing},
      {"files_failed", s.files_failed},
      {"files_not_reached", s.files_not_reached}};
  if (extra)
    for (const auto& [key, value] : extra->items()) j[key] = value;
  auto& files = j["files"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < plan.files.size() && i < s.files.size(); ++i) {
    const PrefetchFileResult& f = s.files[i];
    files.push_back({{"path", plan.files[i].path},
                     {"outcome", OutcomeName(f.outcome)},
                     {"reason", f.reason},
                     {"bytes_read", f.bytes_read},
                     {"bytes_planned", plan.files[i].Bytes()}});
  }
  // Paths are bytes: invalid UTF-8 becomes U+FFFD rather than an exception.
  return JsonDocument(j);
}

PrefetchStats DryRun(const Plan& plan, const PrefetchOptions& options, std::string* listing) {
  uint64_t start = NowNs(CLOCK_MONOTONIC);
  Sizing sizing = Size(options);
  PrefetchStats s;
  s.lookups_planned = plan.lookups.size();
  s.files.resize(plan.files.size());
  for (size_t i = 0; i < plan.files.size(); ++i) {
    int fd = -1;
    s.files[i] = CheckFile(plan.files[i], &fd);
    if (fd >= 0) close(fd);
    if (fd < 0 && options.warn) options.warn(SkipWarning(plan.files[i], s.files[i]));
  }
  std::vector<bool> include(plan.files.size());
  for (const PlanStep& step : ReplayOrder(plan)) {
    PrefetchFileResult& r = s.files[step.file];
    if (r.outcome != FileOutcome::kRead) continue;
    include[step.file] = true;
    const PlanExtent& e = plan.files[step.file].extents[step.extent];
    // Count what the reads would return: nothing past end of file.
    uint64_t size = plan.files[step.file].fingerprint.size;
    r.bytes_read += e.offset >= size ? 0 : std::min(e.length, size - e.offset);
    ++s.extents_read;
  }
  s.bytes_planned = plan.Bytes();
  s.threads = sizing.threads;
  s.chunk_bytes = sizing.chunk;
  Tally(s);
  if (listing) {
    *listing = ReplayListing(plan, include);
    if (!plan.lookups.empty()) {
      std::vector<PlanLookup> first, beside;
      SplitLookups(plan, options, !options.command.empty(), &first, &beside);
      *listing += "would look up " + std::to_string(plan.lookups.size()) + " paths, " +
                  std::to_string(first.size()) + " of them before the first read\n";
    }
    *listing += "would read " + std::to_string(s.bytes_read) + " bytes (" + FormatBytes(s.bytes_read) + ") in " +
                std::to_string(s.extents_read) + " extents of " + std::to_string(s.files_read) + " files; skip " +
                std::to_string(plan.files.size() - s.files_read) + " files\n";
  }
  s.elapsed_ns = NowNs(CLOCK_MONOTONIC) - start;
  return s;
}

// ---- Holding the pages (--hold) ----------------------------------------------

HeldPages::HeldPages(HeldPages&& o) noexcept : bytes(o.bytes), files(o.files), maps_(std::move(o.maps_)) {
  o.maps_.clear();
}

HeldPages::~HeldPages() {
  for (auto [addr, len] : maps_) munmap(addr, len);
}

namespace {

// Bytes mlock would count for the planned extents of the files `replayed`
// read: whole pages, within each file's recorded size.
uint64_t BytesToLock(const Plan& plan, const PrefetchStats& replayed) {
  uint64_t total = 0;
  for (size_t i = 0; i < plan.files.size() && i < replayed.files.size(); ++i) {
    if (replayed.files[i].outcome != FileOutcome::kRead) continue;
    for (const PlanExtent& x : plan.files[i].extents) {
      uint64_t n = ExtentBytesWithin(x, plan.files[i].fingerprint.size);
      total += (n + kPlanPageSize - 1) / kPlanPageSize * kPlanPageSize;
    }
  }
  return total;
}

// The locked-memory limit in force, for messages: "8.0 MiB" or "unlimited".
std::string MemlockLimitText() {
  struct rlimit lim {};
  getrlimit(RLIMIT_MEMLOCK, &lim);
  return lim.rlim_cur == RLIM_INFINITY ? "unlimited" : FormatBytes(static_cast<uint64_t>(lim.rlim_cur));
}

// What to do when the pages do not fit the limit, after the sentence that says so.
constexpr char kMemlockAdvice[] =
    ": hold a smaller plan, raise the limit for the user (ulimit -l, or memlock in /etc/security/limits.conf), "
    "or drop --hold";

// A process without root's rights (the holder under sudo is the user) may
// lock at most RLIMIT_MEMLOCK, and the kernel enforces it; refused here
// first, before anything is mapped, with what to do. Root keeps its
// CAP_IPC_LOCK, and the kernel's own check.
Status CheckMemlockLimit(const Plan& plan, const PrefetchStats& replayed) {
  if (geteuid() == 0) return {};
  struct rlimit lim {};
  if (getrlimit(RLIMIT_MEMLOCK, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return {};
  uint64_t need = BytesToLock(plan, replayed);
  if (need <= lim.rlim_cur) return {};
  return MakeError("cannot hold the plan's pages in memory: they take " + FormatBytes(need) +
                       ", past the locked-memory limit of uid " + std::to_string(getuid()) + " (RLIMIT_MEMLOCK, " +
                       MemlockLimitText() + "); nothing was locked" + kMemlockAdvice,
                   ENOMEM);
}

}  // namespace

Result<HeldPages> HoldPlanPages(const Plan& plan, const PrefetchStats& replayed) {
  SYSPGO_TRY(CheckMemlockLimit(plan, replayed));
  HeldPages held;
  for (size_t i = 0; i < plan.files.size() && i < replayed.files.size(); ++i) {
    if (replayed.files[i].outcome != FileOutcome::kRead) continue;
    const PlanFile& f = plan.files[i];
    int fd = -1;
    CheckFile(f, &fd);  // as the replay did; changed since, or gone: nothing of it to hold
    if (fd < 0) continue;
    // Only whole pages of the file can be locked: past its end a mapping
    // has none. The end is the smaller of the recorded size and the real
    // one (a file may have shrunk since it was checked), never a length
    // the plan claims.
    struct stat st {};
    uint64_t size = fstat(fd, &st) == 0 ? std::min<uint64_t>(f.fingerprint.size, st.st_size) : 0;
    size_t len = static_cast<size_t>(size == 0 ? 0 : (size - 1) / kPlanPageSize * kPlanPageSize + kPlanPageSize);
    void* m = len ? mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    int e = errno;
    close(fd);
    if (len == 0) continue;
    if (m == MAP_FAILED) return MakeError("cannot map " + f.path + " to hold its pages: " + strerror(e), e);
    held.maps_.push_back({m, len});
    for (const PlanExtent& x : f.extents) {
      size_t n = static_cast<size_t>(ExtentBytesWithin(x, size));
      if (n == 0) continue;
      if (mlock(static_cast<char*>(m) + x.offset, n) == 0) {
        held.bytes += n;
        continue;
      }
      e = errno;
      return MakeError("cannot lock the pages of " + f.path + " in memory (the plan holds " +
                           FormatBytes(plan.Bytes()) + "): " + strerror(e) + "; locked memory is limited to " +
                           MemlockLimitText() + " here (ulimit -l), the RLIMIT_MEMLOCK of this process" +
                           kMemlockAdvice,
                       e);
    }
    ++held.files;
  }
  return held;
}

namespace {

// What the holder tells its parent through the report pipe: this, then
// (when it could not hold the pages) the error's message.
struct HolderReport {
  int error = 0;  // 0: held; else the errno of the error, or -1 for none
  uint64_t bytes = 0;
  uint64_t files = 0;
};

// In the holder: its stdin, stdout and stderr /dev/null, and nothing else
// of ours open but *report, which moves to descriptor 3. 0, or the errno of
// the step that failed (*report is open either way).
int KeepOnly(int* report) {
  int high = fcntl(*report, F_DUPFD, 3);  // out of the way of the three below
  if (high < 0) return errno;
  *report = high;
  int null = open("/dev/null", O_RDWR);
  if (null < 0) return errno;
  for (int fd = 0; fd <= 2; ++fd)
    if (dup2(null, fd) != fd) return errno;
  if (high != 3) {
    if (dup2(high, 3) != 3) return errno;
    *report = 3;
  }
  return close_range(4, ~0U, 0) == 0 ? 0 : errno;
}

// Under sudo the holder becomes the user who ran it, for good, before it
// locks anything: the kernel then holds it to their locked-memory limit
// (RLIMIT_MEMLOCK, which the process sudo started inherits), and the user
// can end it with kill(1) as they could any process of theirs.
Status BecomeHolder() {
  auto user = InvokingUserOrNull();
  if (!user.ok()) return user.error();
  if (!*user) return {};
  if (int e = BecomeUserInChild(**user))
    return MakeError("the holding process cannot become uid " + std::to_string((*user)->uid) +
                         " (the user who ran sudo): " + strerror(e) + "; nothing was locked",
                     e);
  return {};
}

[[noreturn]] void Hold(const Plan& plan, const PrefetchStats& replayed, unsigned seconds, int report) {
  setsid();
  HolderReport r;
  std::string message;
  std::optional<HeldPages> held;  // for as long as this process lives
  if (int e = KeepOnly(&report)) {
    r.error = e;
    message = std::string("the holding process cannot close the descriptors it inherited: ") + strerror(e);
  } else if (Status st = BecomeHolder(); !st.ok()) {
    r.error = st.error().code ? st.error().code : -1;
    message = st.error().message;
  } else if (Result<HeldPages> h = HoldPlanPages(plan, replayed); h.ok()) {
    r.bytes = h->bytes;
    r.files = h->files;
    held.emplace(std::move(*h));
  } else {
    r.error = h.error().code ? h.error().code : -1;
    message = h.error().message;
  }
  std::string out(reinterpret_cast<const char*>(&r), sizeof r);
  out += message;
  for (size_t done = 0; done < out.size();) {
    ssize_t n = write(report, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(1);
    done += static_cast<size_t>(n);
  }
  close(report);
  if (!held) _exit(1);
  struct timespec left {static_cast<time_t>(seconds), 0};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
  _exit(0);
}

}  // namespace

Result<PageHolder> StartPageHolder(const Plan& plan, const PrefetchStats& replayed, unsigned seconds) {
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return MakeError(std::string("cannot create a pipe: ") + strerror(errno), errno);
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(report[0]);
    close(report[1]);
    return MakeError(std::string("cannot start the holding process: ") + strerror(e), e);
  }
  if (pid == 0) {
    close(report[0]);
    Hold(plan, replayed, seconds, report[1]);
  }
  close(report[1]);
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = read(report[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  close(report[0]);
  HolderReport r;
  if (got.size() >= sizeof r) memcpy(&r, got.data(), sizeof r);
  if (got.size() < sizeof r || r.error) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    if (got.size() < sizeof r) return MakeError("the holding process ended before it held anything");
    return MakeError(got.substr(sizeof r), r.error > 0 ? r.error : 0);
  }
  return PageHolder{pid, r.bytes, static_cast<size_t>(r.files)};
}

}  // namespace syspgo
