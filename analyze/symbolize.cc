//===- symbolize.cc - addresses to functions, inline chains and lines ----===//
// One libdwfl session per binary, with the binary reported at its own ELF
// addresses (base 0), so an address needs no knowledge of where a process
// loaded it. libdwfl's standard debuginfo search does the .gnu_debuglink
// and .build-id lookups, with the user's debug roots put in front of
// /usr/lib/debug. Results are cached per (build-id, address): a run with a
// million samples has a few thousand distinct addresses.
#include "analyze/symbolize.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>
#include <set>
#include <unordered_map>

#include "common/util.h"

namespace syspgo {

namespace {

// LLVM puts a call site's discriminator on its inlined_subroutine DIE with
// this GNU extension; elfutils' dwarf.h does not name it.
constexpr unsigned kAtGnuDiscriminator = 0x2136;

struct Load {
  uint64_t offset, vaddr, filesz;
  bool exec;  // PF_X: code
};

// `x`, an address in one of a file's two spaces (`from`: a Load's vaddr or
// offset), in the other (`to`), through the PT_LOAD segment that holds it;
// false if none does.
bool Translate(const std::vector<Load>& loads, uint64_t x, uint64_t Load::*from, uint64_t Load::*to, uint64_t* out) {
  for (const Load& l : loads) {
    if (x >= l.*from && x < l.*from + l.filesz) {
      *out = x - l.*from + l.*to;
      return true;
    }
  }
  return false;
}

std::string AttrString(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute a;
  if (!dwarf_attr_integrate(die, name, &a)) return "";
  const char* s = dwarf_formstring(&a);
  return s ? s : "";
}

uint32_t AttrUnsigned(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute a;
  Dwarf_Word w = 0;
  if (!dwarf_attr(die, name, &a) || dwarf_formudata(&a, &w) != 0) return 0;
  return static_cast<uint32_t>(w);
}

std::string FunctionName(Dwarf_Die* die) {
  std::string n = AttrString(die, DW_AT_linkage_name);
  if (n.empty()) n = AttrString(die, DW_AT_MIPS_linkage_name);
  if (n.empty()) n = AttrString(die, DW_AT_name);
  return n;
}

// The frame of a subprogram or inlined-instance DIE, at `line` and `disc`;
// a DIE without a name is given the ELF symbol's.
AddressInfo::Frame FrameOf(Dwarf_Die* d, const std::string& symbol, uint32_t line, uint32_t disc) {
  AddressInfo::Frame fr;
  fr.function = FunctionName(d);
  if (fr.function.empty()) fr.function = symbol;
  int decl = 0;
  if (dwarf_decl_line(d, &decl) == 0 && decl > 0) fr.decl_line = static_cast<uint32_t>(decl);
  if (const char* file = dwarf_decl_file(d)) fr.file = file;
  fr.line = line;
  fr.discriminator = disc;
  return fr;
}

}  // namespace

uint32_t BaseDiscriminator(uint32_t d, bool fs) {
  // Flow-sensitive discriminators keep the base in the low 8 bits.
  if (fs) return d & 0xff;
  // Otherwise a prefix encoding: bit 0 set means an empty base; else the
  // base is 5 bits, or 12 bits when bit 6 flags the long form.
  if (d & 1) return 0;
  d >>= 1;
  return (d & 0x20) ? (((d >> 1) & 0xfe0) | (d & 0x1f)) : (d & 0x1f);
}

std::string Demangle(const std::string& name) {
  if (name.compare(0, 2, "_Z") != 0) return name;
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (!d || status != 0) return name;
  std::string out = d;
  free(d);
  return out;
}

namespace {

// A subprogram's DIE and the inlined subroutines and lexical blocks below
// it, each with its address ranges, read from libdw once. Finding an inline
// chain by asking libdw at each level (dwarf_child, dwarf_siblingof,
// dwarf_haspc) decoded the same DIEs again for every address: a fifth of
// SQLite's sample profile, whose sqlite3VdbeExec holds thousands of them.
class ScopeTree {
 public:
  explicit ScopeTree(Dwarf_Die sub) { nodes_.push_back({sub, false, Ranges(&sub)}); }

  bool Contains(Dwarf_Addr a) const { return nodes_[0].Has(a); }

  // The subprogram and inlined-subroutine DIEs that contain `a`, outermost
  // first: the chain dwarf_getscopes and dwarf_getscopes_die give. At each
  // level the first child (in DIE order) whose ranges hold `a` is taken.
  std::vector<Dwarf_Die> Chain(Dwarf_Addr a) {
    std::vector<Dwarf_Die> chain = {nodes_[0].die};
    uint32_t cur = 0;
    for (;;) {
      Expand(cur);
      uint32_t next = UINT32_MAX;
      for (uint32_t c : nodes_[cur].children)
        if (nodes_[c].Has(a)) {
          next = c;
          break;
        }
      if (next == UINT32_MAX) break;
      if (nodes_[next].inlined) chain.push_back(nodes_[next].die);
      cur = next;
    }
    return chain;
  }

 private:
  struct Node {
    Dwarf_Die die;
    bool inlined = false;
    std::vector<std::pair<Dwarf_Addr, Dwarf_Addr>> ranges;  // [lo, hi), as dwarf_haspc tests them
    bool expanded = false;
    std::vector<uint32_t> children;  // inlined subroutines and lexical blocks, in DIE order
    bool Has(Dwarf_Addr a) const {
      for (const auto& [lo, hi] : ranges)
        if (a >= lo && a < hi) return true;
      return false;
    }
  };

  static std::vector<std::pair<Dwarf_Addr, Dwarf_Addr>> Ranges(Dwarf_Die* d) {
    std::vector<std::pair<Dwarf_Addr, Dwarf_Addr>> out;
    Dwarf_Addr base = 0, lo = 0, hi = 0;
    for (ptrdiff_t off = 0; (off = dwarf_ranges(d, off, &base, &lo, &hi)) > 0;) out.push_back({lo, hi});
    return out;
  }

  void Expand(uint32_t i) {
    if (nodes_[i].expanded) return;
    nodes_[i].expanded = true;
    Dwarf_Die cur = nodes_[i].die, child;
    if (dwarf_child(&cur, &child) != 0) return;
    do {
      int tag = dwarf_tag(&child);
      if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block) continue;
      uint32_t k = static_cast<uint32_t>(nodes_.size());
      nodes_.push_back({child, tag == DW_TAG_inlined_subroutine, Ranges(&child)});
      nodes_[i].children.push_back(k);
    } while (dwarf_siblingof(&child, &child) == 0);
  }

  std::vector<Node> nodes_;
};

}  // namespace

struct Symbolizer::Module {
  Dwfl_Callbacks callbacks{};      // libdwfl keeps pointers to these: they live as long as dwfl
  char* debuginfo_path = nullptr;
  Dwfl* dwfl = nullptr;
  Dwfl_Module* mod = nullptr;
  GElf_Addr bias = 0;  // module address = ELF vaddr + bias
  BinaryStatus status;
  std::vector<Load> loads;
  bool fs_discriminators = false;
  std::unordered_map<uint64_t, AddressInfo> cache;
  std::map<std::pair<uint64_t, std::string>, std::string> bolt_names;  // (vaddr, name) -> BOLT name
  // Address ranges of the compile units (DWARF addresses), sorted by start.
  // libdw 0.188 finds CUs only through .debug_aranges, which clang does
  // not emit; this index comes from each CU's own ranges instead.
  struct CuRange {
    Dwarf_Addr lo, hi;
    Dwarf_Die die;
  };
  std::vector<CuRange> cus;
  Dwarf_Addr dwarf_bias = 0;  // DWARF address = module address - dwarf_bias
  // The subprogram DIE of each ELF symbol (by start address) found so far,
  // as the root of its ScopeTree. dwarf_getscopes walks the whole compile
  // unit from its root for every address, milliseconds each in a CU like
  // SQLite's amalgamation; the inline chain of another address in the same
  // function is found by descending that function's own DIEs instead.
  std::unordered_map<uint64_t, ScopeTree> subprograms;
  // The prologue_end address of each ELF symbol (by start), 0 if none.
  std::unordered_map<uint64_t, Dwarf_Addr> prologue_ends;
  // Symbols libdwfl found, by start (module address), for the addresses
  // inside them. dwfl_module_addrinfo scans every symbol of the module for
  // each address, which made it most of the time of `analyze hot`.
  // A symbol [start, start + size) is kept here only when no other symbol
  // starts inside it, bar its aliases (same start and size). Then every
  // address in it has the same symbols at or below it, this one the
  // closest, and libdwfl gives the same answer for each.
  struct SymRange {
    GElf_Addr end;
    const char* name;
    GElf_Sym sym;
  };
  std::map<GElf_Addr, SymRange> sym_ranges;
  std::vector<std::pair<GElf_Addr, GElf_Xword>> sym_starts;  // (start, size) of every symbol, sorted
  bool sym_starts_read = false;
  // The start (ELF vaddr) of every function the unwinder knows, ascending:
  // the search table of .eh_frame_hdr, read at the first address no symbol
  // covers.
  std::vector<uint64_t> fde_starts;
  bool fde_starts_read = false;

  // The symbol at module address `maddr`, as dwfl_module_addrinfo finds it.
  const char* SymbolAt(GElf_Addr maddr, GElf_Off* off, GElf_Sym* sym) {
    auto r = sym_ranges.upper_bound(maddr);
    if (r != sym_ranges.begin() && maddr < std::prev(r)->second.end) {
      --r;
      *off = maddr - r->first;
      *sym = r->second.sym;
      return r->second.name;
    }
    const char* name = dwfl_module_addrinfo(mod, maddr, off, sym, nullptr, nullptr, nullptr);
    if (!name || sym->st_size == 0 || *off >= sym->st_size) return name;
    if (!sym_starts_read) {
      sym_starts_read = true;
      int n = dwfl_module_getsymtab(mod);
      for (int i = 1; i < n; ++i) {
        GElf_Sym s;
        GElf_Addr a = 0;
        if (dwfl_module_getsym_info(mod, i, &s, &a, nullptr, nullptr, nullptr)) sym_starts.push_back({a, s.st_size});
      }
      std::sort(sym_starts.begin(), sym_starts.end());
    }
    GElf_Addr start = maddr - *off, end = start + sym->st_size;
    auto it = std::lower_bound(sym_starts.begin(), sym_starts.end(), std::make_pair(start, GElf_Xword{0}));
    bool listed = false;  // the symbol found is in the table read (it always is, unless that failed)
    for (; it != sym_starts.end() && it->first < end; ++it) {
      if (it->first != start || it->second != sym->st_size) return name;
      listed = true;
    }
    if (listed) sym_ranges[start] = {end, name, *sym};
    return name;
  }

  Dwarf_Die* CuAt(Dwarf_Addr a) {
    auto it = std::upper_bound(cus.begin(), cus.end(), a, [](Dwarf_Addr x, const CuRange& r) { return x < r.lo; });
    while (it != cus.begin()) {
      --it;
      if (a < it->hi) return &it->die;
      if (cus.begin() == it || std::prev(it)->hi <= a) break;  // ranges may nest only by overlap
    }
    return nullptr;
  }
  // Get's steps, in the order they must run: each reads what the one before opened.
  bool Report(const std::string& recorded_path, const std::string& file, const std::string& search_path);
  void ReadLayout();
  void NameForBolt();
  // Lookup's steps, each filling its part of an address's info.
  void NameSymbol(uint64_t vaddr, AddressInfo& info);
  void NameUnnamed(uint64_t vaddr, AddressInfo& info);
  Dwarf_Addr PrologueEnd(Dwarf_Die* cu, uint64_t start, uint64_t size);
  void AddFrames(Dwarf_Die* cu, Dwarf_Addr a, AddressInfo& info);
  void FramesFromTree(ScopeTree& tree, Dwarf_Addr a, uint32_t line, uint32_t disc, AddressInfo& info);
  void FramesFromScopes(Dwarf_Die* cu, Dwarf_Addr a, uint32_t line, uint32_t disc, AddressInfo& info);

  ~Module() {
    if (dwfl) dwfl_end(dwfl);
    free(debuginfo_path);
  }
};

Symbolizer::Symbolizer(SymbolizerOptions opts) : opts_(std::move(opts)) {
  // libdwfl's search path: "" (the binary's dir), ".debug" (below it), then
  // absolute roots, each for <root>/.build-id/ and <root>/<binary dir>/.
  debuginfo_path_ = ":.debug";
  for (const std::string& d : opts_.debug_dirs) debuginfo_path_ += ":" + d;
  debuginfo_path_ += ":/usr/lib/debug";
}

Symbolizer::~Symbolizer() = default;

namespace {

// The separate debug file of build `build_id` under a debug directory's
// .build-id tree, which carries symbols and lines for the recorded build
// even when the binary itself is gone or rebuilt; "" if there is none.
std::string DebugFileOfBuild(const std::string& build_id, const std::vector<std::string>& debug_dirs) {
  if (build_id.size() <= 2) return "";
  std::vector<std::string> roots = debug_dirs;
  roots.push_back("/usr/lib/debug");
  for (const std::string& r : roots) {
    std::string p = r + "/.build-id/" + build_id.substr(0, 2) + "/" + build_id.substr(2) + ".debug";
    auto did = ReadBuildId(p);
    if (did && *did == build_id) return p;
  }
  return "";
}

// The file whose symbols are the recorded binary's: the caller's choice
// for its build-id, else the recorded path if it still holds that build,
// else its debug file. Without one, `st` says why and what to do.
std::optional<std::string> FileToRead(const BinaryRef& b, const SymbolizerOptions& opts, BinaryStatus* st) {
  std::string file = b.path;
  auto f = opts.files.find(b.build_id);
  if (f != opts.files.end()) file = f->second;
  auto id = ReadBuildId(file);
  std::string why;
  if (!id) why = id.error().message;
  else if (!b.build_id.empty() && *id != b.build_id)
    why = file + " now has build-id " + (id->empty() ? "(none)" : *id) + ", but the profile recorded build-id " +
          b.build_id + " (rebuilt or replaced since it was profiled)";
  if (why.empty()) return file;
  std::string found = DebugFileOfBuild(b.build_id, opts.debug_dirs);
  if (found.empty()) {
    std::string where =
        b.build_id.size() > 2 ? b.build_id.substr(0, 2) + "/" + b.build_id.substr(2) : std::string("xx/yyyy");
    st->problem = why + "; its samples stay unsymbolized. Restore the binary that ran, or put its debug file "
                  "at <dir>/.build-id/" + where + ".debug and pass --debug-dir <dir>";
    return std::nullopt;
  }
  st->debug_file = found;
  return found;
}

}  // namespace

Symbolizer::Module* Symbolizer::Get(const BinaryRef& b) {
  std::string key = b.build_id.empty() ? "path:" + b.path : b.build_id;
  auto it = modules_.find(key);
  if (it != modules_.end()) return it->second.get();
  auto m = std::make_unique<Module>();
  Module* mp = m.get();
  modules_[key] = std::move(m);
  BinaryStatus& st = mp->status;

  if (!b.path.empty() && b.path[0] == '[') {
    st.problem = b.path + " has no file to read symbols from";
    return mp;
  }
  std::optional<std::string> file = FileToRead(b, opts_, &st);
  if (!file) return mp;
  st.file = *file;
  if (!mp->Report(b.path, *file, debuginfo_path_)) return mp;
  mp->ReadLayout();
  mp->NameForBolt();
  return mp;
}

// libdwfl's view of `file` (the binary recorded at `recorded_path`, or
// what stands in for it), through which every later lookup goes.
bool Symbolizer::Module::Report(const std::string& recorded_path, const std::string& file,
                                const std::string& search_path) {
  debuginfo_path = strdup(search_path.c_str());
  callbacks.find_elf = dwfl_build_id_find_elf;
  callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
  callbacks.debuginfo_path = &debuginfo_path;
  dwfl = dwfl_begin(&callbacks);
  if (!dwfl) {
    status.problem = std::string("libdwfl failed to start: ") + dwfl_errmsg(-1);
    return false;
  }
  dwfl_report_begin(dwfl);
  mod = dwfl_report_elf(dwfl, std::filesystem::path(recorded_path).filename().c_str(), file.c_str(), -1, 0, false);
  dwfl_report_end(dwfl, nullptr, nullptr);
  if (!mod) {
    status.problem = "cannot read " + file + " as ELF: " + dwfl_errmsg(-1);
    return false;
  }
  return true;
}

// What lookups need read once: the loadable segments (file offset <->
// vaddr), whether there are symbols and lines, and the compile units'
// address ranges (CuAt).
void Symbolizer::Module::ReadLayout() {
  Elf* elf = dwfl_module_getelf(mod, &bias);
  size_t n = 0;
  if (elf && elf_getphdrnum(elf, &n) == 0) {
    for (size_t i = 0; i < n; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD)
        loads.push_back({ph.p_offset, ph.p_vaddr, ph.p_filesz, (ph.p_flags & PF_X) != 0});
    }
  }
  for (Elf_Scn* scn = elf ? elf_nextscn(elf, nullptr) : nullptr; scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) status.has_symtab = status.debug_file.empty();
  }
  Dwarf_Addr dbias;
  Dwarf* dw = dwfl_module_getdwarf(mod, &dbias);
  if (!dw) return;
  Dwarf_Addr cbias = 0;
  for (Dwarf_Die* cu = dwfl_module_nextcu(mod, nullptr, &cbias); cu; cu = dwfl_module_nextcu(mod, cu, &cbias)) {
    dwarf_bias = cbias;
    Dwarf_Addr base, lo, hi;
    for (ptrdiff_t o = dwarf_ranges(cu, 0, &base, &lo, &hi); o > 0; o = dwarf_ranges(cu, o, &base, &lo, &hi))
      if (hi > lo) cus.push_back({lo, hi, *cu});
  }
  std::sort(cus.begin(), cus.end(), [](const auto& a, const auto& b) { return a.lo < b.lo; });
  status.has_lines = !cus.empty();
  const char *mainfile = nullptr, *debugfile = nullptr;
  dwfl_module_info(mod, nullptr, nullptr, nullptr, nullptr, nullptr, &mainfile, &debugfile);
  if (debugfile && (!mainfile || strcmp(debugfile, mainfile) != 0)) status.debug_file = debugfile;
}

// BOLT's names for local symbols, which its profiles must use: in address
// order (functions before other symbols at one address), the Nth local
// symbol called `foo` in an allocated section is "foo/N"
// (RewriteInstance::discoverFileObjects).
void Symbolizer::Module::NameForBolt() {
  struct Sym {
    uint64_t addr;
    std::string name;
    int type, bind;
    int order;
  };
  std::vector<Sym> syms;
  int nsym = dwfl_module_getsymtab(mod);
  for (int i = 0; i < nsym; ++i) {
    GElf_Sym s;
    GElf_Addr addr;
    GElf_Word shndx;
    Elf* selff = nullptr;
    const char* name = dwfl_module_getsym_info(mod, i, &s, &addr, &shndx, &selff, nullptr);
    if (!name) continue;
    if (!strcmp(name, "__llvm_fs_discriminator__")) fs_discriminators = true;
    int type = GELF_ST_TYPE(s.st_info);
    if (!*name || type == STT_FILE || type == STT_SECTION || s.st_shndx == SHN_UNDEF) continue;
    if (s.st_shndx != SHN_ABS && selff) {
      Elf_Scn* scn = elf_getscn(selff, shndx);
      GElf_Shdr sh;
      if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC)) continue;
    }
    syms.push_back({addr - bias, name, type, GELF_ST_BIND(s.st_info), i});
  }
  std::stable_sort(syms.begin(), syms.end(), [](const Sym& a, const Sym& b) {
    if (a.addr != b.addr) return a.addr < b.addr;
    return a.type == STT_FUNC && b.type != STT_FUNC;
  });
  std::unordered_map<std::string, int> counters;
  for (const Sym& s : syms) {
    if (s.addr == 0 || s.name == "__hot_start" || s.name == "__hot_end") continue;
    std::string bolt = s.name;
    if (s.bind == STB_LOCAL) bolt += "/" + std::to_string(++counters[s.name]);
    bolt_names[{s.addr, s.name}] = bolt;
  }
}

const BinaryStatus& Symbolizer::Open(const BinaryRef& b) { return Get(b)->status; }

bool Symbolizer::ToOffset(const BinaryRef& b, uint64_t vaddr, uint64_t* off) {
  return Translate(Get(b)->loads, vaddr, &Load::vaddr, &Load::offset, off);
}

bool Symbolizer::ToVaddr(const BinaryRef& b, uint64_t off, uint64_t* vaddr) {
  return Translate(Get(b)->loads, off, &Load::offset, &Load::vaddr, vaddr);
}

bool Symbolizer::NotCode(const BinaryRef& b, uint64_t off) {
  Module* m = Get(b);
  if (!m->mod || m->loads.empty()) return false;
  return std::none_of(m->loads.begin(), m->loads.end(),
                      [&](const Load& l) { return l.exec && off >= l.offset && off < l.offset + l.filesz; });
}

std::vector<ProfileBinary::Segment> Symbolizer::Segments(const BinaryRef& b) {
  std::vector<ProfileBinary::Segment> out;
  for (const Load& l : Get(b)->loads) out.push_back({l.vaddr, l.offset, l.filesz});
  return out;
}

std::vector<uint64_t> Symbolizer::LineAddresses(const BinaryRef& b, uint64_t start, uint64_t size) {
  std::vector<uint64_t> out;
  Module* m = Get(b);
  if (!m->mod || size == 0) return out;
  Dwarf_Addr lo = start + m->bias - m->dwarf_bias, hi = lo + size;
  Dwarf_Die* cu = m->CuAt(lo);
  Dwarf_Lines* lines = nullptr;
  size_t n = 0;
  if (!cu || dwarf_getsrclines(cu, &lines, &n) != 0) return out;
  for (size_t i = 0; i < n; ++i) {
    Dwarf_Line* l = dwarf_onesrcline(lines, i);
    Dwarf_Addr a = 0;
    bool end = false;
    if (!l || dwarf_lineaddr(l, &a) != 0 || a < lo || a >= hi) continue;
    if (dwarf_lineendsequence(l, &end) == 0 && end) continue;
    out.push_back(a - m->bias + m->dwarf_bias);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}


// The ELF symbol at `vaddr` (none if it is a data object's) and its BOLT name.
void Symbolizer::Module::NameSymbol(uint64_t vaddr, AddressInfo& info) {
  GElf_Off off = 0;
  GElf_Sym sym;
  const char* sname = SymbolAt(vaddr + bias, &off, &sym);
  if (!sname || GELF_ST_TYPE(sym.st_info) == STT_OBJECT) return;
  info.symbol = sname;
  info.symbol_start = vaddr - off;
  info.symbol_size = sym.st_size;
  auto bn = bolt_names.find({info.symbol_start, info.symbol});
  info.bolt_name = bn != bolt_names.end() ? bn->second : info.symbol;
}

// The search table of .eh_frame_hdr (PT_GNU_EH_FRAME) is every FDE's
// initial location, sorted, as the unwinder bisects it: version 1, then the
// encodings of the .eh_frame pointer, the count and the table. Linkers
// (GNU ld, gold, lld) write the table as pairs of 4-byte signed offsets from
// the header (DW_EH_PE_datarel | DW_EH_PE_sdata4); another encoding is not
// read, and its addresses stay unnamed.
static std::vector<uint64_t> ReadFdeStarts(Elf* elf) {
  constexpr uint8_t kDatarelSdata4 = 0x3b, kUdata4 = 0x03, kSdata4 = 0x0b, kOmit = 0xff;
  std::vector<uint64_t> out;
  size_t phnum = 0, size = 0;
  const char* raw = elf ? elf_rawfile(elf, &size) : nullptr;
  if (!raw || elf_getphdrnum(elf, &phnum) != 0) return out;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_GNU_EH_FRAME) continue;
    if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset || ph.p_filesz < 12) return out;
    const auto* h = reinterpret_cast<const uint8_t*>(raw + ph.p_offset);
    // The .eh_frame pointer and the count, 4 bytes each in the encodings
    // linkers use (the pointer pc- or data-relative).
    auto four = [&](uint8_t enc) { return enc != kOmit && ((enc & 0x0f) == kUdata4 || (enc & 0x0f) == kSdata4); };
    if (h[0] != 1 || !four(h[1]) || (h[2] != kUdata4 && h[2] != kSdata4) || h[3] != kDatarelSdata4) return out;
    uint32_t count = 0;
    memcpy(&count, h + 8, 4);
    if (count > (ph.p_filesz - 12) / 8) return out;
    out.reserve(count);
    for (uint32_t k = 0; k < count; ++k) {
      int32_t rel = 0;
      memcpy(&rel, h + 12 + 8 * static_cast<size_t>(k), 4);
      out.push_back(ph.p_vaddr + static_cast<int64_t>(rel));
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  return out;
}

void Symbolizer::Module::NameUnnamed(uint64_t vaddr, AddressInfo& info) {
  if (!fde_starts_read) {
    fde_starts_read = true;
    GElf_Addr b = 0;
    fde_starts = ReadFdeStarts(dwfl_module_getelf(mod, &b));
  }
  auto it = std::upper_bound(fde_starts.begin(), fde_starts.end(), vaddr);
  if (it != fde_starts.begin()) info.unnamed_start = *std::prev(it);
}

// Where the prologue of the symbol at `start` ends (a DWARF address), 0 if
// the line table does not say; read once per symbol.
Dwarf_Addr Symbolizer::Module::PrologueEnd(Dwarf_Die* cu, uint64_t start, uint64_t size) {
  // libdw keeps a CU's rows sorted by address: the first row from the
  // symbol's start flagged prologue_end ends its prologue.
  auto [pe, fresh] = prologue_ends.try_emplace(start, 0);
  Dwarf_Lines* lines = nullptr;
  size_t n = 0;
  if (!fresh || dwarf_getsrclines(cu, &lines, &n) != 0) return pe->second;
  Dwarf_Addr lo = start + bias - dwarf_bias, hi = lo + std::max<uint64_t>(size, 1);
  size_t first = 0, last = n;
  while (first < last) {  // first row at or after lo
    size_t mid = (first + last) / 2;
    Dwarf_Addr ma = 0;
    dwarf_lineaddr(dwarf_onesrcline(lines, mid), &ma);
    (ma < lo ? first = mid + 1 : last = mid);
  }
  for (size_t i = first; i < n; ++i) {
    Dwarf_Line* l = dwarf_onesrcline(lines, i);
    Dwarf_Addr la = 0;
    bool flag = false;
    if (!l || dwarf_lineaddr(l, &la) != 0 || la >= hi) break;
    if (dwarf_lineprologueend(l, &flag) == 0 && flag) {
      pe->second = la;
      break;
    }
  }
  return pe->second;
}

// The inline chain at DWARF address `a` of compile unit `cu`, innermost
// frame first, each at its line.
void Symbolizer::Module::AddFrames(Dwarf_Die* cu, Dwarf_Addr a, AddressInfo& info) {
  int lineno = 0;
  unsigned disc = 0;
  if (Dwarf_Line* line = dwarf_getsrc_die(cu, a)) {
    dwarf_lineno(line, &lineno);
    dwarf_linediscriminator(line, &disc);
  }
  uint32_t cur_line = lineno > 0 ? static_cast<uint32_t>(lineno) : 0;
  uint32_t cur_disc = BaseDiscriminator(disc, fs_discriminators);
  auto known = info.symbol.empty() ? subprograms.end() : subprograms.find(info.symbol_start);
  if (known != subprograms.end() && known->second.Contains(a))
    FramesFromTree(known->second, a, cur_line, cur_disc, info);
  else
    FramesFromScopes(cu, a, cur_line, cur_disc, info);
}

// The chain from the ScopeTree of the symbol's subprogram, found before.
void Symbolizer::Module::FramesFromTree(ScopeTree& tree, Dwarf_Addr a, uint32_t line, uint32_t disc,
                                        AddressInfo& info) {
  std::vector<Dwarf_Die> chain = tree.Chain(a);
  for (size_t k = chain.size(); k-- > 0;) {
    info.frames.push_back(FrameOf(&chain[k], info.symbol, line, disc));
    if (k == 0) break;
    // The frame outside an inlined call is at the call's line.
    line = AttrUnsigned(&chain[k], DW_AT_call_line);
    disc = BaseDiscriminator(AttrUnsigned(&chain[k], kAtGnuDiscriminator), fs_discriminators);
  }
}

// The chain from libdw's scopes, keeping the subprogram's ScopeTree for the
// symbol's next addresses.
void Symbolizer::Module::FramesFromScopes(Dwarf_Die* cu, Dwarf_Addr a, uint32_t line, uint32_t disc,
                                          AddressInfo& info) {
  // dwarf_getscopes continues past an inlined instance into its abstract
  // definition's scopes, not its caller: dwarf_getscopes_die on the
  // instance gives the concrete chain it sits in.
  Dwarf_Die* scopes = nullptr;
  int n = dwarf_getscopes(cu, a, &scopes);
  int i = 0;
  while (i < n) {
    int tag = dwarf_tag(&scopes[i]);
    if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) {
      ++i;
      continue;
    }
    info.frames.push_back(FrameOf(&scopes[i], info.symbol, line, disc));
    if (tag == DW_TAG_subprogram) {
      if (!info.symbol.empty()) subprograms.emplace(info.symbol_start, ScopeTree(scopes[i]));
      break;
    }
    // The frame outside an inlined call is at the call's line.
    line = AttrUnsigned(&scopes[i], DW_AT_call_line);
    disc = BaseDiscriminator(AttrUnsigned(&scopes[i], kAtGnuDiscriminator), fs_discriminators);
    Dwarf_Die inst = scopes[i];
    free(scopes);
    scopes = nullptr;
    n = dwarf_getscopes_die(&inst, &scopes);
    i = 1;  // scopes[0] is the instance itself
  }
  free(scopes);
}

const AddressInfo* Symbolizer::Lookup(const BinaryRef& b, uint64_t vaddr) {
  Module* m = Get(b);
  if (!m->mod) return nullptr;
  auto it = m->cache.find(vaddr);
  if (it != m->cache.end()) return &it->second;
  AddressInfo& info = m->cache[vaddr];
  m->NameSymbol(vaddr, info);
  if (info.symbol.empty()) m->NameUnnamed(vaddr, info);
  Dwarf_Addr a = vaddr + m->bias - m->dwarf_bias;
  Dwarf_Die* cu = m->CuAt(a);
  if (cu && !info.symbol.empty()) info.prologue = a < m->PrologueEnd(cu, info.symbol_start, info.symbol_size);
  if (cu) m->AddFrames(cu, a, info);
  if (info.frames.empty() && !info.symbol.empty()) {
    AddressInfo::Frame fr;
    fr.function = info.symbol;
    info.frames.push_back(std::move(fr));
  }
  return &info;
}

void Symbolizer::SetKallsyms(const std::string& text) {
  ksyms_.clear();
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    char* end = nullptr;
    uint64_t addr = strtoull(line.c_str(), &end, 16);
    if (!end || *end != ' ' || end[1] == 0) continue;
    char type = end[1];
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') continue;
    std::string name = end + 3 <= line.c_str() + line.size() ? std::string(end + 3) : "";
    size_t tab = name.find('\t');
    if (tab != std::string::npos) name = name.substr(0, tab) + " " + name.substr(tab + 1);
    if (addr && !name.empty()) ksyms_.emplace_back(addr, std::move(name));
  }
  std::stable_sort(ksyms_.begin(), ksyms_.end(), [](auto& a, auto& b) { return a.first < b.first; });
}

std::string Symbolizer::KernelName(uint64_t addr) const {
  auto it = std::upper_bound(ksyms_.begin(), ksyms_.end(), addr, [](uint64_t a, auto& s) { return a < s.first; });
  if (it == ksyms_.begin()) return "";
  return std::prev(it)->second;
}

bool IsProbeFrame(const std::string& name) {
  return name.starts_with("bpf_trace_run") || name.starts_with("__traceiter_") || name.starts_with("__bpf_trace_") ||
         name.starts_with("perf_trace_");
}

// What the first user frame of a kernel-mode sample is depends on how the
// thread entered the kernel, which the outermost kernel frame tells. A
// system call leaves the user IP after its `syscall` instruction, as a call
// leaves a return address. A page fault or an interrupt enters through an
// x86 IDT stub (`asm_exc_page_fault`, `asm_sysvec_*`) and leaves the IP on
// the instruction that faulted or is to run next, so that address is exact:
// taken as a return address, the fault's time went to the instruction (and
// line) before it. Of the IDT stubs, `int $0x80` and the `int3` trap also
// leave the IP after their instruction. Without a kernel stack to tell, it
// is taken for a system call, the common case.
static bool EnteredAfterInstruction(const Symbolizer& sym, const std::vector<uint64_t>& kernel) {
  if (kernel.empty()) return true;
  std::string entry = sym.KernelName(kernel.back());
  if (!entry.starts_with("asm_")) return true;
  return entry == "asm_int80_emulation" || entry == "asm_exc_int3";
}

namespace {

// Builds one Profile from a SampleSet: each distinct (binary, address,
// return address) becomes one location, each symbol and function one
// entry, in the order the samples first meet them.
class ProfileBuilder {
 public:
  ProfileBuilder(const SampleSet& set, Symbolizer& sym) : set_(set), sym_(sym) {}

  Profile Build() {
    p_.comm = set_.comm;
    p_.period_ns = set_.period_ns;
    p_.kernel_build_id = set_.kernel_build_id;
    OpenBinaries();
    if (!set_.kallsyms.empty()) sym_.SetKallsyms(set_.kallsyms);
    AddSamples();
    AddUnsampledLines();
    AddOffCpu();
    return std::move(p_);
  }

 private:
  struct Key {
    uint32_t binary;
    uint64_t addr;
    bool ret;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.addr * 31 + k.binary * 2 + k.ret); }
  };

  void OpenBinaries() {
    p_.binaries.resize(set_.binaries.size());
    for (size_t i = 0; i < set_.binaries.size(); ++i) {
      const BinaryStatus& st = sym_.Open(set_.binaries[i]);
      ProfileBinary& b = p_.binaries[i];
      b.ref = set_.binaries[i];
      b.problem = st.problem;
      b.has_lines = st.has_lines;
      b.has_symtab = st.has_symtab;
      b.debug_file = st.debug_file;
      if (st.problem.empty() && st.file != st.debug_file) b.code_file = st.file;
      if (st.problem.empty()) b.loads = sym_.Segments(set_.binaries[i]);
    }
  }

  uint32_t Function(uint32_t binary, const std::string& name, const std::string& file) {
    auto [it, fresh] = fn_ids_.try_emplace({binary, name}, static_cast<uint32_t>(p_.functions.size()));
    if (fresh) p_.functions.push_back({name, Demangle(name), file, binary});
    return it->second;
  }

  uint32_t Add(const Key& k, Location l) {
    p_.locations.push_back(std::move(l));
    return loc_ids_[k] = static_cast<uint32_t>(p_.locations.size() - 1);
  }

  // The symbol and source frames of a user address, as the binary's
  // symbols and line table have them.
  void Describe(const UserFrame& f, bool ret, uint64_t vaddr, Location& l) {
    const AddressInfo* ai = sym_.Lookup(set_.binaries[f.binary], ret ? vaddr - 1 : vaddr);
    if (!ai) return;
    l.prologue = ai->prologue && !ret;
    l.unnamed_start = ai->unnamed_start;
    if (!ai->symbol.empty()) {
      auto [sit, fresh] =
          sym_ids_.try_emplace({f.binary, ai->symbol_start, ai->symbol}, static_cast<int32_t>(p_.symbols.size()));
      if (fresh) p_.symbols.push_back({ai->symbol, ai->bolt_name, ai->symbol_start, ai->symbol_size, f.binary});
      l.symbol = sit->second;
    }
    for (const AddressInfo::Frame& fr : ai->frames) {
      SourceFrame sf;
      sf.function = Function(f.binary, fr.function, fr.file);
      sf.line = fr.line;
      sf.line_offset = fr.line ? ((fr.line - fr.decl_line) & 0xffff) : 0;
      sf.discriminator = fr.discriminator;
      l.frames.push_back(sf);
    }
  }

  uint32_t UserLocation(const UserFrame& f, bool ret) {
    Key k{f.binary, f.offset, ret};
    if (auto it = loc_ids_.find(k); it != loc_ids_.end()) return it->second;
    Location l;
    l.binary = f.binary;
    l.address = f.offset;
    l.offset = f.offset;
    l.return_address = ret;
    uint64_t vaddr;
    if (f.binary != kNoBinary && p_.binaries[f.binary].problem.empty() &&
        sym_.ToVaddr(set_.binaries[f.binary], f.offset, &vaddr)) {
      l.address = vaddr;
      Describe(f, ret, vaddr, l);
    }
    return Add(k, std::move(l));
  }

  uint32_t KernelLocation(uint64_t addr, bool ret) {
    Key k{kKernelBinary, addr, ret};
    if (auto it = loc_ids_.find(k); it != loc_ids_.end()) return it->second;
    Location l;
    l.binary = kKernelBinary;
    l.address = addr;
    l.offset = addr;
    l.return_address = ret;
    std::string name = sym_.KernelName(ret ? addr - 1 : addr);
    if (name.empty()) name = "[kernel " + Hex(addr) + "]";
    SourceFrame sf;
    sf.function = Function(kKernelBinary, name, "");
    l.frames.push_back(sf);
    return Add(k, std::move(l));
  }

  // A caller frame outside the code of the binary it falls in: a walk by
  // frame pointers through code built without them read a saved register
  // or a pointer to data as the caller (Debian builds without frame
  // pointers). Every frame above it comes from that one: the stack ends
  // before it. Where the binary cannot be read, or the address is in no
  // file, it is kept: nothing tells.
  bool CallerIsGarbage(const UserFrame& f) {
    return f.binary < set_.binaries.size() && sym_.NotCode(set_.binaries[f.binary], f.offset);
  }

  // A sampled stack as locations: kernel frames, then user frames; caller
  // frames are return addresses, and so is where a system call entered.
  ProfileSample Stack(const StackSample& s) {
    ProfileSample ps;
    ps.pid = s.pid;
    ps.count = s.count;
    for (size_t i = 0; i < s.kernel.size(); ++i) ps.stack.push_back(KernelLocation(s.kernel[i], i > 0));
    ps.first_user = static_cast<uint32_t>(ps.stack.size());
    ps.kernel_mode = s.kernel_mode;
    bool entry_after = s.kernel_mode && EnteredAfterInstruction(sym_, s.kernel);
    for (size_t i = 0; i < s.user.size(); ++i) {
      if (i > 0 && CallerIsGarbage(s.user[i])) break;
      ps.stack.push_back(UserLocation(s.user[i], i > 0 || entry_after));
    }
    return ps;
  }

  void AddSamples() {
    p_.samples.reserve(set_.samples.size());
    for (const StackSample& s : set_.samples) {
      ProfileSample ps = Stack(s);
      p_.total += s.count;
      if (ps.first_user < ps.stack.size() && p_.locations[ps.stack[ps.first_user]].has_line())
        p_.user_with_line += s.count;
      std::vector<uint32_t> seen;
      for (size_t i = ps.first_user; i < ps.stack.size(); ++i) {
        uint32_t b = p_.locations[ps.stack[i]].binary;
        if (b < p_.binaries.size() && std::find(seen.begin(), seen.end(), b) == seen.end()) {
          seen.push_back(b);
          p_.binaries[b].samples += s.count;
        }
      }
      p_.samples.push_back(std::move(ps));
    }
  }

  // Every other line-table row of each sampled function symbol, for the
  // zero counts of sample profiles. The symbols list grows while rows are
  // symbolized (an inlined row still belongs to its symbol), so only the
  // ones found from samples are walked.
  void AddUnsampledLines() {
    std::set<std::pair<uint32_t, uint64_t>> hit;  // (binary, vaddr) of sampled code
    for (const ProfileSample& s : p_.samples)
      for (size_t i = s.first_user; i < s.stack.size(); ++i) {
        const Location& l = p_.locations[s.stack[i]];
        if (!l.return_address && l.binary < p_.binaries.size()) hit.insert({l.binary, l.address});
      }
    size_t sampled_symbols = p_.symbols.size();
    for (size_t si = 0; si < sampled_symbols; ++si) {
      const Symbol s = p_.symbols[si];
      if (s.binary >= p_.binaries.size() || !p_.binaries[s.binary].has_lines) continue;
      for (uint64_t vaddr : sym_.LineAddresses(set_.binaries[s.binary], s.start, s.size)) {
        uint64_t off;
        if (hit.count({s.binary, vaddr}) || !sym_.ToOffset(set_.binaries[s.binary], vaddr, &off)) continue;
        p_.unsampled.push_back(UserLocation(UserFrame{s.binary, off}, false));
      }
    }
  }

  // Off-CPU stacks last, so that nothing above (the unsampled rows of the
  // sampled symbols) depends on whether they were loaded. They were taken
  // in the sched_switch probe, whose own frames go (IsProbeFrame).
  // Stacks that differ only there are folded together again.
  void AddOffCpu() {
    SampleSet off;
    off.offcpu = set_.offcpu;
    for (StackSample& t : off.offcpu) {
      size_t skip = 0;
      for (size_t i = 0; i < t.kernel.size() && i < kProbeFramesMax; ++i)
        if (IsProbeFrame(sym_.KernelName(t.kernel[i]))) skip = i + 1;
      t.kernel.erase(t.kernel.begin(), t.kernel.begin() + static_cast<long>(skip));
    }
    off.Normalize();
    for (const StackSample& s : off.offcpu) p_.offcpu.push_back(Stack(s));
  }

  const SampleSet& set_;
  Symbolizer& sym_;
  Profile p_;
  std::map<std::pair<uint32_t, std::string>, uint32_t> fn_ids_;
  std::map<std::tuple<uint32_t, uint64_t, std::string>, int32_t> sym_ids_;
  std::unordered_map<Key, uint32_t, KeyHash> loc_ids_;
};

}  // namespace

Profile Symbolize(const SampleSet& set, Symbolizer& sym) { return ProfileBuilder(set, sym).Build(); }

}  // namespace syspgo
