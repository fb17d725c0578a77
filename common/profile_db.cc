//===- profile_db.cc - open, create and migrate a profile database ------===//
#include "common/profile_db.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <map>
#include <utility>
#include <vector>

#include "common/files.h"
#include "common/identity.h"
#include "common/util.h"

namespace syspgo {
namespace {

// A statement of schemas/profile.sql, from `head` to the ";" that ends it:
// the first after which SQLite sees a complete statement, so a ";" in a
// comment does not cut it. A migration that adds a table takes its
// statement from there, so a migrated database gets the same table,
// comments included, as a new one (tests/migration_test.cc compares them).
std::string SchemaStatement(const std::string& head) {
  std::string schema = kProfileSchemaSql;
  size_t at = schema.find(head);
  if (at == std::string::npos) return "";
  for (size_t end = schema.find(';', at); end != std::string::npos; end = schema.find(';', end + 1)) {
    std::string statement = schema.substr(at, end + 1 - at);
    if (sqlite3_complete(statement.c_str())) return statement;
  }
  return "";
}

constexpr char kNamesHead[] = "INSERT INTO syscall_name (nr, name) ";

// Tables version 3 added (the in-kernel aggregates of `collect --detail
// lean`), by the head of their statement in schemas/profile.sql.
constexpr const char* kTablesAddedInV3[] = {
    "CREATE TABLE run_aggregate (",
    "CREATE TABLE page_cache_total (",
    "CREATE TABLE page_cache_page (",
    "CREATE TABLE page_cache_page_refault (",
    "CREATE TABLE page_cache_series (",
    "CREATE TABLE page_cache_reuse (",
};

// Version 4: the fileio and faults groups' lean tiers.
constexpr const char* kTablesAddedInV4[] = {
    "CREATE TABLE file_io_total (",
    "CREATE TABLE file_io_hist (",
    "CREATE TABLE page_fault_total (",
};

std::string TablesOf(const char* const* head, const char* const* end) {
  std::string sql;
  for (; head != end; ++head) {
    std::string table = SchemaStatement(*head);
    if (table.empty()) return "";
    sql += table + "\n";
  }
  return sql;
}

// Version 5: the run's settings, one JSON object in run.settings_json
// before, are columns of run and rows of these tables.
constexpr const char* kTablesAddedInV5[] = {
    "CREATE TABLE run_setting_probe (",
    "CREATE TABLE run_collector_file (",
    "CREATE TABLE run_damon_scheme (",
};

// The columns run kept from version 4 to 5: all but settings_json.
constexpr char kRunColumnsKeptInV5[] =
    "id, command, argv_json, target_pid, attached, host, kernel_release, syspgo_version, start_realtime_ns, "
    "start_monotonic_ns, command_start_ts, end_ts, status, collector_pid, boot_id, exit_reason, exit_code, "
    "events_recorded, events_dropped";

// The migration to version 5, inside Migrate's transaction. SQL cannot do
// it: settings_json comes from others and may hold anything, so each row is
// read by the tolerant ParseSettings (a member it cannot read keeps its
// default) and stored by WriteRunSettings, as collect stores a new run's.
// run is rebuilt, not altered: ALTER TABLE ... DROP COLUMN would rewrite
// its stored statement, and a migrated database must have the statement a
// new one has (tests/migration_test.cc compares them). The old table is
// renamed aside with legacy_alter_table on and foreign keys off (Migrate),
// so the other tables' REFERENCES run(id) keep naming run; no index or
// trigger is on run to carry over.
Status SettingsToColumns(Db& db) {
  std::string run = SchemaStatement("CREATE TABLE run ("),
              lists = TablesOf(std::begin(kTablesAddedInV5), std::end(kTablesAddedInV5));
  if (run.empty() || lists.empty()) return MakeError("schemas/profile.sql has no run table or settings lists");
  SYSPGO_TRY(db.Exec("PRAGMA legacy_alter_table = ON"));
  Status st = db.Exec("ALTER TABLE run RENAME TO run_v4;\n" + run + "\n" + lists + "INSERT INTO run (" +
                      kRunColumnsKeptInV5 + ") SELECT " + kRunColumnsKeptInV5 + " FROM run_v4");
  (void)db.Exec("PRAGMA legacy_alter_table = OFF");
  SYSPGO_TRY(st);
  {
    auto rows = db.Prepare("SELECT id, settings_json FROM run_v4 ORDER BY id");
    if (!rows) return rows.error();
    Status err;
    while (rows->Step(&err)) SYSPGO_TRY(WriteRunSettings(db, rows->Int(0), ParseSettings(rows->Text(1))));
    SYSPGO_TRY(err);
  }
  return db.Exec("DROP TABLE run_v4");
}

// Version 6: what analyses needed from the machine they ran on, recorded
// by collect instead (the files an exec maps, file sizes, block devices),
// and syscalls of any kind that ran long on a CPU.
constexpr const char* kTablesAddedInV6[] = {
    "CREATE TABLE exec_file (",
    "CREATE TABLE file_size (",
    "CREATE TABLE run_block_device (",
    "CREATE TABLE syscall_oncpu (",
};

// The columns process kept from version 5 to 6: all of them (cgroup and
// container are new, '' in older rows).
constexpr char kProcessColumnsOfV5[] = "run_id, pid, ppid, comm, exe, argv, start_ts, exit_ts, exit_code";

// The migration to version 6: process gains cgroup and container. Rebuilt,
// not altered, as run was for version 5 (ALTER TABLE ... ADD COLUMN would
// store a statement other than a new database's); no table references
// process, and no index or trigger is on it.
Status ProcessCgroups(Db& db) {
  std::string process = SchemaStatement("CREATE TABLE process (");
  if (process.empty()) return MakeError("schemas/profile.sql has no process table");
  return db.Exec(std::string("ALTER TABLE process RENAME TO process_v5;\n") + process + "\nINSERT INTO process (" +
                 kProcessColumnsOfV5 + ") SELECT " + kProcessColumnsOfV5 + " FROM process_v5;\nDROP TABLE process_v5");
}

// The SQL of the migration from version v - 1 to v, or "" if there is none.
std::string MigrationSql(int v) {
  switch (v) {
    case 6: {  // plus long on-CPU syscalls of any kind, and the names of more syscalls
      std::string tables = TablesOf(std::begin(kTablesAddedInV6), std::end(kTablesAddedInV6));
      std::string names = SchemaStatement(kNamesHead);
      if (tables.empty() || names.empty()) return "";
      return tables + "\nINSERT OR IGNORE INTO" + names.substr(strlen("INSERT INTO"));
    }
    case 4: return TablesOf(std::begin(kTablesAddedInV4), std::end(kTablesAddedInV4));
    case 3: return TablesOf(std::begin(kTablesAddedInV3), std::end(kTablesAddedInV3));
    case 2: {  // path lookups without an open, and their syscalls' names
      std::string table = SchemaStatement("CREATE TABLE file_lookup ("), names = SchemaStatement(kNamesHead);
      if (table.empty() || names.empty()) return "";
      return table + "\nINSERT OR IGNORE INTO" + names.substr(strlen("INSERT INTO"));
    }
  }
  return "";
}

// Migrates from version v - 1 to v, inside Migrate's transaction.
Status Migration(Db& db, int v) {
  if (v == 5) return SettingsToColumns(db);
  if (v == 6) SYSPGO_TRY(ProcessCgroups(db));  // and the tables MigrationSql adds
  std::string sql = MigrationSql(v);
  return !sql.empty() ? db.Exec(sql) : MakeError("no migration to schema version " + std::to_string(v));
}

Status CreateSchema(Db& db) {
  SYSPGO_TRY(db.Exec("BEGIN IMMEDIATE"));
  auto app = db.QueryInt("PRAGMA application_id");
  if (app.ok() && *app == kProfileApplicationId) {  // another writer created it first
    return db.Exec("COMMIT");
  }
  Status st = db.Exec(kProfileSchemaSql);
  if (st.ok()) st = db.Exec("PRAGMA application_id = " + std::to_string(kProfileApplicationId));
  if (st.ok()) st = db.Exec("PRAGMA user_version = " + std::to_string(kProfileSchemaVersion));
  if (!st.ok()) {
    (void)db.Exec("ROLLBACK");
    return st;
  }
  return db.Exec("COMMIT");
}

// SQLite returns SQLITE_BUSY without calling the busy handler when waiting
// could deadlock: two collectors creating one database at the same moment
// both hold a shared lock and both want to switch it to WAL. The one that
// is refused retries the whole step once the other has finished.
template <typename F>
Status RetryWhileBusy(F&& step) {
  for (int tries = 0;; ++tries) {
    Status st = step();
    int code = st.ok() ? SQLITE_OK : (st.error().code & 0xff);
    if ((code != SQLITE_BUSY && code != SQLITE_LOCKED) || tries >= 60000) return st;
    usleep(1000);
  }
}

Status Migrate(Db& db, int from) {
  // Off outside the transaction (inside, the pragma does nothing): the
  // migration to version 5 renames run aside, and with foreign keys on
  // SQLite would make every REFERENCES run(id) follow it.
  SYSPGO_TRY(db.Exec("PRAGMA foreign_keys = OFF"));
  SYSPGO_TRY(db.Exec("BEGIN IMMEDIATE"));
  for (int v = from + 1; v <= kProfileSchemaVersion; ++v) {
    Status st = Migration(db, v);
    if (st.ok()) st = db.Exec("PRAGMA user_version = " + std::to_string(v));
    if (!st.ok()) {
      (void)db.Exec("ROLLBACK");
      return MakeError("cannot migrate '" + db.path() + "' from schema version " + std::to_string(from) +
                       ": " + st.error().message + ". The file is unchanged.");
    }
  }
  return db.Exec("COMMIT");
}

// SQLite reads pages lazily, so a cut-off database opens and fails later
// with "malformed", or, cut inside its header, looks like no database at
// all. The 100-byte header says how long the file should be: check that
// first and say what happened. A non-empty -wal may legitimately hold pages
// past the end of the main file (a checkpoint cut short): SQLite recovers
// from it, so the length is only checked without one.
Status CheckNotTruncated(const std::string& path, uint64_t size) {
  static const unsigned char kMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f', 'o', 'r', 'm', 'a', 't', ' ', '3', 0};
  unsigned char h[100];
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return {};  // the open below reports why
  ssize_t n = pread(fd, h, sizeof h, 0);
  close(fd);
  if (n <= 0 || memcmp(h, kMagic, std::min<size_t>(n, sizeof kMagic)) != 0) return {};  // not SQLite: refused below
  auto truncated = [&](const std::string& why) {
    return MakeError("'" + path + "' is a truncated profile database: " + why +
                         ". It was left untouched; copy it again from where it was recorded.",
                     EINVAL);
  };
  if (n < 100)
    return truncated("it ends inside the 100-byte SQLite header, after " + std::to_string(size) + " bytes");
  auto be32 = [&](int at) { return uint32_t(h[at]) << 24 | uint32_t(h[at + 1]) << 16 | uint32_t(h[at + 2]) << 8 | h[at + 3]; };
  uint64_t page = (uint32_t(h[16]) << 8 | h[17]) == 1 ? 65536 : (uint32_t(h[16]) << 8 | h[17]);
  uint64_t want = uint64_t(be32(28)) * page;
  struct stat wal {};
  bool wal_pages = stat((path + "-wal").c_str(), &wal) == 0 && wal.st_size > 32;
  // The header's page count is valid only when it was written with the
  // current change counter (offset 92 equals offset 24).
  if (!wal_pages && be32(92) == be32(24) && want > size)
    return truncated("its header says " + std::to_string(want) + " bytes, but the file has " + std::to_string(size));
  return {};
}

// ---- What a profile database may hold --------------------------------------
// SQL stored in a database runs when it is read: a view named file_io over
// an endless recursive query kept `syspgo analyze DB files` running, its
// memory growing, until it was killed. So an existing database may hold
// only the objects the schema of its version creates, each as it creates
// them (compared without comments and spacing, so that the schema's
// comments may change), or fewer of them (a database from before a table
// existed), and of SQLite's own only what ANALYZE adds. Anything else (a
// trigger, a view or virtual table in a table's place, a table, index or
// view the schema does not have) is refused before any query reads the
// data.

struct SchemaObject {
  std::string type, table, sql;  // sqlite_master's type, tbl_name, sql (normalized)
};

// `sql` with its comments left out and every run of white space made one
// space, outside quoted strings and names.
std::string NormalizedSql(std::string_view sql) {
  std::string out;
  for (size_t i = 0; i < sql.size();) {
    char c = sql[i];
    if (c == '\'' || c == '"' || c == '`' || c == '[') {  // a literal or quoted name, kept whole
      char close = c == '[' ? ']' : c;
      size_t end = i + 1;
      for (;; ++end) {
        if (end >= sql.size()) break;
        if (sql[end] == close) {
          if (close != ']' && end + 1 < sql.size() && sql[end + 1] == close) {  // a doubled quote
            ++end;
            continue;
          }
          break;
        }
      }
      end = std::min(end + 1, sql.size());
      out.append(sql.substr(i, end - i));
      i = end;
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      size_t nl = sql.find('\n', i);
      i = nl == std::string_view::npos ? sql.size() : nl;
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      size_t end = sql.find("*/", i + 2);
      i = end == std::string_view::npos ? sql.size() : end + 2;
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      if (!out.empty() && out.back() != ' ') out += ' ';
      ++i;
    } else {
      out += c;
      ++i;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The last column: whether SQLite could have written the row. Its type,
// names and statement are text (or the statement NULL); a row with a blob
// there was made by hand, and reading it as text would pass a check SQLite
// itself does not apply the same way (it loads an object from its `sql`).
constexpr char kSchemaObjectsSql[] =
    "SELECT type, name, tbl_name, COALESCE(sql, ''), typeof(type) = 'text' AND typeof(name) = 'text' AND "
    "typeof(tbl_name) = 'text' AND typeof(sql) IN ('text', 'null') FROM sqlite_master ORDER BY type, name";

// Every object, by name (a list: triggers have names of their own, which
// may repeat a table's).
Result<std::vector<std::pair<std::string, SchemaObject>>> ReadSchemaObjects(Db& db) {
  auto st = db.Prepare(kSchemaObjectsSql);
  if (!st) return st.error();
  std::vector<std::pair<std::string, SchemaObject>> out;
  Status err;
  while (st->Step(&err)) {
    if (st->Int(4) == 0)
      return MakeError("'" + db.path() + "' is not a database syspgo wrote: its schema table (sqlite_master) has a "
                           "type, name or statement that is not text, which SQLite never writes. It was left "
                           "untouched; analyze a database recorded with 'syspgo collect'.",
                       EINVAL);
    out.push_back({st->Text(1), {st->Text(0), st->Text(2), NormalizedSql(st->Text(3))}});
  }
  if (!err.ok()) return err.error();
  return out;
}

// The objects `schema` creates, as SQLite records them: read from an
// in-memory database made from the schema text.
std::map<std::string, SchemaObject> ObjectsOf(const char* schema) {
  std::map<std::string, SchemaObject> out;
  auto db = Db::Open(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (db && db->Exec(schema).ok()) {
    auto read = ReadSchemaObjects(*db);
    if (read) out.insert(read->begin(), read->end());
  }
  // What ANALYZE adds (the planner's statistics): a user may have run it.
  out["sqlite_stat1"] = {"table", "sqlite_stat1", "CREATE TABLE sqlite_stat1(tbl,idx,stat)"};
  out["sqlite_stat4"] = {"table", "sqlite_stat4", "CREATE TABLE sqlite_stat4(tbl,idx,neq,nlt,ndlt,sample)"};
  return out;
}

// The objects a database of schema version `version` may hold, read once
// per schema: schemas/profile.sql's, or, before version 5, the frozen
// version 4's (versions 1 to 4 only added tables, so an older database
// holds some of version 4's), or version 5's.
const std::map<std::string, SchemaObject>& DocumentedObjects(int64_t version) {
  static const std::map<std::string, SchemaObject> current = ObjectsOf(kProfileSchemaSql);
  static const std::map<std::string, SchemaObject> v4 = ObjectsOf(kProfileSchemaV4Sql);
  static const std::map<std::string, SchemaObject> v5 = ObjectsOf(kProfileSchemaV5Sql);
  return version < 5 ? v4 : version == 5 ? v5 : current;
}

// Why the object `name` (as the file of schema version `version` has it)
// is not one syspgo's schema has, or "" if it is.
std::string UndocumentedObject(const std::string& name, const SchemaObject& got, int64_t version) {
  const auto& documented = DocumentedObjects(version);
  auto it = documented.find(name);
  std::string what = got.type + " '" + name + "'";
  if (got.type == "trigger")
    return "it holds a trigger, '" + name + "' on '" + got.table + "', and syspgo's schema has none";
  if (got.type == "table" && got.sql.rfind("CREATE VIRTUAL TABLE", 0) == 0)
    return "'" + name + "' is a virtual table, which syspgo's schema never uses";
  if (it == documented.end())
    return std::string("it holds ") + (got.type == "index" ? "an " : "a ") + what +
           " that syspgo's schema does not have";
  if (it->second.type != got.type)
    return "'" + name + "' is a " + got.type + " where syspgo's schema has a " + it->second.type;
  if (it->second.table != got.table || it->second.sql != got.sql)
    return "its " + what + " is not defined as syspgo's schema defines it";
  return "";
}

Status CheckSchemaObjects(Db& db, int64_t version) {
  auto objects = ReadSchemaObjects(db);
  if (!objects) return objects.error();
  for (const auto& [name, got] : *objects) {
    std::string why = UndocumentedObject(name, got, version);
    if (why.empty()) continue;
    std::string kind = got.type == "table" && got.sql.rfind("CREATE VIRTUAL TABLE", 0) == 0 ? "TABLE" : got.type;
    for (char& c : kind) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
    return MakeError("'" + db.path() + "' is not a database syspgo wrote: " + why +
                         ". syspgo reads profile databases as root, and SQL stored in one runs as it is read (a "
                         "view in a table's place can keep every analysis busy until it is killed), so it was left "
                         "untouched. Analyze a database recorded with 'syspgo collect'; if you added the " + got.type +
                         " yourself, drop it first: sqlite3 '" + db.path() + "' 'DROP " + kind + " \"" + name +
                         "\"'.",
                     EINVAL);
  }
  return {};
}

// True for an SQLite database with nothing in it: no application_id, no
// table. Queries that fail (not SQLite) say false; the caller reports why.
bool IsEmptyDatabase(Db& db) {
  auto app = db.QueryInt("PRAGMA application_id");
  auto objects = db.QueryInt("SELECT COUNT(*) FROM sqlite_master");
  return app.ok() && *app == 0 && objects.ok() && *objects == 0;
}

}  // namespace

std::string CurrentBootId() {
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::string s;
  std::getline(f, s);
  return s;
}

bool CollectorGone(int64_t pid, const std::string& boot_id) {
  if (boot_id != CurrentBootId() || pid <= 0) return true;
  std::ifstream f("/proc/" + std::to_string(pid) + "/comm");
  std::string comm;
  return !std::getline(f, comm) || comm != "syspgo";
}

Status WriteRunSettings(Db& db, int64_t run_id, const RunSettings& s) {
  auto run = db.Prepare(
      "UPDATE run SET detail = ?2, ringbuf_bytes = ?3, memory_budget_bytes = ?4, cpu_freq_hz = ?5, offcpu_min_ns = ?6, "
      "irq_min_ns = ?7, cold = ?8, no_readahead = ?9, kernel_build_id = ?10, vdso_build_id = ?11, damon_read = ?12 "
      "WHERE id = ?1");
  if (!run) return run.error();
  run->Bind(1, run_id).Bind(2, s.detail).Bind(3, static_cast<int64_t>(s.ringbuf_bytes));
  run->Bind(4, static_cast<int64_t>(s.memory_budget_bytes)).Bind(5, int64_t{s.freq_hz}).Bind(6, s.offcpu_min_ns);
  run->Bind(7, s.irq_min_ns).Bind(8, int64_t{s.cold}).Bind(9, int64_t{s.no_readahead});
  run->Bind(10, s.kernel_build_id).Bind(11, s.vdso_build_id).Bind(12, int64_t{s.damon.has_value()});
  SYSPGO_TRY(run->Run());
  // The lists, a row per entry at its place in the list (from 0).
  auto probe = db.Prepare("INSERT INTO run_setting_probe (run_id, position, probe_group) VALUES (?1, ?2, ?3)");
  if (!probe) return probe.error();
  for (size_t i = 0; i < s.probes.size(); ++i)
    SYSPGO_TRY(probe->Bind(1, run_id).Bind(2, static_cast<int64_t>(i)).Bind(3, s.probes[i]).Run());
  // dev and ino as stat(2) gives them, stored like every other table's.
  auto file = db.Prepare("INSERT INTO run_collector_file (run_id, position, dev, ino) VALUES (?1, ?2, ?3, ?4)");
  if (!file) return file.error();
  for (size_t i = 0; i < s.collector_files.size(); ++i) {
    const auto& [dev, ino] = s.collector_files[i];
    file->Bind(1, run_id).Bind(2, static_cast<int64_t>(i));
    SYSPGO_TRY(file->Bind(3, static_cast<int64_t>(dev)).Bind(4, static_cast<int64_t>(ino)).Run());
  }
  auto scheme = db.Prepare(
      "INSERT INTO run_damon_scheme (run_id, position, path, ops, min_age, aggr_us, min_age_us) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  if (!scheme) return scheme.error();
  const std::vector<DamonScheme> none;
  const std::vector<DamonScheme>& schemes = s.damon ? *s.damon : none;
  for (size_t i = 0; i < schemes.size(); ++i) {
    const DamonScheme& d = schemes[i];
    scheme->Bind(1, run_id).Bind(2, static_cast<int64_t>(i)).Bind(3, d.path).Bind(4, d.ops);
    SYSPGO_TRY(scheme->Bind(5, d.min_age).Bind(6, d.aggr_us).Bind(7, d.min_age_us).Run());
  }
  return {};
}

namespace {

// Refuses a path that is not a profile database file by what lstat(2)
// says of it (`exists` and `sb`), before SQLite opens anything.
Status CheckDatabasePath(const std::string& path, DbMode mode, bool exists, const struct stat& sb) {
  if (exists && S_ISLNK(sb.st_mode)) {
    // SQLite would refuse it too (Db::Open adds SQLITE_OPEN_NOFOLLOW); this
    // says where it points. A dangling link is the dangerous one: under
    // sudo, collect would have created its target as root.
    std::string target = ReadLinkOrEmpty(path);
    return MakeError("'" + path + "' is a symbolic link (to '" + target + "'), and syspgo opens profile databases "
                         "only by their own path: under sudo a link planted there would make it create or write "
                         "the file the link names, as root. Give the database's own path.",
                     ELOOP);
  }
  if (!exists && mode != DbMode::kCreateOrAppend)
    return MakeError("profile database '" + path + "' does not exist. Record one with: syspgo collect -o " +
                         path + " -- COMMAND",
                     ENOENT);
  if (exists && S_ISDIR(sb.st_mode))
    return MakeError("'" + path + "' is a directory, not a profile database. Give a file path.", EISDIR);
  if (exists && !S_ISREG(sb.st_mode))
    return MakeError("'" + path + "' is " + FileKindName(sb.st_mode) + ", not a profile database. Give the path of "
                         "a database file.",
                     EINVAL);
  return {};
}

// The SQLite handle on `path`, opened (or created) as `mode` asks.
Result<Db> OpenDbFile(const std::string& path, DbMode mode, bool exists) {
  // NOMUTEX: a connection is only ever used by one thread at a time (the
  // collector hands its connection to the writer thread), so SQLite's
  // per-call mutex would be pure cost on every bind and step.
  int flags = (mode == DbMode::kReadOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX;
  if (mode == DbMode::kCreateOrAppend) flags |= SQLITE_OPEN_CREATE;
  auto db = Db::Open(path, flags);
  if (!db && mode == DbMode::kCreateOrAppend && !exists && db.error().code != SQLITE_CANTOPEN_SYMLINK)
    return MakeError("cannot create profile database '" + path + "': " + sqlite3_errstr(db.error().code) +
                         ". Check that the directory exists and is writable, or pass another -o path.",
                     db.error().code);
  return db;
}

// The schema version of an existing file that is a syspgo profile this
// syspgo reads, identified before anything could write to it.
Result<int64_t> ReadableSchemaVersion(Db& db, const std::string& path) {
  auto app = db.QueryInt("PRAGMA application_id");
  if (!app)
    return MakeError("'" + path + "' is not a syspgo profile database (not SQLite: " +
                         std::string(sqlite3_errstr(app.error().code & 0xff)) +
                         "). It was left untouched; pass a new file path.",
                     EINVAL);
  if (*app != kProfileApplicationId)
    return MakeError("'" + path + "' is an SQLite database but not a syspgo profile (application_id " +
                         std::to_string(*app) + "). It was left untouched; pass a new file path.",
                     EINVAL);
  auto ver = db.QueryInt("PRAGMA user_version");
  if (!ver) return ver.error();
  if (*ver > kProfileSchemaVersion)
    return MakeError("'" + path + "' has schema version " + std::to_string(*ver) +
                         ", newer than this syspgo reads (" + std::to_string(kProfileSchemaVersion) +
                         "). Use a newer syspgo to read it.",
                     EINVAL);
  if (*ver < 1)
    return MakeError("'" + path + "' has no schema version; it is damaged. Record a new profile.", EINVAL);
  return *ver;
}

// Brings a database of an older schema version `ver` to the current one;
// one opened read-only is migrated through a writable handle of its own.
Status MigrateOlder(Db& db, const std::string& path, DbMode mode, int64_t ver) {
  if (mode != DbMode::kReadOnly) return Migrate(db, static_cast<int>(ver));
  // AT_EACCESS: the file access rights in force (the user's), not root's real uid.
  auto rw = faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) == 0 ? Db::Open(path, SQLITE_OPEN_READWRITE)
                                             : Result<Db>(MakeError(strerror(EACCES), EACCES));
  if (!rw)
    return MakeError("'" + path + "' has schema version " + std::to_string(ver) + " and is migrated to " +
                         std::to_string(kProfileSchemaVersion) + " when first opened, which needs write " +
                         "access to it (" + rw.error().message + "). Open it once as its owner, or copy it " +
                         "somewhere writable. It was left untouched.",
                     EACCES);
  return Migrate(*rw, static_cast<int>(ver));
}

Result<Db> OpenProfileDbAsUser(const std::string& path, DbMode mode) {
  struct stat sb {};
  bool exists = lstat(path.c_str(), &sb) == 0;
  SYSPGO_TRY(CheckDatabasePath(path, mode, exists, sb));
  bool fresh = !exists || sb.st_size == 0;
  if (!fresh) SYSPGO_TRY(CheckNotTruncated(path, static_cast<uint64_t>(sb.st_size)));
  auto db = OpenDbFile(path, mode, exists);
  if (!db) return db.error();

  // An empty database is one another collector is creating right now: it
  // has written the header (WAL mode) but not yet committed the schema.
  // Appending treats it as new: CreateSchema waits for that writer, then
  // finds its schema and adds nothing.
  if (!fresh && mode == DbMode::kCreateOrAppend && IsEmptyDatabase(*db)) fresh = true;
  if (!fresh) {
    auto ver = ReadableSchemaVersion(*db, path);
    if (!ver) return ver.error();
    // Before anything reads (or a migration writes) the data.
    SYSPGO_TRY(CheckSchemaObjects(*db, *ver));
    if (*ver < kProfileSchemaVersion) SYSPGO_TRY(MigrateOlder(*db, path, mode, *ver));
  }

  if (mode != DbMode::kReadOnly) {
    SYSPGO_TRY(RetryWhileBusy([&] { return db->Exec("PRAGMA journal_mode = WAL"); }));
    SYSPGO_TRY(db->Exec("PRAGMA synchronous = NORMAL"));
    if (fresh) SYSPGO_TRY(RetryWhileBusy([&] { return CreateSchema(*db); }));
  }
  SYSPGO_TRY(db->Exec("PRAGMA foreign_keys = OFF"));  // run_id references are documentation; inserts stay cheap
  return db;
}

}  // namespace

Result<Db> OpenProfileDb(const std::string& path, DbMode mode) {
  // Under sudo every look at the path (lstat, the header, the -wal's size,
  // the write check) and every file SQLite creates or deletes meanwhile are
  // the invoking user's: a path they cannot reach gives the error a missing
  // one gives, and nothing is made or removed where they could not.
  ActAsUser as_user;
  if (!as_user.ok()) return as_user.error();
  return OpenProfileDbAsUser(path, mode);
}

}  // namespace syspgo
