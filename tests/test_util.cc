//===- test_util.cc - helpers for suites that run the real syspgo --------===//
#include "tests/test_util.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "common/profile_db.h"

extern char** environ;

namespace syspgo::test {

CmdResult RunCmd(const std::vector<std::string>& argv) {
  CmdResult r;
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) return r;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(out[0]);
    close(err[0]);
    r.err = "spawn failed: " + std::string(strerror(rc));
    return r;
  }
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, n);
      }
    }
  }
  int st = 0;
  waitpid(pid, &st, 0);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

CmdResult Sh(const std::string& script) { return RunCmd({"/bin/sh", "-c", script}); }

testing::AssertionResult FailedWith(const CmdResult& r, int status, std::string_view message) {
  bool said = r.err.find(message) != std::string::npos;
  if (r.status == status && said) return testing::AssertionSuccess();
  testing::AssertionResult failure = testing::AssertionFailure();
  failure << "expected exit status " << status << " and stderr holding \"" << message << "\"; got status "
          << r.status << (said ? "" : ", stderr without it");
  return failure << "\n--- stdout:\n" << r.out << "\n--- stderr:\n" << r.err;
}

std::string SyspgoBin() { return SYSPGO_BIN; }
std::string ExampleBin(const std::string& name) { return std::string(SYSPGO_EXAMPLES_BIN) + "/" + name; }

namespace {

constexpr char kDamonMarkPrefix[] = "syspgo-test-damon-paused.";

bool WriteState(const std::string& state, const char* value) {
  std::ofstream out(state);
  out << value << "\n";
  out.flush();
  return static_cast<bool>(out);
}

std::string ReadState(const std::string& state) {
  std::ifstream in(state);
  std::string v;
  in >> v;
  return v;
}

// Run by every test binary as it starts (all of them link this file).
[[maybe_unused]] const int kDamonsRestartedAtStart = [] {
  int n = RestartDamonsOfDeadTests();
  if (n > 0)
    fprintf(stderr, "syspgo tests: started %d kdamond(s) again that a test stopped and could not restart\n", n);
  return n;
}();

}  // namespace

DamonPaused::DamonPaused(const std::string& admin, const std::string& mark_dir) {
  for (int k = 0;; ++k) {
    std::string state = admin + std::to_string(k) + "/state";
    std::string v = ReadState(state);
    if (v.empty()) break;
    if (v != "on") continue;
    WriteState(state, "off");
    stopped_.push_back(state);
  }
  if (stopped_.empty()) return;
  mark_ = mark_dir + "/" + kDamonMarkPrefix + std::to_string(getpid());
  std::ofstream mark(mark_);
  for (const std::string& state : stopped_) mark << state << "\n";
  mark.flush();
  if (!mark) ADD_FAILURE() << "could not write " << mark_ << ", which names the kdamonds this test stopped";
}

DamonPaused::~DamonPaused() {
  for (const std::string& state : stopped_)
    if (!WriteState(state, "on")) ADD_FAILURE() << "could not start the kdamond again: echo on > " << state;
  if (!mark_.empty()) unlink(mark_.c_str());
}

int RestartDamonsOfDeadTests(const std::string& mark_dir) {
  int started = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(mark_dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind(kDamonMarkPrefix, 0) != 0) continue;
    pid_t pid = static_cast<pid_t>(atoi(name.c_str() + strlen(kDamonMarkPrefix)));
    if (pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH) continue;  // still running (or not ours to judge)
    std::ifstream mark(e.path());
    for (std::string state; std::getline(mark, state);)
      if (ReadState(state) == "off" && WriteState(state, "on")) ++started;
    unlink(e.path().c_str());
  }
  return started;
}

TempDir::TempDir() {
  char tmpl[] = "/var/tmp/syspgo-test-XXXXXX";
  char* p = mkdtemp(tmpl);
  if (p) path_ = p;
}

TempDir::~TempDir() {
  if (!path_.empty() && !getenv("SYSPGO_KEEP_TEST_DIRS")) {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
}

namespace {
template <typename J>
J ParseJsonFile(const std::string& file) {
  J j = J::parse(ReadAll(file), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << file << " is not JSON";
  return j.is_discarded() ? nullptr : j;
}
}  // namespace

nlohmann::json ReadJson(const std::string& file) { return ParseJsonFile<nlohmann::json>(file); }
nlohmann::ordered_json ReadOrderedJson(const std::string& file) { return ParseJsonFile<nlohmann::ordered_json>(file); }

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::string TestData(const std::string& name) {
  std::string text = ReadAll(std::string(SYSPGO_TEST_DATA) + "/" + name);
  EXPECT_FALSE(text.empty()) << "missing or empty: tests/data/" << name;
  return text;
}

std::string NewProfileDb(const TempDir& dir, const std::string& name) {
  std::string path = dir.File(name);
  auto db = OpenProfileDb(path, DbMode::kCreateOrAppend);
  EXPECT_TRUE(db.ok()) << path << ": " << db.error().message;
  return path;
}

std::string FixtureDb(const TempDir& dir, const std::string& fixture, const std::string& name) {
  std::string path = dir.File(name);
  auto db = OpenProfileDb(path, DbMode::kCreateOrAppend);
  EXPECT_TRUE(db.ok()) << db.error().message;
  if (db.ok()) {
    Status loaded = db->Exec(TestData(fixture));
    EXPECT_TRUE(loaded.ok()) << fixture << ": " << loaded.error().message;
  }
  return path;
}

Db OpenDb(const std::string& path) {
  auto db = Db::Open(path, SQLITE_OPEN_READONLY);
  EXPECT_TRUE(db.ok()) << (db.ok() ? "" : db.error().message);
  return db.ok() ? std::move(db.value()) : Db();
}

std::string ExecSql(const std::string& path, const std::string& sql) {
  auto d = Db::Open(path, SQLITE_OPEN_READWRITE);
  if (!d.ok()) return d.error().message;
  Status st = d->Exec(sql);
  return st.ok() ? "" : st.error().message;
}

int64_t QueryInt(Db& db, const std::string& sql) {
  auto st = db.Prepare(sql);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
  if (!st.ok() || !st->Step()) return 0;
  return st->Int(0);
}

std::vector<std::string> QueryRows(Db& db, const std::string& sql) {
  std::vector<std::string> rows;
  auto st = db.Prepare(sql);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
  if (!st.ok()) return rows;
  int n = sqlite3_column_count(st->raw());
  while (st->Step()) {
    std::string r;
    for (int c = 0; c < n; ++c) {
      if (c) r += '\t';
      r += st->Text(c);
    }
    rows.push_back(r);
  }
  return rows;
}

bool WaitAttached(const std::string& db) {
  for (int i = 0; i < 600; ++i) {
    if (access(db.c_str(), F_OK) == 0) {
      auto d = Db::Open(db, SQLITE_OPEN_READONLY);
      if (d.ok()) {
        auto v = d->QueryInt("SELECT COUNT(*) FROM run WHERE command_start_ts IS NOT NULL");
        if (v.ok() && *v > 0) return true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

DevIno StatFile(const std::string& path) {
  struct stat sb {};
  EXPECT_EQ(stat(path.c_str(), &sb), 0) << path;
  return {static_cast<uint64_t>(sb.st_dev), static_cast<uint64_t>(sb.st_ino)};
}

Kallsyms::Kallsyms(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    char type = 0;
    char name[256];
    unsigned long long addr;
    if (sscanf(line.c_str(), "%llx %c %255s", &addr, &type, name) != 3) continue;
    if (type == 't' || type == 'T' || type == 'w' || type == 'W') syms_.emplace_back(addr, name);
  }
  std::sort(syms_.begin(), syms_.end());
}

std::string Kallsyms::Name(uint64_t addr) const {
  auto it = std::upper_bound(syms_.begin(), syms_.end(), std::make_pair(addr, std::string("\x7f")));
  return it == syms_.begin() ? "" : std::prev(it)->second;
}

std::map<std::string, NmSymbol> NmSymbols(const std::string& bin) {
  std::map<std::string, NmSymbol> out;
  std::istringstream in(Sh("nm -S --defined-only " + bin).out);
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long start, size;
    char type, name[512];
    if (sscanf(line.c_str(), "%llx %llx %c %511s", &start, &size, &type, name) == 4) out[name] = {start, size, type};
  }
  return out;
}

std::string RunKallsymsText(Db& db) {
  auto text = QueryRows(db, "SELECT k.text FROM kallsyms k JOIN run_kallsyms r ON r.hash = k.hash "
                            "ORDER BY r.run_id DESC LIMIT 1");
  return text.empty() ? "" : text[0];
}

namespace {
int ShellStatus(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}
}  // namespace

OwnedChild::OwnedChild(const std::vector<std::string>& argv, const std::string& stderr_file) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  if (!stderr_file.empty())
    posix_spawn_file_actions_addopen(&fa, 2, stderr_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (posix_spawnp(&pid_, args[0], &fa, nullptr, args.data(), environ) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&fa);
}

int OwnedChild::WaitExit(std::chrono::seconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (pid_ > 0 && status_ < 0) {
    int st = 0;
    pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) {
      status_ = r < 0 ? 255 : ShellStatus(st);
      break;
    }
    if (std::chrono::steady_clock::now() >= until) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return status_;
}

int OwnedChild::Stop(int sig, std::chrono::seconds grace) {
  if (pid_ <= 0 || status_ >= 0) return status_;
  kill(pid_, sig);
  int st = WaitExit(grace);
  if (st < 0) Kill();
  return st;
}

void OwnedChild::Kill() {
  if (pid_ <= 0 || status_ >= 0) return;
  kill(pid_, SIGKILL);
  int st = 0;
  pid_t r;
  while ((r = waitpid(pid_, &st, 0)) < 0 && errno == EINTR) {
  }
  status_ = r == pid_ ? ShellStatus(st) : 255;
}

}  // namespace syspgo::test
