//===- cmd_redact.cc - `syspgo redact`: a profile that is safe to share ---===//
#include <cstdio>

#include "analyze/redact.h"
#include "cli/command.h"
#include "cli/options.h"

namespace syspgo::cli {
namespace {

const char kAbout[] = R"(usage: syspgo redact DB [-o OUT] [--hash [--salt S]] [--keep-kallsyms] [--in-place]

Writes a copy of profile database DB without command lines, argv, file
paths, task names, the host name, the boot id and the kernel symbol table,
so that it can be shared. Numbers (times, sizes, counts, devices, inodes,
addresses) are kept, so every analysis still runs. DB is only read.
)";

const char kExamples[] = R"help(Examples:
  syspgo redact run.db -o share.db
  syspgo redact run.db --hash --salt "$(cat team.salt)" -o share.db
)help";

int Redact(const std::vector<std::string>& args) {
  std::string in, out;
  bool in_place = false;
  RedactOptions options;
  auto app = NewApp("syspgo redact", kAbout, kExamples);
  app->add_option("db", in, "the profile database");
  app->option_defaults()->group("Output");
  app->add_option("-o,--output", out,
                  "the redacted copy (default: DB with .redacted.db in place of .db); never overwritten: it must "
                  "not exist")
      ->type_name("OUT");
  app->add_flag("--in-place", in_place, "replace DB itself with its redacted copy");
  app->option_defaults()->group("What replaces a value (by default nothing: text becomes '', blobs become empty)");
  app->add_flag("--hash", options.hash,
                "a token, h: and 16 hex digits, equal for equal values, so joins on paths and names still work");
  app->add_option("--salt", options.salt,
                  "with --hash: tokens from the same salt match across files (default: a random salt; tokens match "
                  "within one file only)")
      ->type_name("S")
      ->check(NonEmpty("a non-empty value"));
  app->add_flag("--keep-kallsyms", options.keep_kallsyms,
                "keep the kernel symbol table (reveals the kernel's address layout; needed to name kernel frames)");
  if (auto exit = Parse(*app, args)) return *exit;
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
