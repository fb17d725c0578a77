//===- writer.cc - batched, backpressured writes into the profile DB -----===//
#include "collect/writer.h"

#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "common/identity.h"
#include "common/util.h"

namespace syspgo {
namespace {

constexpr uint64_t kFlushIntervalNs = 200000000;  // commit at least every 200 ms
// A batch goes to the writer thread when it holds a quarter of the pool
// (one batch being written, up to two waiting, one being filled), and at
// most 4 MiB, about 40000 rows: a larger pool holds more batches rather
// than longer transactions, which another writer to the database would
// wait for.
constexpr size_t kBatchesInPool = 4;
constexpr size_t kMaxBatchBytes = 4 << 20;
// Chunks the pool leaves mapped when it trims, so that a steady load does
// not map and unmap at every trim.
constexpr size_t kChunksKept = kBatchesInPool;

// splitmix64's finalizer: a bijection that spreads every input bit.
uint64_t Mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A text or blob cell's value points at its record: [u32 length][bytes].
std::pair<const char*, int> Record(uint64_t v) {
  const char* p = reinterpret_cast<const char*>(static_cast<uintptr_t>(v));
  uint32_t n;
  memcpy(&n, p, sizeof n);
  return {p + sizeof n, static_cast<int>(n)};
}

}  // namespace

Writer::Writer(Db db, int64_t run_id, Limits limits) : db_(std::move(db)), run_id_(run_id), limits_(limits) {
  max_chunks_ = std::max<size_t>(kBatchesInPool, limits_.queue_bytes / sizeof(Chunk));
  batch_chunks_ = std::min(max_chunks_ / kBatchesInPool, kMaxBatchBytes / sizeof(Chunk));
  stack_table_ = Table("stack", {"id", "frames"});
}

Writer::~Writer() {
  (void)Stop();
  for (Chunk* c : owned_) munmap(c, sizeof(Chunk));
}

int Writer::Table(const std::string& table, const std::vector<std::string>& columns, const std::string& verb) {
  if (columns.size() > kMaxColumns && table_error_.empty())
    table_error_ = "table '" + table + "' declares " + std::to_string(columns.size()) +
                   " columns; the collector's writer holds at most " + std::to_string(kMaxColumns) +
                   " per row (collect/writer.h, kMaxColumns): split the table or widen the row header.";
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

Status Writer::Start() {
  if (!table_error_.empty()) return MakeError(table_error_, EINVAL);
  // Negative: KiB rather than pages. The writer only appends, so a small
  // cache costs little; SQLite's default would be 2 MiB.
  uint64_t cache_kib = std::max<uint64_t>(limits_.sqlite_cache_bytes >> 10, 64);
  SYSPGO_TRY(db_.Exec("PRAGMA cache_size = -" + std::to_string(cache_kib)));
  for (auto& d : defs_) {
    auto st = db_.Prepare(d.sql);
    if (!st) return st.error();
    stmts_.push_back(std::move(st.value()));
  }
  last_flush_ns_ = last_trim_ns_ = NowNs(CLOCK_MONOTONIC);
  thread_ = std::thread([this] { Loop(); });
  return {};
}

Writer::Chunk* Writer::TakeChunk() {
  Chunk* c = nullptr;
  {
    std::unique_lock<std::mutex> lk(mu_);
    // Wait for the writer thread to give chunks back (backpressure), unless
    // the pool may still grow. If nothing is out that could come back (every
    // chunk is in the batch being filled, which cannot be handed over in the
    // middle of a row), grow past the pool by a chunk rather than wait forever.
    cv_.wait(lk, [&] { return !free_.empty() || owned_.size() < max_chunks_ || (queue_.empty() && in_flight_ == 0); });
    if (!free_.empty()) {
      c = free_.back();
      free_.pop_back();
      free_low_ = std::min(free_low_, free_.size());
    }
  }
  if (!c) {
    // Mapped, not from the heap, so that TrimPool's munmap returns it to
    // the kernel; its pages are touched as rows fill them.
    void* p = mmap(nullptr, sizeof(Chunk), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();  // as `new` would: the collector cannot go on
    c = new (p) Chunk;
    owned_.push_back(c);
  }
  c->rows_end = 0;
  c->text_begin = Chunk::kWords * 8;
  return c;
}

void Writer::ReturnChunks(Batch& b) {
  for (Chunk* c : b.chunks)
    if (c) free_.push_back(c);
  b.chunks.clear();
}

uint64_t* Writer::RowSpace(size_t words) {
  Chunk* c = cur_.chunks.empty() ? nullptr : cur_.chunks.back();
  if (!c || (c->rows_end + words) * 8 > c->text_begin) {
    // With no row under construction nothing points into the batch, so a
    // full one goes to the writer thread here: the bound holds row by row,
    // however many events one poll of the ring buffers hands over.
    if (open_rows_ == 0 && cur_.chunks.size() >= batch_chunks_) Submit(false);
    c = TakeChunk();
    cur_.chunks.push_back(c);
  }
  uint64_t* row = c->words + c->rows_end;
  c->rows_end += static_cast<uint32_t>(words);
  return row;
}

uint64_t Writer::Bytes(const void* p, size_t n) {
  uint32_t len = static_cast<uint32_t>(n);
  size_t need = (sizeof len + n + 7) & ~size_t{7};
  char* rec;
  if (need > kChunkBytes / 4) {
    // No event carries a text this long (the longest are 4 KiB paths): kept
    // aside rather than wasting most of a chunk.
    cur_.large.emplace_back(new char[sizeof len + n]);
    rec = cur_.large.back().get();
  } else {
    Chunk* c = cur_.chunks.back();  // a row is under construction, so there is one
    if (c->text_begin < need + c->rows_end * 8) {
      c = TakeChunk();
      cur_.chunks.push_back(c);
    }
    c->text_begin -= static_cast<uint32_t>(need);
    rec = reinterpret_cast<char*>(c->words) + c->text_begin;
  }
  memcpy(rec, &len, sizeof len);
  if (n) memcpy(rec + sizeof len, p, n);
  return reinterpret_cast<uintptr_t>(rec);
}

Writer::RowBuilder Writer::Row(int table) {
  size_t n = defs_[table].ncols;
  uint64_t* row = RowSpace(1 + n);
  row[0] = static_cast<uint64_t>(table);
  std::fill(row + 1, row + 1 + n, 0);
  ++cur_.rows;
  return RowBuilder(this, row);
}

int64_t Writer::StackId(const uint64_t* ips, size_t n) {
  if (n == 0) return 0;
  if (kernel_map_) {
    mapped_frames_.assign(ips, ips + n);
    for (uint64_t& ip : mapped_frames_) ip = KernelAddress(ip);
    ips = mapped_frames_.data();
  }
  // Two differently mixed 64-bit chains: a collision needs both to collide
  // (about 2^-128 a pair), far below any run's number of stacks.
  StackKey k{n, ~uint64_t{n}};
  for (size_t i = 0; i < n; ++i) {
    k.a = Mix(k.a ^ ips[i]);
    k.b = Mix(((k.b << 23) | (k.b >> 41)) + ips[i] * 0x9e3779b97f4a7c15ull);
  }
  if (auto it = stacks_.find(k); it != stacks_.end()) return it->second;
  int64_t id;
  if (auto old = old_stacks_.find(k); old != old_stacks_.end()) {
    id = old->second;
  } else {
    id = ++last_stack_id_;
    Row(stack_table_).I(id).B(ips, n * sizeof(uint64_t));
    for (size_t i = 0; i < n; ++i)
      if (ips[i] >> 63) kernel_addresses_.insert(ips[i]);
  }
  if (stacks_.size() >= kStacksPerGeneration) {
    old_stacks_ = std::move(stacks_);
    stacks_ = {};
  }
  stacks_.emplace(k, id);
  return id;
}

void Writer::Submit(bool force) {
  if (cur_.rows == 0 && cur_.exec.empty() && !force) return;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (failed_)
      ReturnChunks(cur_);  // disk full or similar: stop recording, keep going
    else
      queue_.push_back(std::move(cur_));
    cv_.notify_all();
  }
  cur_ = Batch{};
  last_flush_ns_ = NowNs(CLOCK_MONOTONIC);
  if (last_flush_ns_ - last_trim_ns_ >= limits_.idle_ns) TrimPool();
}

// free_ is taken from its end, so the chunks below its low-water mark were
// not touched since the last trim: a queue that once ran deep (a slow
// commit, a burst) no longer holds their memory.
void Writer::TrimPool() {
  std::vector<Chunk*> idle;
  {
    std::lock_guard<std::mutex> lk(mu_);
    size_t n = free_low_ > kChunksKept ? free_low_ - kChunksKept : 0;
    idle.assign(free_.begin(), free_.begin() + n);
    free_.erase(free_.begin(), free_.begin() + n);
    free_low_ = free_.size();
  }
  last_trim_ns_ = NowNs(CLOCK_MONOTONIC);
  if (idle.empty()) return;
  std::sort(idle.begin(), idle.end());
  owned_.erase(std::remove_if(owned_.begin(), owned_.end(),
                              [&](Chunk* c) { return std::binary_search(idle.begin(), idle.end(), c); }),
               owned_.end());
  for (Chunk* c : idle) munmap(c, sizeof(Chunk));
}

void Writer::MaybeFlush() {
  if (cur_.rows && NowNs(CLOCK_MONOTONIC) - last_flush_ns_ >= kFlushIntervalNs) Submit(false);
}

Status Writer::Drain() {
  Submit(false);
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return (queue_.empty() && in_flight_ == 0) || failed_; });
  return error_;
}

Status Writer::Exec(std::string_view sql, std::vector<SqlValue> params) {
  cur_.exec.push_back({std::string(sql), std::move(params)});
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
  // Every commit may checkpoint, truncate or restart the -wal: under sudo
  // with the invoking user's file access rights, on this thread, for its
  // whole life (fail closed: no batch is written without them).
  ActAsUser as_user;
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
    Status st = as_user.ok() ? WriteBatch(b) : Status(as_user.error());
    bool more;
    {
      std::lock_guard<std::mutex> lk(mu_);
      ReturnChunks(b);
      cv_.notify_all();
      more = !queue_.empty();
    }
    b = Batch{};  // texts kept aside and statements, freed outside the lock
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
  // Rows in the order they were made, whatever their table.
  for (Chunk*& c : b.chunks) {
    for (uint32_t at = 0; at < c->rows_end;) {
      const uint64_t* row = c->words + at;
      size_t t = row[0] & ((uint64_t{1} << kKindShift) - 1);
      size_t n = defs_[t].ncols;
      Stmt& st = stmts_[t];
      sqlite3_stmt* s = st.raw();
      sqlite3_bind_int64(s, 1, run_id_);
      for (size_t i = 0; i < n; ++i) {
        int idx = static_cast<int>(i) + 2;
        uint64_t v = row[1 + i];
        switch ((row[0] >> (kKindShift + 2 * i)) & 3) {
          case kInt: sqlite3_bind_int64(s, idx, static_cast<int64_t>(v)); break;
          case kText: {
            auto [p, len] = Record(v);
            sqlite3_bind_text(s, idx, p, len, SQLITE_STATIC);
            break;
          }
          case kBlob: {
            auto [p, len] = Record(v);
            sqlite3_bind_blob(s, idx, p, len, SQLITE_STATIC);
            break;
          }
          case kNull: sqlite3_bind_null(s, idx); break;
        }
      }
      Status rs = st.Run();
      if (!rs.ok()) {
        (void)db_.Exec("ROLLBACK");
        return MakeError("writing the profile database '" + db_.path() + "' failed: " + rs.error().message,
                         rs.error().code);
      }
      ++written;
      at += static_cast<uint32_t>(1 + n);
    }
    // SQLite has copied the chunk's rows into its pages: the drain thread
    // may fill it again now rather than after the commit, so a flood waits
    // for the writer a chunk at a time, not a batch at a time.
    std::lock_guard<std::mutex> lk(mu_);
    free_.push_back(c);
    c = nullptr;
    cv_.notify_all();
  }
  for (auto& e : b.exec) {
    Status es;
    auto st = db_.Prepare(e.sql);
    if (st) {
      // Bound without copies: the values live until the batch is freed, after the step.
      for (size_t i = 0; i < e.params.size(); ++i) st->BindStatic(static_cast<int>(i) + 1, e.params[i]);
      es = st->Run();
    } else {
      es = st.error();
    }
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
