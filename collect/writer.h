//===- writer.h - batched, backpressured writes into the profile DB ------===//
// Probe groups decode ring-buffer events into rows on the drain thread;
// Writer buffers the rows and a writer thread inserts them with prepared
// statements, one transaction per batch. The queue between the two is
// bounded: when SQLite falls behind, the drain thread waits, the ring
// buffers fill, and the kernel side counts drops: memory stays bounded and
// loss is never silent.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

class Writer {
 public:
  // A cell: an integer, a text or a blob (bytes, kept in the batch's
  // `strings`, `i` is the index), or NULL. Trivially copyable: rows of
  // integers, the common case, cost no allocation.
  struct Cell {
    enum Kind : uint8_t { kInt, kText, kBlob, kNull } kind;
    int64_t i;
  };

  class RowBuilder {
   public:
    RowBuilder& I(int64_t v) { *c_++ = Cell{Cell::kInt, v}; return *this; }
    RowBuilder& T(std::string v) {
      *c_++ = Cell{Cell::kText, static_cast<int64_t>(strings_->size())};
      strings_->push_back(std::move(v));
      return *this;
    }
    RowBuilder& B(const void* p, size_t n) {
      *c_++ = Cell{Cell::kBlob, static_cast<int64_t>(strings_->size())};
      strings_->emplace_back(static_cast<const char*>(p), n);
      return *this;
    }
    RowBuilder& Null() { *c_++ = Cell{Cell::kNull, 0}; return *this; }

   private:
    friend class Writer;
    RowBuilder(Cell* c, std::vector<std::string>* strings) : c_(c), strings_(strings) {}
    Cell* c_;
    std::vector<std::string>* strings_;
  };

  // Takes the database (opened by the caller) and the run id every row gets.
  Writer(Db db, int64_t run_id);
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

  // Hands the pending rows to the writer thread (at most every `interval`
  // or when a batch is full; cheap to call often).
  void MaybeFlush();
  // Flushes everything and waits until it is committed.
  Status Drain();
  // Stops the thread after draining. Returns the first error, if any.
  Status Stop();

  uint64_t rows_written() const { return rows_written_; }
  int64_t run_id() const { return run_id_; }
  // The first write error (disk full...), after which rows are discarded.
  bool failed() const;
  std::string error_message() const;
  // For statements outside the event stream (run bookkeeping), run on the
  // writer thread's connection after pending rows. Blocks until done.
  Status Exec(const std::string& sql);

 private:
  struct TableDef {
    std::string sql;
    size_t ncols;
  };
  struct Batch {
    std::vector<std::vector<Cell>> cells;  // per table: rows * ncols cells
    std::vector<std::string> strings;      // texts and blobs the cells point to
    std::vector<size_t> rows;
    std::vector<std::string> exec;         // statements to run after the rows
    size_t total = 0;
  };
  void Loop();
  Status WriteBatch(Batch& b);
  void Submit(bool force);
  Batch NewBatch();

  Db db_;
  int64_t run_id_;
  std::vector<TableDef> defs_;
  std::vector<Stmt> stmts_;
  Batch cur_;
  std::vector<size_t> last_rows_;  // rows per table in the last batch handed over
  uint64_t last_flush_ns_ = 0;
  int stack_table_ = -1;
  std::unordered_map<std::string, int64_t> stacks_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Batch> queue_;
  size_t in_flight_ = 0;
  bool stop_ = false;
  Status error_;
  bool failed_ = false;
  uint64_t rows_written_ = 0;
  std::thread thread_;
};

}  // namespace syspgo
