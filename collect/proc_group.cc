//===- proc_group.cc - loader for bpf/proc.bpf.c: the traced process tree -===//
// Always loaded first: its `targets` and `drops` maps are shared with every
// other group. Process and thread rows are kept whole in memory until they
// exit and written with INSERT OR REPLACE at every change, so a run cut
// short still has each process as it was last seen.
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <unordered_map>

#include "collect/bpf_maps.h"
#include "common/util.h"
#include "bpf/proc.h"
#include "syspgo_bpf.skel.h"

namespace syspgo {
namespace {

// The kernel reports the file an exec ran by the name it was given, which
// is relative for `collect -- ./app`; analyses name the executable's pages
// by that path (its mapping, read at exec without an open), and a relative
// one names nothing. Made absolute here, while the process may still be
// there: by its /proc/PID/exe when that is still the same program (same
// last component), else against its working directory, else against the
// collector's, which is where the command started.
std::string AbsoluteExec(uint32_t pid, const std::string& given) {
  if (given.empty() || given[0] == '/') return given;
  std::string base = "/proc/" + std::to_string(pid);
  std::filesystem::path rel(given), exe = ReadLinkOrEmpty(base + "/exe");
  if (!exe.empty() && exe.filename() == rel.filename()) return exe.string();
  std::error_code ec;
  std::filesystem::path dir = ReadLinkOrEmpty(base + "/cwd");
  if (dir.empty()) dir = std::filesystem::current_path(ec);
  return ec ? given : (dir / rel).lexically_normal().string();
}

class ProcGroup : public ProbeGroup {
 public:
  ProcGroup() : ProbeGroup(SYSPGO_GROUP_PROC) {}

  void DeclareTables(Writer& w) override {
    process_ = w.Table("process", {"pid", "ppid", "comm", "exe", "argv", "start_ts", "exit_ts", "exit_code"},
                       "INSERT OR REPLACE");
    thread_ = w.Table("thread", {"tid", "pid", "comm", "start_ts", "exit_ts"}, "INSERT OR REPLACE");
    exec_ = w.Table("exec", {"ts", "pid", "tid", "filename", "argv"});
  }

  void OnTarget(Writer& w, uint32_t pid, bool attached) override {
    std::string base = "/proc/" + std::to_string(pid);
    Proc& p = procs_[pid];
    p.comm = Trim(ReadFileOrEmpty(base + "/comm"));
    std::string stat = ReadFileOrEmpty(base + "/stat");
    size_t rp = stat.rfind(')');
    if (rp != std::string::npos) {
      std::istringstream is(stat.substr(rp + 2));
      char state;
      is >> state >> p.ppid;
    }
    if (attached) {
      std::string cmd = ReadFileOrEmpty(base + "/cmdline");
      p.argv = JoinNulSeparated(cmd.data(), cmd.size());
      p.exe = ReadLinkOrEmpty(base + "/exe");
      // Existing threads of an attached process.
      if (DIR* d = opendir((base + "/task").c_str())) {
        while (dirent* e = readdir(d)) {
          if (e->d_name[0] == '.') continue;
          uint32_t tid = std::stoul(e->d_name);
          Thread& t = threads_[tid];
          t.pid = pid;
          t.comm = Trim(ReadFileOrEmpty(base + "/task/" + e->d_name + "/comm"));
          WriteThread(w, tid);
        }
        closedir(d);
      }
    } else {
      threads_[pid] = Thread{pid, p.comm, 0, -1};
      WriteThread(w, pid);
    }
    WriteProc(w, pid);
  }

  void Handle(const void* data, size_t size, Writer& w) override {
    auto* h = static_cast<const syspgo_hdr*>(data);
    int64_t ts = static_cast<int64_t>(h->ts - start_ns_);
    switch (h->type) {
      case PROC_FORK:
      case PROC_THREAD:
      case PROC_RENAME: {
        if (size < sizeof(proc_task_event)) return;
        auto* e = static_cast<const proc_task_event*>(data);
        std::string comm(e->comm, strnlen(e->comm, sizeof e->comm));
        if (h->type == PROC_FORK) {
          auto parent = procs_.find(e->ppid);
          Proc p{e->ppid, comm, "", "", ts, -1, -1};
          if (parent != procs_.end()) {
            p.exe = parent->second.exe;
            p.argv = parent->second.argv;
          }
          procs_[h->pid] = std::move(p);
          WriteProc(w, h->pid);
        }
        if (h->type == PROC_RENAME) {
          if (h->pid == h->tid) {
            procs_[h->pid].comm = comm;
            WriteProc(w, h->pid);
          }
          auto it = threads_.find(h->tid);
          if (it != threads_.end()) {
            it->second.comm = comm;
            WriteThread(w, h->tid);
            return;
          }
        }
        threads_[h->tid] = Thread{h->pid, comm, ts, -1};
        WriteThread(w, h->tid);
        return;
      }
      case PROC_EXEC: {
        if (size < sizeof(proc_exec_event)) return;
        auto* e = static_cast<const proc_exec_event*>(data);
        Proc& p = procs_[h->pid];
        p.comm.assign(e->comm, strnlen(e->comm, sizeof e->comm));
        p.exe = AbsoluteExec(h->pid, std::string(e->filename, strnlen(e->filename, sizeof e->filename)));
        p.argv = JoinNulSeparated(e->args, std::min<size_t>(e->args_len, sizeof e->args));
        WriteProc(w, h->pid);
        // exec leaves one thread, renamed to the new comm, with tid = pid.
        Thread& t = threads_[h->pid];
        t.pid = h->pid;
        t.comm = p.comm;
        WriteThread(w, h->pid);
        w.Row(exec_).I(ts).I(h->pid).I(h->tid).T(p.exe).T(p.argv);
        return;
      }
      case PROC_EXIT: {
        if (size < sizeof(proc_exit_event)) return;
        auto* e = static_cast<const proc_exit_event*>(data);
        // Written for the last time, then forgotten: a run of many short
        // processes holds only the live ones.
        auto it = threads_.find(h->tid);
        if (it != threads_.end()) {
          it->second.exit_ts = ts;
          WriteThread(w, h->tid);
          threads_.erase(it);
        }
        if (e->group_dead) {
          Proc& p = procs_[h->pid];
          p.exit_ts = ts;
          p.exit_code = ExitStatusFromWait(e->exit_code);
          WriteProc(w, h->pid);
          procs_.erase(h->pid);
        }
        return;
      }
    }
  }

 private:
  struct Proc {
    uint32_t ppid = 0;
    std::string comm, exe, argv;
    int64_t start_ts = 0, exit_ts = -1;
    int exit_code = -1;
  };
  struct Thread {
    uint32_t pid = 0;
    std::string comm;
    int64_t start_ts = 0, exit_ts = -1;
  };

  void WriteProc(Writer& w, uint32_t pid) {
    const Proc& p = procs_[pid];
    auto r = w.Row(process_);
    r.I(pid).I(p.ppid).T(p.comm).T(p.exe).T(p.argv).I(p.start_ts);
    if (p.exit_ts >= 0) r.I(p.exit_ts).I(p.exit_code);
    else r.Null().Null();
  }
  void WriteThread(Writer& w, uint32_t tid) {
    const Thread& t = threads_[tid];
    auto r = w.Row(thread_);
    r.I(tid).I(t.pid).T(t.comm).I(t.start_ts);
    if (t.exit_ts >= 0) r.I(t.exit_ts);
    else r.Null();
  }

  int process_ = -1, thread_ = -1, exec_ = -1;
  std::unordered_map<uint32_t, Proc> procs_;
  std::unordered_map<uint32_t, Thread> threads_;
};

}  // namespace

std::unique_ptr<ProbeGroup> MakeProcGroup() { return std::make_unique<ProcGroup>(); }

}  // namespace syspgo
