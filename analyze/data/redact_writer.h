//===- redact_writer.h - the statements `syspgo redact` writes with ------===//
// The one writer under analyze/: redact copies a profile, rewrites its
// text and blob values in the copy, and copies the result out. The values
// are rewritten by an SQL function the caller registers (syspgo_redact).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo::data {

// Every column of every table of `db`, as (table, column), tables by name
// and columns in their order.
Result<std::vector<std::pair<std::string, std::string>>> ReadColumns(Db& db);
// A copy of `db` at `path` (VACUUM INTO: the file may exist, empty).
Status CopyInto(Db& db, const std::string& path);
// Keeps no originals beside the file: a rollback journal (no -wal) and
// freed pages overwritten.
Status ForgetOriginals(Db& db);

// One transaction of rewrites; rolled back unless committed.
class RedactWriter {
 public:
  static Result<RedactWriter> Begin(Db& db);
  RedactWriter(RedactWriter&& o) noexcept : db_(o.db_) { o.db_ = nullptr; }
  RedactWriter(const RedactWriter&) = delete;
  RedactWriter& operator=(const RedactWriter&) = delete;
  ~RedactWriter();
  // Each text or blob value of table.column through syspgo_redact().
  Status RewriteColumn(const std::string& table, const std::string& column);
  // Empties the stored kallsyms texts; how many were emptied.
  Result<int64_t> ClearKallsyms();
  Status Commit();

 private:
  explicit RedactWriter(Db* db) : db_(db) {}
  Db* db_;  // null once committed
};

}  // namespace syspgo::data
