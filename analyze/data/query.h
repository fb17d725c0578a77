//===- query.h - how the data layer runs its statements ------------------===//
// The read-side data layer (analyze/data/) is the only code under analyze/
// that holds SQL. Each of its files serves one table or concern and names
// its statements (constexpr k...Sql, keywords in capitals, columns listed,
// every multi-row SELECT ordered); this header runs them: cached on the
// connection (Db::Cached), with bound parameters only, each row handed to
// the caller's function.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <variant>

#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo::data {

// A bound parameter: an integer or a text.
class Param {
 public:
  Param(int64_t v) : v_(v) {}                             // NOLINT: parameters read as the values they are
  Param(int v) : v_(int64_t{v}) {}                        // NOLINT
  Param(bool v) : v_(int64_t{v}) {}                       // NOLINT
  Param(std::string_view v) : v_(v) {}                    // NOLINT
  Param(const std::string& v) : v_(std::string_view(v)) {}  // NOLINT
  void BindTo(Stmt& st, int i) const;

 private:
  std::variant<int64_t, std::string_view> v_;
};

using RowFn = std::function<void(Stmt&)>;

// Runs `sql` with `params` as ?1, ?2, ... and calls row(stmt) per row.
// A failure says what was being read (`what`) and from which database, as
// ForEachRow's does; with `what` empty it is SQLite's message alone.
Status Visit(Db& db, const std::string& what, std::string_view sql, std::initializer_list<Param> params,
             const RowFn& row);
// As Visit, while row(stmt) returns true.
Status VisitWhile(Db& db, const std::string& what, std::string_view sql, std::initializer_list<Param> params,
                  const std::function<bool(Stmt&)>& row);
// The statement `sql` bound, its rows to be stepped by the caller: for a
// pass that merges several streams of rows (the trace export).
Result<CachedStmt> Open(Db& db, const std::string& what, std::string_view sql, std::initializer_list<Param> params);
// As Visit, for the first row only; false if there is none.
Result<bool> VisitFirst(Db& db, const std::string& what, std::string_view sql, std::initializer_list<Param> params,
                        const RowFn& row);
// The integer in the first column of the first row, `missing` if no row.
Result<int64_t> QueryOne(Db& db, std::string_view sql, std::initializer_list<Param> params, int64_t missing = 0);

// Whether the database has a table or view `name` (older schemas lack some).
bool HasTable(Db& db, const std::string& name);

// `sql`, a query over one run's rows, with each table written {table}
// (e.g. "FROM {page_cache}") named as it should be read: followed by NOT
// INDEXED when the database holds one run. Its rows are then the whole
// table, and SQLite would still read them through the run_id index, a
// lookup per row, several times slower than a scan.
std::string WithRunTables(Db& db, std::string sql);

// Syscall numbers as an SQL list, for `nr IN (...)`: "0, 17, 19, 295, 327".
template <size_t N>
std::string SqlList(const int64_t (&calls)[N]) {
  std::string out;
  for (int64_t nr : calls) out += (out.empty() ? "" : ", ") + std::to_string(nr);
  return out;
}

}  // namespace syspgo::data
