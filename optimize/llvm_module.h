//===- llvm_module.h - the interface of syspgo's LLVM module -------------===//
// Everything that uses LLVM (today: LLVM's ProfileData library, to write
// sample profiles) is built into a separate loadable module,
// libsyspgo_llvm.so, installed next to the syspgo executable, so that syspgo
// itself does not link libLLVM: commands that never write a sample profile
// (notably `syspgo prefetch`, run at cold start) do not load ~150 MB of
// libraries. The module is dlopen()ed on demand by sample_profile.cc.
//
// The module exports one C symbol, kSyspgoLlvmWriteSampleProfile. It takes
// pointers to the C++ structs below: the module is built by the same
// compiler from the same headers as syspgo (it is part of the same build and
// must be installed with it), so passing C++ objects by pointer is safe.
// `abi_version` guards against a stale module from another build; bump
// kSyspgoLlvmAbiVersion whenever these structs, or a struct they point to
// (analyze/sample_set.h's Profile), change layout.
//
// The module reads only the in-memory Profile; it links no syspgo library.
#pragma once
#include <cstdint>
#include <string>

#include "analyze/sample_set.h"

namespace syspgo {

inline constexpr uint32_t kSyspgoLlvmAbiVersion = 6;
inline constexpr const char* kSyspgoLlvmModuleName = "libsyspgo_llvm.so";
inline constexpr const char* kSyspgoLlvmWriteSampleProfile = "syspgo_llvm_write_sample_profile";

struct LlvmSampleProfileRequest {
  uint32_t abi_version = kSyspgoLlvmAbiVersion;
  const Profile* profile = nullptr;
  uint32_t binary = 0;  // index into profile->binaries; already checked (CheckBinary, has_lines)
  const std::string* path = nullptr;
  bool extbinary = false;  // SPF_Ext_Binary, else SPF_Text
  bool ip_only = false;       // lines count IP samples only (SampleCounts::kIp, kIpOnly)
  bool call_targets = false;  // with ip_only: call targets from the stacks too (SampleCounts::kIp)
  bool contexts = false;      // calling contexts from the stacks, pre-inlined (ProfileKind::kContext)
  bool probes = false;        // keyed by the binary's pseudo-probes (ProfileKind::kProbe)
};

struct LlvmSampleProfileResult {
  bool ok = false;
  std::string error;  // a complete message when !ok
  std::string note;   // when ok: why IP counts are per line rather than per block ("" if they are per block)
};

}  // namespace syspgo

// Writes the sample profile described by *request (a
// syspgo::LlvmSampleProfileRequest) and fills *result (a
// syspgo::LlvmSampleProfileResult). Defined in llvm_module.cc.
extern "C" void syspgo_llvm_write_sample_profile(const void* request, void* result);
using SyspgoLlvmWriteSampleProfileFn = void (*)(const void* request, void* result);
