//===- query.cc - how the data layer runs its statements -----------------===//
#include "analyze/data/query.h"

#include "analyze/data/task_filter.h"

namespace syspgo::data {
namespace {

constexpr char kRunCountSql[] = "SELECT COUNT(*) FROM run";
constexpr char kHasTableSql[] = "SELECT COUNT(*) FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?1";

Result<CachedStmt> Bound(Db& db, const std::string& what, std::string_view sql, std::initializer_list<Param> params) {
  auto st = db.Cached(sql);
  if (!st) return what.empty() ? st.error() : MakeError("cannot read " + what + ": " + st.error().message);
  int i = 1;
  for (const Param& p : params) p.BindTo(**st, i++);
  return st;
}

Status Failed(Db& db, const std::string& what, const Status& err) {
  if (what.empty() || err.ok()) return err;
  return MakeError("cannot read " + what + " from '" + db.path() + "': " + err.error().message +
                   ". Check the file with: sqlite3 " + db.path() + " 'PRAGMA integrity_check'");
}

}  // namespace

void Param::BindTo(Stmt& st, int i) const {
  if (const int64_t* n = std::get_if<int64_t>(&v_)) st.Bind(i, *n);
  else st.Bind(i, std::get<std::string_view>(v_));
}

Status Visit(Db& db, const std::string& what, std::string_view sql, std::initializer_list<Param> params,
             const RowFn& row) {
  auto st = Bound(db, what, sql, params);
  if (!st) return st.error();
  Status err;
  while ((*st)->Step(&err)) row(**st);
  return Failed(db, what, err);
}

Status VisitWhile(Db& db, const std::string& what, std::string_view sql, std::initializer_list<Param> params,
                  const std::function<bool(Stmt&)>& row) {
  auto st = Bound(db, what, sql, params);
  if (!st) return st.error();
  Status err;
  while ((*st)->Step(&err))
    if (!row(**st)) break;
  return Failed(db, what, err);
}

Result<CachedStmt> Open(Db& db, const std::string& what, std::string_view sql, std::initializer_list<Param> params) {
  return Bound(db, what, sql, params);
}

Result<bool> VisitFirst(Db& db, const std::string& what, std::string_view sql, std::initializer_list<Param> params,
                        const RowFn& row) {
  auto st = Bound(db, what, sql, params);
  if (!st) return st.error();
  Status err;
  bool found = (*st)->Step(&err);
  if (!err.ok()) return Failed(db, what, err).error();
  if (found) row(**st);
  return found;
}

Result<int64_t> QueryOne(Db& db, std::string_view sql, std::initializer_list<Param> params, int64_t missing) {
  int64_t v = missing;
  auto found = VisitFirst(db, "", sql, params, [&](Stmt& s) { v = s.Int(0); });
  if (!found) return found.error();
  return v;
}

bool HasTable(Db& db, const std::string& name) {
  auto n = QueryOne(db, kHasTableSql, {name});
  return n.ok() && *n > 0;
}

std::string WithRunTables(Db& db, std::string sql) {
  auto runs = QueryOne(db, kRunCountSql, {});
  // A filtered table is a view (task_filter.h), which takes no index hint.
  const char* hint = runs.ok() && *runs == 1 && !TaskFilterApplied(db) ? " NOT INDEXED" : "";
  for (size_t open = sql.find('{'); open != std::string::npos; open = sql.find('{', open)) {
    size_t close = sql.find('}', open);
    if (close == std::string::npos) break;
    std::string t = sql.substr(open + 1, close - open - 1) + hint;
    sql.replace(open, close - open + 1, t);
    open += t.size();
  }
  return sql;
}

}  // namespace syspgo::data
