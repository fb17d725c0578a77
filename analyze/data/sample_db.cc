//===- sample_db.cc - CPU samples of a run, from the profile database ----===//
// Samples are folded in SQL (GROUP BY stack ids), so a million samples
// cost one row per distinct stack here. A user address is turned into a
// file offset with the mapping that covered it at the sample's time: a
// process that execs again reuses addresses, and the schema keeps each
// mapping with the time it was first seen.
#include "analyze/sample_db.h"

#include <algorithm>
#include <unordered_map>

#include "analyze/data/cpu_tables.h"
#include "analyze/data/query.h"
#include "analyze/run.h"
#include "analyze/data/tasks.h"

namespace syspgo {
namespace {

constexpr char kSamplesSql[] =
    "SELECT pid, kernel, ip, user_stack_id, kernel_stack_id, MAX(ts), COUNT(*) FROM cpu_sample "
    "WHERE run_id = ?1 GROUP BY pid, kernel, ip, user_stack_id, kernel_stack_id "
    "ORDER BY pid, kernel, ip, user_stack_id, kernel_stack_id";
// Off-CPU time folded by stack as the samples are; `ts` picks the mapping
// as for a sample.
constexpr char kOffCpuSql[] =
    "SELECT pid, user_stack_id, kernel_stack_id, MAX(ts), SUM(dur) FROM offcpu WHERE run_id = ?1 "
    "GROUP BY pid, user_stack_id, kernel_stack_id ORDER BY pid, user_stack_id, kernel_stack_id";
constexpr char kCpuRunsSql[] = "SELECT DISTINCT run_id FROM cpu_sample ORDER BY run_id";

struct Mapping {
  int64_t ts;
  uint64_t start, end, off;
  uint32_t binary;
};

Error DbError(Db& db, const std::string& what) {
  return MakeError("cannot read " + what + " from '" + db.path() + "': it has no such table.");
}

using Mappings = std::unordered_map<uint32_t, std::vector<Mapping>>;  // pid -> its mappings
using Stacks = std::unordered_map<int64_t, std::vector<uint64_t>>;    // stack id -> its frames

// How the errors name a run, and how they say to record what it lacks.
struct RunText {
  std::string name;  // "run N of 'DB'"
  std::string db;
  std::string Need(const char* what) const {
    return "record them with: syspgo collect --probes cpu -o " + db + " -- COMMAND (" + what + ")";
  }
};

// Period from the collector's settings ("freq_hz": N), and the build-ids
// of the kernel and of the vDSO (which the mapping table cannot read).
// Returns the vDSO's.
std::string ReadSettings(Db& db, int64_t run_id, SampleSet& set) {
  std::string vdso_build_id;
  if (auto settings = ReadRunSettings(db, run_id); settings.ok()) {
    if (settings->freq_hz > 0) set.period_ns = 1000000000ull / settings->freq_hz;
    set.kernel_build_id = settings->kernel_build_id;
    vdso_build_id = settings->vdso_build_id;
  }
  return vdso_build_id;
}

// Mappings, per pid, each user file once in `set.binaries`.
Result<Mappings> ReadPidMappings(Db& db, int64_t run_id, const std::string& vdso_build_id, const RunText& run,
                                 SampleSet& set) {
  Mappings maps;
  auto rows = ReadMappings(db, run_id);
  if (!rows)
    return MakeError("cannot read the CPU sample tables (mapping) of " + run.name + ": " + rows.error().message +
                     "; " + run.Need("with a current syspgo"));
  for (auto& [pid, list] : *rows) {
    for (MappingRow& m : list) {
      uint32_t b = kNoBinary;
      if (m.path == "[vdso]" && m.build_id.empty()) m.build_id = vdso_build_id;
      if (!m.path.empty()) b = set.InternBinary({m.path, m.build_id});
      maps[static_cast<uint32_t>(pid)].push_back({m.ts, m.start, m.end, m.file_off, b});
    }
  }
  return maps;
}

// The mapping that covered `a` in `pid` at `ts`: the latest one seen by then.
UserFrame Resolve(const Mappings& maps, uint32_t pid, uint64_t a, int64_t ts) {
  auto it = maps.find(pid);
  if (it == maps.end()) return {kNoBinary, a};
  const Mapping *before = nullptr, *after = nullptr;  // latest seen by ts; else the first seen after
  for (const Mapping& m : it->second) {
    if (m.start > a) break;
    if (a >= m.end) continue;
    if (m.ts <= ts) {
      if (!before || m.ts > before->ts) before = &m;
    } else if (!after || m.ts < after->ts) {
      after = &m;
    }
  }
  const Mapping* best = before ? before : after;
  if (!best || best->binary == kNoBinary) return {kNoBinary, a};
  return {best->binary, a - best->start + best->off};
}

// A user stack ends at kUserAddressLimit (cpu_tables.h), as a pprof stack
// does when it is read back (sample_pprof.cc), so both give the same stacks.
void AddUserFrames(const std::vector<uint64_t>& frames, const Mappings& maps, StackSample& s, int64_t ts) {
  for (uint64_t a : frames) {
    if (a >= kUserAddressLimit) break;
    s.user.push_back(Resolve(maps, s.pid, a, ts));
  }
}

// The run's CPU samples, folded by stack, into `set.samples`.
Status ReadOnCpu(Db& db, int64_t run_id, const Stacks& stacks, const Mappings& maps, const RunText& run,
                 SampleSet& set) {
  if (!data::HasTable(db, "cpu_sample"))
    return MakeError(run.name + " has no CPU sample table: " + run.Need("the cpu probe group"));
  return data::Visit(db, "", kSamplesSql, {run_id}, [&](Stmt& st) {
    StackSample s;
    s.pid = static_cast<uint32_t>(st.Int(0));
    s.kernel_mode = st.Int(1) != 0;
    int64_t ts = st.Int(5);
    s.count = static_cast<uint64_t>(st.Int(6));
    auto u = stacks.find(st.Int(3));
    if (u != stacks.end()) {
      AddUserFrames(u->second, maps, s, ts);
    } else if (!s.kernel_mode) {
      s.user.push_back(Resolve(maps, s.pid, static_cast<uint64_t>(st.Int(2)), ts));
    }
    auto k = stacks.find(st.Int(4));
    if (k != stacks.end()) s.kernel = k->second;
    else if (s.kernel_mode) s.kernel.push_back(static_cast<uint64_t>(st.Int(2)));
    set.samples.push_back(std::move(s));
  });
}

// Why a run has no CPU samples, and what to do.
Error NoSamples(Db& db, int64_t run_id, const RunText& run) {
  std::string why = "the cpu probe group was not enabled";
  if (auto p = ReadProbeStatus(db, run_id, "cpu"); p.ok() && p->recorded) {
    why = p->attached ? "the cpu probe group was attached, but the command ended before a sample was taken "
                        "(run it longer, or raise --freq)"
                      : "the cpu probe group failed to attach: " + p->detail;
  }
  return MakeError(run.name + " has no CPU samples: " + why + "; " + run.Need("sampled stacks need frame pointers"));
}

// The run's off-CPU time, folded by stack, into `set.offcpu`; `stacks`
// gains the off-CPU table's.
Status ReadOffCpu(Db& db, int64_t run_id, Stacks& stacks, const Mappings& maps, SampleSet& set) {
  SYSPGO_TRY(VisitStacksOf(db, run_id, StackTable::kOffCpu, [&](int64_t id, std::vector<uint64_t> frames) {
    stacks.try_emplace(id, std::move(frames));
  }));
  return data::Visit(db, "", kOffCpuSql, {run_id}, [&](Stmt& st) {
    // The thread is in the kernel when it leaves the CPU: the first
    // user frame is where it entered, as in a kernel-mode sample.
    StackSample s;
    s.pid = static_cast<uint32_t>(st.Int(0));
    s.kernel_mode = true;
    int64_t ts = st.Int(3);
    s.count = static_cast<uint64_t>(std::max<int64_t>(st.Int(4), 0));
    auto u = stacks.find(st.Int(1));
    if (u != stacks.end()) AddUserFrames(u->second, maps, s, ts);
    auto k = stacks.find(st.Int(2));
    if (k != stacks.end()) s.kernel = k->second;
    if (s.count) set.offcpu.push_back(std::move(s));
  });
}

}  // namespace

Result<SampleSet> LoadCpuSamples(Db& db, int64_t run_id, bool offcpu) {
  SampleSet set;
  set.runs.push_back(run_id);
  const RunText run{"run " + std::to_string(run_id) + " of '" + db.path() + "'", db.path()};
  std::string vdso_build_id = ReadSettings(db, run_id, set);
  auto maps = ReadPidMappings(db, run_id, vdso_build_id, run, set);
  if (!maps) return maps.error();

  Stacks stacks;
  if (!data::HasTable(db, "stack")) return DbError(db, "stacks");
  SYSPGO_TRY(VisitStacksOf(db, run_id, StackTable::kCpuSample,
                           [&](int64_t id, std::vector<uint64_t> frames) { stacks[id] = std::move(frames); }));
  SYSPGO_TRY(ReadOnCpu(db, run_id, stacks, *maps, run, set));
  if (set.samples.empty()) return NoSamples(db, run_id, run);
  // A database from before the sched group, or a run without it, has no
  // intervals: then there is no off-CPU time to add, not an error.
  if (offcpu && data::HasTable(db, "offcpu")) SYSPGO_TRY(ReadOffCpu(db, run_id, stacks, *maps, set));

  auto tasks = Tasks::Load(db, run_id);
  if (!tasks) return tasks.error();
  for (const ProcessRow& p : tasks->processes()) set.comm[static_cast<uint32_t>(p.pid)] = p.comm;  // the latest
  if (auto ks = ReadKallsyms(db, run_id); ks.ok() && *ks) set.kallsyms = **ks;
  set.Normalize();
  return set;
}

Result<std::vector<int64_t>> CpuRuns(Db& db) {
  if (!data::HasTable(db, "cpu_sample")) return DbError(db, "the runs with CPU samples");
  std::vector<int64_t> out;
  SYSPGO_TRY(data::Visit(db, "", kCpuRunsSql, {}, [&](Stmt& st) { out.push_back(st.Int(0)); }));
  return out;
}

}  // namespace syspgo
