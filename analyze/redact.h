//===- redact.h - a copy of a profile database that is safe to share ------===//
// A profile database records what ran and what it touched: command lines,
// argv, file paths, task names, the host name, the boot id, kernel symbols
// with their addresses (README.md, "Sharing a profile", lists every column).
// Redaction writes a new database where every text and blob value is
// removed, or, with hashing, replaced by a token that is the same for the
// same value everywhere in the file (so joins on paths still work), except
// in the columns known to hold only syspgo's own vocabulary (syscall and
// probe group names, exit reasons, build ids...). A column added to the
// schema later is redacted until it is added to that list: the safe side.
// The copy is made with VACUUM INTO twice, so no page of the result holds a
// deleted original value.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace syspgo {

struct RedactOptions {
  bool hash = false;           // tokens instead of empty values
  std::string salt;            // with hash: "" = random (tokens match only within this file)
  bool keep_kallsyms = false;  // keep the kernel symbol table (it reveals the kernel's address layout)
};

struct RedactReport {
  std::vector<std::string> columns;  // "table.column" redacted, sorted
  int64_t values = 0;                // values removed or replaced
  bool kallsyms_removed = false;
};

// Writes the redacted copy of profile database `in` to `out`, which must
// not exist. `in` is only read. Errors name the file and what to do.
Result<RedactReport> RedactProfile(const std::string& in, const std::string& out, const RedactOptions& options);

// Redacts `path` itself: the copy is written beside it and renamed over it.
Result<RedactReport> RedactProfileInPlace(const std::string& path, const RedactOptions& options);

// The token --hash gives `value` under `salt`: "h:" and 16 hex digits of
// SHA-256(salt, 0, value). Exposed for tests.
std::string RedactToken(const std::string& salt, const std::string& value);

}  // namespace syspgo
