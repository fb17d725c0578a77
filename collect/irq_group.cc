//===- irq_group.cc - loader for bpf/irq.bpf.c: interrupt time -----------===//
// Sets the single-run threshold, turns long handler runs into irq_run rows
// and, at the end, reads the per-CPU histograms into irq_hist, naming hard
// lines from the irqaction names the kernel side captured and softirq
// vectors by their fixed names. Under sudo the kernel side keeps only the
// runs that interrupted the traced tree (bpf/irq.bpf.c); how many it left
// out becomes the group's note.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "collect/bpf_maps.h"
#include "bpf/irq.h"
#include "syspgo_bpf.skel.h"

namespace syspgo {
namespace {

// Softirq vectors as /proc/softirqs names them (stable since Linux 4.5).
const char* SoftirqName(uint32_t vec) {
  static const char* const kNames[] = {"HI",      "TIMER", "NET_TX", "NET_RX",  "BLOCK",
                                       "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"};
  return vec < sizeof kNames / sizeof kNames[0] ? kNames[vec] : "?";
}

const char* KindName(uint32_t kind) { return kind == IRQ_SOFT ? "soft" : "hard"; }

class IrqGroup : public ProbeGroup {
 public:
  IrqGroup() : ProbeGroup(SYSPGO_GROUP_IRQ) {}

  void DeclareTables(Writer& w) override {
    run_ = w.Table("irq_run", {"ts", "dur", "cpu", "kind", "vec", "name", "ret", "pid", "tid", "target"});
    hist_ = w.Table("irq_hist", {"cpu", "kind", "vec", "name", "slot", "lo_ns", "hi_ns", "count", "sum_ns"});
  }

  void Handle(const void* data, size_t size, Writer& w) override {
    auto* h = static_cast<const syspgo_hdr*>(data);
    if (h->type != IRQ_RUN || size < sizeof(irq_run_event)) return;
    auto* e = static_cast<const irq_run_event*>(data);
    std::string name = e->kind == IRQ_SOFT ? SoftirqName(e->vec) : std::string(e->name, strnlen(e->name, sizeof e->name));
    w.Row(run_)
        .I(static_cast<int64_t>(h->ts - start_ns_)).I(e->dur).I(e->cpu).T(KindName(e->kind)).I(e->vec).T(name)
        .I(e->ret).I(h->pid).I(h->tid).I(e->target);
  }

  void Finish(Writer& w) override {
    std::map<uint32_t, std::string> names;
    int nfd = bpf_map__fd(skel_->maps.irq_names);
    uint32_t irq = 0, *prev_irq = nullptr;
    irq_name n{};
    while (bpf_map_get_next_key(nfd, prev_irq, &irq) == 0) {
      if (bpf_map_lookup_elem(nfd, &irq, &n) == 0) names[irq] = std::string(n.name, strnlen(n.name, sizeof n.name));
      prev_irq = &irq;
    }

    if (uint64_t n = PerCpuCounters(bpf_map__fd(skel_->maps.irq_left_out), 1)[0])
      note = std::to_string(n) + " handler runs that interrupted other processes left out (collect under sudo).";
    int fd = bpf_map__fd(skel_->maps.irq_hist);
    int ncpu = libbpf_num_possible_cpus();
    if (ncpu <= 0) return;
    std::vector<irq_hist_val> per_cpu(ncpu);  // 16 bytes: already 8-aligned per CPU
    irq_hist_key key{};
    irq_hist_key* prev = nullptr;
    while (bpf_map_get_next_key(fd, prev, &key) == 0) {
      prev = &key;
      if (bpf_map_lookup_elem(fd, &key, per_cpu.data()) != 0) continue;
      std::string name = key.kind == IRQ_SOFT ? SoftirqName(key.vec) : names[key.vec];
      int64_t lo = key.slot ? int64_t{1} << key.slot : 0;
      for (int cpu = 0; cpu < ncpu; ++cpu) {
        if (!per_cpu[cpu].count) continue;
        w.Row(hist_)
            .I(cpu).T(KindName(key.kind)).I(key.vec).T(name).I(key.slot).I(lo).I(int64_t{1} << (key.slot + 1))
            .I(per_cpu[cpu].count).I(per_cpu[cpu].sum_ns);
      }
    }
  }

 protected:
  Status Configure(syspgo_bpf* skel, const GroupContext& ctx) override {
    skel->rodata->min_ns = ctx.opts->irq_min_ns;
    skel->rodata->irq_only_own = OnlyForUser().has_value();
    return {};
  }

 private:
  int run_ = -1, hist_ = -1;
};

}  // namespace

std::unique_ptr<ProbeGroup> MakeIrqGroup() { return std::make_unique<IrqGroup>(); }

}  // namespace syspgo
