//===- cmd_redact.cc - `syspgo redact`: a profile that is safe to share ---===//
#include <cstdio>

#include "analyze/redact.h"
#include "cli/command.h"

namespace syspgo::cli {
namespace {

const char kHelp[] = R"help(usage: syspgo redact DB [-o OUT] [--hash [--salt S]] [--keep-kallsyms] [--in-place]

Writes a copy of profile database DB without command lines, argv, file
paths, task names, the host name, the boot id and the kernel symbol table,
so that it can be shared. Numbers (times, sizes, counts, devices, inodes,
addresses) are kept, so every analysis still runs. DB is only read.

Output:
  -o, --output OUT   the redacted copy (default: DB with .redacted.db in place of .db);
                     never overwritten: it must not exist
  --in-place         replace DB itself with its redacted copy

What replaces a value:
  (default)          nothing: text becomes '', blobs become empty
  --hash             a token, h: and 16 hex digits, equal for equal values, so
                     joins on paths and names still work
  --salt S           with --hash: tokens from the same salt match across files
                     (default: a random salt; tokens match within one file only)
  --keep-kallsyms    keep the kernel symbol table (reveals the kernel's address
                     layout; needed to name kernel frames)

Examples:
  syspgo redact run.db -o share.db
  syspgo redact run.db --hash --salt "$(cat team.salt)" -o share.db
)help";

int Redact(const std::vector<std::string>& args) {
  std::string in, out;
  bool in_place = false;
  RedactOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      printf("%s", kHelp);
      return 0;
    } else if (a == "-o" || a == "--output") {
      if (++i >= args.size()) return UsageError(a + " needs a file path");
      out = args[i];
    } else if (a == "--salt") {
      if (++i >= args.size() || args[i].empty()) return UsageError("--salt needs a non-empty value");
      options.salt = args[i];
    } else if (a == "--hash") {
      options.hash = true;
    } else if (a == "--keep-kallsyms") {
      options.keep_kallsyms = true;
    } else if (a == "--in-place") {
      in_place = true;
    } else if (!a.empty() && a[0] == '-') {
      return UsageError("unknown option '" + a + "'; see 'syspgo redact --help'");
    } else if (in.empty()) {
      in = a;
    } else {
      return UsageError("one database at a time: '" + in + "' and '" + a + "' given");
    }
  }
  if (in.empty()) return UsageError("no database: syspgo redact DB [-o OUT]");
  if (!options.salt.empty() && !options.hash) return UsageError("--salt only applies with --hash");
  if (in_place && !out.empty()) return UsageError("give either -o OUT or --in-place, not both");
  if (!in_place && out.empty())
    out = (in.size() > 3 && in.compare(in.size() - 3, 3, ".db") == 0 ? in.substr(0, in.size() - 3) : in) +
          ".redacted.db";

  auto r = in_place ? RedactProfileInPlace(in, options) : RedactProfile(in, out, options);
  if (!r) return Fail(r.error().message);
  std::string cols;
  for (const auto& c : r->columns) cols += (cols.empty() ? "" : ", ") + c;
  fprintf(stderr, "syspgo: redacted %lld values (%s) in %s%s; wrote %s\n", static_cast<long long>(r->values),
          options.hash ? "hashed" : "removed", cols.empty() ? "no column" : cols.c_str(),
          r->kallsyms_removed ? ", and the kernel symbol table" : "", in_place ? in.c_str() : out.c_str());
  return 0;
}

const Command kRedact("redact", "copy a profile DB without paths, command lines and host names, to share it", &Redact);

}  // namespace
}  // namespace syspgo::cli
