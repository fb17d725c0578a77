//===- pprof.cc - CPU samples as a gzipped pprof profile.proto -----------===//
// Built with the generated protobuf classes, gzipped with zlib (no file
// name or time in the gzip header, so the same profile gives the same bytes).
#include "optimize/pprof.h"

#include <zlib.h>

#include <map>

#include "common/files.h"
#include "schemas/pprof_profile.pb.h"

namespace syspgo {
namespace {

namespace pb = perftools::profiles;

class Strings {
 public:
  explicit Strings(pb::Profile* p) : p_(p) { Id(""); }
  int64_t Id(const std::string& s) {
    auto [it, fresh] = ids_.try_emplace(s, static_cast<int64_t>(ids_.size()));
    if (fresh) p_->add_string_table(s);
    return it->second;
  }

 private:
  pb::Profile* p_;
  std::map<std::string, int64_t> ids_;
};

Result<std::string> Gzip(const std::string& in) {
  z_stream z{};
  // windowBits 15 + 16: a gzip wrapper whose header carries no name or time.
  if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return MakeError("zlib could not start a gzip stream.");
  std::string out(deflateBound(&z, in.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return MakeError("zlib could not compress the profile.");
  return out;
}

class PprofEmitter : public ProfileEmitter {
 public:
  Status Write(const Profile& p, uint32_t binary, const std::string& path) const override {
    pb::Profile out;
    Strings str(&out);
    auto value_type = [&](pb::ValueType* v, const char* type, const char* unit) {
      v->set_type(str.Id(type));
      v->set_unit(str.Id(unit));
    };
    value_type(out.add_sample_type(), "samples", "count");
    value_type(out.add_sample_type(), "cpu", "nanoseconds");
    value_type(out.mutable_period_type(), "cpu", "nanoseconds");
    out.set_period(static_cast<int64_t>(p.period_ns));
    out.set_default_sample_type(str.Id("cpu"));

    // Mappings: one per binary with samples, plus the kernel; ids from 1.
    std::map<uint32_t, uint64_t> mapping_id;
    std::map<uint32_t, std::pair<uint64_t, uint64_t>> range;
    for (const Location& l : p.locations) {
      auto [it, fresh] = range.try_emplace(l.binary, l.address, l.address + 1);
      if (!fresh) {
        it->second.first = std::min(it->second.first, l.address);
        it->second.second = std::max(it->second.second, l.address + 1);
      }
    }
    for (const auto& [b, r] : range) {
      if (b == kNoBinary) continue;
      pb::Mapping* m = out.add_mapping();
      m->set_id(static_cast<uint64_t>(out.mapping_size()));
      mapping_id[b] = m->id();
      m->set_memory_start(r.first);
      m->set_memory_limit(r.second);
      bool kernel = b == kKernelBinary;
      m->set_filename(str.Id(kernel ? "[kernel.kallsyms]" : p.binaries[b].ref.path));
      if (!kernel) m->set_build_id(str.Id(p.binaries[b].ref.build_id));
      bool lines = !kernel && p.binaries[b].has_lines;
      m->set_has_functions(kernel || p.binaries[b].problem.empty());
      m->set_has_filenames(lines);
      m->set_has_line_numbers(lines);
      m->set_has_inline_frames(lines);
    }
    std::map<uint32_t, uint64_t> function_id;  // Profile::functions index -> id
    auto function = [&](uint32_t f) {
      auto [it, fresh] = function_id.try_emplace(f, 0);
      if (fresh) {
        pb::Function* fn = out.add_function();
        fn->set_id(static_cast<uint64_t>(out.function_size()));
        fn->set_name(str.Id(p.functions[f].display));
        fn->set_system_name(str.Id(p.functions[f].name));
        fn->set_filename(str.Id(p.functions[f].file));
        it->second = fn->id();
      }
      return it->second;
    };
    std::map<uint32_t, uint64_t> location_id;  // Profile::locations index -> id
    auto location = [&](uint32_t id) {
      auto [it, fresh] = location_id.try_emplace(id, 0);
      if (fresh) {
        const Location& l = p.locations[id];
        pb::Location* loc = out.add_location();
        loc->set_id(static_cast<uint64_t>(out.location_size()));
        auto m = mapping_id.find(l.binary);
        if (m != mapping_id.end()) loc->set_mapping_id(m->second);
        loc->set_address(l.address);
        for (const SourceFrame& f : l.frames) {
          pb::Line* line = loc->add_line();
          line->set_function_id(function(f.function));
          line->set_line(f.line);
        }
        it->second = loc->id();
      }
      return it->second;
    };
    int64_t pid_key = str.Id("pid");
    uint64_t kept = 0;
    for (const ProfileSample& s : p.samples) {
      if (!SampleTouches(p, s, binary)) continue;
      kept += s.count;
      pb::Sample* ps = out.add_sample();
      for (uint32_t id : s.stack) ps->add_location_id(location(id));
      ps->add_value(static_cast<int64_t>(s.count));
      ps->add_value(static_cast<int64_t>(s.count * p.period_ns));
      pb::Label* l = ps->add_label();
      l->set_key(pid_key);
      l->set_num(s.pid);
    }
    if (kept == 0) return MakeError("no sample of the run touches " + p.BinaryName(binary) + "; nothing to write.");
    std::string bytes;
    if (!out.SerializeToString(&bytes)) return MakeError("cannot serialize the pprof profile.");
    auto gz = Gzip(bytes);
    if (!gz) return gz.error();
    return WriteFileAtomically(path, *gz);
  }
};

}  // namespace

std::unique_ptr<ProfileEmitter> MakePprofEmitter() { return std::make_unique<PprofEmitter>(); }

}  // namespace syspgo
