//===- cpu_tables.cc - the cpu group's tables of a run, one reader each --===//
#include "analyze/cpu_tables.h"

#include <sqlite3.h>

#include <cstring>

namespace syspgo {
namespace {

constexpr char kMappingsSql[] =
    "SELECT pid, ts, vm_start, vm_end, file_off, path, COALESCE(build_id, '') FROM mapping WHERE run_id = ?1 "
    "ORDER BY pid, vm_start, ts";
constexpr char kKallsymsSql[] =
    "SELECT k.text FROM run_kallsyms AS r JOIN kallsyms AS k ON k.hash = r.hash WHERE r.run_id = ?1";

}  // namespace

Result<MappingsByPid> ReadMappings(Db& db, int64_t run_id) {
  auto st = db.Prepare(kMappingsSql);
  if (!st) return st.error();
  st->Bind(1, run_id);
  MappingsByPid out;
  Status err;
  while (st->Step(&err)) {
    out[st->Int(0)].push_back({st->Int(1), static_cast<uint64_t>(st->Int(2)), static_cast<uint64_t>(st->Int(3)),
                               static_cast<uint64_t>(st->Int(4)), st->Text(5), st->Text(6)});
  }
  if (!err.ok()) return err.error();
  return out;
}

Result<std::optional<std::string>> ReadKallsyms(Db& db, int64_t run_id) {
  auto st = db.Prepare(kKallsymsSql);
  if (!st) return st.error();
  st->Bind(1, run_id);
  Status err;
  std::optional<std::string> text;
  if (st->Step(&err)) text = st->Text(0);
  if (!err.ok()) return err.error();
  return text;
}

std::vector<uint64_t> StackFrames(Stmt& st, int col) {
  std::vector<uint64_t> out;
  const void* p = sqlite3_column_blob(st.raw(), col);
  int n = sqlite3_column_bytes(st.raw(), col);
  out.resize(static_cast<size_t>(n) / 8);
  if (p && !out.empty()) memcpy(out.data(), p, out.size() * 8);  // little-endian, as x86 stores it
  return out;
}

}  // namespace syspgo
