//===- block_group.cc - loader for bpf/block.bpf.c: block requests -------===//
// Decodes request completions into block_rq rows, names the kernel's
// REQ_OP_* values from its BTF (they changed between versions), and at the
// end reads the in-kernel latency histogram into block_latency_hist.
// Under sudo the kernel side keeps only the user's own requests
// (bpf/block.bpf.c); how many it left out becomes the group's note.
// Devices arrive in the kernel's encoding and are stored as st_dev.
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "collect/btf_hooks.h"
#include "collect/bpf_maps.h"
#include "bpf/block.h"
#include "syspgo_bpf.skel.h"

namespace syspgo {
namespace {

class BlockGroup : public ProbeGroup {
 public:
  BlockGroup() : ProbeGroup(SYSPGO_GROUP_BLOCK) {}

  void DeclareTables(Writer& w) override {
    rq_ = w.Table("block_rq", {"ts", "dur", "queue_dur", "dev", "part_dev", "sector", "bytes", "op", "flags",
                               "cmd_flags", "error", "pid", "tid", "comm", "target", "issue_pid", "issue_tid",
                               "file_dev", "file_ino", "file_index"});
    op_ = w.Table("block_op", {"op", "name"}, "INSERT OR IGNORE");
    hist_ = w.Table("block_latency_hist",
                    {"dev", "part_dev", "op", "slot", "lo_ns", "hi_ns", "count", "sum_ns"});
  }

  // The op names of this kernel, so rows stay readable across versions
  // (read in Configure()).
  void OnStart(Writer& w) override {
    for (auto& [val, name] : ops_) w.Row(op_).I(val).T(name);
  }

  void Handle(const void* data, size_t size, Writer& w) override {
    auto* h = static_cast<const syspgo_hdr*>(data);
    if (h->type != BLOCK_RQ || size < sizeof(block_rq_event)) return;
    auto* e = static_cast<const block_rq_event*>(data);
    auto row = w.Row(rq_);
    row.I(static_cast<int64_t>(h->ts - start_ns_)).I(e->dur);
    if (e->start_ts && e->start_ts <= h->ts && !(e->flags & BLOCK_F_UNISSUED))
      row.I(h->ts - e->start_ts);
    else
      row.Null();
    row.I(KernelDevToUser(e->dev)).I(KernelDevToUser(e->part_dev)).I(e->sector).I(e->bytes).I(e->op)
        .I(e->flags & ~BLOCK_F_TARGET).I(e->cmd_flags).I(e->error).I(h->pid).I(h->tid)
        .T(std::string(e->comm, strnlen(e->comm, sizeof e->comm))).I((e->flags & BLOCK_F_TARGET) != 0)
        .I(e->issue_pid).I(e->issue_tid).I(e->file_dev ? KernelDevToUser(e->file_dev) : 0).I(e->file_ino)
        .I(e->file_index);
  }

  void Finish(Writer& w) override {
    int fd = bpf_map__fd(skel_->maps.block_hist);
    int ncpu = libbpf_num_possible_cpus();
    if (fd < 0 || ncpu <= 0) return;
    std::vector<block_hist_val> vals(ncpu);  // 16 bytes: already 8-aligned per CPU
    block_hist_key key{}, next{};
    block_hist_key* prev = nullptr;
    while (bpf_map_get_next_key(fd, prev, &next) == 0) {
      key = next;
      prev = &key;
      if (bpf_map_lookup_elem(fd, &key, vals.data()) != 0) continue;
      block_hist_val sum{};
      for (auto& v : vals) {
        sum.count += v.count;
        sum.sum_ns += v.sum_ns;
      }
      if (!sum.count) continue;
      int64_t lo = key.slot ? int64_t{1} << key.slot : 0;
      w.Row(hist_)
          .I(KernelDevToUser(key.dev)).I(KernelDevToUser(key.part_dev)).I(key.op).I(key.slot).I(lo)
          .I(int64_t{1} << (key.slot + 1)).I(sum.count).I(sum.sum_ns);
    }
    if (uint64_t n = skel_->bss->block_left_out)
      note += (note.empty() ? "" : " ") + std::to_string(n) +
              " requests of other users' processes and files left out (collect under sudo).";
    if (uint64_t n = skel_->bss->untracked)
      note += (note.empty() ? "" : " ") + std::to_string(n) + " requests not followed (in-flight map full).";
    if (uint64_t n = skel_->bss->lost)
      note += (note.empty() ? "" : " ") + std::to_string(n) +
              " requests started but their completion never reached the probes; they are missing from block_rq.";
  }

 protected:
  // block_io_start (Linux 6.5, "block: add a tracepoint for the start of
  // I/O accounting") names the submitter; without it the issuer stands in.
  Status Configure(syspgo_bpf* skel, const GroupContext&) override {
    ReadOpNames();
    std::optional<uint32_t> user = OnlyForUser();
    skel->rodata->block_only_own = user.has_value();
    skel->rodata->block_own_uid = user.value_or(0);
    bool io_start = KernelHasTracepoint("block_io_start");
    bpf_program__set_autoload(skel->progs.block_io_start, io_start);
    bpf_program__set_autoload(skel->progs.block_rq_issue, io_start);
    bpf_program__set_autoload(skel->progs.block_rq_issue_as_submitter, !io_start);
    if (!io_start)
      note = "no block_io_start tracepoint (Linux < 6.5): pid is the task that issued each request, "
             "which may not be the one that submitted it.";
    if (!KernelHasTracepoint("block_rq_merge")) bpf_program__set_autoload(skel->progs.block_rq_merge, false);
    return {};
  }

 private:
  // While the group loads, not in OnStart(): the parsed vmlinux BTF (about
  // 10 MiB) is then gone before the ring buffers are mapped.
  void ReadOpNames() {
    ops_.clear();
    const btf* vmlinux = KernelBtf();
    if (!vmlinux) return;
    int id = btf__find_by_name_kind(vmlinux, "req_op", BTF_KIND_ENUM);
    const btf_type* t = id > 0 ? btf__type_by_id(vmlinux, id) : nullptr;
    const struct btf_enum* e = t ? btf_enum(t) : nullptr;
    for (int i = 0; e && i < btf_vlen(t); ++i) {
      std::string n = btf__name_by_offset(vmlinux, e[i].name_off);
      if (n.rfind("REQ_OP_", 0) != 0 || n == "REQ_OP_LAST") continue;
      n = n.substr(7);
      for (auto& c : n) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
      ops_.emplace_back(e[i].val, n);
    }
  }

  int rq_ = -1, op_ = -1, hist_ = -1;
  std::vector<std::pair<int64_t, std::string>> ops_;
};

}  // namespace

std::unique_ptr<ProbeGroup> MakeBlockGroup() { return std::make_unique<BlockGroup>(); }

}  // namespace syspgo
