//===- sample_pprof.cc - CPU samples from a pprof profile.proto ----------===//
// The file is read whole (bounded), gunzipped into a bounded buffer, parsed
// with the generated classes of schemas/pprof_profile.proto, and checked
// before a single sample is taken: every id it refers to exists, every
// string index is in the table, every value is non-negative and the sum
// fits. Only then are its stacks turned into StackSamples, the same form
// analyze/sample_db.cc gives a run's samples in (see the header for how
// addresses become file offsets and return addresses).
#include "analyze/sample_pprof.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <unordered_map>

#include "common/files.h"
#include "schemas/pprof_profile.pb.h"

namespace syspgo {
namespace {

namespace pb = perftools::profiles;

// Addresses from here up are the kernel's half on x86-64: a frame there
// without a mapping is a kernel frame.
constexpr uint64_t kKernelHalf = 0xffff800000000000ull;

std::string Quoted(const std::string& path) { return "'" + path + "'"; }

Error NotPprof(const std::string& path, const std::string& why) {
  return MakeError(Quoted(path) + " is not a usable pprof profile: " + why +
                   ". Check it with `go tool pprof -raw " + path + "`; syspgo reads pprof's profile.proto, gzipped "
                   "or not, as `go tool pprof -proto` writes it.");
}

// The whole file, at most `limit` bytes; a larger one is refused.
Result<std::string> ReadBounded(const std::string& path, uint64_t limit) {
  int fd = OpenAsUser(path, O_RDONLY);
  if (fd < 0) return MakeError("cannot open pprof profile " + Quoted(path) + ": " + strerror(errno) + ".", errno);
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return MakeError(Quoted(path) + " is not a regular file; give syspgo the pprof profile itself (save a stream "
                     "to a file first).");
  }
  if (static_cast<uint64_t>(st.st_size) > limit) {
    close(fd);
    return MakeError(Quoted(path) + " is " + std::to_string(st.st_size >> 20) + " MiB, more than the " +
                     std::to_string(limit >> 20) + " MiB syspgo reads from one pprof file. Export a smaller one: "
                     "one binary's samples (`go tool pprof -proto -show_from=... ` or your backend's filter by "
                     "service), or a shorter time range, and merge several with syspgo merge.");
  }
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      return MakeError("cannot read pprof profile " + Quoted(path) + ": " + strerror(e) + ".", e);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > limit) {
      close(fd);
      return MakeError(Quoted(path) + " grew past " + std::to_string(limit >> 20) +
                       " MiB while it was read; give syspgo a finished file.");
    }
  }
  close(fd);
  return out;
}

bool Gzipped(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f && static_cast<unsigned char>(bytes[1]) == 0x8b;
}

// Gunzips every member of `in` (gzip allows several, and Go's reader takes
// them) into at most `limit` bytes.
Result<std::string> Gunzip(const std::string& in, uint64_t limit, const std::string& path) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return MakeError("zlib could not start to gunzip " + Quoted(path) + ".");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  std::string out;
  std::string chunk(1 << 20, '\0');
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(chunk.data());
    z.avail_out = static_cast<uInt>(chunk.size());
    int rc = inflate(&z, Z_NO_FLUSH);
    out.append(chunk.data(), chunk.size() - z.avail_out);
    if (out.size() > limit) {
      inflateEnd(&z);
      return MakeError(Quoted(path) + " expands to more than " + std::to_string(limit >> 20) +
                       " MiB when gunzipped, more than syspgo reads from one pprof profile (a gzip bomb, or a "
                       "profile of far more than CPU samples). Export a smaller one (one binary, a shorter time "
                       "range) and merge several with syspgo merge.");
    }
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      // Another member follows, or trailing bytes that are not gzip.
      if (z.avail_in < 2 || z.next_in[0] != 0x1f || z.next_in[1] != 0x8b) {
        inflateEnd(&z);
        return NotPprof(path, "it has bytes after its gzip data");
      }
      inflateReset(&z);
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && z.avail_in == 0) {
      inflateEnd(&z);
      return NotPprof(path, "its gzip data ends early (the file is truncated)");
    }
    if (rc == Z_BUF_ERROR) continue;  // more output room needed: the next chunk gives it
    std::string why = z.msg ? z.msg : "error " + std::to_string(rc);
    inflateEnd(&z);
    return NotPprof(path, "its gzip data is damaged (" + why + ")");
  }
  inflateEnd(&z);
  return out;
}

// Lowercase hex, or "" for anything else (Go's own build ids are
// "action/content" pairs, not GNU build-ids, and match no ELF note).
std::string NormalizeBuildId(std::string id) {
  for (char& c : id) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return "";
  }
  return id;
}

// The checks and the conversion, over one parsed profile.
class Reader {
 public:
  Reader(const pb::Profile& p, const std::string& path, const PprofLimits& limits)
      : p_(p), path_(path), limits_(limits) {}

  Result<PprofSamples> Read() {
    SYSPGO_TRY(Index());
    SYSPGO_TRY(PickValues());
    return Samples();
  }

 private:
  struct Map {
    bool kernel = false;
    uint32_t binary = kNoBinary;  // for user mappings with a file
    uint64_t start = 0, limit = 0, offset = 0;
  };
  struct Loc {
    uint64_t address = 0;
    int32_t map = -1;  // -> maps_
  };

  Result<std::string> Str(int64_t i, const char* field) const {
    if (i < 0 || i >= p_.string_table_size())
      return NotPprof(path_, std::string(field) + " refers to string " + std::to_string(i) + " of a table of " +
                                 std::to_string(p_.string_table_size()));
    return p_.string_table(static_cast<int>(i));
  }

  Status Index() {
    if (p_.string_table_size() == 0 || !p_.string_table(0).empty())
      return NotPprof(path_, "its string table does not start with the empty string");
    for (const pb::Mapping& m : p_.mapping()) {
      auto file = Str(m.filename(), "a mapping's filename");
      if (!file) return file.error();
      auto id = Str(m.build_id(), "a mapping's build_id");
      if (!id) return id.error();
      if (m.id() == 0 || !map_ids_.emplace(m.id(), static_cast<int32_t>(maps_.size())).second)
        return NotPprof(path_, "mapping id " + std::to_string(m.id()) + " is 0 or given twice");
      if (m.memory_limit() < m.memory_start())
        return NotPprof(path_, "mapping " + std::to_string(m.id()) + " ends before it starts");
      Map out;
      out.start = m.memory_start();
      out.limit = m.memory_limit();
      out.offset = m.file_offset();
      // perf's name for the kernel, which pprof tools keep.
      out.kernel = file->starts_with("[kernel");
      if (out.kernel) {
        if (set_.kernel_build_id.empty()) set_.kernel_build_id = NormalizeBuildId(*id);
      } else if (!file->empty()) {
        out.binary = set_.InternBinary({*file, NormalizeBuildId(*id)});
      }
      maps_.push_back(out);
    }
    std::unordered_map<uint64_t, std::string> function_names;
    for (const pb::Function& f : p_.function()) {
      auto name = Str(f.name(), "a function's name");
      if (!name) return name.error();
      auto system = Str(f.system_name(), "a function's system_name");
      if (!system) return system.error();
      auto file = Str(f.filename(), "a function's filename");
      if (!file) return file.error();
      if (f.id() == 0 || !function_names.emplace(f.id(), system->empty() ? *name : *system).second)
        return NotPprof(path_, "function id " + std::to_string(f.id()) + " is 0 or given twice");
    }
    for (const pb::Location& l : p_.location()) {
      Loc out;
      out.address = l.address();
      if (l.mapping_id() != 0) {
        auto m = map_ids_.find(l.mapping_id());
        if (m == map_ids_.end())
          return NotPprof(path_, "location " + std::to_string(l.id()) + " refers to mapping " +
                                     std::to_string(l.mapping_id()) + ", which it does not have");
        out.map = m->second;
      }
      std::string name;
      for (const pb::Line& line : l.line()) {
        auto f = function_names.find(line.function_id());
        if (f == function_names.end())
          return NotPprof(path_, "location " + std::to_string(l.id()) + " refers to function " +
                                     std::to_string(line.function_id()) + ", which it does not have");
        if (name.empty()) name = f->second;
      }
      if (l.id() == 0 || !loc_ids_.emplace(l.id(), static_cast<uint32_t>(locs_.size())).second)
        return NotPprof(path_, "location id " + std::to_string(l.id()) + " is 0 or given twice");
      // Kernel frames are named by the profile itself (there is no
      // kallsyms to read): one line per sampled address, which is what the
      // symbolizer looks a kernel frame up at.
      bool kernel = out.map >= 0 ? maps_[out.map].kernel : out.address >= kKernelHalf;
      if (kernel && !name.empty() && out.address) {
        for (char& c : name)
          if (c == '\n' || c == '\r') c = ' ';
        char addr[32];
        snprintf(addr, sizeof addr, "%016" PRIx64 " t ", out.address);
        set_.kallsyms += addr + name + "\n";
      }
      locs_.push_back(out);
    }
    return {};
  }

  // Which values count samples, and which off-CPU time.
  Status PickValues() {
    std::string types;
    for (int i = 0; i < p_.sample_type_size(); ++i) {
      auto type = Str(p_.sample_type(i).type(), "a sample type");
      if (!type) return type.error();
      auto unit = Str(p_.sample_type(i).unit(), "a sample type's unit");
      if (!unit) return unit.error();
      types += (types.empty() ? "" : ", ") + *type + "/" + *unit;
      if (*type == "samples" && *unit == "count" && count_ < 0) count_ = i;
      if (*type == "cpu" && *unit == "nanoseconds" && cpu_ns_ < 0) cpu_ns_ = i;
      if (*type == "off_cpu" && *unit == "nanoseconds" && off_ns_ < 0) off_ns_ = i;
    }
    if (p_.has_period_type()) {
      auto type = Str(p_.period_type().type(), "the period type");
      if (!type) return type.error();
      auto unit = Str(p_.period_type().unit(), "the period type's unit");
      if (!unit) return unit.error();
      if (*type == "cpu" && *unit == "nanoseconds" && p_.period() > 0) period_ns_ = static_cast<uint64_t>(p_.period());
    }
    if (count_ < 0 && (cpu_ns_ < 0 || period_ns_ == 0))
      return MakeError(Quoted(path_) + " is not a CPU profile syspgo can count: its sample types are " +
                       (types.empty() ? "none" : types) + ". syspgo reads samples/count, or cpu/nanoseconds with a "
                       "cpu/nanoseconds period; export the CPU profile of your profiler (heap, lock and wall-clock "
                       "profiles say nothing about where CPU time goes).");
    return {};
  }

  // What the samples add up to, and how many were left out or cut, and why.
  struct Tally {
    uint64_t total = 0, off_total = 0;
    uint64_t no_address = 0, cut = 0, deep = 0;
  };

  Result<PprofSamples> Samples() {
    Tally t;
    for (const pb::Sample& s : p_.sample()) {
      auto values = Values(s, t);
      if (!values) return values.error();
      auto [count, off] = *values;
      if (!count && !off) continue;
      StackSample st;
      SYSPGO_TRY(ReadLabels(s, st));
      auto whole = ReadStack(s, st, t);
      if (!whole) return whole.error();
      Add(std::move(st), count, off, *whole, t);
    }
    return Finish(t);
  }

  // A sample's values, checked, as (CPU samples, off-CPU ns).
  Result<std::pair<uint64_t, uint64_t>> Values(const pb::Sample& s, const Tally& t) const {
    if (s.value_size() != p_.sample_type_size())
      return NotPprof(path_, "a sample has " + std::to_string(s.value_size()) + " values for " +
                                 std::to_string(p_.sample_type_size()) + " sample types");
    for (int64_t v : s.value())
      if (v < 0) return NotPprof(path_, "a sample has a negative value (" + std::to_string(v) + ")");
    uint64_t count = count_ >= 0 ? static_cast<uint64_t>(s.value(count_))
                                 : (static_cast<uint64_t>(s.value(cpu_ns_)) + period_ns_ / 2) / period_ns_;
    uint64_t off = off_ns_ >= 0 ? static_cast<uint64_t>(s.value(off_ns_)) : 0;
    if (count > limits_.max_samples - t.total)
      return MakeError(Quoted(path_) + " holds more than " + std::to_string(limits_.max_samples) +
                       " CPU samples, more than syspgo counts from one profile (its counts could overflow once "
                       "weighted and scaled). Export a shorter time range, or a downsampled profile.");
    if (off > (uint64_t{1} << 62) - t.off_total)
      return NotPprof(path_, "its off-CPU time adds up to more than 2^62 ns");
    return std::make_pair(count, off);
  }

  // The sample's pid, from its labels, and the command a label names.
  Status ReadLabels(const pb::Sample& s, StackSample& st) {
    std::string comm;
    for (const pb::Label& l : s.label()) {
      auto key = Str(l.key(), "a label's key");
      if (!key) return key.error();
      auto str = Str(l.str(), "a label's value");
      if (!str) return str.error();
      if (*key == "pid" && l.num() > 0 && l.num() <= UINT32_MAX) st.pid = static_cast<uint32_t>(l.num());
      if (*key == "comm" && !str->empty()) comm = *str;
    }
    if (st.pid && !comm.empty()) set_.comm.emplace(st.pid, comm);
    return {};
  }

  // The sample's stack into `st`; false if it was cut short. Innermost
  // first. In each part (kernel, then user) the first frame is where
  // execution was, and every further one a call site, given as its return
  // address - 1: + 1 turns it back into what a stack holds. A frame that
  // breaks that order (kernel below user), has no address (a profile
  // symbolized to names only) or lies outside its mapping ends the stack
  // there; its inner part is still exact.
  Result<bool> ReadStack(const pb::Sample& s, StackSample& st, Tally& t) const {
    for (int k = 0; k < s.location_id_size(); ++k) {
      if (static_cast<size_t>(k) >= limits_.max_depth) {
        ++t.deep;
        break;
      }
      auto it = loc_ids_.find(s.location_id(k));
      if (it == loc_ids_.end())
        return NotPprof(path_, "a sample refers to location " + std::to_string(s.location_id(k)) +
                                   ", which it does not have");
      const Loc& l = locs_[it->second];
      const Map* m = l.map >= 0 ? &maps_[l.map] : nullptr;
      bool kernel = m ? m->kernel : l.address >= kKernelHalf;
      if (l.address == 0 || (kernel && !st.user.empty())) return false;
      if (kernel) {
        st.kernel.push_back(st.kernel.empty() ? l.address : l.address + 1);
        continue;
      }
      uint64_t a = st.user.empty() ? l.address : l.address + 1;
      if (!m || m->binary == kNoBinary) {
        st.user.push_back({kNoBinary, a});
        continue;
      }
      if (l.address < m->start || (m->limit > m->start && l.address >= m->limit)) return false;
      st.user.push_back({m->binary, a - m->start + m->offset});
    }
    return true;
  }

  // Adds a stack of `count` CPU samples and `off` ns off the CPU.
  void Add(StackSample st, uint64_t count, uint64_t off, bool whole, Tally& t) {
    if (st.user.empty() && st.kernel.empty()) {
      t.no_address += count;
      return;
    }
    if (!whole) t.cut += count;
    st.kernel_mode = !st.kernel.empty();
    t.total += count;
    t.off_total += off;
    if (off) {
      StackSample o = st;
      o.count = off;
      set_.offcpu.push_back(std::move(o));
    }
    if (count) {
      st.count = count;
      set_.samples.push_back(std::move(st));
    }
  }

  // The samples with the warnings of what was left out, or why there are none.
  Result<PprofSamples> Finish(const Tally& t) {
    PprofSamples out;
    auto warn = [&](uint64_t n, const std::string& what) {
      if (n) out.warnings.push_back(path_ + ": " + std::to_string(n) + " samples " + what);
    };
    warn(t.no_address, "were left out: their innermost frame has no instruction address (a profile symbolized "
                       "to names only; export it with addresses, e.g. `go tool pprof -proto` of the raw profile) "
                       "or lies outside its mapping");
    warn(t.cut, "had a stack that ended early at a frame without an address, outside its mapping, or out of order; "
                "their inner frames are kept");
    warn(t.deep, "had a stack deeper than " + std::to_string(limits_.max_depth) +
                     " frames; the innermost ones are kept");
    if (set_.samples.empty())
      return MakeError(Quoted(path_) + " has no CPU samples syspgo can place: " +
                       (p_.sample_size() == 0 ? std::string("it holds no samples")
                        : t.no_address ? "its locations have no instruction addresses (a profile symbolized to "
                                         "function names only cannot be matched to a binary's code); export the raw "
                                         "profile, with addresses and mappings"
                                       : "every sample is empty or holds only off-CPU time") +
                       ".");
    set_.period_ns = period_ns_;
    set_.pprof_files.push_back(path_);
    set_.Normalize();
    out.set = std::move(set_);
    return out;
  }

  const pb::Profile& p_;
  const std::string& path_;
  const PprofLimits& limits_;
  SampleSet set_;
  std::vector<Map> maps_;
  std::unordered_map<uint64_t, int32_t> map_ids_;
  std::vector<Loc> locs_;
  std::unordered_map<uint64_t, uint32_t> loc_ids_;
  int count_ = -1, cpu_ns_ = -1, off_ns_ = -1;
  uint64_t period_ns_ = 0;
};

}  // namespace

bool IsPprofFile(const std::string& path) {
  int fd = OpenAsUser(path, O_RDONLY);
  if (fd < 0) return false;
  char head[16] = {};
  ssize_t n = read(fd, head, sizeof head);
  close(fd);
  if (n >= 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b) return true;
  if (n == 16 && memcmp(head, "SQLite format 3", 16) == 0) return false;
  return path.ends_with(".pb") || path.ends_with(".pb.gz") || path.ends_with(".pprof");
}

Result<PprofSamples> LoadPprofSamples(const std::string& path, const PprofLimits& limits) {
  auto bytes = ReadBounded(path, limits.max_file_bytes);
  if (!bytes) return bytes.error();
  std::string proto;
  if (Gzipped(*bytes)) {
    auto raw = Gunzip(*bytes, limits.max_proto_bytes, path);
    if (!raw) return raw.error();
    proto = std::move(*raw);
  } else {
    if (bytes->size() > limits.max_proto_bytes)
      return MakeError(Quoted(path) + " is larger than the " + std::to_string(limits.max_proto_bytes >> 20) +
                       " MiB syspgo parses from one pprof profile; export a smaller one.");
    proto = std::move(*bytes);
  }
  pb::Profile p;
  if (!p.ParseFromArray(proto.data(), static_cast<int>(proto.size())))
    return NotPprof(path, "it does not parse as a perftools.profiles.Profile message");
  proto.clear();
  proto.shrink_to_fit();
  return Reader(p, path, limits).Read();
}

}  // namespace syspgo
