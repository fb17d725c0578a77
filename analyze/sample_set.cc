//===- sample_set.cc - merging, folding and naming CPU samples -----------===//
// The operations on the sample model that do not need symbols: merging
// runs (binaries matched by build-id, never by path, so a rebuilt binary is
// never mixed with its predecessor), folding identical stacks, and finding
// the binary a user asks about.
#include "analyze/sample_set.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <tuple>

#include "common/elf.h"
#include "common/files.h"

namespace syspgo {

uint64_t SampleSet::Total() const {
  uint64_t n = 0;
  for (const auto& s : samples) n += s.count;
  return n;
}

uint32_t SampleSet::InternBinary(const BinaryRef& b) {
  for (uint32_t i = 0; i < binaries.size(); ++i) {
    const BinaryRef& o = binaries[i];
    if (!b.build_id.empty() ? o.build_id == b.build_id : (o.build_id.empty() && o.path == b.path)) return i;
  }
  binaries.push_back(b);
  return static_cast<uint32_t>(binaries.size() - 1);
}

void SampleSet::Merge(const SampleSet& other, uint64_t weight) {
  std::vector<uint32_t> remap(other.binaries.size());
  for (size_t i = 0; i < other.binaries.size(); ++i) remap[i] = InternBinary(other.binaries[i]);
  auto add = [&](const std::vector<StackSample>& from, std::vector<StackSample>& to) {
    to.reserve(to.size() + from.size());
    for (const StackSample& s : from) {
      StackSample c = s;
      c.count *= weight;
      for (UserFrame& f : c.user)
        if (f.binary != kNoBinary) f.binary = remap[f.binary];
      to.push_back(std::move(c));
    }
  };
  add(other.samples, samples);
  add(other.offcpu, offcpu);
  for (const auto& [pid, name] : other.comm) comm.emplace(pid, name);
  // A run's kallsyms (since schema version 4) and a pprof profile's kernel
  // names are for their own addresses only, so those of several add up.
  if (kallsyms.empty()) kallsyms = other.kallsyms;
  else if (kallsyms != other.kallsyms) kallsyms += other.kallsyms;
  if (kernel_build_id.empty()) kernel_build_id = other.kernel_build_id;
  if (!period_ns) period_ns = other.period_ns;
  runs.insert(runs.end(), other.runs.begin(), other.runs.end());
  pprof_files.insert(pprof_files.end(), other.pprof_files.begin(), other.pprof_files.end());
  Normalize();
}

void SampleSet::Normalize() {
  auto key = [](const StackSample& s) { return std::tie(s.pid, s.kernel_mode, s.user, s.kernel); };
  for (std::vector<StackSample>* v : {&samples, &offcpu}) {
    std::sort(v->begin(), v->end(), [&](const StackSample& a, const StackSample& b) { return key(a) < key(b); });
    std::vector<StackSample> out;
    out.reserve(v->size());
    for (StackSample& s : *v) {
      if (!out.empty() && key(out.back()) == key(s)) out.back().count += s.count;
      else out.push_back(std::move(s));
    }
    *v = std::move(out);
  }
}

void SampleSet::KeepPid(uint32_t pid) {
  std::erase_if(samples, [&](const StackSample& s) { return s.pid != pid; });
  std::erase_if(offcpu, [&](const StackSample& s) { return s.pid != pid; });
}

Result<std::string> ReadBuildId(const std::string& path) {
  return WithElf<std::string>(path, [](Elf* elf) {
    const void* bits = nullptr;
    ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
    std::string hex;
    static const char kDigits[] = "0123456789abcdef";
    for (ssize_t i = 0; i < n; ++i) {
      unsigned char c = static_cast<const unsigned char*>(bits)[i];
      hex += kDigits[c >> 4];
      hex += kDigits[c & 15];
    }
    return hex;
  });
}

Result<std::vector<ElfFunction>> ReadElfFunctions(const std::string& path) {
  return WithElf<std::vector<ElfFunction>>(path, [](Elf* elf) {
    std::vector<ElfFunction> out;
    std::vector<GElf_Phdr> loads;
    size_t n = 0;
    if (elf_getphdrnum(elf, &n) != 0) return out;
    for (size_t i = 0; i < n; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD) loads.push_back(ph);
    }
    Elf_Scn* table = nullptr;
    for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh)) continue;
      if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !table)) table = scn;
    }
    GElf_Shdr sh;
    Elf_Data* data = table && gelf_getshdr(table, &sh) ? elf_getdata(table, nullptr) : nullptr;
    if (!data || !sh.sh_entsize) return out;
    for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Sym s;
      if (!gelf_getsym(data, static_cast<int>(i), &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_size ||
          s.st_shndx == SHN_UNDEF)
        continue;
      const char* name = elf_strptr(elf, sh.sh_link, s.st_name);
      for (const GElf_Phdr& ph : loads)
        // Within what the segment maps from the file: a symbol table may claim any size.
        if (name && *name && s.st_value >= ph.p_vaddr && s.st_value - ph.p_vaddr < ph.p_filesz &&
            s.st_size <= ph.p_filesz - (s.st_value - ph.p_vaddr)) {
          out.push_back({name, s.st_value - ph.p_vaddr + ph.p_offset, s.st_size});
          break;
        }
    }
    std::sort(out.begin(), out.end(), [](const ElfFunction& a, const ElfFunction& b) {
      return a.offset != b.offset ? a.offset < b.offset : a.name < b.name;
    });
    return out;
  });
}

Result<uint32_t> FindBinary(const SampleSet& set, const std::string& path) {
  auto id = ReadBuildId(path);
  if (!id) return id.error();
  std::error_code ec;
  std::string real = std::filesystem::weakly_canonical(path, ec).string();
  if (ec) real = path;
  std::string base = std::filesystem::path(path).filename().string();
  for (uint32_t i = 0; i < set.binaries.size(); ++i)
    if (!id->empty() && set.binaries[i].build_id == *id) return i;
  // What the samples came from, and how to get new ones, for the messages.
  bool pprof = !set.pprof_files.empty(), runs = !set.runs.empty();
  std::string source = pprof && runs ? "the runs and pprof profiles" : pprof ? "the pprof profile" : "the run";
  std::string again = "syspgo collect --probes cpu -- " + path + " ...";
  if (pprof)
    again += std::string(runs ? ", or" : " or") + " a pprof profile of this build from your profiler (with build-ids in "
             "its mappings, or the same path)";
  // No build-id match: the same file by path (rebuilt since?), or a
  // binary without a build-id, which can only be matched by path.
  for (uint32_t i = 0; i < set.binaries.size(); ++i) {
    const BinaryRef& b = set.binaries[i];
    if (b.path != real && b.path != path) continue;
    if (b.build_id.empty() && id->empty()) return i;
    // A pprof mapping without a build-id, at the path of this binary: the
    // producer did not record one (gperftools does not), so the path is
    // all there is to match, as for two binaries without build-ids.
    if (b.build_id.empty() && pprof) return i;
    return MakeError("'" + path + "' has build-id " + (id->empty() ? "(none)" : *id) + ", but " + source +
                     " recorded " + b.path + " with build-id " + (b.build_id.empty() ? "(none)" : b.build_id) +
                     ": the binary was rebuilt or replaced after the profile was taken, and a profile of another "
                     "build would be attributed to the wrong code. Pass the binary that ran, or record a new profile "
                     "of this one (" + again + ").");
  }
  std::string seen;
  size_t listed = 0;
  for (const BinaryRef& b : set.binaries) {
    if (listed++ == 8) {
      seen += ", ...";
      break;
    }
    seen += (seen.empty() ? "" : ", ") + b.path;
  }
  std::string also;
  for (const BinaryRef& b : set.binaries)
    if (std::filesystem::path(b.path).filename().string() == base) also = " (" + b.path + " has the same name but build-id " + (b.build_id.empty() ? "(none)" : b.build_id) + ")";
  return MakeError(source + (pprof && runs ? " have" : " has") + " no CPU samples in '" + path + "' (build-id " +
                   (id->empty() ? "(none)" : *id) + "): it was never mapped by a sampled process" + also +
                   ". Binaries with samples: " + (seen.empty() ? "none" : seen) + ". Record one that runs it: " + again);
}

const Function* Profile::Outermost(const Location& l) const {
  if (!l.frames.empty()) return &functions[l.frames.back().function];
  return nullptr;
}

std::string Profile::BinaryName(uint32_t binary) const {
  if (binary == kKernelBinary) return "[kernel]";
  if (binary == kNoBinary || binary >= binaries.size()) return "[unknown]";
  return binaries[binary].ref.path;
}

std::string Profile::DisplayName(const Location& l) const {
  if (!l.frames.empty()) return functions[l.frames[0].function].display;
  if (l.symbol >= 0) return symbols[l.symbol].name;
  // An address no symbol covers is named by its function's start where the
  // call frame information gives one, so that its samples add up.
  char off[32];
  snprintf(off, sizeof off, "+0x%llx", static_cast<unsigned long long>(l.unnamed_start ? l.unnamed_start : l.address));
  std::string b = BinaryName(l.binary);
  return std::filesystem::path(b).filename().string() + off;
}

}  // namespace syspgo
