//===- migration_test.cc - older, damaged and truncated profile databases ===//
// What tests/schema_test.cc does not cover: a database of the frozen schema
// version 1 (schemas/frozen/) is opened, migrated and used by the current
// syspgo; every frozen version migrates to a fresh database's schema;
// version 4's settings_json, whatever it holds, becomes version 5's columns
// and rows; version 5's processes keep their rows and have no cgroup or
// container ('') in version 6; a database claiming version 0 is refused by the migration
// ladder; a truncated database is refused with an error that names the file
// and says what is wrong, and is left as it was.
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

// A database made the way syspgo made one at schema `version` (syspgo
// 0.1.0 for version 1), with files_fixture.sql's rows if `with_fixture`.
std::string FrozenDb(const TempDir& dir, int version, bool with_fixture) {
  std::string p = dir.File("v" + std::to_string(version) + ".db");
  auto db = Db::Open(p, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  EXPECT_TRUE(db.ok());
  if (!db.ok()) return p;
  Status st = db->Exec(ReadAll(Source("schemas/frozen/profile_v" + std::to_string(version) + ".sql")) +
                       "\nPRAGMA application_id = " + std::to_string(kProfileApplicationId) +
                       ";\nPRAGMA user_version = " + std::to_string(version));
  EXPECT_TRUE(st.ok()) << st.error().message;
  if (with_fixture) {
    // The fixture is the current schema's, whose run has no settings_json
    // (NOT NULL without a default before version 5): its runs go into a
    // temporary table in run's place, then into run with '{}', the
    // defaults, as the fixture leaves the settings at theirs.
    const std::string columns =
        "id, command, argv_json, target_pid, attached, host, kernel_release, syspgo_version, start_realtime_ns, "
        "start_monotonic_ns, status, end_ts";
    st = db->Exec("CREATE TEMP TABLE run AS SELECT * FROM main.run WHERE 0;\n" + TestData("files_fixture.sql") +
                  "INSERT INTO main.run (" + columns + ", settings_json) SELECT " + columns +
                  ", '{}' FROM temp.run; DROP TABLE temp.run;");
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
  std::string p = FrozenDb(dir, 1, true);
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
  Db fresh = OpenDb(NewProfileDb(fresh_dir, "fresh.db"));
  EXPECT_EQ(QueryRows(d, "SELECT nr, name FROM syscall_name ORDER BY nr"),
            QueryRows(fresh, "SELECT nr, name FROM syscall_name ORDER BY nr"));
}

// Migrating writes to the file: a user who may only read an older database
// is told so, and the file stays as it was.
TEST(Migration, ReadOnlyOlderDatabaseSaysItNeedsWriteAccessAndStaysUntouched) {
  TempDir dir;
  chmod(dir.path().c_str(), 0755);
  std::string p = FrozenDb(dir, 1, true);
  chmod(p.c_str(), 0644);
  std::string before = ReadAll(p);
  EXPECT_TRUE(FailedWith(RunCmd({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
                                 SyspgoBin(), "analyze", p, "files"}),
                         1,
                         "'" + p + "' has schema version 1 and is migrated to " +
                             std::to_string(kProfileSchemaVersion) + " when first opened, which needs write access"));
  EXPECT_EQ(ReadAll(p), before);
  // Its owner migrates it by opening it once; then anyone may read it.
  ASSERT_EQ(RunCmd({SyspgoBin(), "analyze", p, "files"}).status, 0);
  auto b = RunCmd({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", SyspgoBin(),
                   "analyze", p, "files", "--run", "1"});
  EXPECT_EQ(b.status, 0) << b.err;
  EXPECT_NE(b.out.find("/data/ckpt.bin"), std::string::npos) << b.out;
}

// The ladder must end where a fresh database starts, from every frozen
// version: otherwise a table or column added to schemas/profile.sql without
// a new version and migration is missing from every older database.
TEST(Migration, EveryFrozenVersionMigratesToTheSchemaOfAFreshDatabase) {
  TempDir dir;
  std::string fresh = NewProfileDb(dir, "fresh.db");
  auto want = SchemaObjects(fresh);
  for (int version = 1; version < kProfileSchemaVersion; ++version) {
    std::string old_db = FrozenDb(dir, version, false);
    {
      auto a = OpenProfileDb(old_db, DbMode::kCreateOrAppend);
      ASSERT_TRUE(a.ok()) << a.error().message;
    }
    auto migrated = SchemaObjects(old_db);
    std::string diff;
    for (const auto& [name, sql] : want)
      if (!migrated.count(name)) diff += "  missing after migration: " + name + "\n";
      else if (migrated[name] != sql) diff += "  differs: " + name + "\n    migrated: " + migrated[name] + "\n    fresh:    " + sql + "\n";
    for (const auto& [name, sql] : migrated)
      if (!want.count(name)) diff += "  only in the migrated database: " + name + "\n";
    EXPECT_EQ(diff, "") << "from version " << version << ": schemas/profile.sql changed without a schema version: "
                        << "bump kProfileSchemaVersion, add the migration from the previous version to "
                           "common/profile_db.cc, and freeze the new version as schemas/frozen/profile_v<N>.sql.\n"
                        << diff;
  }
}

// A version 4 database whose runs hold `settings` in settings_json, run i+1
// the i-th, each bound as text.
std::string Version4Db(const TempDir& dir, const std::vector<std::string>& settings) {
  std::string p = FrozenDb(dir, 4, false);
  auto db = Db::Open(p, SQLITE_OPEN_READWRITE);
  EXPECT_TRUE(db.ok());
  if (!db.ok()) return p;
  auto st = db->Prepare(
      "INSERT INTO run (command, argv_json, target_pid, attached, host, kernel_release, syspgo_version, "
      "start_realtime_ns, start_monotonic_ns, command_start_ts, end_ts, status, collector_pid, boot_id, exit_reason, "
      "exit_code, settings_json, events_recorded, events_dropped) VALUES ('cmd', '[\"cmd\"]', 100, 0, 'h', 'k', "
      "'v', 1700000000000000000, 5000, 10, 2000, 'complete', 42, 'boot', 'exited', 3, ?1, 7, 1)");
  EXPECT_TRUE(st.ok()) << st.error().message;
  if (!st.ok()) return p;
  for (const std::string& s : settings) EXPECT_TRUE(st->Bind(1, s).Run().ok());
  return p;
}

// What each run's settings_json said is in its columns and rows, exactly;
// whatever a member held that the reader cannot take gives its default;
// the rest of each run is as it was.
TEST(Migration, Version4SettingsJsonBecomesColumnsAndRows) {
  TempDir dir;
  std::string p = Version4Db(
      dir, {R"({"probes":["proc","fileio","pagecache"],"ringbuf_bytes":2097152,"memory_budget_bytes":100663296,)"
            R"("freq_hz":999,"offcpu_min_ns":1000000,"irq_min_ns":100000,"detail":"lean","cold":true,)"
            R"("no_readahead":true,"collector_files":[[2049,1234],[2049,99]],"kernel_build_id":"ab12",)"
            R"("vdso_build_id":"cd34","damon":[{"path":"kdamonds/0/contexts/0/schemes/1","ops":"paddr",)"
            R"("min_age":6,"aggr_us":5000000},{"path":"damon_reclaim","min_age_us":120000000}]})",
            "{}", R"({"damon": []})", "not json", "",
            R"({"freq_hz": -5, "offcpu_min_ns": "1000", "cold": 1, "probes": ["cpu", 7, null], "detail": ["lean"],)"
            R"( "collector_files": [[1, 2], [3], "x", [-1, 4]], "damon": [{"path": 3, "min_age": -9}, 5],)"
            R"( "ringbuf_bytes": 18446744073709551615})"});
  // Values SQLite holds that are not text at all.
  ASSERT_EQ(ExecSql(p, "INSERT INTO run SELECT 7, command, argv_json, target_pid, attached, host, kernel_release, "
                       "syspgo_version, start_realtime_ns, start_monotonic_ns, command_start_ts, end_ts, status, "
                       "collector_pid, boot_id, exit_reason, exit_code, X'7B80FF00', events_recorded, events_dropped "
                       "FROM run WHERE id = 1; UPDATE run SET settings_json = 12 WHERE id = 5"),
            "");
  std::vector<std::string> before;
  {
    Db d = OpenDb(p);
    before = QueryRows(d, "SELECT * FROM run ORDER BY id");
  }
  {
    auto db = OpenProfileDb(p, DbMode::kReadWrite);
    ASSERT_TRUE(db.ok()) << db.error().message;
  }
  Db d = OpenDb(p);
  EXPECT_EQ(QueryInt(d, "PRAGMA user_version"), kProfileSchemaVersion);
  EXPECT_EQ(QueryRows(d, "SELECT id, detail, ringbuf_bytes, memory_budget_bytes, cpu_freq_hz, offcpu_min_ns, "
                         "irq_min_ns, cold, no_readahead, kernel_build_id, vdso_build_id, damon_read FROM run "
                         "ORDER BY id"),
            (std::vector<std::string>{
                "1\tlean\t2097152\t100663296\t999\t1000000\t100000\t1\t1\tab12\tcd34\t1",
                "2\t\t0\t0\t0\t0\t0\t0\t0\t\t\t0",
                "3\t\t0\t0\t0\t0\t0\t0\t0\t\t\t1",
                "4\t\t0\t0\t0\t0\t0\t0\t0\t\t\t0",
                "5\t\t0\t0\t0\t0\t0\t0\t0\t\t\t0",
                "6\t\t0\t0\t0\t0\t0\t0\t0\t\t\t1",
                "7\t\t0\t0\t0\t0\t0\t0\t0\t\t\t0",
            }));
  EXPECT_EQ(QueryRows(d, "SELECT run_id, position, probe_group FROM run_setting_probe ORDER BY run_id, position"),
            (std::vector<std::string>{"1\t0\tproc", "1\t1\tfileio", "1\t2\tpagecache", "6\t0\tcpu"}));
  EXPECT_EQ(QueryRows(d, "SELECT run_id, position, dev, ino FROM run_collector_file ORDER BY run_id, position"),
            (std::vector<std::string>{"1\t0\t2049\t1234", "1\t1\t2049\t99", "6\t0\t1\t2"}));
  EXPECT_EQ(QueryRows(d, "SELECT run_id, position, path, ops, min_age, aggr_us, min_age_us FROM run_damon_scheme "
                         "ORDER BY run_id, position"),
            (std::vector<std::string>{"1\t0\tkdamonds/0/contexts/0/schemes/1\tpaddr\t6\t5000000\t-1",
                                      "1\t1\tdamon_reclaim\t\t-1\t-1\t120000000", "6\t0\t\t\t-1\t-1\t-1"}));
  // Every other column kept its value: the rows as before, settings_json
  // left out (its place, before events_recorded, holds the new columns).
  std::vector<std::string> after = QueryRows(
      d, "SELECT id, command, argv_json, target_pid, attached, host, kernel_release, syspgo_version, "
         "start_realtime_ns, start_monotonic_ns, command_start_ts, end_ts, status, collector_pid, boot_id, "
         "exit_reason, exit_code, events_recorded, events_dropped FROM run ORDER BY id");
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) {
    std::string row = before[i];
    size_t events = row.rfind('\t', row.rfind('\t') - 1), settings = row.rfind('\t', events - 1);
    EXPECT_EQ(after[i], row.substr(0, settings) + row.substr(events)) << before[i];
  }
  // And the analyses read them.
  auto settings = ReadRunSettings(d, 1);
  ASSERT_TRUE(settings.ok()) << settings.error().message;
  EXPECT_EQ(settings->collector_files, (std::vector<std::pair<uint64_t, uint64_t>>{{2049, 1234}, {2049, 99}}));
  ASSERT_TRUE(settings->damon.has_value());
  EXPECT_EQ(settings->damon->size(), 2u);
}

TEST(Migration, Version5ProcessesKeepTheirRowsWithoutACgroup) {
  TempDir dir;
  std::string p = FrozenDb(dir, 5, false);
  ASSERT_EQ(ExecSql(p, "INSERT INTO process (run_id, pid, ppid, comm, exe, argv, start_ts, exit_ts, exit_code) "
                       "VALUES (1, 10, 1, 'app', '/bin/app', 'app -x', 5, 9, 0), (1, 11, 10, 'kid', '', '', 6, "
                       "NULL, NULL)"),
            "");
  {
    auto db = OpenProfileDb(p, DbMode::kReadWrite);
    ASSERT_TRUE(db.ok()) << db.error().message;
  }
  Db d = OpenDb(p);
  EXPECT_EQ(QueryInt(d, "PRAGMA user_version"), kProfileSchemaVersion);
  EXPECT_EQ(QueryRows(d, "SELECT run_id, pid, ppid, comm, exe, argv, start_ts, COALESCE(exit_ts, -1), "
                         "COALESCE(exit_code, -1), cgroup, container FROM process ORDER BY pid"),
            (std::vector<std::string>{"1\t10\t1\tapp\t/bin/app\tapp -x\t5\t9\t0\t\t",
                                      "1\t11\t10\tkid\t\t\t6\t-1\t-1\t\t"}));
}

// A migration that fails rolls back: the file is as it was, and the error
// names it and says so. This version 4 database lacks run (a database may
// hold fewer tables than its schema), so the rebuild of run fails.
TEST(Migration, FailedMigrationLeavesTheFileUnchanged) {
  TempDir dir;
  std::string p = Version4Db(dir, {});
  ASSERT_EQ(ExecSql(p, "DROP TABLE run"), "");
  std::string before = ReadAll(p);
  auto db = OpenProfileDb(p, DbMode::kReadWrite);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.error().message.find("cannot migrate '" + p + "' from schema version 4: "), std::string::npos)
      << db.error().message;
  EXPECT_NE(db.error().message.find("The file is unchanged."), std::string::npos) << db.error().message;
  EXPECT_EQ(ReadAll(p), before);
  Db d = OpenDb(p);
  EXPECT_EQ(QueryInt(d, "PRAGMA user_version"), 4);
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
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "analyze", p, "files"}), 1, p));
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
    EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "analyze", p, "files"}), 1, p)) << "cut at " << cut;
  }
}

}  // namespace
}  // namespace syspgo::test
