//===- sqlite.cc - a thin RAII layer over SQLite --------------------------===//
#include "common/sqlite.h"

#include <unistd.h>

namespace syspgo {
namespace {

// A failed step names the database file: the error may reach a person far
// from where the statement was prepared (a damaged file shows up here).
std::string StepError(sqlite3* db, sqlite3_stmt* s) {
  const char* file = sqlite3_db_filename(db, "main");
  return std::string("database '") + (file ? file : "") + "': " + sqlite3_errmsg(db) + " in: " + sqlite3_sql(s);
}

}  // namespace

Stmt& Stmt::operator=(Stmt&& o) noexcept {
  if (this != &o) {
    if (s_) sqlite3_finalize(s_);
    db_ = o.db_;
    s_ = o.s_;
    o.s_ = nullptr;
  }
  return *this;
}

Stmt::~Stmt() {
  if (s_) sqlite3_finalize(s_);
}

bool Stmt::Step(Status* err) {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE && err)
    *err = MakeError(StepError(db_, s_), rc);
  return false;
}

Status Stmt::Run() {
  int rc = sqlite3_step(s_);
  sqlite3_reset(s_);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    return MakeError(StepError(db_, s_), rc);
  return {};
}

std::string Stmt::Text(int col) const {
  const unsigned char* t = sqlite3_column_text(s_, col);
  if (!t) return {};
  return std::string(reinterpret_cast<const char*>(t), sqlite3_column_bytes(s_, col));
}

Db& Db::operator=(Db&& o) noexcept {
  if (this != &o) {
    if (db_) sqlite3_close_v2(db_);
    db_ = o.db_;
    path_ = std::move(o.path_);
    o.db_ = nullptr;
  }
  return *this;
}

Db::~Db() {
  if (db_) sqlite3_close_v2(db_);
}

Result<Db> Db::Open(const std::string& path, int flags) {
  Db d;
  d.path_ = path;
  int rc = sqlite3_open_v2(path.c_str(), &d.db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = d.db_ ? sqlite3_errmsg(d.db_) : sqlite3_errstr(rc);
    return MakeError("cannot open database '" + path + "': " + msg, rc);
  }
  // Another writer (a second collector on the same database) may commit
  // batch after batch; SQLite's default handler sleeps up to 100 ms between
  // tries and can miss every gap. Polling each millisecond catches the
  // writer's gaps (Writer leaves one after each commit) within 60 s.
  sqlite3_busy_handler(d.db_, [](void*, int tries) -> int {
    if (tries >= 60000) return 0;
    usleep(1000);
    return 1;
  }, nullptr);
  sqlite3_extended_result_codes(d.db_, 1);
  return d;
}

Status Db::Exec(std::string_view sql) {
  std::string s(sql);
  char* msg = nullptr;
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &msg);
  if (rc != SQLITE_OK) {
    std::string m = msg ? msg : sqlite3_errstr(rc);
    sqlite3_free(msg);
    return MakeError("database '" + path_ + "': " + m, rc);
  }
  return {};
}

Result<Stmt> Db::Prepare(std::string_view sql) {
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &s, nullptr);
  if (rc != SQLITE_OK)
    return MakeError("database '" + path_ + "': " + sqlite3_errmsg(db_) + " preparing: " + std::string(sql), rc);
  return Stmt(db_, s);
}

Result<int64_t> Db::QueryInt(std::string_view sql) {
  auto st = Prepare(sql);
  if (!st) return st.error();
  Status err;
  if (!st->Step(&err)) {
    if (!err.ok()) return err.error();
    return MakeError("database '" + path_ + "': no result for: " + std::string(sql));
  }
  return st->Int(0);
}

}  // namespace syspgo
