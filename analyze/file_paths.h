//===- file_paths.h - which path a (device, inode) had at a given time ---===//
// The file table keeps one path per (dev, ino) for the whole run: the first
// one seen. Inodes are reused: a checkpoint written, deleted and written
// again under a new name often gets the same inode back, and the file
// table then names every later checkpoint after the first. The opens of
// the run say which name the inode had when: the path of the latest open
// of it before the moment asked about. This is what io and stalls print.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/sqlite.h"

namespace syspgo {

class FilePaths {
 public:
  static Result<FilePaths> Load(Db& db, int64_t run_id);
  // The path of (dev, ino) at `ts`: the latest successful open of it that
  // started at or before `ts`, else the first one after (the file was open
  // before the run), else the file table's, else that of a mapping of it
  // (a file the kernel mapped at exec); "" if none names it. Relative
  // open paths are made absolute with the file table's path (which the
  // kernel resolved), keeping its directories.
  std::string At(uint64_t dev, uint64_t ino, int64_t ts) const;

 private:
  using Key = std::pair<uint64_t, uint64_t>;
  std::map<Key, std::vector<std::pair<int64_t, std::string>>> opens_;  // by open time
  std::map<Key, std::string> first_;                                   // the file table
};

// Runs of digits replaced by "<N>": /ckpt/step-5.bin and /ckpt/step-10.bin
// are the same kind of file, written by the same code.
std::string PathShape(const std::string& path);
// What `paths` (one kind of file) have in common, for people: the
// components where they differ shaped as PathShape does, the others as
// they are ("/var/tmp/run7/ckpt-<N>.bin", not "/var/tmp/run<N>/ckpt-<N>.bin").
// "" for no paths, the path itself for one.
std::string CommonShape(const std::vector<std::string>& paths);

}  // namespace syspgo
