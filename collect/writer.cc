//===- writer.cc - batched, backpressured writes into the profile DB -----===//
#include "collect/writer.h"

#include <time.h>
#include <unistd.h>

#include <cstring>

namespace syspgo {
namespace {

constexpr size_t kBatchRows = 32768;            // rows per transaction, at most
constexpr uint64_t kFlushIntervalNs = 200000000; // commit at least every 200 ms
constexpr size_t kMaxQueued = 4;                // batches waiting: bounds memory

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

}  // namespace

Writer::Writer(Db db, int64_t run_id) : db_(std::move(db)), run_id_(run_id) {
  stack_table_ = Table("stack", {"id", "frames"});
}

Writer::~Writer() { (void)Stop(); }

int Writer::Table(const std::string& table, const std::vector<std::string>& columns, const std::string& verb) {
  std::string sql = verb + " INTO " + table + " (run_id";
  std::string vals = "?";
  for (auto& c : columns) {
    sql += ", " + c;
    vals += ", ?";
  }
  sql += ") VALUES (" + vals + ")";
  defs_.push_back({sql, columns.size()});
  return static_cast<int>(defs_.size() - 1);
}

Writer::Batch Writer::NewBatch() {
  Batch b;
  b.cells.resize(defs_.size());
  b.rows.assign(defs_.size(), 0);
  // Size each table for what it held last time, so rows do not regrow it.
  for (size_t t = 0; t < defs_.size() && t < last_rows_.size(); ++t)
    b.cells[t].reserve(last_rows_[t] * defs_[t].ncols);
  return b;
}

Status Writer::Start() {
  for (auto& d : defs_) {
    auto st = db_.Prepare(d.sql);
    if (!st) return st.error();
    stmts_.push_back(std::move(st.value()));
  }
  cur_ = NewBatch();
  last_flush_ns_ = NowNs();
  thread_ = std::thread([this] { Loop(); });
  return {};
}

Writer::RowBuilder Writer::Row(int table) {
  auto& v = cur_.cells[table];
  size_t n = defs_[table].ncols;
  size_t at = v.size();
  v.resize(at + n);
  ++cur_.rows[table];
  ++cur_.total;
  return RowBuilder(&v[at], &cur_.strings);
}

int64_t Writer::StackId(const uint64_t* ips, size_t n) {
  if (n == 0) return 0;
  std::string key(reinterpret_cast<const char*>(ips), n * sizeof(uint64_t));
  auto [it, fresh] = stacks_.try_emplace(std::move(key), static_cast<int64_t>(stacks_.size() + 1));
  if (fresh) Row(stack_table_).I(it->second).B(it->first.data(), it->first.size());
  return it->second;
}

void Writer::Submit(bool force) {
  if (cur_.total == 0 && cur_.exec.empty() && !force) return;
  std::unique_lock<std::mutex> lk(mu_);
  // Backpressure: wait while the writer thread is behind.
  cv_.wait(lk, [&] { return queue_.size() < kMaxQueued || failed_; });
  if (failed_) {
    cur_ = NewBatch();  // disk full or similar: stop recording, keep going
    return;
  }
  last_rows_ = cur_.rows;
  queue_.push_back(std::move(cur_));
  cv_.notify_all();
  lk.unlock();
  cur_ = NewBatch();
  last_flush_ns_ = NowNs();
}

void Writer::MaybeFlush() {
  if (cur_.total >= kBatchRows) {
    Submit(false);
    return;
  }
  if (cur_.total && NowNs() - last_flush_ns_ >= kFlushIntervalNs) Submit(false);
}

Status Writer::Drain() {
  Submit(false);
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return (queue_.empty() && in_flight_ == 0) || failed_; });
  return error_;
}

Status Writer::Exec(const std::string& sql) {
  cur_.exec.push_back(sql);
  Submit(true);
  return Drain();
}

Status Writer::Stop() {
  if (!thread_.joinable()) return error_;
  Status st = Drain();
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  thread_.join();
  return st.ok() ? error_ : st;
}

bool Writer::failed() const {
  std::lock_guard<std::mutex> lk(mu_);
  return failed_;
}

std::string Writer::error_message() const {
  std::lock_guard<std::mutex> lk(mu_);
  return failed_ ? error_.error().message : "";
}

void Writer::Loop() {
  for (;;) {
    Batch b;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      b = std::move(queue_.front());
      queue_.pop_front();
      ++in_flight_;
    }
    Status st = WriteBatch(b);
    bool more;
    {
      std::lock_guard<std::mutex> lk(mu_);
      more = !queue_.empty();
    }
    // Back-to-back commits would starve another process writing to the same
    // database; leave it a gap (its busy handler polls every millisecond).
    if (more) usleep(2000);
    std::lock_guard<std::mutex> lk(mu_);
    --in_flight_;
    if (!st.ok() && !failed_) {
      failed_ = true;
      error_ = st;
    }
    cv_.notify_all();
  }
}

Status Writer::WriteBatch(Batch& b) {
  if (failed()) return {};
  // IMMEDIATE: take the write lock up front, so another writer to the same
  // database makes us wait (busy timeout) instead of failing with
  // SQLITE_BUSY_SNAPSHOT when a read transaction tries to become a write one.
  SYSPGO_TRY(db_.Exec("BEGIN IMMEDIATE"));
  uint64_t written = 0;
  for (size_t t = 0; t < b.cells.size(); ++t) {
    size_t n = defs_[t].ncols;
    Stmt& st = stmts_[t];
    for (size_t r = 0; r < b.rows[t]; ++r) {
      const Cell* c = &b.cells[t][r * n];
      sqlite3_stmt* s = st.raw();
      sqlite3_bind_int64(s, 1, run_id_);
      for (size_t i = 0; i < n; ++i) {
        int idx = static_cast<int>(i) + 2;
        switch (c[i].kind) {
          case Cell::kInt: sqlite3_bind_int64(s, idx, c[i].i); break;
          case Cell::kText: {
            const std::string& t = b.strings[c[i].i];
            sqlite3_bind_text(s, idx, t.data(), static_cast<int>(t.size()), SQLITE_STATIC);
            break;
          }
          case Cell::kBlob: {
            const std::string& t = b.strings[c[i].i];
            sqlite3_bind_blob(s, idx, t.data(), static_cast<int>(t.size()), SQLITE_STATIC);
            break;
          }
          case Cell::kNull: sqlite3_bind_null(s, idx); break;
        }
      }
      Status rs = st.Run();
      if (!rs.ok()) {
        (void)db_.Exec("ROLLBACK");
        return MakeError("writing the profile database '" + db_.path() + "' failed: " + rs.error().message,
                         rs.error().code);
      }
      ++written;
    }
  }
  for (auto& sql : b.exec) {
    Status es = db_.Exec(sql);
    if (!es.ok()) {
      (void)db_.Exec("ROLLBACK");
      return es;
    }
  }
  Status cs = db_.Exec("COMMIT");
  if (!cs.ok()) {
    (void)db_.Exec("ROLLBACK");
    return MakeError("committing to the profile database '" + db_.path() + "' failed: " + cs.error().message,
                     cs.error().code);
  }
  std::lock_guard<std::mutex> lk(mu_);
  rows_written_ += written;
  return {};
}

}  // namespace syspgo
