//===- schema_test.cc - the profile database's identity and versioning ---===//
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "common/profile_db.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {


TEST(Schema, NewDatabaseHasIdentityVersionAndTables) {
  TempDir dir;
  std::string p = NewProfileDb(dir);
  Db d = OpenDb(p);
  EXPECT_EQ(QueryInt(d, "PRAGMA application_id"), kProfileApplicationId);
  EXPECT_EQ(QueryInt(d, "PRAGMA user_version"), kProfileSchemaVersion);
  EXPECT_EQ(QueryRows(d, "PRAGMA journal_mode"), std::vector<std::string>{"wal"});
  for (const char* t : {"run", "run_probe", "run_drop", "process", "thread", "exec", "file", "file_open", "file_io",
                        "mmap", "syscall_name", "stack"})
    EXPECT_EQ(QueryInt(d, std::string("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '") + t + "'"),
              1)
        << t;
  // Reopening appends: nothing is recreated.
  auto again = OpenProfileDb(p, DbMode::kCreateOrAppend);
  ASSERT_TRUE(again.ok()) << again.error().message;
}

TEST(Schema, NonDatabaseFileIsRefusedUntouched) {
  TempDir dir;
  std::string p = dir.File("text.db");
  std::ofstream(p) << "not sqlite at all, but longer than a header would be...........................................";
  std::string before = ReadAll(p);
  for (DbMode m : {DbMode::kCreateOrAppend, DbMode::kReadOnly}) {
    auto db = OpenProfileDb(p, m);
    ASSERT_FALSE(db.ok());
    EXPECT_NE(db.error().message.find("is not a syspgo profile database"), std::string::npos) << db.error().message;
  }
  EXPECT_EQ(ReadAll(p), before);
}

TEST(Schema, OtherSqliteDatabaseIsRefused) {
  TempDir dir;
  std::string p = dir.File("other.db");
  {
    auto db = Db::Open(p, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)").ok());
  }
  auto db = OpenProfileDb(p, DbMode::kCreateOrAppend);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.error().message.find("is an SQLite database but not a syspgo profile"), std::string::npos);
  Db d = OpenDb(p);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'run'"), 0);
}

TEST(Schema, NewerVersionIsRefused) {
  TempDir dir;
  std::string p = dir.File("future.db");
  {
    auto db = OpenProfileDb(p, DbMode::kCreateOrAppend);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Exec("PRAGMA user_version = " + std::to_string(kProfileSchemaVersion + 1)).ok());
  }
  auto db = OpenProfileDb(p, DbMode::kReadOnly);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.error().message.find("newer than this syspgo reads"), std::string::npos) << db.error().message;
}

TEST(Schema, MissingFileForReadingSaysHowToMakeOne) {
  auto db = OpenProfileDb("/nonexistent/x.db", DbMode::kReadOnly);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.error().message.find("syspgo collect -o /nonexistent/x.db"), std::string::npos);
}

// Every column in schemas/profile.sql says what it holds (STYLE.md #12).
TEST(Schema, EveryColumnIsDocumented) {
  std::istringstream in(ReadAll(std::string(SYSPGO_SOURCE_DIR) + "/schemas/profile.sql"));
  bool in_table = false;
  int columns = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("CREATE TABLE", 0) == 0) {
      in_table = true;
      continue;
    }
    if (in_table && line.rfind(")", 0) == 0) {
      in_table = false;
      continue;
    }
    if (!in_table || line.find("PRIMARY KEY (") != std::string::npos) continue;
    std::smatch m;
    if (std::regex_search(line, m, std::regex("^\\s+([a-z_]+) (INTEGER|TEXT|BLOB|REAL)"))) {
      ++columns;
      // Names whose meaning and unit the file's header states once.
      static const std::set<std::string> kConventional = {"run_id", "ts", "dur", "pid", "tid", "dev", "ino"};
      if (kConventional.count(m[1])) continue;
      EXPECT_NE(line.find("--"), std::string::npos) << "undocumented column: " << line;
    }
  }
  EXPECT_GT(columns, 50);
}

}  // namespace
}  // namespace syspgo::test
