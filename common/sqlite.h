//===- sqlite.h - a thin RAII layer over SQLite ---------------------------===//
// Db owns a connection, Stmt a prepared statement. Errors come back as
// Status values that name the database file and the failing statement.
//
// A profile database can come from someone else, and syspgo reads it as
// root: every connection is opened as SQLite's security guide advises for
// untrusted files (defensive mode, no trust in functions the schema calls,
// no triggers, no symbolic links in the path), and the work one statement
// may do and the memory SQLite may take are bounded (kMaxStatementSteps,
// kSqliteHeapLimit), so that SQL planted in a file ends with an error
// instead of running until someone kills it.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>

#include "common/result.h"

namespace syspgo {

// Virtual-machine steps one statement may take (counted across all its
// sqlite3_step calls until it is reset): minutes of one core at the tens
// of millions of steps a second SQLite runs. A whole report of the largest
// runs measured (bench/RESULTS.md, "analyses on large runs") takes seconds,
// every query included: no statement of a real analysis comes near the
// bound, while a view over an endless recursive query reaches it and stops.
inline constexpr int64_t kMaxStatementSteps = 20'000'000'000;
// SQLite's heap, for the whole process (sqlite3_hard_heap_limit64). Its
// memory in these analyses is page caches of 2 MiB a connection and sorts
// that spill to temporary files past that, a small part of the bound for
// the largest analyses measured (bench/RESULTS.md). An allocation past the bound
// fails, and the statement with it (SQLITE_NOMEM), instead of the machine
// running out of memory.
inline constexpr int64_t kSqliteHeapLimit = 1LL << 30;
// The longest string or blob (SQLITE_LIMIT_LENGTH; SQLite's default is
// 1e9). The longest a profile holds is a kallsyms text, a few MiB.
inline constexpr int kSqliteMaxLength = 256 << 20;

// The step count of the statement a connection is running, for the
// progress handler Db::Open installs. Internal to Db and Stmt.
struct StepBudget {
  int64_t limit = kMaxStatementSteps;
  int64_t* running = nullptr;  // steps so far of the statement being stepped, or null
  bool exceeded = false;       // the last statement was stopped for passing `limit`
};

// A value bound to a statement's parameter: NULL, an integer or text. What
// run bookkeeping statements take, so that no value is spliced into SQL.
using SqlValue = std::variant<std::nullptr_t, int64_t, std::string>;

class Stmt {
 public:
  Stmt() = default;
  Stmt(sqlite3* db, sqlite3_stmt* s, StepBudget* budget = nullptr) : db_(db), s_(s), budget_(budget) {}
  Stmt(Stmt&& o) noexcept : db_(o.db_), s_(o.s_), budget_(o.budget_), steps_(o.steps_) { o.s_ = nullptr; }
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
  // Text without a copy: `v` must outlive the statement's next step.
  Stmt& BindStatic(int i, const SqlValue& v);
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
  int StepCounted();  // sqlite3_step, its steps counted against budget_

  sqlite3* db_ = nullptr;
  sqlite3_stmt* s_ = nullptr;
  StepBudget* budget_ = nullptr;  // the connection's, owned by its Db
  int64_t steps_ = 0;             // steps of the current execution
};

// A statement of a connection's cache (Db::Cached), lent to one user: it
// goes back reset, its bindings cleared, when the CachedStmt goes out of
// scope. A statement asked for while it is lent (a query run inside the
// loop over its own rows) is prepared afresh and finalized after use.
class CachedStmt {
 public:
  CachedStmt(Stmt* lent, bool* busy) : stmt_(lent), busy_(busy) { *busy_ = true; }
  explicit CachedStmt(Stmt own) : own_(std::move(own)), stmt_(&own_) {}
  CachedStmt(CachedStmt&& o) noexcept;
  CachedStmt& operator=(CachedStmt&&) = delete;
  CachedStmt(const CachedStmt&) = delete;
  CachedStmt& operator=(const CachedStmt&) = delete;
  ~CachedStmt();
  Stmt& operator*() { return *stmt_; }
  Stmt* operator->() { return stmt_; }

 private:
  Stmt own_;                 // a statement prepared for this use only
  Stmt* stmt_ = nullptr;     // own_, or the cache's
  bool* busy_ = nullptr;     // the cache entry's flag, when lent from the cache
};

class Db {
 public:
  Db() = default;
  Db(Db&& o) noexcept
      : db_(o.db_), path_(std::move(o.path_)), budget_(std::move(o.budget_)), cache_(std::move(o.cache_)) {
    o.db_ = nullptr;
  }
  Db& operator=(Db&& o) noexcept;
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Opens (flags as sqlite3_open_v2, with SQLITE_OPEN_NOFOLLOW added: a
  // symbolic link anywhere in `path` is refused) with a busy timeout, so
  // two writers wait for each other instead of failing, and with the
  // bounds above. Under sudo the open and the close (which checkpoints and
  // deletes -wal and -shm by path) run with the invoking user's file access
  // rights (common/identity.h ActAsUser) on the calling thread; a thread
  // that commits through the connection meanwhile holds them itself.
  static Result<Db> Open(const std::string& path, int flags);
  // Lowers (or raises) kMaxStatementSteps for this connection: tests of the
  // bound use it, so that they need not run for minutes.
  void SetStepLimit(int64_t steps) { budget_->limit = steps; }

  Status Exec(std::string_view sql);
  Result<Stmt> Prepare(std::string_view sql);
  // `sql` prepared once for this connection and kept: the read-side data
  // layer (analyze/data/) runs its named statements through here, so a
  // statement run per stall or per file is compiled once.
  Result<CachedStmt> Cached(std::string_view sql);
  // Runs a query that returns one integer (e.g. a PRAGMA).
  Result<int64_t> QueryInt(std::string_view sql);
  int64_t LastInsertId() const { return sqlite3_last_insert_rowid(db_); }
  const std::string& path() const { return path_; }
  sqlite3* raw() { return db_; }
  std::string ErrorText() const { return db_ ? sqlite3_errmsg(db_) : "no database"; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
  // The progress handler's; on the heap, so that moving the Db keeps its address.
  std::unique_ptr<StepBudget> budget_ = std::make_unique<StepBudget>();
  // Db::Cached's statements by their text. Declared last, so that they are
  // finalized after ~Db's sqlite3_close_v2, which waits for them.
  struct CacheEntry {
    Stmt stmt;
    bool busy = false;
  };
  std::unique_ptr<std::unordered_map<std::string, CacheEntry>> cache_ =
      std::make_unique<std::unordered_map<std::string, CacheEntry>>();
};

// Runs `sql` with `binds` as ?1, ?2, ... and calls row(stmt) per row.
// Errors say what was being read (`what`) and from which database.
template <typename RowFn>
Status ForEachRow(Db& db, const std::string& what, std::string_view sql, std::initializer_list<int64_t> binds,
                  RowFn&& row) {
  auto st = db.Prepare(sql);
  if (!st) return MakeError("cannot read " + what + ": " + st.error().message);
  int i = 1;
  for (int64_t b : binds) st->Bind(i++, b);
  Status err;
  while (st->Step(&err)) row(*st);
  if (!err.ok())
    return MakeError("cannot read " + what + " from '" + db.path() + "': " + err.error().message +
                     ". Check the file with: sqlite3 " + db.path() + " 'PRAGMA integrity_check'");
  return {};
}

}  // namespace syspgo
