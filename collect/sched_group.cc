//===- sched_group.cc - loader for bpf/sched.bpf.c: off-CPU intervals ----===//
// Each event is one finished off-CPU interval of a traced thread (the
// kernel already dropped those shorter than --offcpu-min), with the stacks
// it left the CPU with and the task that woke it. It becomes one offcpu
// row; stacks go to the shared stack table.
#include <algorithm>
#include <cstring>

#include "bpf/sched.h"
#include "collect/btf_hooks.h"
#include "collect/bpf_maps.h"
#include "syspgo_bpf.skel.h"

namespace syspgo {
namespace {

class SchedGroup : public ProbeGroup {
 public:
  SchedGroup() : ProbeGroup(SYSPGO_GROUP_SCHED) {}

  void DeclareTables(Writer& w) override {
    offcpu_ = w.Table("offcpu", {"ts", "dur", "pid", "tid", "cpu", "state", "kernel_stack_id", "user_stack_id",
                                 "wake_ts", "waker_pid", "waker_tid", "waker_comm", "waker_kernel_stack_id",
                                 "waker_user_stack_id"});
  }

  void Handle(const void* data, size_t size, Writer& w) override {
    auto* h = static_cast<const syspgo_hdr*>(data);
    if (h->type != SCHED_OFFCPU || size < offsetof(sched_offcpu_event, ustack)) return;
    auto* e = static_cast<const sched_offcpu_event*>(data);
    size_t ufit = (size - offsetof(sched_offcpu_event, ustack)) / sizeof(uint64_t);  // the event is cut after them
    auto r = w.Row(offcpu_);
    r.I(static_cast<int64_t>(h->ts - start_ns_)).I(e->dur).I(h->pid).I(h->tid).I(e->cpu).I(e->state)
        .I(StoreStack(w, e->kstack, e->kstack_len, SCHED_KFRAMES))
        .I(StoreStack(w, e->ustack, e->ustack_len, std::min<size_t>(ufit, SCHED_UFRAMES)));
    if (!e->wake_ts) {
      r.Null().Null().Null().Null().Null().Null();
      return;
    }
    r.I(static_cast<int64_t>(e->wake_ts - start_ns_)).I(e->waker_pid).I(e->waker_tid)
        .T(std::string(e->waker_comm, strnlen(e->waker_comm, sizeof e->waker_comm)))
        .I(StoreStack(w, e->waker_kstack, e->waker_kstack_len, SCHED_KFRAMES))
        .I(StoreStack(w, e->waker_ustack, e->waker_ustack_len, SCHED_UFRAMES));
  }

 protected:
  Status Configure(syspgo_bpf* s, const GroupContext& ctx) override {
    s->rodata->offcpu_min_ns = ctx.opts->offcpu_min_ns;
    std::vector<std::string> missing = DisableMissingTracepoints();
    for (auto& tp : missing)
      if (tp == "sched_switch")
        return MakeError("probe group 'sched': this kernel has no sched_switch tracepoint in its BTF; "
                         "off-CPU intervals cannot be recorded.");
    if (!missing.empty()) note = "no wakers recorded: this kernel lacks " + JoinNames(missing);
    return {};
  }

 private:
  int offcpu_ = -1;
};

}  // namespace

std::unique_ptr<ProbeGroup> MakeSchedGroup() { return std::make_unique<SchedGroup>(); }

}  // namespace syspgo
