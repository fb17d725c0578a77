//===- migration_test.cc - older, damaged and truncated profile databases ===//
// What tests/schema_test.cc does not cover: a database of the frozen schema
// version 1 (schemas/frozen/) is opened, migrated and used by the current
// syspgo; a database claiming version 0 is refused by the migration ladder;
// a truncated database is refused with an error that names the file and
// says what is wrong, and is left as it was.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "analyze/files.h"
#include "analyze/run.h"
#include "common/profile_db.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {


std::string Source(const std::string& rel) { return std::string(SYSPGO_SOURCE_DIR) + "/" + rel; }

// A database made the way syspgo 0.1.0 made one at schema version 1.
std::string FrozenV1Db(const TempDir& dir, bool with_fixture) {
  std::string p = dir.File("v1.db");
  auto db = Db::Open(p, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  EXPECT_TRUE(db.ok());
  if (!db.ok()) return p;
  Status st = db->Exec(ReadAll(Source("schemas/frozen/profile_v1.sql")));
  EXPECT_TRUE(st.ok()) << st.error().message;
  if (with_fixture) {
    st = db->Exec(ReadAll(std::string(SYSPGO_TEST_DATA) + "/files_fixture.sql"));
    EXPECT_TRUE(st.ok()) << st.error().message;
  }
  return p;
}

// type/name -> normalized CREATE statement of every schema object.
std::map<std::string, std::string> SchemaObjects(const std::string& path) {
  std::map<std::string, std::string> out;
  Db d = OpenDb(path);
  for (const auto& row : QueryRows(d, "SELECT type || ' ' || name, COALESCE(sql, '') FROM sqlite_master "
                                      "WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")) {
    size_t tab = row.find('\t');
    std::string sql;
    for (char c : row.substr(tab + 1))  // whitespace and comments' layout do not matter
      if (!isspace(static_cast<unsigned char>(c)) || (!sql.empty() && sql.back() != ' ')) sql += isspace(c) ? ' ' : c;
    out[row.substr(0, tab)] = sql;
  }
  return out;
}

TEST(Migration, FrozenVersion1DatabaseOpensAndIsUsable) {
  TempDir dir;
  std::string p = FrozenV1Db(dir, true);
  {
    auto db = OpenProfileDb(p, DbMode::kReadOnly);
    ASSERT_TRUE(db.ok()) << db.error().message;
  }
  {
    Db d = OpenDb(p);
    EXPECT_EQ(QueryInt(d, "PRAGMA user_version"), kProfileSchemaVersion);
    EXPECT_EQ(QueryInt(d, "PRAGMA application_id"), kProfileApplicationId);
  }
  auto a = RunCmd({SyspgoBin(), "analyze", p, "files", "--run", "1"});
  EXPECT_EQ(a.status, 0) << a.err;
  EXPECT_NE(a.out.find("/data/ckpt.bin"), std::string::npos) << a.out;
  // And collect appends to it, with every probe group.
  auto c = RunCmd({SyspgoBin(), "collect", "-o", p, "--", "true"});
  EXPECT_EQ(c.status, 0) << c.err;
  Db d = OpenDb(p);
  EXPECT_EQ(QueryRows(d, "SELECT id, status, exit_reason FROM run ORDER BY id"),
            (std::vector<std::string>{"1\tcomplete\t", "2\tcomplete\t", "3\tcomplete\texited"}));
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM run_probe WHERE run_id = 3 AND attached = 0"), 0)
      << "a probe group could not write into a migrated database";
  EXPECT_EQ(QueryRows(d, "PRAGMA integrity_check"), std::vector<std::string>{"ok"});
  // Version 2's lookups: the loader's access("/etc/ld.so.preload") of
  // `true`, named like in a new database.
  EXPECT_EQ(QueryRows(d, "SELECT n.name FROM file_lookup l JOIN syscall_name n USING (nr) WHERE l.run_id = 3 "
                         "AND l.path = '/etc/ld.so.preload'"),
            std::vector<std::string>{"access"});
  TempDir fresh_dir;
  ASSERT_TRUE(OpenProfileDb(fresh_dir.File("fresh.db"), DbMode::kCreateOrAppend).ok());
  Db fresh = OpenDb(fresh_dir.File("fresh.db"));
  EXPECT_EQ(QueryRows(d, "SELECT nr, name FROM syscall_name ORDER BY nr"),
            QueryRows(fresh, "SELECT nr, name FROM syscall_name ORDER BY nr"));
}

// Migrating writes to the file: a user who may only read an older database
// is told so, and the file stays as it was.
TEST(Migration, ReadOnlyOlderDatabaseSaysItNeedsWriteAccessAndStaysUntouched) {
  TempDir dir;
  chmod(dir.path().c_str(), 0755);
  std::string p = FrozenV1Db(dir, true);
  chmod(p.c_str(), 0644);
  std::string before = ReadAll(p);
  auto a = RunCmd({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", SyspgoBin(),
                   "analyze", p, "files"});
  EXPECT_EQ(a.status, 1) << a.out;
  EXPECT_NE(a.err.find("'" + p + "' has schema version 1 and is migrated to " +
                       std::to_string(kProfileSchemaVersion) + " when first opened, which needs write access"),
            std::string::npos)
      << a.err;
  EXPECT_EQ(ReadAll(p), before);
  // Its owner migrates it by opening it once; then anyone may read it.
  ASSERT_EQ(RunCmd({SyspgoBin(), "analyze", p, "files"}).status, 0);
  auto b = RunCmd({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", SyspgoBin(),
                   "analyze", p, "files", "--run", "1"});
  EXPECT_EQ(b.status, 0) << b.err;
  EXPECT_NE(b.out.find("/data/ckpt.bin"), std::string::npos) << b.out;
}

// The ladder must end where a fresh database starts: otherwise a table or
// column added to schemas/profile.sql without a new version and migration
// is missing from every older database.
TEST(Migration, FrozenVersion1MigratesToTheSchemaOfAFreshDatabase) {
  TempDir dir;
  std::string old_db = FrozenV1Db(dir, false), fresh = dir.File("fresh.db");
  {
    auto a = OpenProfileDb(old_db, DbMode::kCreateOrAppend);
    ASSERT_TRUE(a.ok()) << a.error().message;
    auto b = OpenProfileDb(fresh, DbMode::kCreateOrAppend);
    ASSERT_TRUE(b.ok()) << b.error().message;
  }
  auto migrated = SchemaObjects(old_db), want = SchemaObjects(fresh);
  std::string diff;
  for (const auto& [name, sql] : want)
    if (!migrated.count(name)) diff += "  missing after migration: " + name + "\n";
    else if (migrated[name] != sql) diff += "  differs: " + name + "\n    migrated: " + migrated[name] + "\n    fresh:    " + sql + "\n";
  for (const auto& [name, sql] : migrated)
    if (!want.count(name)) diff += "  only in the migrated database: " + name + "\n";
  EXPECT_EQ(diff, "") << "schemas/profile.sql changed without a schema version: bump kProfileSchemaVersion, add the "
                         "migration from the previous version to common/profile_db.cc, and freeze the new version as "
                         "schemas/frozen/profile_v<N>.sql.\n"
                      << diff;
}

TEST(Migration, VersionZeroIsRefusedByTheLadderAndLeftUntouched) {
  TempDir dir;
  std::string p = dir.File("v0.db");
  {
    auto db = Db::Open(p, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Exec("PRAGMA application_id = " + std::to_string(kProfileApplicationId) +
                         "; CREATE TABLE run (id INTEGER PRIMARY KEY); INSERT INTO run (id) VALUES (1)")
                    .ok());
  }
  std::string before = ReadAll(p);
  for (DbMode m : {DbMode::kReadOnly, DbMode::kReadWrite, DbMode::kCreateOrAppend}) {
    auto db = OpenProfileDb(p, m);
    ASSERT_FALSE(db.ok());
    EXPECT_NE(db.error().message.find("'" + p + "' has no schema version"), std::string::npos) << db.error().message;
  }
  EXPECT_EQ(ReadAll(p), before);
  auto a = RunCmd({SyspgoBin(), "analyze", p, "files"});
  EXPECT_EQ(a.status, 1);
  EXPECT_NE(a.err.find(p), std::string::npos) << a.err;
}

// A profile of a real collection, cut at points inside the SQLite header,
// inside the first page, and among the data pages.
TEST(DbInput, TruncatedDatabaseIsRefusedNamingTheFile) {
  TempDir dir;
  std::string whole = dir.File("whole.db");
  auto c = RunCmd({SyspgoBin(), "collect", "-o", whole, "--probes", "fileio", "--", "sh", "-c",
                   "dd if=/dev/zero of=" + dir.File("x") + " bs=512 count=3000 2>/dev/null"});
  ASSERT_EQ(c.status, 0) << c.err;
  std::string bytes = ReadAll(whole);
  ASSERT_GT(bytes.size(), 200000u);
  for (size_t cut : {size_t{16}, size_t{99}, size_t{100}, size_t{4096}, bytes.size() / 2, bytes.size() - 4096}) {
    std::string p = dir.File("cut" + std::to_string(cut) + ".db");
    std::ofstream(p, std::ios::binary) << bytes.substr(0, cut);
    std::string error;
    auto db = OpenProfileDb(p, DbMode::kReadOnly);
    if (!db.ok()) {
      error = db.error().message;
    } else {
      // SQLite reads pages lazily: the damage shows when a query reaches it.
      auto run = ResolveRun(*db, 0);
      if (!run.ok()) {
        error = run.error().message;
      } else {
        auto files = FileSummary(*db, FilesQuery{run->id, true, 0});
        EXPECT_FALSE(files.ok()) << "a database cut to " << cut << " bytes was read as if whole";
        if (!files.ok()) error = files.error().message;
      }
    }
    EXPECT_NE(error.find(p), std::string::npos) << "cut at " << cut << ": the error does not name the file: " << error;
    EXPECT_TRUE(error.find("malformed") != std::string::npos || error.find("truncated") != std::string::npos)
        << "cut at " << cut << ": the error does not say the file is damaged: " << error;
    EXPECT_EQ(ReadAll(p), bytes.substr(0, cut)) << "cut at " << cut << ": the damaged file was changed";
    auto a = RunCmd({SyspgoBin(), "analyze", p, "files"});
    EXPECT_EQ(a.status, 1) << "cut at " << cut << ": " << a.out;
    EXPECT_NE(a.err.find(p), std::string::npos) << "cut at " << cut << ": " << a.err;
  }
}

}  // namespace
}  // namespace syspgo::test
