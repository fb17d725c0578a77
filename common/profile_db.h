//===- profile_db.h - open, create and migrate a profile database -------===//
// Every stage opens the profile database through here, so the checks that
// keep a user's files safe live in one place: a file that is not a syspgo
// database is refused untouched, a newer schema is refused, an older one is
// migrated in one transaction.
#pragma once
#include <cstdint>
#include <string>

#include "common/result.h"
#include "common/run_settings.h"
#include "common/sqlite.h"

namespace syspgo {

inline constexpr int kProfileApplicationId = 0x5350474F;  // "SPGO"
inline constexpr int kProfileSchemaVersion = 6;

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

// Stores what run `run_id` (a row of run) was recorded with: its columns of
// run and its rows of the lists (run_setting_probe, run_collector_file,
// run_damon_scheme). The one writer: collect for a new run, and the
// migration to schema version 5 for the settings_json of older ones.
Status WriteRunSettings(Db& db, int64_t run_id, const RunSettings& s);

// The schema text (schemas/profile.sql), embedded at build time, and the
// frozen version 4 (schemas/frozen/profile_v4.sql), the last whose run
// table kept its settings as JSON, and version 5, the last whose process
// rows lacked their cgroup.
extern const char kProfileSchemaSql[];
extern const char kProfileSchemaV4Sql[];
extern const char kProfileSchemaV5Sql[];

}  // namespace syspgo
