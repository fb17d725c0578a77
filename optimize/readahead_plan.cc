//===- readahead_plan.cc - the readahead that fits each file a run touched ===//
#include "optimize/readahead_plan.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <map>
#include <utility>

#include "analyze/access_order.h"

namespace syspgo {
namespace {

constexpr uint64_t kPage = 4096;
// A touch "just after" the one before it starts at most this far past its
// end. Faults in a file read in order through a mapping come a fault-around
// window (64 KiB) apart, as the pages between were mapped with the fault.
constexpr uint64_t kInOrderSlack = 128 << 10;

// One row: a file whose numbers fall in every range of the row gets its
// advice; the first row that fits wins, and the last fits every file.
struct ReadaheadRule {
  const char* name;
  ReadaheadAdvice advice;
  uint64_t min_touches;
  double min_in_order, max_in_order;  // share of touches at or just after the one before
  double max_touched_share;           // of the file's size
  uint64_t min_size;                  // bytes
};

const ReadaheadRule kReadaheadRules[] = {
    // Read front to back: the kernel's window fits, and may grow.
    {"in-order", ReadaheadAdvice::kSequential, 4, 0.9, 1.0, 1.0, 0},
    // A small share of a file of some size, at scattered offsets: each
    // fault's readahead window (read_ahead_kb around the fault) would be
    // mostly pages nobody uses.
    {"scattered", ReadaheadAdvice::kRandom, 1, 0.0, 0.75, 0.25, 256 << 10},
    {"other", ReadaheadAdvice::kDefault, 0, 0.0, 1.0, 1.0, 0},
};

const ReadaheadRule& RuleFor(const ReadaheadFile& f) {
  const double share = f.size ? static_cast<double>(f.touched_bytes) / static_cast<double>(f.size) : 1.0;
  for (const ReadaheadRule& r : kReadaheadRules)
    if (f.touches >= r.min_touches && f.in_order >= r.min_in_order && f.in_order <= r.max_in_order &&
        share <= r.max_touched_share && f.size >= r.min_size)
      return r;
  return kReadaheadRules[std::size(kReadaheadRules) - 1];
}

// A device whose page-cache additions for this run went mostly to files
// used at scattered offsets reads less with a smaller window; rows tried in
// order, as for files.
struct DeviceRule {
  double min_random_share;  // of the bytes the run had read from the device
  int64_t min_current_kb;   // the setting now is at least this
  int64_t advised_kb;       // -1: leave it
  const char* why;
};

const DeviceRule kDeviceRules[] = {
    {0.5, 129, 128,
     "most of what the run read from this device was in files used at scattered offsets; a smaller window "
     "(the kernel's default) reads less for each fault in the files the plan does not name"},
    {0.0, 0, -1, "the window suits the run"},
};

// Bytes in the union of [offset, offset + length) ranges, in whole pages.
uint64_t Covered(std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  std::sort(ranges.begin(), ranges.end());
  uint64_t total = 0, end = 0;
  for (auto [off, len] : ranges) {
    uint64_t b = off / kPage * kPage, e = (off + len + kPage - 1) / kPage * kPage;
    if (e <= end) continue;
    total += e - std::max(b, end);
    end = e;
  }
  return total;
}

// The block device behind st_dev `dev` ("MAJ:MIN"), the sysfs file of its
// read_ahead_kb (its queue's, or its disk's for a partition) and its value.
void FindBlockReadahead(ReadaheadDevice* d) {
  const auto dev = static_cast<dev_t>(d->dev);
  if (major(dev) == 0) return;  // no block device: tmpfs, overlayfs, btrfs subvolumes
  d->block = std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
  for (const char* q : {"/queue/read_ahead_kb", "/../queue/read_ahead_kb"}) {
    std::string path = "/sys/dev/block/" + d->block + q;
    std::ifstream in(path);
    int64_t kb = -1;
    char real[PATH_MAX];
    if (!(in >> kb) || !realpath(path.c_str(), real)) continue;
    d->read_ahead_kb = kb;
    d->sysfs = real;
    return;
  }
}

// Paths are the last field of a line; a name with a tab or line break in
// it would break the line, so control characters are shown as '?' (the
// path is for people: the shim matches on dev and inode).
std::string LineSafe(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out;
}

}  // namespace

const char* ReadaheadAdviceName(ReadaheadAdvice a) {
  switch (a) {
    case ReadaheadAdvice::kDefault: return SYSPGO_READAHEAD_DEFAULT;
    case ReadaheadAdvice::kSequential: return SYSPGO_READAHEAD_SEQUENTIAL;
    case ReadaheadAdvice::kRandom: return SYSPGO_READAHEAD_RANDOM;
  }
  return "?";
}

Result<ReadaheadPlan> ReadaheadPlanFromRun(Db& db, int64_t run_id) {
  auto order = FileAccessOrder(db, run_id);
  if (!order) return order.error();
  ReadaheadPlan out;
  out.run = run_id;
  const size_t n = order->files.size();
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> used(n), added(n);
  std::vector<uint64_t> touches(n, 0), in_order(n, 0);
  std::vector<const FileTouch*> last(n, nullptr);
  for (const FileTouch& t : order->touches) {
    if (t.source == 'p') {
      added[t.file].push_back({t.offset, t.length});
      continue;
    }
    if (t.source != 'r' && t.source != 'f') continue;
    used[t.file].push_back({t.offset, t.length});
    if (const FileTouch* p = last[t.file]; p && t.offset >= p->offset && t.offset <= p->offset + p->length + kInOrderSlack)
      in_order[t.file]++;
    last[t.file] = &t;
    touches[t.file]++;
  }
  for (size_t i = 0; i < n; ++i) {
    const TouchedFile& tf = order->files[i];
    if (!touches[i]) continue;  // only pages the kernel read: no pattern to go by
    struct stat sb {};
    if (stat(tf.path.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode) || static_cast<uint64_t>(sb.st_dev) != tf.dev ||
        static_cast<uint64_t>(sb.st_ino) != tf.ino) {
      out.warnings.push_back(tf.path + ": gone or replaced since the run");
      continue;
    }
    ReadaheadFile f;
    f.path = tf.path;
    f.dev = tf.dev;
    f.ino = tf.ino;
    f.size = static_cast<uint64_t>(sb.st_size);
    f.touches = touches[i];
    f.touched_bytes = Covered(used[i]);
    f.added_bytes = Covered(added[i]);
    f.in_order = touches[i] > 1 ? static_cast<double>(in_order[i]) / static_cast<double>(touches[i] - 1) : 0.0;
    const ReadaheadRule& r = RuleFor(f);
    f.advice = r.advice;
    f.rule = r.name;
    out.files.push_back(std::move(f));
  }
  std::map<uint64_t, ReadaheadDevice> devices;
  for (const ReadaheadFile& f : out.files) {
    ReadaheadDevice& d = devices[f.dev];
    d.dev = f.dev;
    const uint64_t read = std::max(f.added_bytes, f.touched_bytes);
    d.touched_bytes += f.touched_bytes;
    d.added_bytes += read;
    if (f.advice == ReadaheadAdvice::kRandom) d.random_bytes += read;
    if (f.advice == ReadaheadAdvice::kSequential) d.sequential_bytes += read;
  }
  for (auto& [dev, d] : devices) {
    FindBlockReadahead(&d);
    if (d.sysfs.empty()) continue;  // nothing to set
    const double share = d.added_bytes ? static_cast<double>(d.random_bytes) / static_cast<double>(d.added_bytes) : 0;
    for (const DeviceRule& r : kDeviceRules) {
      if (share < r.min_random_share || d.read_ahead_kb < r.min_current_kb) continue;
      d.advised_kb = r.advised_kb < 0 ? d.read_ahead_kb : r.advised_kb;
      d.why = r.why;
      break;
    }
    out.devices.push_back(d);
  }
  return out;
}

std::string ReadaheadPlanText(const ReadaheadPlan& p) {
  std::string s = SYSPGO_READAHEAD_HEADER "\n";
  s += "# from run " + std::to_string(p.run) +
       "; made by `syspgo optimize DB --emit readahead`, applied by `syspgo prefetch --readahead FILE -- CMD`\n"
       "# (docs/coldstart.md). Tab-separated:\n"
       "# file ADVICE DEV INO SIZE TOUCHES TOUCHED_BYTES READ_BYTES IN_ORDER_PCT RULE PATH\n"
       "# device MAJ:MIN READ_AHEAD_KB ADVISED_KB SYSFS_FILE WHY (apply by hand, as root: echo ADVISED_KB > "
       "SYSFS_FILE)\n";
  char line[512];
  for (const ReadaheadFile& f : p.files) {
    snprintf(line, sizeof line, SYSPGO_READAHEAD_FILE_LINE "\t%s\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%.0f\t%s\t",
             ReadaheadAdviceName(f.advice), static_cast<unsigned long long>(f.dev),
             static_cast<unsigned long long>(f.ino), static_cast<unsigned long long>(f.size),
             static_cast<unsigned long long>(f.touches), static_cast<unsigned long long>(f.touched_bytes),
             static_cast<unsigned long long>(f.added_bytes), 100 * f.in_order, f.rule);
    s += line + LineSafe(f.path) + "\n";
  }
  for (const ReadaheadDevice& d : p.devices) {
    snprintf(line, sizeof line, SYSPGO_READAHEAD_DEVICE_LINE "\t%s\t%lld\t%lld\t", d.block.c_str(), static_cast<long long>(d.read_ahead_kb),
             static_cast<long long>(d.advised_kb));
    s += line + LineSafe(d.sysfs) + "\t" + d.why + "\n";
  }
  return s;
}

}  // namespace syspgo
