//===- pprof.cc - CPU samples as a gzipped pprof profile.proto -----------===//
// Built with the generated protobuf classes, gzipped with zlib (no file
// name or time in the gzip header, so the same profile gives the same bytes).
// What pprof-speaking tools and backends expect of a CPU profile, and what
// analyze/sample_pprof.cc reads back:
// - sample types samples/count and cpu/nanoseconds (period type
//   cpu/nanoseconds, the default type cpu), plus off_cpu/nanoseconds when
//   the run recorded off-CPU intervals (the sched group);
// - one mapping per executable segment with samples, in the runtime form
//   pprof uses (start, limit, file offset), so address - start + offset is
//   the file offset; addresses are ELF virtual addresses, the same in every
//   process; the build-id on every mapping (the kernel's too);
// - caller frames at return address - 1, inside the call instruction, as
//   pprof's own producers write them and its symbolizers expect.
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

// Where a written address goes: its binary, and (for user code) the
// difference between ELF address and file offset, which is one per
// PT_LOAD segment. kNoBinary frames get no mapping.
using MappingKey = std::pair<uint32_t, uint64_t>;

// A frame as written: the Profile location, and whether it is a call site
// (written at its return address - 1).
using Frame = std::pair<uint32_t, bool>;

// The frames of a sample, innermost first: in each part (kernel, user) the
// first is where execution was; every further one is a call site.
std::vector<Frame> Frames(const ProfileSample& s) {
  std::vector<Frame> out;
  out.reserve(s.stack.size());
  for (size_t i = 0; i < s.stack.size(); ++i) out.emplace_back(s.stack[i], i != 0 && i != s.first_user);
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
    bool offcpu = !p.offcpu.empty();
    value_type(out.add_sample_type(), "samples", "count");
    value_type(out.add_sample_type(), "cpu", "nanoseconds");
    if (offcpu) value_type(out.add_sample_type(), "off_cpu", "nanoseconds");
    value_type(out.mutable_period_type(), "cpu", "nanoseconds");
    out.set_period(static_cast<int64_t>(p.period_ns));
    out.set_default_sample_type(str.Id("cpu"));

    std::vector<const ProfileSample*> cpu, off;
    for (const ProfileSample& s : p.samples)
      if (SampleTouches(p, s, binary)) cpu.push_back(&s);
    for (const ProfileSample& s : p.offcpu)
      if (SampleTouches(p, s, binary)) off.push_back(&s);
    if (cpu.empty()) return MakeError("no sample of the run touches " + p.BinaryName(binary) + "; nothing to write.");

    auto written = [&](const Frame& f) { return p.locations[f.first].address - (f.second ? 1 : 0); };
    auto key_of = [&](const Location& l) -> MappingKey {
      return {l.binary, l.binary == kKernelBinary ? 0 : l.address - l.offset};
    };
    // Mappings: the written addresses each one must cover.
    std::map<MappingKey, std::pair<uint64_t, uint64_t>> spans;
    for (const auto* list : {&cpu, &off})
      for (const ProfileSample* s : *list)
        for (const Frame& f : Frames(*s)) {
          const Location& l = p.locations[f.first];
          if (l.binary == kNoBinary) continue;
          uint64_t a = written(f);
          auto [it, fresh] = spans.try_emplace(key_of(l), a, a + 1);
          it->second.first = std::min(it->second.first, a);
          it->second.second = std::max(it->second.second, a + 1);
        }
    // The binary asked for first (pprof takes the first mapping for the
    // main program), then the others, the kernel last.
    std::vector<MappingKey> order;
    for (const auto& [k, span] : spans)
      if (k.first == binary) order.push_back(k);
    for (const auto& [k, span] : spans)
      if (k.first != binary && k.first != kKernelBinary) order.push_back(k);
    for (const auto& [k, span] : spans)
      if (k.first == kKernelBinary && binary != kKernelBinary) order.push_back(k);
    std::map<MappingKey, uint64_t> mapping_id;
    for (const MappingKey& k : order) {
      auto [b, delta] = k;
      auto [lo, hi] = spans[k];
      pb::Mapping* m = out.add_mapping();
      m->set_id(static_cast<uint64_t>(out.mapping_size()));
      mapping_id[k] = m->id();
      bool kernel = b == kKernelBinary;
      // The segment the addresses lie in gives the mapping's bounds (the
      // same for every run of the binary, so pprof merges them into one);
      // without one, the sampled span.
      uint64_t start = lo, limit = hi;
      if (!kernel)
        for (const ProfileBinary::Segment& seg : p.binaries[b].loads)
          if (seg.vaddr - seg.offset == delta && lo >= seg.vaddr && hi <= seg.vaddr + seg.filesz) {
            start = seg.vaddr;
            limit = seg.vaddr + seg.filesz;
            break;
          }
      m->set_memory_start(start);
      m->set_memory_limit(limit);
      m->set_file_offset(kernel ? 0 : start - delta);
      m->set_filename(str.Id(kernel ? "[kernel.kallsyms]" : p.binaries[b].ref.path));
      m->set_build_id(str.Id(kernel ? p.kernel_build_id : p.binaries[b].ref.build_id));
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
    std::map<Frame, uint64_t> location_id;
    auto location = [&](const Frame& f) {
      auto [it, fresh] = location_id.try_emplace(f, 0);
      if (fresh) {
        const Location& l = p.locations[f.first];
        pb::Location* loc = out.add_location();
        loc->set_id(static_cast<uint64_t>(out.location_size()));
        if (l.binary != kNoBinary) loc->set_mapping_id(mapping_id.at(key_of(l)));
        loc->set_address(written(f));
        for (const SourceFrame& sf : l.frames) {
          pb::Line* line = loc->add_line();
          line->set_function_id(function(sf.function));
          line->set_line(sf.line);
        }
        it->second = loc->id();
      }
      return it->second;
    };
    int64_t pid_key = str.Id("pid"), comm_key = str.Id("comm");
    auto add = [&](const ProfileSample& s, int64_t count, int64_t off_ns) {
      pb::Sample* ps = out.add_sample();
      for (const Frame& f : Frames(s)) ps->add_location_id(location(f));
      ps->add_value(count);
      ps->add_value(count * static_cast<int64_t>(p.period_ns));
      if (offcpu) ps->add_value(off_ns);
      pb::Label* l = ps->add_label();
      l->set_key(pid_key);
      l->set_num(s.pid);
      // The task name, as flame graphs show it at the root.
      if (auto c = p.comm.find(s.pid); c != p.comm.end()) {
        l = ps->add_label();
        l->set_key(comm_key);
        l->set_str(str.Id(c->second));
      }
    };
    for (const ProfileSample* s : cpu) add(*s, static_cast<int64_t>(s->count), 0);
    for (const ProfileSample* s : off) add(*s, 0, static_cast<int64_t>(s->count));
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
