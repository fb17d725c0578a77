//===- probe_load_test.cc - the groups' one linked BPF object, loaded ----===//
// Every group's programs and maps are in one object (bpf/common.bpf.h), and
// a group's are those whose names start with its own: a name that belongs
// to no group would never be loaded. LoadProbeGroups loads them together;
// when the object as a whole fails to load, each group is loaded alone, so
// one broken group leaves the others recording. Real kernel, real verifier.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collect/groups.h"
#include "collect/probe_group.h"
#include "syspgo_bpf.skel.h"

namespace syspgo::test {
namespace {

struct SkelDeleter {
  void operator()(syspgo_bpf* s) const { syspgo_bpf__destroy(s); }
};

TEST(ProbeLoad, EveryProgramAndMapBelongsToOneGroupOrIsShared) {
  std::unique_ptr<syspgo_bpf, SkelDeleter> skel(syspgo_bpf__open());
  ASSERT_TRUE(skel) << "cannot open the linked BPF object: " << strerror(errno);
  CollectOptions opts;
  for (const std::string& g : AllProbeGroupNames()) opts.probes.insert(g);
  auto groups = MakeProbeGroups(opts);
  auto owners = [&](const char* name) {
    int n = 0;
    for (auto& g : groups) n += g->Owns(name);
    return n;
  };
  bpf_program* p;
  int programs = 0;
  bpf_object__for_each_program(p, skel->obj) {
    ++programs;
    EXPECT_EQ(owners(bpf_program__name(p)), 1) << "program " << bpf_program__name(p);
  }
  EXPECT_GE(programs, static_cast<int>(groups.size()));
  bpf_map* m;
  bpf_object__for_each_map(m, skel->obj) {
    const char* n = bpf_map__name(m);
    EXPECT_EQ(owners(n), SharedBpfMap(m) ? 0 : 1) << "map " << n;
  }
  for (auto& g : groups) {  // each group's own ring buffer (GROUP_EVENTS)
    EXPECT_NE(bpf_object__find_map_by_name(skel->obj, g->events_map().c_str()), nullptr) << g->events_map();
  }
}

// irq with a histogram map the kernel refuses to create (no entries): the
// object as a whole cannot load.
class BrokenIrq : public ProbeGroup {
 public:
  BrokenIrq() : ProbeGroup(SYSPGO_GROUP_IRQ) {}
  void DeclareTables(Writer&) override {}
  void Handle(const void*, size_t, Writer&) override {}

 protected:
  Status Configure(syspgo_bpf* skel, const GroupContext&) override {
    bpf_map__set_max_entries(skel->maps.irq_hist, 0);
    return {};
  }
};

TEST(ProbeLoad, AGroupThatCannotLoadLeavesTheOthersLoadedAndAttached) {
  CollectOptions opts;
  opts.ringbuf_bytes = 1 << 20;
  GroupContext ctx;
  ctx.opts = &opts;
  std::vector<std::unique_ptr<ProbeGroup>> groups;
  groups.push_back(MakeProcGroup());
  groups.push_back(MakeSchedGroup());
  groups.push_back(std::make_unique<BrokenIrq>());
  groups.push_back(MakeBlockGroup());
  std::vector<ProbeGroup*> raw;
  for (auto& g : groups) raw.push_back(g.get());

  std::vector<Status> st = LoadProbeGroups(raw, ctx);
  ASSERT_EQ(st.size(), raw.size());
  EXPECT_TRUE(st[0].ok()) << st[0].error().message;
  EXPECT_TRUE(st[1].ok()) << st[1].error().message;
  ASSERT_FALSE(st[2].ok());
  EXPECT_NE(st[2].error().message.find("probe group 'irq'"), std::string::npos) << st[2].error().message;
  EXPECT_TRUE(st[3].ok()) << st[3].error().message;
  // The groups that loaded alone share proc's process tree and drop counts.
  EXPECT_GE(ctx.targets_fd, 0);
  EXPECT_GE(ctx.drops_fd, 0);
  for (size_t i : {0, 1, 3}) EXPECT_GE(raw[i]->ringbuf_fd(), 0) << raw[i]->name();
}

// proc and fileio, loaded together.
struct ProcAndFileio {
  CollectOptions opts;
  GroupContext ctx;
  std::unique_ptr<ProbeGroup> proc = MakeProcGroup(), fileio = MakeFileioGroup();
  // Loads both; returns why each that failed did, or "".
  std::string Load() {
    opts.ringbuf_bytes = 1 << 20;
    ctx.opts = &opts;
    std::vector<ProbeGroup*> raw{proc.get(), fileio.get()};
    std::vector<Status> st = LoadProbeGroups(raw, ctx);
    std::string why;
    for (size_t i = 0; i < raw.size(); ++i)
      if (!st[i].ok()) why += std::string(raw[i]->name()) + ": " + st[i].error().message + "\n";
    return why;
  }
};

// The BPF programs this process holds: each one's fd and info.
std::vector<std::pair<int, bpf_prog_info>> HeldPrograms() {
  std::vector<std::pair<int, bpf_prog_info>> out;
  DIR* d = opendir("/proc/self/fd");
  while (dirent* e = d ? readdir(d) : nullptr) {
    char link[64] = {};
    std::string path = std::string("/proc/self/fd/") + e->d_name;
    if (readlink(path.c_str(), link, sizeof link - 1) <= 0 || strcmp(link, "anon_inode:bpf-prog") != 0) continue;
    bpf_prog_info info{};
    uint32_t len = sizeof info;
    if (bpf_obj_get_info_by_fd(atoi(e->d_name), &info, &len) == 0) out.push_back({atoi(e->d_name), info});
  }
  if (d) closedir(d);
  return out;
}

TEST(ProbeLoad, TogetherEveryGroupLoadsAndAGroupNotAskedForLoadsNothing) {
  ProcAndFileio g;
  EXPECT_EQ(g.Load(), "");
  EXPECT_GE(g.fileio->ringbuf_fd(), 0);
  // Only proc's and fileio's programs reached the kernel: the programs this
  // process holds (other tests may be recording beside it).
  int loaded = 0;
  for (const auto& [fd, info] : HeldPrograms()) {
    std::string n = info.name;  // the kernel keeps 15 characters
    EXPECT_TRUE(n.rfind("proc_", 0) == 0 || n.rfind("fileio_", 0) == 0) << n;
    ++loaded;
  }
  EXPECT_GE(loaded, 6);  // proc's four, fileio's two
}

// The xlated instructions of this process's loaded program named `name`.
std::vector<bpf_insn> Xlated(const std::string& name) {
  std::vector<bpf_insn> insns;
  for (auto [fd, info] : HeldPrograms()) {
    if (name != info.name) continue;
    insns.resize(info.xlated_prog_len / sizeof(bpf_insn));
    info = {};
    info.xlated_prog_len = insns.size() * sizeof(bpf_insn);
    info.xlated_prog_insns = reinterpret_cast<uintptr_t>(insns.data());
    uint32_t len = sizeof info;
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) insns.clear();
    break;
  }
  return insns;
}

// fileio's programs run on every syscall of every task: they ask whether
// the task is recorded before anything else, so that one that is not pays a
// few loads. The first map they name is `targets`, after one call at most
// (bpf_get_current_task_btf), and its lookup is inlined: no call before
// the branch on its bounds.
TEST(ProbeLoad, TheProgramsOnEverySyscallAskForTheRecordedTaskFirstWithoutACall) {
  ProcAndFileio g;
  ASSERT_EQ(g.Load(), "");
  bpf_map_info map{};
  uint32_t len = sizeof map;
  ASSERT_EQ(bpf_obj_get_info_by_fd(g.ctx.targets_fd, &map, &len), 0);
  EXPECT_EQ(map.max_entries, TracedSet::Words());
  for (const char* name : {"fileio_enter", "fileio_exit"}) {
    std::vector<bpf_insn> insns = Xlated(name);
    ASSERT_FALSE(insns.empty()) << name;
    auto is_call = [](const bpf_insn& x) { return x.code == (BPF_JMP | BPF_CALL); };
    size_t i = 0, calls = 0;
    for (; i < insns.size() && !(insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) && insns[i].src_reg); ++i)
      calls += is_call(insns[i]);
    ASSERT_LT(i, insns.size()) << name << " names no map";
    EXPECT_EQ(insns[i].imm, static_cast<int32_t>(map.id)) << name << ": the first map it names is not `targets`";
    EXPECT_LE(calls, 1u) << name << ": calls before it asks `targets`";
    for (++i; i < insns.size(); ++i) {
      uint8_t cls = BPF_CLASS(insns[i].code), op = BPF_OP(insns[i].code);
      ASSERT_FALSE(is_call(insns[i])) << name << ": a call in the lookup in `targets` (not inlined)";
      if ((cls == BPF_JMP || cls == BPF_JMP32) && op != BPF_JA && op != BPF_CALL && op != BPF_EXIT) break;
    }
  }
}

// The collector and the kernel share the bits: a fork of a process the
// collector added is added by the kernel, and leaves when it exits.
TEST(ProbeLoad, TheCollectorAndTheKernelShareTheTargetsBits) {
  ProcAndFileio g;
  ASSERT_EQ(g.Load(), "");
  ASSERT_TRUE(g.ctx.targets);
  TracedSet& t = *g.ctx.targets;
  EXPECT_FALSE(t.Has(getpid()));
  t.Add(getpid());
  EXPECT_TRUE(t.Has(getpid()));
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char c;
    if (read(go[0], &c, 1) != 1) _exit(1);
    _exit(0);
  }
  EXPECT_TRUE(t.Has(child)) << "the kernel did not add the fork of a target";
  t.Remove(getpid());
  EXPECT_FALSE(t.Has(getpid()));
  EXPECT_TRUE(t.Has(child)) << "removing the parent's bit took the child's";
  ASSERT_EQ(write(go[1], "x", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_FALSE(t.Has(child)) << "the kernel did not remove a target that exited";
  for (int fd : go) close(fd);
}

}  // namespace
}  // namespace syspgo::test
