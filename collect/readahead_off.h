//===- readahead_off.h - turn block-device readahead off during a run ----===//
// A cold start recorded with readahead on says little about which pages the
// program used: a fault on one page reads the device's whole readahead
// window (often megabytes) and fault-around then maps its neighbours
// without faulting again, so the faults name a few pages and the page-cache
// additions name everything read. With readahead off, every page the
// program uses arrives by a read or fault of its own, and the run records
// exactly the pages a prefetch plan needs (`collect --no-readahead`, then
// `optimize --emit plan --pages touched`).
//
// The setting is per backing device (/sys/class/bdi/*/read_ahead_kb) and
// affects the whole machine while it is off; files opened in that time keep
// a readahead window of 0 until closed. The previous values come back when
// the object is destroyed.
#pragma once
#include <string>
#include <vector>

#include "common/result.h"

namespace syspgo {

class ReadaheadOff {
 public:
  ReadaheadOff() = default;
  ReadaheadOff(const ReadaheadOff&) = delete;
  ReadaheadOff& operator=(const ReadaheadOff&) = delete;
  ~ReadaheadOff() { (void)Restore(); }

  // Sets every device's readahead to 0, remembering the old values.
  // `root` is the sysfs bdi class directory (tests may pass their own).
  Status TurnOff(const std::string& root = "/sys/class/bdi");
  // Puts the remembered values back (once); returns what could not be.
  Status Restore();

  struct Device {
    std::string path;  // its read_ahead_kb file
    std::string kib;   // the value before, as read
  };
  const std::vector<Device>& changed() const { return changed_; }
  // "vda 8192 KiB, ..." for messages.
  std::string Describe() const;

 private:
  std::vector<Device> changed_;
};

}  // namespace syspgo
