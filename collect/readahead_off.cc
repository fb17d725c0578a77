//===- readahead_off.cc - turn block-device readahead off during a run ---===//
#include "collect/readahead_off.h"
#include "common/util.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace syspgo {
namespace {

bool WriteValue(const std::string& path, const std::string& v) {
  std::ofstream f(path);
  f << v << "\n";
  f.flush();
  return static_cast<bool>(f);
}

// "254:0" → "vda" where /sys/dev/block knows it; else the bdi name.
std::string DeviceName(const std::string& file) {
  std::string dir = file.substr(0, file.rfind('/'));
  std::string bdi = dir.substr(dir.rfind('/') + 1);
  std::string target = ReadLinkOrEmpty("/sys/dev/block/" + bdi);
  if (target.empty()) return bdi;
  return target.substr(target.rfind('/') + 1);
}

}  // namespace

Status ReadaheadOff::TurnOff(const std::string& root) {
  DIR* d = opendir(root.c_str());
  if (!d)
    return MakeError("cannot list " + root + " to turn readahead off: " + strerror(errno) +
                         ". Run without --no-readahead.",
                     errno);
  std::vector<std::string> files;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') files.push_back(root + "/" + e->d_name + "/read_ahead_kb");
  closedir(d);
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    std::ifstream in(f);
    std::string kib;
    if (!(in >> kib) || kib == "0") continue;
    if (!WriteValue(f, "0")) {
      std::string err = strerror(errno);
      (void)Restore();
      return MakeError("cannot turn readahead off in " + f + ": " + err +
                           " (needs root). Run as root, or without --no-readahead.",
                       EACCES);
    }
    changed_.push_back({f, kib});
  }
  return {};
}

Status ReadaheadOff::Restore() {
  std::string failed;
  for (const Device& dv : changed_)
    if (!WriteValue(dv.path, dv.kib)) failed += (failed.empty() ? "" : ", ") + dv.path + " (was " + dv.kib + ")";
  changed_.clear();
  if (!failed.empty())
    return MakeError("could not restore readahead in " + failed + "; write those values back by hand");
  return {};
}

std::string ReadaheadOff::Describe() const {
  std::string out;
  for (const Device& dv : changed_) out += (out.empty() ? "" : ", ") + DeviceName(dv.path) + " " + dv.kib + " KiB";
  return out.empty() ? "no device had readahead on" : out;
}

}  // namespace syspgo
