//===- collector.cc - one collection, from spawn to a finalized run ------===//
#include "collect/collector.h"
#include "collect/btf_hooks.h"
#include "collect/kallsyms.h"
#include "collect/scope.h"
#include "collect/readahead_off.h"
#include "collect/run_row.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <elf.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <functional>
#include <set>

#include "collect/groups.h"
#include "collect/target.h"
#include "collect/writer.h"
#include "common/damon.h"
#include "common/identity.h"
#include "common/profile_db.h"
#include "common/run_settings.h"
#include "common/util.h"

namespace syspgo {

std::atomic<int> g_collect_stop_signal{0};

namespace {


int g_verbose = 0;

int LibbpfPrint(enum libbpf_print_level level, const char* fmt, va_list args) {
  if (level == LIBBPF_DEBUG && g_verbose < 3) return 0;
  if (level == LIBBPF_INFO && g_verbose < 2) return 0;
  if (level == LIBBPF_WARN && g_verbose < 1) return 0;
  return vfprintf(stderr, fmt, args);
}

struct RingCtx {
  ProbeGroup* group;
  Writer* writer;
  uint64_t events = 0;
  uint64_t slice_end = 0;  // CLOCK_MONOTONIC: the consume of this ring stops at the first event after it
};

// How long one consume of a ring may go on (Rings::Consume). What OnEvent
// returns when the slice is used up: libbpf then ends the consume, with
// that event consumed.
constexpr uint64_t kSliceNs = 50'000'000;
constexpr int kSliceUsed = -EAGAIN;
constexpr uint64_t kSliceCheckEvery = 64;

int OnEvent(void* ctx, void* data, size_t size) {
  auto* rc = static_cast<RingCtx*>(ctx);
  rc->group->Handle(data, size, *rc->writer);
  // The clock is read every kSliceCheckEvery events, not on each: this is
  // the handler every event goes through.
  if (++rc->events % kSliceCheckEvery != 0) return 0;
  return NowNs(CLOCK_MONOTONIC) >= rc->slice_end ? kSliceUsed : 0;
}

// The files the collector itself maps (its executable and shared
// libraries), as (dev, ino) pairs in st_dev encoding. Their mapped pages
// stay in the cache through --cold's drop, so the command finds the pages
// it shares with the collector (libc, libstdc++, libm...) already there:
// fault-around maps them without a fault, and a plan of the touched pages
// alone would miss them (optimize/plan_from_run.cc adds them back).
// The files the collector itself maps (its binary, its libraries): a cold
// start's plan leaves them out, since they are not the command's.
std::vector<std::pair<uint64_t, uint64_t>> CollectorFiles() {
  std::ifstream maps("/proc/self/maps");
  std::set<std::pair<uint64_t, uint64_t>> files;
  std::string line;
  while (std::getline(maps, line)) {
    unsigned maj = 0, min = 0;
    unsigned long long ino = 0;
    if (sscanf(line.c_str(), "%*s %*s %*s %x:%x %llu", &maj, &min, &ino) == 3 && ino != 0)
      files.insert({makedev(maj, min), ino});
  }
  return {files.begin(), files.end()};
}

// The GNU build-id (lowercase hex) in a block of ELF notes; "" if none.
std::string NoteBuildId(const char* notes, size_t size) {
  auto word = [&](size_t at) {
    uint32_t v = 0;
    memcpy(&v, notes + at, 4);
    return v;
  };
  auto align4 = [](size_t n) { return (n + 3) & ~size_t{3}; };
  for (size_t at = 0; at + 12 <= size;) {
    uint32_t namesz = word(at), descsz = word(at + 4), type = word(at + 8);
    size_t name = at + 12, desc = name + align4(namesz);
    if (desc > size || align4(descsz) > size - desc) break;
    if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(notes + name, "GNU", 4) == 0) {
      std::string hex;
      static const char kDigits[] = "0123456789abcdef";
      for (uint32_t i = 0; i < descsz; ++i) {
        unsigned char c = static_cast<unsigned char>(notes[desc + i]);
        hex += kDigits[c >> 4];
        hex += kDigits[c & 15];
      }
      return hex;
    }
    at = desc + align4(descsz);
  }
  return "";
}

// The running kernel's build-id, from the notes it exports, and that of
// its vDSO (the same image in every process, this one's included). Kernel
// and vDSO frames are exported with them (pprof mappings carry a build-id
// each), so a profile names the kernel it came from as it does every binary.
std::string KernelBuildId() {
  std::string notes = ReadFileOrEmpty("/sys/kernel/notes");
  return NoteBuildId(notes.data(), notes.size());
}

std::string VdsoBuildId() {
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(getauxval(AT_SYSINFO_EHDR));
  if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64) return "";
  const char* base = reinterpret_cast<const char*>(eh);
  const auto* ph = reinterpret_cast<const Elf64_Phdr*>(base + eh->e_phoff);
  for (int i = 0; i < eh->e_phnum; ++i) {
    if (ph[i].p_type != PT_NOTE) continue;
    std::string id = NoteBuildId(base + ph[i].p_offset, ph[i].p_filesz);
    if (!id.empty()) return id;
  }
  return "";
}

RunSettings Settings(const CollectRequest& req, const CollectOptions& o, uint64_t memory_budget,
                     const std::vector<std::string>& groups) {
  RunSettings s;
  s.probes = groups;
  s.ringbuf_bytes = o.ringbuf_bytes;
  s.memory_budget_bytes = memory_budget;
  s.freq_hz = o.freq_hz;
  s.offcpu_min_ns = static_cast<int64_t>(o.offcpu_min_ns);
  s.irq_min_ns = static_cast<int64_t>(o.irq_min_ns);
  s.detail = DetailName(o.detail);
  s.cold = req.cold;
  s.no_readahead = req.no_readahead;
  s.collector_files = CollectorFiles();
  s.kernel_build_id = KernelBuildId();
  s.vdso_build_id = VdsoBuildId();
  if (std::find(groups.begin(), groups.end(), "pagecache") != groups.end()) s.damon = ReadDamonPageouts().schemes;
  return s;
}

constexpr char kInsertKallsyms[] = "INSERT OR IGNORE INTO kallsyms (hash, size, text) VALUES (?1, ?2, ?3)";

// Stores the kernel's code symbols the run's kernel stacks fall in (for
// each address, the symbol at or below it: what analyze/symbolize.cc looks
// up), in /proc/kallsyms's own lines, once per distinct content, and points
// the run at them (a row of `run_kallsyms_table`), so those stacks resolve
// later, on any machine. Only when a stack was stored: a run needs a few
// of the file's lines, not the whole. Returns a note when the stacks will
// not resolve.
// With `synthetic` (a sudo user who may not see kernel addresses) the
// stacks hold its addresses and the lines are its symbols.

std::string StoreKallsyms(Writer& w, int run_kallsyms_table, const SyntheticKernelAddresses* synthetic) {
  if (w.kernel_addresses().empty()) return "";
  std::string text;
  if (synthetic) {
    text = synthetic->Text();
  } else {
    std::vector<uint64_t> ips(w.kernel_addresses().begin(), w.kernel_addresses().end());
    std::sort(ips.begin(), ips.end());
    KernelSymbols symbols = KernelSymbols::Load();
    if (!symbols.readable())
      return "no kernel symbols: /proc/kallsyms could not be read; kernel stacks will not resolve. ";
    if (symbols.hidden())
      return "kernel symbol addresses are hidden (kernel.kptr_restrict); kernel stacks will not resolve. ";
    text = symbols.LinesFor(ips);
  }
  std::string hash = ContentHash(text);
  std::vector<SqlValue> params;  // not an initializer list: that would copy the text
  params.emplace_back(hash);
  params.emplace_back(static_cast<int64_t>(text.size()));
  params.emplace_back(std::move(text));
  Status s = w.Exec(kInsertKallsyms, std::move(params));
  if (!s.ok()) return "kernel symbols not stored: " + s.error().message + " ";
  w.Row(run_kallsyms_table).T(hash);
  return "";
}

// The machine's block devices, from /sys/dev/block (run_block_device): an
// analysis tells a device's own page cache from a file by them.
void StoreBlockDevices(Writer& w, int table) {
  DIR* d = opendir("/sys/dev/block");
  if (!d) return;
  while (dirent* e = readdir(d)) {
    unsigned major = 0, minor = 0;
    char rest = 0;
    if (sscanf(e->d_name, "%u:%u%c", &major, &minor, &rest) == 2) w.Row(table).I(major).I(minor);
  }
  closedir(d);
}

// How much the collector's threads are favoured over the work they record.
// Every event waits in a ring buffer until the drain thread takes it, and
// the writer thread must keep up for the drain thread to go on: on a busy
// machine, threads of normal priority can be starved long enough for a
// ring buffer to overflow and its events to be lost. Their work is bounded
// by the event rate, so favouring them costs the others little; the
// recorded command keeps the priority syspgo was started with (it is
// forked before).
constexpr int kCollectorNiceBoost = 10;

// Lowers this thread's nice value by kCollectorNiceBoost (threads made
// after it inherit it). Relative, so `nice -n 19 syspgo collect` still
// runs below normal work.
void FavourCollectorThreads() {
  errno = 0;
  int now = getpriority(PRIO_PROCESS, 0);
  if (errno == 0 && setpriority(PRIO_PROCESS, 0, std::max(-20, now - kCollectorNiceBoost)) != 0)
    fprintf(stderr, "syspgo: warning: cannot raise the collector's priority (%s); on a busy machine more events "
            "may be lost\n", strerror(errno));
}

// Per-CPU drop counters of every group, from the shared `drops` map.
std::vector<std::vector<uint64_t>> ReadDrops(int drops_fd) {
  int ncpu = libbpf_num_possible_cpus();
  std::vector<std::vector<uint64_t>> out(SYSPGO_GROUP_MAX, std::vector<uint64_t>(ncpu > 0 ? ncpu : 1));
  for (uint32_t g = 0; g < SYSPGO_GROUP_MAX; ++g) bpf_map_lookup_elem(drops_fd, &g, out[g].data());
  return out;
}

constexpr uint64_t kMiB = 1 << 20;

// The collector's memory as its peak RSS counts it, one budget split into
// pieces. Ring buffers are mapped by the kernel at load, all of them, and
// twice (the data area is mapped a second time right after itself so that
// a record wrapping the end reads as one): each costs 2 × its size from
// the start. Rows wait in the writer's pool; SQLite caches pages.
struct MemoryPlan {
  uint64_t total = 0;
  uint64_t fixed = 0;         // code, libraries, libbpf and BTF while loading, kallsyms at the start
  uint64_t sqlite_cache = 0;  // the writer connection's page cache
  uint64_t queue = 0;         // the writer's pool of rows
  uint64_t ringbuf = 0;       // per group
  size_t groups = 0;
  uint64_t rings() const { return groups * RingRss(ringbuf); }
  // Data mapped twice, plus the consumer and producer pages.
  static uint64_t RingRss(uint64_t bytes) { return 2 * bytes + 2 * 4096; }
};

constexpr uint64_t kDefaultBudget = kCollectDefaultMemoryBytes;
// What the collector holds besides ring buffers, rows and SQLite's cache:
// code and libraries, libbpf's objects, SQLite's schema and statements.
// Loading peaks higher, while a group parses the kernel's BTF or the
// kallsyms text is stored, but that is over before the ring buffers are
// mapped. bench/RESULTS.md has the collector's measured peak RSS.
constexpr uint64_t kFixed = 20 * kMiB;
constexpr uint64_t kSqliteCache = 4 * kMiB;
// Rows from every group share the pool, where a ring buffer serves one
// group, so the pool gets most of the budget. A ring buffer only has to
// cover the drain thread's pauses, which a few MiB do.
constexpr uint64_t kMaxAutoRingbuf = 2 * kMiB, kMinAutoRingbuf = 256 << 10;
constexpr uint64_t kMinQueue = 4 * kMiB;
// The pool when --ringbuf-mb alone sets the size and the budget follows.
constexpr uint64_t kImpliedQueue = 16 * kMiB;

Result<MemoryPlan> PlanMemory(const CollectOptions& o, size_t groups) {
  MemoryPlan p;
  p.groups = groups;
  p.fixed = kFixed;
  p.sqlite_cache = kSqliteCache;
  p.total = o.memory_bytes ? o.memory_bytes : kDefaultBudget;
  uint64_t base = p.fixed + p.sqlite_cache;
  if (o.ringbuf_bytes) {
    p.ringbuf = o.ringbuf_bytes;
    // Ring buffers given by hand: the default budget grows to hold them.
    if (!o.memory_bytes) p.total = std::max(p.total, base + p.rings() + kImpliedQueue);
  } else {
    // The largest power of two, up to the maximum, that leaves the pool at
    // least as much as the ring buffers take.
    p.ringbuf = kMaxAutoRingbuf;
    while (p.ringbuf > kMinAutoRingbuf && p.total < base + 2 * p.rings()) p.ringbuf /= 2;
  }
  if (p.total < base + p.rings() + kMinQueue) {
    uint64_t need = base + p.rings() + kMinQueue;
    return MakeError("a memory budget of " + FormatMib(p.total) + " is too small for " + std::to_string(groups) +
                         " probe groups with ring buffers of " + FormatMib(p.ringbuf) + " (" +
                         FormatMib(p.rings()) + " resident) and the collector's fixed " + FormatMib(base) +
                         ": give --memory-mb " +
                         std::to_string((need + kMiB - 1) / kMiB) + " or more" +
                         (o.ringbuf_bytes ? ", a smaller --ringbuf-mb" : "") + ", or fewer --probes.",
                     EINVAL);
  }
  p.queue = p.total - base - p.rings();
  return p;
}

std::string DescribePlan(const MemoryPlan& p) {
  return "memory budget " + FormatMib(p.total) + ": " + std::to_string(p.groups) + " ring buffers of " +
         FormatMib(p.ringbuf) + " (" + FormatMib(p.rings()) + " resident, mapped twice), writer queue " +
         FormatMib(p.queue) + ", SQLite cache " + FormatMib(p.sqlite_cache) + ", program and libraries " +
         FormatMib(p.fixed);
}

// After loading: the heap's free pages back to the kernel, and large
// buffers from now on (the kallsyms at the end) in mmap, returned when
// freed, so the run's resident memory is what it uses.
void StartLean() {
  mallopt(M_TRIM_THRESHOLD, 128 << 10);  // glibc's default
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  malloc_trim(0);
}

// A ring-buffer manager, freed on every path.
struct RingBufferFree {
  void operator()(ring_buffer* rb) const { ring_buffer__free(rb); }
};
using RingBuffer = std::unique_ptr<ring_buffer, RingBufferFree>;

// Every loaded group's ring buffer, consumed a time slice at a time.
// libbpf consumes a ring until it has caught up with the programs, which
// on a busy host (--all, the writer slower than the events) it may never
// do: the collector would then see neither SIGINT nor the end of
// --duration, and its last drain would not end while the programs run.
// Each ring has a manager of its own, so that one cut short at the end of
// its slice leaves the next its turn.
class Rings {
 public:
  Status Open(const std::vector<ProbeGroup*>& live, Writer& writer) {
    for (auto* g : live) {
      ctx_.push_back(std::make_unique<RingCtx>(RingCtx{g, &writer}));
      ring_buffer* rb = ring_buffer__new(g->ringbuf_fd(), OnEvent, ctx_.back().get(), nullptr);
      if (!rb) return LibbpfError(g->name(), "open its ring buffer", -errno);
      managers_.emplace_back(rb);
    }
    return {};
  }
  // Waits up to `timeout_ms` for a ring's wakeup. -errno of poll(2) on
  // failure (-EINTR: a signal came).
  int Wait(int timeout_ms) const {
    std::vector<pollfd> fds;
    for (auto& m : managers_) fds.push_back({ring_buffer__epoll_fd(m.get()), POLLIN, 0});
    return poll(fds.data(), fds.size(), timeout_ms) < 0 ? -errno : 0;
  }
  // Consumes each ring for at most a slice: 1 when one was cut short (more
  // waits in it), 0 when every ring caught up, libbpf's error if any.
  int Consume() {
    int more = 0;
    for (size_t i = 0; i < managers_.size(); ++i) {
      ctx_[i]->slice_end = NowNs(CLOCK_MONOTONIC) + kSliceNs;
      int n = ring_buffer__consume(managers_[i].get());
      if (n == kSliceUsed) more = 1;
      else if (n < 0) return n;
    }
    return more;
  }
  uint64_t events() const {
    uint64_t n = 0;
    for (auto& c : ctx_) n += c->events;
    return n;
  }
  const std::vector<std::unique_ptr<RingCtx>>& contexts() const { return ctx_; }
  void Close() { managers_.clear(); }

 private:
  std::vector<std::unique_ptr<RingCtx>> ctx_;  // the callbacks' contexts outlive the managers
  std::vector<RingBuffer> managers_;
};

// The command, held before its exec: killed and reaped when the collection
// ends before it was released (a setup error), so no held child is left.
class HeldCommand {
 public:
  explicit HeldCommand(std::unique_ptr<HeldChild> c) : child_(std::move(c)) {}
  HeldCommand(const HeldCommand&) = delete;
  HeldCommand& operator=(const HeldCommand&) = delete;
  ~HeldCommand() {
    if (child_ && !released_) {
      kill(child_->pid(), SIGKILL);
      int st;
      child_->Reap(&st, true);
    }
  }
  HeldChild* get() const { return child_.get(); }
  explicit operator bool() const { return child_ != nullptr; }
  HeldChild* operator->() const { return child_.get(); }
  // Lets it exec; from then on it runs to its end, whatever happens here.
  Status Release() {
    released_ = true;
    return child_->Release();
  }

 private:
  std::unique_ptr<HeldChild> child_;
  bool released_ = false;
};

// 1. Everything a user can get wrong, before anything runs: the command
// (looked up as whoever will run it, so that its errors tell the user
// nothing about paths they could not see) or the process to attach to, the
// memory budget, the capabilities, and the database, created and opened
// with the user's rights (a path they could not write is refused, and what
// is created is theirs; the writer thread later writes through the open
// connection).
struct Setup {
  std::optional<User> user;  // under sudo: whose database it is, whose command runs
  std::string exe;           // the command's resolved path (not when attaching)
  std::vector<std::unique_ptr<ProbeGroup>> groups;
  MemoryPlan plan;
  CollectOptions opts;  // with the sizes the budget gives
  std::optional<Db> db;
};

// How a refusal names the scope: the flag and what the user gave.
std::string ScopeName(const CollectRequest& req) {
  if (!req.container.empty()) return "--container: " + req.container + ", cgroup " + req.cgroup + ",";
  return "--cgroup " + req.cgroup;
}

// Under sudo, a scope that records processes syspgo did not start is
// refused, as real root's alone: --all always; --cgroup and --container
// (its cgroup: one rule for both) when a process in the cgroup is not one
// the user could trace (CheckMayAttach's rule).
Status CheckScope(const CollectRequest& req, const std::optional<User>& user) {
  if (req.all && user)
    return MakeError("--all records every process of the host, not only those of uid " + std::to_string(user->uid) +
                         kScopeNeedsRoot,
                     EPERM);
  if (req.cgroup.empty()) return {};
  SYSPGO_TRY(CheckCgroupDir(req.cgroup));
  if (!user) return {};
  auto pids = CgroupProcs(req.cgroup);
  if (!pids) return pids.error();
  for (pid_t p : *pids) {
    auto why = WhyNotTheUsers(p, *user);  // a process gone since is no one's
    if (why && !why->empty())
      return MakeError(ScopeName(req) + " holds a process that is not only yours (pid " + std::to_string(p) + " " +
                           *why + "), and a cgroup whose processes are not all yours" + kScopeNeedsRoot,
                       EPERM);
  }
  return {};
}

Result<Setup> Prepare(const CollectRequest& req) {
  Setup s;
  auto user = InvokingUserOrNull();
  if (!user.ok()) return user.error();
  if (*user) s.user = **user;
  if (req.as_root && s.user)
    return MakeError("--as-root is refused under sudo: it would run the command as root for uid " +
                         std::to_string(s.user->uid) +
                         ", and a grant of syspgo in sudoers is no grant of root. Leave --as-root out to run it "
                         "as yourself; if you may run anything as root, run syspgo as root itself, without sudo's "
                         "note of who you are: sudo env -u SUDO_UID -u SUDO_GID syspgo collect --as-root ...",
                     EPERM);
  if (req.attach_pid) {
    SYSPGO_TRY(CheckPid(req.attach_pid));
    if (s.user) SYSPGO_TRY(CheckMayAttach(req.attach_pid, *s.user));
  } else if (req.all || !req.cgroup.empty()) {
    SYSPGO_TRY(CheckScope(req, s.user));
  } else {
    auto r = [&]() -> Result<std::string> {
      if (req.as_root) return ResolveCommand(req.argv.empty() ? "" : req.argv[0]);
      ActAsUser as_user;
      if (!as_user.ok()) return as_user.error();
      return ResolveCommand(req.argv.empty() ? "" : req.argv[0]);
    }();
    if (!r) return r.error();
    s.exe = *r;
  }
  s.groups = MakeProbeGroups(req.opts);
  auto plan = PlanMemory(req.opts, s.groups.size());
  if (!plan) return plan.error();
  if (s.user && plan->total > kCollectSudoMemoryCapBytes)
    return MakeError("under sudo the collector may use at most " + FormatMib(kCollectSudoMemoryCapBytes) +
                         ", and this run asks for " + FormatMib(plan->total) + " (" + DescribePlan(*plan) +
                         "): give a smaller --memory-mb or --ringbuf-mb, or fewer --probes; only root without "
                         "sudo may go past the cap.",
                     EPERM);
  s.plan = *plan;
  s.opts = req.opts;
  s.opts.ringbuf_bytes = plan->ringbuf;
  SYSPGO_TRY(CheckBpfCapabilities());
  auto db = [&]() -> Result<Db> {
    ActAsUser as_user;
    if (!as_user.ok()) return as_user.error();
    auto d = OpenProfileDb(req.db_path, DbMode::kCreateOrAppend);
    if (d.ok()) SYSPGO_TRY(MarkDeadRuns(*d));
    return d;
  }();
  if (!db) return db.error();
  s.db.emplace(std::move(db.value()));
  return s;
}

// 2. The probe groups, loaded in order. One that fails is reported and left
// out, except proc: nothing can be followed without it. Returns the groups
// that loaded; `res.groups` gets a report for each.
Result<std::vector<ProbeGroup*>> LoadGroups(Setup& s, GroupContext& ctx, CollectResult& res) {
  std::vector<ProbeGroup*> all, live;
  for (auto& g : s.groups) all.push_back(g.get());
  std::vector<Status> loaded = LoadProbeGroups(all, ctx);
  for (size_t i = 0; i < all.size(); ++i) {
    ProbeGroup* g = all[i];
    const Status& st = loaded[i];
    GroupReport rep{g->name()};
    if (!st.ok()) {
      if (g->id() == SYSPGO_GROUP_PROC) return st.error();
      rep.detail = st.error().message;
      fprintf(stderr, "syspgo: warning: %s; continuing without it\n", st.error().message.c_str());
    } else {
      rep.attached = true;
      rep.detail = g->note;
      if (!g->note.empty()) fprintf(stderr, "syspgo: note: %s: %s\n", g->name(), g->note.c_str());
      live.push_back(g);
    }
    res.groups.push_back(rep);
  }
  ReleaseKernelBtf();  // the groups' lookups are done
  return live;
}

// 4. The processes traced from the start: the spawned command, or -p's
// process and its existing descendants. Under sudo each of -p's is checked
// after it was put in `targets`, so that an exec after the check is the
// kernel's to judge (bpf/proc.bpf.c); one the user could not trace, and
// everything below it, is left out. Returns how many were left out.
// The processes a run starts from: the command, -p's tree, or every
// process of the cgroup or host (each a root: their forks are followed in
// the kernel). Never the collector itself, which would record its writes.
std::vector<TreeProcess> StartingProcesses(const CollectRequest& req, pid_t root) {
  if (req.attach_pid) return ProcessTree(root);
  if (!req.Attached()) return {{root, 0}};
  std::vector<pid_t> pids;
  if (req.all) pids = AllProcesses();
  else if (auto r = CgroupProcs(req.cgroup)) pids = *r;
  std::vector<TreeProcess> out;
  for (pid_t p : pids)
    if (p != getpid()) out.push_back({p, 0});
  return out;
}

uint64_t TraceFromTheStart(const CollectRequest& req, const Setup& s, const std::vector<TreeProcess>& tree,
                           TracedSet& targets, const std::vector<ProbeGroup*>& live, Writer& writer) {
  std::set<pid_t> out;  // left out, or gone
  uint64_t left_out = 0;
  for (const TreeProcess& t : tree) {
    if (out.count(t.parent)) {
      out.insert(t.pid);
      ++left_out;
      continue;
    }
    targets.Add(t.pid);
    if (req.Attached() && s.user) {
      if (Status st = CheckMayAttach(t.pid, *s.user); !st.ok()) {
        targets.Remove(t.pid);
        out.insert(t.pid);
        left_out += st.error().code == EPERM;
        continue;
      }
    }
    for (auto* g : live) g->OnTarget(writer, t.pid, req.Attached());
  }
  return left_out;
}

// 5. Drains until the command ends, the duration is up or the recording is
// interrupted. On SIGINT/SIGTERM it keeps recording while the command winds
// down: Ctrl-C reached it too (same process group); otherwise it gets the
// signal after a grace period. Sets res.exit_reason; *status and
// *child_done when the command was reaped.
void Record(const CollectRequest& req, HeldCommand& child, pid_t root, uint64_t release_mono, Rings& rings,
            const std::vector<ProbeGroup*>& live, Writer& writer, CollectResult& res, int* status,
            bool* child_done, const std::function<void()>& tick) {
  uint64_t deadline = req.duration_s > 0 ? release_mono + static_cast<uint64_t>(req.duration_s * 1e9) : 0;
  constexpr uint64_t kGraceNs = 1000000000, kWindDownNs = 5000000000;
  uint64_t stop_at = 0;
  bool forwarded = false;
  bool write_failure_reported = false;
  uint64_t next_drain = NowNs(CLOCK_MONOTONIC) + kDrainIntervalNs;
  int more = 0;  // a ring's slice ran out: no wait before the next
  for (;;) {
    int n = more ? 0 : rings.Wait(100);
    more = rings.Consume();  // also the events below the wakeup threshold
    if (uint64_t t = NowNs(CLOCK_MONOTONIC); t >= next_drain) {
      tick();
      for (auto* g : live) g->Drain(writer);
      next_drain = t + kDrainIntervalNs;
    }
    writer.MaybeFlush();
    if ((n < 0 && n != -EINTR) || more < 0) {
      res.exit_reason = "poll-failed";
      return;
    }
    if (child && child->Reap(status)) {
      *child_done = true;
      if (res.exit_reason.empty()) res.exit_reason = child->Signaled() ? "signaled" : "exited";
      return;
    }
    if (!child && root && !ProcessAlive(root)) {
      if (res.exit_reason.empty()) res.exit_reason = "target-exited";
      return;
    }
    if (!write_failure_reported && writer.failed()) {
      // Keep draining (and discarding) so the command is never blocked.
      fprintf(stderr, "syspgo: recording stopped: %s. The command keeps running; rows committed before are intact.\n",
              writer.error_message().c_str());
      write_failure_reported = true;
    }
    uint64_t now = NowNs(CLOCK_MONOTONIC);
    if (int sig = g_collect_stop_signal.load(); sig && !stop_at) {
      res.exit_reason = "interrupted";
      stop_at = now;
      if (!child) return;
    }
    if (stop_at) {
      if (!forwarded && now - stop_at >= kGraceNs) {
        kill(child->pid(), g_collect_stop_signal.load());
        forwarded = true;
      }
      if (now - stop_at >= kWindDownNs) return;
    }
    if (deadline && now >= deadline && !stop_at) {
      res.exit_reason = "duration";
      return;
    }
  }
}

// How often a stop that takes long says how far it got.
constexpr uint64_t kStopProgressNs = 2'000'000'000;

// 6. The last events. The programs detach first: the buffers then get
// nothing new, so draining them ends however busy the host is, and
// nothing they hold is lost. What the tree did up to its exit is in them
// already (tracepoints run synchronously). The drain goes at the writer's
// pace; when that takes a while, stderr says how far it got. Returns when
// the programs were detached: the end of what the run recorded.
uint64_t DrainLast(const std::vector<ProbeGroup*>& live, Rings& rings, Writer& writer) {
  for (auto* g : live) g->Detach();
  uint64_t start = NowNs(CLOCK_MONOTONIC), next_note = start + kStopProgressNs, events_at_stop = rings.events();
  while (rings.Consume() > 0) {
    writer.MaybeFlush();
    if (uint64_t now = NowNs(CLOCK_MONOTONIC); now >= next_note) {
      fprintf(stderr,
              "syspgo: stopping: probes detached %.0f s ago; writing what the ring buffers held, %" PRIu64
              " events so far (%" PRIu64 " rows committed)\n",
              (now - start) / 1e9, rings.events() - events_at_stop, writer.rows_written());
      next_note = now + kStopProgressNs;
    }
  }
  rings.Close();
  return start;
}

// The processes left out of the run (from the start and at an exec since),
// in the proc group's note: in the run's run_probe row, and on stderr.
void NoteLeftOut(const std::vector<ProbeGroup*>& live, uint64_t at_start, CollectResult& res) {
  for (ProbeGroup* g : live) {
    if (g->id() != SYSPGO_GROUP_PROC) continue;
    res.left_out = at_start + ProcessesLeftOut(*g);
    if (res.left_out)
      g->note += (g->note.empty() ? "" : " ") + std::to_string(res.left_out) +
                 " processes left out: they had rights the invoking user lacks (setuid, setgid, capabilities, "
                 "or not dumpable); nothing of them is recorded.";
  }
}

// What the run recorded, when more than a command or -p's tree, in the
// proc group's note (the run's run_probe row).
void NoteScope(const std::vector<ProbeGroup*>& live, const CollectRequest& req, const NewCgroup& made) {
  std::string scope = req.all              ? "scope: the whole host (--all)."
                      : !req.container.empty() ? "scope: " + req.container + ", cgroup " + req.cgroup + " (--container)."
                      : !req.cgroup.empty() ? "scope: cgroup " + req.cgroup + " (--cgroup)."
                      : req.new_cgroup      ? "scope: the command in new cgroup " + made.Describe() + " (--new-cgroup)."
                                            : "";
  if (scope.empty()) return;
  for (ProbeGroup* g : live)
    if (g->id() == SYSPGO_GROUP_PROC) g->note += (g->note.empty() ? "" : " ") + scope;
}

// 6. Each group's report: events, drops per CPU (rows of run_drop), and the
// notes a group added after loading (OnStart, Finish); one run_probe row each.
void ReportGroups(const std::vector<ProbeGroup*>& live, const Rings& rings, int drops_fd, Writer& writer, int probe_tbl,
                  int drop_tbl, CollectResult& res) {
  auto drops = ReadDrops(drops_fd);
  for (GroupReport& rep : res.groups) {
    for (auto& rc : rings.contexts())
      if (rep.name == rc->group->name()) rep.events = rc->events;
    for (auto* g : live) {
      if (rep.name != g->name()) continue;
      auto& per_cpu = drops[g->id()];
      for (size_t cpu = 0; cpu < per_cpu.size(); ++cpu) {
        rep.dropped += per_cpu[cpu];
        if (per_cpu[cpu]) writer.Row(drop_tbl).T(rep.name).I(cpu).I(per_cpu[cpu]);
      }
      if (g->note != rep.detail) {
        rep.detail = g->note;
        fprintf(stderr, "syspgo: note: %s: %s\n", g->name(), g->note.c_str());
      }
    }
    writer.Row(probe_tbl).T(rep.name).I(rep.attached).T(rep.detail).I(rep.events);
    res.events += rep.events;
    res.dropped += rep.dropped;
  }
}

}  // namespace

// The command, spawned held before its exec (none when attaching); with
// --new-cgroup, moved into the new cgroup while held, so that everything it
// does after its exec is charged there.
Result<std::unique_ptr<HeldChild>> SpawnHeld(const CollectRequest& req, const Setup& s, NewCgroup& new_cgroup) {
  if (req.Attached()) return std::unique_ptr<HeldChild>();
  auto spawned = HeldChild::Spawn(s.exe, req.argv, s.user && !req.as_root ? &*s.user : nullptr);
  if (!spawned) return spawned.error();
  if (!req.new_cgroup) return std::move(*spawned);
  Status st = new_cgroup.Create();
  if (st.ok()) st = new_cgroup.Add((*spawned)->pid());
  if (st.ok()) return std::move(*spawned);
  kill((*spawned)->pid(), SIGKILL);
  int ignored;
  (*spawned)->Reap(&ignored, true);
  return st.error();
}

// The machine-wide settings a run asks for, last before the release and
// after the probes loaded (their own page-ins are not the command's):
// readahead off (--no-readahead) and a cold page cache (--cold).
Status SetUpMachine(const CollectRequest& req, ReadaheadOff& readahead_off) {
  if (req.no_readahead) {
    SYSPGO_TRY(readahead_off.TurnOff());
    fprintf(stderr, "syspgo: --no-readahead: readahead off until the command ends (was: %s)\n",
            readahead_off.Describe().c_str());
  }
  if (req.cold) {
    sync();
    FILE* f = fopen("/proc/sys/vm/drop_caches", "w");
    if (!f || fputs("3\n", f) < 0 || fclose(f) != 0)
      fprintf(stderr, "syspgo: warning: --cold could not drop the page cache: %s\n", strerror(errno));
  }
  return {};
}

// --cgroup: the processes that join the cgroup while the command runs,
// traced from when the drain loop sees them, or left out (and counted) when
// they are not only the user's.
struct CgroupFollower {
  const std::string& cgroup;
  const std::optional<User>& user;
  TracedSet& targets;
  const std::vector<ProbeGroup*>& live;
  Writer& writer;
  std::set<pid_t> seen;  // processes already followed, or found not the user's
  uint64_t left_out;

  void Tick() {
    if (cgroup.empty()) return;
    auto pids = CgroupProcs(cgroup);
    if (!pids) return;
    for (pid_t p : *pids) {
      if (!seen.insert(p).second || p == getpid()) continue;
      targets.Add(p);
      if (user && !CheckMayAttach(p, *user).ok()) {
        targets.Remove(p);
        ++left_out;
        continue;
      }
      for (auto* g : live) g->OnTarget(writer, p, true);
    }
  }
};

// Loading reads large, short-lived buffers: libbpf parses the kernel's
// BTF (megabytes) again for every group. Served from the heap, each group
// reuses the pages the last one freed; from mmap (glibc's default for the
// first, and for all with a fixed threshold) each faults its buffer in
// afresh, much of the collector's start. The heap is given back after
// loading (StartLean).
void LoadFromTheHeap() {
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);  // nor shrink the heap under the next group
}

// The run's row, first of all it writes, so that a run that fails later
// is still recorded as one.
Result<int64_t> StartRunRow(const CollectRequest& req, Setup& s, pid_t root, uint64_t start_real,
                            uint64_t start_mono) {
  std::vector<std::string> names;
  for (auto& g : s.groups) names.push_back(g->name());
  ActAsUser as_user;  // its commit may checkpoint the -wal: as the user, as every write to the database
  if (!as_user.ok()) return as_user.error();
  RunStart start{req.argv, root, req.Attached(), start_real, start_mono};
  return InsertRun(*s.db, start, Settings(req, s.opts, s.plan.total, names));
}

// Kernel addresses the invoking user may not see are stored as symbol +
// offset instead (collect/kallsyms.h); null when the user sees them.
std::unique_ptr<SyntheticKernelAddresses> HideKernelAddresses(Writer& writer) {
  if (InvokingUserSeesKernelAddresses()) return nullptr;
  auto synthetic = std::make_unique<SyntheticKernelAddresses>();
  writer.MapKernelAddresses([k = synthetic.get()](uint64_t a) { return k->Map(a); });
  return synthetic;
}

// Lets the held command exec. A command that cannot is reaped and the run
// marked as such, so the user is told why nothing ran.
Status ReleaseCommand(HeldCommand& child, RunRow& run_row, uint64_t start_mono) {
  if (!child) return {};
  if (Status st = child.Release(); !st.ok()) {
    int ignored;
    child->Reap(&ignored, true);
    (void)run_row.ExecFailed(NowNs(CLOCK_MONOTONIC) - start_mono);
    return st.error();
  }
  return {};
}

namespace {

// The collector's own tables about the run, declared after the groups'.
struct RunTables {
  int probe, drop, kallsyms, block_device;
};

RunTables DeclareRunTables(Writer& writer) {
  RunTables t;
  t.probe = writer.Table("run_probe", {"probe_group", "attached", "detail", "events"}, "INSERT OR REPLACE");
  t.drop = writer.Table("run_drop", {"probe_group", "cpu", "dropped"});
  t.kallsyms = writer.Table("run_kallsyms", {"hash"}, "INSERT OR IGNORE");
  t.block_device = writer.Table("run_block_device", {"major", "minor"}, "INSERT OR IGNORE");
  return t;
}

// After the drain loop: the rings' last events, every group's last rows,
// and what the run notes of each group (left out, scope, kernel symbols).
uint64_t FinishGroups(const CollectRequest& req, const std::vector<ProbeGroup*>& live, Rings& rings, Writer& writer,
                      const RunTables& tables, int drops_fd, const SyntheticKernelAddresses* synthetic,
                      uint64_t left_out, const NewCgroup& new_cgroup, CollectResult& res) {
  uint64_t detached = DrainLast(live, rings, writer);
  for (auto* g : live) g->Drain(writer);
  for (auto* g : live) g->Finish(writer);
  NoteLeftOut(live, left_out, res);
  NoteScope(live, req, new_cgroup);
  std::string kallsyms_note = StoreKallsyms(writer, tables.kallsyms, synthetic);
  if (synthetic && !writer.kernel_addresses().empty())
    kallsyms_note += "kernel addresses are synthetic (symbol + offset): the invoking user may not see the kernel's. ";
  for (auto* g : live)
    if (g->kernel_stacks()) g->note += kallsyms_note;
  ReportGroups(live, rings, drops_fd, writer, tables.probe, tables.drop, res);
  return detached;
}

// The command's status, also when recording stopped before it ended; then
// the run's row completed and the writer stopped.
void CompleteRun(HeldCommand& child, bool child_done, int status, uint64_t start_mono, uint64_t release_mono,
                 uint64_t end_mono, RunRow& run_row, Writer& writer, CollectResult& res) {
  if (child && !child_done) {
    fprintf(stderr, "syspgo: recording stopped (%s); waiting for the command to finish\n", res.exit_reason.c_str());
    child->Reap(&status, true);
  }
  res.exit_status = child ? status : 0;
  res.seconds = (end_mono - release_mono) / 1e9;

  std::optional<int> exit_code;
  if (child) exit_code = res.exit_status;
  Status fs = run_row.Complete(end_mono - start_mono, res.exit_reason, exit_code, res.events, res.dropped);
  Status ss = writer.Stop();
  res.rows = writer.rows_written();
  if (!fs.ok() || !ss.ok()) res.write_error = (!ss.ok() ? ss : fs).error().message;
}

}  // namespace

Result<CollectResult> Collect(const CollectRequest& req) {
  g_verbose = req.opts.verbose;
  libbpf_set_print(LibbpfPrint);
  LoadFromTheHeap();

  auto setup = Prepare(req);
  if (!setup) return setup.error();
  Setup& s = *setup;

  // 2. The command, held before exec; the run's row; the writer; the probes.
  NewCgroup new_cgroup;  // removed after the command (declared before it)
  auto spawned = SpawnHeld(req, s, new_cgroup);
  if (!spawned) return spawned.error();
  HeldCommand child(std::move(*spawned));
  pid_t root = child ? child->pid() : req.attach_pid;
  FavourCollectorThreads();  // after the fork: the command keeps its own priority
  uint64_t start_real = NowNs(CLOCK_REALTIME), start_mono = NowNs(CLOCK_MONOTONIC);
  auto run_id = StartRunRow(req, s, root, start_real, start_mono);
  if (!run_id) return run_id.error();
  CollectResult res;
  res.run_id = *run_id;

  fprintf(stderr, "syspgo: %s\n", WrapWords(DescribePlan(s.plan), 8, 120).c_str());
  Writer writer(std::move(*s.db), res.run_id, Writer::Limits{s.plan.queue, s.plan.sqlite_cache});
  RunRow run_row(writer, res.run_id);
  std::unique_ptr<SyntheticKernelAddresses> synthetic = HideKernelAddresses(writer);
  for (auto& g : s.groups) g->DeclareTables(writer);
  RunTables tables = DeclareRunTables(writer);
  SYSPGO_TRY(writer.Start());
  StoreBlockDevices(writer, tables.block_device);

  GroupContext ctx;
  ctx.start_ns = start_mono;
  ctx.opts = &s.opts;
  auto live = LoadGroups(s, ctx, res);
  StartLean();
  if (!live) {
    (void)run_row.SetupFailed();
    return live.error();
  }
  Rings rings;
  SYSPGO_TRY(rings.Open(*live, writer));

  // 4. Targets, then release.
  std::vector<TreeProcess> starting = StartingProcesses(req, root);
  uint64_t left_out_at_start = TraceFromTheStart(req, s, starting, *ctx.targets, *live, writer);
  for (auto* g : *live) g->OnStart(writer);
  ReadaheadOff readahead_off;
  SYSPGO_TRY(SetUpMachine(req, readahead_off));
  uint64_t release_mono = NowNs(CLOCK_MONOTONIC);
  (void)run_row.CommandReleased(release_mono - start_mono);
  SYSPGO_TRY(ReleaseCommand(child, run_row, start_mono));

  // 5. Drain until the command ends.
  int status = 0;
  bool child_done = false;
  CgroupFollower joined{req.cgroup, s.user, *ctx.targets, *live, writer, {}, 0};
  for (const TreeProcess& t : starting) joined.seen.insert(t.pid);
  Record(req, child, root, release_mono, rings, *live, writer, res, &status, &child_done,
         [&] { joined.Tick(); });
  if (Status st = readahead_off.Restore(); !st.ok()) fprintf(stderr, "syspgo: warning: %s\n", st.error().message.c_str());

  // The run ends when its probes are detached: until then they record (a
  // process the command left behind, the last exits), and every event's
  // time is before it.
  uint64_t end_mono = FinishGroups(req, *live, rings, writer, tables, ctx.drops_fd, synthetic.get(),
                                   left_out_at_start + joined.left_out, new_cgroup, res);
  // 7. The command's status and the run's row.
  CompleteRun(child, child_done, status, start_mono, release_mono, end_mono, run_row, writer, res);
  return res;
}

}  // namespace syspgo
