//===- cpu_group.cc - loader for bpf/cpu.bpf.c: cpu-clock samples --------===//
// Opens one software cpu-clock perf event per CPU at --freq and attaches
// the sampling program to each (libbpf's skeleton attach cannot: a
// perf_event program needs the event's fd). Samples become cpu_sample rows.
// For symbolization after the process is gone, the mappings the kernel side
// saw under user frames are stored with their file's build-id (read here
// with libelf, once per file), completed from /proc/PID/maps the first time
// a process is sampled (while it most likely still lives). The kernel's
// symbols are the collector's (collector.cc, StoreKallsyms).
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "bpf/cpu.h"
#include "collect/bpf_maps.h"
#include "syspgo_bpf.skel.h"

namespace syspgo {
namespace {

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

// The GNU build-id note of an ELF file as lowercase hex; "" if none.
std::string ReadBuildId(int fd) {
  static const bool init = elf_version(EV_CURRENT) != EV_NONE;
  if (!init) return "";
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (!elf) return "";
  std::string hex;
  size_t nphdr = 0;
  if (elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &nphdr) == 0) {
    // Program headers, not sections: they survive stripping.
    for (size_t i = 0; i < nphdr && hex.empty(); ++i) {
      GElf_Phdr ph;
      if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_NOTE) continue;
      Elf_Data* d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
      if (!d) continue;
      GElf_Nhdr nh;
      size_t off = 0, name_off, desc_off, next;
      while ((next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
        auto* p = static_cast<const unsigned char*>(d->d_buf);
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(p + name_off, "GNU", 4) == 0) {
          char b[3];
          for (size_t k = 0; k < nh.n_descsz; ++k) {
            snprintf(b, sizeof b, "%02x", p[desc_off + k]);
            hex += b;
          }
          break;
        }
        off = next;
      }
    }
  }
  elf_end(elf);
  return hex;
}

class CpuGroup : public ProbeGroup {
 public:
  CpuGroup() : ProbeGroup(SYSPGO_GROUP_CPU) {}
  ~CpuGroup() override {
    Detach();  // the links before the perf events they hang on
    for (int fd : perf_fds_) close(fd);
  }

  void DeclareTables(Writer& w) override {
    sample_ = w.Table("cpu_sample", {"ts", "pid", "tid", "cpu", "kernel", "ip", "user_stack_id", "kernel_stack_id"});
    mapping_ = w.Table("mapping", {"ts", "pid", "vm_start", "vm_end", "file_off", "dev", "ino", "path", "build_id"},
                       "INSERT OR IGNORE");
  }

  // Processes that were running before we came: their maps now.
  void OnTarget(Writer& w, uint32_t pid, bool attached) override {
    if (attached && maps_read_.insert(pid).second) ReadProcMaps(w, pid, 0);
  }

  void Handle(const void* data, size_t size, Writer& w) override {
    auto* h = static_cast<const syspgo_hdr*>(data);
    int64_t ts = static_cast<int64_t>(h->ts - start_ns_);
    if (h->type == CPU_SAMPLE) {
      if (size < sizeof(cpu_sample_event)) return;
      auto* e = static_cast<const cpu_sample_event*>(data);
      // The kernel side records the vmas under sampled frames; /proc adds
      // the rest of the process's code (frames of other events' stacks).
      if (maps_read_.insert(h->pid).second) ReadProcMaps(w, h->pid, ts);
      w.Row(sample_)
          .I(ts).I(h->pid).I(h->tid).I(e->cpu).I(e->kernel).I(static_cast<int64_t>(w.KernelAddress(e->ip)))
          .I(StoreStack(w, e->ustack, e->ustack_len, CPU_UFRAMES))
          .I(StoreStack(w, e->kstack, e->kstack_len, CPU_KFRAMES));
      return;
    }
    if (h->type == CPU_MAPPING) {
      if (size < offsetof(cpu_mapping_event, path) + CPU_PATH_MAX) return;
      auto* e = static_cast<const cpu_mapping_event*>(data);
      std::string path;
      if (e->flags & CPU_MAP_VDSO) {
        path = "[vdso]";
      } else if (e->ino) {
        size_t off = std::min<size_t>(e->path_off, CPU_PATH_MAX);
        path.assign(e->path + off, CPU_PATH_MAX - off);
        if (path.empty()) path = "/";
        if (e->flags & CPU_MAP_TRUNCATED) path = "..." + path;
      }
      AddMapping(w, Mapping{ts, h->pid, e->start, e->end, e->off, e->ino ? KernelDevToUser(e->dev) : 0, e->ino, path});
    }
  }

 protected:
  Status Configure(syspgo_bpf* s, const GroupContext& ctx) override {
    if (ctx.opts->freq_hz == 0) return MakeError("probe group 'cpu': --freq must be at least 1 Hz.");
    // Attached per CPU in OpenPerfEvents(); libbpf cannot attach it by itself.
    bpf_program__set_autoattach(s->progs.cpu_sample, false);
    return {};
  }

  Status Attach(const GroupContext& ctx) override {
    SYSPGO_TRY(ProbeGroup::Attach(ctx));
    return OpenPerfEvents(ctx.opts->freq_hz);
  }

 private:
  struct Mapping {
    int64_t ts;
    uint32_t pid;
    uint64_t start, end, off, dev, ino;
    std::string path;
  };

  Status OpenPerfEvents(uint32_t freq) {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.freq = 1;
    attr.sample_freq = freq;
    int ncpu = libbpf_num_possible_cpus();
    int last_err = 0;
    for (int cpu = 0; cpu < ncpu; ++cpu) {
      int fd = static_cast<int>(syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
      if (fd < 0) {
        if (errno != ENODEV) last_err = errno;  // ENODEV: the CPU is offline
        continue;
      }
      perf_fds_.push_back(fd);
      bpf_link* l = bpf_program__attach_perf_event(skel_->progs.cpu_sample, fd);
      if (!l) return LibbpfError(name(), "attach the sampler to CPU " + std::to_string(cpu) + "'s cpu-clock event",
                                 -errno);
      links_.push_back(l);
    }
    if (links_.empty()) {
      std::string hint = last_err == EINVAL ? " Is --freq above kernel.perf_event_max_sample_rate?" : "";
      return MakeError("probe group 'cpu': cannot open a cpu-clock perf event at " + std::to_string(freq) +
                           " Hz on any CPU: " + strerror(last_err) + "." + hint,
                       last_err);
    }
    if (last_err)
      note += "sampling only " + std::to_string(links_.size()) + " CPUs: perf_event_open failed on others (" +
              strerror(last_err) + "). ";
    return {};
  }

  // Executable mappings from /proc/PID/maps; dev as major:minor in hex.
  // Kept only if the process is still traced once they were read
  // (StillTraced): it may have left at an exec meanwhile.
  void ReadProcMaps(Writer& w, uint32_t pid, int64_t ts) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/maps");
    std::vector<Mapping> found;
    std::string line;
    while (std::getline(f, line)) {
      uint64_t start, end, off, ino;
      unsigned maj, min;
      char perms[5] = {};
      int consumed = 0;
      if (sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n", &start, &end, perms,
                 &off, &maj, &min, &ino, &consumed) < 7 ||
          perms[2] != 'x')
        continue;
      std::string path = consumed > 0 ? line.substr(consumed) : "";
      if (!ino && path != "[vdso]") continue;
      found.push_back(Mapping{ts, pid, start, end, off, ino ? makedev(maj, min) : 0, ino, path});
    }
    if (!StillTraced(pid)) return;
    for (const Mapping& m : found) AddMapping(w, m);
  }

  void AddMapping(Writer& w, const Mapping& m) {
    if (!mappings_.insert({m.pid, m.start, m.ino}).second) return;
    auto r = w.Row(mapping_);
    r.I(m.ts).I(m.pid).I(static_cast<int64_t>(m.start)).I(static_cast<int64_t>(m.end)).I(static_cast<int64_t>(m.off))
        .I(m.dev).I(m.ino).T(m.path);
    std::string id = m.ino ? BuildId(m) : "";
    if (id.empty()) r.Null();
    else r.T(id);
  }

  // Once per (dev, ino): through /proc/PID/map_files while the process
  // lives (the very file mapped, even if deleted or in another mount
  // namespace), else through the path; either must be the same inode.
  std::string BuildId(const Mapping& m) {
    auto key = std::make_pair(m.dev, m.ino);
    auto it = build_ids_.find(key);
    if (it != build_ids_.end()) return it->second;
    char mf[96];
    snprintf(mf, sizeof mf, "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, m.pid, m.start, m.end);
    std::string id;
    for (const std::string& p : {std::string(mf), m.path}) {
      if (p.empty() || p[0] != '/') continue;
      int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      struct stat sb {};
      bool same = fstat(fd, &sb) == 0 && sb.st_dev == m.dev && sb.st_ino == m.ino;
      if (same) id = ReadBuildId(fd);
      close(fd);
      if (same) break;
    }
    build_ids_[key] = id;
    return id;
  }

  int sample_ = -1, mapping_ = -1;
  std::vector<int> perf_fds_;
  std::unordered_set<uint32_t> maps_read_;
  std::set<std::tuple<uint32_t, uint64_t, uint64_t>> mappings_;
  std::map<std::pair<uint64_t, uint64_t>, std::string> build_ids_;
};

}  // namespace

std::unique_ptr<ProbeGroup> MakeCpuGroup() { return std::make_unique<CpuGroup>(); }

}  // namespace syspgo
