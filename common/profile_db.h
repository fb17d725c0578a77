//===- profile_db.h - open, create and migrate a profile database -------===//
// Every stage opens the profile database through here, so the checks that
// keep a user's files safe live in one place: a file that is not a syspgo
// database is refused untouched, a newer schema is refused, an older one is
// migrated in one transaction.
#pragma once
#include <cstdint>
#include <string>

#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

inline constexpr int kProfileApplicationId = 0x5350474F;  // "SPGO"
inline constexpr int kProfileSchemaVersion = 4;

enum class DbMode {
  kReadOnly,       // analyze/optimize: the file must exist and be a profile database
  kReadWrite,      // the file must exist and be a profile database
  kCreateOrAppend  // collect: create it, or append a run to an existing one
};

// Opens `path` as a profile database. Errors name the file and what to do.
Result<Db> OpenProfileDb(const std::string& path, DbMode mode);

// True if a run marked 'running' by collector `pid` on boot `boot_id` has
// lost its collector (it was killed, or the machine rebooted).
bool CollectorGone(int64_t pid, const std::string& boot_id);
std::string CurrentBootId();

// The schema text (schemas/profile.sql), embedded at build time.
extern const char kProfileSchemaSql[];

}  // namespace syspgo
