//===- probe_group.h - the interface every probe group's loader implements ===//
// A probe group is one bpf/<group>.bpf.c plus its loader here. The groups'
// objects are linked into one (bpf/common.bpf.h says why), and a group's
// programs and maps are those whose names start with its name and '_'.
// LoadProbeGroups() drives every group through the same steps, in the order
// of libbpf-bootstrap: open, each group's settings (rodata, map sizes,
// hooks this kernel lacks), load, then each group attaches its own. The
// collector then drains each group's ring buffer into Handle() and, at the
// end, calls Finish() for in-kernel aggregates. A group that cannot load or
// attach reports why and the run goes on without it.
#pragma once
#include <bpf/libbpf.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bpf/common.h"
#include "collect/traced_set.h"
#include "collect/writer.h"
#include "common/result.h"

struct syspgo_bpf;  // the skeleton of every group's programs (bpf/CMakeLists.txt)

namespace syspgo {

// How much each group records, in two tiers. kLean: what analyses
// only count is aggregated in the kernel and drained into summary tables;
// single events are kept only where an analysis needs the instance (each
// group's header says which). kFull: every event as a row, as before the
// tiers existed, for those who want to query them all.
enum class Detail { kLean, kFull };
const char* DetailName(Detail d);  // "lean" / "full"

// Tuning knobs, one table (cli/ prints them with defaults and limits).
struct CollectOptions {
  std::set<std::string> probes;        // enabled groups (proc is always on)
  uint64_t memory_bytes = 0;           // the whole collector's budget; 0: the default (collector.cc)
  uint64_t ringbuf_bytes = 0;          // per group, power of two; 0: sized from the budget
  uint32_t freq_hz = 999;              // cpu group sampling frequency
  uint64_t offcpu_min_ns = 1000000;    // sched group: shortest off-CPU interval recorded
  uint64_t irq_min_ns = 100000;        // irq group: handler runs recorded individually above this
  Detail detail = Detail::kLean;        // see Detail
  int verbose = 0;
};

// What the collector hands every group before load.
struct GroupContext {
  int targets_fd = -1;            // shared `targets` map (created by proc)
  std::shared_ptr<TracedSet> targets;  // that map, mapped: who is recorded
  int drops_fd = -1;              // shared `drops` map
  uint64_t start_ns = 0;          // CLOCK_MONOTONIC at run start: ts = event ts - start_ns
  const CollectOptions* opts = nullptr;
  uint64_t wakeup_bytes() const { return opts->ringbuf_bytes / 4; }
};

struct LoadedObject;  // probe_group.cc: the loaded object, shared by the groups in it

class ProbeGroup;

// A probe group as the table of groups lists it (groups.cc): its name (in
// --probes and the tables), its id in the BPF programs, whether it stores
// kernel stacks (the collector then keeps the run's kernel symbols, once for
// every such group), and its factory.
struct GroupSpec {
  const char* name;
  syspgo_group id;
  bool kernel_stacks;
  std::unique_ptr<ProbeGroup> (*make)();
};

class ProbeGroup {
 public:
  explicit ProbeGroup(syspgo_group id);  // the group's row of the table of groups
  virtual ~ProbeGroup();                 // detaches the group's programs
  const char* name() const { return spec_->name; }
  syspgo_group id() const { return spec_->id; }
  bool kernel_stacks() const { return spec_->kernel_stacks; }
  // Declare tables on the writer (before Writer::Start()).
  virtual void DeclareTables(Writer& w) = 0;
  // The group's ring buffer map fd (once loaded).
  int ringbuf_fd() const;
  // The name of the group's ring buffer map (GROUP_EVENTS, bpf/common.bpf.h).
  std::string events_map() const { return std::string(name()) + "_events"; }
  // Whether a BPF program or map of the linked object is this group's: its
  // name starts with the group's name and '_'.
  bool Owns(const char* bpf_name) const;
  // Decode one event (the bytes the BPF side submitted) into rows.
  virtual void Handle(const void* data, size_t size, Writer& w) = 0;
  // For each process traced from the start (the spawned command, or with
  // -p the process and its existing descendants), before it is released.
  virtual void OnTarget(Writer&, uint32_t /*pid*/, bool /*attached*/) {}
  // Just before the command is released (e.g. capture kallsyms, cgroup limits).
  virtual void OnStart(Writer&) {}
  // About once a second while recording (kDrainIntervalNs), and once more
  // after the last event was drained, before Finish(): move in-kernel
  // aggregates into their tables, so a long run's maps never fill. Rows must
  // be upserts (the same key again replaces or adds), so the database grows
  // with what is new, not with time.
  virtual void Drain(Writer&) {}
  // After the last event was drained: write in-kernel aggregates.
  virtual void Finish(Writer&) {}
  // Non-fatal warnings worth storing with the run (e.g. one probe missing).
  std::string note;
  // Destroys the group's links: its programs run no more, so its ring
  // buffer and maps get nothing new (the collector's stop, before the last
  // drain; the destructor; a group that must detach before releasing
  // something of its own). The maps stay readable.
  void Detach();

 protected:
  // Between open and load: the group's rodata, map sizes, and
  // bpf_program__set_autoload(prog, false) for hooks this kernel lacks. An
  // error leaves the group out, with the message (which names the missing
  // hook) stored in run_probe. Called again if the group is loaded alone
  // (LoadProbeGroups), so it sets, never appends.
  virtual Status Configure(syspgo_bpf*, const GroupContext&) { return {}; }
  // After load: attaches every program of the group that loaded and
  // attaches itself (autoattach); a group with programs of its own to
  // attach (cpu's perf events) adds them after calling this.
  virtual Status Attach(const GroupContext& ctx);
  // Turns autoload off for each tp_btf program of this group whose
  // tracepoint this kernel lacks, and returns those tracepoints' names.
  std::vector<std::string> DisableMissingTracepoints();
  // Whether process `pid` is still recorded (the `targets` map).
  // What a group reads of a process from /proc while recording must be
  // read first and kept only if this holds afterwards: a process that left
  // (it exited, or an exec gave it rights the invoking user lacks,
  // bpf/proc.bpf.c) may by then show another image than the one traced.
  bool StillTraced(uint32_t pid) const;

  syspgo_bpf* skel_ = nullptr;  // set from Configure() on
  uint64_t start_ns_ = 0;       // GroupContext::start_ns: an event's ts minus this is the row's ts
  bool lean_ = false;           // collect --detail lean
  std::shared_ptr<TracedSet> targets_;  // GroupContext::targets
  std::vector<bpf_link*> links_;

 private:
  friend std::vector<Status> LoadProbeGroups(const std::vector<ProbeGroup*>& groups, GroupContext& ctx);
  friend Status LoadTogether(const std::vector<ProbeGroup*>& unit, GroupContext& ctx,
                             std::map<ProbeGroup*, Status>* results);
  std::shared_ptr<LoadedObject> object_;  // keeps the object loaded while the group lives
  const GroupSpec* spec_;                 // its row of the table of groups
};

// Whether a map of the linked object is one every group shares: `targets`
// and `drops` (bpf/common.bpf.h), and the object's rodata and bss.
bool SharedBpfMap(const bpf_map* m);

// Loads `groups` (proc first) into one object and attaches each; one status
// per group, in order. If the object as a whole does not load (the verifier
// rejects a program, a map cannot be created), each group is loaded into an
// object of its own, as if it were alone, so one group's failure leaves the
// others recording. Sets ctx.targets_fd, ctx.targets and ctx.drops_fd once
// proc loaded.
std::vector<Status> LoadProbeGroups(const std::vector<ProbeGroup*>& groups, GroupContext& ctx);

inline constexpr uint64_t kDrainIntervalNs = 1000000000;

// The row of the table of groups for `id` (groups.cc).
const GroupSpec& GroupSpecOf(syspgo_group id);
// All groups in the order they load (proc first). Defined in groups.cc.
std::vector<std::unique_ptr<ProbeGroup>> MakeProbeGroups(const CollectOptions& opts);
// Names of all groups, for --probes and --help.
std::vector<std::string> AllProbeGroupNames();

// The kernel's s_dev / bio dev (major << 20 | minor) as stat(2)'s st_dev.
uint64_t KernelDevToUser(uint64_t kdev);
// A wait status from task->exit_code as a shell reports it (128+N for signal N).
int ExitStatusFromWait(uint32_t code);
// st_size of the regular file at `path` if the path leads to (dev, ino):
// what file_size records when a group first sees a file.
std::optional<uint64_t> RegularFileSize(const std::string& path, uint64_t dev, uint64_t ino);
// Replaces NULs in the first n bytes with spaces (argv blobs), trimming the end.
std::string JoinNulSeparated(const char* p, size_t n);
// The first n (at most max) frames of a BPF-side stack, stored once
// (Writer::StackId). A frame-pointer walk that strays into zeroed memory
// ends in 0 frames: cut.
int64_t StoreStack(Writer& w, const __u64* ips, size_t n, size_t max);

// Under sudo for a user other than root, the uid of that user: the groups
// that see the whole machine (block, irq, pagecache) then keep only what
// belongs to the traced tree or to that user's files, and count the rest
// (docs/privileges.md). nullopt as root. If the invoking user cannot be
// told, a uid that owns nothing: fail closed.
std::optional<uint32_t> OnlyForUser();

// libbpf's error for `what` as a sentence that names the group.
Error LibbpfError(const char* group, const std::string& what, int err);

}  // namespace syspgo
