//===- proc_group.cc - loader for bpf/proc.bpf.c: the traced process tree -===//
// Always loaded first: its `targets` and `drops` maps are shared with every
// other group. Process and thread rows are kept whole in memory until they
// exit and written with INSERT OR REPLACE at every change, so a run cut
// short still has each process as it was last seen. Under sudo the kernel
// side leaves out a process whose exec gives it rights the invoking user
// lacks (bpf/proc.bpf.c); it is then forgotten here: its rows stay as they
// were before that exec, and nothing more is read or written of it.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "collect/bpf_maps.h"
#include "collect/container.h"
#include "collect/groups.h"
#include "common/elf.h"
#include "common/identity.h"
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
// collector's, which is where the command started. What /proc showed is
// used only if the process is still traced after it was read (`traced`):
// by then it may be another program, one the user may not see.
template <typename StillTraced>
std::string AbsoluteExec(uint32_t pid, const std::string& given, StillTraced traced) {
  if (given.empty() || given[0] == '/') return given;
  std::string base = "/proc/" + std::to_string(pid);
  std::filesystem::path rel(given), exe = ReadLinkOrEmpty(base + "/exe");
  std::filesystem::path dir = ReadLinkOrEmpty(base + "/cwd");
  if (!traced(pid)) exe.clear(), dir.clear();
  if (!exe.empty() && exe.filename() == rel.filename()) return exe.string();
  std::error_code ec;
  if (dir.empty()) dir = std::filesystem::current_path(ec);
  return ec ? given : (dir / rel).lexically_normal().string();
}

// What a left-out process had that the user lacks (proc_left_out_why), in words.
std::string DescribeWhy(uint32_t why) {
  static const std::pair<uint32_t, const char*> kWhy[] = {
      {PROC_WHY_UID, "setuid"},
      {PROC_WHY_GID, "setgid"},
      {PROC_WHY_CAPS, "capabilities"},
      {PROC_WHY_NOT_DUMPABLE, "not dumpable"},
  };
  std::string out;
  for (auto [bit, word] : kWhy)
    if (why & bit) out += (out.empty() ? "" : ", ") + std::string(word);
  return out;
}

class ProcGroup : public ProbeGroup {
 public:
  ProcGroup() : ProbeGroup(SYSPGO_GROUP_PROC) {}

  void DeclareTables(Writer& w) override {
    process_ = w.Table("process",
                       {"pid", "ppid", "comm", "exe", "argv", "start_ts", "exit_ts", "exit_code", "cgroup", "container"},
                       "INSERT OR REPLACE");
    thread_ = w.Table("thread", {"tid", "pid", "comm", "start_ts", "exit_ts"}, "INSERT OR REPLACE");
    exec_ = w.Table("exec", {"ts", "pid", "tid", "filename", "argv"});
    exec_file_ = w.Table("exec_file", {"filename", "dev", "ino", "path", "interpreter"});
    file_size_ = w.Table("file_size", {"dev", "ino", "size"}, "INSERT OR IGNORE");
  }

  uint64_t left_out() const {
    uint32_t zero = 0;
    uint64_t n = 0;
    if (skel_) bpf_map_lookup_elem(bpf_map__fd(skel_->maps.proc_left_out), &zero, &n);
    return n;
  }

  void OnTarget(Writer& w, uint32_t pid, bool attached) override {
    std::string base = "/proc/" + std::to_string(pid);
    std::string stat = ReadFileOrEmpty(base + "/stat");
    // Gone before it could be read: a short-lived process a cgroup listed
    // (a `sleep` of a container's shell loop). Its fork, if recorded, said
    // what is known of it; a row of blanks would put a process of the
    // cgroup outside it.
    if (stat.empty()) return;
    roots_.Add(static_cast<pid_t>(pid));
    Proc& p = procs_[pid];
    p.comm = Trim(ReadFileOrEmpty(base + "/comm"));
    SetCgroup(p, pid, p.cgroup, p.comm);
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
      case PROC_RENAME:
        if (size >= sizeof(proc_task_event)) OnTask(*static_cast<const proc_task_event*>(data), ts, w);
        return;
      case PROC_EXEC:
        if (size >= sizeof(proc_exec_event)) OnExec(*static_cast<const proc_exec_event*>(data), ts, w);
        return;
      case PROC_LEFT_OUT:
        if (size >= sizeof(proc_left_out_event)) OnLeftOut(*static_cast<const proc_left_out_event*>(data));
        return;
      case PROC_EXIT:
        if (size >= sizeof(proc_exit_event)) OnExit(*static_cast<const proc_exit_event*>(data), ts, w);
        return;
    }
  }

 protected:
  Status Configure(syspgo_bpf* s, const GroupContext& ctx) override {
    verbose_ = ctx.opts->verbose > 0;
    auto user = InvokingUserOrNull();
    if (!user.ok()) return user.error();
    s->rodata->proc_user_only = *user != nullptr;
    s->rodata->proc_user_uid = *user ? (*user)->uid : 0;
    s->rodata->proc_user_gid = *user ? (*user)->gid : 0;
    // Kernels before 6.10 lack sched_prepare_exec: proc_exec alone decides there.
    DisableMissingTracepoints();
    return {};
  }

 private:
  struct Proc {
    uint32_t ppid = 0;
    std::string comm, exe, argv;
    int64_t start_ts = 0, exit_ts = -1;
    int exit_code = -1;
    std::string cgroup, container;  // as first seen, and at each exec (collect/container.h)
  };

  // `pid`'s cgroup from /proc, or `known` (a fork's parent's, or its own
  // before an exec) when it is gone or exiting: the kernel moves an exited
  // task to the root cgroup, so "/" never replaces a known cgroup. Its
  // container id from that path. The event may be read after a short-lived
  // process was reaped and its pid given to another: /proc counts only
  // while it still shows the event's command name (`comm`).
  static void SetCgroup(Proc& p, uint32_t pid, const std::string& known, const std::string& comm) {
    std::string base = "/proc/" + std::to_string(pid);
    bool same = Trim(ReadFileOrEmpty(base + "/comm")) == comm;
    std::string now = same ? ProcessCgroup(static_cast<pid_t>(pid)) : "";
    p.cgroup = now.empty() || (now == "/" && !known.empty()) ? known : now;
    p.container = ContainerIdOf(p.cgroup);
  }
  struct Thread {
    uint32_t pid = 0;
    std::string comm;
    int64_t start_ts = 0, exit_ts = -1;
  };

  // A left-out process's threads and row, dropped from memory: nothing of
  // it is written again (its exit is not seen either: it is no target).
  void Forget(uint32_t pid) {
    procs_.erase(pid);
    std::erase_if(threads_, [pid](const auto& t) { return t.second.pid == pid; });
  }

  // A fork, a new thread or a rename (of a thread, and of its process when
  // it is the main one).
  void OnTask(const proc_task_event& e, int64_t ts, Writer& w) {
    const syspgo_hdr* h = &e.hdr;
    std::string comm(e.comm, strnlen(e.comm, sizeof e.comm));
    if (h->type == PROC_FORK) {
      auto parent = procs_.find(e.ppid);
      Proc p{e.ppid, comm, "", "", ts, -1, -1};
      if (parent != procs_.end()) {
        p.exe = parent->second.exe;
        p.argv = parent->second.argv;
      }
      // A child starts in its parent's cgroup: /proc only for a parent
      // not seen (a runtime moves a container's init before its exec).
      if (parent != procs_.end() && !parent->second.cgroup.empty()) {
        p.cgroup = parent->second.cgroup;
        p.container = parent->second.container;
      } else {
        SetCgroup(p, h->pid, "", comm);
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
  }

  void OnExec(const proc_exec_event& e, int64_t ts, Writer& w) {
    const syspgo_hdr* h = &e.hdr;
    Proc& p = procs_[h->pid];
    p.comm.assign(e.comm, strnlen(e.comm, sizeof e.comm));
    p.exe = AbsoluteExec(h->pid, std::string(e.filename, strnlen(e.filename, sizeof e.filename)),
                         [this](uint32_t pid) { return StillTraced(pid); });
    p.argv = JoinNulSeparated(e.args, std::min<size_t>(e.args_len, sizeof e.args));
    SetCgroup(p, h->pid, p.cgroup, p.comm);  // a runtime moves a container's init into its cgroup before its exec
    WriteProc(w, h->pid);
    // exec leaves one thread, renamed to the new comm, with tid = pid.
    Thread& t = threads_[h->pid];
    t.pid = h->pid;
    t.comm = p.comm;
    WriteThread(w, h->pid);
    w.Row(exec_).I(ts).I(h->pid).I(h->tid).T(p.exe).T(p.argv);
    RecordExecFiles(w, h->pid, p.exe, KernelDevToUser(e.dev), e.ino);
  }

  void OnLeftOut(const proc_left_out_event& e) {
    Forget(e.hdr.pid);
    if (verbose_)
      fprintf(stderr, "syspgo: pid %u left out of the recording at its exec: %s\n", e.hdr.pid,
              DescribeWhy(e.why).c_str());
  }

  // Written for the last time, then forgotten: a run of many short
  // processes holds only the live ones.
  void OnExit(const proc_exit_event& e, int64_t ts, Writer& w) {
    const syspgo_hdr* h = &e.hdr;
    auto it = threads_.find(h->tid);
    if (it != threads_.end()) {
      it->second.exit_ts = ts;
      WriteThread(w, h->tid);
      threads_.erase(it);
    }
    if (e.group_dead) {
      Proc& p = procs_[h->pid];
      p.exit_ts = ts;
      p.exit_code = ExitStatusFromWait(e.exit_code);
      WriteProc(w, h->pid);
      procs_.erase(h->pid);
    }
  }

  void WriteProc(Writer& w, uint32_t pid) {
    const Proc& p = procs_[pid];
    auto r = w.Row(process_);
    r.I(pid).I(p.ppid).T(p.comm).T(p.exe).T(p.argv).I(p.start_ts);
    if (p.exit_ts >= 0) r.I(p.exit_ts).I(p.exit_code);
    else r.Null().Null();
    r.T(p.cgroup).T(p.container);
  }
  // The files an exec maps without an open call, once per file a run
  // (exec_file, file_size): the file exec'd, (dev, ino) from the event, by
  // its name here (below its container's root: ForeignRoots), else through
  // /proc/PID/exe while the process is still traced (the program it runs,
  // in its own mount namespace), else by its name; and the ELF interpreter
  // it names, below the same root. Every name and the file's header are
  // read with the invoking user's rights: the traced process chose them.
  void RecordExecFiles(Writer& w, uint32_t pid, const std::string& exe, uint64_t dev, uint64_t ino) {
    std::string key = exe + '\0' + std::to_string(dev) + ':' + std::to_string(ino);
    if (exe.empty() || exe[0] != '/' || !exec_files_.insert(key).second) return;
    ActAsUser as_user;
    if (!as_user.ok()) return;
    roots_.Add(static_cast<pid_t>(pid));
    std::string here = roots_.Find(exe, dev, ino), root, via, real;
    if (here.size() > exe.size()) root = here.substr(0, here.size() - exe.size());
    struct stat sb {};
    if (!here.empty() && stat(here.c_str(), &sb) == 0) {
      via = here;
      real = root.empty() ? RealPathOrEmpty(here) : ResolveBelow(root, exe);
    } else {
      via = "/proc/" + std::to_string(pid) + "/exe";
      real = ReadLinkOrEmpty(via);
      if (real.empty() || stat(via.c_str(), &sb) != 0 || !StillTraced(pid)) {
        via = exe;
        real = RealPathOrEmpty(exe);
        if (real.empty() || stat(exe.c_str(), &sb) != 0) return;
      }
    }
    if (!S_ISREG(sb.st_mode)) return;
    auto interp = ReadElfInterpreter(via);
    std::string interpreter = interp ? *interp : "";
    WriteExecFile(w, exe, sb, real, interpreter);
    if (interpreter.empty() || interpreter[0] != '/') return;
    std::string interp_real = root.empty() ? RealPathOrEmpty(interpreter) : ResolveBelow(root, interpreter);
    struct stat ib {};
    if (interp_real.empty() || !exec_files_.insert(interp_real).second) return;
    if (stat(interp_real.c_str(), &ib) == 0 && S_ISREG(ib.st_mode)) WriteExecFile(w, interpreter, ib, interp_real, "");
  }
  void WriteExecFile(Writer& w, const std::string& name, const struct stat& sb, const std::string& real,
                     const std::string& interpreter) {
    w.Row(exec_file_).T(name).I(sb.st_dev).I(sb.st_ino).T(real).T(interpreter);
    w.Row(file_size_).I(sb.st_dev).I(sb.st_ino).I(sb.st_size);
  }
  void WriteThread(Writer& w, uint32_t tid) {
    const Thread& t = threads_[tid];
    auto r = w.Row(thread_);
    r.I(tid).I(t.pid).T(t.comm).I(t.start_ts);
    if (t.exit_ts >= 0) r.I(t.exit_ts);
    else r.Null();
  }

  int process_ = -1, thread_ = -1, exec_ = -1, exec_file_ = -1, file_size_ = -1;
  bool verbose_ = false;
  std::unordered_set<std::string> exec_files_;  // files RecordExecFiles has seen: name and (dev, ino), or path
  ForeignRoots roots_;
  std::unordered_map<uint32_t, Proc> procs_;
  std::unordered_map<uint32_t, Thread> threads_;
};

}  // namespace

std::unique_ptr<ProbeGroup> MakeProcGroup() { return std::make_unique<ProcGroup>(); }

uint64_t ProcessesLeftOut(const ProbeGroup& proc) {
  if (proc.id() != SYSPGO_GROUP_PROC) return 0;
  return static_cast<const ProcGroup&>(proc).left_out();
}

}  // namespace syspgo
