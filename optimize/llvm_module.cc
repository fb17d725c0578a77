//===- llvm_module.cc - libsyspgo_llvm.so: syspgo's LLVM-using code -----===//
// Built as a MODULE library (see llvm_module.h for why and the interface).
// It writes LLVM sample profiles through LLVM's ProfileData library, from
// timer samples that carry a frame-pointer stack and no branch records (no
// LBR on this kind of machine). How the counts are made:
//
//  * Body samples: each sample's innermost user frame (its IP) adds its
//    count at (line offset, base discriminator) of the innermost inline
//    frame, nested under the inlined call sites of its inline chain; every
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
//    without them cannot do. Tail calls still show the function a target
//    jumped to; clang skips a promotion whose signature does not fit.
#include "optimize/llvm_module.h"

#include <llvm/ProfileData/SampleProf.h>
#include <llvm/ProfileData/SampleProfWriter.h>

#include <set>

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

// --sample-counts ip's call targets (see the file comment).
void AddCallTargets(const Profile& p, uint32_t binary, SampleProfileMap& map) {
  for (const ProfileSample& s : p.samples) {
    std::set<uint32_t> seen;  // caller frames count once per sample
    for (size_t i = s.first_user + 1; i < s.stack.size(); ++i) {
      const Location& l = p.locations[s.stack[i]];
      if (l.binary != binary || !l.has_line() || !seen.insert(s.stack[i]).second) continue;
      const Location& below = p.locations[s.stack[i - 1]];
      const Function* callee = Outermost(p, below);
      if (!callee || callee->binary != binary) continue;
      if (i == s.first_user + 1 && (below.prologue || below.return_address)) continue;
      FunctionSamples* fs = Existing(p, map, l);
      if (fs) fs->addCalledTargetSamples(l.frames[0].line_offset, l.frames[0].discriminator, FunctionId(callee->name),
                                         s.count);
    }
  }
}

// Returns "" on success, else the error message.
std::string Write(const Profile& p, uint32_t binary, const std::string& path, bool extbinary, bool ip_only,
                  bool call_targets) {
  const ProfileBinary& b = p.binaries[binary];
  SampleProfileMap map;
  uint64_t used = 0;
  for (const ProfileSample& s : p.samples) {
    std::set<uint32_t> seen;  // caller frames count once per sample
    for (size_t i = s.first_user; i < s.stack.size(); ++i) {
      if (ip_only && i > s.first_user) break;
      const Location& l = p.locations[s.stack[i]];
      if (l.binary != binary || l.frames.empty()) continue;
      bool leaf = i == s.first_user && !l.return_address;
      if (!l.has_line()) {
        // Line 0: code the compiler made for no one source line (Lua's
        // computed-goto dispatch is 28% of its samples). No line holds the
        // sample, but it is time in the function, and its total counts it,
        // as llvm-profgen's does; left out, the interpreter loop looked a
        // third as hot as it is.
        if (leaf) map.create(SampleContext(Name(p, l.frames.back()))).addTotalSamples(s.count);
        continue;
      }
      if (ip_only && !leaf) break;  // IP samples only: callers add nothing
      if (!leaf && !seen.insert(s.stack[i]).second) continue;
      used += leaf ? s.count : 0;
      FunctionSamples* fs = &map.create(SampleContext(Name(p, l.frames.back())));
      fs->addTotalSamples(s.count);
      for (size_t k = l.frames.size() - 1; k > 0; --k) {
        const SourceFrame& site = l.frames[k];
        FunctionId callee = Name(p, l.frames[k - 1]);
        FunctionSamples& in = fs->functionSamplesAt(LineLocation(site.line_offset, site.discriminator))[callee];
        in.setFunction(callee);
        in.addTotalSamples(s.count);
        fs = &in;
      }
      const SourceFrame& f = l.frames[0];
      // A prologue's samples stay in the totals but on no line: no IR
      // instruction of the rebuild carries the prologue's line, and clang
      // would count them as a profile that no longer matches.
      if (!(leaf && l.prologue)) fs->addBodySamples(f.line_offset, f.discriminator, s.count);
      if (i == s.first_user) continue;  // kernel-mode sample: the syscall site, no user callee
      const Function* callee = Outermost(p, p.locations[s.stack[i - 1]]);
      if (!callee) continue;
      fs->addCalledTargetSamples(f.line_offset, f.discriminator, FunctionId(callee->name), s.count);
      if (callee->binary == binary && p.locations[s.stack[i - 1]].has_line())
        map.create(SampleContext(FunctionId(callee->name))).addHeadSamples(s.count);
    }
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
  if (ip_only && call_targets) AddCallTargets(p, binary, map);
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
  res.error = syspgo::Write(*req.profile, req.binary, *req.path, req.extbinary, req.ip_only, req.call_targets);
  res.ok = res.error.empty();
}
