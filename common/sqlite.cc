//===- sqlite.cc - a thin RAII layer over SQLite --------------------------===//
#include "common/sqlite.h"

#include <unistd.h>

#include <cstdlib>
#include <mutex>

#include "common/identity.h"

namespace syspgo {
namespace {

// The progress handler runs every this many virtual-machine steps.
constexpr int kProgressInterval = 1 << 20;

// Counts a running statement's steps; stops it (SQLITE_INTERRUPT) once they
// pass its budget.
int OnProgress(void* arg) {
  auto* b = static_cast<StepBudget*>(arg);
  if (!b->running) return 0;
  *b->running += kProgressInterval;
  if (*b->running <= b->limit) return 0;
  b->exceeded = true;
  return 1;
}

// What a failure by one of the bounds in sqlite.h means, for the error
// message, or "" for any other failure.
std::string BoundNote(int rc, const StepBudget* budget) {
  if ((rc & 0xff) == SQLITE_INTERRUPT && budget && budget->exceeded)
    return " (stopped after " + std::to_string(budget->limit) + " steps of work, the most a statement may take: " +
           "real analyses need a tenth of that or less, so the database is damaged or was made to keep syspgo busy; "
           "record a new profile with syspgo collect)";
  if ((rc & 0xff) == SQLITE_NOMEM)
    return " (SQLite may use at most " + std::to_string(sqlite3_hard_heap_limit64(-1) >> 20) +
           " MiB in this process; a real analysis uses a fraction of that, so the database is damaged or was made "
           "to exhaust memory; record a new profile with syspgo collect)";
  if ((rc & 0xff) == SQLITE_TOOBIG)
    return " (a value past " + std::to_string(kSqliteMaxLength >> 20) + " MiB, longer than any a profile holds)";
  return "";
}

// A failed step names the database file: the error may reach a person far
// from where the statement was prepared (a damaged file shows up here).
std::string StepError(sqlite3* db, sqlite3_stmt* s, int rc, const StepBudget* budget) {
  const char* file = sqlite3_db_filename(db, "main");
  return std::string("database '") + (file ? file : "") + "': " + sqlite3_errmsg(db) + BoundNote(rc, budget) +
         " in: " + sqlite3_sql(s);
}

// ": <path with its links resolved>" (of its directory, for a file yet to be
// created), or "" if it cannot be resolved.
std::string ResolvedHint(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  char* real = realpath(dir.c_str(), nullptr);
  if (!real) return "";
  std::string out = std::string(": ") + real + (std::string(real) == "/" ? "" : "/") + name;
  free(real);
  return out;
}

// Closes `db` with the invoking user's file access rights (identity.h):
// the last close checkpoints and deletes the -wal and -shm files by their
// path, and a directory swapped meanwhile for a link into a sticky one
// (/tmp) must not let root delete another owner's files there. If those
// rights cannot be taken on, the WAL is kept (SQLITE_FCNTL_PERSIST_WAL),
// so that the close unlinks nothing.
void CloseAsUser(sqlite3* db) {
  if (!db) return;
  ActAsUser as_user;
  if (!as_user.ok()) {
    int keep = 1;
    sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &keep);
  }
  sqlite3_close_v2(db);
}

// Connection settings for a file that may come from anyone (SQLite's
// "Defense Against The Dark Arts", sqlite.org/security.html).
void Harden(sqlite3* db, StepBudget* budget) {
  // Once per process: the heap bound is global. A bound set lower before
  // (by a test) is kept.
  static std::once_flag heap_once;
  std::call_once(heap_once, [] {
    int64_t now = sqlite3_hard_heap_limit64(-1);
    if (now == 0 || now > kSqliteHeapLimit) sqlite3_hard_heap_limit64(kSqliteHeapLimit);
  });
  // No SQL that deliberately corrupts the file (writable_schema and such).
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  // Views, defaults and checks in the file may call only harmless functions.
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  // syspgo's schema has no triggers (profile_db.cc refuses a file with one);
  // none fires even so.
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  // Debian builds SQLite with the two-argument fts3_tokenizer(), which
  // takes a raw pointer from SQL.
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, nullptr);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kSqliteMaxLength);
  sqlite3_progress_handler(db, kProgressInterval, OnProgress, budget);
}

}  // namespace

Stmt& Stmt::operator=(Stmt&& o) noexcept {
  if (this != &o) {
    if (s_) sqlite3_finalize(s_);
    db_ = o.db_;
    s_ = o.s_;
    budget_ = o.budget_;
    steps_ = o.steps_;
    o.s_ = nullptr;
  }
  return *this;
}

Stmt::~Stmt() {
  if (s_) sqlite3_finalize(s_);
}

int Stmt::StepCounted() {
  if (!budget_) return sqlite3_step(s_);
  if (!sqlite3_stmt_busy(s_)) steps_ = 0;  // a new execution starts
  budget_->running = &steps_;
  budget_->exceeded = false;
  int rc = sqlite3_step(s_);
  budget_->running = nullptr;
  return rc;
}

bool Stmt::Step(Status* err) {
  int rc = StepCounted();
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE && err)
    *err = MakeError(StepError(db_, s_, rc, budget_), rc);
  return false;
}

Status Stmt::Run() {
  int rc = StepCounted();
  sqlite3_reset(s_);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    return MakeError(StepError(db_, s_, rc, budget_), rc);
  return {};
}

Stmt& Stmt::BindStatic(int i, const SqlValue& v) {
  if (const auto* n = std::get_if<int64_t>(&v)) {
    sqlite3_bind_int64(s_, i, *n);
  } else if (const auto* t = std::get_if<std::string>(&v)) {
    sqlite3_bind_text(s_, i, t->data(), static_cast<int>(t->size()), SQLITE_STATIC);
  } else {
    sqlite3_bind_null(s_, i);
  }
  return *this;
}

std::string Stmt::Text(int col) const {
  const unsigned char* t = sqlite3_column_text(s_, col);
  if (!t) return {};
  return std::string(reinterpret_cast<const char*>(t), sqlite3_column_bytes(s_, col));
}

Db& Db::operator=(Db&& o) noexcept {
  if (this != &o) {
    CloseAsUser(db_);
    db_ = o.db_;
    path_ = std::move(o.path_);
    budget_ = std::move(o.budget_);
    cache_ = std::move(o.cache_);
    o.db_ = nullptr;
  }
  return *this;
}

Db::~Db() { CloseAsUser(db_); }

Result<Db> Db::Open(const std::string& path, int flags) {
  Db d;
  d.path_ = path;
  // As the user under sudo: the file, and its -wal and -shm, are created
  // (and a path resolved) with their rights; see CloseAsUser for the close.
  ActAsUser as_user;
  if (!as_user.ok()) return as_user.error();
  // NOFOLLOW: under sudo, a symbolic link planted where a database is to be
  // created would have SQLite create (as root) whatever file it names.
  int rc = sqlite3_open_v2(path.c_str(), &d.db_, flags | SQLITE_OPEN_NOFOLLOW, nullptr);
  if (rc != SQLITE_OK) {
    int ext = d.db_ ? sqlite3_extended_errcode(d.db_) : rc;
    std::string msg = d.db_ ? sqlite3_errmsg(d.db_) : sqlite3_errstr(rc);
    if (ext == SQLITE_CANTOPEN_SYMLINK) {
      msg = "the path goes through a symbolic link, and syspgo opens databases only by a path without one (under "
            "sudo a link planted there would make it create or write the file the link names, as root). Give the "
            "path without links" + ResolvedHint(path);
      rc = SQLITE_CANTOPEN_SYMLINK;
    }
    return MakeError("cannot open database '" + path + "': " + msg, rc);
  }
  Harden(d.db_, d.budget_.get());
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
  int64_t steps = 0;  // the statements of `sql` share one budget
  budget_->running = &steps;
  budget_->exceeded = false;
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &msg);
  budget_->running = nullptr;
  if (rc != SQLITE_OK) {
    std::string m = msg ? msg : sqlite3_errstr(rc);
    sqlite3_free(msg);
    return MakeError("database '" + path_ + "': " + m + BoundNote(sqlite3_extended_errcode(db_), budget_.get()), rc);
  }
  return {};
}

CachedStmt::CachedStmt(CachedStmt&& o) noexcept
    : own_(std::move(o.own_)), stmt_(o.stmt_ == &o.own_ ? &own_ : o.stmt_), busy_(o.busy_) {
  o.stmt_ = nullptr;
  o.busy_ = nullptr;
}

CachedStmt::~CachedStmt() {
  if (!busy_) return;  // own_ is finalized with this
  stmt_->Reset();
  sqlite3_clear_bindings(stmt_->raw());
  *busy_ = false;
}

Result<CachedStmt> Db::Cached(std::string_view sql) {
  auto it = cache_->find(std::string(sql));
  if (it != cache_->end() && !it->second.busy) return CachedStmt(&it->second.stmt, &it->second.busy);
  auto st = Prepare(sql);
  if (!st) return st.error();
  if (it != cache_->end()) return CachedStmt(std::move(*st));
  CacheEntry& e = (*cache_)[std::string(sql)];
  e.stmt = std::move(*st);
  return CachedStmt(&e.stmt, &e.busy);
}

Result<Stmt> Db::Prepare(std::string_view sql) {
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &s, nullptr);
  if (rc != SQLITE_OK)
    return MakeError("database '" + path_ + "': " + sqlite3_errmsg(db_) + " preparing: " + std::string(sql), rc);
  return Stmt(db_, s, budget_.get());
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
