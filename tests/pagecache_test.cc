//===- pagecache_test.cc - the pagecache group on the real kernel --------===//
// Cold reads of a file under /var/tmp: first with memory to spare (every
// page read is added once), then inside a small v1 memory cgroup, made as a
// child of this process's own and removed afterwards, with a file three
// times its limit read twice through a mapping: the cgroup's reclaim
// deletes pages (stacks through try_to_free_mem_cgroup_pages) and the
// second pass adds them again.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analyze/pagecache.h"
#include "common/damon.h"
#include "common/util.h"
#include "tests/findings_json.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

constexpr int64_t kMiB = 1 << 20;
constexpr int64_t kPage = 4096;

// Writes `bytes` of random data, makes it durable and drops the clean page
// cache, so the run's reads start cold and charge the reader's cgroup.
void MakeColdFile(const std::string& path, int64_t bytes) {
  ASSERT_EQ(Sh("head -c " + std::to_string(bytes) + " /dev/urandom > " + path + " && sync " + path +
               " && echo 1 > /proc/sys/vm/drop_caches")
                .status,
            0);
}

// Page ranges [idx, idx + pages) of the file's additions, in time order.
struct Folio {
  int64_t ts, op, idx, pages;
};
std::vector<Folio> FolioEvents(Db& db, const DevIno& f) {
  std::vector<Folio> out;
  for (auto& row : QueryRows(db, "SELECT ts, op, idx, pages FROM page_cache WHERE dev = " + std::to_string(f.dev) +
                                     " AND ino = " + std::to_string(f.ino) + " ORDER BY ts, op")) {
    Folio e{};
    std::istringstream(row) >> e.ts >> e.op >> e.idx >> e.pages;
    out.push_back(e);
  }
  return out;
}

TEST(PagecacheGroup, ColdReadAddsEveryPageRead) {
  TempDir dir;
  std::string data = dir.File("cold");
  constexpr int64_t kBytes = 8 * kMiB;
  MakeColdFile(data, kBytes);
  DevIno f = StatFile(data);
  std::string db_path = dir.File("run.db");
  CmdResult r = RunCmd({SyspgoBin(), "collect", "-o", db_path, "--detail", "full", "--probes", "pagecache", "--", "/bin/sh", "-c",
                     "cat " + data + " > /dev/null"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;

  Db db = OpenDb(db_path);
  EXPECT_EQ(QueryRows(db, "SELECT attached FROM run_probe WHERE probe_group = 'pagecache'"),
            std::vector<std::string>{"1"});
  std::set<int64_t> added;
  for (auto& e : FolioEvents(db, f))
    for (int64_t p = e.idx; e.op == 1 && p < e.idx + e.pages; ++p) EXPECT_TRUE(added.insert(p).second) << p;
  // The tree deleted nothing. (A DAMON pageout scheme, where one runs, may evict
  // a page cat already read: kdamond's deletion is recorded, not the tree's.)
  std::string of_file = " FROM page_cache WHERE dev = " + std::to_string(f.dev) + " AND ino = " + std::to_string(f.ino);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*)" + of_file + " AND op = 2 AND comm NOT LIKE 'kdamond%'"), 0);
  ASSERT_FALSE(added.empty());
  EXPECT_EQ(*added.begin(), 0);
  EXPECT_GE(*added.rbegin(), kBytes / kPage - 1);
  EXPECT_EQ(static_cast<int64_t>(added.size()), kBytes / kPage);
  // Added by the traced cat, for itself.
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*)" + of_file + " AND op = 1 AND (why & 1 = 0 OR comm != 'cat' OR stack_id != 0"
                         " OR pid NOT IN (SELECT pid FROM process))"),
            0);
  // The read went through readahead: a sync trigger at page 0 and windows.
  std::string ra = " FROM readahead WHERE dev = " + std::to_string(f.dev) + " AND ino = " + std::to_string(f.ino);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*)" + ra + " AND kind = 1 AND idx = 0"), 1);
  EXPECT_GT(QueryInt(db, "SELECT COUNT(*)" + ra + " AND kind = 3"), 0);
}

// The kernel's text symbols, to name the frames of a stored stack.
class Kallsyms {
 public:
  Kallsyms() {
    std::ifstream f("/proc/kallsyms");
    std::string line, type, name;
    uint64_t addr;
    while (std::getline(f, line)) {
      std::istringstream is(line);
      is >> std::hex >> addr >> type >> name;
      if (addr && (type == "t" || type == "T")) syms_[addr] = name;
    }
  }
  std::string Name(uint64_t ip) const {
    auto it = syms_.upper_bound(ip);
    return it == syms_.begin() ? "" : std::prev(it)->second;
  }
  bool empty() const { return syms_.empty(); }

 private:
  std::map<uint64_t, std::string> syms_;
};

std::vector<std::string> StackNames(Db& db, int64_t id, const Kallsyms& ks) {
  std::vector<std::string> names;
  auto st = db.Prepare("SELECT frames FROM stack WHERE id = " + std::to_string(id));
  EXPECT_TRUE(st.ok());
  if (!st.ok() || !st->Step()) return names;
  auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(st->raw(), 0));
  int n = sqlite3_column_bytes(st->raw(), 0);
  for (int i = 0; i + 8 <= n; i += 8) {
    uint64_t ip;
    memcpy(&ip, p + i, 8);  // little-endian on x86_64
    names.push_back(ks.Name(ip));
  }
  return names;
}

// A child of this process's v1 memory cgroup, removed at destruction.
class ChildMemcg {
 public:
  explicit ChildMemcg(int64_t limit = -1) {  // limit < 0: no limit of its own
    std::string mount, rel, line;
    std::ifstream mounts("/proc/mounts");
    while (std::getline(mounts, line)) {
      std::istringstream is(line);
      std::string dev, dir, type, opts;
      is >> dev >> dir >> type >> opts;
      if (type == "cgroup" && ("," + opts + ",").find(",memory,") != std::string::npos) mount = dir;
    }
    std::ifstream self("/proc/self/cgroup");
    while (std::getline(self, line)) {
      size_t c1 = line.find(':'), c2 = line.find(':', c1 + 1);
      std::string ctl = "," + line.substr(c1 + 1, c2 - c1 - 1) + ",";
      if (ctl.find(",memory,") != std::string::npos) rel = line.substr(c2 + 1);
    }
    if (mount.empty()) return;
    name_ = "syspgo-test-" + std::to_string(getpid());
    rel_ = (rel == "/" ? "" : rel) + "/" + name_;
    path_ = mount + rel_;
    if (mkdir(path_.c_str(), 0755) != 0) {
      path_.clear();
      return;
    }
    if (limit >= 0) std::ofstream(path_ + "/memory.limit_in_bytes") << limit;
  }
  ~ChildMemcg() {
    if (!path_.empty()) rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }  // "" if it could not be made
  const std::string& rel() const { return rel_; }     // path under the hierarchy's mount

 private:
  std::string name_, rel_, path_;
};

TEST(PagecacheGroup, MemcgReclaimDeletesWithStacksAndRefaults) {
  constexpr int64_t kLimit = 32 * kMiB;
  constexpr int64_t kBytes = 3 * kLimit;
  TempDir dir;
  std::string data = dir.File("big");
  MakeColdFile(data, kBytes);
  DevIno f = StatFile(data);
  ChildMemcg cg(kLimit);
  ASSERT_FALSE(cg.path().empty()) << "cannot make a child of this process's v1 memory cgroup";
  struct stat cgst {};
  ASSERT_EQ(stat(cg.path().c_str(), &cgst), 0);
  std::string cg_id = std::to_string(cgst.st_ino);

  std::string db_path = dir.File("run.db");
  // The file is read twice through a mapping, a page at a time. Not with
  // read(2): on some of these VMs a read from the disk, even O_DIRECT, is
  // charged to the reader's cgroup as shmem of the same size, which reclaim
  // cannot drop without swap, and the cgroup's OOM killer ends the reader.
  std::string reader = "import mmap, os\n"
                       "m = mmap.mmap(os.open('" + data + "', os.O_RDONLY), 0, prot=mmap.PROT_READ)\n"
                       "for _ in range(2): sum(m[i] for i in range(0, len(m), 4096))\n";
  CmdResult r = RunCmd({SyspgoBin(), "collect", "-o", db_path, "--detail", "full", "--probes", "pagecache", "--", "/bin/sh", "-c",
                        "echo $$ > " + cg.path() + "/cgroup.procs && exec python3 -c \"$0\"", reader});
  // A reader killed by the cgroup's OOM killer means its charge was not
  // page cache that reclaim can drop: the cgroup's own account says what.
  ASSERT_EQ(r.status, 0) << r.out << r.err << "\nthe cgroup's memory.stat:\n"
                         << Sh("grep -E '^(cache|rss|shmem|mapped_file|inactive_anon|inactive_file) ' " + cg.path() +
                               "/memory.stat")
                                .out;
  Db db = OpenDb(db_path);
  std::string of_file = " FROM page_cache WHERE dev = " + std::to_string(f.dev) + " AND ino = " + std::to_string(f.ino);

  // The cgroup, as it was during the run.
  EXPECT_EQ(QueryRows(db, "SELECT path, limit_bytes FROM memory_cgroup WHERE id = " + cg_id),
            std::vector<std::string>{cg.rel() + "\t" + std::to_string(kLimit)});
  // The reader ran in it and its pages were charged to it.
  EXPECT_GT(QueryInt(db, "SELECT COUNT(*)" + of_file + " AND op = 1 AND comm = 'python3' AND task_cgroup = " + cg_id +
                         " AND page_cgroup = " + cg_id),
            0);

  // Deletions: the cgroup's own reclaim, run by the reader as it hit the limit.
  int64_t deleted = QueryInt(db, "SELECT SUM(pages)" + of_file + " AND op = 2 AND page_cgroup = " + cg_id);
  EXPECT_GE(deleted, (kBytes - kLimit) / kPage);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*)" + of_file + " AND op = 2 AND stack_id = 0"), 0);
  // Each deletion in reclaim took its own stack.
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*)" + of_file + " AND op = 2 AND (why & 256) != 0"), 0);
  Kallsyms ks;
  ASSERT_FALSE(ks.empty());
  int reclaim_stacks = 0;
  auto ids = QueryRows(db, "SELECT DISTINCT stack_id" + of_file + " AND op = 2 ORDER BY stack_id");
  for (auto& id : ids) {
    auto names = StackNames(db, std::stoll(id), ks);
    bool memcg = std::count(names.begin(), names.end(), "try_to_free_mem_cgroup_pages") > 0;
    bool shrink = std::count(names.begin(), names.end(), "shrink_folio_list") > 0;
    reclaim_stacks += memcg && shrink;
  }
  EXPECT_GT(reclaim_stacks, 0) << ids.size() << " deletion stacks, none through memcg reclaim";

  // Refaults: replay the file's events page by page and count the additions
  // that bring back a page deleted before; the schema's view must agree.
  std::set<int64_t> was_deleted;
  int64_t refault_folios = 0, refault_pages = 0;
  for (auto& e : FolioEvents(db, f)) {
    bool refault = false;
    for (int64_t p = e.idx; p < e.idx + e.pages; ++p) {
      if (e.op == 2) {
        was_deleted.insert(p);
      } else if (was_deleted.count(p)) {
        refault = true;
      }
    }
    refault_folios += refault;
    refault_pages += refault ? e.pages : 0;
  }
  // The second read finds at most the last limit's worth still cached.
  EXPECT_GE(refault_pages, (kBytes - kLimit) / kPage);
  std::string view = " FROM page_cache_refault WHERE dev = " + std::to_string(f.dev) + " AND ino = " +
                     std::to_string(f.ino);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*)" + view), refault_folios);
  EXPECT_EQ(QueryInt(db, "SELECT SUM(pages)" + view), refault_pages);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*)" + view + " AND (refault_dur <= 0 OR deleted_ts IS NULL)"), 0);
}

// Outside reclaim, a burst of deletions of one file shares the first one's
// kernel stack (a stack costs about 4 us; a truncate frees thousands of
// pages): every deletion still has a stack, and it names the truncation.
// The file is read inside the run first: a DAMON pageout scheme (kdamond),
// where one runs, evicts idle page cache within seconds, so pages written before
// the run may be gone by the truncate. Read in the run, every page is cached
// (an addition), the file is the tree's, and any eviction is recorded too.
TEST(PagecacheGroup, TruncateBurstSharesItsFirstStack) {
  TempDir dir;
  std::string data = dir.File("doomed");
  constexpr int64_t kPages = 8 * kMiB / kPage;
  ASSERT_EQ(Sh("head -c " + std::to_string(8 * kMiB) + " /dev/urandom > " + data + " && sync " + data).status, 0);
  DevIno f = StatFile(data);
  std::string db_path = dir.File("run.db");
  CmdResult r = RunCmd({SyspgoBin(), "collect", "-o", db_path, "--detail", "full", "--probes", "pagecache", "--", "/bin/sh", "-c",
                        "cat " + data + " > /dev/null && truncate -s 0 " + data});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  Db db = OpenDb(db_path);
  EXPECT_EQ(QueryInt(db, "SELECT events_dropped FROM run"), 0);
  // Every page of the file ends the run deleted.
  std::map<int64_t, int64_t> last_op;
  for (auto& e : FolioEvents(db, f))
    for (int64_t p = e.idx; p < e.idx + e.pages; ++p) last_op[p] = e.op;
  int64_t gone = 0;
  for (int64_t p = 0; p < kPages; ++p) gone += last_op.count(p) && last_op[p] == 2;
  EXPECT_EQ(gone, kPages);
  EXPECT_EQ(static_cast<int64_t>(last_op.size()), kPages);

  std::string of_file = " FROM page_cache WHERE op = 2 AND dev = " + std::to_string(f.dev) + " AND ino = " +
                        std::to_string(f.ino);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*)" + of_file + " AND stack_id = 0"), 0);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*)" + of_file + " AND comm != 'truncate' AND comm NOT LIKE 'kdamond%'"), 0);
  std::string by_truncate = of_file + " AND comm = 'truncate'";
  int64_t rows = QueryInt(db, "SELECT COUNT(*)" + by_truncate);
  int64_t own = QueryInt(db, "SELECT COUNT(*)" + by_truncate + " AND (why & 256) = 0");
  EXPECT_GE(QueryInt(db, "SELECT SUM(pages)" + by_truncate), kPages / 2);
  EXPECT_GE(own, 1);
  EXPECT_LE(own * 20, rows) << own << " of " << rows << " deletions took their own stack";
  Kallsyms ks;
  ASSERT_FALSE(ks.empty());
  for (auto& row : QueryRows(db, "SELECT DISTINCT stack_id, comm" + of_file)) {
    std::istringstream in(row);
    int64_t id;
    std::string comm;
    in >> id >> comm;
    auto names = StackNames(db, id, ks);
    EXPECT_EQ(ClassifyDeletion(names, comm), comm == "truncate" ? Deleter::kTruncate : Deleter::kDamon)
        << "stack " << id << " of " << comm;
  }
  // The DAMON pageout schemes in force were recorded (as many as are on).
  CmdResult schemes = Sh(
      "n=0; for k in /sys/kernel/mm/damon/admin/kdamonds/[0-9]*; do [ \"$(cat $k/state 2>/dev/null)\" = on ] || "
      "continue; for s in $k/contexts/[0-9]*/schemes/[0-9]*; do [ \"$(cat $s/action)\" = pageout ] && n=$((n+1)); "
      "done; done; [ \"$(cat /sys/module/damon_reclaim/parameters/enabled 2>/dev/null)\" = Y ] && n=$((n+1)); "
      "echo $n");
  ASSERT_EQ(schemes.status, 0) << schemes.err;
  EXPECT_EQ(QueryInt(db, "SELECT damon_read FROM run"), 1);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM run_damon_scheme"), std::stoll(schemes.out));
  // The run kept the kernel's symbols although the cpu group did not run,
  // so the analysis names the truncation from the stored stacks.
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM run_kallsyms JOIN kallsyms USING (hash) WHERE size > 0"), 1);
  std::string json = dir.File("pc.json");
  CmdResult a = RunCmd({"/bin/sh", "-c", ShellQuote(SyspgoBin()) + " analyze " + ShellQuote(db_path) +
                                           " pagecache --json > " + ShellQuote(json)});
  ASSERT_EQ(a.status, 0) << a.err;
  FindingFields row = PagecacheFileRow(json, "ino", std::to_string(f.ino));
  ASSERT_TRUE(row.count("deleted_by")) << ReadAll(json);
  EXPECT_NE(row["deleted_by"].find("\"truncation\":"), std::string::npos) << row["deleted_by"];
  EXPECT_EQ(row["deleted_by"].find("\"other\""), std::string::npos) << row["deleted_by"];
}

// The DAMON snapshot from a made-up sysfs: a running kdamond with a
// pageout scheme and a scheme of another action, a stopped kdamond, and

// A task that moves to another memory cgroup is named by the new one from its
// next event on: the probe caches the task's memory cgroup between events,
// and a shell that moves itself and then execs (how a task usually enters
// a cgroup) must not have its reclaim charged to the cgroup it left. Pinned
// to one CPU, the shell's own read of a cold file fills that CPU's cache
// entry just before the move, and its truncation deletes pages just after.
TEST(PagecacheGroup, ATaskThatMovesCgroupIsNamedByItsNewOneAtOnce) {
  TempDir dir;
  std::string cold = dir.File("cold"), warm = dir.File("warm");
  MakeColdFile(cold, kPage * 4);
  ASSERT_EQ(Sh("head -c " + std::to_string(kMiB) + " /dev/urandom > " + warm).status, 0);
  DevIno c = StatFile(cold), w = StatFile(warm);
  ChildMemcg cg;
  ASSERT_FALSE(cg.path().empty()) << "cannot make a child of this process's v1 memory cgroup";
  struct stat cgst {};
  ASSERT_EQ(stat(cg.path().c_str(), &cgst), 0);
  std::string cg_id = std::to_string(cgst.st_ino);
  std::string db_path = dir.File("run.db");
  CmdResult r = RunCmd({SyspgoBin(), "collect", "-o", db_path, "--detail", "full", "--probes", "pagecache", "--",
                        "taskset", "-c", "0", "/bin/sh", "-c",
                        "cat " + warm + " >/dev/null; read x < " + cold + "; echo $$ > " + cg.path() +
                            "/cgroup.procs; : > " + warm});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  Db db = OpenDb(db_path);
  auto of = [](const DevIno& f, int op) {
    return " FROM page_cache WHERE comm = 'sh' AND op = " + std::to_string(op) + " AND dev = " + std::to_string(f.dev) +
           " AND ino = " + std::to_string(f.ino);
  };
  // Before the move: the shell's read, charged to the cgroup it started in.
  EXPECT_GT(QueryInt(db, "SELECT COUNT(*)" + of(c, 1) + " AND task_cgroup NOT IN (0, " + cg_id + ")"), 0);
  // After it: every page its truncation deleted, by a task of the new cgroup.
  EXPECT_GT(QueryInt(db, "SELECT COUNT(*)" + of(w, 2)), 0);
  EXPECT_EQ(QueryRows(db, "SELECT DISTINCT task_cgroup" + of(w, 2)), std::vector<std::string>{cg_id});
}
// the damon_reclaim module enabled.
TEST(Damon, PageoutSchemesOfRunningKdamondsAndTheReclaimModule) {
  TempDir dir;
  auto put = [&](const std::string& rel, const std::string& text) {
    std::filesystem::path p = std::filesystem::path(dir.path()) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
  };
  std::string k0 = "kernel/mm/damon/admin/kdamonds/0/", k1 = "kernel/mm/damon/admin/kdamonds/1/";
  put(k0 + "state", "on");
  put(k0 + "contexts/0/operations", "paddr");
  put(k0 + "contexts/0/monitoring_attrs/intervals/aggr_us", "5000000");
  put(k0 + "contexts/0/schemes/0/action", "lru_prio");
  put(k0 + "contexts/0/schemes/0/access_pattern/age/min", "1");
  put(k0 + "contexts/0/schemes/1/action", "pageout");
  put(k0 + "contexts/0/schemes/1/access_pattern/age/min", "6");
  put(k1 + "state", "off");
  put(k1 + "contexts/0/schemes/0/action", "pageout");
  EXPECT_EQ(DamonPageoutJson(dir.path()),
            R"([{"path":"kdamonds/0/contexts/0/schemes/1","ops":"paddr","min_age":6,"aggr_us":5000000}])");
  put("module/damon_reclaim/parameters/enabled", "Y");
  put("module/damon_reclaim/parameters/min_age", "120000000");
  EXPECT_EQ(DamonPageoutJson(dir.path()),
            R"([{"path":"kdamonds/0/contexts/0/schemes/1","ops":"paddr","min_age":6,"aggr_us":5000000},)"
            R"({"path":"damon_reclaim","min_age_us":120000000}])");
  EXPECT_EQ(ReadDamonPageouts(dir.path()).descriptions,
            (std::vector<std::string>{"kdamond scheme kdamonds/0/contexts/0/schemes/1 (paddr): pageout after 30 s idle",
                                      "the damon_reclaim module: pageout after 120 s idle"}));
  EXPECT_EQ(DamonPageoutJson(dir.path() + "/none"), "[]");
  EXPECT_TRUE(ReadDamonPageouts(dir.path() + "/none").descriptions.empty());
}

// The lean tier (the default) counts in the kernel, per page, what the
// full tier records row by row. A cold file read, dropped from the cache by
// the reader (fadvise DONTNEED) and read again: every page is added once,
// deleted by the reader, and added again after that deletion. DAMON's
// pageout, where it runs, may evict a page too; it can only move a deletion
// from the reader to kdamond, never change the additions.
TEST(PagecacheLean, CountsEveryPageOnceAndEveryRefaultAfterItsDeleter) {
  TempDir dir;
  std::string data = dir.File("cold");
  constexpr int64_t kBytes = 4 * kMiB, kPages = kBytes / kPage;
  MakeColdFile(data, kBytes);
  DevIno f = StatFile(data);
  std::string db_path = dir.File("run.db");
  std::string evict = "python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); "
                      "os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' " + data;
  CmdResult r = RunCmd({SyspgoBin(), "collect", "-o", db_path, "--probes", "fileio,pagecache", "--", "/bin/sh", "-c",
                        "cat " + data + " > /dev/null; " + evict + "; cat " + data + " > /dev/null"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;

  Db db = OpenDb(db_path);
  std::string of_file = " WHERE dev = " + std::to_string(f.dev) + " AND ino = " + std::to_string(f.ino);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM page_cache"), 0) << "lean keeps no row per addition";
  EXPECT_EQ(QueryInt(db, "SELECT COALESCE(SUM(pages), 0) FROM page_cache_total" + of_file + " AND op = 1"), kPages);
  EXPECT_EQ(QueryInt(db, "SELECT COALESCE(SUM(pages), 0) FROM page_cache_total" + of_file + " AND op = 3"), kPages);
  // Each page added again after the reader's deletion is counted under
  // that deleter, as many as the reader deleted.
  EXPECT_EQ(QueryInt(db, "SELECT COALESCE(SUM(pages), 0) FROM page_cache_total" + of_file +
                             " AND op = 3 AND deleter IN (SELECT deleter FROM page_cache_total" + of_file +
                             " AND op = 2 AND comm = 'python3')"),
            QueryInt(db, "SELECT COALESCE(SUM(pages), 0) FROM page_cache_total" + of_file +
                             " AND op = 2 AND comm = 'python3'"));
  EXPECT_GT(QueryInt(db, "SELECT COALESCE(SUM(pages), 0) FROM page_cache_total" + of_file +
                             " AND op = 2 AND comm = 'python3'"),
            kPages / 2);
  // Every deleter's stack was stored; every page once, first added by cat.
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM page_cache_total" + of_file + " AND op != 1 AND stack_id = 0"), 0);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM page_cache_page" + of_file), kPages);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM page_cache_page" + of_file +
                             " AND ((why & 1) = 0 OR pid NOT IN (SELECT pid FROM process WHERE comm = 'cat'))"),
            0);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(DISTINCT idx) FROM page_cache_page_refault" + of_file), kPages);
  EXPECT_EQ(QueryInt(db, "SELECT COALESCE(SUM(overflow), 0) FROM run_aggregate WHERE probe_group = 'pagecache'"), 0);
  EXPECT_EQ(QueryInt(db, "SELECT COALESCE(SUM(dropped), 0) FROM run_drop WHERE probe_group = 'pagecache'"), 0);

  // The analysis reads the lean tables and says so.
  CmdResult a = RunCmd({SyspgoBin(), "analyze", db_path, "pagecache", "--json"});
  ASSERT_EQ(a.status, 0) << a.err;
  std::string json = dir.File("pc.json");
  std::ofstream(json) << a.out;
  FindingFields row = PagecacheFileRow(json, "file", data);
  ASSERT_FALSE(row.empty()) << a.out;
  EXPECT_EQ(row["added_pages"], std::to_string(2 * kPages));
  EXPECT_EQ(row["refaulted_pages"], std::to_string(kPages));
  EXPECT_EQ(row["working_set_pages"], std::to_string(kPages));
  EXPECT_NE(a.out.find("\"tier\": \"lean\""), std::string::npos);
  CmdResult text = RunCmd({SyspgoBin(), "analyze", db_path, "pagecache"});
  EXPECT_NE(text.out.find("read from the lean tier"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace syspgo::test
