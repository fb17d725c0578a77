//===- symbolize.h - addresses to functions, inline chains and lines -----===//
// Turns a SampleSet into a Profile. A user frame is (binary, file offset):
// the binary is found by build-id (the recorded path, or a file the caller
// names, or a debug file under .build-id/), the offset becomes an ELF
// virtual address through the program headers (so PIE executables and
// shared libraries need no load address), and libdw gives the symbol, the
// inline chain (dwarf_getscopes) and the line and discriminator
// (dwarf_getsrc_die). Separate debug files are found the way gdb finds
// them: .gnu_debuglink next to the binary, in .debug/ or under a debug
// root, and /usr/lib/debug/.build-id/xx/yyyy.debug. A binary whose
// build-id no longer matches what the run recorded is reported and left
// unsymbolized, never read as if it were the same code. Kernel addresses
// resolve through the kallsyms text stored with the run.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analyze/sample_set.h"
#include "common/result.h"

namespace syspgo {

struct SymbolizerOptions {
  // Debug roots searched before /usr/lib/debug, for .build-id/xx/yyyy.debug
  // and for .gnu_debuglink names (as <root>/<dir of binary>/<name>).
  std::vector<std::string> debug_dirs;
  // build-id -> file to read for it instead of the path the run recorded.
  std::map<std::string, std::string> files;
};

// What one address of one binary resolves to.
struct AddressInfo {
  struct Frame {
    std::string function;     // linkage name, else DW_AT_name, else the symbol
    std::string file;         // declaration file of the function
    uint32_t line = 0;        // 0 if unknown
    uint32_t decl_line = 0;   // DW_AT_decl_line of the (abstract) subprogram
    uint32_t discriminator = 0;  // base discriminator
  };
  std::vector<Frame> frames;  // innermost first
  std::string symbol;         // containing ELF function symbol ("" if none)
  std::string bolt_name;
  uint64_t symbol_start = 0, symbol_size = 0;
  // Without a symbol (a stripped binary's static functions): the start of
  // the last .eh_frame FDE at or below it, the function as the unwinder
  // knows it, so that its addresses are counted as one; 0 if none.
  uint64_t unnamed_start = 0;
  // Before the line table's prologue_end of its function: code only the
  // backend emits (frame setup), which no IR instruction of a rebuild
  // carries, so a sample profile cannot place a sample there.
  bool prologue = false;
};

// The status of one binary, after the first look at it.
struct BinaryStatus {
  std::string problem;      // "" when it is usable
  std::string file;         // what is read for it
  std::string debug_file;   // separate DWARF, if any
  bool has_lines = false;
  bool has_symtab = false;  // `file` itself carries a .symtab
};

class Symbolizer {
 public:
  explicit Symbolizer(SymbolizerOptions opts = {});
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // Opens the binary once per build-id and says what was found.
  const BinaryStatus& Open(const BinaryRef& b);
  // The ELF virtual address at a file offset; false if no PT_LOAD maps it.
  bool ToVaddr(const BinaryRef& b, uint64_t file_offset, uint64_t* vaddr);
  // The inverse: the file offset of an ELF virtual address.
  bool ToOffset(const BinaryRef& b, uint64_t vaddr, uint64_t* file_offset);
  // Whether a file offset is outside every executable PT_LOAD segment of a
  // readable binary (false when the binary cannot be read: not known).
  bool NotCode(const BinaryRef& b, uint64_t file_offset);
  // Its PT_LOAD segments, in program-header order (empty if unusable).
  std::vector<ProfileBinary::Segment> Segments(const BinaryRef& b);
  // Resolves an ELF virtual address (cached per build-id and address).
  // nullptr if the binary is unusable.
  const AddressInfo* Lookup(const BinaryRef& b, uint64_t vaddr);
  // ELF virtual addresses in [start, start + size) where a row of the DWARF
  // line table begins (each a distinct line or discriminator there),
  // ascending; empty without line information.
  std::vector<uint64_t> LineAddresses(const BinaryRef& b, uint64_t start, uint64_t size);
  // Parses a /proc/kallsyms text for KernelName().
  void SetKallsyms(const std::string& text);
  // "name" or "name [module]" for a kernel address; "" if not covered.
  std::string KernelName(uint64_t addr) const;

 private:
  struct Module;
  Module* Get(const BinaryRef& b);
  SymbolizerOptions opts_;
  std::string debuginfo_path_;
  std::map<std::string, std::unique_ptr<Module>> modules_;  // by build-id (or path)
  std::vector<std::pair<uint64_t, std::string>> ksyms_;
};

// Kernel frames that the sched_switch probe adds above the thread's own:
// the JIT-ed program (which kallsyms does not list, so it resolves to
// whatever symbol precedes it), the tracepoint dispatcher and the
// tracepoint iterator. A stack taken there loses every frame up to the last
// of these among its first kProbeFramesMax (the probe's frames are always
// among the first few); stack_names.h and Symbolize() both drop them.
bool IsProbeFrame(const std::string& name);
inline constexpr size_t kProbeFramesMax = 6;

// Base discriminator of a DWARF line-table discriminator, as LLVM's
// DILocation::getBaseDiscriminatorFromDiscriminator decodes it (fs: the
// binary was built with flow-sensitive discriminators).
uint32_t BaseDiscriminator(uint32_t raw, bool fs);

// Symbolizes every sample. Problems with single binaries are recorded in
// Profile::binaries[i].problem, not returned: the rest is still useful.
Profile Symbolize(const SampleSet& set, Symbolizer& sym);

// Demangles an Itanium C++ name; other names come back unchanged.
std::string Demangle(const std::string& name);

}  // namespace syspgo
