//===- prefetch_main.cc - the small static front: the replayer, and `syspgo` =//
// One main for two static binaries, both linking only what a replay needs
// (the plan schema, the replayer, the C and C++ runtimes the programs it
// warms use too). Replays run when the page cache is cold, so the
// replayer's own start is part of the cold start it shortens: the full tool
// and its shared libraries read 20 MiB and take about 45 ms from a cold
// cache on the benchmark VM, before the first page of the plan is queued.
//  - `syspgo-prefetch PLAN [OPTIONS] [-- CMD]`: the replayer on its own.
//  - `syspgo` (built with SYSPGO_LAUNCHER): the command users type. It runs
//    `syspgo prefetch ...` itself and hands every other command to the full
//    tool (common/install_layout.h) by exec (same process, same
//    credentials and environment, and the same name in ps and
//    /proc/PID/comm), so `syspgo prefetch` starts as fast as the replayer.
#include <nss.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/command.h"
#include "common/install_layout.h"

namespace {

#ifdef SYSPGO_LAUNCHER
[[noreturn]] void ExecFullTool(char** argv) {
  std::string path = syspgo::FindInstalledPart(syspgo::InstalledPart::kFullTool);
  if (!path.empty()) execv(path.c_str(), argv);
  int err = path.empty() ? ENOENT : errno;
  std::string tried = path;
  if (path.empty())
    for (const std::string& p : syspgo::InstalledPartCandidates(syspgo::InstalledPart::kFullTool))
      tried += (tried.empty() ? "" : " or ") + p;
  fprintf(stderr,
          "syspgo: cannot start the full tool (%s): %s. `syspgo` is a small front that needs it: reinstall "
          "syspgo (its libexec/syspgo/ beside bin/), or in a build tree build both (cmake --build build --target "
          "syspgo) and keep build/cli/libexec with build/cli/syspgo.\n",
          tried.c_str(), strerror(err));
  _exit(127);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  using namespace syspgo::cli;
#ifdef SYSPGO_LAUNCHER
  if (argc < 2 || strcmp(argv[1], "prefetch") != 0) ExecFullTool(argv);
  const int first_arg = 2;  // after `prefetch`
#else
  if (argc >= 2 && !strcmp(argv[1], "--version")) {
    printf("syspgo-prefetch %s\n", SYSPGO_VERSION);
    return 0;
  }
  const int first_arg = 1;
#endif
  // Under sudo the invoking user's passwd entry and groups are looked up
  // (common/identity.h). A static binary cannot safely load the NSS modules
  // of the installed glibc (libnss_systemd crashed in getgrouplist here),
  // so this one reads /etc/passwd and /etc/group only, which glibc does
  // itself. A user known only to a directory service (LDAP, sssd) keeps
  // their primary group alone in a replay (docs/privileges.md).
  __nss_configure_lookup("passwd", "files");
  __nss_configure_lookup("group", "files");
  for (auto* c : Commands())
    if (!strcmp(c->name, "prefetch"))
      return RunCommand(*c, std::vector<std::string>(argv + first_arg, argv + argc));
  fprintf(stderr, "syspgo: built without the prefetch command\n");
  return 1;
}
