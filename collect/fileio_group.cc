//===- fileio_group.cc - loader for bpf/fileio.bpf.c: file-I/O syscalls --===//
// Decodes the fileio events into file_io, file_open, file_lookup and mmap
// rows, and records each (dev, ino) -> path the first time an open names it.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "collect/skeleton.h"
#include "bpf/fileio.h"
#include "fileio.skel.h"

namespace syspgo {
namespace {

struct DevInoHash {
  size_t operator()(const std::pair<uint64_t, uint64_t>& k) const { return k.first * 0x9E3779B97F4A7C15ull ^ k.second; }
};

// The path components come leaf first, each NUL-terminated.
std::string JoinPath(const fileio_open_event* e) {
  size_t n = std::min<size_t>(e->path_len, sizeof e->path);
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i < n) {
    size_t len = strnlen(e->path + i, n - i);
    if (len) parts.emplace_back(e->path + i, len);
    i += len + 1;
  }
  std::string out = e->truncated ? "..." : "";
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    out += '/';
    out += *it;
  }
  return out.empty() ? "/" : out;
}

class FileioGroup : public SkelGroup<fileio> {
 public:
  FileioGroup() : SkelGroup(SYSPGO_SKEL_OPS(fileio)) {}
  const char* name() const override { return "fileio"; }
  syspgo_group id() const override { return SYSPGO_GROUP_FILEIO; }

  void DeclareTables(Writer& w) override {
    io_ = w.Table("file_io", {"ts", "dur", "pid", "tid", "nr", "fd", "dev", "ino", "kind", "pos", "req", "ret"});
    open_ = w.Table("file_open", {"ts", "dur", "pid", "tid", "nr", "path", "flags", "ret", "dev", "ino"});
    lookup_ = w.Table("file_lookup", {"ts", "dur", "pid", "tid", "nr", "path", "flags", "ret"});
    mmap_ = w.Table("mmap", {"ts", "dur", "pid", "tid", "addr", "len", "prot", "flags", "fd", "dev", "ino", "off"});
    file_ = w.Table("file", {"dev", "ino", "path"}, "INSERT OR IGNORE");
  }

  Status Load(const GroupContext& ctx) override {
    start_ns_ = ctx.start_ns;
    return SkelGroup::Load(ctx);
  }

  // Files an attached process opened before we came: paths from /proc.
  void OnTarget(Writer& w, uint32_t pid, bool attached) override {
    if (!attached) return;
    std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    DIR* d = opendir(dir.c_str());
    if (!d) return;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::string fd = dir + "/" + e->d_name;
      char buf[4096];
      ssize_t n = readlink(fd.c_str(), buf, sizeof buf - 1);
      struct stat sb {};
      if (n <= 0 || buf[0] != '/' || stat(fd.c_str(), &sb) != 0) continue;
      if (seen_.insert({sb.st_dev, sb.st_ino}).second) w.Row(file_).I(sb.st_dev).I(sb.st_ino).T(std::string(buf, n));
    }
    closedir(d);
  }

  void Handle(const void* data, size_t size, Writer& w) override {
    auto* h = static_cast<const syspgo_hdr*>(data);
    int64_t ts = static_cast<int64_t>(h->ts - start_ns_);
    switch (h->type) {
      case FILEIO_IO: {
        if (size < sizeof(fileio_io_event)) return;
        auto* e = static_cast<const fileio_io_event*>(data);
        w.Row(io_)
            .I(ts).I(e->dur).I(h->pid).I(h->tid).I(e->nr).I(e->fd)
            .I(e->file.kind ? KernelDevToUser(e->file.dev) : 0).I(e->file.ino).I(e->file.kind)
            .I(e->pos).I(e->req).I(e->ret);
        return;
      }
      case FILEIO_OPEN: {
        if (size < offsetof(fileio_open_event, path)) return;
        auto* e = static_cast<const fileio_open_event*>(data);
        uint64_t dev = e->ret >= 0 ? KernelDevToUser(e->file.dev) : 0;
        uint64_t ino = e->ret >= 0 ? e->file.ino : 0;
        w.Row(open_)
            .I(ts).I(e->dur).I(h->pid).I(h->tid).I(e->nr)
            .T(std::string(e->given, strnlen(e->given, sizeof e->given)))
            .I(e->flags).I(e->ret).I(dev).I(ino);
        if (e->ret >= 0 && seen_.insert({dev, ino}).second) w.Row(file_).I(dev).I(ino).T(JoinPath(e));
        return;
      }
      case FILEIO_LOOKUP: {
        if (size < sizeof(fileio_lookup_event)) return;
        auto* e = static_cast<const fileio_lookup_event*>(data);
        w.Row(lookup_)
            .I(ts).I(e->dur).I(h->pid).I(h->tid).I(e->nr)
            .T(std::string(e->given, strnlen(e->given, sizeof e->given)))
            .I(e->flags).I(e->ret);
        return;
      }
      case FILEIO_MMAP: {
        if (size < sizeof(fileio_mmap_event)) return;
        auto* e = static_cast<const fileio_mmap_event*>(data);
        w.Row(mmap_)
            .I(ts).I(e->dur).I(h->pid).I(h->tid).I(static_cast<int64_t>(e->addr)).I(e->len).I(e->prot)
            .I(e->flags).I(e->fd).I(e->file.kind ? KernelDevToUser(e->file.dev) : 0).I(e->file.ino).I(e->off);
        return;
      }
    }
  }

 private:
  uint64_t start_ns_ = 0;
  int io_ = -1, open_ = -1, lookup_ = -1, mmap_ = -1, file_ = -1;
  std::unordered_set<std::pair<uint64_t, uint64_t>, DevInoHash> seen_;
};

}  // namespace

std::unique_ptr<ProbeGroup> MakeFileioGroup() { return std::make_unique<FileioGroup>(); }

}  // namespace syspgo
