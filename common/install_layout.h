//===- install_layout.h - where syspgo's parts lie beside the running binary ===//
// syspgo is one front (`syspgo`, static), the full tool it execs, the LLVM
// module the full tool loads and the readahead library a replay preloads.
// Installed, they lie in bin/, libexec/syspgo/ and lib/ under one prefix
// (GNUInstallDirs: the relative directories are compiled in, never an
// absolute path, so a prefix can be moved or unpacked anywhere); in the
// build tree, in cli/ and cli/libexec/. Each part is looked for relative
// to the running executable (/proc/self/exe): first where an installed
// tree keeps it, then where the build tree does.
#pragma once
#include <string>
#include <vector>

namespace syspgo {

enum class InstalledPart {
  kFullTool,       // the full `syspgo`, which the front execs
  kLlvmModule,     // libsyspgo_llvm.so, which writes sample profiles
  kReadaheadShim,  // libsyspgo-readahead.so, which `syspgo prefetch --readahead` preloads
};

// The paths where `part` may lie for the running executable, in the order
// they are tried (for messages that say where it was looked for).
std::vector<std::string> InstalledPartCandidates(InstalledPart part);

// The first of those that exists, or "" if none does.
std::string FindInstalledPart(InstalledPart part);

}  // namespace syspgo
