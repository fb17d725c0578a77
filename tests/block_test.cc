//===- block_test.cc - the block group on the real disk ------------------===//
// Reads and writes a file under /var/tmp (a real disk) while `syspgo
// collect --probes block` records, and checks the requests against what the
// filesystem says about the file: its device (stat), its place on the disk
// (FIEMAP) and, for buffered writes, that each request names the file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace syspgo::test {
namespace {

constexpr int64_t kMiB = 1 << 20;

// Writes `bytes` of non-zero data and makes it durable, so a later O_DIRECT
// read goes to the disk and FIEMAP reports allocated extents.
void WriteDurable(const std::string& path, int64_t bytes) {
  int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  ASSERT_GE(fd, 0) << path;
  std::string chunk(kMiB, 'x');
  for (int64_t done = 0; done < bytes; done += kMiB) ASSERT_EQ(write(fd, chunk.data(), chunk.size()), kMiB);
  ASSERT_EQ(fsync(fd), 0);
  close(fd);
}

// Where the file's first `len` bytes lie on its block device, as SQL:
// a condition on block_rq.sector (512-byte units on the whole disk, so the
// partition's start is added) that holds for a request inside those extents.
std::string SectorsOfFirstBytes(const std::string& path, int64_t len, int64_t start_sector) {
  int fd = open(path.c_str(), O_RDONLY);
  EXPECT_GE(fd, 0) << path;
  constexpr int kMax = 64;
  std::vector<char> buf(sizeof(fiemap) + kMax * sizeof(fiemap_extent));
  auto* fm = reinterpret_cast<fiemap*>(buf.data());
  fm->fm_start = 0;
  fm->fm_length = len;
  fm->fm_flags = FIEMAP_FLAG_SYNC;
  fm->fm_extent_count = kMax;
  int rc = ioctl(fd, FS_IOC_FIEMAP, fm);
  close(fd);
  EXPECT_EQ(rc, 0) << "FIEMAP on " << path;
  EXPECT_GE(fm->fm_mapped_extents, 1u);
  std::string cond = "(0";
  for (uint32_t i = 0; rc == 0 && i < fm->fm_mapped_extents; ++i) {
    const fiemap_extent& x = fm->fm_extents[i];
    int64_t first = static_cast<int64_t>(x.fe_physical >> 9) + start_sector;
    cond += " OR (sector >= " + std::to_string(first) + " AND sector < " +
            std::to_string(first + static_cast<int64_t>(x.fe_length >> 9)) + ")";
  }
  return cond + ")";
}

std::string ReadLine(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

// What sysfs says about the device a filesystem sits on: its first sector on
// the whole disk (0 unless it is a partition) and the whole disk's number.
struct DiskInfo {
  int64_t start_sector = 0;
  uint64_t disk_dev = 0;
};

DiskInfo DiskOf(uint64_t dev) {
  std::string sys = "/sys/dev/block/" + std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
  DiskInfo d{0, dev};
  if (access((sys + "/partition").c_str(), F_OK) == 0) {
    d.start_sector = std::stoll(ReadLine(sys + "/start"));
    char real[PATH_MAX];
    EXPECT_NE(realpath(sys.c_str(), real), nullptr) << sys;
    std::string mm = ReadLine(std::string(real) + "/../dev");  // "major:minor"
    d.disk_dev = makedev(std::stoul(mm), std::stoul(mm.substr(mm.find(':') + 1)));
  }
  return d;
}

TEST(Block, DirectReadOfOneMiBIsRecordedOnItsDevice) {
  TempDir dir;
  std::string file = dir.File("data"), db_path = dir.File("run.db");
  WriteDurable(file, 4 * kMiB);
  DevIno fs = StatFile(file);
  DiskInfo disk = DiskOf(fs.dev);
  std::string in_file = SectorsOfFirstBytes(file, kMiB, disk.start_sector);

  auto r = RunCmd({SyspgoBin(), "collect", "--probes", "block", "-o", db_path, "--", "dd", "if=" + file, "of=/dev/null",
                   "bs=1M", "count=1", "iflag=direct"});
  ASSERT_EQ(r.status, 0) << r.err;
  Db db = OpenDb(db_path);
  EXPECT_EQ(QueryInt(db, "SELECT attached FROM run_probe WHERE probe_group = 'block'"), 1);

  // dd's reads of the file's sectors (dd also reads its own binary and
  // libraries if they are not cached): 1 MiB in all, maybe split, on the
  // file's device, each taking the device some time, submitted by dd.
  const std::string mine = "FROM block_rq WHERE target = 1 AND op = 0 AND comm = 'dd' AND " + in_file;
  EXPECT_EQ(QueryInt(db, "SELECT SUM(bytes) " + mine), kMiB);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) " + mine + " AND part_dev != " + std::to_string(fs.dev)), 0);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) " + mine + " AND dev != " + std::to_string(disk.disk_dev)), 0);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) " + mine + " AND dur <= 0"), 0);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) " + mine + " AND pid NOT IN (SELECT pid FROM process WHERE comm = 'dd')"),
            0);
  // O_DIRECT reads into dd's anonymous buffer: no file page, no readahead.
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) " + mine + " AND (file_ino != 0 OR flags & 16 != 0 OR error != 0)"), 0);
  // Names of the ops come from this kernel.
  EXPECT_EQ(QueryRows(db, "SELECT name FROM block_op WHERE op IN (0, 1) ORDER BY op"),
            (std::vector<std::string>{"read", "write"}));

  // The in-kernel histogram has the device's reads, and dd's request sits in
  // a bucket that counted it.
  const std::string hist = "FROM block_latency_hist WHERE op = 0 AND part_dev = " + std::to_string(fs.dev);
  EXPECT_GE(QueryInt(db, "SELECT SUM(count) " + hist), QueryInt(db, "SELECT COUNT(*) " + mine));
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) " + mine + " AND flags & 512 = 0 AND NOT EXISTS (SELECT 1 " + hist +
                             " AND lo_ns <= block_rq.dur AND block_rq.dur < hi_ns AND count >= 1)"),
            0);
  // Every bucket is a log2 bucket whose mean lies inside it.
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM block_latency_hist WHERE hi_ns != 2 * MAX(lo_ns, 1) OR count <= 0 "
                         "OR sum_ns < lo_ns * count OR sum_ns >= hi_ns * count"),
            0);
}

TEST(Block, FsyncWritebackNamesTheFileAndTheWriter) {
  TempDir dir;
  std::string file = dir.File("out"), db_path = dir.File("run.db");
  auto r = RunCmd({SyspgoBin(), "collect", "--probes", "block", "-o", db_path, "--", "dd", "if=/dev/zero", "of=" + file,
                "bs=1M", "count=1", "conv=fsync"});
  ASSERT_EQ(r.status, 0) << r.err;
  DevIno f = StatFile(file);
  Db db = OpenDb(db_path);

  // fsync writes the dirty pages back from dd's own context; each request
  // names the file and the page it starts at.
  const std::string writes = "FROM block_rq WHERE op = 1 AND file_dev = " + std::to_string(f.dev) +
                             " AND file_ino = " + std::to_string(f.ino);
  EXPECT_GE(QueryInt(db, "SELECT SUM(bytes) " + writes), kMiB);
  EXPECT_EQ(QueryInt(db, "SELECT MIN(file_index) " + writes), 0);
  EXPECT_LT(QueryInt(db, "SELECT MAX(file_index) " + writes), kMiB / 4096);
  EXPECT_GE(QueryInt(db, "SELECT COUNT(*) " + writes + " AND target = 1 AND comm = 'dd'"), 1);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) " + writes + " AND part_dev != " + std::to_string(f.dev)), 0);
  // fsync writes with WB_SYNC_ALL: every request dd made is a sync write.
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) " + writes + " AND target = 1 AND flags & 1 = 0"), 0);
  // On a disk with a volatile write cache fsync ends with a cache flush:
  // dd's own data-less write with PREFLUSH, which never reaches the driver
  // (unissued, 1024), and the flush request the queue sent the device for it
  // (op flush, no submitter). With a write-through cache the kernel drops the
  // flush before it makes a request.
  DiskInfo disk = DiskOf(f.dev);
  std::string sys = "/sys/dev/block/" + std::to_string(major(disk.disk_dev)) + ":" +
                    std::to_string(minor(disk.disk_dev)) + "/queue/write_cache";
  bool write_back = ReadLine(sys) == "write back";
  const std::string on_disk = "FROM block_rq WHERE dev = " + std::to_string(disk.disk_dev);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) " + on_disk +
                             " AND op = 1 AND bytes = 0 AND comm = 'dd' AND target = 1 AND flags & (8 | 1024) = (8 | 1024)") >= 1,
            write_back)
      << sys;
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) " + on_disk + " AND op = 2 AND pid = 0 AND flags & 1024 = 0 AND dur > 0") >= 1,
            write_back)
      << sys;
}

}  // namespace
}  // namespace syspgo::test
