//===- prefetch_main.cc - syspgo-prefetch: the replayer on its own -------===//
// `syspgo-prefetch PLAN [OPTIONS] [-- CMD]` is `syspgo prefetch` in a
// binary that links only what a replay needs (the plan schema, the
// replayer, and the C and C++ runtimes the programs it warms use too). It
// runs when the page cache is cold, so its own start is part of the cold
// start it shortens: the full syspgo binary and its libraries read 20 MiB
// and take about 45 ms from a cold cache on the benchmark VM, before the
// first page of the plan is queued.
#include <nss.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/command.h"

int main(int argc, char** argv) {
  using namespace syspgo::cli;
  // Under sudo the invoking user's passwd entry and groups are looked up
  // (common/identity.h). A static binary cannot safely load the NSS modules
  // of the installed glibc (libnss_systemd crashed in getgrouplist here),
  // so this one reads /etc/passwd and /etc/group only, which glibc does
  // itself. A user known only to a directory service (LDAP, sssd) keeps
  // their primary group alone here; `syspgo prefetch` looks them up fully.
  __nss_configure_lookup("passwd", "files");
  __nss_configure_lookup("group", "files");
  if (argc >= 2 && !strcmp(argv[1], "--version")) {
    printf("syspgo-prefetch %s\n", SYSPGO_VERSION);
    return 0;
  }
  for (auto* c : Commands())
    if (!strcmp(c->name, "prefetch")) return RunCommand(*c, std::vector<std::string>(argv + 1, argv + argc));
  fprintf(stderr, "syspgo-prefetch: built without the prefetch command\n");
  return 1;
}
