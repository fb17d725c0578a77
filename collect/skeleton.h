//===- skeleton.h - the common load sequence for a skeleton-based group ---===//
// SkelGroup<S> runs the fixed loader order for one bpftool skeleton S:
// open, shared rodata (group id, wakeup threshold), ring buffer size, reuse
// of the shared maps, the group's own Configure(), load, attach. The
// skeleton is destroyed with the group (RAII instead of goto cleanup).
#pragma once
#include <cerrno>

#include "collect/probe_group.h"

namespace syspgo {

template <typename S>
struct SkelOps {
  S* (*open)();
  int (*load)(S*);
  int (*attach)(S*);
  void (*destroy)(S*);
};

// Expands to the SkelOps of the skeleton generated with `name NAME`.
#define SYSPGO_SKEL_OPS(NAME) \
  ::syspgo::SkelOps<struct NAME>{&NAME##__open, &NAME##__load, &NAME##__attach, &NAME##__destroy}

template <typename S>
class SkelGroup : public ProbeGroup {
 public:
  explicit SkelGroup(SkelOps<S> ops) : ops_(ops) {}
  ~SkelGroup() override {
    if (skel_) ops_.destroy(skel_);
  }

  Status Load(const GroupContext& ctx) override {
    skel_ = ops_.open();
    if (!skel_) return LibbpfError(name(), "open the BPF object", -errno);
    skel_->rodata->group_id = id();
    skel_->rodata->wakeup_bytes = ctx.wakeup_bytes();
    SYSPGO_TRY(SetRingbufSize(skel_->obj, ctx.opts->ringbuf_bytes, name()));
    if (ctx.targets_fd >= 0) SYSPGO_TRY(ReuseSharedMaps(skel_->obj, ctx, name()));
    SYSPGO_TRY(Configure(skel_, ctx));
    if (int err = ops_.load(skel_)) return LibbpfError(name(), "load the BPF programs", err);
    if (int err = ops_.attach(skel_)) return LibbpfError(name(), "attach the BPF programs", err);
    return {};
  }
  bpf_object* object() override { return skel_ ? skel_->obj : nullptr; }
  int ringbuf_fd() override { return bpf_map__fd(skel_->maps.events); }

 protected:
  // Group-specific settings between open and load: rodata, map sizes,
  // bpf_program__set_autoload(prog, false) for hooks this kernel lacks.
  virtual Status Configure(S*, const GroupContext&) { return {}; }
  S* skel_ = nullptr;

 private:
  SkelOps<S> ops_;
};

}  // namespace syspgo
