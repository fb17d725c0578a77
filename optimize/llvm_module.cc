//===- llvm_module.cc - libsyspgo_llvm.so: syspgo's LLVM-using code -----===//
// Built as a MODULE library (see llvm_module.h for why and the interface).
// It writes LLVM sample profiles through LLVM's ProfileData library, from
// timer samples that carry a frame-pointer stack and no branch records (no
// LBR on this kind of machine). How the counts are made:
//
//  * Body samples (--sample-counts stacks; the ip modes count by blocks,
//    below): each sample's innermost user frame (its IP) adds its count at
//    (line offset, base discriminator) of the innermost inline frame,
//    nested under the inlined call sites of its inline chain; every
//    level's TOTAL grows by the count, as llvm-profgen --leading-ip-only
//    does (it sums a line's instructions in that mode, where with LBR it
//    takes their maximum). A line's count is therefore time spent on it
//    (executions times cost), not its execution count.
//  * Call sites: each caller frame (a return address; the call is the
//    instruction before it, so its line is looked up at address - 1) adds
//    the sample's count to the body count of the call's line and, as a call
//    target, to the callee the next frame is in. Without this the block
//    that calls a hot function would look cold to the compiler (it rarely
//    holds the IP itself), and it would be laid out, split or not inlined as
//    cold code. The count is time spent below the call, not calls made.
//    Each frame counts once per sample, so recursion does not multiply.
//  * Head samples: a function's head samples are the call-target counts
//    into it from sampled callers (again time, not entries).
//  * A leaf sample in a function's prologue (before the line table's
//    prologue_end), or at line 0, counts in the totals only: no IR line
//    holds it.
//  * Frames of other binaries are left out, except as call-target names.
//  * With ip_only (optimize --sample-counts ip-only) only the first rule
//    holds: no call-site counts, call targets or head samples, as
//    llvm-profgen --leading-ip-only writes.
//  * With ip_only and call_targets (--sample-counts ip, the default) the
//    line counts are those IP samples alone, and each call site of a
//    function (or inlined instance) that has IP samples also lists its
//    call targets from the stacks, as the second rule counts them, with two
//    exceptions: targets in other binaries, and the first caller frame of
//    a leaf in its prologue, whose frame is not set up yet, so that the
//    frame found is its caller's caller's. The targets change no block
//    count; they are what lets clang promote an indirect call to its hot
//    targets (SQLite's page-cache and sorter callbacks), which a profile
//    without them cannot do. A tail call shows the function jumped to in
//    place of the one called; at an indirect call, targets whose address
//    the program never takes are dropped (CallEvidence, AddCallTargets).
//  * Block estimates (both ip modes, when the binary's code can be read).
//    The sampled functions are disassembled and cut into basic blocks;
//    each instruction gets its block's IP samples divided by the block's
//    instruction count (EstimateBlocks), and a line's count is the largest
//    of its instructions', the rule llvm-profgen applies to LBR ranges. A
//    line then counts how often it ran (times its block's cost per
//    instruction) instead of how long: a long line no longer outweighs a
//    short one that runs as often, and the samples that skid onto one
//    instruction of a block are shared with the rest of it. Totals are the
//    same samples summed, and a call site's targets split its line's count,
//    so that a target's count is in the same units as the line that calls
//    it, in proportion to the calls each gets from there: the estimate of
//    the target's entry block (how often it was entered) times the share of
//    its time below calls that this call site holds. The stacks' time alone
//    would rank a cheap callback called often below a costly one called
//    rarely, and clang's indirect-call promotion goes by calls (SQLite's
//    sorter compares text less often than integers, but each compare costs
//    more). If a target's entry block has no estimate (no IP sample fell in
//    it), the site's targets split by time below. All counts are then in
//    hundredths of a sample (kBlockScale). On bench/pgo.py's evaluation
//    runs the block estimates took the instructions saved (cachegrind,
//    median of three training runs) from 6.1% to 8.6% on SQLite and from
//    3.2% to 4.3% on Lua, and the call-weighted targets SQLite's to 10.3%;
//    bench/RESULTS.md has the current figures.
#include "optimize/llvm_module.h"

#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstrAnalysis.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/ProfileData/SampleProf.h>
#include <llvm/ProfileData/SampleProfWriter.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace syspgo {
namespace {

using llvm::sampleprof::FunctionId;
using llvm::sampleprof::FunctionSamples;
using llvm::sampleprof::LineLocation;
using llvm::sampleprof::SampleContext;
using llvm::sampleprof::SampleProfileMap;

FunctionId Name(const Profile& p, const SourceFrame& f) { return FunctionId(p.functions[f.function].name); }

// Profile::Outermost, inline here: the module links no syspgo library.
const Function* Outermost(const Profile& p, const Location& l) {
  return l.frames.empty() ? nullptr : &p.functions[l.frames.back().function];
}

// The profile of the function or inlined instance `l` is in, if the IP
// samples made one; nullptr if not.
FunctionSamples* Existing(const Profile& p, SampleProfileMap& map, const Location& l) {
  auto top = map.find(SampleContext(Name(p, l.frames.back())));
  if (top == map.end()) return nullptr;
  FunctionSamples* fs = &top->second;
  for (size_t k = l.frames.size() - 1; fs && k > 0; --k) {
    const SourceFrame& site = l.frames[k];
    const auto* callees = fs->findFunctionSamplesMapAt(LineLocation(site.line_offset, site.discriminator));
    FunctionSamples* next = nullptr;
    if (callees) {
      auto it = callees->find(Name(p, l.frames[k - 1]));
      if (it != callees->end()) next = const_cast<FunctionSamples*>(&it->second);
    }
    fs = next;
  }
  return fs;
}

// The profile of the function or inlined instance `l` is in, made (with
// every level of its inline chain) if missing; `add_total` is applied to
// each level, outermost first.
template <typename AddTotal>
FunctionSamples* Create(const Profile& p, SampleProfileMap& map, const Location& l, AddTotal add_total) {
  FunctionSamples* fs = &map.create(SampleContext(Name(p, l.frames.back())));
  add_total(fs);
  for (size_t k = l.frames.size() - 1; k > 0; --k) {
    const SourceFrame& site = l.frames[k];
    FunctionId callee = Name(p, l.frames[k - 1]);
    FunctionSamples& in = fs->functionSamplesAt(LineLocation(site.line_offset, site.discriminator))[callee];
    in.setFunction(callee);
    add_total(&in);
    fs = &in;
  }
  return fs;
}

// The code of the profiled binary, read once for the block estimates and
// the call evidence: the object file and its executable sections.
struct BinaryCode {
  std::unique_ptr<llvm::object::OwningBinary<llvm::object::ObjectFile>> file;
  std::vector<std::pair<uint64_t, llvm::ArrayRef<uint8_t>>> text;  // section address, contents
  std::string error;  // why the code cannot be read; "" when it can
  const llvm::object::ObjectFile* object() const { return file ? file->getBinary() : nullptr; }
};

BinaryCode ReadCode(const Profile& p, uint32_t binary) {
  BinaryCode code;
  const ProfileBinary& b = p.binaries[binary];
  if (b.code_file.empty()) {
    code.error = "the code of " + b.ref.path + " is not at hand (only its debug file " + b.debug_file + " was found)";
    return code;
  }
  auto owning = llvm::object::ObjectFile::createObjectFile(b.code_file);
  if (!owning) {
    code.error = "cannot read " + b.code_file + ": " + llvm::toString(owning.takeError());
    return code;
  }
  code.file = std::make_unique<llvm::object::OwningBinary<llvm::object::ObjectFile>>(std::move(*owning));
  for (const llvm::object::SectionRef& sec : code.object()->sections()) {
    if (!sec.isText()) continue;
    auto contents = sec.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      continue;
    }
    code.text.push_back({sec.getAddress(), llvm::arrayRefFromStringRef(*contents)});
  }
  return code;
}

// What the binary says about its calls, for the call targets: which
// functions have their address taken (only those can be called through a
// pointer), and whether the call before a return address is direct.
// Filled only for x86-64 ELF that kept its code's relocations (linked with
// --emit-relocs, as syspgo pgo and BOLT want); otherwise `known` is false
// and nothing is filtered.
class CallEvidence {
 public:
  CallEvidence(const Profile& p, uint32_t binary, const BinaryCode& code) : text_(code.text) {
    const auto* elf = llvm::dyn_cast_or_null<llvm::object::ELFObjectFileBase>(code.object());
    if (!elf || elf->getArch() != llvm::Triple::x86_64) return;
    std::unordered_set<uint64_t> starts;
    for (const Symbol& sym : p.symbols)
      if (sym.binary == binary) starts.insert(sym.start);
    for (const llvm::object::SectionRef& sec : elf->sections()) {
      auto relocated = sec.getRelocatedSection();
      if (!relocated) {
        llvm::consumeError(relocated.takeError());
        continue;
      }
      if (*relocated == elf->section_end()) continue;  // not a relocation section
      // Dynamic relocations apply to no one section (index 0); the others
      // to their section. Unwind tables and debug info name every function
      // and take no address the program uses.
      bool dynamic = (*relocated)->getIndex() == 0;
      if (!dynamic) {
        llvm::object::ELFSectionRef target(**relocated);
        auto name = (*relocated)->getName();
        if (!name) {
          llvm::consumeError(name.takeError());
          continue;
        }
        if (!(target.getFlags() & llvm::ELF::SHF_ALLOC) || name->starts_with(".eh_frame")) continue;
        if (target.getFlags() & llvm::ELF::SHF_EXECINSTR) known = true;
      }
      for (const llvm::object::RelocationRef& r : sec.relocations()) {
        uint64_t type = r.getType();
        if (type == llvm::ELF::R_X86_64_PLT32) continue;  // call or jmp: a direct transfer
        auto addend = llvm::object::ELFRelocationRef(r).getAddend();
        if (!addend) {
          llvm::consumeError(addend.takeError());
          continue;
        }
        uint64_t at = static_cast<uint64_t>(*addend);
        if (type != llvm::ELF::R_X86_64_RELATIVE) {
          llvm::object::symbol_iterator sym = r.getSymbol();
          if (sym == elf->symbol_end()) continue;
          auto value = sym->getValue();
          if (!value) {
            llvm::consumeError(value.takeError());
            continue;
          }
          at += *value;
        }
        // PC-relative references (lea f(%rip)) carry -4 for the rest of
        // the instruction.
        for (uint64_t a : {at, at + 4})
          if (starts.count(a)) taken_.insert(a);
      }
    }
  }

  bool known = false;
  bool AddressTaken(uint64_t start) const { return taken_.count(start) > 0; }

  // Whether the instruction ending at `ret` is a direct call (e8 rel32)
  // into this binary's code.
  bool DirectCallBefore(uint64_t ret) const {
    for (const auto& [addr, data] : text_) {
      if (ret < addr + 5 || ret > addr + data.size()) continue;
      const uint8_t* insn = data.data() + (ret - 5 - addr);
      if (insn[0] != 0xe8) return false;
      int32_t rel = static_cast<int32_t>(insn[1] | insn[2] << 8 | insn[3] << 16 | static_cast<uint32_t>(insn[4]) << 24);
      uint64_t to = ret + static_cast<uint64_t>(static_cast<int64_t>(rel));
      for (const auto& [a2, d2] : text_)
        if (to >= a2 && to < a2 + d2.size()) return true;
      return false;
    }
    return false;
  }

 private:
  const std::vector<std::pair<uint64_t, llvm::ArrayRef<uint8_t>>>& text_;  // BinaryCode::text
  std::unordered_set<uint64_t> taken_;
};

// --sample-counts ip's call targets (see the file comment). `entries`:
// each function's start address -> its entry block's estimate (empty
// without block estimates: the targets then split by time below).
void AddCallTargets(const Profile& p, uint32_t binary, const BinaryCode& code, SampleProfileMap& map, uint64_t scale,
                    const std::unordered_map<uint64_t, double>& entries) {
  CallEvidence evidence(p, binary, code);
  std::map<std::tuple<FunctionSamples*, uint32_t, uint32_t>, std::map<const Function*, uint64_t>> sites;
  std::map<const Function*, uint64_t> below_all;   // time below every call into it
  std::map<const Function*, uint64_t> entry_of;    // its symbol's start
  std::set<std::tuple<FunctionSamples*, uint32_t, uint32_t>> indirect;  // sites with an indirect call
  for (const ProfileSample& s : p.samples) {
    std::set<uint32_t> seen;  // caller frames count once per sample
    for (size_t i = s.first_user + 1; i < s.stack.size(); ++i) {
      const Location& l = p.locations[s.stack[i]];
      if (l.binary != binary || !l.has_line() || !seen.insert(s.stack[i]).second) continue;
      const Location& below = p.locations[s.stack[i - 1]];
      const Function* callee = Outermost(p, below);
      if (!callee || callee->binary != binary) continue;
      if (i == s.first_user + 1 && (below.prologue || below.return_address)) continue;
      below_all[callee] += s.count;
      if (below.symbol >= 0) entry_of[callee] = p.symbols[below.symbol].start;
      FunctionSamples* fs = Existing(p, map, l);
      if (!fs) continue;
      std::tuple<FunctionSamples*, uint32_t, uint32_t> key{fs, l.frames[0].line_offset, l.frames[0].discriminator};
      sites[key][callee] += s.count * scale;
      if (evidence.known && l.return_address && !evidence.DirectCallBefore(l.address)) indirect.insert(key);
    }
  }
  for (auto& [key, targets] : sites) {
    auto [fs, line, disc] = key;
    // At an indirect call, a function whose address the program never
    // takes is no target: it was reached by a tail call from the real one,
    // whose frame it replaced. clang promotes a site's targets in count
    // order and stops at the first whose type does not fit the call, so
    // such a name ahead of a real target kept that one from promotion
    // (SQLite's sorter: sqlite3VdbeRecordCompareWithSkip, jumped to from
    // vdbeSorterCompare, ahead of vdbeSorterCompareText).
    if (indirect.count(key))
      for (auto it = targets.begin(); it != targets.end();) {
        auto e = entry_of.find(it->first);
        if (e != entry_of.end() && !evidence.AddressTaken(e->second)) it = targets.erase(it);
        else ++it;
      }
    // Each target's share: its calls from here, where every target's entry
    // block has an estimate; else its time below the call.
    std::map<const Function*, double> weight;
    bool all = !entries.empty();
    for (const auto& [callee, n] : targets) {
      auto e = entry_of.find(callee);
      auto est = e == entry_of.end() ? entries.end() : entries.find(e->second);
      if (est == entries.end() || est->second <= 0) {
        all = false;
        break;
      }
      weight[callee] = est->second * double(n) / double(below_all[callee] * scale);
    }
    if (!all) {
      weight.clear();
      for (const auto& [callee, n] : targets) weight[callee] = double(n);
    }
    double sum = 0;
    for (const auto& [callee, w] : weight) sum += w;
    uint64_t body = 0;
    if (auto found = fs->findSamplesAt(line, disc)) body = *found;
    for (const auto& [callee, n] : targets) {
      uint64_t c = n;
      if (body > 0 && sum > 0) c = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(double(body) * weight[callee] / sum)));
      fs->addCalledTargetSamples(line, disc, FunctionId(callee->name), c);
    }
  }
}


// ===--- Block estimates ------------------------------------------------=== //

// One instruction of a sampled function, with the samples its basic block
// spreads over it.
struct Insn {
  uint64_t address = 0;
  double estimate = 0;
};

// Disassembles every sampled function symbol of `binary` and splits it into
// basic blocks (a block ends at a branch or return and begins at a branch
// target). Each instruction gets its block's IP samples divided by the
// block's instruction count: every instruction of a block runs as often as
// the others, so that is the block's execution count in sampling units
// (times the block's mean cost per instruction), where a line's own samples
// also grow with its instruction count and the skid of the timer
// interrupt. `entries` gets each function's start address -> its entry
// block's estimate (how often it was entered). Returns "" on success, else
// why the binary could not be read (the caller then counts lines by their
// samples).
std::string EstimateBlocks(const Profile& p, uint32_t binary, const BinaryCode& code, std::vector<Insn>* out,
                           std::unordered_map<uint64_t, double>* entries) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllDisassemblers();
  });
  if (!code.object()) return code.error;
  llvm::Triple triple = code.object()->makeTriple();
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple.str(), err);
  if (!target) return "no disassembler for " + triple.str() + ": " + err;
  std::unique_ptr<llvm::MCRegisterInfo> mri(target->createMCRegInfo(triple.str()));
  llvm::MCTargetOptions options;
  std::unique_ptr<llvm::MCAsmInfo> mai(mri ? target->createMCAsmInfo(*mri, triple.str(), options) : nullptr);
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple.str(), "", ""));
  std::unique_ptr<llvm::MCInstrInfo> mii(target->createMCInstrInfo());
  if (!mri || !mai || !sti || !mii) return "no disassembler for " + triple.str();
  llvm::MCContext ctx(triple, mai.get(), mri.get(), sti.get());
  std::unique_ptr<llvm::MCDisassembler> dis(target->createMCDisassembler(*sti, ctx));
  std::unique_ptr<llvm::MCInstrAnalysis> mia(target->createMCInstrAnalysis(mii.get()));
  if (!dis || !mia) return "no disassembler for " + triple.str();

  std::unordered_map<uint64_t, double> leaf;  // IP -> samples
  for (const ProfileSample& s : p.samples) {
    if (!s.UserIp(s.first_user)) continue;
    const Location& l = p.locations[s.stack[s.first_user]];
    if (l.binary == binary) leaf[l.address] += static_cast<double>(s.count);
  }
  std::set<std::pair<uint64_t, uint64_t>> symbols;
  for (const Symbol& sym : p.symbols)
    if (sym.binary == binary && sym.size > 0) symbols.insert({sym.start, sym.size});
  const auto& text = code.text;
  uint64_t end_of_last = 0;
  for (const auto& [start, size] : symbols) {
    if (start < end_of_last) continue;  // an alias, or nested in the previous symbol
    const llvm::ArrayRef<uint8_t>* bytes = nullptr;
    uint64_t base = 0;
    for (const auto& [addr, data] : text)
      if (start >= addr && start + size <= addr + data.size()) bytes = &data, base = addr;
    if (!bytes) continue;
    end_of_last = start + size;
    struct Decoded {
      uint64_t address;
      bool ends_block;
    };
    std::vector<Decoded> insns;
    std::set<uint64_t> leaders = {start};
    for (uint64_t a = start; a < start + size;) {
      llvm::MCInst inst;
      uint64_t len = 0;
      auto status = dis->getInstruction(inst, len, bytes->slice(a - base, start + size - a), a, llvm::nulls());
      if (status != llvm::MCDisassembler::Success || len == 0) {
        insns.push_back({a, true});  // not code we can read: a block of its own
        leaders.insert(a + 1);
        a += 1;
        continue;
      }
      const llvm::MCInstrDesc& desc = mii->get(inst.getOpcode());
      bool ends = desc.isBranch() || desc.isReturn() || desc.isIndirectBranch() || desc.isBarrier() || desc.isTrap();
      uint64_t to = 0;
      if (desc.isBranch() && mia->evaluateBranch(inst, a, len, to) && to >= start && to < start + size)
        leaders.insert(to);
      insns.push_back({a, ends});
      a += len;
      if (ends) leaders.insert(a);
    }
    for (size_t i = 0; i < insns.size();) {
      size_t j = i + 1;
      while (j < insns.size() && !leaders.count(insns[j].address)) ++j;
      double samples = 0;
      for (size_t k = i; k < j; ++k) {
        auto it = leaf.find(insns[k].address);
        if (it != leaf.end()) samples += it->second;
      }
      double per = samples / static_cast<double>(j - i);
      for (size_t k = i; k < j; ++k) out->push_back({insns[k].address, per});
      if (i == 0) (*entries)[start] = per;
      i = j;
    }
  }
  return "";
}

// Counts are multiplied by this when the lines are counted from block
// estimates, which are fractions of a sample: integer counts keep two
// digits of them.
constexpr uint64_t kBlockScale = 100;

// Returns "" on success, else the error message. `note` says why lines
// were counted by their own samples when block estimates were wanted.
std::string Write(const Profile& p, uint32_t binary, const std::string& path, bool extbinary, bool ip_only,
                  bool call_targets, std::string* note) {
  const ProfileBinary& b = p.binaries[binary];
  SampleProfileMap map;
  uint64_t used = 0;
  // IP counts come from block estimates where the code can be read; every
  // count (totals and call targets too) is then in kBlockScale units.
  std::vector<Insn> insns;
  std::unordered_map<uint64_t, double> entries;  // function start -> its entry block's estimate
  BinaryCode code;
  if (ip_only) {
    code = ReadCode(p, binary);
    *note = EstimateBlocks(p, binary, code, &insns, &entries);
    if (!note->empty()) insns.clear(), entries.clear();
  }
  const uint64_t scale = insns.empty() ? 1 : kBlockScale;
  std::set<uint64_t> covered;
  for (const Insn& in : insns) covered.insert(in.address);
  for (const ProfileSample& s : p.samples) {
    std::set<uint32_t> seen;  // caller frames count once per sample
    for (size_t i = s.first_user; i < s.stack.size(); ++i) {
      if (ip_only && i > s.first_user) break;
      const Location& l = p.locations[s.stack[i]];
      if (l.binary != binary || l.frames.empty()) continue;
      bool leaf = s.UserIp(i);
      if (leaf && covered.count(l.address)) {
        if (l.has_line()) used += s.count;
        continue;
      }
      if (!l.has_line()) {
        // Line 0: code the compiler made for no one source line (Lua's
        // computed-goto dispatch is 28% of its samples). No line holds the
        // sample, but it is time in the function, and its total counts it,
        // as llvm-profgen's does; left out, the interpreter loop looked a
        // third as hot as it is.
        if (leaf) map.create(SampleContext(Name(p, l.frames.back()))).addTotalSamples(s.count * scale);
        continue;
      }
      if (ip_only && !leaf) break;  // IP samples only: callers add nothing
      if (!leaf && !seen.insert(s.stack[i]).second) continue;
      used += leaf ? s.count : 0;
      FunctionSamples* fs = Create(p, map, l, [&](FunctionSamples* level) { level->addTotalSamples(s.count * scale); });
      const SourceFrame& f = l.frames[0];
      // A prologue's samples stay in the totals but on no line: no IR
      // instruction of the rebuild carries the prologue's line, and clang
      // would count them as a profile that no longer matches.
      if (!(leaf && l.prologue)) fs->addBodySamples(f.line_offset, f.discriminator, s.count * scale);
      if (i == s.first_user) continue;  // kernel-mode sample: where it entered the kernel, no user callee
      const Function* callee = Outermost(p, p.locations[s.stack[i - 1]]);
      if (!callee) continue;
      fs->addCalledTargetSamples(f.line_offset, f.discriminator, FunctionId(callee->name), s.count);
      if (callee->binary == binary && p.locations[s.stack[i - 1]].has_line())
        map.create(SampleContext(FunctionId(callee->name))).addHeadSamples(s.count);
    }
  }
  if (!insns.empty()) {
    // Every instruction's row: the sampled addresses and the other rows.
    std::vector<std::pair<uint64_t, uint32_t>> rows;
    for (uint32_t id : p.unsampled)
      if (p.locations[id].binary == binary) rows.push_back({p.locations[id].address, id});
    for (const ProfileSample& s : p.samples) {
      if (s.first_user >= s.stack.size()) continue;
      const Location& l = p.locations[s.stack[s.first_user]];
      if (l.binary == binary && !l.return_address) rows.push_back({l.address, s.stack[s.first_user]});
    }
    std::sort(rows.begin(), rows.end());
    std::map<FunctionSamples*, double> totals;
    std::map<std::tuple<FunctionSamples*, uint32_t, uint32_t>, double> bodies;
    for (const Insn& in : insns) {
      auto it = std::upper_bound(rows.begin(), rows.end(), std::make_pair(in.address, UINT32_MAX));
      if (it == rows.begin()) continue;
      const Location& l = p.locations[std::prev(it)->second];
      if (l.frames.empty()) continue;
      if (!l.has_line()) {
        if (in.estimate > 0) totals[&map.create(SampleContext(Name(p, l.frames.back())))] += in.estimate;
        continue;
      }
      FunctionSamples* fs = in.estimate > 0
                                ? Create(p, map, l, [&](FunctionSamples* level) { totals[level] += in.estimate; })
                                : Existing(p, map, l);
      if (!fs) continue;
      if (l.prologue) continue;
      double& b = bodies[{fs, l.frames[0].line_offset, l.frames[0].discriminator}];
      b = std::max(b, in.estimate);
    }
    for (const auto& [fs, t] : totals) fs->addTotalSamples(static_cast<uint64_t>(std::llround(t * scale)));
    for (const auto& [key, b] : bodies)
      std::get<0>(key)->addBodySamples(std::get<1>(key), std::get<2>(key), static_cast<uint64_t>(std::llround(b * scale)));
  }
  // Zero counts: the other lines of every function with samples, so the
  // compiler sees them as not executed rather than unknown (what an
  // instrumented profile says of them, and what llvm-profgen writes). Only
  // functions (and inlined call sites) that already have samples get them:
  // a zero call site must not make an unsampled inlinee look hot or cold.
  for (uint32_t id : p.unsampled) {
    const Location& l = p.locations[id];
    if (l.binary != binary || !l.has_line()) continue;
    FunctionSamples* fs = Existing(p, map, l);
    // Offset 0 is the function's own line: the prologue, which the
    // backend makes, so no IR instruction carries it.
    if (fs && l.frames[0].line_offset != 0) fs->addBodySamples(l.frames[0].line_offset, l.frames[0].discriminator, 0);
  }
  if (ip_only && call_targets) AddCallTargets(p, binary, code, map, scale, entries);
  if (map.empty() || used == 0)
    return "no sample of the run has its innermost frame in " + b.ref.path +
           " at a known source line; nothing to write. Was it running during the collection?";
  auto w = llvm::sampleprof::SampleProfileWriter::create(
      path, extbinary ? llvm::sampleprof::SPF_Ext_Binary : llvm::sampleprof::SPF_Text);
  if (!w) return "cannot create '" + path + "': " + w.getError().message() + ".";
  if (std::error_code ec = (*w)->write(map))
    return "cannot write the sample profile '" + path + "': " + ec.message() + ".";
  return "";
}

}  // namespace
}  // namespace syspgo

extern "C" __attribute__((visibility("default"))) void syspgo_llvm_write_sample_profile(const void* request,
                                                                                         void* result) {
  const auto& req = *static_cast<const syspgo::LlvmSampleProfileRequest*>(request);
  auto& res = *static_cast<syspgo::LlvmSampleProfileResult*>(result);
  if (req.abi_version != syspgo::kSyspgoLlvmAbiVersion) {
    // Do not touch the other fields: their layout may differ.
    res.ok = false;
    res.error = "syspgo's LLVM module libsyspgo_llvm.so is from another build of syspgo (interface version " +
                std::to_string(syspgo::kSyspgoLlvmAbiVersion) + ", syspgo uses " +
                std::to_string(req.abi_version) + "): reinstall/rebuild syspgo.";
    return;
  }
  res.error = syspgo::Write(*req.profile, req.binary, *req.path, req.extbinary, req.ip_only, req.call_targets,
                            &res.note);
  res.ok = res.error.empty();
}
