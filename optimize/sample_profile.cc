//===- sample_profile.cc - LLVM sample profiles from stack samples -------===//
// The emitter checks that the binary can have a sample profile, then hands
// the Profile to syspgo's LLVM module (llvm_module.h), loaded here on first
// use, which builds the counts (how, and what they lose against
// instrumentation, is in llvm_module.cc and docs/profiles.md) and writes
// them through LLVM's ProfileData library. syspgo itself does not link
// libLLVM.
#include "optimize/sample_profile.h"

#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <cstdio>

#include <mutex>
#include <vector>

#include "optimize/llvm_module.h"
#include "common/install_layout.h"
#include "common/util.h"

namespace syspgo {
namespace {

// Loads libsyspgo_llvm.so from where syspgo keeps it, relative to the
// running executable (common/install_layout.h: beside the full tool, or for
// the test suites, which link syspgo_optimize themselves, in the build
// tree's cli/libexec/). Loaded once; never unloaded.
Result<SyspgoLlvmWriteSampleProfileFn> LoadModule() {
  static std::once_flag once;
  static SyspgoLlvmWriteSampleProfileFn fn = nullptr;
  static std::string error;
  std::call_once(once, [] {
    std::vector<std::string> candidates = InstalledPartCandidates(InstalledPart::kLlvmModule);
    for (const std::string& path : candidates) {
      if (access(path.c_str(), F_OK) != 0) continue;
      void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) {
        const char* e = dlerror();
        error = "cannot load syspgo's LLVM module " + path + ": " + (e ? e : "unknown error") +
                " (it needs LLVM 19's libLLVM): reinstall/rebuild syspgo.";
        return;
      }
      fn = reinterpret_cast<SyspgoLlvmWriteSampleProfileFn>(dlsym(h, kSyspgoLlvmWriteSampleProfile));
      if (!fn)
        error = "syspgo's LLVM module " + path + " has no " + kSyspgoLlvmWriteSampleProfile +
                ": it is from another build; reinstall/rebuild syspgo.";
      return;
    }
    std::string tried;
    for (const std::string& path : candidates) tried += (tried.empty() ? "" : " or ") + path;
    error = std::string("syspgo's LLVM module was not found (") + tried + "): reinstall/rebuild syspgo.";
  });
  if (!fn) return MakeError(error);
  return fn;
}

class SampleProfileEmitter : public ProfileEmitter {
 public:
  SampleProfileEmitter(bool extbinary, SampleCounts counts, ProfileKind profile)
      : extbinary_(extbinary), counts_(counts), profile_(profile) {}

  Status Write(const Profile& p, uint32_t binary, const std::string& path) const override {
    SYSPGO_TRY(CheckBinary(p, binary, "a sample profile", &ProfileBinary::has_lines,
                           " has no DWARF line information (not in the file, and no debug file found through "
                           ".gnu_debuglink or .build-id): a sample profile maps samples to source lines. Build with "
                           "-g or -gline-tables-only (add -fdebug-info-for-profiling for discriminators), or install "
                           "its debug file and pass --debug-dir."));
    if (profile_ == ProfileKind::kContext && counts_ == SampleCounts::kStacks)
      return MakeError("--profile-kind cs counts by the IP samples: use it with --sample-counts ip or ip-only, not "
                       "stacks (a context takes in the caller frames whose lines stacks would count).");
    if (profile_ == ProfileKind::kProbe && counts_ == SampleCounts::kStacks)
      return MakeError("--profile-kind probe counts by the IP samples: use it with --sample-counts ip or ip-only, "
                       "not stacks (a probe counts its block's executions, not the time below its calls).");
    auto fn = LoadModule();
    if (!fn) return fn.error();
    LlvmSampleProfileRequest req;
    req.profile = &p;
    req.binary = binary;
    req.path = &path;
    req.extbinary = extbinary_;
    req.ip_only = counts_ != SampleCounts::kStacks;
    req.call_targets = counts_ == SampleCounts::kIp;
    req.contexts = profile_ == ProfileKind::kContext;
    req.probes = profile_ == ProfileKind::kProbe;
    LlvmSampleProfileResult res;
    (*fn)(&req, &res);
    if (!res.ok) return MakeError(res.error);
    if (!res.note.empty())
      fprintf(stderr,
              "syspgo: warning: %s; the sample profile counts each line by its own samples instead of by the "
              "samples of its basic blocks, which is less exact. Pass the binary that ran (--binary) to fix it.\n",
              res.note.c_str());
    return {};
  }

 private:
  bool extbinary_;
  SampleCounts counts_;
  ProfileKind profile_;
};

}  // namespace

std::unique_ptr<ProfileEmitter> MakeSampleProfileEmitter(bool extbinary, ProfileEmitter::SampleCounts counts,
                                                         ProfileEmitter::ProfileKind profile) {
  return std::make_unique<SampleProfileEmitter>(extbinary, counts, profile);
}

}  // namespace syspgo
