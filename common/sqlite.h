//===- sqlite.h - a thin RAII layer over SQLite ---------------------------===//
// Db owns a connection, Stmt a prepared statement. Errors come back as
// Status values that name the database file and the failing statement.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace syspgo {

class Stmt {
 public:
  Stmt() = default;
  Stmt(sqlite3* db, sqlite3_stmt* s) : db_(db), s_(s) {}
  Stmt(Stmt&& o) noexcept : db_(o.db_), s_(o.s_) { o.s_ = nullptr; }
  Stmt& operator=(Stmt&& o) noexcept;
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // Bind by 1-based index. Text is copied by SQLite (SQLITE_TRANSIENT).
  Stmt& Bind(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); return *this; }
  Stmt& Bind(int i, double v) { sqlite3_bind_double(s_, i, v); return *this; }
  Stmt& Bind(int i, std::string_view v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& BindNull(int i) { sqlite3_bind_null(s_, i); return *this; }
  // Steps once; true if a row is available, false when done. Errors -> *err.
  bool Step(Status* err = nullptr);
  // Runs to completion (for INSERT/UPDATE) and resets for reuse.
  Status Run();
  void Reset() { sqlite3_reset(s_); }
  int64_t Int(int col) const { return sqlite3_column_int64(s_, col); }
  double Real(int col) const { return sqlite3_column_double(s_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
  std::string Text(int col) const;
  sqlite3_stmt* raw() { return s_; }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* s_ = nullptr;
};

class Db {
 public:
  Db() = default;
  Db(Db&& o) noexcept : db_(o.db_), path_(std::move(o.path_)) { o.db_ = nullptr; }
  Db& operator=(Db&& o) noexcept;
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Opens (flags as sqlite3_open_v2) with a busy timeout, so two writers wait
  // for each other instead of failing.
  static Result<Db> Open(const std::string& path, int flags);

  Status Exec(std::string_view sql);
  Result<Stmt> Prepare(std::string_view sql);
  // Runs a query that returns one integer (e.g. a PRAGMA).
  Result<int64_t> QueryInt(std::string_view sql);
  int64_t LastInsertId() const { return sqlite3_last_insert_rowid(db_); }
  const std::string& path() const { return path_; }
  sqlite3* raw() { return db_; }
  std::string ErrorText() const { return db_ ? sqlite3_errmsg(db_) : "no database"; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace syspgo
