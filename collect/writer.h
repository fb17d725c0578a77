//===- writer.h - batched, backpressured writes into the profile DB ------===//
// Probe groups decode ring-buffer events into rows on the drain thread;
// Writer buffers the rows and a writer thread inserts them with prepared
// statements, one transaction per batch. Rows live in fixed-size chunks
// taken from a pool of `queue_bytes`: the pool is the whole memory the rows
// may use, however fast events come. When SQLite falls behind, the pool
// runs dry, the drain thread waits for chunks, the ring buffers fill and
// the kernel side counts drops: memory stays bounded and loss is never
// silent. The pool grows only as deep as the queue gets, and chunks that
// sat unused for a while are given back to the kernel, so a long run's
// memory follows its current load, not the deepest queue it ever had.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

class Writer {
  struct Chunk;

 public:
  // What the writer may hold: rows waiting for SQLite, and SQLite's page
  // cache on the writer's connection.
  struct Limits {
    uint64_t queue_bytes = 16 << 20;
    uint64_t sqlite_cache_bytes = 4 << 20;
    // Pool chunks no row used for this long are unmapped.
    uint64_t idle_ns = 5'000'000'000;
  };

  // The most columns a table can declare (besides run_id): a row's header
  // word holds the table and two bits of kind per column.
  static constexpr size_t kMaxColumns = 24;
  // Distinct stacks the dedup table remembers per generation (StackId).
  static constexpr size_t kStacksPerGeneration = 16384;

  // One row, filled in declared column order. Until it is destroyed the
  // batch it writes into stays on this thread, so keep it no longer than
  // the statement that fills it.
  class RowBuilder {
   public:
    RowBuilder(const RowBuilder&) = delete;
    RowBuilder& operator=(const RowBuilder&) = delete;
    ~RowBuilder() { --w_->open_rows_; }

    RowBuilder& I(int64_t v) { return Put(kInt, static_cast<uint64_t>(v)); }
    RowBuilder& T(std::string_view v) { return Put(kText, w_->Bytes(v.data(), v.size())); }
    RowBuilder& B(const void* p, size_t n) { return Put(kBlob, w_->Bytes(p, n)); }
    RowBuilder& Null() { return Put(kNull, 0); }

   private:
    friend class Writer;
    RowBuilder(Writer* w, uint64_t* row) : w_(w), row_(row) { ++w_->open_rows_; }
    RowBuilder& Put(uint64_t kind, uint64_t v) {
      row_[0] |= kind << (kKindShift + 2 * col_);
      row_[1 + col_++] = v;
      return *this;
    }
    Writer* w_;
    uint64_t* row_;  // header word, then one word per column
    unsigned col_ = 0;
  };

  // Takes the database (opened by the caller), the run id every row gets
  // and what the writer may hold.
  Writer(Db db, int64_t run_id, Limits limits);
  ~Writer();

  // Declares a table. The run_id column is added first automatically;
  // `columns` lists the others. `verb` is "INSERT" or "INSERT OR IGNORE".
  // Returns a handle for Row(). Call before Start().
  int Table(const std::string& table, const std::vector<std::string>& columns,
            const std::string& verb = "INSERT");
  Status Start();

  // Appends a row to `table`; fill exactly its declared columns, in order.
  RowBuilder Row(int table);

  // Stores a stack of instruction pointers once per run and returns its id
  // (-> stack.id). Equal stacks get the same id. n == 0 gives 0 (no stack).
  int64_t StackId(const uint64_t* ips, size_t n);
  // The kernel addresses (upper half) in the stacks stored so far: what the
  // run's copy of the kernel's symbols must name.
  const std::unordered_set<uint64_t>& kernel_addresses() const { return kernel_addresses_; }
  // From now on every kernel address stored in a stack, and KernelAddress(),
  // goes through `map` (collect/kallsyms.h SyntheticKernelAddresses: for a
  // sudo user who may not see the kernel's addresses).
  void MapKernelAddresses(std::function<uint64_t(uint64_t)> map) { kernel_map_ = std::move(map); }
  uint64_t KernelAddress(uint64_t a) const { return kernel_map_ && (a >> 63) ? kernel_map_(a) : a; }
  bool kernel_addresses_mapped() const { return static_cast<bool>(kernel_map_); }

  // Hands the pending rows to the writer thread if they are older than the
  // flush interval (cheap to call often). Full batches go by themselves.
  void MaybeFlush();
  // Flushes everything and waits until it is committed.
  Status Drain();
  // Stops the thread after draining. Returns the first error, if any.
  Status Stop();

  uint64_t rows_written() const {
    std::lock_guard<std::mutex> lk(mu_);
    return rows_written_;
  }
  // The row pool's mapped memory (drain thread).
  uint64_t pool_bytes() const { return owned_.size() * sizeof(Chunk); }
  int64_t run_id() const { return run_id_; }
  // The first write error (disk full...), after which rows are discarded.
  bool failed() const;
  std::string error_message() const;
  // For statements outside the event stream (run bookkeeping), run on the
  // writer thread's connection after pending rows. `params` are bound to
  // ?1, ?2... without copies (large values: kallsyms). Blocks until done.
  Status Exec(std::string_view sql, std::vector<SqlValue> params = {});

 private:
  enum : uint64_t { kInt = 0, kText = 1, kBlob = 2, kNull = 3 };
  static constexpr unsigned kKindShift = 16;  // the header's low bits are the table

  // Rows from the front, text records ([u32 length][bytes]) from the back.
  static constexpr size_t kChunkBytes = 64 << 10;
  struct Chunk {
    uint32_t rows_end = 0;              // words of rows
    uint32_t text_begin = kWords * 8;   // first byte of the text records
    static constexpr size_t kWords = (kChunkBytes - 8) / 8;
    uint64_t words[kWords];
  };
  struct TableDef {
    std::string sql;
    size_t ncols;
  };
  struct Statement {
    std::string sql;
    std::vector<SqlValue> params;
  };
  struct Batch {
    std::vector<Chunk*> chunks;                  // from the pool; the last one is being filled
    std::vector<std::unique_ptr<char[]>> large;  // text records too big for a chunk
    std::vector<Statement> exec;                 // statements to run after the rows
    size_t rows = 0;
  };
  struct StackKey {
    uint64_t a, b;
    bool operator==(const StackKey& o) const { return a == o.a && b == o.b; }
  };
  struct StackKeyHash {
    size_t operator()(const StackKey& k) const { return k.a; }
  };

  void Loop();
  Status WriteBatch(Batch& b);
  void Submit(bool force);
  // Room for `words` words of row in the current chunk, a new one if needed.
  uint64_t* RowSpace(size_t words);
  // Stores bytes for a text or blob cell; returns the cell's value.
  uint64_t Bytes(const void* p, size_t n);
  Chunk* TakeChunk();
  void ReturnChunks(Batch& b);  // with mu_ held
  // Unmaps the chunks no row used since the last trim (drain thread).
  void TrimPool();

  Db db_;
  int64_t run_id_;
  Limits limits_;
  size_t max_chunks_, batch_chunks_;
  std::vector<TableDef> defs_;
  std::vector<Stmt> stmts_;
  std::string table_error_;
  Batch cur_;
  int open_rows_ = 0;  // RowBuilders alive: the batch may be handed over only at 0
  uint64_t last_flush_ns_ = 0;
  int stack_table_ = -1;
  // 128 bits of hash per stack instead of its frames: ~56 bytes per
  // distinct stack. In two generations: when the newer holds
  // kStacksPerGeneration stacks, the older is dropped, so a long run whose
  // new processes bring new stacks forever (each has its own addresses)
  // keeps at most two generations. A stack unseen for a whole generation
  // is stored again under a new id; analyses fold samples by frames.
  std::unordered_map<StackKey, int64_t, StackKeyHash> stacks_, old_stacks_;
  int64_t last_stack_id_ = 0;
  std::unordered_set<uint64_t> kernel_addresses_;
  std::function<uint64_t(uint64_t)> kernel_map_;
  std::vector<uint64_t> mapped_frames_;  // StackId's frames after kernel_map_
  std::vector<Chunk*> owned_;  // every chunk mapped (drain thread only)
  uint64_t last_trim_ns_ = 0;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Chunk*> free_;  // chunks the writer thread gave back; the last is taken first
  size_t free_low_ = 0;       // the fewest free_ held since the last trim
  std::deque<Batch> queue_;
  size_t in_flight_ = 0;
  bool stop_ = false;
  Status error_;
  bool failed_ = false;
  uint64_t rows_written_ = 0;
  std::thread thread_;
};

}  // namespace syspgo
