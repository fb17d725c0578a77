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
//    runs the block estimates and the call-weighted targets raised the
//    instructions saved; bench/RESULTS.md has the figures.
//  * Keys: lines, by default; calling contexts too (--profile-kind cs,
//    "Calling contexts" below); or pseudo-probes instead of lines
//    (--profile-kind probe, "Pseudo-probes" below), on the same block
//    estimates and call targets.
#include "optimize/llvm_module.h"

#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstrAnalysis.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCPseudoProbe.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/ProfileData/SampleProf.h>
#include <llvm/ProfileData/SampleProfWriter.h>
#include <llvm/Support/MD5.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace syspgo {
namespace {

using llvm::sampleprof::FunctionId;
using llvm::sampleprof::FunctionSamples;
using llvm::sampleprof::FunctionSamplesMap;
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

// The calls of the stacks, with the same filters everywhere: for each
// caller frame i of a sample in `binary` at a known line (any line, when
// not `by_line`: the probe-keyed profile finds its call sites by address),
// once per sample, fn(sample, i, callee) with the callee's function index,
// if the callee is in `binary` and the frame is its real caller (a leaf in
// its prologue has not set up its frame yet: the frame found is its
// caller's caller's).
template <typename Fn>
void ForEachCall(const Profile& p, uint32_t binary, bool by_line, Fn fn) {
  for (const ProfileSample& s : p.samples) {
    std::set<uint32_t> seen;  // caller frames count once per sample
    for (size_t i = s.first_user + 1; i < s.stack.size(); ++i) {
      const Location& l = p.locations[s.stack[i]];
      if (l.binary != binary || l.frames.empty() || (by_line && !l.has_line()) || !seen.insert(s.stack[i]).second)
        continue;
      const Location& below = p.locations[s.stack[i - 1]];
      const Function* callee = Outermost(p, below);
      if (!callee || callee->binary != binary) continue;
      if (i == s.first_user + 1 && (below.prologue || below.return_address)) continue;
      fn(s, i, static_cast<uint32_t>(callee - p.functions.data()));
    }
  }
}

// What the call targets are weighted by, from every sample of the binary:
// when the profile is built in parts (one per calling context), a part
// sees only its own calls.
struct CallWeights {
  bool by_line = true;  // callers at a known line only (ForEachCall)
  std::unique_ptr<CallEvidence> evidence;
  std::unordered_map<uint64_t, double> entries;  // function start -> its entry block's estimate; empty: by time below
  std::unordered_map<uint32_t, uint64_t> below;     // function index -> time below every call into it
  std::unordered_map<uint32_t, uint64_t> entry_of;  // function index -> its symbol's start
};

// `code` must outlive the weights (their evidence reads it).
CallWeights MakeCallWeights(const Profile& p, uint32_t binary, const BinaryCode& code,
                            std::unordered_map<uint64_t, double> entries, bool by_line) {
  CallWeights w;
  w.by_line = by_line;
  w.evidence = std::make_unique<CallEvidence>(p, binary, code);
  w.entries = std::move(entries);
  ForEachCall(p, binary, by_line, [&](const ProfileSample& s, size_t i, uint32_t callee) {
    w.below[callee] += s.count;
    const Location& below = p.locations[s.stack[i - 1]];
    if (below.symbol >= 0) w.entry_of[callee] = p.symbols[below.symbol].start;
  });
  return w;
}

// A call site of the profile: the profile of the function (or inlined
// instance) that calls, the call's key in it (line offset and
// discriminator, or probe id and discriminator), and the count of the code
// that calls, which its targets share.
using CallSite = std::tuple<FunctionSamples*, uint32_t, uint32_t, uint64_t>;
// The call site of a caller frame, if the IP samples made its profile.
using CallSiteOf = std::function<std::optional<CallSite>(const Location&)>;

// A caller frame's call site by its line.
CallSiteOf LineSites(const Profile& p, SampleProfileMap& map) {
  return [&p, &map](const Location& l) -> std::optional<CallSite> {
    FunctionSamples* fs = Existing(p, map, l);
    if (!fs) return std::nullopt;
    const SourceFrame& f = l.frames[0];
    auto body = fs->findSamplesAt(f.line_offset, f.discriminator);
    return CallSite{fs, f.line_offset, f.discriminator, body ? *body : 0};
  };
}

// --sample-counts ip's call targets (see the file comment), weighted by `w`,
// at the call sites `site_of` finds.
void AddCallTargets(const Profile& p, uint32_t binary, const CallWeights& w, const CallSiteOf& site_of,
                    uint64_t scale) {
  const CallEvidence& evidence = *w.evidence;
  const auto& entries = w.entries;
  std::map<CallSite, std::map<uint32_t, uint64_t>> sites;
  std::set<CallSite> indirect;  // sites with an indirect call
  ForEachCall(p, binary, w.by_line, [&](const ProfileSample& s, size_t i, uint32_t callee) {
    const Location& l = p.locations[s.stack[i]];
    std::optional<CallSite> found = site_of(l);
    if (!found) return;
    const CallSite& key = *found;
    sites[key][callee] += s.count * scale;
    if (evidence.known && l.return_address && !evidence.DirectCallBefore(l.address)) indirect.insert(key);
  });
  for (auto& [key, targets] : sites) {
    auto [fs, line, disc, body] = key;
    // At an indirect call, a function whose address the program never
    // takes is no target: it was reached by a tail call from the real one,
    // whose frame it replaced. clang promotes a site's targets in count
    // order and stops at the first whose type does not fit the call, so
    // such a name ahead of a real target kept that one from promotion
    // (SQLite's sorter: sqlite3VdbeRecordCompareWithSkip, jumped to from
    // vdbeSorterCompare, ahead of vdbeSorterCompareText).
    if (indirect.count(key))
      for (auto it = targets.begin(); it != targets.end();) {
        auto e = w.entry_of.find(it->first);
        if (e != w.entry_of.end() && !evidence.AddressTaken(e->second)) it = targets.erase(it);
        else ++it;
      }
    // Each target's share: its calls from here, where every target's entry
    // block has an estimate; else its time below the call.
    std::map<uint32_t, double> weight;
    bool all = !entries.empty();
    for (const auto& [callee, n] : targets) {
      auto e = w.entry_of.find(callee);
      auto est = e == w.entry_of.end() ? entries.end() : entries.find(e->second);
      auto below = w.below.find(callee);
      if (est == entries.end() || est->second <= 0 || below == w.below.end()) {
        all = false;
        break;
      }
      weight[callee] = est->second * double(n) / double(below->second * scale);
    }
    if (!all) {
      weight.clear();
      for (const auto& [callee, n] : targets) weight[callee] = double(n);
    }
    double sum = 0;
    for (const auto& [callee, x] : weight) sum += x;
    for (const auto& [callee, n] : targets) {
      uint64_t c = n;
      if (body > 0 && sum > 0) c = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(double(body) * weight[callee] / sum)));
      fs->addCalledTargetSamples(line, disc, FunctionId(p.functions[callee].name), c);
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

// What disassembles one target's code (the LLVM objects refer to each
// other: they are made, and go, together).
struct Disassembler {
  std::unique_ptr<llvm::MCRegisterInfo> mri;
  std::unique_ptr<llvm::MCAsmInfo> mai;
  std::unique_ptr<llvm::MCSubtargetInfo> sti;
  std::unique_ptr<llvm::MCInstrInfo> mii;
  std::unique_ptr<llvm::MCContext> ctx;
  std::unique_ptr<llvm::MCDisassembler> dis;
  std::unique_ptr<llvm::MCInstrAnalysis> mia;
};

// Makes `d` for the target of `code`; returns "" on success, else why
// there is no disassembler for it.
std::string MakeDisassembler(const BinaryCode& code, Disassembler& d) {
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
  d.mri.reset(target->createMCRegInfo(triple.str()));
  llvm::MCTargetOptions options;
  d.mai.reset(d.mri ? target->createMCAsmInfo(*d.mri, triple.str(), options) : nullptr);
  d.sti.reset(target->createMCSubtargetInfo(triple.str(), "", ""));
  d.mii.reset(target->createMCInstrInfo());
  if (!d.mri || !d.mai || !d.sti || !d.mii) return "no disassembler for " + triple.str();
  d.ctx = std::make_unique<llvm::MCContext>(triple, d.mai.get(), d.mri.get(), d.sti.get());
  d.dis.reset(target->createMCDisassembler(*d.sti, *d.ctx));
  d.mia.reset(target->createMCInstrAnalysis(d.mii.get()));
  if (!d.dis || !d.mia) return "no disassembler for " + triple.str();
  return "";
}

// IP -> the samples whose innermost user frame is there, in `binary`.
std::unordered_map<uint64_t, double> LeafSamples(const Profile& p, uint32_t binary) {
  std::unordered_map<uint64_t, double> leaf;
  for (const ProfileSample& s : p.samples) {
    if (!s.UserIp(s.first_user)) continue;
    const Location& l = p.locations[s.stack[s.first_user]];
    if (l.binary == binary) leaf[l.address] += static_cast<double>(s.count);
  }
  return leaf;
}

struct Decoded {
  uint64_t address;
  bool ends_block;
};

// Decodes the function [start, start + size), whose bytes are in `bytes`
// from address `base`, into `insns`; `leaders` gets where its blocks begin.
void DecodeFunction(const Disassembler& d, const llvm::ArrayRef<uint8_t>& bytes, uint64_t base, uint64_t start,
                    uint64_t size, std::vector<Decoded>& insns, std::set<uint64_t>& leaders) {
  for (uint64_t a = start; a < start + size;) {
    llvm::MCInst inst;
    uint64_t len = 0;
    auto status = d.dis->getInstruction(inst, len, bytes.slice(a - base, start + size - a), a, llvm::nulls());
    if (status != llvm::MCDisassembler::Success || len == 0) {
      insns.push_back({a, true});  // not code we can read: a block of its own
      leaders.insert(a + 1);
      a += 1;
      continue;
    }
    const llvm::MCInstrDesc& desc = d.mii->get(inst.getOpcode());
    bool ends = desc.isBranch() || desc.isReturn() || desc.isIndirectBranch() || desc.isBarrier() || desc.isTrap();
    uint64_t to = 0;
    if (desc.isBranch() && d.mia->evaluateBranch(inst, a, len, to) && to >= start && to < start + size)
      leaders.insert(to);
    insns.push_back({a, ends});
    a += len;
    if (ends) leaders.insert(a);
  }
}

// Gives each instruction of the function at `start` its block's samples
// divided by the block's instruction count, into `out`, and its entry
// block's estimate to `entries`.
void SpreadOverBlocks(const std::vector<Decoded>& insns, const std::set<uint64_t>& leaders,
                      const std::unordered_map<uint64_t, double>& leaf, uint64_t start, std::vector<Insn>* out,
                      std::unordered_map<uint64_t, double>* entries) {
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
  Disassembler d;
  std::string why = MakeDisassembler(code, d);
  if (!why.empty()) return why;
  std::unordered_map<uint64_t, double> leaf = LeafSamples(p, binary);
  std::set<std::pair<uint64_t, uint64_t>> symbols;
  for (const Symbol& sym : p.symbols)
    if (sym.binary == binary && sym.size > 0) symbols.insert({sym.start, sym.size});
  uint64_t end_of_last = 0;
  for (const auto& [start, size] : symbols) {
    if (start < end_of_last) continue;  // an alias, or nested in the previous symbol
    const llvm::ArrayRef<uint8_t>* bytes = nullptr;
    uint64_t base = 0;
    for (const auto& [addr, data] : code.text)
      if (start >= addr && start + size <= addr + data.size()) bytes = &data, base = addr;
    if (!bytes) continue;
    end_of_last = start + size;
    std::vector<Decoded> insns;
    std::set<uint64_t> leaders = {start};
    DecodeFunction(d, *bytes, base, start, size, insns, leaders);
    SpreadOverBlocks(insns, leaders, leaf, start, out, entries);
  }
  return "";
}

// Counts are multiplied by this when the lines are counted from block
// estimates, which are fractions of a sample: integer counts keep two
// digits of them.
constexpr uint64_t kBlockScale = 100;

// What every part of a profile is built with: the binary's code, the
// call weights from all its samples, and why blocks cannot be estimated.
struct Whole {
  BinaryCode code;
  CallWeights weights;
  std::vector<Insn> insns;  // the block estimates of all the samples
  std::string note;         // why there are none ("" if there are, or none were wanted)
};

// Fills `w` in place: its call evidence refers to its code. `by_line` as
// ForEachCall's.
void MakeWhole(const Profile& p, uint32_t binary, bool ip_only, Whole* w, bool by_line = true) {
  std::unordered_map<uint64_t, double> entries;  // function start -> its entry block's estimate
  if (ip_only) {
    w->code = ReadCode(p, binary);
    w->note = EstimateBlocks(p, binary, w->code, &w->insns, &entries);
    if (!w->note.empty()) w->insns.clear(), entries.clear();
  }
  w->weights = MakeCallWeights(p, binary, w->code, std::move(entries), by_line);
}

// The stacks' counts: every rule of the file comment but the block
// estimates, zero lines, call targets and contexts. An IP in `covered` is
// counted by its block's estimate instead. Returns the samples it placed
// on a line.
uint64_t AddStackCounts(const Profile& p, uint32_t binary, bool ip_only, const std::set<uint64_t>& covered,
                        uint64_t scale, SampleProfileMap& map) {
  uint64_t used = 0;
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
        // Line 0: code the compiler made for no one source line (an
        // interpreter's computed-goto dispatch holds many samples). No line
        // holds the sample, but it is time in the function, and its total
        // counts it, as llvm-profgen's does; left out, an interpreter loop
        // looks far less hot than it is.
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
  return used;
}

// The block estimates' counts: each instruction's estimate goes to the
// line table row it lies in; a line gets the largest of its instructions',
// a function (and each inlined instance) their sum.
void AddBlockCounts(const Profile& p, uint32_t binary, const std::vector<Insn>& insns, uint64_t scale,
                    SampleProfileMap& map) {
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
  for (const auto& [key, b] : bodies) {
    auto [fs, line, disc] = key;
    fs->addBodySamples(line, disc, static_cast<uint64_t>(std::llround(b * scale)));
  }
}

// Zero counts: the other lines of every function with samples, so the
// compiler sees them as not executed rather than unknown (what an
// instrumented profile says of them, and what llvm-profgen writes). Only
// functions (and inlined call sites) that already have samples get them:
// a zero call site must not make an unsampled inlinee look hot or cold.
void AddZeroLines(const Profile& p, uint32_t binary, SampleProfileMap& map) {
  for (uint32_t id : p.unsampled) {
    const Location& l = p.locations[id];
    if (l.binary != binary || !l.has_line()) continue;
    FunctionSamples* fs = Existing(p, map, l);
    // Offset 0 is the function's own line: the prologue, which the
    // backend makes, so no IR instruction carries it.
    if (fs && l.frames[0].line_offset != 0) fs->addBodySamples(l.frames[0].line_offset, l.frames[0].discriminator, 0);
  }
}

// Adds the flat profile of `p`'s samples in `binary` to `map` (every rule
// of the file comment but contexts); returns the samples it placed on a
// line. `p` is the profile `whole` was made from, or a part of it: the
// samples of one calling context (BuildContextMap).
uint64_t BuildMap(const Profile& p, uint32_t binary, bool ip_only, bool call_targets, const Whole& whole, bool part,
                  SampleProfileMap& map) {
  // IP counts come from block estimates where the code can be read; every
  // count (totals and call targets too) is then in kBlockScale units.
  std::vector<Insn> part_insns;
  std::unordered_map<uint64_t, double> part_entries;
  if (part && !whole.insns.empty()) EstimateBlocks(p, binary, whole.code, &part_insns, &part_entries);
  const std::vector<Insn>& insns = part ? part_insns : whole.insns;
  const uint64_t scale = whole.insns.empty() ? 1 : kBlockScale;
  std::set<uint64_t> covered;
  for (const Insn& in : insns) covered.insert(in.address);
  uint64_t used = AddStackCounts(p, binary, ip_only, covered, scale, map);
  if (!insns.empty()) AddBlockCounts(p, binary, insns, scale, map);
  AddZeroLines(p, binary, map);
  if (ip_only && call_targets) AddCallTargets(p, binary, whole.weights, LineSites(p, map), scale);
  return used;
}

// ===--- Calling contexts from the stacks (--profile-kind cs) -----------=== //
//
// A flat profile keys a function's samples by the function alone, and by
// the call sites the binary already inlined (the DWARF inline chain). The
// stacks also say which call, of a call the binary did not inline, each
// sample is under: its calling context, the key llvm-profgen's
// CSProfileGenerator gives a sample ([main:3 @ foo:2 @ bar]). As
// llvm-profgen does by default, a pre-inliner then decides from the
// contexts which calls the compiler should inline, and the profile is
// written nested: the samples of an inlined context sit under its call
// site in the caller's profile, marked ContextShouldBeInlined (a profile
// with that mark is "pre-inlined": clang's sample loader inlines those
// sites, and only then looks at the rest by its own cost model); the
// samples of every context the pre-inliner does not inline go to the
// callee's own (base) profile. So a function inlined at a hot call site
// gets the counts of that site's calls rather than the average of all its
// callers, which the flat profile gives it.
//
// Each context's samples are counted as a profile of their own (BuildMap
// on a part of the profile, with the leaf's locations given the context's
// caller frames as further inline levels, so that the block estimates are
// the context's own) and merged into the whole. The call targets are added
// last, from the stacks with every frame in its context (Folded), weighted
// by the whole profile's calls (CallWeights). Built on the IP counts
// (--sample-counts ip or ip-only): a part's stacks lose the caller frames
// its context took in.

// A call of the stacks: the caller frame (a return address, by its
// location) and the function it called (by index).
using Call = std::pair<uint32_t, uint32_t>;

uint32_t OuterFunction(const Location& l) { return l.frames.back().function; }

// The pre-inliner's budget, as llvm-profgen's CSPreInliner sets it
// (ProfileInlineGrowthLimit, ProfileInlineLimitMin, ProfileInlineLimitMax):
// the bytes a caller may take in by inlining are 12 times its own size,
// at least 100 and at most 3000. A call is a candidate when this share of
// the binary's samples or more ran below it.
constexpr uint64_t kInlineGrowth = 12, kInlineMinBytes = 100, kInlineMaxBytes = 3000;
constexpr double kHotCallShare = 0.001;

// The calls the pre-inliner inlines: the hot ones, each caller's hottest
// first, while their callees' code fits its budget. Sizes are the symbols'
// (a function's own inlined code included).
std::set<Call> PreInline(const Profile& p, uint32_t binary, uint64_t total) {
  std::map<Call, uint64_t> below;
  ForEachCall(p, binary, true, [&](const ProfileSample& s, size_t i, uint32_t callee) {
    below[{s.stack[i], callee}] += s.count;
  });
  std::unordered_map<uint32_t, uint64_t> size;  // function index -> its symbol's bytes
  for (const Location& l : p.locations)
    if (l.binary == binary && l.symbol >= 0 && !l.frames.empty())
      size.emplace(OuterFunction(l), p.symbols[l.symbol].size);
  std::map<uint32_t, std::vector<std::pair<uint64_t, Call>>> by_caller;
  for (const auto& [call, n] : below)
    if (double(n) >= kHotCallShare * double(total))
      by_caller[OuterFunction(p.locations[call.first])].push_back({n, call});
  std::set<Call> chosen;
  for (auto& [caller, calls] : by_caller) {
    std::sort(calls.begin(), calls.end(), std::greater<>());
    uint64_t budget = std::clamp(kInlineGrowth * size[caller], kInlineMinBytes, kInlineMaxBytes), taken = 0;
    for (const auto& [n, call] : calls) {
      auto bytes = size.find(call.second);
      if (call.second == caller || bytes == size.end() || taken + bytes->second > budget) continue;
      taken += bytes->second;
      chosen.insert(call);
    }
  }
  return chosen;
}

// The inlined calls above frame `i` of a sample, innermost first: the
// caller frame the pre-inliner inlines frame i's function into, then the
// one it inlines that caller into, and so on up to the first call it does
// not inline (or a recursion). None above a leaf in its prologue, whose
// caller frame is not its caller's.
std::vector<uint32_t> ContextAbove(const Profile& p, const ProfileSample& s, size_t i, uint32_t binary,
                                   const std::set<Call>& chosen) {
  std::vector<uint32_t> ctx;
  const Location& at = p.locations[s.stack[i]];
  if (at.binary != binary || at.frames.empty() || (i == s.first_user && (at.prologue || at.return_address)))
    return ctx;
  std::set<uint32_t> in_chain = {OuterFunction(at)};
  for (size_t j = i + 1; j < s.stack.size(); ++j) {
    const Location& l = p.locations[s.stack[j]];
    if (l.binary != binary || !l.has_line()) break;
    if (!chosen.count({s.stack[j], OuterFunction(p.locations[s.stack[j - 1]])})) break;
    if (!in_chain.insert(OuterFunction(l)).second) break;
    ctx.push_back(s.stack[j]);
  }
  return ctx;
}

// `l` in context `ctx`: the context's caller frames as its further inline levels.
Location InContext(const Profile& p, Location l, const std::vector<uint32_t>& ctx) {
  for (uint32_t c : ctx) l.frames.insert(l.frames.end(), p.locations[c].frames.begin(), p.locations[c].frames.end());
  return l;
}

// `p` with every user frame of the binary put in its context: the frame
// takes the inlined callers above it as inline levels (a new location),
// and they leave the stack. For the call targets, whose call sites are
// then found in the contexts' nested profiles.
Profile Folded(const Profile& p, uint32_t binary, const std::set<Call>& chosen) {
  Profile out = p;
  std::map<std::pair<uint32_t, std::vector<uint32_t>>, uint32_t> made;  // (location, context) -> new location
  for (ProfileSample& s : out.samples) {
    std::vector<uint32_t> stack(s.stack.begin(), s.stack.begin() + s.first_user);
    for (size_t i = s.first_user; i < s.stack.size();) {
      std::vector<uint32_t> ctx = ContextAbove(p, s, i, binary, chosen);
      uint32_t id = s.stack[i];
      size_t next = i + 1 + ctx.size();
      if (!ctx.empty()) {
        std::pair<uint32_t, std::vector<uint32_t>> key{id, std::move(ctx)};
        auto [it, fresh] = made.try_emplace(std::move(key), static_cast<uint32_t>(out.locations.size()));
        if (fresh) out.locations.push_back(InContext(p, p.locations[id], it->first.second));
        id = it->second;
      }
      stack.push_back(id);
      i = next;
    }
    s.stack = std::move(stack);
  }
  return out;
}

// The profile of every calling context: the base profiles and, nested
// under the inlined calls, the contexts the pre-inliner inlines (see
// above). Returns the samples placed on a line, as BuildMap. The names in
// `map` point into the profiles it makes from `p`, which it keeps in
// `copies`: they must outlive the map.
uint64_t BuildContextMap(const Profile& p, uint32_t binary, bool ip_only, bool call_targets, SampleProfileMap& map,
                         std::list<Profile>& copies, std::string* note) {
  Whole whole;
  MakeWhole(p, binary, ip_only, &whole);
  *note = whole.note;
  uint64_t total = 0;
  for (const ProfileSample& s : p.samples)
    if (s.UserIp(s.first_user) && p.locations[s.stack[s.first_user]].binary == binary) total += s.count;
  std::set<Call> chosen = PreInline(p, binary, total);
  // The samples by (leaf function, the leaf's context).
  std::map<std::pair<uint32_t, std::vector<uint32_t>>, std::vector<size_t>> parts;
  for (size_t k = 0; k < p.samples.size(); ++k) {
    const ProfileSample& s = p.samples[k];
    std::vector<uint32_t> ctx;
    if (s.first_user < s.stack.size()) ctx = ContextAbove(p, s, s.first_user, binary, chosen);
    uint32_t fn = ctx.empty() ? UINT32_MAX : OuterFunction(p.locations[s.stack[s.first_user]]);
    parts[{fn, std::move(ctx)}].push_back(k);
  }
  std::unordered_map<uint32_t, std::vector<uint32_t>> locations_of;  // function index -> its locations
  for (uint32_t id = 0; id < p.locations.size(); ++id)
    if (p.locations[id].binary == binary && !p.locations[id].frames.empty())
      locations_of[OuterFunction(p.locations[id])].push_back(id);
  // One part at a time: its samples, and its leaf function's locations in
  // its context (every address of the part has one location, as the
  // block estimates need).
  Profile& part = copies.emplace_back(p);
  uint64_t used = 0;
  for (const auto& [key, members] : parts) {
    const auto& [fn, ctx] = key;
    part.samples.clear();
    for (size_t k : members) {
      ProfileSample s = p.samples[k];
      s.stack.erase(s.stack.begin() + s.first_user + 1, s.stack.begin() + s.first_user + 1 + ctx.size());
      part.samples.push_back(std::move(s));
    }
    if (!ctx.empty())
      for (uint32_t id : locations_of[fn]) part.locations[id] = InContext(p, p.locations[id], ctx);
    // Only the symbols that hold the part's IP samples are estimated again.
    std::set<int32_t> leaf_symbols;
    for (const ProfileSample& s : part.samples)
      if (s.first_user < s.stack.size()) leaf_symbols.insert(p.locations[s.stack[s.first_user]].symbol);
    for (size_t k = 0; k < part.symbols.size(); ++k)
      part.symbols[k].size = leaf_symbols.count(static_cast<int32_t>(k)) ? p.symbols[k].size : 0;
    SampleProfileMap got;
    used += BuildMap(part, binary, ip_only, /*call_targets=*/false, whole, true, got);
    for (const auto& [hash, fs] : got) map.create(fs.getContext()).merge(fs);
    if (!ctx.empty())
      for (uint32_t id : locations_of[fn]) part.locations[id] = p.locations[id];
  }
  const uint64_t scale = whole.insns.empty() ? 1 : kBlockScale;
  if (ip_only && call_targets) {
    const Profile& folded = copies.emplace_back(Folded(p, binary, chosen));
    AddCallTargets(folded, binary, whole.weights, LineSites(folded, map), scale);
  }
  return used;
}

// Marks ContextShouldBeInlined on every nested profile (a call inlined in
// the profiled binary, or a context the pre-inliner inlined) that holds
// kHotCallShare of the binary's samples: the pre-inliner's decisions, which
// clang's sample loader then carries out. Returns whether it marked any.
bool MarkPreInlined(SampleProfileMap& map) {
  uint64_t total = 0;
  for (const auto& [hash, fs] : map) total += fs.getTotalSamples();
  bool any = false;
  std::function<void(const FunctionSamples&)> mark = [&](const FunctionSamples& fs) {
    for (const auto& [loc, callees] : fs.getCallsiteSamples())
      for (const auto& [name, in] : callees) {
        if (double(in.getTotalSamples()) >= kHotCallShare * double(total)) {
          in.getContext().setAttribute(llvm::sampleprof::ContextShouldBeInlined);
          any = true;
        }
        mark(in);
      }
  };
  for (const auto& [hash, fs] : map) mark(fs);
  return any;
}

// ===--- Pseudo-probes (--profile-kind probe) ---------------------------=== //
//
// A binary built with -fpseudo-probe-for-profiling carries each function's
// GUID, name and CFG checksum (.pseudo_probe_desc) and, for every IR block
// and call of every function and inlined copy, a probe: its id, its inline
// context, and the address its code begins at (.pseudo_probe). A
// probe-keyed profile counts the block probes by id, in the profile of the
// function or inlined instance the probe's inline context names, and
// clang's sample loader gives each IR block its probe's count: no line
// table between them, so blocks that share a line, or a line that spans
// blocks, no longer mix.
//
// The counts are the block estimates (EstimateBlocks): a probe gets the
// estimate of the instruction at its address, that is the executions of
// the machine block its code begins in; two copies of a probe (duplicated
// code) add up. A function's total (and each inlined instance's) sums the
// estimates of its instructions, each instruction belonging to the nearest
// block probe at or before it in its symbol (the symbol's first probe, for
// a prologue ahead of every probe). Every other block probe of a profile
// that has samples counts zero, as the zero lines do. Call targets go at
// the call probe of the call before each return address, weighted as the
// line-keyed profile's (AddCallTargets). Each profile, inlined ones too,
// carries its function's CFG checksum, which clang compares with the
// rebuild's: a function whose code changed is not given stale counts.

// The binary's probes, decoded; the profile's names point into `decoder`.
struct ProbeTable {
  llvm::MCPseudoProbeDecoder decoder;
  std::vector<const llvm::MCDecodedPseudoProbe*> blocks, calls;  // by address
};

bool ByAddress(const llvm::MCDecodedPseudoProbe* probe, uint64_t address) { return probe->getAddress() < address; }
bool BeforeProbe(uint64_t address, const llvm::MCDecodedPseudoProbe* probe) { return address < probe->getAddress(); }

// Decodes the probes of `code` into `t`; returns "" on success, else why not.
std::string DecodeProbes(const Profile& p, uint32_t binary, const BinaryCode& code, ProbeTable* t) {
  const std::string& path = p.binaries[binary].ref.path;
  if (!code.object()) return code.error + ": --profile-kind probe reads the probes from the binary's code";
  llvm::StringRef desc, probes;
  for (const llvm::object::SectionRef& sec : code.object()->sections()) {
    auto name = sec.getName();
    auto contents = sec.getContents();
    if (!name || !contents) {
      if (!name) llvm::consumeError(name.takeError());
      if (!contents) llvm::consumeError(contents.takeError());
      continue;
    }
    if (*name == ".pseudo_probe_desc") desc = *contents;
    if (*name == ".pseudo_probe") probes = *contents;
  }
  if (probes.empty() || desc.empty())
    return path + " has no pseudo-probes (no .pseudo_probe and .pseudo_probe_desc sections), which --profile-kind "
           "probe keys the profile by: build it with -fpseudo-probe-for-profiling (syspgo pgo --profile-kind probe "
           "adds it), or use --profile-kind flat.";
  // The address of each function's first probe is encoded from the start
  // of its symbol, named by GUID: every function symbol of the file, not
  // only the sampled ones, or the decoder places a function's probes after
  // the previous function's.
  llvm::MCPseudoProbeDecoder::Uint64Map starts;
  for (const llvm::object::SymbolRef& sym : code.object()->symbols()) {
    auto type = sym.getType();
    auto name = sym.getName();
    auto address = sym.getAddress();
    if (!type || !name || !address) {
      if (!type) llvm::consumeError(type.takeError());
      if (!name) llvm::consumeError(name.takeError());
      if (!address) llvm::consumeError(address.takeError());
      continue;
    }
    if (*type == llvm::object::SymbolRef::ST_Function) starts[llvm::MD5Hash(*name)] = *address;
  }
  if (!t->decoder.buildGUID2FuncDescMap(desc.bytes_begin(), desc.size()) ||
      !t->decoder.buildAddress2ProbeMap(probes.bytes_begin(), probes.size(), {}, starts))
    return "cannot decode the pseudo-probes of " + path + " (.pseudo_probe_desc, .pseudo_probe): were they written "
           "by an LLVM other than 19? Rebuild it with clang-19.";
  for (const auto& [address, list] : t->decoder.getAddress2ProbesMap())
    for (const llvm::MCDecodedPseudoProbe& probe : list) (probe.isBlock() ? t->blocks : t->calls).push_back(&probe);
  return "";
}

// The profile of the function or inlined instance `probe` is in, through
// its inline context. With `create`, made if missing (every level, with
// its checksum, and `add_total` applied to each, outermost first); else
// nullptr if missing.
template <typename AddTotal>
FunctionSamples* ProbeProfile(const ProbeTable& t, SampleProfileMap& map, const llvm::MCDecodedPseudoProbe& probe,
                              bool create, AddTotal add_total) {
  std::vector<const llvm::MCDecodedPseudoProbeInlineTree*> chain;  // outermost first
  for (const llvm::MCDecodedPseudoProbeInlineTree* n = probe.getInlineTreeNode(); n && !n->isRoot();
       n = static_cast<const llvm::MCDecodedPseudoProbeInlineTree*>(n->Parent))
    chain.insert(chain.begin(), n);
  FunctionSamples* fs = nullptr;
  for (const llvm::MCDecodedPseudoProbeInlineTree* node : chain) {
    const llvm::MCPseudoProbeFuncDesc* desc = t.decoder.getFuncDescForGUID(node->Guid);
    if (!desc) return nullptr;
    FunctionId name(desc->FuncName);
    if (create) {
      fs = !fs ? &map.create(SampleContext(name))
               : &fs->functionSamplesAt(LineLocation(std::get<1>(node->ISite), 0))[name];
      fs->setFunction(name);
      fs->setFunctionHash(desc->FuncHash);
      add_total(fs);
      continue;
    }
    if (!fs) {
      auto top = map.find(SampleContext(name));
      if (top == map.end()) return nullptr;
      fs = &top->second;
      continue;
    }
    const auto* callees = fs->findFunctionSamplesMapAt(LineLocation(std::get<1>(node->ISite), 0));
    auto it = callees ? callees->find(name) : FunctionSamplesMap::const_iterator();
    if (!callees || it == callees->end()) return nullptr;
    fs = const_cast<FunctionSamples*>(&it->second);
  }
  return fs;
}

// The block probe an instruction at `address` belongs to: the nearest at
// or before it in its symbol [start, end), else the symbol's first.
const llvm::MCDecodedPseudoProbe* OwningProbe(const ProbeTable& t, uint64_t address, uint64_t start, uint64_t end) {
  auto after = std::upper_bound(t.blocks.begin(), t.blocks.end(), address, BeforeProbe);
  if (after != t.blocks.begin() && (*std::prev(after))->getAddress() >= start) return *std::prev(after);
  auto first = std::lower_bound(t.blocks.begin(), t.blocks.end(), start, ByAddress);
  return first != t.blocks.end() && (*first)->getAddress() < end ? *first : nullptr;
}

// The probe-keyed counts of `insns`, whose estimates `at` has by address
// (see the section comment); returns the estimates it placed, rounded.
uint64_t AddProbeCounts(const Profile& p, uint32_t binary, const ProbeTable& t, const std::vector<Insn>& insns,
                        const std::unordered_map<uint64_t, double>& at, uint64_t scale, SampleProfileMap& map) {
  std::vector<std::pair<uint64_t, uint64_t>> symbols;  // start, end
  for (const Symbol& sym : p.symbols)
    if (sym.binary == binary && sym.size > 0) symbols.push_back({sym.start, sym.start + sym.size});
  std::sort(symbols.begin(), symbols.end());
  std::map<FunctionSamples*, double> totals;
  double used = 0;
  for (const Insn& in : insns) {
    if (in.estimate <= 0) continue;
    auto sym = std::upper_bound(symbols.begin(), symbols.end(), std::make_pair(in.address, UINT64_MAX));
    if (sym == symbols.begin() || in.address >= std::prev(sym)->second) continue;
    const llvm::MCDecodedPseudoProbe* owner = OwningProbe(t, in.address, std::prev(sym)->first, std::prev(sym)->second);
    if (!owner) continue;
    ProbeProfile(t, map, *owner, true, [&](FunctionSamples* level) { totals[level] += in.estimate; });
    used += in.estimate;
  }
  for (const auto& [fs, total] : totals) fs->addTotalSamples(static_cast<uint64_t>(std::llround(total * scale)));
  for (const llvm::MCDecodedPseudoProbe* probe : t.blocks) {
    auto e = at.find(probe->getAddress());
    double estimate = e == at.end() ? 0 : e->second;
    FunctionSamples* fs = ProbeProfile(t, map, *probe, estimate > 0, [](FunctionSamples*) {});
    if (fs)
      fs->addBodySamples(static_cast<uint32_t>(probe->getIndex()), probe->getDiscriminator(),
                         static_cast<uint64_t>(std::llround(estimate * scale)));
  }
  return static_cast<uint64_t>(std::llround(used));
}

// A caller frame's call site by the call probe of the call that ends at its
// return address (the last call probe before it, an instruction's length
// at most away); the count of the code that calls is the estimate of the
// call instruction (`at`, the probe's address), times `scale`.
CallSiteOf ProbeSites(const ProbeTable& t, SampleProfileMap& map, const std::unordered_map<uint64_t, double>& at,
                      uint64_t scale) {
  constexpr uint64_t kLongestInstruction = 15;
  return [&t, &map, &at, scale](const Location& l) -> std::optional<CallSite> {
    auto it = std::lower_bound(t.calls.begin(), t.calls.end(), l.address, ByAddress);
    if (it == t.calls.begin() || l.address - (*std::prev(it))->getAddress() > kLongestInstruction) return std::nullopt;
    const llvm::MCDecodedPseudoProbe& call = **std::prev(it);
    FunctionSamples* fs = ProbeProfile(t, map, call, false, [](FunctionSamples*) {});
    if (!fs) return std::nullopt;
    auto e = at.find(call.getAddress());
    uint64_t body = e == at.end() ? 0 : static_cast<uint64_t>(std::llround(e->second * double(scale)));
    return CallSite{fs, static_cast<uint32_t>(call.getIndex()), call.getDiscriminator(), body};
  };
}

// The probe-keyed profile of `p`'s samples in `binary` into `map`, with
// `t` decoded; returns "" on success, else why not. `used` and `note` as
// BuildMap's.
std::string BuildProbeMap(const Profile& p, uint32_t binary, bool call_targets, ProbeTable* t, SampleProfileMap& map,
                          uint64_t* used, std::string* note) {
  Whole whole;
  MakeWhole(p, binary, /*ip_only=*/true, &whole, /*by_line=*/false);
  std::string why = DecodeProbes(p, binary, whole.code, t);
  if (!why.empty()) return why;
  *note = whole.note;
  std::vector<Insn> insns = whole.insns;
  if (insns.empty())  // no block estimates: each IP counts its own samples
    for (const auto& [address, n] : LeafSamples(p, binary)) insns.push_back({address, n});
  std::unordered_map<uint64_t, double> at;  // address -> its instruction's estimate
  for (const Insn& in : insns)
    if (in.estimate > 0) at[in.address] = in.estimate;
  const uint64_t scale = whole.insns.empty() ? 1 : kBlockScale;
  *used = AddProbeCounts(p, binary, *t, insns, at, scale, map);
  if (call_targets) AddCallTargets(p, binary, whole.weights, ProbeSites(*t, map, at, scale), scale);
  return "";
}

// Returns "" on success, else the error message (`note` as BuildMap's).
std::string Write(const Profile& p, uint32_t binary, const std::string& path, bool extbinary, bool ip_only,
                  bool call_targets, bool contexts, bool probes, std::string* note) {
  const ProfileBinary& b = p.binaries[binary];
  std::list<Profile> copies;  // what the names of a context profile point into (BuildContextMap)
  ProbeTable table;           // what the names of a probe profile point into
  SampleProfileMap map;
  uint64_t used = 0;
  if (probes) {
    std::string why = BuildProbeMap(p, binary, call_targets, &table, map, &used, note);
    if (!why.empty()) return why;
  } else if (contexts) {
    used = BuildContextMap(p, binary, ip_only, call_targets, map, copies, note);
  } else {
    Whole whole;
    MakeWhole(p, binary, ip_only, &whole);
    *note = whole.note;
    used = BuildMap(p, binary, ip_only, call_targets, whole, false, map);
  }
  if (map.empty() || used == 0)
    return "no sample of the run has its innermost frame in " + b.ref.path +
           " at a known source line; nothing to write. Was it running during the collection?";
  auto w = llvm::sampleprof::SampleProfileWriter::create(
      path, extbinary ? llvm::sampleprof::SPF_Ext_Binary : llvm::sampleprof::SPF_Text);
  if (!w) return "cannot create '" + path + "': " + w.getError().message() + ".";
  // The writers read the profile's kind from LLVM's globals; the module
  // stays loaded, so they are put back for the next profile.
  bool preinlined = FunctionSamples::ProfileIsPreInlined, probe_based = FunctionSamples::ProfileIsProbeBased;
  FunctionSamples::ProfileIsPreInlined = contexts && MarkPreInlined(map);
  FunctionSamples::ProfileIsProbeBased = probes;
  std::error_code ec = (*w)->write(map);
  FunctionSamples::ProfileIsPreInlined = preinlined;
  FunctionSamples::ProfileIsProbeBased = probe_based;
  if (ec) return "cannot write the sample profile '" + path + "': " + ec.message() + ".";
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
                            req.contexts, req.probes, &res.note);
  res.ok = res.error.empty();
}
