//===- redact.cc - a copy of a profile database that is safe to share -----===//
// Order of work: check the input (a profile, no collection still writing
// it), VACUUM INTO a private scratch copy (mode 0600, beside the output),
// rewrite values there in one transaction through an SQL function, then
// VACUUM INTO a second private copy: a freshly built file, so the free
// pages and unused cell space of the first, which still hold originals,
// are not carried over. That copy becomes the output through
// WriteFileAtomically, as every output does. The scratch copies are
// removed on every path.
#include "analyze/redact.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

#include "analyze/data/redact_writer.h"
#include "analyze/run.h"
#include "common/files.h"
#include "common/profile_db.h"
#include "common/sqlite.h"

namespace syspgo {
namespace {

// Columns that hold only syspgo's own vocabulary or numbers as text; kept.
// Every other text or blob value in every table is redacted. The run's
// settings (schemas/profile.sql: detail to damon_read and the three lists)
// are kept whole, as settings_json was before schema version 5: group
// names, the tier, build-ids, and the DAMON schemes' sysfs paths and
// operations sets; its numbers (the collector's files among them) are
// kept like every number.
const std::set<std::string> kKeptColumns = {
    "run.kernel_release",  "run.syspgo_version", "run.status",      "run.exit_reason", "run.detail",
    "run.kernel_build_id", "run.vdso_build_id",  "run_setting_probe.probe_group", "run_damon_scheme.path",
    "run_damon_scheme.ops",
    "run_probe.probe_group", "run_drop.probe_group", "syscall_name.name", "block_op.name", "irq_hist.kind",
    "irq_hist.name",       "irq_run.kind",       "irq_run.name",    "mapping.build_id", "stack.frames",
    "kallsyms.hash",       "run_kallsyms.hash",  "kallsyms.text",   // kallsyms.text: see keep_kallsyms
    "run_aggregate.probe_group", "run_aggregate.map",
};

// ---- SHA-256 (FIPS 180-4), for tokens that cannot be reversed by hashing
// guesses without the salt.
class Sha256 {
 public:
  void Add(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) {
      buf_[fill_++] = b[i];
      if (fill_ == 64) Block();
    }
    bits_ += uint64_t{n} * 8;
  }
  std::array<uint8_t, 32> Finish() {
    uint64_t bits = bits_;
    uint8_t pad = 0x80;
    Add(&pad, 1);
    uint8_t zero = 0;
    while (fill_ != 56) Add(&zero, 1);
    for (int i = 7; i >= 0; --i) {
      uint8_t c = static_cast<uint8_t>(bits >> (8 * i));
      Add(&c, 1);
    }
    std::array<uint8_t, 32> out;
    for (int i = 0; i < 32; ++i) out[i] = static_cast<uint8_t>(h_[i / 4] >> (24 - 8 * (i % 4)));
    return out;
  }

 private:
  static uint32_t Rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
  void Block() {
    static const uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = uint32_t(buf_[4 * i]) << 24 | uint32_t(buf_[4 * i + 1]) << 16 | uint32_t(buf_[4 * i + 2]) << 8 |
             buf_[4 * i + 3];
    for (int i = 16; i < 64; ++i) {
      uint32_t s0 = Rotr(w[i - 15], 7) ^ Rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = Rotr(w[i - 2], 17) ^ Rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
    for (int i = 0; i < 64; ++i) {
      uint32_t t1 = h + (Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      uint32_t t2 = (Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    uint32_t add[8] = {a, b, c, d, e, f, g, h};
    for (int i = 0; i < 8; ++i) h_[i] += add[i];
    fill_ = 0;
  }

  uint32_t h_[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  uint8_t buf_[64];
  size_t fill_ = 0;
  uint64_t bits_ = 0;
};

struct FnState {
  const RedactOptions* options;
  int64_t changed = 0;
};

// syspgo_redact(value): text -> '' or its token; blob -> empty blob; other
// values unchanged.
void RedactFn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  auto* st = static_cast<FnState*>(sqlite3_user_data(ctx));
  int type = sqlite3_value_type(argv[0]);
  if (type == SQLITE_TEXT) {
    ++st->changed;
    if (!st->options->hash) return sqlite3_result_text(ctx, "", 0, SQLITE_STATIC);
    std::string v(reinterpret_cast<const char*>(sqlite3_value_text(argv[0])), sqlite3_value_bytes(argv[0]));
    return sqlite3_result_text(ctx, RedactToken(st->options->salt, v).c_str(), -1, SQLITE_TRANSIENT);
  }
  if (type == SQLITE_BLOB) {
    ++st->changed;
    return sqlite3_result_zeroblob(ctx, 0);
  }
  sqlite3_result_value(ctx, argv[0]);
}

// Creates the scratch copy `path` empty and private; VACUUM INTO then fills
// it (it accepts an empty file), so the copy never exists with wider
// permissions.
Status CreateScratch(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return MakeError("cannot create the scratch copy '" + path + "': " + strerror(errno) +
                         ". Check that the output's directory exists and is writable.",
                     errno);
  close(fd);
  return {};
}

// The bytes of the file at `from` into `to` (write errors show in `to`).
Status CopyBytes(const std::string& from, FILE* to) {
  int fd = open(from.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return MakeError("cannot read the redacted copy '" + from + "': " + strerror(errno), errno);
  std::vector<char> buf(1 << 20);
  ssize_t n;
  while ((n = read(fd, buf.data(), buf.size())) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || fwrite(buf.data(), 1, static_cast<size_t>(n), to) != static_cast<size_t>(n)) break;
  }
  int e = n < 0 ? errno : 0;
  close(fd);
  if (e) return MakeError("cannot read the redacted copy '" + from + "': " + strerror(e), e);
  return {};
}

Status RefuseLiveRuns(Db& db) {
  auto live = LiveRuns(db);
  if (!live) return live.error();
  if (live->empty()) return {};
  const LiveRun& r = live->front();
  return MakeError("run " + std::to_string(r.id) + " of '" + db.path() + "' is still being recorded (by pid " +
                       std::to_string(r.collector_pid) + "); redact it when the collection has finished.",
                   EBUSY);
}

// Rewrites every redacted column of `db` (the scratch copy) in one transaction.
Result<RedactReport> RewriteValues(Db& db, const RedactOptions& options) {
  FnState fn{&options};
  if (sqlite3_create_function(db.raw(), "syspgo_redact", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, &fn, RedactFn,
                              nullptr, nullptr) != SQLITE_OK)
    return MakeError("cannot register the redaction function on '" + db.path() + "': " + db.ErrorText());
  auto columns = data::ReadColumns(db);
  if (!columns) return columns.error();
  RedactReport report;
  auto writer = data::RedactWriter::Begin(db);
  if (!writer) return writer.error();
  for (const auto& [table, column] : *columns) {
    if (kKeptColumns.count(table + "." + column)) continue;
    int64_t before = fn.changed;
    SYSPGO_TRY(writer->RewriteColumn(table, column));
    if (fn.changed > before) report.columns.push_back(table + "." + column);
  }
  if (!options.keep_kallsyms) {
    auto changed = writer->ClearKallsyms();
    if (!changed) return changed.error();
    report.kallsyms_removed = *changed > 0;
    fn.changed += *changed;
  }
  SYSPGO_TRY(writer->Commit());
  report.values = fn.changed;
  std::sort(report.columns.begin(), report.columns.end());
  return report;
}

// Whether the output may replace a file: only redact's own --in-place.
enum class Output { kNew, kReplace };

Result<RedactReport> Redact(const std::string& in, const std::string& out, const RedactOptions& given, Output output,
                            mode_t mode) {
  RedactOptions options = given;
  if (options.hash && options.salt.empty()) {
    uint8_t r[16];
    if (getrandom(r, sizeof r, 0) != sizeof r) return MakeError("cannot get random bytes for the salt", errno);
    static const char kHex[] = "0123456789abcdef";
    for (uint8_t b : r) options.salt += std::string{kHex[b >> 4], kHex[b & 15]};
  }
  auto src = OpenProfileDb(in, DbMode::kReadOnly);
  if (!src) return src.error();
  SYSPGO_TRY(RefuseLiveRuns(*src));

  struct stat sb {};
  if (output == Output::kNew && lstat(out.c_str(), &sb) == 0)
    return MakeError("'" + out + "' already exists; redact never overwrites a file. Pass another -o path or remove it.",
                     EEXIST);
  std::string scratch = out + ".redact-" + std::to_string(getpid()), rebuilt = scratch + "-rebuilt";
  auto cleanup = [&](const Error& e) {
    unlink(scratch.c_str());
    unlink(rebuilt.c_str());
    return e;
  };
  if (Status s = CreateScratch(scratch); !s.ok()) return cleanup(s.error());
  if (Status s = data::CopyInto(*src, scratch); !s.ok()) return cleanup(s.error());
  { Db closed = std::move(*src); }  // closed before the output may replace its file (--in-place)
  Result<RedactReport> report = MakeError("");
  {
    auto work = Db::Open(scratch, SQLITE_OPEN_READWRITE);
    if (!work) return cleanup(work.error());
    // The copy is in rollback-journal mode: no -wal file holds originals.
    if (Status s = data::ForgetOriginals(*work); !s.ok()) return cleanup(s.error());
    report = RewriteValues(*work, options);
    if (!report) return cleanup(report.error());
    if (Status s = CreateScratch(rebuilt); !s.ok()) return cleanup(s.error());
    if (Status s = data::CopyInto(*work, rebuilt); !s.ok()) return cleanup(s.error());
  }
  auto copy = [&](FILE* f) { return CopyBytes(rebuilt, f); };
  Status written =
      output == Output::kNew ? WriteNewFileAtomically(out, copy, mode) : WriteFileAtomically(out, copy, mode);
  if (!written.ok()) return cleanup(written.error());
  unlink(scratch.c_str());
  unlink(rebuilt.c_str());
  return report;
}

}  // namespace

std::string RedactToken(const std::string& salt, const std::string& value) {
  Sha256 h;
  h.Add(salt.data(), salt.size());
  uint8_t sep = 0;  // salt "ab" + "c" and "a" + "bc" must differ
  h.Add(&sep, 1);
  h.Add(value.data(), value.size());
  auto d = h.Finish();
  static const char kHex[] = "0123456789abcdef";
  std::string t = "h:";
  for (int i = 0; i < 8; ++i) t += std::string{kHex[d[i] >> 4], kHex[d[i] & 15]};
  return t;
}

Result<RedactReport> RedactProfile(const std::string& in, const std::string& out, const RedactOptions& options) {
  struct stat a {}, b {};
  if (stat(in.c_str(), &a) == 0 && stat(out.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
    return MakeError("'" + out + "' is the input itself; redact writes a new file (use --in-place to replace it).",
                     EINVAL);
  return Redact(in, out, options, Output::kNew, 0644);
}

Result<RedactReport> RedactProfileInPlace(const std::string& path, const RedactOptions& options) {
  // The redacted file keeps the original's mode; it belongs to whoever
  // replaced it, as every output does (common/files.h).
  struct stat sb {};
  mode_t mode = stat(path.c_str(), &sb) == 0 ? sb.st_mode & 0777 : 0644;
  auto report = Redact(path, path, options, Output::kReplace, mode);
  if (!report) return report;
  // A -wal or -shm of the original would describe pages of the old file.
  unlink((path + "-wal").c_str());
  unlink((path + "-shm").c_str());
  return report;
}

}  // namespace syspgo
