//===- plan.h - prefetch plans: build, merge, store, check files -----------===//
//
// A prefetch plan says which page-aligned byte ranges of which files a
// program touched first during a cold start, and when. It is built from raw
// touch records (page-cache additions, file-backed faults and reads, as the
// profile database holds them), merged across runs, stored as a versioned
// protobuf (schemas/prefetch_plan.proto, which states the invariants), and
// replayed by optimize/prefetch.h. Each file carries a fingerprint so the
// replayer never reads a file that changed since the plan was made.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/result.h"

namespace syspgo {

inline constexpr uint32_t kPlanFormatVersion = 1;
inline constexpr uint64_t kPlanPageSize = 4096;  // extent granularity, bytes

struct PlanExtent {
  uint64_t offset = 0;          // bytes, multiple of kPlanPageSize
  uint64_t length = 0;          // bytes, multiple of kPlanPageSize, > 0
  uint64_t first_touch_ns = 0;  // ns since program start
  bool operator==(const PlanExtent&) const = default;
};

// The bytes of `e` that lie within a file of `size` bytes rounded up to
// whole pages: what a replay reads of it. A plan from outside may claim any
// offset and length (one extent of 2^62 bytes over a 6-byte file); every
// reader of a plan (Bytes(), the replayer, the dry run, --hold, listings)
// goes by this, so nothing is sized by a claimed length. Plans syspgo
// writes never reach past their files (PlanBuilder clamps to the size it
// fingerprints), so for them this is `e.length`.
uint64_t ExtentBytesWithin(const PlanExtent& e, uint64_t size);

// What identifies the contents of a file cheaply (see sample_checksum in the
// schema for exactly which bytes the checksum covers).
struct FileFingerprint {
  uint64_t size = 0;       // bytes
  int64_t mtime_ns = 0;    // ns since the Unix epoch
  uint64_t inode = 0;
  uint64_t device = 0;     // st_dev
  uint64_t checksum = 0;   // FNV-1a 64 of the sampled blocks
  int64_t ctime_ns = 0;    // st_ctim; 0 unknown (see ctime_ns in the schema)
  bool operator==(const FileFingerprint&) const = default;
};

// The same contents: every field but ctime_ns (which chmod changes too) and
// device. An image mounted again (another loop device, the next boot, a
// file-backed mount) has another st_dev and the same files: a plan made
// for its mount point must still replay there. A file replaced in place
// shows in its inode, mtime, size or sampled bytes.
bool SameContents(const FileFingerprint& a, const FileFingerprint& b);

struct PlanFile {
  std::string path;                // absolute
  FileFingerprint fingerprint;
  std::vector<PlanExtent> extents; // first-touch order, disjoint
  uint64_t Bytes() const;          // of the extents within fingerprint.size (ExtentBytesWithin)
  bool operator==(const PlanFile&) const = default;
};

struct PlanCreation {
  std::string syspgo_version;
  std::string host;
  std::vector<int64_t> source_run_ids;  // ascending
  uint32_t merged_runs = 1;
  bool operator==(const PlanCreation&) const = default;
};

// A path the program looked up (see Lookup in the schema): the replayer
// resolves it before reading, so the program's own path walks find the
// directories and inodes in memory.
struct PlanLookup {
  std::string path;             // absolute, as the program gave it
  uint64_t first_touch_ns = 0;  // ns since program start
  bool operator==(const PlanLookup&) const = default;
};

struct Plan {
  uint32_t format_version = kPlanFormatVersion;
  PlanCreation creation;
  std::vector<PlanFile> files;  // ordered by first touch of their first extent
  std::vector<PlanLookup> lookups;  // first-lookup order
  uint64_t Bytes() const;
  size_t ExtentCount() const;
  bool operator==(const Plan&) const = default;
};

// One step of the replay: extent `extent` of file `file` (indices into Plan).
struct PlanStep {
  uint32_t file = 0;
  uint32_t extent = 0;
};
// Every extent of the plan in replay order: by first touch, then file index,
// then extent index, so files interleave as the program touched them.
std::vector<PlanStep> ReplayOrder(const Plan& plan);

// A range of a file the program touched; what the profile database provides.
struct TouchRecord {
  std::string path;
  uint64_t dev = 0;     // st_dev
  uint64_t ino = 0;
  uint64_t offset = 0;  // bytes
  uint64_t length = 0;  // bytes
  uint64_t ts_ns = 0;   // ns since program start
};

inline constexpr uint64_t kPlanDefaultMergeGap = 16 << 10;  // bytes

// Turns touch records into a plan: ranges are widened to whole pages, each
// page takes the time of its first touch, and ranges of a file that touch or
// lie within the merge gap of each other become one extent (the gap is read
// too) taking the earliest first touch.
class PlanBuilder {
 public:
  void Add(const TouchRecord& r) { Add(r.path, r.dev, r.ino, r.offset, r.length, r.ts_ns); }
  void Add(const std::string& path, uint64_t dev, uint64_t ino, uint64_t offset, uint64_t length, uint64_t ts_ns);
  // A path the program looked up at ts_ns. Relative paths and paths under
  // /proc, /sys and /dev (no disk behind them) are ignored; a path looked
  // up again keeps its first time.
  void AddLookup(const std::string& path, uint64_t ts_ns);
  // Room for n more touches, when the caller knows how many are coming.
  void Reserve(size_t n) { records_.reserve(records_.size() + n); }
  // Bytes, rounded down to whole pages; 0 merges only touching ranges.
  void SetMergeGap(uint64_t bytes) { merge_gap_ = bytes / kPlanPageSize * kPlanPageSize; }
  // Keeps every range at its own first touch, merging none (not even
  // touching ranges, whose pages a replay could read in one go): for orders
  // made from the plan (optimize/startup_order.h), not for replays.
  void KeepPieces() { keep_pieces_ = true; }
  void SetCreation(PlanCreation c) { creation_ = std::move(c); }
  struct Output {
    Plan plan;
    // Files left out, each with why (gone, replaced since the profile).
    std::vector<std::string> warnings;
  };
  // Fingerprints every file as it is on disk now. Files that no longer
  // exist, or whose (dev, ino) differs from the records', are left out with
  // a warning: their ranges describe other contents.
  Output Build() const;

 private:
  // Each file once: a plan of a long run adds millions of touches of a few
  // hundred files. A file is named by the path of its first touch.
  struct File {
    std::string path;
    uint64_t dev = 0, ino = 0;
    uint64_t named_at = 0, named_offset = 0;  // (ts_ns, offset) of the touch `path` came from
  };
  struct Record {
    uint32_t file = 0;
    uint64_t offset = 0, length = 0, ts_ns = 0;
  };
  std::vector<File> files_;
  std::map<std::pair<uint64_t, uint64_t>, uint32_t> file_of_;  // (dev, ino) -> files_
  std::vector<Record> records_;
  std::map<std::string, uint64_t> lookups_;  // path -> first lookup
  PlanCreation creation_;
  uint64_t merge_gap_ = kPlanDefaultMergeGap;
  bool keep_pieces_ = false;
};

// Merges plans from several cold runs: per path the union of the ranges,
// each range ordered by the median of its first-touch times across the plans
// that touched it. A path whose fingerprint differs between plans keeps the
// fingerprint of the last plan listing it, and only the ranges of the plans
// that agree with that one (the others described older contents). Lookups
// are the union of the plans', each at the median of its first-lookup times.
Result<Plan> MergePlans(const std::vector<Plan>& plans);

// Reads a file's fingerprint. The sampled blocks are read with O_DIRECT
// where the file system allows it, so checking a file does not put pages
// into the page cache that the plan did not list.
Result<FileFingerprint> ComputeFingerprint(const std::string& path);
// The same for an open file descriptor (its O_DIRECT flag is toggled for the
// sample reads and restored). With `recorded` (a plan's fingerprint of the
// file, ctime known): when size, mtime, inode, device and ctime all still
// equal it, the file has not changed since (see ctime_ns in the schema),
// and its checksum is taken from `recorded` without reading anything.
Result<FileFingerprint> ComputeFingerprint(int fd, const std::string& path,
                                           const FileFingerprint* recorded = nullptr);

// Why `now` differs from `planned`, or "" when they match.
std::string DescribeMismatch(const FileFingerprint& planned, const FileFingerprint& now);

// Writes `plan` to `path` (header + protobuf; see the schema) atomically.
Status WritePlan(const Plan& plan, const std::string& path);
// Reads and checks a plan file. A file that is not a plan, is truncated,
// corrupted, of a newer version, or breaks an invariant is refused whole,
// with an error naming the file and the problem.
Result<Plan> ReadPlan(const std::string& path);
// Serialized form (header + protobuf), and its inverse; `name` is used in
// error messages.
std::string SerializePlan(const Plan& plan);
Result<Plan> ParsePlan(const std::string& bytes, const std::string& name);
// Checks the invariants listed in the schema.
Status CheckPlan(const Plan& plan, const std::string& name);

// A table for people of the extents in replay order (order, offset, length,
// first touch, file); with `include` non-empty, only files i where
// include[i] is true.
std::string ReplayListing(const Plan& plan, const std::vector<bool>& include = {});

// The plan as JSON: creation info and every file with its extents.
std::string PlanJson(const Plan& plan);

}  // namespace syspgo
