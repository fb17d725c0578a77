//===- coldstart_test.cc - recording a cold start for an exact plan ------===//
// `collect --cold --no-readahead` on the real kernel and disk: a program
// maps a file and touches four scattered pages. With device readahead off,
// the run records those four pages and nothing else of the file, the plan
// made from it (`--pages auto` becomes `touched`) lists exactly them, and
// every device's readahead setting is back afterwards. With readahead on,
// the same touches make the kernel read far more of the file: what a plan
// of page-cache additions would read, and why the setting exists.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analyze/report_findings.h"
#include "optimize/erofs_image.h"
#include "optimize/plan.h"
#include "tests/test_util.h"

namespace syspgo::test {
namespace {

constexpr uint64_t kPage = 4096;
const std::vector<uint64_t> kTouched = {3, 700, 2000, 3500};

std::map<std::string, std::string> ReadaheadSettings() {
  std::map<std::string, std::string> out;
  DIR* d = opendir("/sys/class/bdi");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream f(std::string("/sys/class/bdi/") + e->d_name + "/read_ahead_kb");
    std::string v;
    if (f >> v) out[e->d_name] = v;
  }
  closedir(d);
  return out;
}

// A 16 MiB file, on disk and not cached.
std::string MakeColdFile(const TempDir& dir) {
  std::string path = dir.File("data.bin");
  EXPECT_EQ(Sh("head -c 16777216 /dev/urandom > " + path + " && sync " + path).status, 0);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
  return path;
}

std::vector<std::string> Toucher(const std::string& path) {
  std::string pages;
  for (uint64_t p : kTouched) pages += std::to_string(p) + ",";
  return {"python3", "-c",
          "import mmap, sys\n"
          "f = open(sys.argv[1], 'rb')\n"
          "m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)\n"
          "print(sum(m[p * 4096] for p in (" + pages + ")))\n",
          path};
}

// Unmounts `at` when it goes, so a failed assertion leaves no mount behind.
struct Unmount {
  std::string at;
  ~Unmount() { Sh("umount " + at); }
};

// Mounted by the kernel at `mnt`, the EROFS image `img` reads back every
// file of `root` unchanged.
void ExpectImageHoldsTheDirectory(const std::string& img, const std::string& root, const std::string& mnt) {
  CmdResult m = Sh("mount -t erofs -o loop,ro " + img + " " + mnt);
  ASSERT_EQ(m.status, 0) << m.err;
  Unmount unmount{mnt};
  CmdResult same = Sh("diff -r " + root + " " + mnt);
  EXPECT_EQ(same.status, 0) << same.out << same.err;
}

CmdResult Collect(const std::string& db, const std::vector<std::string>& extra, const std::vector<std::string>& cmd) {
  std::vector<std::string> argv = {SyspgoBin(), "collect", "--cold", "--probes", "proc,fileio,faults,pagecache",
                                   "-o", db};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back("--");
  argv.insert(argv.end(), cmd.begin(), cmd.end());
  return RunCmd(argv);
}

int64_t PagesAdded(Db& d, const std::string& path) {
  DevIno id = StatFile(path);
  // Either tier: every addition's row (full), or the kernel's count of
  // additions and additions again (lean, the default).
  std::string of_file = " AND dev = " + std::to_string(id.dev) + " AND ino = " + std::to_string(id.ino);
  return QueryInt(d, "SELECT COALESCE(SUM(pages), 0) FROM page_cache WHERE op = 1" + of_file) +
         QueryInt(d, "SELECT COALESCE(SUM(pages), 0) FROM page_cache_total WHERE op IN (1, 3)" + of_file);
}

TEST(ColdStart, NoReadaheadRecordsExactlyTheTouchedPagesAndRestoresTheSetting) {
  TempDir dir;
  std::string data = MakeColdFile(dir), db = dir.File("cold.db"), plan = dir.File("app.plan");
  auto before = ReadaheadSettings();
  ASSERT_FALSE(before.empty()) << "no /sys/class/bdi/*/read_ahead_kb on this machine";

  CmdResult c = Collect(db, {"--no-readahead"}, Toucher(data));
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.err.find("--no-readahead: readahead off until the command ends"), std::string::npos) << c.err;
  EXPECT_EQ(ReadaheadSettings(), before) << "readahead settings were not restored";
  {
    Db d = OpenDb(db);
    EXPECT_EQ(QueryInt(d, "SELECT no_readahead FROM run"), 1);
    EXPECT_EQ(PagesAdded(d, data), static_cast<int64_t>(kTouched.size()))
        << "with readahead off only the touched pages should have been read";
  }
  CmdResult o = RunCmd({SyspgoBin(), "optimize", db, "--emit", "plan", "--gap", "0", "-o", plan});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("(touched pages)"), std::string::npos) << o.err;
  auto p = ReadPlan(plan);
  ASSERT_TRUE(p.ok()) << p.error().message;
  const PlanFile* f = nullptr;
  for (const auto& pf : p->files)
    if (pf.path == data) f = &pf;
  ASSERT_NE(f, nullptr) << "the plan does not list " << data;
  std::vector<uint64_t> pages;
  for (const auto& e : f->extents)
    for (uint64_t off = e.offset; off < e.offset + e.length; off += kPage) pages.push_back(off / kPage);
  EXPECT_EQ(pages, kTouched) << "the plan should list the touched pages, in touch order, and nothing else";
  // What the kernel maps at exec, which no open names: the executable and
  // its ELF interpreter, named by their real paths. (python3 may be a shim
  // that execs the real one: the last exec is the toucher.)
  std::set<std::string> listed;
  for (const auto& pf : p->files) listed.insert(pf.path);
  std::string last_exec;
  {
    Db d = OpenDb(db);
    auto rows = QueryRows(d, "SELECT filename FROM exec ORDER BY ts DESC LIMIT 1");
    ASSERT_EQ(rows.size(), 1u);
    last_exec = rows[0];
  }
  char exe[PATH_MAX], interp[PATH_MAX];
  ASSERT_NE(realpath(last_exec.c_str(), exe), nullptr) << last_exec;
  ASSERT_NE(realpath("/lib64/ld-linux-x86-64.so.2", interp), nullptr);
  EXPECT_EQ(listed.count(exe), 1u) << "the plan leaves out the executable " << exe << "\n" << o.err;
  EXPECT_EQ(listed.count(interp), 1u) << "the plan leaves out the ELF interpreter " << interp << "\n" << o.err;
}

// `collect -- ./app`: the kernel reports the exec by the name it was given,
// and a plan names the executable's pages (mapped at exec, never opened)
// by the exec's path, so the collector makes it absolute. The command is a
// copy of cat of its own (its own inode), run by a relative path from the
// directory collect was started in.
TEST(ColdStart, PlanListsAnExecutableRunByARelativePath) {
  TempDir dir;
  std::string data = MakeColdFile(dir), db = dir.File("cold.db"), plan = dir.File("app.plan");
  ASSERT_EQ(Sh("cp /usr/bin/cat " + dir.File("mycat")).status, 0);
  CmdResult c = RunCmd({"sh", "-c", "cd \"$1\" && shift && exec \"$@\"", "sh", dir.path(), SyspgoBin(), "collect",
                        "--cold", "--no-readahead", "--probes", "proc,fileio,faults,pagecache", "-o", db, "--",
                        "./mycat", data});
  ASSERT_EQ(c.status, 0) << c.err;
  char exe[PATH_MAX];
  ASSERT_NE(realpath(dir.File("mycat").c_str(), exe), nullptr);
  {
    Db d = OpenDb(db);
    auto rows = QueryRows(d, "SELECT filename FROM exec ORDER BY ts DESC LIMIT 1");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0], exe) << "the exec's file should be recorded by its absolute path";
  }
  CmdResult o = RunCmd({SyspgoBin(), "optimize", db, "--emit", "plan", "-o", plan});
  ASSERT_EQ(o.status, 0) << o.err;
  auto p = ReadPlan(plan);
  ASSERT_TRUE(p.ok()) << p.error().message;
  std::set<std::string> listed;
  for (const auto& pf : p->files) listed.insert(pf.path);
  EXPECT_EQ(listed.count(exe), 1u) << "the plan leaves out the executable run as ./mycat\n" << o.err;
}

TEST(ColdStart, WithReadaheadOnTheSameTouchesReadFarMore) {
  TempDir dir;
  std::string data = MakeColdFile(dir), db = dir.File("cold.db");
  CmdResult c = Collect(db, {}, Toucher(data));
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.err.find("--cold without --no-readahead"), std::string::npos)
      << "collect should say what readahead costs a plan: " << c.err;
  Db d = OpenDb(db);
  EXPECT_EQ(QueryInt(d, "SELECT no_readahead FROM run"), 0);
  // Each fault reads the device's readahead window around it.
  EXPECT_GE(PagesAdded(d, data), 8 * static_cast<int64_t>(kTouched.size()));
  // A plan still names the touched pages (faults), now with their
  // fault-around windows (`--pages auto` is `mapped` here).
  CmdResult o = RunCmd({SyspgoBin(), "optimize", db, "--emit", "plan", "-o", dir.File("p.plan")});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("(mapped pages)"), std::string::npos) << o.err;
  // ... and says how much larger that is than the pages seen used, and how
  // to record a page-exact plan.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(o.err, m, std::regex(R"(window: ([0-9.]+) MiB, where the pages seen used are ([0-9.]+) MiB)")))
      << o.err;
  EXPECT_GT(std::stod(m[1]), std::stod(m[2])) << o.err;
  EXPECT_NE(o.err.find("syspgo collect --cold --no-readahead"), std::string::npos) << o.err;
}

int64_t MajorFaults(Db& d, const std::string& path) {
  DevIno id = StatFile(path);
  return QueryInt(d, "SELECT COUNT(*) FROM page_fault WHERE major = 1 AND dev = " + std::to_string(id.dev) +
                         " AND ino = " + std::to_string(id.ino));
}

// Story 2 end to end (examples/cold_start): a cold run pages a 96 MiB
// "library" and a 32 MiB "image" in at random; the plan made from it lists
// what was touched, a small part of the files; after the plan is replayed
// the next run has no page of them left to read.
TEST(ColdStartExample, AfterThePlanTheProgramReadsNothingItTouches) {
  DamonPaused damon;  // it pages out what the replay just read (test_util.h)
  TempDir dir;
  std::string bin = ExampleBin("cold_start"), lib = dir.File("libbig.so.data"), image = dir.File("image.data");
  ASSERT_EQ(RunCmd({bin, dir.path(), "--make"}).status, 0);
  std::string cold = dir.File("cold.db"), plan = dir.File("app.plan"), after = dir.File("after.db");
  CmdResult c = Collect(cold, {"--no-readahead"}, {bin, dir.path()});
  ASSERT_EQ(c.status, 0) << c.err;
  int64_t cold_lib = 0, cold_image = 0;
  {
    Db d = OpenDb(cold);
    cold_lib = MajorFaults(d, lib);
    cold_image = MajorFaults(d, image);
    EXPECT_GE(cold_lib, 2000) << "2400 random touches of 24576 pages, each read on its own";
    EXPECT_GE(cold_image, 500);
  }
  CmdResult o = RunCmd({SyspgoBin(), "optimize", cold, "--emit", "plan", "-o", plan});
  ASSERT_EQ(o.status, 0) << o.err;
  auto p = ReadPlan(plan);
  ASSERT_TRUE(p.ok()) << p.error().message;
  uint64_t lib_bytes = 0, image_bytes = 0;
  for (const auto& f : p->files) {
    if (f.path == lib) lib_bytes = f.Bytes();
    if (f.path == image) image_bytes = f.Bytes();
  }
  EXPECT_GE(lib_bytes, 2000 * kPage);
  EXPECT_LE(lib_bytes, 48ull << 20) << "a plan of touched pages, not of the whole file";
  EXPECT_GE(image_bytes, 500 * kPage);
  EXPECT_LE(image_bytes, 16ull << 20);

  // libstdc++ is the collector's too: the pages of it the collector had
  // mapped stayed cached through the drop, and fault-around mapped them into
  // the program without a fault. A replay maps none of them, so the plan
  // holds every page of the program's fault-around windows in it.
  char real[PATH_MAX];
  ASSERT_NE(realpath("/lib/x86_64-linux-gnu/libstdc++.so.6", real), nullptr);
  DevIno cxx = StatFile(real);
  {
    Db d = OpenDb(cold);
    EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM run_collector_file WHERE dev = " + std::to_string(cxx.dev) +
                          " AND ino = " + std::to_string(cxx.ino)),
              1);
    std::set<uint64_t> planned;
    for (const auto& f : p->files)
      if (f.fingerprint.inode == cxx.ino && f.fingerprint.device == cxx.dev)
        for (const auto& e : f.extents)
          for (uint64_t off = e.offset; off < e.offset + e.length; off += kPage) planned.insert(off / kPage);
    size_t windows = 0, missing = 0;
    for (const std::string& row : QueryRows(d, "SELECT around_first, around_last FROM page_fault WHERE dev = " +
                                                   std::to_string(cxx.dev) + " AND ino = " + std::to_string(cxx.ino) +
                                                   " AND around_first >= 0")) {
      ++windows;
      uint64_t first = std::stoull(row.substr(0, row.find('\t'))), last = std::stoull(row.substr(row.find('\t') + 1));
      for (uint64_t pg = first; pg <= last; ++pg) missing += !planned.count(pg);
    }
    EXPECT_GT(windows, 0u) << "the program faulted on no page of " << real;
    EXPECT_EQ(missing, 0u) << "pages of " << real << "'s fault-around windows the plan does not read";
  }

  for (const std::string& f : {lib, image}) {
    int fd = open(f.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
  }
  CmdResult r = RunCmd({SyspgoBin() + "-prefetch", plan, "--before", "--", SyspgoBin(), "collect", "--probes",
                        "faults", "-o", after, "--", bin, dir.path()});
  ASSERT_EQ(r.status, 0) << r.err;
  Db d = OpenDb(after);
  // The pages the program touches are resident. Once in CI a handful
  // were not (7 of 2400 and 5 of 600): most likely pages drop_caches had
  // left cached at the cold run's start, which fault-around then mapped
  // without a fault, so the run never named them. A plan that misses
  // pages wholesale fails this by far.
  EXPECT_LE(MajorFaults(d, lib), cold_lib / 50) << "of " << cold_lib << " in the cold run";
  EXPECT_LE(MajorFaults(d, image), cold_image / 50) << "of " << cold_image << " in the cold run";
  // It did touch the library again: minor faults (fewer than touches, as
  // fault-around now maps planned neighbours along with each page).
  EXPECT_GE(QueryInt(d, "SELECT COUNT(*) FROM page_fault WHERE ino = " + std::to_string(StatFile(lib).ino)), 500);
}

// `analyze access` on story 2 with the device's readahead on: the kernel
// read most of both files around touches at scattered offsets, a small part
// of them used, and it says to make a plan, naming the command; a file read
// in order is in order; a run recorded with readahead off is ready for a plan.
TEST(ColdStartExample, AnalyzeAccessNamesRandomPagingInAndThePlanThatFixesIt) {
  TempDir dir;
  std::string bin = ExampleBin("cold_start"), lib = dir.File("libbig.so.data");
  ASSERT_EQ(RunCmd({bin, dir.path(), "--make"}).status, 0);
  std::string db = dir.File("cold.db"), json = dir.File("access.json");
  ASSERT_EQ(Collect(db, {}, {bin, dir.path()}).status, 0);
  CmdResult a = RunCmd({SyspgoBin(), "analyze", db, "access", "--json"});
  ASSERT_EQ(a.status, 0) << a.err;
  std::ofstream(json) << a.out;
  // The library's row of the files table.
  auto lib_row = [&](const nlohmann::json& d) {
    for (const nlohmann::json& f : d.at("files"))
      if (f.value("path", "") == lib) return f;
    ADD_FAILURE() << lib << " is not among the files:\n" << d.dump(1);
    return nlohmann::json::object();
  };
  nlohmann::json d = ReadJson(json), row = lib_row(d);
  EXPECT_EQ(row["size"], 96 << 20);
  int64_t used = row["used_bytes"], read = row["kernel_read_bytes"];
  EXPECT_GE(used, 1000 * 4096) << "2400 random touches of 24576 pages";
  EXPECT_GE(read, 4 * used) << "readahead around each fault";
  EXPECT_LT(row["in_order"].get<double>(), 0.2);
  EXPECT_GE(row["faults"].get<int64_t>(), 500);
  std::string hint = d["hint"];
  EXPECT_NE(hint.find("around touches at scattered offsets"), std::string::npos) << hint;
  EXPECT_NE(hint.find("--emit plan"), std::string::npos) << hint;
  EXPECT_NE(hint.find("syspgo prefetch app.plan -- " + bin + " " + dir.path()), std::string::npos) << hint;
  // The report lists it among its findings.
  auto run = OpenRunWithFindings(db, 0);
  ASSERT_TRUE(run.ok()) << run.error().message;
  int paging = 0;
  for (const Finding& f : run->findings.findings)
    if (f.kind == "random-paging") {
      ++paging;
      EXPECT_NE(f.title.find("at scattered offsets in libbig.so.data"), std::string::npos) << f.title;
      ASSERT_FALSE(f.facts.empty());
      EXPECT_EQ(f.facts[0], std::make_pair(std::string("file"), lib));
      EXPECT_EQ(f.fix, hint.substr(hint.find("A cold start like this one")));
    }
  EXPECT_EQ(paging, 1);
  CmdResult text = RunCmd({SyspgoBin(), "analyze", db, "access", "--limit", "3"});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("first touch  file"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("more files; --limit"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("A cold start like this one gets faster with a prefetch plan"), std::string::npos) << text.out;

  // A file read from start to end: in order, and no plan advice.
  std::string seq = dir.File("seq.db");
  ASSERT_EQ(Collect(seq, {}, {"/bin/sh", "-c", "cat " + lib + " > /dev/null"}).status, 0);
  a = RunCmd({SyspgoBin(), "analyze", seq, "access", "--json"});
  ASSERT_EQ(a.status, 0) << a.err;
  std::ofstream(json) << a.out;
  d = ReadJson(json);
  row = lib_row(d);
  EXPECT_GE(row["in_order"].get<double>(), 0.9);
  EXPECT_EQ(row["used_bytes"], 96 << 20);
  EXPECT_EQ(d["hint"], "");

  // Recorded with readahead off: ready to make a plan from.
  std::string off = dir.File("off.db");
  ASSERT_EQ(Collect(off, {"--no-readahead"}, {"/bin/sh", "-c", "head -c 65536 " + lib + " > /dev/null"}).status, 0);
  a = RunCmd({SyspgoBin(), "analyze", off, "access"});
  ASSERT_EQ(a.status, 0) << a.err;
  // The hint is wrapped to the terminal's 120 columns: read it as one line.
  std::string one_line = a.out;
  std::replace(one_line.begin(), one_line.end(), '\n', ' ');
  EXPECT_NE(one_line.find("the run is ready to make a prefetch plan from (syspgo optimize " + off), std::string::npos)
      << a.out;
}

// The plan lists the paths the run looked up, to be resolved before any
// read: the programs exec'd as the kernel named them, their ELF
// interpreter (no syscall shows that lookup), the files opened, and the
// ones tried and not found (a library search's misses cost a lookup too).
TEST(ColdStart, PlanLooksUpWhatTheRunLookedUpFoundOrNot) {
  TempDir dir;
  std::string data = dir.File("data.txt"), missing = dir.File("lib/tls/libnone.so");
  std::string probed = dir.File("conf.d/none.conf");  // stat()ed by the shell's test, never opened
  ASSERT_EQ(Sh("echo hello > " + data).status, 0);
  std::string db = dir.File("run.db"), plan = dir.File("run.plan");
  CmdResult c = Collect(db, {}, {"/bin/sh", "-c", "cat " + missing + " 2>/dev/null; test -e " + probed + "; cat " + data});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(c.out, "hello\n");
  {
    // The cold run re-read file-system metadata for its path walks: pages
    // of the disk's own cache, which no path names and no plan reads.
    Db d = OpenDb(db);
    EXPECT_GT(QueryInt(d, "SELECT COUNT(*) FROM page_cache_page WHERE (dev >> 8) = 0 AND ino > 1048576"), 0);
  }
  {
    // Between its release and its exec the root process runs the
    // collector's own code (it is its fork), and sometimes faults on a page
    // of the syspgo binary, which no path of the run names: 3 of 20 runs of
    // this test warned of an unnamed file. Such a fault, made certain here,
    // is not the command's.
    ASSERT_EQ(ExecSql(db, "INSERT INTO page_fault (run_id, ts, pid, tid, addr, ip, error_code, dev, ino, pgoff, "
                          "  vm_start, vm_flags, major, filemap, around_first, around_last) "
                          "SELECT 1, e.ts - 1000, e.pid, e.pid, 4096, 4096, 20, 2049, 987654321, 0, 0, 5, 1, 1, 0, 15 "
                          "FROM exec e JOIN run r ON r.id = e.run_id AND e.pid = r.target_pid ORDER BY e.ts LIMIT 1"),
              "");
    Db d = OpenDb(db);
    ASSERT_EQ(QueryInt(d, "SELECT COUNT(*) FROM page_fault WHERE ino = 987654321"), 1);
  }
  CmdResult o = RunCmd({SyspgoBin(), "optimize", db, "--emit", "plan", "-o", plan});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.err.find("never saw their path"), std::string::npos) << "metadata is not an unnamed file: " << o.err;
  auto p = ReadPlan(plan);
  ASSERT_TRUE(p.ok()) << p.error().message;
  std::set<std::string> paths;
  for (const PlanLookup& l : p->lookups) paths.insert(l.path);
  std::string all;
  for (const auto& s : paths) all += s + "\n";
  EXPECT_EQ(paths.count("/bin/sh"), 1u) << all;
  EXPECT_EQ(paths.count(data), 1u) << all;
  EXPECT_EQ(paths.count(missing), 1u) << all;
  EXPECT_EQ(paths.count(probed), 1u) << all;
  bool cat = false, interp = false;
  for (const auto& s : paths) {
    cat |= s.size() > 4 && s.compare(s.size() - 4, 4, "/cat") == 0;
    interp |= s.find("/ld-linux") != std::string::npos;
    EXPECT_NE(s.rfind("/proc/", 0), 0u) << s;
    EXPECT_EQ(s[0], '/') << s;
  }
  EXPECT_TRUE(cat) << "cat's exec: " << all;
  EXPECT_TRUE(interp) << "the ELF interpreter: " << all;
  // In the run's order: the shell's exec, the miss, the stat, then the file.
  std::map<std::string, uint64_t> at;
  for (const PlanLookup& l : p->lookups) at[l.path] = l.first_touch_ns;
  EXPECT_LT(at["/bin/sh"], at[missing]);
  EXPECT_LT(at[missing], at[probed]);
  EXPECT_LT(at[probed], at[data]);
  CmdResult show = RunCmd({SyspgoBin(), "plan-show", plan});
  EXPECT_NE(show.out.find("looks up " + std::to_string(paths.size()) + " paths"), std::string::npos) << show.out;
}

// The root process's exec comes before its exec event, which fires once
// the program is loaded. What the loading touches is the command's: the
// kernel zeroes the tail of the program's last data page then (a
// kernel-mode fault, which shows only as that page's page-cache add).
// Dropped with the collector's own pre-exec touches, python3.11's last
// page cost every replay a major fault and a 2 MiB readahead.
TEST(ColdStart, PlanHoldsWhatTheRootsExecLoaded) {
  TempDir dir;
  std::string db = dir.File("run.db"), plan = dir.File("run.plan");
  // Readahead off: the plan holds the pages used, not the whole shell.
  CmdResult c = Collect(db, {"--no-readahead"}, {"/bin/sh", "-c", "exit 0"});
  ASSERT_EQ(c.status, 0) << c.err;
  char real[PATH_MAX];
  ASSERT_NE(realpath("/bin/sh", real), nullptr);
  DevIno sh = StatFile(real);
  // No gap: the extents are the pages used (a 16 KiB gap fills the shell's few holes).
  const std::vector<std::string> optimize = {SyspgoBin(), "optimize", db, "--emit", "plan", "--gap", "0", "-o", plan};
  ASSERT_EQ(RunCmd(optimize).status, 0);
  auto planned = [&]() {
    std::set<uint64_t> pages;
    auto p = ReadPlan(plan);
    EXPECT_TRUE(p.ok()) << p.error().message;
    if (!p.ok()) return pages;
    for (const PlanFile& f : p->files)
      if (f.path == real)
        for (const PlanExtent& e : f.extents)
          for (uint64_t off = e.offset; off < e.offset + e.length; off += 4096) pages.insert(off / 4096);
    return pages;
  };
  std::set<uint64_t> before = planned();
  ASSERT_FALSE(before.empty()) << real << " is not in the plan at all";
  // A page of the shell the run did not use, which its exec now adds.
  struct stat sb {};
  ASSERT_EQ(stat(real, &sb), 0);
  uint64_t page = 0;
  while (before.count(page)) ++page;
  ASSERT_LT(page * 4096, static_cast<uint64_t>(sb.st_size)) << "every page of " << real << " is planned already";
  auto insert = [&](uint64_t dev, uint64_t ino, uint64_t idx) {
    return ExecSql(db, "INSERT INTO page_cache (run_id, ts, op, pid, tid, comm, dev, ino, idx, pages, task_cgroup, "
                       "  page_cgroup, why, stack_id) "
                       "SELECT 1, e.ts - 1000, 1, e.pid, e.pid, 'sh', " + std::to_string(dev) + ", " +
                       std::to_string(ino) + ", " + std::to_string(idx) + ", 1, 0, 0, 1, 0 "
                       "FROM exec e JOIN run r ON r.id = e.run_id AND e.pid = r.target_pid ORDER BY e.ts LIMIT 1");
  };
  ASSERT_EQ(insert(sh.dev, sh.ino, page), "");
  // And the collector's own code, before the exec, touching another file.
  std::string other = dir.File("collector.so");
  ASSERT_EQ(Sh("head -c 65536 /dev/urandom > " + other).status, 0);
  DevIno o = StatFile(other);
  ASSERT_EQ(insert(o.dev, o.ino, 3), "");
  ASSERT_EQ(ExecSql(db, "INSERT INTO file (run_id, dev, ino, path) VALUES (1, " + std::to_string(o.dev) + ", " +
                            std::to_string(o.ino) + ", '" + other + "')"),
            "");
  CmdResult r = RunCmd(optimize);
  ASSERT_EQ(r.status, 0) << r.err;
  std::set<uint64_t> after = planned();
  EXPECT_EQ(after.count(page), 1u) << "page " << page << " of " << real << ", added by its exec";
  auto p = ReadPlan(plan);
  ASSERT_TRUE(p.ok()) << p.error().message;
  for (const PlanFile& f : p->files) EXPECT_NE(f.path, other) << "touched by the root before its exec";
}

TEST(ColdStart, OptimizeRefusesAnUnknownPagesChoice) {
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "optimize", "x.db", "--emit", "plan", "--pages", "some", "-o", "x.plan"}),
                         2, "--pages is touched, mapped, cached or auto, got 'some'"));
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "optimize", "x.db", "--emit", "plan", "--gap", "-1", "-o", "x.plan"}), 2,
                         "--gap needs KiB"));
}

// An image whose bytes lie in first-touch order, from a real cold
// run. A program reads three files of a directory in an order that is not
// their names' (mksquashfs's own order); the sort file made from the run
// puts them first in the image in the order read, and the plan moved to
// where the image is mounted names the image's files, fingerprinted there.
TEST(ColdStartImage, SortedImageHoldsTheFilesInFirstTouchOrderAndTheMovedPlanNamesIt) {
  TempDir dir;
  std::string root = dir.File("root"), mnt = dir.File("mnt");
  ASSERT_EQ(mkdir(root.c_str(), 0755), 0);
  ASSERT_EQ(mkdir(mnt.c_str(), 0755), 0);
  const std::vector<std::string> read_order = {"mm_first", "zz_second", "aa_third"};
  for (size_t i = 0; i < read_order.size(); ++i)
    ASSERT_EQ(Sh("head -c 200000 /dev/urandom > " + root + "/" + read_order[i] + " && printf '<marker-" +
                 std::to_string(i) + ">' >> " + root + "/" + read_order[i])
                  .status,
              0);
  ASSERT_EQ(Sh("head -c 100000 /dev/urandom > " + root + "/bb_unread && printf '<marker-unread>' >> " + root +
               "/bb_unread && sync")
                .status,
            0);
  std::vector<std::string> cat = {"cat"};
  for (const auto& n : read_order) cat.push_back(root + "/" + n);
  std::string db = dir.File("cold.db"), sort = dir.File("sort.txt");
  CmdResult c = Collect(db, {"--no-readahead"}, cat);
  ASSERT_EQ(c.status, 0) << c.err;
  CmdResult o = RunCmd({SyspgoBin(), "optimize", db, "--emit", "squashfs-sort", "--source-dir", root, "-o", sort});
  ASSERT_EQ(o.status, 0) << o.err;

  auto marker_order = [&](const std::string& img, bool sorted) {
    std::vector<std::string> argv = {"mksquashfs", root, img, "-noappend", "-noI", "-noD", "-noF", "-noX",
                                     "-no-fragments", "-no-progress", "-quiet"};
    if (sorted) argv.insert(argv.end(), {"-sort", sort});
    CmdResult m = RunCmd(argv);
    EXPECT_EQ(m.status, 0) << m.err << m.out;
    std::string bytes = ReadAll(img);
    std::vector<std::pair<size_t, std::string>> at;
    for (std::string name : {"0", "1", "2", "unread"}) {
      size_t pos = bytes.find("<marker-" + name + ">");
      EXPECT_NE(pos, std::string::npos) << name;
      at.push_back({pos, name});
    }
    std::sort(at.begin(), at.end());
    std::string order;
    for (const auto& [pos, name] : at) order += name + " ";
    return order;
  };
  // Without the sort file the data lies in name order: aa, bb, mm, zz.
  EXPECT_EQ(marker_order(dir.File("plain.img"), false), "2 unread 0 1 ");
  std::string img = dir.File("sorted.img");
  EXPECT_EQ(marker_order(img, true), "0 1 2 unread ") << ReadAll(sort);

  CmdResult m = Sh("mount -t squashfs -o loop,ro " + img + " " + mnt);
  ASSERT_EQ(m.status, 0) << m.err;
  Unmount unmount{mnt};
  std::string plan = dir.File("image.plan");
  o = RunCmd({SyspgoBin(), "optimize", db, "--emit", "plan", "--relocate", root + "=" + mnt, "-o", plan});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("3 of "), std::string::npos) << o.err;
  auto p = ReadPlan(plan);
  ASSERT_TRUE(p.ok()) << p.error().message;
  std::vector<std::string> in_image;
  for (const PlanFile& f : p->files) {
    if (f.path.rfind(mnt + "/", 0) != 0) continue;
    in_image.push_back(f.path.substr(mnt.size() + 1));
    auto fp = ComputeFingerprint(f.path);
    ASSERT_TRUE(fp.ok()) << fp.error().message;
    EXPECT_TRUE(SameContents(f.fingerprint, *fp)) << f.path << ": a replay would skip it";
  }
  EXPECT_EQ(in_image, read_order);
}

// An EROFS image whose data blocks lie in the order a cold run
// first touched its pages, pages inside one file included (mksquashfs
// -sort orders whole files only). A program reads two scattered pages of a
// large file, a whole small file, then a page before the first two; the
// image made from the run holds those pages, in that order, as one run of
// blocks at the start of its data, and mounted by the kernel it reads back
// every file of the directory unchanged.
TEST(ColdStartImage, ErofsImageHoldsThePagesInReplayOrderAndMountsUnchanged) {
  TempDir dir;
  std::string root = dir.File("root"), mnt = dir.File("mnt");
  ASSERT_EQ(mkdir(root.c_str(), 0755), 0);
  ASSERT_EQ(mkdir(mnt.c_str(), 0755), 0);
  ASSERT_EQ(Sh("mkdir -p " + root + "/lib/deep && head -c 1048576 /dev/urandom > " + root + "/lib/big.bin && "
               "head -c 20000 /dev/urandom > " + root + "/lib/deep/small.bin && head -c 300000 /dev/urandom > " +
               root + "/unread.bin && head -c 16384 " + root + "/lib/big.bin > " + root + "/dup.bin && "
               "printf hello > " + root + "/tiny.txt && sync")
                .status,
            0);
  std::string big = root + "/lib/big.bin", small = root + "/lib/deep/small.bin";
  std::vector<std::string> reader = {
      "sh", "-c",
      "dd if=" + big + " bs=4096 skip=200 count=2 status=none; dd if=" + big + " bs=4096 skip=90 count=1 status=none; "
      "cat " + small + "; dd if=" + big + " bs=4096 skip=7 count=1 status=none; true > /dev/null"};
  std::string db = dir.File("cold.db"), img = dir.File("app.erofs");
  CmdResult c = Collect(db, {"--no-readahead"}, reader);
  ASSERT_EQ(c.status, 0) << c.err;
  CmdResult o = RunCmd({SyspgoBin(), "optimize", db, "--emit", "erofs", "--source-dir", root, "-o", img});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("wrote " + img + ": 2 files"), std::string::npos) << o.err;

  auto big_blocks = ErofsFileBlocks(img, "lib/big.bin");
  auto small_blocks = ErofsFileBlocks(img, "lib/deep/small.bin");
  ASSERT_TRUE(big_blocks.ok()) << big_blocks.error().message;
  ASSERT_TRUE(small_blocks.ok()) << small_blocks.error().message;
  ASSERT_EQ(big_blocks->size(), 256u);
  ASSERT_EQ(small_blocks->size(), 5u);
  // Replay order: big 200-201, big 90, small 0-4, big 7; one block after another.
  std::vector<uint32_t> read;
  for (uint64_t p : {200, 201, 90}) read.push_back((*big_blocks)[p]);
  for (uint32_t b : *small_blocks) read.push_back(b);
  read.push_back((*big_blocks)[7]);
  for (size_t i = 1; i < read.size(); ++i) EXPECT_EQ(read[i], read[0] + i) << "page " << i << " of the replay";
  // ... and before every other data block of the image.
  for (const char* f : {"lib/big.bin", "unread.bin", "dup.bin"}) {
    auto blocks = ErofsFileBlocks(img, f);
    ASSERT_TRUE(blocks.ok()) << blocks.error().message;
    for (uint32_t b : *blocks) EXPECT_GE(b, read[0]) << f;
  }

  ExpectImageHoldsTheDirectory(img, root, mnt);
}

// The same layout, compressed. mkfs.erofs's full index names the
// one block of each compressed extent, whatever pages it spans, so the
// blocks holding the pages a cold run touched go first in replay order; a
// file that does not compress is stored flat and stays where it lies. The
// image holds fewer blocks than the pages it replays, and the kernel reads
// every file back unchanged.
TEST(ColdStartImage, CompressedErofsImageHoldsThePagesInReplayOrder) {
  TempDir dir;
  std::string root = dir.File("root"), mnt = dir.File("mnt");
  ASSERT_EQ(mkdir(mnt.c_str(), 0755), 0);
  // Numbers as text: lz4 packs about a page and a half into each block, so
  // extents cross page boundaries; the random file does not compress.
  ASSERT_EQ(Sh("mkdir -p " + root + "/lib && seq 1 400000 | head -c 1048576 > " + root + "/lib/big.txt && "
               "seq 500000 600000 | head -c 20000 > " + root + "/small.txt && seq 700000 800000 | head -c 300000 > " +
               root + "/unread.txt && head -c 40000 /dev/urandom > " + root + "/random.bin && sync")
                .status,
            0);
  std::string big = root + "/lib/big.txt", small = root + "/small.txt";
  std::vector<std::string> reader = {
      "sh", "-c",
      "dd if=" + big + " bs=4096 skip=100 count=40 status=none; dd if=" + big + " bs=4096 skip=10 count=20 "
      "status=none; cat " + small + " " + root + "/random.bin; dd if=" + big + " bs=4096 skip=250 count=1 status=none; "
      "true"};
  std::string db = dir.File("cold.db"), img = dir.File("app.erofs"), json = dir.File("layout.json");
  CmdResult c = Collect(db, {"--no-readahead"}, reader);
  ASSERT_EQ(c.status, 0) << c.err;
  CmdResult o = RunCmd({SyspgoBin(), "optimize", db, "--emit", "erofs", "--compress", "lz4hc", "--source-dir", root,
                        "-o", img, "--json", json});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.err.find("mkfs.erofs -zlz4hc -Elegacy-compress"), std::string::npos) << o.err;
  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "optimize", db, "--emit", "plan", "--compress", "lz4", "-o",
                                 dir.File("app.plan")}),
                         2, "--compress compresses an EROFS image"));
  nlohmann::json d = ReadJson(json);
  EXPECT_EQ(d.at("compress"), "lz4hc");
  EXPECT_EQ(d.at("files_placed"), 2);
  EXPECT_EQ(d.at("files_flat"), 1) << "random.bin does not compress";
  // 66 pages read from the two text files, in fewer compressed blocks.
  const uint64_t placed = d.at("blocks_placed");
  EXPECT_GT(placed, 30u);
  EXPECT_LT(placed, 60u);

  auto big_blocks = ErofsFileBlocks(img, "lib/big.txt");
  auto small_blocks = ErofsFileBlocks(img, "small.txt");
  auto unread = ErofsFileBlocks(img, "unread.txt");
  ASSERT_TRUE(big_blocks.ok() && small_blocks.ok() && unread.ok());
  ASSERT_EQ(big_blocks->size(), 256u);
  ASSERT_EQ(small_blocks->size(), 5u);
  std::vector<uint32_t> read;
  for (uint64_t p = 100; p < 140; ++p) read.push_back((*big_blocks)[p]);
  for (uint64_t p = 10; p < 30; ++p) read.push_back((*big_blocks)[p]);
  for (uint32_t b : *small_blocks) read.push_back(b);
  read.push_back((*big_blocks)[250]);
  // In replay order (two pages may share a block), within the first
  // `placed` blocks of data, and before every block of the unread file.
  for (size_t i = 1; i < read.size(); ++i) EXPECT_GE(read[i], read[i - 1]) << "page " << i << " of the replay";
  EXPECT_LT(read.back() - read.front(), placed);
  for (uint32_t b : *unread) EXPECT_GT(b, read.back());

  ExpectImageHoldsTheDirectory(img, root, mnt);
}

// A plan made for the image's mount point replays it. Mounted
// again (here on a second loop device; a reboot or a file-backed mount
// does the same), the image's files have another st_dev and are otherwise
// the same; the plan's files are read there, not skipped as changed.
TEST(ColdStartImage, PlanOfAMountedImageReplaysWhenTheImageIsMountedAgain) {
  TempDir dir;
  std::string root = dir.File("root"), mnt = dir.File("mnt"), img = dir.File("app.erofs");
  ASSERT_EQ(mkdir(mnt.c_str(), 0755), 0);
  ASSERT_EQ(Sh("mkdir -p " + root + " && head -c 200000 /dev/urandom > " + root + "/a.bin && head -c 50000 "
               "/dev/urandom > " + root + "/b.bin && mkfs.erofs --quiet " + img + " " + root)
                .status,
            0);
  // Two loop devices on the same image: the second mount's device differs.
  CmdResult first = Sh("losetup --find --show --read-only " + img);
  CmdResult second = Sh("losetup --find --show --read-only " + img);
  ASSERT_EQ(first.status, 0) << first.err;
  ASSERT_EQ(second.status, 0) << second.err;
  std::string dev1 = first.out.substr(0, first.out.find('\n')), dev2 = second.out.substr(0, second.out.find('\n'));
  struct Detach {
    std::vector<std::string> devs;
    ~Detach() {
      for (const auto& d : devs) Sh("losetup -d " + d);
    }
  } detach{{dev1, dev2}};
  ASSERT_NE(dev1, dev2);

  std::string db = dir.File("cold.db"), plan = dir.File("app.plan"), json = dir.File("replay.json");
  ASSERT_EQ(Sh("mount -t erofs -o ro " + dev1 + " " + mnt).status, 0);
  {
    Unmount unmount{mnt};
    CmdResult c = Collect(db, {"--no-readahead"}, {"cat", mnt + "/a.bin", mnt + "/b.bin"});
    ASSERT_EQ(c.status, 0) << c.err;
    CmdResult o = RunCmd({SyspgoBin(), "optimize", db, "--emit", "plan", "-o", plan});  // fingerprints them here
    ASSERT_EQ(o.status, 0) << o.err;
  }
  ASSERT_EQ(Sh("mount -t erofs -o ro " + dev2 + " " + mnt).status, 0);
  Unmount unmount{mnt};
  // bytes_read is what the replay's reads returned, cached or not: no cache drop needed.
  CmdResult r = RunCmd({SyspgoBin(), "prefetch", plan, "--json", json});
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json d = ReadJson(json);
  EXPECT_EQ(d.at("files_changed"), 0) << d;
  uint64_t image_bytes = 0;
  for (const auto& f : d.at("files"))
    if (f.at("path") == mnt + "/a.bin" || f.at("path") == mnt + "/b.bin") {
      EXPECT_EQ(f.at("outcome"), "read") << f;
      image_bytes += f.at("bytes_read").get<uint64_t>();
    }
  EXPECT_EQ(image_bytes, 250000u) << d;
}

// The layout reads images it did not make as hostile input: a file that is
// not EROFS, or an image cut short, is an error naming it, and no output
// is left behind.
TEST(ColdStartImage, ErofsLayoutRefusesWhatIsNotAWholeChunkedImage) {
  TempDir dir;
  std::string root = dir.File("root");
  ASSERT_EQ(Sh("mkdir -p " + root + " && head -c 100000 /dev/urandom > " + root + "/f && mkfs.erofs --quiet "
               "--chunksize=4096 " + dir.File("good.erofs") + " " + root + " && mkfs.erofs --quiet " +
               dir.File("flat.erofs") + " " + root + " && head -c 3000 " + dir.File("good.erofs") + " > " +
               dir.File("cut.erofs") + " && head -c 100000 /dev/zero > " + dir.File("zeros"))
                .status,
            0);
  Plan plan;
  std::string out = dir.File("out.erofs");
  auto not_erofs = LayOutErofsImage(dir.File("zeros"), out, plan, root);
  ASSERT_FALSE(not_erofs.ok());
  EXPECT_NE(not_erofs.error().message.find("'" + dir.File("zeros") + "' is not an EROFS image"), std::string::npos)
      << not_erofs.error().message;
  auto cut = LayOutErofsImage(dir.File("cut.erofs"), out, plan, root);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().message.find("damaged"), std::string::npos) << cut.error().message;
  EXPECT_NE(access(out.c_str(), F_OK), 0) << "a refused image left an output";
  // Without --chunksize the data is stored flat: laid out as it is, with
  // the file counted as not placed.
  plan.files.push_back({root + "/f", {}, {{0, 4096, 0}}});
  auto flat = LayOutErofsImage(dir.File("flat.erofs"), out, plan, root);
  ASSERT_TRUE(flat.ok()) << flat.error().message;
  EXPECT_EQ(flat->files_placed, 0u);
  EXPECT_EQ(flat->files_flat, 1u);
  EXPECT_TRUE(flat->left_out.empty());
  // Compressed with mkfs.erofs's default compact index, or in physical
  // clusters of several blocks, a block cannot move alone: refused, naming
  // the option that makes a layout it can move.
  ASSERT_EQ(Sh("seq 1 100000 > " + root + "/f && mkfs.erofs --quiet -zlz4hc " +
               dir.File("compact.erofs") + " " + root + " && mkfs.erofs --quiet -zlz4hc -C16384 -Elegacy-compress " +
               dir.File("big.erofs") + " " + root)
                .status,
            0);
  auto compact = LayOutErofsImage(dir.File("compact.erofs"), out, plan, root);
  ASSERT_FALSE(compact.ok());
  EXPECT_NE(compact.error().message.find("-Elegacy-compress"), std::string::npos) << compact.error().message;
  auto big_clusters = LayOutErofsImage(dir.File("big.erofs"), out, plan, root);
  ASSERT_FALSE(big_clusters.ok());
  EXPECT_NE(big_clusters.error().message.find("'" + dir.File("big.erofs") + "'"), std::string::npos)
      << big_clusters.error().message;
  auto good = LayOutErofsImage(dir.File("good.erofs"), out, plan, root);
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ(good->files_placed, 1u);
  EXPECT_EQ(good->blocks_placed, 1u);
}

// The startup's functions linked together. A program of 200
// functions, 2 KiB each, calls five far apart; from its cold run, the
// startup order lists those five in the order they ran (with their page
// mates) and none of the functions the start never reached. Relinked with
// it, the start's text lies together: a cold run of the new binary touches
// it in fewer extents of a replay (the plan's default merge gap) than the
// old one, whose start touched pages across the whole text.
TEST(ColdStartOrder, StartupOrderLinksTheStartsTextTogether) {
  TempDir dir;
  std::string src = dir.File("app.c");
  {
    std::ofstream c(src);
    c << "#define F(n) __attribute__((noinline)) int f##n(int x) { __asm__ volatile(\".fill 2040, 1, 0x90\"); "
         "return x + n; }\n";
    for (int i = 0; i < 200; ++i) c << "F(" << i << ")\n";
    c << "int main(int argc, char** argv) { int s = f150(argc); s += f20(s); s += f90(s); s += f5(s); "
         "s += f190(s); return s == 12345; }\n";
  }
  auto build = [&](const std::string& out, const std::string& order) {
    std::vector<std::string> argv = {"clang-19", "-O1", "-ffunction-sections", "-fuse-ld=lld", src, "-o", out};
    if (!order.empty()) argv.push_back("-Wl,--symbol-ordering-file=" + order);
    CmdResult r = RunCmd(argv);
    EXPECT_EQ(r.status, 0) << r.err;
  };
  // The extents of `bin` in the plan of its cold run, and that run's database.
  auto cold_extents = [&](const std::string& bin, const std::string& db) -> size_t {
    CmdResult c = Collect(db, {"--no-readahead"}, {bin});
    EXPECT_EQ(c.status, 0) << c.err;
    std::string plan = db + ".plan";
    CmdResult o = RunCmd({SyspgoBin(), "optimize", db, "--emit", "plan", "-o", plan});
    EXPECT_EQ(o.status, 0) << o.err;
    auto p = ReadPlan(plan);
    if (!p.ok()) {
      ADD_FAILURE() << p.error().message;
      return 0;
    }
    for (const PlanFile& f : p->files)
      if (f.path == bin) return f.extents.size();
    ADD_FAILURE() << "the plan holds no page of " << bin;
    return 0;
  };
  std::string app = dir.File("app"), db = dir.File("app.db"), order = dir.File("app.order");
  build(app, "");
  size_t before = cold_extents(app, db);
  CmdResult o = RunCmd({SyspgoBin(), "optimize", db, "--emit", "startup-order", "--binary", app, "-o", order});
  ASSERT_EQ(o.status, 0) << o.err;
  std::vector<std::string> names;
  {
    std::ifstream in(order);
    for (std::string line; std::getline(in, line);) names.push_back(line);
  }
  auto at = [&](const std::string& name) { return std::find(names.begin(), names.end(), name) - names.begin(); };
  EXPECT_LT(at("f150"), at("f20")) << ReadAll(order);
  EXPECT_LT(at("f20"), at("f90")) << ReadAll(order);
  EXPECT_LT(at("f90"), at("f5")) << ReadAll(order);
  EXPECT_LT(at("f5"), at("f190")) << ReadAll(order);
  EXPECT_LT(at("f190"), static_cast<long>(names.size())) << ReadAll(order);
  for (const char* unreached : {"f60", "f120", "f170"})
    EXPECT_EQ(at(unreached), static_cast<long>(names.size())) << unreached << " was not run\n" << ReadAll(order);

  std::string relinked = dir.File("app.ordered");
  build(relinked, order);
  size_t after = cold_extents(relinked, dir.File("ordered.db"));
  EXPECT_LT(after, before) << "the relinked start's text should lie in fewer runs of pages";

  EXPECT_TRUE(FailedWith(RunCmd({SyspgoBin(), "optimize", db, "--emit", "startup-order", "-o", order}), 2, "--binary"));
}

}  // namespace
}  // namespace syspgo::test
