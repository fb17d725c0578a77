//===- irq_test.cc - the irq group against /proc/interrupts ---------------===//
// Drives the disk with O_DIRECT reads (each completion is an interrupt and a
// BLOCK softirq) while `syspgo collect --probes irq` records, then checks
// the histograms: per-CPU counts of the disk's interrupt lines can be no more
// than /proc/interrupts counted around the run, names match the kernel's,
// and every bucket and single-run record is consistent with the others.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace syspgo::test {
namespace {

// /proc/interrupts for numbered lines: irq -> per-CPU counts, and the
// handler names at the end of the line.
struct IrqLine {
  std::vector<int64_t> per_cpu;
  std::string names;
};

std::map<int, IrqLine> ProcInterrupts() {
  std::ifstream f("/proc/interrupts");
  std::string header, line;
  std::getline(f, header);
  std::istringstream hs(header);
  int ncpu = 0;
  for (std::string w; hs >> w;) ++ncpu;
  std::map<int, IrqLine> out;
  while (std::getline(f, line)) {
    std::istringstream ls(line);
    std::string label;
    ls >> label;
    if (label.empty() || label.back() != ':' || !isdigit(static_cast<unsigned char>(label[0]))) continue;
    IrqLine l;
    for (int c = 0; c < ncpu; ++c) {
      int64_t v = 0;
      ls >> v;
      l.per_cpu.push_back(v);
    }
    std::getline(ls, l.names);
    out[std::stoi(label)] = l;
  }
  return out;
}

// The MSI interrupt lines of the PCI device behind a block device: walk up
// from its sysfs device directory to the first one with msi_irqs/.
std::set<int> DiskIrqs(uint64_t dev) {
  std::string sys = "/sys/dev/block/" + std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
  if (access((sys + "/partition").c_str(), F_OK) == 0) sys += "/..";
  char real[PATH_MAX];
  std::set<int> irqs;
  if (!realpath((sys + "/device").c_str(), real)) return irqs;
  for (std::string d = real; d.size() > 1; d = d.substr(0, d.rfind('/'))) {
    DIR* m = opendir((d + "/msi_irqs").c_str());
    if (!m) continue;
    while (dirent* e = readdir(m))
      if (isdigit(static_cast<unsigned char>(e->d_name[0]))) irqs.insert(atoi(e->d_name));
    closedir(m);
    break;
  }
  return irqs;
}

TEST(Irq, DiskInterruptsAndSoftirqsPerCpu) {
  TempDir dir;
  std::string file = dir.File("data"), db_path = dir.File("run.db");
  ASSERT_EQ(Sh("dd if=/dev/urandom of=" + file + " bs=1M count=4 conv=fsync status=none").status, 0);
  std::set<int> disk_irqs = DiskIrqs(StatFile(file).dev);
  ASSERT_FALSE(disk_irqs.empty()) << "no MSI interrupt lines found for the disk behind " << file;

  auto before = ProcInterrupts();
  auto r = RunCmd({SyspgoBin(), "collect", "--probes", "irq", "--irq-min-us", "2", "-o", db_path, "--", "sh", "-c",
                "dd if=" + file + " of=/dev/null bs=64k count=64 iflag=direct status=none && sleep 0.2"});
  auto after = ProcInterrupts();
  ASSERT_EQ(r.status, 0) << r.err;
  Db db = OpenDb(db_path);
  EXPECT_EQ(QueryInt(db, "SELECT attached FROM run_probe WHERE probe_group = 'irq'"), 1);

  // Sane buckets: real CPUs, log2 bounds, the mean inside its bucket.
  long ncpu = sysconf(_SC_NPROCESSORS_CONF);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM irq_hist WHERE cpu < 0 OR cpu >= " + std::to_string(ncpu) +
                             " OR kind NOT IN ('hard', 'soft') OR hi_ns != 2 * MAX(lo_ns, 1) OR count <= 0"
                             " OR sum_ns < lo_ns * count OR sum_ns >= hi_ns * count"),
            0);
  // Softirqs fire all the time; their vectors carry the kernel's names.
  EXPECT_GE(QueryInt(db, "SELECT SUM(count) FROM irq_hist WHERE kind = 'soft'"), 1);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM irq_hist WHERE kind = 'soft' AND name != CASE vec WHEN 0 THEN 'HI' "
                         "WHEN 1 THEN 'TIMER' WHEN 2 THEN 'NET_TX' WHEN 3 THEN 'NET_RX' WHEN 4 THEN 'BLOCK' "
                         "WHEN 5 THEN 'IRQ_POLL' WHEN 6 THEN 'TASKLET' WHEN 7 THEN 'SCHED' WHEN 8 THEN 'HRTIMER' "
                         "WHEN 9 THEN 'RCU' END"),
            0);
  // Each completed read raised the BLOCK softirq somewhere.
  EXPECT_GE(QueryInt(db, "SELECT SUM(count) FROM irq_hist WHERE kind = 'soft' AND name = 'BLOCK'"), 1);

  // The disk's lines: counted, named as /proc/interrupts names them, and
  // per CPU never more than the kernel counted around the whole run.
  int64_t disk_total = 0;
  for (int irq : disk_irqs) {
    auto rows = QueryRows(db, "SELECT cpu, SUM(count), MIN(name), MAX(name) FROM irq_hist WHERE kind = 'hard' AND vec = " +
                                  std::to_string(irq) + " GROUP BY cpu ORDER BY cpu");
    for (auto& row : rows) {
      std::istringstream rs(row);
      std::string cpu_s, count_s, min_name, max_name;
      std::getline(rs, cpu_s, '\t');
      std::getline(rs, count_s, '\t');
      std::getline(rs, min_name, '\t');
      std::getline(rs, max_name, '\t');
      size_t cpu = std::stoul(cpu_s);
      int64_t count = std::stoll(count_s);
      disk_total += count;
      ASSERT_TRUE(before.count(irq) && after.count(irq)) << "irq " << irq << " not in /proc/interrupts";
      ASSERT_LT(cpu, after[irq].per_cpu.size());
      EXPECT_LE(count, after[irq].per_cpu[cpu] - before[irq].per_cpu[cpu]) << "irq " << irq << " cpu " << cpu;
      EXPECT_EQ(min_name, max_name);
      EXPECT_FALSE(min_name.empty());
      EXPECT_NE(after[irq].names.find(min_name), std::string::npos) << min_name << " vs " << after[irq].names;
    }
  }
  // 64 synchronous reads complete one at a time: an interrupt for most of them.
  EXPECT_GE(disk_total, 32);

  // Single runs: only those at or above the 2 us threshold, each inside a
  // histogram bucket of its CPU and vector that counted it.
  EXPECT_GE(QueryInt(db, "SELECT COUNT(*) FROM irq_run"), 1);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM irq_run WHERE dur < 2000"), 0);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM irq_run r WHERE NOT EXISTS (SELECT 1 FROM irq_hist h WHERE "
                         "h.run_id = r.run_id AND h.cpu = r.cpu AND h.kind = r.kind AND h.vec = r.vec AND "
                         "h.name = r.name AND h.lo_ns <= r.dur AND r.dur < h.hi_ns)"),
            0);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM (SELECT cpu, kind, vec, COUNT(*) AS n FROM irq_run GROUP BY cpu, kind, "
                         "vec) r WHERE n > (SELECT SUM(count) FROM irq_hist h WHERE h.cpu = r.cpu AND h.kind = r.kind "
                         "AND h.vec = r.vec)"),
            0);
}

}  // namespace
}  // namespace syspgo::test
