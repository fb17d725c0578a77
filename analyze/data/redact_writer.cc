//===- redact_writer.cc - the statements `syspgo redact` writes with -----===//
#include "analyze/data/redact_writer.h"

#include "analyze/data/query.h"

namespace syspgo::data {
namespace {

constexpr char kTablesSql[] =
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name";
constexpr char kColumnsSql[] = "SELECT name FROM pragma_table_info(?1) ORDER BY cid";
constexpr char kCopyIntoSql[] = "VACUUM INTO ?1";
constexpr char kForgetSql[] = "PRAGMA journal_mode = DELETE; PRAGMA secure_delete = ON";
constexpr char kBeginSql[] = "BEGIN IMMEDIATE";
constexpr char kCommitSql[] = "COMMIT";
constexpr char kRollbackSql[] = "ROLLBACK";
constexpr char kClearKallsymsSql[] = "UPDATE kallsyms SET text = '' WHERE text != ''";

// An identifier quoted for SQL: table and column names cannot be bound.
std::string Quote(const std::string& name) {
  std::string q = "\"";
  for (char c : name) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

Result<std::vector<std::pair<std::string, std::string>>> ReadColumns(Db& db) {
  std::vector<std::string> tables;
  SYSPGO_TRY(Visit(db, "", kTablesSql, {}, [&](Stmt& s) { tables.push_back(s.Text(0)); }));
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& t : tables)
    SYSPGO_TRY(Visit(db, "", kColumnsSql, {t}, [&](Stmt& s) { out.emplace_back(t, s.Text(0)); }));
  return out;
}

Status CopyInto(Db& db, const std::string& path) {
  auto st = db.Prepare(kCopyIntoSql);
  if (!st) return st.error();
  st->Bind(1, std::string_view(path));
  return st->Run();
}

Status ForgetOriginals(Db& db) { return db.Exec(kForgetSql); }

Result<RedactWriter> RedactWriter::Begin(Db& db) {
  SYSPGO_TRY(db.Exec(kBeginSql));
  return RedactWriter(&db);
}

RedactWriter::~RedactWriter() {
  if (db_) (void)db_->Exec(kRollbackSql);
}

Status RedactWriter::RewriteColumn(const std::string& table, const std::string& column) {
  return db_->Exec("UPDATE " + Quote(table) + " SET " + Quote(column) + " = syspgo_redact(" + Quote(column) +
                   ") WHERE typeof(" + Quote(column) + ") IN ('text', 'blob')");
}

Result<int64_t> RedactWriter::ClearKallsyms() {
  if (!HasTable(*db_, "kallsyms")) return int64_t{0};
  SYSPGO_TRY(db_->Exec(kClearKallsymsSql));
  return int64_t{sqlite3_changes(db_->raw())};
}

Status RedactWriter::Commit() {
  SYSPGO_TRY(db_->Exec(kCommitSql));
  db_ = nullptr;
  return {};
}

}  // namespace syspgo::data
