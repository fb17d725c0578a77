//===- prefetch_test.cc - the replayer and `syspgo prefetch` on real files ===//
//
// The replayer's promise is about the page cache, so that is what these
// tests look at: files on a real disk (/var/tmp) are evicted, the eviction
// is confirmed with mincore(2), the plan is replayed, and mincore must then
// show exactly the planned pages resident, no more and no fewer. Changed,
// missing and damaged inputs must leave the cache untouched.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <utility>

#include "common/damon.h"
#include "common/util.h"
#include "optimize/plan.h"
#include "optimize/prefetch.h"
#include "tests/test_util.h"

namespace syspgo {
namespace {

using test::TempDir;
constexpr uint64_t kPage = kPlanPageSize;

void WriteSynced(const std::string& path, uint64_t size, uint32_t seed) {
  std::string bytes(size, '\0');
  uint32_t x = seed * 2654435761u + 7;
  for (auto& c : bytes) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 24);
  }
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  ASSERT_EQ(fsync(fd), 0);
  close(fd);
}

// Drops the file's clean pages from the page cache.
void Evict(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(fdatasync(fd), 0);
  ASSERT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  close(fd);
}

// Which pages of the file are in the page cache, by mincore on a mapping
// (mapping does not fault anything in).
std::vector<bool> Resident(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << path;
  struct stat st {};
  fstat(fd, &st);
  size_t pages = (st.st_size + kPage - 1) / kPage;
  std::vector<bool> out(pages);
  if (pages == 0) {
    close(fd);
    return out;
  }
  void* m = mmap(nullptr, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  EXPECT_NE(m, MAP_FAILED) << path;
  if (m == MAP_FAILED) return out;
  std::vector<unsigned char> vec(pages);
  EXPECT_EQ(mincore(m, st.st_size, vec.data()), 0);
  munmap(m, st.st_size);
  for (size_t i = 0; i < pages; ++i) out[i] = vec[i] & 1;
  return out;
}

size_t Count(const std::vector<bool>& v) { return std::count(v.begin(), v.end(), true); }

std::vector<bool> PlannedPages(const PlanFile& f) {
  std::vector<bool> out((f.fingerprint.size + kPage - 1) / kPage);
  for (const auto& e : f.extents)
    for (uint64_t p = e.offset / kPage; p < (e.offset + e.length) / kPage && p < out.size(); ++p) out[p] = true;
  return out;
}

// Page indices where the cache differs from the plan, for failure messages.
std::string Differences(const std::vector<bool>& want, const std::vector<bool>& got) {
  std::string out;
  for (size_t i = 0; i < want.size() && out.size() < 300; ++i)
    if (want[i] != got[i]) out += std::to_string(i) + (got[i] ? "+ " : "- ");
  return out;
}

// A set of files with scattered, interleaved touches, and the plan for them.
// DAMON is stopped meanwhile (DamonPaused), unless a test is about it.
struct Workload {
  std::optional<test::DamonPaused> damon;
  TempDir dir;
  std::vector<std::string> paths;
  Plan plan;

  explicit Workload(bool pause_damon = true) {
    if (pause_damon) damon.emplace();
    const uint64_t sizes[] = {1 << 20, (3 << 20) + 123, 64 << 10, 10 << 20, (200 << 10) + 1};
    for (size_t i = 0; i < std::size(sizes); ++i) {
      paths.push_back(dir.File("file" + std::to_string(i) + ".bin"));
      WriteSynced(paths.back(), sizes[i], static_cast<uint32_t>(i + 1));
    }
    PlanBuilder b;
    uint32_t x = 12345;
    auto next = [&] { return x = x * 1664525u + 1013904223u; };
    for (uint64_t t = 0; t < 60; ++t) {
      size_t f = next() % paths.size();
      auto id = test::StatFile(paths[f]);
      b.Add({paths[f], id.dev, id.ino, next() % sizes[f], 1 + next() % (64 << 10), t * 1000 + next() % 500});
    }
    auto id = test::StatFile(paths[1]);
    b.Add({paths[1], id.dev, id.ino, sizes[1] - 1, 1, 61000});  // the partial last page
    auto out = b.Build();
    EXPECT_TRUE(out.warnings.empty());
    plan = std::move(out.plan);
    EXPECT_EQ(plan.files.size(), paths.size());
  }

  std::string PlanPath() {
    std::string p = dir.File("work.plan");
    EXPECT_TRUE(WritePlan(plan, p).ok());
    return p;
  }

  const PlanFile& Planned(const std::string& path) const {
    for (const auto& f : plan.files)
      if (f.path == path) return f;
    ADD_FAILURE() << path << " is not in the plan";
    return plan.files.front();
  }

  // Evicts every file and checks that nothing of them is cached any more.
  void EvictAll() {
    for (const auto& p : paths) {
      Evict(p);
      ASSERT_EQ(Count(Resident(p)), 0u) << "eviction of " << p << " did not work";
    }
  }

  void ExpectNothingCached() {
    for (const auto& p : paths) EXPECT_EQ(Count(Resident(p)), 0u) << p;
  }

  void ExpectExactlyPlanned(const std::string& path) {
    auto want = PlannedPages(Planned(path)), got = Resident(path);
    EXPECT_EQ(got, want) << path << ": pages resident (+) or missing (-) against the plan: " << Differences(want, got);
  }
};

uint64_t ReadableBytes(const PlanFile& f) {
  uint64_t n = 0;
  for (const auto& e : f.extents) n += e.offset >= f.fingerprint.size ? 0 : std::min(e.length, f.fingerprint.size - e.offset);
  return n;
}

TEST(Replay, PopulatesExactlyThePlannedPages) {
  Workload w;
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  std::vector<std::string> warnings;
  PrefetchOptions o;
  o.warn = [&](const std::string& m) { warnings.push_back(m); };
  PrefetchStats s = Replay(w.plan, o);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_EQ(s.files_read, w.paths.size());
  EXPECT_EQ(s.files_changed + s.files_missing + s.files_failed + s.files_not_reached, 0u);
  EXPECT_EQ(s.extents_read, w.plan.ExtentCount());
  uint64_t readable = 0;
  for (const auto& f : w.plan.files) readable += ReadableBytes(f);
  EXPECT_EQ(s.bytes_read, readable);
  EXPECT_EQ(s.threads, kPrefetchDefaultThreads);
  for (const auto& p : w.paths) w.ExpectExactlyPlanned(p);
  // Sanity of the fixture: the plan covers some of every file, not all of it.
  for (const auto& f : w.plan.files) {
    auto pages = PlannedPages(f);
    EXPECT_GT(Count(pages), 0u) << f.path;
    EXPECT_LT(Count(pages), pages.size()) << f.path;
  }
}

TEST(Replay, TinyBudgetsCutReadsSmallerButReadTheSamePages) {
  Workload w;
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  PrefetchOptions o;
  o.threads = 4;
  o.budget_bytes = 2 * kPage;  // room for two one-page reads at a time
  PrefetchStats s = Replay(w.plan, o);
  EXPECT_EQ(s.threads, 2u);
  EXPECT_EQ(s.chunk_bytes, kPage);
  for (const auto& p : w.paths) w.ExpectExactlyPlanned(p);

  o.threads = 3;
  o.budget_bytes = 1 << 20;
  s = Replay(w.plan, o);
  EXPECT_EQ(s.threads, 3u);
  EXPECT_EQ(s.chunk_bytes, (1u << 20) / 3 / kPage * kPage);
}

// The command of `prefetch -- CMD` starts when on_queued is called: it must
// come exactly once, whether the lead is part of the plan, more than the
// plan, or the plan is empty, and before Replay returns.
TEST(Replay, SignalsOnceWhenTheLeadIsQueued) {
  Workload w;
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  for (uint64_t lead : {uint64_t{0}, kPage, uint64_t{1} << 20, uint64_t{1} << 30}) {
    PrefetchOptions o;
    o.lead_bytes = lead;
    int calls = 0;
    o.on_queued = [&] { ++calls; };
    PrefetchStats s = Replay(w.plan, o);
    EXPECT_EQ(calls, 1) << "lead " << lead;
    EXPECT_EQ(s.files_read, w.paths.size());
  }
  PrefetchOptions o;
  int calls = 0;
  o.on_queued = [&] { ++calls; };
  Replay(Plan{}, o);
  EXPECT_EQ(calls, 1) << "an empty plan";
  for (const auto& p : w.paths) w.ExpectExactlyPlanned(p);
}

// With a command (on_queued), the lookups the program made by the time of
// the lead's last first touch are resolved before any extent is queued; the
// rest, and all of them without a command, beside the reads. Every lookup
// is resolved either way.
TEST(Replay, LookupsAfterTheLeadRunBesideTheReads) {
  Workload w;
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  Plan plan = w.plan;
  uint64_t first_touch = UINT64_MAX;
  for (const auto& f : plan.files) first_touch = std::min(first_touch, f.extents.front().first_touch_ns);
  plan.lookups = {{w.paths[0], first_touch},
                  {w.dir.File("no/such/lib.so"), first_touch},
                  {w.paths[1], 1'000'000'000},
                  {w.paths[2], 2'000'000'000}};
  auto replay = [&](bool with_command, uint64_t lead) {
    PrefetchOptions o;
    o.lead_bytes = lead;
    if (with_command) o.on_queued = [] {};
    PrefetchStats s = Replay(plan, o);
    EXPECT_EQ(s.lookups_planned, 4u);
    EXPECT_EQ(s.lookups_found, 3u) << "with_command " << with_command << ", lead " << lead;
    EXPECT_GE(s.lookup_ns, s.lookup_first_ns);
    return s.lookups_first;
  };
  EXPECT_EQ(replay(true, 0), 2u) << "the lookups at the first extent's time go first";
  EXPECT_EQ(replay(true, uint64_t{1} << 30), 4u) << "a lead of the whole plan: all first";
  EXPECT_EQ(replay(false, 0), 0u) << "nothing waits without a command";
  for (const auto& p : w.paths) w.ExpectExactlyPlanned(p);
}

int IoPriority() { return static_cast<int>(syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0)); }

// Lookups come first and read no file data: a path only looked up stays out
// of the page cache, a missing one is no problem. The reads run in the idle
// I/O class (or the caller's, if asked), and the calling thread gets its
// own class back.
TEST(Replay, LookupsReadNoDataAndReadsRunInTheIdleClass) {
  Workload w;
  std::string looked = w.dir.File("looked-up-only.bin");
  WriteSynced(looked, 1 << 20, 9);
  Evict(looked);
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  ASSERT_EQ(Count(Resident(looked)), 0u);
  Plan plan = w.plan;
  plan.lookups = {{looked, 0}, {w.dir.File("no/such/lib.so"), 1}, {w.paths[0], 2}};
  ASSERT_TRUE(CheckPlan(plan, "with lookups").ok());
  const int before = IoPriority();
  ASSERT_GE(before, 0) << strerror(errno);
  std::atomic<int> during{-1};
  PrefetchOptions o;
  o.lead_bytes = kPage;  // signalled by the worker that queues the first chunk
  o.on_queued = [&] { during = IoPriority(); };
  PrefetchStats s = Replay(plan, o);
  EXPECT_EQ(s.lookups_planned, 3u);
  EXPECT_EQ(s.lookups_found, 2u);
  EXPECT_GT(s.lookup_ns, 0u);
  EXPECT_EQ(Count(Resident(looked)), 0u) << "a lookup read file data";
  for (const auto& p : w.paths) w.ExpectExactlyPlanned(p);
  EXPECT_EQ(during.load() >> 13, 3) << "the reading thread's class is not IOPRIO_CLASS_IDLE: " << during.load();
  EXPECT_EQ(IoPriority(), before);

  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  o.idle_io = false;
  o.lookups = false;
  s = Replay(plan, o);
  EXPECT_EQ(during.load(), before);
  EXPECT_EQ(s.lookups_planned + s.lookups_found, 0u);
  for (const auto& p : w.paths) w.ExpectExactlyPlanned(p);
}

// PATH set for one test, and set back as it was.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& path) {
    if (const char* old = getenv("PATH")) saved_ = old, had_ = true;
    setenv("PATH", path.c_str(), 1);
  }
  ~ScopedPath() {
    if (had_) setenv("PATH", saved_.c_str(), 1);
    else unsetenv("PATH");
  }

 private:
  std::string saved_;
  bool had_ = false;
};

// (paths looked up, paths that resolved) of a replay of an empty plan
// beside `command`.
std::pair<size_t, size_t> CommandLookups(const std::vector<std::string>& command) {
  PrefetchOptions o;
  o.command = command;
  PrefetchStats s = Replay(Plan{}, o);
  return {s.lookups_planned, s.lookups_found};
}

// The command's own PATH search is looked up as execvp(3) makes it: each
// directory in turn, up to the first that holds it.
TEST(Replay, TheCommandsPathSearchIsLookedUpUpToWhereItIsFound) {
  TempDir dir;
  ScopedPath path(dir.File("empty") + ":/usr/bin:/bin");
  using P = std::pair<size_t, size_t>;
  EXPECT_EQ(CommandLookups({"true"}), P(3, 1));
  EXPECT_EQ(CommandLookups({"no-such-command-syspgo"}), P(3, 0));
  EXPECT_EQ(CommandLookups({"/bin/sh"}), P(1, 1));
  EXPECT_EQ(CommandLookups({}), P(0, 0));
  // Its arguments are no commands: only a wrapper's are searched.
  EXPECT_EQ(CommandLookups({"true", "false"}), P(3, 1));
  // A directory of the command's name is passed over, as execvp does.
  ASSERT_EQ(mkdir(dir.File("bin").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(dir.File("bin/true").c_str(), 0755), 0);
  ScopedPath with_dir(dir.File("bin") + ":/usr/bin:/bin");
  EXPECT_EQ(CommandLookups({"true"}), P(3, 2));
}

// A wrapper (env, nice, time, ...) runs a command named later on its line;
// that command's PATH search is looked up too: each argument that is no
// option and no assignment in turn, up to the first that exec can run.
TEST(Replay, AWrappersCommandIsLookedUpToo) {
  TempDir dir;
  ScopedPath path(dir.File("empty") + ":/usr/bin:/bin");
  using P = std::pair<size_t, size_t>;
  // env's search (3, found in /usr/bin), then true's (3, found).
  EXPECT_EQ(CommandLookups({"env", "X=1", "true", "--flag"}), P(6, 2));
  // "5" is searched and not found; then true.
  EXPECT_EQ(CommandLookups({"nice", "-n", "5", "true"}), P(9, 2));
  // env PATH=... sets the search after it.
  EXPECT_EQ(CommandLookups({"env", "PATH=/bin", "true"}), P(4, 2));
  // A wrapper found as the command is followed in turn; after the command,
  // its own arguments are not searched.
  EXPECT_EQ(CommandLookups({"/usr/bin/env", "nice", "true", "false"}), P(7, 3));
  // The command named by a path is looked up as it is.
  EXPECT_EQ(CommandLookups({"time", "-f", "%e", "/bin/true"}), P(7, 2));
  EXPECT_EQ(CommandLookups({"timeout", "5", "no-such-command-syspgo"}), P(9, 1));
}

TEST(Replay, CheckingFingerprintsCachesNothing) {
  Workload w;
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  for (const auto& p : w.paths) ASSERT_TRUE(ComputeFingerprint(p).ok());
  std::string listing;
  PrefetchStats s = DryRun(w.plan, {}, &listing);
  EXPECT_EQ(s.files_read, w.paths.size());
  w.ExpectNothingCached();
}

// Bytes this process has had read from storage (/proc/self/io), O_DIRECT
// reads included.
uint64_t DiskReadBytes() {
  std::ifstream in("/proc/self/io");
  std::string key;
  uint64_t v = 0;
  while (in >> key >> v)
    if (key == "read_bytes:") return v;
  ADD_FAILURE() << "no read_bytes in /proc/self/io";
  return 0;
}

// A file whose size, mtime, inode, device and ctime are the plan's has not
// changed, and checking it reads nothing. A plan without ctimes (from an
// older syspgo) has the sampled blocks read, and so does a file whose ctime
// alone changed (chmod), which still matches.
TEST(Replay, UnchangedFilesAreCheckedWithoutReadingThem) {
  Workload w;
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  uint64_t before = DiskReadBytes();
  PrefetchStats s = DryRun(w.plan, {}, nullptr);
  EXPECT_EQ(s.files_read, w.paths.size());
  EXPECT_EQ(DiskReadBytes() - before, 0u);

  Plan old = w.plan;
  for (auto& f : old.files) f.fingerprint.ctime_ns = 0;
  before = DiskReadBytes();
  s = DryRun(old, {}, nullptr);
  EXPECT_EQ(s.files_read, w.paths.size());
  EXPECT_GT(DiskReadBytes() - before, 0u) << "a plan without ctimes must check the sampled blocks";

  ASSERT_EQ(chmod(w.paths[0].c_str(), 0600), 0);
  before = DiskReadBytes();
  s = DryRun(w.plan, {}, nullptr);
  EXPECT_EQ(s.files_read, w.paths.size()) << "a chmod does not change the contents";
  EXPECT_GE(DiskReadBytes() - before, kPage) << "but the checksum had to be read to know it";
  w.ExpectNothingCached();
}

TEST(Replay, ChangedAndMissingFilesAreSkippedAndReportedWhileTheOthersAreRead) {
  Workload w;
  const auto& p = w.paths;
  // 0: rewritten with other contents of the same size; 1: grown;
  // 2: removed; 3: a byte changed in a sampled block, size and mtime kept;
  // 4: untouched.
  WriteSynced(p[0], w.Planned(p[0]).fingerprint.size, 99);
  WriteSynced(p[1], w.Planned(p[1]).fingerprint.size + 1, 2);
  ASSERT_EQ(unlink(p[2].c_str()), 0);
  {
    struct stat st {};
    ASSERT_EQ(stat(p[3].c_str(), &st), 0);
    int fd = open(p[3].c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    char c = 0x42;
    ASSERT_EQ(pwrite(fd, &c, 1, 17), 1);  // block 0 is always sampled
    ASSERT_EQ(fsync(fd), 0);
    timespec times[2] = {st.st_atim, st.st_mtim};
    ASSERT_EQ(futimens(fd, times), 0);
    close(fd);
  }
  std::vector<std::string> kept = {p[0], p[1], p[3], p[4]};
  for (const auto& k : kept) {
    Evict(k);
    ASSERT_EQ(Count(Resident(k)), 0u) << k;
  }
  std::vector<std::string> warnings;
  PrefetchOptions o;
  o.warn = [&](const std::string& m) { warnings.push_back(m); };
  PrefetchStats s = Replay(w.plan, o);

  EXPECT_EQ(s.files_read, 1u);
  EXPECT_EQ(s.files_changed, 3u);
  EXPECT_EQ(s.files_missing, 1u);
  EXPECT_EQ(s.bytes_read, ReadableBytes(w.Planned(p[4])));
  w.ExpectExactlyPlanned(p[4]);
  for (const auto& k : {p[0], p[1], p[3]}) EXPECT_EQ(Count(Resident(k)), 0u) << k << " was read although it changed";

  ASSERT_EQ(warnings.size(), 4u);
  std::string all;
  for (const auto& m : warnings) all += m + "\n";
  EXPECT_NE(all.find("skipping " + p[0] + " (changed): changed since the plan was made: modification time changed, "
                     "sampled contents changed"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("skipping " + p[1] + " (changed): changed since the plan was made: size"), std::string::npos)
      << all;
  EXPECT_NE(all.find("skipping " + p[2] + " (missing): it does not exist"), std::string::npos) << all;
  EXPECT_NE(all.find("skipping " + p[3] + " (changed): changed since the plan was made: sampled contents changed\n"),
            std::string::npos)
      << all;
}

TEST(Replay, CancelledBeforeStartingReadsNothing) {
  Workload w;
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  std::atomic<bool> cancel{true};
  PrefetchOptions o;
  o.cancel = &cancel;
  PrefetchStats s = Replay(w.plan, o);
  EXPECT_EQ(s.files_not_reached, w.paths.size());
  EXPECT_EQ(s.bytes_read, 0u);
  w.ExpectNothingCached();
}

// ---- Holding the pages (StartPageHolder) --------------------------------------

// Replays the workload's plan into an emptied cache, as the command does
// before a hold.
PrefetchStats Replayed(Workload& w) {
  w.EvictAll();
  PrefetchStats s = Replay(w.plan, PrefetchOptions{});
  EXPECT_EQ(s.files_read, w.paths.size());
  return s;
}

uint64_t LockedBytes(pid_t pid) {
  std::string status = test::ReadAll("/proc/" + std::to_string(pid) + "/status");
  size_t lck = status.find("VmLck:");
  EXPECT_NE(lck, std::string::npos) << status;
  return lck == std::string::npos ? 0 : std::stoull(status.substr(lck + 6)) * 1024;
}

// The holder keeps the planned pages locked for the time asked, whatever
// evicts the files meanwhile, and then ends by itself.
TEST(PrefetchHolder, HoldsThePlannedPagesForTheTimeThenEnds) {
  Workload w;
  PrefetchStats s = Replayed(w);
  uint64_t planned = 0;
  for (const auto& f : w.plan.files) planned += Count(PlannedPages(f)) * kPage;
  auto start = std::chrono::steady_clock::now();
  auto h = StartPageHolder(w.plan, s, 3);
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->bytes, planned);
  EXPECT_EQ(h->files, w.paths.size());
  EXPECT_EQ(LockedBytes(h->pid), planned);
  for (const auto& p : w.paths) Evict(p);
  for (const auto& p : w.paths) w.ExpectExactlyPlanned(p);
  int status = -1;
  ASSERT_EQ(waitpid(h->pid, &status, 0), h->pid);
  double held = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_GE(held, 3.0);
  EXPECT_LT(held, 60.0);
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());  // released: the pages can go
}

// A caller that reads our output (a pipe here) sees its end when we close
// it, not when the hold ends: the holder has /dev/null and nothing else of
// ours, in a session of its own.
TEST(PrefetchHolder, KeepsNothingOfOursOpen) {
  Workload w;
  PrefetchStats s = Replayed(w);
  int ours[2];
  ASSERT_EQ(pipe2(ours, O_NONBLOCK), 0);
  auto h = StartPageHolder(w.plan, s, 120);
  ASSERT_TRUE(h.ok()) << h.error().message;
  close(ours[1]);
  char c;
  EXPECT_EQ(read(ours[0], &c, 1), 0) << "not the end of the pipe: the holder keeps it open";
  close(ours[0]);
  std::string fds = "/proc/" + std::to_string(h->pid) + "/fd";
  std::vector<std::string> held_open;
  DIR* d = opendir(fds.c_str());
  ASSERT_NE(d, nullptr) << fds;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    char target[256] = {};
    EXPECT_GT(readlink((fds + "/" + e->d_name).c_str(), target, sizeof target - 1), 0);
    held_open.push_back(std::string(e->d_name) + " " + target);
  }
  closedir(d);
  std::sort(held_open.begin(), held_open.end());
  EXPECT_EQ(held_open, (std::vector<std::string>{"0 /dev/null", "1 /dev/null", "2 /dev/null"}));
  EXPECT_EQ(getsid(h->pid), h->pid);
  ASSERT_EQ(kill(h->pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(h->pid, &status, 0), h->pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
}

// While it lives: this process without CAP_IPC_LOCK and with its locked
// memory limited to `bytes`, as an unprivileged user would be (a child
// forked meanwhile inherits both); then as before.
class LockLimited {
 public:
  explicit LockLimited(rlim_t bytes) {
    EXPECT_EQ(syscall(SYS_capget, &header_, saved_), 0) << strerror(errno);
    __user_cap_data_struct less[2] = {saved_[0], saved_[1]};
    less[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
    EXPECT_EQ(syscall(SYS_capset, &header_, less), 0) << strerror(errno);
    EXPECT_EQ(getrlimit(RLIMIT_MEMLOCK, &limit_), 0);
    struct rlimit lower = limit_;
    lower.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_MEMLOCK, &lower), 0) << strerror(errno);
  }
  ~LockLimited() {
    EXPECT_EQ(setrlimit(RLIMIT_MEMLOCK, &limit_), 0) << strerror(errno);
    EXPECT_EQ(syscall(SYS_capset, &header_, saved_), 0) << strerror(errno);
  }

 private:
  __user_cap_header_struct header_{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct saved_[2] = {};
  struct rlimit limit_ {};
};

// A hold that fails is an error that says why, and no holder is left.
TEST(PrefetchHolder, AHoldThatFailsIsAnErrorAndLeavesNoProcess) {
  Workload w;
  PrefetchStats s = Replayed(w);
  Result<PageHolder> h = MakeError("not started");
  {
    LockLimited limited(64 << 10);
    h = StartPageHolder(w.plan, s, 120);
  }
  ASSERT_FALSE(h.ok()) << "held " << h->bytes << " bytes in process " << h->pid;
  EXPECT_NE(h.error().message.find("cannot lock the pages of "), std::string::npos) << h.error().message;
  EXPECT_NE(h.error().message.find("locked memory is limited to 64.0 KiB here"), std::string::npos)
      << h.error().message;
  EXPECT_TRUE(h.error().code == ENOMEM || h.error().code == EPERM) << h.error().code;
  pid_t left = waitpid(-1, nullptr, WNOHANG);
  int e = errno;
  EXPECT_TRUE(left == -1 && e == ECHILD) << "a child is left: " << left;
}

// ---- The command ------------------------------------------------------------

TEST(PrefetchCommand, ReplaysAndPrintsASummary) {
  Workload w;
  std::string plan = w.PlanPath();
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  auto r = test::RunCmd({test::SyspgoBin(), "prefetch", plan, "--threads", "2", "--budget=8"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");  // DAMON is paused (Workload), so not even its warning
  EXPECT_NE(r.out.find("prefetched  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" extents of 5 files, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(2 threads, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("skipped     0 changed, 0 missing, 0 failed, 0 not reached"), std::string::npos) << r.out;
  for (const auto& p : w.paths) w.ExpectExactlyPlanned(p);
}

// --json: the summary for machines, every file's outcome, and the command's
// status; a dry run says it is one and reads nothing.
// Warming the cache with no command to use it meets DAMON's proactive
// reclaim where the machine runs it: the replay says so, and
// its JSON lists the schemes. With a command, which uses the pages at once,
// it does not warn.
TEST(PrefetchCommand, WarmingAheadWarnsWhereDamonPagesOut) {
  Workload w(/*pause_damon=*/false);
  std::string plan = w.PlanPath(), out = w.dir.File("summary.json");
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  auto r = test::RunCmd({test::SyspgoBin(), "prefetch", plan, "--json", out});
  ASSERT_EQ(r.status, 0) << r.err;
  auto schemes = ReadDamonPageouts().descriptions;
  bool warned = r.err.find("warning: DAMON proactive reclaim is on") != std::string::npos;
  EXPECT_EQ(warned, !schemes.empty()) << r.err;
  for (const auto& d : schemes) EXPECT_NE(r.err.find(d), std::string::npos) << r.err;
  // Compact and in the file's member order, as DamonPageoutJson writes it.
  EXPECT_EQ(test::ReadOrderedJson(out)["damon_pageout"].dump(), DamonPageoutJson()) << test::ReadAll(out);
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  r = test::RunCmd({test::SyspgoBin(), "prefetch", plan, "--", "true"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("DAMON"), std::string::npos) << r.err;
}

// --hold: a replay ahead of the program keeps its pages locked in memory
// for a while, in a process of its own, which neither eviction nor (as here,
// left running) DAMON's pageout can take them from; then it lets them go.
TEST(PrefetchCommand, HoldKeepsTheReplayedPagesInMemoryThenLetsThemGo) {
  Workload w(/*pause_damon=*/false);
  std::string plan = w.PlanPath(), out = w.dir.File("summary.json");
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  // Held long enough that a loaded machine cannot end the hold before the
  // checks below; the test ends it itself, and a short hold below ends alone.
  auto r = test::RunCmd({test::SyspgoBin(), "prefetch", plan, "--hold", "120", "--json", out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("holding    "), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("DAMON"), std::string::npos) << "the pages are held: no warning\n" << r.err;
  nlohmann::json hold = test::ReadJson(out)["hold"];
  int pid = hold["pid"].get<int>();
  uint64_t bytes = hold["bytes"].get<uint64_t>(), planned = 0;
  for (const auto& f : w.plan.files) planned += Count(PlannedPages(f)) * kPage;
  EXPECT_EQ(bytes, planned);
  EXPECT_EQ(hold["files"], 5) << hold;
  std::string status = test::ReadAll("/proc/" + std::to_string(pid) + "/status");
  size_t lck = status.find("VmLck:");
  ASSERT_NE(lck, std::string::npos) << status;
  EXPECT_EQ(std::stoull(status.substr(lck + 6)) * 1024, bytes) << "locked by the holder, in /proc/" << pid << "/status";
  // Dropping the files from the cache leaves the held pages there.
  for (const auto& p : w.paths) Evict(p);
  for (const auto& p : w.paths) w.ExpectExactlyPlanned(p);
  auto gone = [](int holder) {
    std::string st = test::ReadAll("/proc/" + std::to_string(holder) + "/stat");
    size_t paren = st.rfind(')');
    return st.empty() || (paren != std::string::npos && st.compare(paren, 4, ") Z ") == 0);
  };
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  for (int i = 0; i < 600 && !gone(pid); ++i) usleep(100000);
  ASSERT_TRUE(gone(pid)) << "the holding process " << pid << " outlived SIGTERM by 60 s";
  // A short hold ends on its own, and the pages can go.
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  r = test::RunCmd({test::SyspgoBin(), "prefetch", plan, "--hold", "1", "--json", out});
  ASSERT_EQ(r.status, 0) << r.err;
  pid = test::ReadJson(out)["hold"]["pid"].get<int>();
  for (int i = 0; i < 600 && !gone(pid); ++i) usleep(100000);
  ASSERT_TRUE(gone(pid)) << "the holding process " << pid << " outlived --hold 1 by 60 s";
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  // It is for a replay ahead of the program only.
  EXPECT_TRUE(test::FailedWith(test::RunCmd({test::SyspgoBin(), "prefetch", plan, "--hold", "5", "--", "true"}), 2,
                               "--hold is for a replay ahead of the program"));
  EXPECT_TRUE(test::FailedWith(test::RunCmd({test::SyspgoBin(), "prefetch", plan, "--hold", "0"}), 2,
                               "--hold needs seconds from 1 to 86400, got '0'"));
  w.ExpectNothingCached();
}

// Without the right to lock that much memory, --hold says which limit
// stopped it and how much the plan needs; the replay itself stands.
TEST(PrefetchCommand, HoldBeyondTheLockedMemoryLimitSaysWhichLimit) {
  Workload w;
  std::string plan = w.PlanPath(), out = w.dir.File("summary.json");
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  // Root without CAP_IPC_LOCK (dropped from the bounding set, so the exec'd
  // syspgo lacks it) under a 64 KiB limit.
  auto r = test::Sh("ulimit -l 64 && exec setpriv --bounding-set -ipc_lock " + test::SyspgoBin() + " prefetch " +
                    plan + " --hold 30 --json " + out);
  EXPECT_TRUE(test::FailedWith(r, 1, "the plan was replayed, but cannot lock the pages of "));
  EXPECT_NE(r.err.find("locked memory is limited to 64.0 KiB here (ulimit -l)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(the plan holds " + FormatBytes(w.plan.Bytes()) + ")"), std::string::npos) << r.err;
  nlohmann::json hold = test::ReadJson(out)["hold"];
  EXPECT_TRUE(hold.contains("error")) << test::ReadAll(out);
  EXPECT_NE(hold["error"], "") << test::ReadAll(out);
  // ([p] keeps pgrep from finding the shell that runs it.)
  EXPECT_EQ(test::Sh("pgrep -f '[p]refetch " + plan + " --hold'").out, "") << "no holding process is left";
  for (const auto& p : w.paths) w.ExpectExactlyPlanned(p);
}

TEST(PrefetchCommand, JsonSummaryHasEveryFileAndTheCommandsStatus) {
  Workload w;
  std::string plan = w.PlanPath(), out = w.dir.File("summary.json");
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  std::remove(w.paths[2].c_str());  // missing: skipped, named in the JSON
  auto evict_rest = [&] {
    for (size_t i = 0; i < w.paths.size(); ++i)
      if (i != 2) Evict(w.paths[i]);
  };
  auto r = test::RunCmd({test::SyspgoBin(), "prefetch", plan, "--json", out, "--", "sh", "-c", "exit 4"});
  EXPECT_EQ(r.status, 4) << r.err;
  nlohmann::json d = test::ReadJson(out);
  EXPECT_EQ(d["command_status"], 4);
  EXPECT_EQ(d["files_read"], 4);
  EXPECT_EQ(d["files_missing"], 1);
  EXPECT_EQ(d["files"].size(), 5u) << d["files"];
  std::vector<std::string> outcomes;  // of the missing file
  uint64_t file_bytes = 0;
  for (auto& f : d["files"]) {
    if (f["path"] == w.paths[2]) outcomes.push_back(f["outcome"].get<std::string>());
    file_bytes += f["bytes_read"].get<uint64_t>();
  }
  EXPECT_EQ(outcomes, std::vector<std::string>{"missing"});
  EXPECT_EQ(d["bytes_read"], file_bytes);
  EXPECT_GT(file_bytes, 0u);
  EXPECT_EQ(d["bytes_planned"], w.plan.Bytes());

  // Without a command, '-' makes the JSON the whole output.
  evict_rest();
  r = test::RunCmd({test::SyspgoBin(), "prefetch", plan, "--json", "-"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string printed = w.dir.File("printed.json");
  { std::ofstream(printed) << r.out; }
  d = test::ReadJson(printed);
  EXPECT_EQ(d["files_read"], 4);
  EXPECT_FALSE(d.contains("command_status")) << d;
  for (size_t i = 0; i < w.paths.size(); ++i)
    if (i != 2) w.ExpectExactlyPlanned(w.paths[i]);

  evict_rest();
  r = test::RunCmd({test::SyspgoBin(), "prefetch", plan, "--dry-run", "--json", out});
  ASSERT_EQ(r.status, 0) << r.err;
  d = test::ReadJson(out);
  EXPECT_EQ(d["dry_run"], true);
  EXPECT_EQ(d["files_read"], 4);
  for (size_t i = 0; i < w.paths.size(); ++i) {
    if (i != 2) {
      EXPECT_EQ(Count(Resident(w.paths[i])), 0u) << w.paths[i];
    }
  }

  EXPECT_TRUE(
      test::FailedWith(test::RunCmd({test::SyspgoBin(), "prefetch", plan, "--json", w.dir.File("no/such/dir/s.json")}),
                       1, "cannot write the JSON summary to " + w.dir.File("no/such/dir/s.json")));

  // An unreadable plan: the command still runs, and the JSON says why nothing was read.
  std::string garbage = w.dir.File("garbage.plan");
  { std::ofstream(garbage) << "not a plan\n"; }
  r = test::RunCmd({test::SyspgoBin(), "prefetch", garbage, "--json", out, "--", "sh", "-c", "exit 6"});
  EXPECT_EQ(r.status, 6) << r.err;
  d = test::ReadJson(out);
  EXPECT_EQ(d["command_status"], 6);
  EXPECT_NE(d["error"].get<std::string>().find("is not a syspgo prefetch plan"), std::string::npos) << d["error"];
}

TEST(PrefetchCommand, DryRunListsTheReadsAndReadsNothing) {
  Workload w;
  std::string plan = w.PlanPath();
  ASSERT_EQ(unlink(w.paths[2].c_str()), 0);
  w.paths.erase(w.paths.begin() + 2);
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  auto r = test::RunCmd({test::SyspgoBin(), "prefetch", plan, "--dry-run"});
  ASSERT_EQ(r.status, 0) << r.err;
  uint64_t bytes = 0;
  size_t extents = 0;
  for (const auto& f : w.plan.files) {
    if (access(f.path.c_str(), F_OK) != 0) continue;
    bytes += ReadableBytes(f);
    extents += f.extents.size();
    EXPECT_NE(r.out.find(f.path), std::string::npos) << f.path;
  }
  EXPECT_NE(r.out.find("would read " + std::to_string(bytes) + " bytes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("in " + std::to_string(extents) + " extents of 4 files; skip 1 files"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.rfind("order ", 0), 0u) << r.out;  // the listing's header
  EXPECT_NE(r.out.find("first touch  file\n"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("warning: skipping " + w.dir.File("file2.bin") + " (missing)"), std::string::npos) << r.err;
  w.ExpectNothingCached();
}

TEST(PrefetchCommand, TruncatedOrGarbagePlansAreRefusedAndReadNothing) {
  Workload w;
  std::string good = w.PlanPath();
  std::ifstream in(good, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::string cut = w.dir.File("cut.plan"), junk = w.dir.File("junk.plan");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  std::ofstream(junk, std::ios::binary) << std::string(4096, 'Z');
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());

  EXPECT_TRUE(test::FailedWith(test::RunCmd({test::SyspgoBin(), "prefetch", cut}), 1,
                               "syspgo: " + cut + " is truncated: its header announces"));
  EXPECT_TRUE(test::FailedWith(test::RunCmd({test::SyspgoBin(), "prefetch", junk, "--dry-run"}), 1,
                               "syspgo: " + junk + " is not a syspgo prefetch plan"));
  // With a command the command still runs, without prefetching.
  EXPECT_TRUE(test::FailedWith(test::RunCmd({test::SyspgoBin(), "prefetch", junk, "--", "sh", "-c", "exit 7"}), 7,
                               "running sh -c 'exit 7' without prefetching"));
  EXPECT_TRUE(test::FailedWith(test::RunCmd({test::SyspgoBin(), "plan-show", cut}), 1, "is truncated"));
  w.ExpectNothingCached();
}

TEST(PrefetchCommand, ExitStatusIsTheCommandsAndBeforeFinishesTheReplayFirst) {
  Workload w;
  std::string plan = w.PlanPath();
  auto r = test::RunCmd({test::SyspgoBin(), "prefetch", plan, "--", "sh", "-c", "exit 3"});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_TRUE(test::FailedWith(test::RunCmd({test::SyspgoBin(), "prefetch", plan, "--", "/no/such/program"}), 127,
                               "cannot run /no/such/program"));

  // With --before the command sees the replay complete: fincore(1) reports
  // exactly the planned pages of the file as resident.
  const std::string& target = w.paths[3];
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  r = test::RunCmd({test::SyspgoBin(), "prefetch", plan, "--before", "-v", "--", "fincore", "--bytes", "--noheadings",
                 "--output", "RES", target});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(std::stoull(r.out), Count(PlannedPages(w.Planned(target))) * kPage) << r.out;
  EXPECT_NE(r.err.find("prefetched  "), std::string::npos) << r.err;  // -v: the summary goes to stderr
}

// A Ctrl-C at the terminal reaches syspgo and the command alike; the
// command decides what it means, and syspgo waits on for its status.
TEST(PrefetchCommand, AnInterruptIsTheCommandsToAnswer) {
  Workload w;
  std::string plan = w.PlanPath();
  auto r = test::RunCmd({test::SyspgoBin(), "prefetch", plan, "--", "sh", "-c",
                         "kill -INT $PPID; kill -QUIT $PPID; exit 3"});
  EXPECT_EQ(r.status, 3) << r.err;
  r = test::RunCmd({test::SyspgoBin(), "prefetch", plan, "--", "sh", "-c", "kill -INT $$"});
  EXPECT_EQ(r.status, 128 + SIGINT) << r.err;
}

// syspgo-prefetch is the same command in a static binary: it must take the
// same options, read the same pages, and return the command's status, with
// nothing but the C library's loader behind it.
TEST(PrefetchCommand, StaticReplayerBehavesLikeTheSubcommand) {
  std::string bin = test::SyspgoBin() + "-prefetch";
  auto ldd = test::Sh("ldd " + bin + " 2>&1");
  EXPECT_NE(ldd.out.find("not a dynamic executable"), std::string::npos) << ldd.out;
  Workload w;
  std::string plan = w.PlanPath();
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  auto r = test::RunCmd({bin, plan, "--threads", "2", "--lead", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(" extents of 5 files, "), std::string::npos) << r.out;
  for (const auto& p : w.paths) w.ExpectExactlyPlanned(p);
  ASSERT_NO_FATAL_FAILURE(w.EvictAll());
  r = test::RunCmd({bin, plan, "--lead", "1", "--", "sh", "-c", "exit 5"});
  EXPECT_EQ(r.status, 5) << r.err;
  EXPECT_TRUE(test::FailedWith(test::RunCmd({bin, plan, "--lead", "x"}), 2, "--lead needs MiB"));
  r = test::RunCmd({bin, "--version"});
  EXPECT_EQ(r.out, "syspgo-prefetch " SYSPGO_VERSION "\n");
}

TEST(PlanShowCommand, PrintsFilesAndJson) {
  Workload w;
  std::string plan = w.PlanPath();
  auto r = test::RunCmd({test::SyspgoBin(), "plan-show", plan, "-v"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("reads    "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(" + std::to_string(w.plan.Bytes()) + " bytes) in " +
                       std::to_string(w.plan.ExtentCount()) + " extents of 5 files"),
            std::string::npos)
      << r.out;
  for (const auto& p : w.paths) EXPECT_NE(r.out.find(p), std::string::npos) << p;
  EXPECT_NE(r.out.find("first touch  file\n"), std::string::npos) << r.out;  // -v: the replay listing
  r = test::RunCmd({test::SyspgoBin(), "plan-show", plan, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, PlanJson(w.plan));
}

// The tests' DAMON pause (test_util.h), on a stand-in of DAMON's sysfs
// directory: a test killed while it had the kdamonds stopped leaves a mark,
// and the next test binary starts them again; a running test's mark is left
// alone.
TEST(DamonPaused, KdamondsAKilledTestStoppedStartAgain) {
  TempDir dir;
  std::string admin = dir.File("kdamonds/"), marks = dir.File("marks");
  ASSERT_EQ(test::Sh("mkdir -p " + admin + "0 " + admin + "1 " + marks + " && echo on > " + admin +
                     "0/state && echo off > " + admin + "1/state").status,
            0);
  auto state = [&](int k) { return test::ReadAll(admin + std::to_string(k) + "/state"); };
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    test::DamonPaused paused(admin, marks);
    raise(SIGKILL);  // as a timeout kills a test: no destructor runs
    _exit(1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(state(0), "off\n") << "the killed test had stopped kdamond 0";
  std::string mark = marks + "/syspgo-test-damon-paused." + std::to_string(child);
  EXPECT_EQ(test::ReadAll(mark), admin + "0/state\n");
  EXPECT_EQ(test::RestartDamonsOfDeadTests(marks), 1);
  EXPECT_EQ(state(0), "on\n");
  EXPECT_EQ(state(1), "off\n") << "it was off before the test: it stays off";
  EXPECT_NE(access(mark.c_str(), F_OK), 0) << "the mark is removed";
  {
    test::DamonPaused paused(admin, marks);
    EXPECT_EQ(state(0), "off\n");
    EXPECT_EQ(test::RestartDamonsOfDeadTests(marks), 0) << "this process is alive: its pause stands";
    EXPECT_EQ(state(0), "off\n");
  }
  EXPECT_EQ(state(0), "on\n");
  EXPECT_EQ(test::Sh("ls -A " + marks).out, "");
}

}  // namespace
}  // namespace syspgo
