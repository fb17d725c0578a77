//===- sample_set.h - CPU samples as analyses and emitters see them ------===//
// The in-memory model every profile consumer is built on, so none of them
// reads the database: SampleSet holds raw stacks (user frames as binary +
// file offset, kernel frames as addresses) with counts, as loaded from one
// run or merged from many; Profile is the same samples after symbolization,
// with each distinct address resolved once into a Location (ELF symbol,
// inline chain, line offsets, discriminators). Only sample_db.cc knows how
// the database stores samples, and only sample_pprof.cc how a pprof profile
// does; a change of either format stays in its file.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/result.h"

namespace syspgo {

inline constexpr uint32_t kNoBinary = 0xffffffffu;  // anonymous memory, JIT code, unknown mapping

// A file that was mapped executable, identified by its GNU build-id.
struct BinaryRef {
  std::string path;      // as the run saw it (absolute in the process's mount namespace)
  std::string build_id;  // lowercase hex; "" if the collector could not read one
};

struct UserFrame {
  uint32_t binary = kNoBinary;  // -> SampleSet::binaries
  uint64_t offset = 0;          // file offset in that binary; the raw address when binary == kNoBinary
  bool operator==(const UserFrame&) const = default;
  auto operator<=>(const UserFrame&) const = default;
};

struct StackSample {
  uint32_t pid = 0;
  bool kernel_mode = false;        // the sample interrupted kernel code (user[0] is then where it entered)
  std::vector<UserFrame> user;     // innermost first; user[0] is the interrupted IP in user mode
  std::vector<uint64_t> kernel;    // kernel addresses, innermost first
  uint64_t count = 0;              // samples with exactly this stack (after weighting)
};

struct SampleSet {
  std::vector<BinaryRef> binaries;
  std::vector<StackSample> samples;
  // Off-CPU time by stack, as StackSamples whose count is nanoseconds (the
  // sched group's intervals, or a pprof profile's off_cpu values). Kept
  // apart from `samples` so that no CPU-sample consumer can mistake time
  // asleep for time on the CPU; only the pprof emitter writes it, and it is
  // loaded only for it.
  std::vector<StackSample> offcpu;
  std::map<uint32_t, std::string> comm;  // pid -> task name
  // /proc/kallsyms text of the run, or for a pprof profile "ADDR t NAME"
  // lines naming exactly its sampled kernel addresses ("" if none).
  std::string kallsyms;
  std::string kernel_build_id;           // GNU build-id of the kernel that ran, lowercase hex ("" unknown)
  uint64_t period_ns = 0;                // sampling period (1e9 / frequency); 0 unknown
  std::vector<int64_t> runs;             // runs that went in (for messages)
  std::vector<std::string> pprof_files;  // pprof profiles that went in (for messages)

  uint64_t Total() const;
  // Index of a binary by build-id (or by path when both have no build-id); adds it if new.
  uint32_t InternBinary(const BinaryRef& b);
  // Adds `other`'s samples with their counts multiplied by `weight`, matching
  // binaries by build-id, then folds identical stacks together.
  void Merge(const SampleSet& other, uint64_t weight);
  // Folds identical (pid, mode, stack) entries together and sorts them, so
  // every consumer sees the same order for the same samples (off-CPU too).
  void Normalize();
  // Keeps only samples of process `pid` (off-CPU too).
  void KeepPid(uint32_t pid);
};

// Which recorded binary `path` is, by its build-id now (by path only when
// neither has one). Errors tell apart a binary the profile never saw
// mapped and one rebuilt since (same path, other build-id), and say how to
// get a matching profile.
Result<uint32_t> FindBinary(const SampleSet& set, const std::string& path);

// Reads the GNU build-id note of an ELF file (lowercase hex); "" if it has none.
Result<std::string> ReadBuildId(const std::string& path);

// A function of an ELF file's symbol table, where its code lies in the file.
struct ElfFunction {
  std::string name;     // as the symbol table has it (mangled): what a linker's ordering file names
  uint64_t offset = 0;  // file offset of its first byte (through the PT_LOAD that maps it)
  uint64_t size = 0;    // bytes (st_size)
};
// The sized STT_FUNC symbols of `path`'s .symtab (its .dynsym when it was
// stripped), by file offset; a symbol no PT_LOAD maps is left out.
Result<std::vector<ElfFunction>> ReadElfFunctions(const std::string& path);

// ===--- After symbolization -------------------------------------------=== //

inline constexpr uint32_t kKernelBinary = 0xfffffffeu;  // Location::binary of kernel addresses

// One source-level frame at an address: the innermost is the code that
// executes there, each further one the function it was inlined into.
struct SourceFrame {
  uint32_t function = 0;       // -> Profile::functions
  uint32_t line = 0;           // absolute source line; 0 unknown
  uint32_t line_offset = 0;    // (line - the function's DW_AT_decl_line) as an unsigned 16-bit value
  uint32_t discriminator = 0;  // base discriminator (decoded from the line table's encoding)
};

struct Function {
  std::string name;     // linkage (mangled) name as the compiler and linker know it
  std::string display;  // demangled, for people
  std::string file;     // source file of its definition ("" unknown)
  uint32_t binary = kNoBinary;
};

// An ELF function symbol that contains sampled addresses.
struct Symbol {
  std::string name;       // as in the symbol table
  std::string bolt_name;  // as llvm-bolt names it (locals get "/N")
  uint64_t start = 0, size = 0;  // ELF virtual address and st_size
  uint32_t binary = kNoBinary;
};

struct Location {
  uint32_t binary = kNoBinary;  // -> Profile::binaries, kKernelBinary, or kNoBinary
  uint64_t address = 0;         // ELF virtual address (user), kernel address, or raw address (kNoBinary)
  // The file offset it came from (UserFrame::offset); equal to `address`
  // where the binary could not be read to turn it into an ELF address.
  uint64_t offset = 0;
  bool return_address = false;  // a caller frame: the call is the instruction before `address`
  bool prologue = false;        // in its function's prologue (AddressInfo::prologue)
  int32_t symbol = -1;          // -> Profile::symbols; -1 if no symbol covers it
  uint64_t unnamed_start = 0;   // without a symbol: its function's start (AddressInfo::unnamed_start)
  std::vector<SourceFrame> frames;  // innermost first; empty if nothing is known but the symbol
  bool has_line() const { return !frames.empty() && frames[0].line != 0; }
};

struct ProfileSample {
  uint32_t pid = 0;
  std::vector<uint32_t> stack;  // -> Profile::locations, innermost first: kernel frames, then user frames
  uint32_t first_user = 0;      // index in stack of the first user frame (== stack.size() if none)
  // The sample interrupted kernel code: stack[first_user] is where the
  // thread entered the kernel (a return address after a system call, the
  // exact IP of a fault or interrupt), time spent there, not a user IP sample.
  bool kernel_mode = false;
  uint64_t count = 0;
  // stack[i] is an interrupted user IP: the first user frame of a sample
  // taken in user mode (never a return address). Block estimates, line
  // counts and symbol weights count only these.
  bool UserIp(size_t i) const { return i == first_user && !kernel_mode && first_user < stack.size(); }
};

struct ProfileBinary {
  BinaryRef ref;
  std::string problem;        // why it could not be (fully) symbolized; "" when fine
  bool has_lines = false;     // DWARF line info found (in it or a debug file)
  bool has_symtab = false;    // the file itself has a .symtab (what BOLT and the linker read)
  std::string debug_file;     // where its DWARF came from, if not the binary itself
  std::string code_file;      // the file its code was read from (build-id matched); "" if only its debug file was found
  uint64_t samples = 0;       // samples with a frame in it
  // Its PT_LOAD segments (empty if it could not be read): what a consumer
  // that wants a runtime-style mapping (start, limit, file offset) needs.
  struct Segment {
    uint64_t vaddr = 0, offset = 0, filesz = 0;
  };
  std::vector<Segment> loads;
};

struct Profile {
  std::vector<ProfileBinary> binaries;  // same indices as the SampleSet's
  std::vector<Function> functions;
  std::vector<Symbol> symbols;
  std::vector<Location> locations;
  std::vector<ProfileSample> samples;
  // Off-CPU time by stack (SampleSet::offcpu), count in nanoseconds; its
  // locations are among `locations`, and nothing in `binaries` or `total`
  // counts it.
  std::vector<ProfileSample> offcpu;
  // Code addresses (line-table rows) of the sampled functions that no
  // sample hit, as locations: a sample profile lists their lines with 0
  // samples, so the compiler knows them cold rather than unknown. Rows of
  // line 0 are here too (they have no has_line()): with the sampled
  // addresses they give every instruction of those functions its row.
  std::vector<uint32_t> unsampled;
  std::map<uint32_t, std::string> comm;
  std::string kernel_build_id;
  uint64_t period_ns = 0;
  uint64_t total = 0;             // samples
  uint64_t user_with_line = 0;    // samples whose innermost user frame resolved to a source line

  // Name of the outermost source function at a location ("" if unknown):
  // the function a call into this frame entered.
  const Function* Outermost(const Location& l) const;
  // A readable name for any location: the innermost function, the symbol,
  // or "binary+0xoffset".
  std::string DisplayName(const Location& l) const;
  std::string BinaryName(uint32_t binary) const;
};

}  // namespace syspgo
