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

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

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

// The samples of `samples` that touch `binary`.
std::vector<const ProfileSample*> Touching(const Profile& p, const std::vector<ProfileSample>& samples,
                                           uint32_t binary) {
  std::vector<const ProfileSample*> out;
  for (const ProfileSample& s : samples)
    if (SampleTouches(p, s, binary)) out.push_back(&s);
  return out;
}

// The address a frame is written at.
uint64_t WrittenAddress(const Profile& p, const Frame& f) {
  return p.locations[f.first].address - (f.second ? 1 : 0);
}

MappingKey KeyOf(const Location& l) { return {l.binary, l.binary == kKernelBinary ? 0 : l.address - l.offset}; }

// Per mapping, the written addresses [lo, hi) it must cover.
using Spans = std::map<MappingKey, std::pair<uint64_t, uint64_t>>;

Spans MappingSpans(const Profile& p, const std::vector<const std::vector<const ProfileSample*>*>& lists) {
  Spans spans;
  for (const auto* list : lists)
    for (const ProfileSample* s : *list)
      for (const Frame& f : Frames(*s)) {
        const Location& l = p.locations[f.first];
        if (l.binary == kNoBinary) continue;
        uint64_t a = WrittenAddress(p, f);
        auto [it, fresh] = spans.try_emplace(KeyOf(l), a, a + 1);
        it->second.first = std::min(it->second.first, a);
        it->second.second = std::max(it->second.second, a + 1);
      }
  return spans;
}

// The binary asked for first (pprof takes the first mapping for the main
// program), then the others, the kernel last.
std::vector<MappingKey> MappingOrder(const Spans& spans, uint32_t binary) {
  std::vector<MappingKey> order;
  for (const auto& [k, span] : spans)
    if (k.first == binary) order.push_back(k);
  for (const auto& [k, span] : spans)
    if (k.first != binary && k.first != kKernelBinary) order.push_back(k);
  for (const auto& [k, span] : spans)
    if (k.first == kKernelBinary && binary != kKernelBinary) order.push_back(k);
  return order;
}

// A mapping's [start, limit): the segment the addresses lie in (the same
// for every run of the binary, so pprof merges them into one); without
// one, the sampled span.
std::pair<uint64_t, uint64_t> MappingBounds(const Profile& p, const MappingKey& k, std::pair<uint64_t, uint64_t> span) {
  auto [b, delta] = k;
  auto [lo, hi] = span;
  if (b != kKernelBinary)
    for (const ProfileBinary::Segment& seg : p.binaries[b].loads)
      if (seg.vaddr - seg.offset == delta && lo >= seg.vaddr && hi <= seg.vaddr + seg.filesz)
        return {seg.vaddr, seg.vaddr + seg.filesz};
  return span;
}

// One profile.proto being built: its string table and the ids given to
// mappings, functions and locations, each in order of first use, so the
// same profile gives the same bytes.
class PprofBuilder {
 public:
  // Starts with the sample types (off_cpu with `offcpu`) and the period.
  PprofBuilder(const Profile& p, bool offcpu) : p_(p), offcpu_(offcpu), str_(&out_) {
    AddValueType(out_.add_sample_type(), "samples", "count");
    AddValueType(out_.add_sample_type(), "cpu", "nanoseconds");
    if (offcpu_) AddValueType(out_.add_sample_type(), "off_cpu", "nanoseconds");
    AddValueType(out_.mutable_period_type(), "cpu", "nanoseconds");
    out_.set_period(static_cast<int64_t>(p_.period_ns));
    out_.set_default_sample_type(str_.Id("cpu"));
  }

  void AddMapping(const MappingKey& k, std::pair<uint64_t, uint64_t> span) {
    auto [b, delta] = k;
    pb::Mapping* m = out_.add_mapping();
    m->set_id(static_cast<uint64_t>(out_.mapping_size()));
    mapping_id_[k] = m->id();
    bool kernel = b == kKernelBinary;
    auto [start, limit] = MappingBounds(p_, k, span);
    m->set_memory_start(start);
    m->set_memory_limit(limit);
    m->set_file_offset(kernel ? 0 : start - delta);
    m->set_filename(str_.Id(kernel ? "[kernel.kallsyms]" : p_.binaries[b].ref.path));
    m->set_build_id(str_.Id(kernel ? p_.kernel_build_id : p_.binaries[b].ref.build_id));
    bool lines = !kernel && p_.binaries[b].has_lines;
    m->set_has_functions(kernel || p_.binaries[b].problem.empty());
    m->set_has_filenames(lines);
    m->set_has_line_numbers(lines);
    m->set_has_inline_frames(lines);
  }

  // The CPU samples (counts) and the off-CPU ones (nanoseconds off CPU).
  void AddSamples(const std::vector<const ProfileSample*>& cpu, const std::vector<const ProfileSample*>& off) {
    pid_key_ = str_.Id("pid");
    comm_key_ = str_.Id("comm");
    for (const ProfileSample* s : cpu) AddSample(*s, static_cast<int64_t>(s->count), 0);
    for (const ProfileSample* s : off) AddSample(*s, 0, static_cast<int64_t>(s->count));
  }

  Status WriteGzipped(const std::string& path) const {
    std::string bytes;
    if (!out_.SerializeToString(&bytes)) return MakeError("cannot serialize the pprof profile.");
    auto gz = Gzip(bytes);
    if (!gz) return gz.error();
    return WriteFileAtomically(path, *gz);
  }

 private:
  void AddValueType(pb::ValueType* v, const char* type, const char* unit) {
    v->set_type(str_.Id(type));
    v->set_unit(str_.Id(unit));
  }

  uint64_t FunctionId(uint32_t f) {
    auto [it, fresh] = function_id_.try_emplace(f, 0);
    if (fresh) {
      pb::Function* fn = out_.add_function();
      fn->set_id(static_cast<uint64_t>(out_.function_size()));
      fn->set_name(str_.Id(p_.functions[f].display));
      fn->set_system_name(str_.Id(p_.functions[f].name));
      fn->set_filename(str_.Id(p_.functions[f].file));
      it->second = fn->id();
    }
    return it->second;
  }

  uint64_t LocationId(const Frame& f) {
    auto [it, fresh] = location_id_.try_emplace(f, 0);
    if (fresh) {
      const Location& l = p_.locations[f.first];
      pb::Location* loc = out_.add_location();
      loc->set_id(static_cast<uint64_t>(out_.location_size()));
      if (l.binary != kNoBinary) loc->set_mapping_id(mapping_id_.at(KeyOf(l)));
      loc->set_address(WrittenAddress(p_, f));
      for (const SourceFrame& sf : l.frames) {
        pb::Line* line = loc->add_line();
        line->set_function_id(FunctionId(sf.function));
        line->set_line(sf.line);
      }
      it->second = loc->id();
    }
    return it->second;
  }

  void AddSample(const ProfileSample& s, int64_t count, int64_t off_ns) {
    pb::Sample* ps = out_.add_sample();
    for (const Frame& f : Frames(s)) ps->add_location_id(LocationId(f));
    ps->add_value(count);
    ps->add_value(count * static_cast<int64_t>(p_.period_ns));
    if (offcpu_) ps->add_value(off_ns);
    pb::Label* l = ps->add_label();
    l->set_key(pid_key_);
    l->set_num(s.pid);
    // The task name, as flame graphs show it at the root.
    if (auto c = p_.comm.find(s.pid); c != p_.comm.end()) {
      l = ps->add_label();
      l->set_key(comm_key_);
      l->set_str(str_.Id(c->second));
    }
  }

  const Profile& p_;
  const bool offcpu_;
  pb::Profile out_;
  Strings str_;
  std::map<MappingKey, uint64_t> mapping_id_;
  std::map<uint32_t, uint64_t> function_id_;  // Profile::functions index -> id
  std::map<Frame, uint64_t> location_id_;
  int64_t pid_key_ = 0, comm_key_ = 0;
};

class PprofEmitter : public ProfileEmitter {
 public:
  Status Write(const Profile& p, uint32_t binary, const std::string& path) const override {
    PprofBuilder b(p, !p.offcpu.empty());
    std::vector<const ProfileSample*> cpu = Touching(p, p.samples, binary), off = Touching(p, p.offcpu, binary);
    if (cpu.empty()) return MakeError("no sample of the run touches " + p.BinaryName(binary) + "; nothing to write.");
    Spans spans = MappingSpans(p, {&cpu, &off});
    for (const MappingKey& k : MappingOrder(spans, binary)) b.AddMapping(k, spans.at(k));
    b.AddSamples(cpu, off);
    return b.WriteGzipped(path);
  }
};

}  // namespace

std::unique_ptr<ProfileEmitter> MakePprofEmitter() { return std::make_unique<PprofEmitter>(); }

}  // namespace syspgo
