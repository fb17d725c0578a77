//===- symbolize_test.cc - the symbolizer against llvm-symbolizer --------===//
// llvm-symbolizer-19 is the oracle: for every instruction address of the
// workload's sampled functions (a PIE and a shared library), syspgo's
// symbolizer must give the same inline chain, function names, lines,
// function start lines and (decoded) discriminators. File offsets are
// checked against section headers (a different path than the program
// headers the symbolizer uses). A stripped copy must symbolize the same
// through .gnu_debuglink and through a .build-id debug directory; a
// rebuilt binary must be refused; a binary without DWARF still gives
// symbols.
#include <elfutils/libdwfl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "analyze/sample_set.h"
#include "analyze/symbolize.h"
#include "common/util.h"
#include "tests/pgo_workload.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

struct OracleFrame {
  std::string function;
  uint32_t line = 0, start_line = 0, discriminator = 0;
  uint64_t start_address = 0;
};

// `llvm-symbolizer --verbose` for many addresses: per address, its frames
// (innermost first), blocks separated by blank lines.
std::vector<std::vector<OracleFrame>> Oracle(const std::string& bin, const std::vector<uint64_t>& addrs) {
  std::string cmd = "llvm-symbolizer-19 --verbose --inlines --obj=" + bin;
  for (uint64_t a : addrs) {
    char b[24];
    snprintf(b, sizeof b, " 0x%llx", static_cast<unsigned long long>(a));
    cmd += b;
  }
  std::vector<std::vector<OracleFrame>> out(1);
  std::istringstream in(Sh(cmd).out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) {
      out.emplace_back();
      continue;
    }
    if (line[0] != ' ') {
      out.back().push_back({line});
      continue;
    }
    auto colon = line.find(':');
    std::string key = Trim(line.substr(0, colon)), val = Trim(line.substr(colon + 1));
    OracleFrame& f = out.back().back();
    if (key == "Line") f.line = static_cast<uint32_t>(std::stoul(val));
    if (key == "Function start line") f.start_line = static_cast<uint32_t>(std::stoul(val));
    if (key == "Discriminator") f.discriminator = static_cast<uint32_t>(std::stoul(val));
    if (key == "Function start address") f.start_address = std::stoull(val, nullptr, 16);
  }
  while (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

BinaryRef Ref(const std::string& path) {
  auto id = ReadBuildId(path);
  EXPECT_TRUE(id.ok()) << path;
  return {path, id.ok() ? *id : ""};
}

// Compares every address of the named functions with the oracle; returns
// how many addresses had an inlined frame and a non-zero discriminator.
void CompareWithOracle(Symbolizer& sym, const BinaryRef& ref, const std::string& oracle_bin,
                       const std::vector<std::string>& fns, size_t* inlined, size_t* discriminated) {
  auto nm = NmSymbols(oracle_bin);
  std::vector<uint64_t> addrs;
  for (const std::string& f : fns) {
    ASSERT_TRUE(nm.count(f)) << f << " in " << oracle_bin;
    for (uint64_t a = nm[f].start; a < nm[f].start + nm[f].size; ++a) addrs.push_back(a);
  }
  auto oracle = Oracle(oracle_bin, addrs);
  ASSERT_EQ(oracle.size(), addrs.size());
  for (size_t i = 0; i < addrs.size(); ++i) {
    const AddressInfo* ai = sym.Lookup(ref, addrs[i]);
    ASSERT_NE(ai, nullptr);
    const auto& want = oracle[i];
    SCOPED_TRACE(testing::Message() << ref.path << " 0x" << std::hex << addrs[i]);
    ASSERT_EQ(ai->frames.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      EXPECT_EQ(ai->frames[k].function, want[k].function) << "frame " << k;
      EXPECT_EQ(ai->frames[k].line, want[k].line) << "frame " << k;
      EXPECT_EQ(ai->frames[k].decl_line, want[k].start_line) << "frame " << k;
      EXPECT_EQ(ai->frames[k].discriminator, BaseDiscriminator(want[k].discriminator, false)) << "frame " << k;
    }
    EXPECT_EQ(ai->symbol, want.back().function);
    EXPECT_EQ(ai->symbol_start, want.back().start_address);
    if (want.size() > 1) ++*inlined;
    if (want[0].discriminator) ++*discriminated;
  }
}

TEST(Symbolize, MatchesLlvmSymbolizerInPieAndSharedLibrary) {
  Symbolizer sym;
  BinaryRef app = Ref(Pgo("pgo_app")), lib = Ref(Pgo("libpgo_lib.so"));
  const BinaryStatus& st = sym.Open(app);
  EXPECT_EQ(st.problem, "");
  EXPECT_TRUE(st.has_lines);
  EXPECT_TRUE(st.has_symtab);
  size_t inlined = 0, disc = 0;
  CompareWithOracle(sym, app, app.path, {"hot_kernel", "warm_local", "run_rounds", "main"}, &inlined, &disc);
  CompareWithOracle(sym, lib, lib.path, {"lib_mix"}, &inlined, &disc);
  EXPECT_GT(inlined, 0u) << "no address with an inlined frame (rotate_mix into hot_kernel)";
  EXPECT_GT(disc, 0u) << "no address with a discriminator";
  // The inlined helper: its frame is inside hot_kernel, called from line 25.
  auto nm = NmSymbols(app.path);
  bool seen_rotate = false;
  for (uint64_t a = nm["hot_kernel"].start; a < nm["hot_kernel"].start + nm["hot_kernel"].size; ++a) {
    const AddressInfo* ai = sym.Lookup(app, a);
    if (ai->frames.size() == 2 && ai->frames[0].function == "rotate_mix") {
      seen_rotate = true;
      EXPECT_EQ(ai->frames[1].function, "hot_kernel");
      EXPECT_EQ(ai->frames[1].line, 25u);
    }
  }
  EXPECT_TRUE(seen_rotate);
}

// llvm-readelf's section table: .text's address and file offset.
void TextSection(const std::string& bin, uint64_t* addr, uint64_t* off) {
  std::istringstream in(Sh("llvm-readelf-19 -SW " + bin + " | grep ' .text '").out);
  std::string line;
  ASSERT_TRUE(static_cast<bool>(std::getline(in, line))) << bin;
  std::istringstream f(line.substr(line.find(".text")));
  std::string name, type, a, o;
  f >> name >> type >> a >> o;
  *addr = std::stoull(a, nullptr, 16);
  *off = std::stoull(o, nullptr, 16);
}

TEST(Symbolize, FileOffsetsBecomeElfAddresses) {
  Symbolizer sym;
  for (const char* name : {"pgo_app", "libpgo_lib.so"}) {
    BinaryRef ref = Ref(Pgo(name));
    uint64_t text_addr = 0, text_off = 0;
    TextSection(ref.path, &text_addr, &text_off);
    std::string fn = std::string(name) == "pgo_app" ? "hot_kernel" : "lib_mix";
    uint64_t want = NmSymbols(ref.path)[fn].start + 5;
    uint64_t vaddr = 0;
    ASSERT_TRUE(sym.ToVaddr(ref, want - text_addr + text_off, &vaddr)) << name;
    EXPECT_EQ(vaddr, want) << name;
    EXPECT_EQ(sym.Lookup(ref, vaddr)->symbol, fn);
  }
  uint64_t v;
  EXPECT_FALSE(sym.ToVaddr(Ref(Pgo("pgo_app")), 1ull << 40, &v));
}

TEST(Symbolize, StrippedCopyThroughDebuglinkAndBuildIdDirectory) {
  // .gnu_debuglink: the debug file sits beside the stripped binary.
  TempDir dir;
  std::string stripped = dir.File("pgo_app.stripped");
  ASSERT_EQ(Sh("cp " + Pgo("pgo_app.stripped") + " " + stripped + " && cp " + Pgo("pgo_app.debug") + " " +
               dir.File("pgo_app.debug")).status, 0);
  ASSERT_EQ(Sh("nm " + stripped + " 2>&1 | grep -q 'no symbols'").status, 0) << "the copy is not stripped";
  BinaryRef ref = Ref(stripped);
  ASSERT_EQ(ref.build_id, Ref(Pgo("pgo_app")).build_id);
  {
    Symbolizer sym;
    const BinaryStatus& st = sym.Open(ref);
    EXPECT_EQ(st.problem, "");
    EXPECT_TRUE(st.has_lines);
    EXPECT_FALSE(st.has_symtab);
    EXPECT_EQ(st.debug_file, dir.File("pgo_app.debug"));
    size_t inlined = 0, disc = 0;
    CompareWithOracle(sym, ref, Pgo("pgo_app"), {"hot_kernel", "warm_local"}, &inlined, &disc);
    EXPECT_GT(inlined, 0u);
  }
  // .build-id: no debug file beside it, one under a debug root.
  ASSERT_EQ(Sh("rm " + dir.File("pgo_app.debug")).status, 0);
  {
    Symbolizer sym;
    EXPECT_FALSE(sym.Open(ref).has_lines) << "found DWARF without any debug file";
  }
  std::string root = dir.File("debugroot");
  std::string id_dir = root + "/.build-id/" + ref.build_id.substr(0, 2);
  ASSERT_EQ(Sh("mkdir -p " + id_dir + " && cp " + Pgo("pgo_app.debug") + " " + id_dir + "/" +
               ref.build_id.substr(2) + ".debug").status, 0);
  Symbolizer sym({{root}, {}});
  const BinaryStatus& st = sym.Open(ref);
  EXPECT_TRUE(st.has_lines);
  EXPECT_NE(st.debug_file.find("/.build-id/"), std::string::npos) << st.debug_file;
  size_t inlined = 0, disc = 0;
  CompareWithOracle(sym, ref, Pgo("pgo_app"), {"hot_kernel"}, &inlined, &disc);
}

TEST(Symbolize, RebuiltBinaryIsReportedNotMisread) {
  BinaryRef recorded = Ref(Pgo("pgo_app"));
  // The run saw a build-id; the file at the path now has another.
  BinaryRef stale{Pgo("pgo_app_nodebug"), recorded.build_id};
  ASSERT_NE(Ref(stale.path).build_id, recorded.build_id);
  Symbolizer sym;
  const BinaryStatus& st = sym.Open(stale);
  EXPECT_NE(st.problem.find("rebuilt or replaced"), std::string::npos) << st.problem;
  EXPECT_NE(st.problem.find(recorded.build_id), std::string::npos) << st.problem;
  EXPECT_EQ(sym.Lookup(stale, NmSymbols(Pgo("pgo_app"))["hot_kernel"].start), nullptr);

  // With the recorded build's debug file under .build-id, it symbolizes from that.
  TempDir dir;
  std::string id_dir = dir.path() + "/.build-id/" + recorded.build_id.substr(0, 2);
  ASSERT_EQ(Sh("mkdir -p " + id_dir + " && cp " + Pgo("pgo_app.debug") + " " + id_dir + "/" +
               recorded.build_id.substr(2) + ".debug").status, 0);
  Symbolizer sym2({{dir.path()}, {}});
  EXPECT_EQ(sym2.Open(stale).problem, "");
  size_t inlined = 0, disc = 0;
  CompareWithOracle(sym2, stale, Pgo("pgo_app"), {"hot_kernel"}, &inlined, &disc);
}

// The symbolizer remembers the symbol libdwfl found for an address and
// gives it to the other addresses in that symbol, where no other symbol
// starts inside it. Here a function has an alias (same start and size), and
// a hand-written one holds a label without a size and a nested function.
// At every address from the first function to past the last, looked up in
// three orders, the symbol must be the one libdwfl gives that address.
TEST(Symbolize, SymbolsAreLibdwflsAtEveryAddressInAnyOrder) {
  TempDir dir;
  std::string src = dir.File("syms.c"), bin = dir.File("syms");
  std::ofstream(src) << "int helper(int x) { return x * 3 + 1; }\n"
                        "int helper_alias(int) __attribute__((alias(\"helper\")));\n"
                        "__asm__(\".text\\n.globl outer\\n.type outer,@function\\nouter:\\n nop\\n nop\\n"
                        ".globl inner_label\\ninner_label:\\n nop\\n nop\\n"
                        ".globl nested\\n.type nested,@function\\nnested:\\n nop\\n nop\\n ret\\n.size nested, .-nested\\n"
                        " nop\\n nop\\n ret\\n.size outer, .-outer\\n\");\n"
                        "int main(int c, char** v) { (void)v; return helper(c); }\n";
  CmdResult cc = RunCmd({"clang-19", "-O1", "-o", bin, src});
  ASSERT_EQ(cc.status, 0) << cc.err;
  auto nm = NmSymbols(bin);
  for (const char* f : {"helper", "helper_alias", "outer", "nested", "main"})
    ASSERT_TRUE(nm.count(f)) << f << " in " << bin;
  ASSERT_NE(Sh("nm " + bin).out.find(" T inner_label\n"), std::string::npos) << "the label without a size";
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const char* f : {"helper", "outer", "main"}) {
    lo = std::min(lo, nm[f].start);
    hi = std::max(hi, nm[f].start + nm[f].size);
  }
  std::vector<uint64_t> addrs;
  for (uint64_t a = lo; a < hi + 16; ++a) addrs.push_back(a);

  // The oracle: libdwfl itself, one address at a time.
  char* debuginfo_path = nullptr;
  Dwfl_Callbacks cb{};
  cb.find_elf = dwfl_build_id_find_elf;
  cb.find_debuginfo = dwfl_standard_find_debuginfo;
  cb.section_address = dwfl_offline_section_address;
  cb.debuginfo_path = &debuginfo_path;
  Dwfl* dwfl = dwfl_begin(&cb);
  ASSERT_NE(dwfl, nullptr);
  Dwfl_Module* mod = dwfl_report_offline(dwfl, "", bin.c_str(), -1);
  ASSERT_NE(mod, nullptr) << dwfl_errmsg(-1);
  dwfl_report_end(dwfl, nullptr, nullptr);
  GElf_Addr bias = 0;
  ASSERT_NE(dwfl_module_getelf(mod, &bias), nullptr);
  struct Want {
    std::string symbol;
    uint64_t start = 0;
  };
  std::map<uint64_t, Want> want;
  for (uint64_t a : addrs) {
    GElf_Off off = 0;
    GElf_Sym sym;
    const char* name = dwfl_module_addrinfo(mod, a + bias, &off, &sym, nullptr, nullptr, nullptr);
    if (name && GELF_ST_TYPE(sym.st_info) != STT_OBJECT) want[a] = {name, a - off};
    else want[a] = {};
  }
  dwfl_end(dwfl);
  std::set<std::string> seen;
  for (const auto& [a, w] : want) seen.insert(w.symbol);
  EXPECT_EQ(seen.count("nested"), 1u) << "the nested function is found at its own addresses";
  EXPECT_EQ(seen.count("outer"), 1u);

  std::vector<uint64_t> shuffled = addrs;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(1));
  std::vector<uint64_t> descending(addrs.rbegin(), addrs.rend());
  for (const auto* order : {&addrs, &descending, &shuffled}) {
    Symbolizer sym;
    BinaryRef ref = Ref(bin);
    for (uint64_t a : *order) {
      SCOPED_TRACE(testing::Message() << "0x" << std::hex << a);
      const AddressInfo* ai = sym.Lookup(ref, a);
      ASSERT_NE(ai, nullptr);
      EXPECT_EQ(ai->symbol, want[a].symbol);
      if (!want[a].symbol.empty()) {
        EXPECT_EQ(ai->symbol_start, want[a].start);
      }
    }
  }
}

TEST(Symbolize, BinaryWithoutDebugInfoStillHasSymbols) {
  Symbolizer sym;
  BinaryRef ref = Ref(Pgo("pgo_app_nodebug"));
  const BinaryStatus& st = sym.Open(ref);
  EXPECT_EQ(st.problem, "");
  EXPECT_FALSE(st.has_lines);
  auto nm = NmSymbols(ref.path);
  const AddressInfo* ai = sym.Lookup(ref, nm["warm_local"].start + 4);
  ASSERT_NE(ai, nullptr);
  EXPECT_EQ(ai->symbol, "warm_local");
  EXPECT_EQ(ai->bolt_name, "warm_local/1") << "BOLT names local symbols name/N";
  ASSERT_EQ(ai->frames.size(), 1u);
  EXPECT_EQ(ai->frames[0].line, 0u);
  EXPECT_EQ(sym.Lookup(ref, nm["hot_kernel"].start)->bolt_name, "hot_kernel");
}

// A stripped binary (no .symtab, as Debian ships its libraries) names no
// static function; each address is then given the start of the function
// that covers it in the unwind table (.eh_frame_hdr), so a profile adds
// up one function's samples instead of listing each address. At every
// address of the program's functions that start must be the one the
// unstripped copy's symbol table gives.
TEST(Symbolize, StrippedBinaryGroupsAddressesByTheUnwindTablesFunctions) {
  TempDir t;
  std::string full = Pgo("pgo_app_nodebug"), stripped = t.File("app.stripped");
  ASSERT_EQ(RunCmd({"llvm-strip-19", "--strip-all", "-o", stripped, full}).status, 0);
  ASSERT_EQ(Sh("llvm-readelf-19 -S " + stripped + " | grep -c ' .symtab '").out, "0\n");
  Symbolizer sym;
  BinaryRef ref = Ref(stripped);
  EXPECT_EQ(sym.Open(ref).problem, "");
  auto nm = NmSymbols(full);
  for (const char* fn : {"hot_kernel", "warm_local", "run_rounds", "via_pointer", "main"}) {
    ASSERT_TRUE(nm.count(fn)) << fn;
    for (uint64_t a = nm[fn].start; a < nm[fn].start + nm[fn].size; ++a) {
      const AddressInfo* ai = sym.Lookup(ref, a);
      ASSERT_NE(ai, nullptr);
      EXPECT_EQ(ai->symbol, "") << fn << " is in no symbol table of the stripped copy";
      ASSERT_EQ(ai->unnamed_start, nm[fn].start) << fn << " at 0x" << std::hex << a;
    }
  }
  // With its symbol, an address needs no unwind table's start.
  Symbolizer named;
  EXPECT_EQ(named.Lookup(Ref(full), nm["warm_local"].start + 4)->unnamed_start, 0u);
}

TEST(Symbolize, KernelAddressesThroughKallsyms) {
  Symbolizer sym;
  sym.SetKallsyms(
      "ffffffff81000000 T _stext\n"
      "ffffffff81001000 t do_one\n"
      "ffffffff81002000 D some_data\n"
      "ffffffffc0000000 t mod_fn\t[ext4]\n");
  EXPECT_EQ(sym.KernelName(0xffffffff81001010), "do_one");
  EXPECT_EQ(sym.KernelName(0xffffffff81002010), "do_one") << "data symbols do not end a function";
  EXPECT_EQ(sym.KernelName(0xffffffffc0000004), "mod_fn [ext4]");
  EXPECT_EQ(sym.KernelName(0x1000), "");
}

TEST(Symbolize, BaseDiscriminatorDecoding) {
  // LLVM encodes base discriminator b < 32 as b << 1, larger ones in a long
  // form flagged by bit 6, and leaves duplication factors above them.
  EXPECT_EQ(BaseDiscriminator(0, false), 0u);
  EXPECT_EQ(BaseDiscriminator(2, false), 1u);
  EXPECT_EQ(BaseDiscriminator(4, false), 2u);
  EXPECT_EQ(BaseDiscriminator(1, false), 0u) << "bit 0 set: no base, only a duplication factor";
  EXPECT_EQ(BaseDiscriminator(2 | (3 << 8), false), 1u);
  EXPECT_EQ(BaseDiscriminator((((40 & 0xfe0) << 1) | (40 & 0x1f) | 0x20) << 1, false), 40u);
  EXPECT_EQ(BaseDiscriminator(0x1234, true), 0x34u) << "flow-sensitive: the low 8 bits";
}

// The workload's PIE, its symbols, and the file offset of an ELF address
// in its text (what a sample set stores).
struct App {
  BinaryRef ref = Ref(Pgo("pgo_app"));
  std::map<std::string, NmSymbol> nm = NmSymbols(ref.path);
  uint64_t text_addr = 0, text_off = 0;
  App() { TextSection(ref.path, &text_addr, &text_off); }
  uint64_t Off(uint64_t vaddr) const { return vaddr - text_addr + text_off; }
};

TEST(Symbolize, SamplesBecomeLocationsOncePerAddress) {
  App a;
  const BinaryRef& app = a.ref;
  auto nm = a.nm;
  auto off = [&](uint64_t vaddr) { return a.Off(vaddr); };
  SampleSet set;
  uint32_t b = set.InternBinary(app);
  // hot_kernel called from run_rounds: the caller frame is a return address.
  uint64_t ret = ReturnAddressOfCall(app.path, "run_rounds", "hot_kernel");
  ASSERT_NE(ret, 0u) << "no call to hot_kernel in run_rounds";
  set.samples.push_back({7, false, {{b, off(nm["hot_kernel"].start + 0x20)}, {b, off(ret)}}, {}, 5});
  set.samples.push_back({7, false, {{b, off(nm["hot_kernel"].start + 0x20)}, {b, off(ret)}}, {}, 3});
  set.samples.push_back({8, true, {{b, off(ret)}}, {0xffffffff81001010}, 2});
  set.Normalize();
  ASSERT_EQ(set.samples.size(), 2u);
  EXPECT_EQ(set.Total(), 10u);
  set.kallsyms = "ffffffff81001000 t do_one\n";
  Symbolizer sym;
  Profile p = Symbolize(set, sym);
  EXPECT_EQ(p.total, 10u);
  EXPECT_EQ(p.user_with_line, 10u);
  ASSERT_EQ(p.samples.size(), 2u);
  const ProfileSample& s = p.samples[0];
  ASSERT_EQ(s.stack.size(), 2u);
  EXPECT_EQ(p.DisplayName(p.locations[s.stack[0]]), "hot_kernel");
  const Location& caller = p.locations[s.stack[1]];
  EXPECT_TRUE(caller.return_address);
  EXPECT_EQ(caller.address, ret);
  EXPECT_EQ(p.Outermost(caller)->name, "run_rounds");
  EXPECT_EQ(caller.frames[0].line, SourceLine("hot_kernel(600000")) << "the call's line, not the next statement's";
  const ProfileSample& k = p.samples[1];
  EXPECT_EQ(k.first_user, 1u);
  EXPECT_EQ(p.DisplayName(p.locations[k.stack[0]]), "do_one");
  EXPECT_EQ(k.stack[1], s.stack[1]) << "one location per (binary, address, kind)";
}

// A walk by frame pointers through code built without them reads data as
// callers: here the second frame is an offset in the binary's read-only
// headers (no PF_X segment holds it), the third a real return address
// above it. The stack ends before the first frame outside code; a frame in
// a binary that cannot be read is kept.
TEST(Symbolize, ACallerOutsideTheBinarysCodeEndsTheStack) {
  App a;
  SampleSet set;
  uint32_t b = set.InternBinary(a.ref);
  uint32_t gone = set.InternBinary({"/nonexistent/libgone.so", "00"});
  uint64_t ret = ReturnAddressOfCall(a.ref.path, "run_rounds", "hot_kernel");
  ASSERT_NE(ret, 0u);
  uint64_t ip = a.Off(a.nm["hot_kernel"].start + 0x20);
  set.samples.push_back({7, false, {{b, ip}, {b, 0x40}, {b, a.Off(ret)}}, {}, 5});
  set.samples.push_back({7, false, {{b, ip}, {gone, 0x40}, {b, a.Off(ret)}}, {}, 3});
  set.samples.push_back({7, false, {{b, ip}, {b, a.Off(ret)}}, {}, 2});
  Symbolizer sym;
  Profile p = Symbolize(set, sym);
  ASSERT_EQ(p.samples.size(), 3u);
  std::map<uint64_t, size_t> depth;  // count -> user frames kept
  for (const ProfileSample& s : p.samples) depth[s.count] = s.stack.size() - s.first_user;
  EXPECT_EQ(depth[5], 1u) << "the header offset and the frame above it are cut";
  EXPECT_EQ(depth[3], 3u) << "an unreadable binary's frame tells nothing: kept";
  EXPECT_EQ(depth[2], 2u) << "a real caller stays";
}

TEST(Symbolize, HowAKernelModeSampleEnteredDecidesItsUserAddress) {
  // A system call leaves the user IP after its instruction, as a call does;
  // a page fault or an interrupt leaves it on the instruction itself. One
  // address of run_rounds stands in for all: the first whose line is not
  // the line of the byte before it, so that the two readings differ.
  App a;
  const BinaryRef& app = a.ref;
  Symbolizer sym;
  auto line_at = [&](uint64_t a) {
    const AddressInfo* ai = sym.Lookup(app, a);
    return ai && !ai->frames.empty() ? ai->frames[0].line : 0u;
  };
  uint64_t at = 0;
  const NmSymbol& fn = a.nm["run_rounds"];
  for (uint64_t x = fn.start + 1; x < fn.start + fn.size && !at; ++x)
    if (line_at(x) && line_at(x - 1) && line_at(x) != line_at(x - 1)) at = x;
  ASSERT_NE(at, 0u) << "no line change in run_rounds";
  uint64_t ret_run = ReturnAddressOfCall(app.path, "main", "run_rounds");
  ASSERT_NE(ret_run, 0u);
  SampleSet set;
  uint32_t b = set.InternBinary(app);
  set.kallsyms =
      "ffffffff81000000 T entry_SYSCALL_64_after_hwframe\n"
      "ffffffff81001000 t do_syscall_64\n"
      "ffffffff81002000 T asm_exc_page_fault\n"
      "ffffffff81003000 t handle_mm_fault\n"
      "ffffffff81004000 T asm_exc_int3\n"
      "ffffffff81005000 T asm_sysvec_apic_timer_interrupt\n";
  const std::vector<UserFrame> user = {{b, a.Off(at)}, {b, a.Off(ret_run)}};
  set.samples.push_back({9, true, user, {0xffffffff81001010, 0xffffffff81000010}, 4});  // write()
  set.samples.push_back({9, true, user, {0xffffffff81003010, 0xffffffff81002010}, 3});  // page fault
  set.samples.push_back({9, true, user, {0xffffffff81005010}, 2});                      // interrupt
  set.samples.push_back({9, true, user, {0xffffffff81004010}, 1});                      // int3 trap
  set.samples.push_back({9, true, user, {}, 1});                                        // no kernel stack
  set.samples.push_back({9, false, user, {}, 5});                                       // user mode
  Profile p = Symbolize(set, sym);
  ASSERT_EQ(p.samples.size(), 6u);
  struct Want {
    const char* what;
    bool kernel_mode, return_address;
  };
  const Want want[] = {{"system call", true, true},  {"page fault", true, false}, {"interrupt", true, false},
                       {"int3 trap", true, true},    {"no kernel stack", true, true}, {"user mode", false, false}};
  for (size_t i = 0; i < 6; ++i) {
    SCOPED_TRACE(want[i].what);
    const ProfileSample& s = p.samples[i];
    EXPECT_EQ(s.kernel_mode, want[i].kernel_mode);
    ASSERT_LT(s.first_user, s.stack.size());
    const Location& l = p.locations[s.stack[s.first_user]];
    EXPECT_EQ(l.address, at);
    EXPECT_EQ(l.return_address, want[i].return_address);
    ASSERT_FALSE(l.frames.empty());
    EXPECT_EQ(l.frames[0].line, line_at(want[i].return_address ? at - 1 : at));
    EXPECT_TRUE(p.locations[s.stack[s.first_user + 1]].return_address) << "callers are return addresses";
  }
  EXPECT_EQ(p.samples[5].first_user, 0u);
}

}  // namespace
}  // namespace syspgo::test
