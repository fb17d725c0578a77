//===- install_layout.cc - where syspgo's parts lie beside the running binary =//
#include "common/install_layout.h"

#include <unistd.h>

#include <filesystem>

#include "common/util.h"

// The installed tree's directories relative to one another
// (CMakeLists.txt computes them from GNUInstallDirs).
#ifndef SYSPGO_BIN_TO_LIBEXEC
#error "SYSPGO_BIN_TO_LIBEXEC (bin/ to libexec/syspgo/, relative) must be defined by the build"
#endif
#ifndef SYSPGO_BIN_TO_LIB
#error "SYSPGO_BIN_TO_LIB (bin/ to lib/, relative) must be defined by the build"
#endif
#ifndef SYSPGO_LIBEXEC_TO_LIB
#error "SYSPGO_LIBEXEC_TO_LIB (libexec/syspgo/ to lib/, relative) must be defined by the build"
#endif

namespace syspgo {
namespace {

struct Place {
  InstalledPart part;
  const char* dir;  // relative to the running executable's directory
  const char* file;
};

// Installed places first: a build tree never holds them, so the order only
// matters for an installed copy that also sits beside a build layout.
constexpr Place kPlaces[] = {
    {InstalledPart::kFullTool, SYSPGO_BIN_TO_LIBEXEC, "syspgo"},   // bin/syspgo
    {InstalledPart::kFullTool, "libexec", "syspgo"},               // build: cli/syspgo
    {InstalledPart::kLlvmModule, ".", "libsyspgo_llvm.so"},        // libexec/syspgo/syspgo, build: cli/libexec/
    {InstalledPart::kLlvmModule, "../cli/libexec", "libsyspgo_llvm.so"},  // build: the suites in tests/
    {InstalledPart::kReadaheadShim, SYSPGO_BIN_TO_LIB, "libsyspgo-readahead.so"},      // bin/syspgo(-prefetch)
    {InstalledPart::kReadaheadShim, SYSPGO_LIBEXEC_TO_LIB, "libsyspgo-readahead.so"},  // libexec/syspgo/syspgo
    {InstalledPart::kReadaheadShim, "libexec", "libsyspgo-readahead.so"},  // build: cli/syspgo(-prefetch)
    {InstalledPart::kReadaheadShim, ".", "libsyspgo-readahead.so"},        // build: cli/libexec/syspgo
};

}  // namespace

std::vector<std::string> InstalledPartCandidates(InstalledPart part) {
  std::string exe = ReadLinkOrEmpty("/proc/self/exe");
  std::string dir = exe.empty() ? "." : exe.substr(0, exe.rfind('/'));
  std::vector<std::string> out;
  for (const Place& p : kPlaces)
    if (p.part == part)
      out.push_back(std::filesystem::path(dir + "/" + p.dir + "/" + p.file).lexically_normal().string());
  return out;
}

std::string FindInstalledPart(InstalledPart part) {
  for (const std::string& path : InstalledPartCandidates(part))
    if (access(path.c_str(), F_OK) == 0) return path;
  return "";
}

}  // namespace syspgo
