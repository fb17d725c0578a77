#!/usr/bin/env python3
"""pgo.py - `syspgo pgo` against instrumented PGO and today's perf-based tools.

Fetches Lua 5.4 and SQLite 3 with `apt-get source` into a work directory
(nothing vendored), builds each with clang-19 -O2 and the same profiling and
section flags for every variant (a relink alone moves timings, see
FORMATS.md), trains on bench/workloads/*_train.* and measures on the
different bench/workloads/*_eval.* workloads. Variants:

  base           the plain build (syspgo pgo's first stage)
  instr          instrumented PGO: -fprofile-generate, train, -fprofile-use
  sample         syspgo sample profile            (syspgo pgo; --sample-counts ip)
  sample-stacks  the same run's profile with --sample-counts stacks
  sample-ip-only the same run's profile with --sample-counts ip-only (no call
                 targets: what llvm-profgen --leading-ip-only writes)
  sample-cs      the same run's profile with --profile-kind cs (calling
                 contexts from the stacks, pre-inlined)
  sample+order   + symbol ordering file           (syspgo pgo)
  full           + BOLT with syspgo's fdata       (syspgo pgo)
  bolt-only      BOLT with syspgo's fdata on the plain build
  profgen        perf record + llvm-profgen --leading-ip-only, with the compile
                 flags syspgo's sample stage uses
  gperftools     an external profiler's pprof: gperftools' CPU profiler on the
                 training run, converted by `go tool pprof -proto`, made a
                 sample profile by `syspgo optimize --pprof` (what a fleet's
                 pprof backend would hand a release build; docs/fleet.md)
  gperftools-fastest
                 the same at whichever of gperftools' timer settings sampled
                 the training run fastest (measured first, --rate-runs rounds)
  gperftools-fleet
                 FLEET_RUNS gperftools profiles of the training run, as that
                 many hosts would record, summed by `go tool pprof -proto`
  sample-lowfreq syspgo's own profile at the rate gperftools sampled (its
                 CPU-time timer ticks at most at the kernel's HZ): tells a gap
                 between gperftools and sample that comes from fewer samples
                 from one that comes from the profile itself
  perf2bolt      perf record + perf2bolt -nl, BOLT on the plain build

Every variant is timed interleaved (--runs rounds, each round every variant
once, starting one further each round); medians, min-max and the ratio of
the baseline's median to each variant's median (speedup). Deterministic
counts come from cachegrind on a smaller input. Build and collection costs
are wall times of each step.

A sample profile is a sample of one training run: two runs of the same
training command give profiles that differ, and so do the builds made from
them. --profiles N trains syspgo, perf and gperftools N times each, builds each
profile (sample-runK, profgen-runK, gperftools-runK, gperftools-fastest-runK,
sample-lowfreq-runK; run 1 is the variant above), merges each gperftools-runK
with FLEET_RUNS - 1 further runs (gperftools-fleetK), BOLTs the plain build
with each run's samples (syspgo fdata and perf2bolt -nl), and reports the
spread of their cachegrind instruction counts, and of syspgo profiles that
merge three of the runs each (sample-mergedK, what syspgo pgo --train-runs 3
makes); "beats llvm-profgen", "beats perf2bolt" and "85% of the instrumented
saving" are judged on the medians of the single runs (one run's profile moves
SQLite's count by several percent either way, and BOLT's layout its I-cache
misses several-fold). Writes its section of bench/RESULTS.md.

usage: sudo bench/pgo.py [--runs 10] [--profiles 3] [--rate-runs 5] [--programs lua,sqlite] [--work DIR]
"""
import argparse
import concurrent.futures
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import benchlib as B

WORKLOADS = os.path.join(B.ROOT, "bench", "workloads")
BOLT = "/usr/lib/llvm-19/bin/llvm-bolt"
# Sampling frequency of every profiled training run, syspgo's and perf's
# alike: a few seconds of training at 3999 Hz give 15-20k samples.
SAMPLE_HZ = "3999"
PERF2BOLT = "/usr/lib/llvm-19/bin/perf2bolt"  # perf2bolt-19 runs as llvm-bolt (FORMATS.md)
LIBPROFILER = "/usr/lib/x86_64-linux-gnu/libprofiler.so.0"  # gperftools (scripts/setup.sh)
# The timer settings gperftools 2.10 reads (its profile-handler.cc): setitimer
# ITIMER_PROF by default; per-thread CLOCK_THREAD_CPUTIME_ID timers with
# CPUPROFILE_PER_THREAD_TIMERS; a wall-clock timer (ITIMER_REAL) with
# CPUPROFILE_REALTIME. It caps CPUPROFILE_FREQUENCY at 4000. A CPU-time
# timer expires only at the kernel's tick, so asking for more than HZ may
# give no more: the bench counts what each setting gives on the training run.
GPERF_SETTINGS = [{"CPUPROFILE_FREQUENCY": "1000"},
                  {"CPUPROFILE_FREQUENCY": SAMPLE_HZ},
                  {"CPUPROFILE_FREQUENCY": SAMPLE_HZ, "CPUPROFILE_PER_THREAD_TIMERS": "1"},
                  {"CPUPROFILE_FREQUENCY": SAMPLE_HZ, "CPUPROFILE_REALTIME": "1"}]
# What a fleet's hosts record: a CPU-time profile (a wall-clock timer samples
# a blocked thread as often as a running one), asking as much as syspgo does.
GPERF_CPU = {"CPUPROFILE_FREQUENCY": SAMPLE_HZ}
# Training runs of gperftools-fleet's merges: at the 250 Hz tick gperftools
# gets here, 16 runs hold about the samples of one syspgo run at 3999 Hz.
FLEET_RUNS = 16
# bolt-only and perf2bolt (both on the plain build): syspgo pgo's default there
BOLT_OPTS = ["-reorder-blocks=ext-tsp", "-reorder-functions=hfsort", "-dyno-stats"]
# What `syspgo pgo` adds to its training build ("base" here), with function
# sections and BOLT's relocations (pgo/pgo.h PgoStageNeeds): the variants
# built here without it all get these, so that only their profiles differ.
# syspgo pgo's own rebuilds carry only what their stage needs, and its
# "plain" build (the user's own) none.
PROFILING_FLAGS = ["-fno-omit-frame-pointer", "-mno-omit-leaf-frame-pointer", "-gline-tables-only",
                   "-fdebug-info-for-profiling", "-ffunction-sections", "-fuse-ld=lld", "-Wl,--emit-relocs"]
# What `syspgo pgo` adds with a sample profile (PgoCompileFlags), given to
# every sample-profile variant so that only the profile differs.
SAMPLE_USE_FLAGS = ["-fsample-profile-use-profi"]
VARIANTS = ["base", "instr", "sample", "sample-stacks", "sample-ip-only", "sample-cs", "sample+order", "full", "bolt-only",
            "profgen", "gperftools", "gperftools-fastest", "gperftools-fleet", "sample-lowfreq", "perf2bolt"]


def sh(cmd, cwd=None, env=None, what=None, capture=False):
    """Runs a shell command; exits the bench with its output if it fails."""
    p = subprocess.run(cmd, shell=isinstance(cmd, str), cwd=cwd, env=dict(os.environ, **(env or {})),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"bench: {what or 'command'} failed ({p.returncode}): "
                 f"{cmd if isinstance(cmd, str) else shlex.join(cmd)}\n{p.stdout[-3000:]}")
    return p.stdout if capture else None


def timed_step(costs, name, fn):
    t0 = time.monotonic()
    out = fn()
    costs[name] = time.monotonic() - t0
    return out


class Program:
    """One program: how to fetch, build and run it."""

    def __init__(self, name, work):
        self.name = name
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir, exist_ok=True)

    def instantiate(self, template, scale):
        """A workload file with {{N}} replaced (SQL) or as is (Lua)."""
        src = os.path.join(WORKLOADS, template)
        text = open(src).read().replace("{{N}}", str(scale))
        out = os.path.join(self.dir, f"{os.path.splitext(template)[0]}_{scale}{os.path.splitext(template)[1]}")
        open(out, "w").write(text)
        return out


class Lua(Program):
    binary = "lua"
    train_scale, eval_scale, cg_scale = 120, 3, 1

    def fetch(self, srcroot):
        self.src = glob.glob(os.path.join(srcroot, "lua5.4-*", "src"))[0]
        # Debian's luaconf.h includes a header its debian/rules generates.
        self.inc = os.path.join(self.dir, "include")
        os.makedirs(self.inc, exist_ok=True)
        with open(os.path.join(self.inc, "lua5.4-deb-multiarch.h"), "w") as f:
            f.write(f'#define DEB_HOST_MULTIARCH "{os.uname().machine}-linux-gnu"\n')

    def build_cmd(self, cc, extra=()):
        # Non-PIE: BOLT 19 cannot rewrite the computed-goto dispatch of
        # luaV_execute in a PIE (FORMATS.md). A fixed string-hash seed
        # (luaconf's luai_makeseed hook): Lua's default seed mixes in the
        # time and the addresses of a local and of lua_newstate, so every
        # build, and every run, hashed differently and cachegrind's
        # instruction counts moved by 2% between identical builds.
        srcs = sorted(f for f in glob.glob(os.path.join(self.src, "*.c")) if not f.endswith(("luac.c", "onelua.c")))
        # `cc` stays unquoted: "$CC" is for the shell of syspgo pgo's --build.
        return cc + " " + shlex.join(["-O2", "-std=gnu99", "-DLUA_COMPAT_5_3", "-DLUA_USE_LINUX", "-Dluai_makeseed(L)=0x2545f491u",
                                      "-I", self.inc, "-no-pie", *extra,
                           "-o", self.binary, *srcs, "-lm", "-ldl"])

    def cmd(self, binary, which, scale):
        return [binary, os.path.join(WORKLOADS, f"lua_{which}.lua"), str(scale)]


class Sqlite(Program):
    binary = "sqlite3"
    train_scale, eval_scale, cg_scale = 1000000, 200000, 20000

    def fetch(self, srcroot):
        # Debian ships the full tree; the amalgamation is made once, with
        # tclsh, and every variant compiles the same two files.
        top = glob.glob(os.path.join(srcroot, "sqlite3-3*"))[0]
        self.src = os.path.join(self.dir, "amalgamation")
        if not os.path.exists(os.path.join(self.src, "sqlite3.c")):
            os.makedirs(self.src, exist_ok=True)
            sh(f"{shlex.quote(top)}/configure --disable-tcl >/dev/null && make -j2 sqlite3.c shell.c", cwd=self.src,
               what="making the SQLite amalgamation (needs tclsh)")

    def build_cmd(self, cc, extra=()):
        return cc + " " + shlex.join(["-O2", "-DSQLITE_THREADSAFE=0", "-DSQLITE_OMIT_LOAD_EXTENSION", "-DSQLITE_DEFAULT_MEMSTATUS=0",
                           "-I", self.src, *extra, "-o", self.binary, os.path.join(self.src, "shell.c"),
                           os.path.join(self.src, "sqlite3.c"), "-lm"])

    def cmd(self, binary, which, scale):
        return [binary, ":memory:", ".read " + self.instantiate(f"sql_{which}.sql", scale)]


def fetch_sources(srcroot, packages):
    """`apt-get source` into srcroot of each package {name: glob of its
    unpacked tree} not unpacked there yet."""
    missing = [p for p, tree in packages.items() if not glob.glob(os.path.join(srcroot, tree))]
    if missing:
        p = subprocess.run(["apt-get", "source", *missing], cwd=srcroot, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"bench: apt-get source {' '.join(missing)} failed; enable deb-src with scripts/setup.sh:\n"
                     + p.stderr[-2000:])


def variant_build(prog, name, extra, costs):
    """A build outside `syspgo pgo`, with the same profiling flags."""
    d = os.path.join(prog.dir, name)
    os.makedirs(d, exist_ok=True)
    timed_step(costs, f"{name}: build", lambda: sh(prog.build_cmd("clang-19", PROFILING_FLAGS + list(extra)), cwd=d,
                                                   what=f"{prog.name} {name} build"))
    return os.path.join(d, prog.binary)


def bolt(binary, fdata, out, costs, step):
    log = out + ".log"
    timed_step(costs, step, lambda: open(log, "w").write(
        sh([BOLT, binary, "-o", out, "-data", fdata] + BOLT_OPTS, what="llvm-bolt", capture=True)))
    m = re.search(r"(\d+) out of (\d+) functions in the binary \(([0-9.]+)%\) have non-empty execution profile", open(log).read())
    return out, (int(m.group(1)) if m else None)


def profgen_profile(prog, pbase, data, pg, costs, tag):
    """perf record of the training run on pbase, then llvm-profgen: the profile path."""
    timed_step(costs, f"perf{tag}: training run under perf record", lambda: sh(
        ["perf", "record", "-e", "cpu-clock", "-F", SAMPLE_HZ, "--no-bpf-event", "-o", data, "--"] +
        prog.cmd(pbase, "train", prog.train_scale), what="perf record"))
    script = data + ".script"

    def to_script():
        text = sh(["perf", "script", "-i", data, "-F", "ip", "--show-mmap-events"], what="perf script", capture=True)
        with open(script, "w") as f:
            for line in text.splitlines():
                f.write(line + "\n" if "PERF_RECORD" in line else f" {line.strip()} 0x0/0x0/P/-/-/0\n")
    timed_step(costs, f"profgen{tag}: perf script", to_script)
    timed_step(costs, f"profgen{tag}: llvm-profgen", lambda: sh(
        ["llvm-profgen-19", f"--perfscript={script}", f"--binary={pbase}", f"--output={pg}", "--leading-ip-only",
         "--format=text"], what="llvm-profgen"))
    return pg


def gperftools_run(prog, pbase, raw, env):
    """The training run of pbase, under gperftools' CPU profiler with the
    settings env (writing raw), or plain if env is None. Returns (samples,
    CPU seconds): the interrupts the profiler says it recorded (it prints
    them at exit), and the run's own CPU time from wait4, which holds when
    runs go side by side."""
    e = dict(os.environ)
    if env is not None:
        e.update(env, CPUPROFILE=raw, LD_PRELOAD=LIBPROFILER)
    cmd = prog.cmd(pbase, "train", prog.train_scale)
    p = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = p.stdout.read()
    p.stdout.close()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"bench: gperftools training run failed ({p.returncode}): {shlex.join(cmd)}\n{out[-3000:]}")
    m = re.search(r"PROFILE: interrupts/evictions/bytes = (\d+)/", out)
    if env is not None and not m:
        sys.exit(f"bench: gperftools wrote no profile for {shlex.join(cmd)}:\n{out[-3000:]}")
    return (int(m.group(1)) if m else 0), ru.ru_utime + ru.ru_stime


def gperftools_env_str(env):
    return " ".join(f"{k}={v_}" for k, v_ in env.items())


def gperftools_rates(prog, pbase, d, runs):
    """How fast gperftools samples the training run under each of
    GPERF_SETTINGS: `runs` rounds, each the plain run then every setting
    once. Returns {setting: [(samples, CPU s)]}, the plain run's as "plain"."""
    out = {"plain": []}
    out.update({gperftools_env_str(e): [] for e in GPERF_SETTINGS})
    for r in range(runs):
        out["plain"].append(gperftools_run(prog, pbase, None, None))
        for e in GPERF_SETTINGS:
            out[gperftools_env_str(e)].append(gperftools_run(prog, pbase, os.path.join(d, "rate.cpuprofile"), e))
    return out


def fastest_setting(rates):
    """The setting of GPERF_SETTINGS with the most samples per CPU second (median)."""
    hz = lambda xs: B.med([s / c for s, c in xs])
    return max(GPERF_SETTINGS, key=lambda e: hz(rates[gperftools_env_str(e)]))


def pprof_profile(pbase, raws, stem, costs, step):
    """gperftools' profiles raws of pbase made one pprof by `go tool pprof
    -proto` (which reads the binary for the mappings, and sums the profiles
    when given several), then a sample profile by `syspgo optimize --pprof`.
    Returns the sample profile and the samples it was made of."""
    pb, prof = stem + ".pb.gz", stem + ".prof"
    timed_step(costs, f"{step}: go tool pprof -proto" + (f" of {len(raws)} profiles" if len(raws) > 1 else ""), lambda: sh(
        f"go tool pprof -proto {shlex.join([pbase] + raws)} > {shlex.quote(pb)}", what="go tool pprof -proto"))
    out = timed_step(costs, f"{step}: syspgo optimize --pprof", lambda: sh(
        [B.SYSPGO, "optimize", "--pprof", pb, "--binary", pbase, "--emit", "sample-profile", "-o", prof],
        what="syspgo optimize --pprof", capture=True))
    return prof, samples_of(out)


def samples_of(out):
    """The samples `syspgo optimize --binary` says it read (its message)."""
    m = re.search(r"(\d+) of (\d+) samples pass through", out)
    return int(m.group(2)) if m else 0


def gperftools_profile(prog, pbase, stem, env, costs, notes, step):
    """gperftools' CPU profiler on one training run of pbase with the
    settings env, made a sample profile (pprof_profile). Returns the profile,
    the raw profile (for the fleet's merges) and the rate it sampled at
    (samples per CPU second of the run)."""
    raw = stem + ".cpuprofile"
    samples, cpu = timed_step(costs, f"{step}: training run under gperftools' profiler ({gperftools_env_str(env)})",
                              lambda: gperftools_run(prog, pbase, raw, env))
    prof, _ = pprof_profile(pbase, [raw], stem, costs, step)
    rate = round(samples / cpu) if cpu > 0 else 0
    notes[f"{step} samples"] = f"{samples} in {cpu:.1f} CPU s ({rate} Hz)"
    return prof, raw, rate


def gperftools_fleet(prog, pbase, raws, d, costs, notes):
    """What a fleet's backend hands a release build: for each of the bench's
    gperftools runs, its profile and FLEET_RUNS - 1 more of the same command
    (as that many hosts would record) summed by one `go tool pprof -proto`,
    then `syspgo optimize --pprof`. The extra runs go os.cpu_count() at a
    time: gperftools' CPU-time timer counts each run's own CPU time, so its
    samples do not depend on what else runs. Returns the sample profiles."""
    os.makedirs(d, exist_ok=True)
    out, counts = [], []
    for k, first in enumerate(raws, 1):
        more = [os.path.join(d, f"fleet{k}-{j}.cpuprofile") for j in range(2, FLEET_RUNS + 1)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count()) as ex:
            timed_step(costs, f"gperftools-fleet{k}: {len(more)} more training runs, {os.cpu_count()} at a time",
                       lambda: list(ex.map(lambda raw: gperftools_run(prog, pbase, raw, GPERF_CPU), more)))
        prof, n = pprof_profile(pbase, [first] + more, os.path.join(d, f"fleet{k}"), costs, f"gperftools-fleet{k}")
        out.append(prof)
        counts.append(n)
    notes[f"gperftools-fleet samples, each merged profile of {FLEET_RUNS} runs"] = ", ".join(map(str, counts))
    return out


def lowfreq_profile(prog, pbase, d, hz, costs, tag):
    """syspgo's own profile of the training run at `hz`: the sample profile's path."""
    db = os.path.join(d, "lowfreq.db")
    for f in glob.glob(db + "*"):
        os.unlink(f)
    timed_step(costs, f"sample-lowfreq{tag}: training run under syspgo collect --freq {hz}", lambda: sh(
        [B.SYSPGO, "collect", "-o", db, "--probes", "cpu", "--freq", str(hz), "--"] +
        prog.cmd(pbase, "train", prog.train_scale), what="syspgo collect"))
    sp = os.path.join(d, "lowfreq.prof")
    timed_step(costs, f"sample-lowfreq{tag}: syspgo optimize", lambda: sh(
        [B.SYSPGO, "optimize", db, "--binary", pbase, "--emit", "sample-profile", "-o", sp], what="syspgo optimize"))
    return sp


MERGED = "sample, 3 runs merged"


def spread_builds(prog, v, a, costs, notes, fastest):
    """More training runs of each profiler, one build each: {"sample": [...], "profgen": [...],
    "bolt-only": [...], "perf2bolt": [...]} binaries, the bench's main variants first. BOLT's
    layout of one run's profile is a draw: the same tool's I1 misses on SQLite ranged
    44k-906k over five training runs (scratch test, 2026-11-23), so BOLT alone is compared over
    the runs as the sample profiles are."""
    out = {"sample": [v["sample"]], "sample-cs": [v["sample-cs"]], "profgen": [v["profgen"]], "gperftools": [v["gperftools"]],
           "gperftools-fastest": [v["gperftools-fastest"]], "sample-lowfreq": [v["sample-lowfreq"]],
           "bolt-only": [v["bolt-only"]], "perf2bolt": [v["perf2bolt"]]}
    pbase = os.path.join(prog.dir, "perf", prog.binary)
    dbs = [os.path.join(prog.dir, "pgo", "train", "train.db")]  # syspgo pgo's own training run
    for k in range(2, a.profiles + 1):
        d = os.path.join(prog.dir, f"spread{k}")
        os.makedirs(d, exist_ok=True)
        db = os.path.join(d, "train.db")
        for f in glob.glob(db + "*"):
            os.unlink(f)
        # The plain build (the copy perf records too) and the training command.
        timed_step(costs, f"sample-run{k}: training run under syspgo collect", lambda: sh(
            [B.SYSPGO, "collect", "-o", db, "--probes", "cpu", "--freq", SAMPLE_HZ, "--"] +
            prog.cmd(pbase, "train", prog.train_scale), what="syspgo collect"))
        sp = os.path.join(d, "sample.prof")
        prog.syspgo_samples.append(samples_of(timed_step(costs, f"sample-run{k}: syspgo optimize", lambda: sh(
            [B.SYSPGO, "optimize", db, "--binary", pbase, "--emit", "sample-profile", "-o", sp], what="syspgo optimize",
            capture=True))))
        out["sample"].append(variant_build(prog, f"sample-run{k}", [f"-fprofile-sample-use={sp}"] + SAMPLE_USE_FLAGS, costs))
        cp = os.path.join(d, "sample-cs.prof")
        timed_step(costs, f"sample-cs-run{k}: syspgo optimize --profile-kind cs", lambda: sh(
            [B.SYSPGO, "optimize", db, "--binary", pbase, "--emit", "sample-profile", "--profile-kind", "cs", "-o", cp],
            what="syspgo optimize --profile-kind cs"))
        out["sample-cs"].append(variant_build(prog, f"sample-cs-run{k}", [f"-fprofile-sample-use={cp}"] + SAMPLE_USE_FLAGS,
                                              costs))
        pg = profgen_profile(prog, pbase, os.path.join(d, "perf.data"), os.path.join(d, "profgen.prof"), costs, f"-run{k}")
        out["profgen"].append(variant_build(prog, f"profgen-run{k}", [f"-fprofile-sample-use={pg}"] + SAMPLE_USE_FLAGS, costs))
        gp, raw, hz = gperftools_profile(prog, pbase, os.path.join(d, "gperftools"), GPERF_CPU, costs, notes,
                                         f"gperftools-run{k}")
        out["gperftools"].append(variant_build(prog, f"gperftools-run{k}", [f"-fprofile-sample-use={gp}"] + SAMPLE_USE_FLAGS,
                                               costs))
        prog.gperftools_raws.append(raw)
        fp, _, _ = gperftools_profile(prog, pbase, os.path.join(d, "gperftools-fastest"), fastest, costs, notes,
                                      f"gperftools-fastest-run{k}")
        out["gperftools-fastest"].append(variant_build(prog, f"gperftools-fastest-run{k}",
                                                       [f"-fprofile-sample-use={fp}"] + SAMPLE_USE_FLAGS, costs))
        lp = lowfreq_profile(prog, pbase, d, hz or 250, costs, f"-run{k}")
        out["sample-lowfreq"].append(variant_build(prog, f"sample-lowfreq-run{k}",
                                                   [f"-fprofile-sample-use={lp}"] + SAMPLE_USE_FLAGS, costs))
        # BOLT alone on the plain build (pbase, the binary both runs profiled), from the same two runs.
        fd = os.path.join(d, "bolt-only.fdata")
        timed_step(costs, f"bolt-only-run{k}: syspgo optimize --emit fdata", lambda: sh(
            [B.SYSPGO, "optimize", db, "--binary", pbase, "--emit", "fdata", "-o", fd], what="syspgo optimize --emit fdata"))
        out["bolt-only"].append(bolt(pbase, fd, os.path.join(d, "bolt-only." + prog.binary), costs,
                                     f"bolt-only-run{k}: llvm-bolt")[0])
        pfd = os.path.join(d, "perf2bolt.fdata")
        timed_step(costs, f"perf2bolt-run{k}: perf2bolt -nl", lambda: sh(
            [PERF2BOLT, "-nl", "-p", os.path.join(d, "perf.data"), "-o", pfd, pbase], what="perf2bolt -nl"))
        out["perf2bolt"].append(bolt(pbase, pfd, os.path.join(d, "perf2bolt." + prog.binary), costs,
                                     f"perf2bolt-run{k}: llvm-bolt")[0])
        dbs.append(db)
    # A fleet's merge of gperftools' profiles, one beside each single run.
    out["gperftools-fleet"] = [variant_build(prog, f"gperftools-fleet{k}", [f"-fprofile-sample-use={fp}"] + SAMPLE_USE_FLAGS,
                                             costs)
                               for k, fp in enumerate(gperftools_fleet(prog, pbase, prog.gperftools_raws,
                                                                       os.path.join(prog.dir, "fleet"), costs, notes), 1)]
    v["gperftools-fleet"] = out["gperftools-fleet"][0]
    notes[f"syspgo samples, each training run at {SAMPLE_HZ} Hz"] = ", ".join(map(str, prog.syspgo_samples))
    # What syspgo pgo --train-runs 3 does with them: three runs merged into
    # one profile. Each window of three consecutive runs (wrapping), so that
    # every run is in as many merges as the others.
    n = len(dbs)
    if n >= 3:
        out[MERGED] = []
        for k in range(n if n > 3 else 1):
            group = [dbs[(k + j) % n] for j in range(3)]
            mp = os.path.join(prog.dir, f"merged{k + 1}.prof")
            timed_step(costs, f"sample-merged{k + 1}: syspgo merge", lambda: sh(
                [B.SYSPGO, "merge"] + group + ["--normalize", "--binary", pbase, "--emit", "sample-profile", "-o", mp],
                what="syspgo merge"))
            out[MERGED].append(variant_build(prog, f"sample-merged{k + 1}", [f"-fprofile-sample-use={mp}"] + SAMPLE_USE_FLAGS, costs))
    return out


def prepare(prog, a, timeit):
    """Builds every variant; returns ({variant: binary}, costs, notes)."""
    costs, notes, v = {}, {}, {}
    train = shlex.join(prog.cmd("./" + prog.binary, "train", prog.train_scale))
    evalc = shlex.join(prog.cmd("./" + prog.binary, "eval", prog.cg_scale))
    pgo_dir = os.path.join(prog.dir, "pgo")
    build_dir = os.path.join(prog.dir, "pgo-build")
    os.makedirs(build_dir, exist_ok=True)
    # syspgo pgo drives base, sample, sample+order and full; its --eval at a
    # small scale makes it keep each intermediate build (and checks that
    # every variant prints what the plain build prints).
    pgo = [B.SYSPGO, "pgo", "--build", prog.build_cmd("$CC"), "--binary", "./" + prog.binary, "--train", train,
           "--eval", evalc, "--runs", "1", "--dir", pgo_dir, "--freq", SAMPLE_HZ, "-q"]
    timed_step(costs, "syspgo pgo (all stages)", lambda: sh(pgo, cwd=build_dir, what=f"syspgo pgo on {prog.name}"))
    man = B.read_json(os.path.join(pgo_dir, "manifest.json"))
    for s in man["stages"]:
        costs[f"syspgo pgo: {s['name']}"] = s["seconds"]
        if s["name"] == "train":
            notes["syspgo training run, under collect (s)"] = s.get("train_seconds")
        if s["name"] == "order":
            notes["sample profile match"] = s.get("profile_match", {}).get("match_share")
        if s["name"] == "bolt":
            notes["BOLT functions with profile (syspgo, full)"] = s["bolt"].get("functions_with_profile")
    v["base"] = os.path.join(pgo_dir, "base", prog.binary)
    v["sample"] = os.path.join(pgo_dir, "sample", prog.binary)
    v["sample+order"] = os.path.join(pgo_dir, "order", prog.binary)
    v["full"] = os.path.join(pgo_dir, "bolt", prog.binary)

    # The same training run's sample profile made the other ways
    # (optimize --sample-counts and --profile-kind, docs/profiles.md): with
    # the time below calls too, without the call targets, with contexts.
    for name, how in [("sample-stacks", ["--sample-counts", "stacks"]), ("sample-ip-only", ["--sample-counts", "ip-only"]),
                      ("sample-cs", ["--profile-kind", "cs"])]:
        prof = os.path.join(prog.dir, name + ".prof")
        out = timed_step(costs, f"{name}: syspgo optimize {' '.join(how)}", lambda: sh(
            [B.SYSPGO, "optimize", os.path.join(pgo_dir, "train", "train.db"), "--binary", v["base"], "--emit",
             "sample-profile", *how, "-o", prof], what=f"syspgo optimize {' '.join(how)}", capture=True))
        prog.syspgo_samples = [samples_of(out)]
        v[name] = variant_build(prog, name, [f"-fprofile-sample-use={prof}"] + SAMPLE_USE_FLAGS, costs)

    # BOLT alone on the plain build, from the same training run.
    fd = os.path.join(prog.dir, "bolt-only.fdata")
    timed_step(costs, "bolt-only: syspgo optimize --emit fdata", lambda: sh(
        [B.SYSPGO, "optimize", os.path.join(pgo_dir, "train", "train.db"), "--binary", v["base"], "--emit", "fdata", "-o", fd],
        what="syspgo optimize --emit fdata"))
    v["bolt-only"], notes["BOLT functions with profile (syspgo, bolt-only)"] = bolt(
        v["base"], fd, os.path.join(prog.dir, "bolt-only." + prog.binary), costs, "bolt-only: llvm-bolt")

    # Instrumented PGO.
    raw = os.path.join(prog.dir, "instr-raw")
    shutil.rmtree(raw, ignore_errors=True)
    gen = variant_build(prog, "instr-gen", [f"-fprofile-generate={raw}"], costs)
    timed_step(costs, "instr: training run (instrumented)", lambda: sh(prog.cmd(gen, "train", prog.train_scale),
                                                                      what="instrumented training run"))
    prof = os.path.join(prog.dir, "instr.profdata")
    timed_step(costs, "instr: llvm-profdata merge", lambda: sh(["llvm-profdata-19", "merge", "-o", prof] +
                                                               glob.glob(os.path.join(raw, "*.profraw")), what="llvm-profdata merge"))
    v["instr"] = variant_build(prog, "instr", [f"-fprofile-use={prof}", "-Wno-profile-instr-unprofiled"], costs)

    # The tools a user has today: perf record on cpu-clock (no PMU here),
    # then llvm-profgen (IP samples given a dummy branch, FORMATS.md) and
    # perf2bolt -nl, on a copy of the plain build.
    pd = os.path.join(prog.dir, "perf")
    os.makedirs(pd, exist_ok=True)
    pbase = os.path.join(pd, prog.binary)
    shutil.copy2(v["base"], pbase)
    data = os.path.join(pd, "perf.data")
    pg = profgen_profile(prog, pbase, data, os.path.join(pd, "profgen.prof"), costs, "")
    v["profgen"] = variant_build(prog, "profgen", [f"-fprofile-sample-use={pg}"] + SAMPLE_USE_FLAGS, costs)
    # An external profiler's pprof on the same plain build (docs/fleet.md):
    # first how fast gperftools can sample it, then a profile with the
    # settings a fleet host would use and one with the fastest.
    rates = timed_step(costs, f"gperftools: sampling rates, {a.rate_runs} rounds of plain + {len(GPERF_SETTINGS)} settings",
                       lambda: gperftools_rates(prog, pbase, pd, a.rate_runs))
    fastest = fastest_setting(rates)
    gp, raw, hz = gperftools_profile(prog, pbase, os.path.join(pd, "gperftools"), GPERF_CPU, costs, notes, "gperftools")
    v["gperftools"] = variant_build(prog, "gperftools", [f"-fprofile-sample-use={gp}"] + SAMPLE_USE_FLAGS, costs)
    prog.gperftools_raws = [raw]
    fp, _, _ = gperftools_profile(prog, pbase, os.path.join(pd, "gperftools-fastest"), fastest, costs, notes,
                                  "gperftools-fastest")
    v["gperftools-fastest"] = variant_build(prog, "gperftools-fastest", [f"-fprofile-sample-use={fp}"] + SAMPLE_USE_FLAGS,
                                            costs)
    # syspgo at the rate gperftools sampled: what the sample count alone costs.
    lp = lowfreq_profile(prog, pbase, pd, hz or 250, costs, "")
    v["sample-lowfreq"] = variant_build(prog, "sample-lowfreq", [f"-fprofile-sample-use={lp}"] + SAMPLE_USE_FLAGS, costs)
    pfd = os.path.join(pd, "perf2bolt.fdata")
    timed_step(costs, "perf2bolt: perf2bolt -nl", lambda: sh([PERF2BOLT, "-nl", "-p", data, "-o", pfd, pbase],
                                                            what="perf2bolt -nl"))
    v["perf2bolt"], notes["BOLT functions with profile (perf2bolt)"] = bolt(
        pbase, pfd, os.path.join(pd, "perf2bolt." + prog.binary), costs, "perf2bolt: llvm-bolt")

    # Collection overhead during training: the plain build's training run
    # plain, under syspgo collect, under perf record; interleaved.
    over = {"plain": [], "syspgo collect --probes cpu": [], "perf record -e cpu-clock": []}
    cmd = prog.cmd(pbase, "train", prog.train_scale)
    for i in range(a.overhead_runs):
        over["plain"].append(B.timed(timeit, cmd, pd)[0])
        db = os.path.join(pd, f"ov{i}.db")
        over["syspgo collect --probes cpu"].append(B.timed(timeit, cmd, pd, prefix=[B.SYSPGO, "collect", "-o", db, "--probes", "cpu", "--freq", SAMPLE_HZ, "--"])[0])
        os.unlink(db)
        over["perf record -e cpu-clock"].append(B.timed(timeit, cmd, pd, prefix=[
            "perf", "record", "-q", "-e", "cpu-clock", "-F", SAMPLE_HZ, "--no-bpf-event", "-o", os.path.join(pd, "ov.data"), "--"])[0])
    spread = spread_builds(prog, v, a, costs, notes, fastest)
    return v, costs, notes, over, spread, rates, fastest


def measure(prog, v, a, timeit):
    names = [n for n in VARIANTS if n in v]
    times = {n: [] for n in names}
    outs = {}
    for r in range(a.runs):
        for k in range(len(names)):
            n = names[(k + r) % len(names)]
            times[n].append(B.timed(timeit, prog.cmd(v[n], "eval", prog.eval_scale), prog.dir)[0])
    for n in names:  # what each variant prints, against the plain build
        outs[n] = sh(prog.cmd(v[n], "eval", prog.cg_scale), what=f"{n} output", capture=True)
    counts = dict(zip(names, cachegrind_all(prog, [(v[n], n) for n in names])))
    return names, times, outs, counts


# libc's string routines that clang's PGOMemOPSizeOpt specializes by the
# sizes an instrumented profile's value counters saw (memcpy, memmove,
# memset, memcmp, bcmp), in any of glibc's ifunc variants.
MEMOP_RE = re.compile(r"^(__)?(mem(cpy|move|set|cmp)|bcmp)(_|$)")


def cachegrind(prog, binary, name):
    """(instructions, I1 misses, mispredicted branches, instructions in libc's
    mem* routines) of the evaluation run at cg_scale."""
    nodbg = binary + ".nodebug"
    # Valgrind 3.19 cannot read clang-19's DWARF 5; the code is the same without it.
    sh(["llvm-objcopy-19", "--strip-debug", binary, nodbg], what="llvm-objcopy --strip-debug")
    with tempfile.NamedTemporaryFile(prefix="cachegrind.", suffix=".out") as out:
        text = sh(["valgrind", "--tool=cachegrind", "--branch-sim=yes", "--cache-sim=yes",
                   f"--cachegrind-out-file={out.name}"] + prog.cmd(nodbg, "eval", prog.cg_scale),
                  what=f"cachegrind on {name}", capture=True)
        per_fn = sh(["cg_annotate", "--show=Ir", "--threshold=0", "--auto=no", out.name], what="cg_annotate", capture=True)
    get = lambda key: int(re.search(rf"{key}:\s+([\d,]+)", text).group(1).replace(",", ""))
    # Function rows are "Ir  file:function"; the binary's own have no file
    # (its DWARF was stripped), libc's name their source file.
    mem = 0
    for line in per_fn.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S+):(\S+)$", line)
        if m and m.group(2) != "???" and MEMOP_RE.match(m.group(3)):
            mem += int(m.group(1).replace(",", ""))
    return get(r"I\s+refs"), get(r"I1\s+misses"), get(r"Mispredicts"), mem


def cachegrind_all(prog, jobs):
    """cachegrind on each (binary, name) of jobs, os.cpu_count() at a time:
    its counts are the simulated run's, whatever else the machine runs."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count()) as ex:
        return list(ex.map(lambda j: cachegrind(prog, *j), jobs))


def report(prog, names, times, outs, counts, costs, notes, over, a, spread_counts, rates, fastest):
    base = B.med(times["base"])
    sp = {n: base / B.med(times[n]) for n in names}
    ci, c1, cm, cmem = counts["base"]
    rows = []
    for n in names:
        i, m1, mp, mem = counts[n]
        rows.append(f"| {n} | {B.fmt_range(times[n])} | {sp[n]:.3f}× | {i:,} ({i / ci:.3f}) | {mem:,} | {m1:,} ({m1 / c1:.2f}) | "
                    f"{mp:,} ({mp / cm:.3f}) | {'same' if outs[n] == outs['base'] else '**differs**'} |")
    gain = {n: sp[n] - 1 for n in names}
    gi = gain["instr"]

    def verdict(ok):
        return "met" if ok else "**not met**"
    targets = [
        f"- syspgo full pipeline ({gain['full'] * 100:+.1f}%) at least matches instrumented PGO ({gi * 100:+.1f}%): {verdict(gain['full'] >= gi)}",
        f"- syspgo sample profile alone ({gain['sample'] * 100:+.1f}%) reaches 85% of the instrumented gain "
        f"({0.85 * gi * 100:+.1f}%): {verdict(gi > 0 and gain['sample'] >= 0.85 * gi)}",
        f"- syspgo sample profile beats perf + llvm-profgen ({gain['profgen'] * 100:+.1f}%): {verdict(gain['sample'] > gain['profgen'])}",
        f"- for comparison, not a target: the profile of gperftools' pprof through `syspgo optimize --pprof` "
        f"({gain['gperftools'] * 100:+.1f}%; at its fastest setting {gain['gperftools-fastest'] * 100:+.1f}%; "
        f"{FLEET_RUNS} runs merged {gain['gperftools-fleet'] * 100:+.1f}%)",
        f"- the same with --sample-counts stacks ({gain['sample-stacks'] * 100:+.1f}%): 85% of instrumented "
        f"{verdict(gi > 0 and gain['sample-stacks'] >= 0.85 * gi)}, beats llvm-profgen {verdict(gain['sample-stacks'] > gain['profgen'])}",
        f"- without call targets, --sample-counts ip-only ({gain['sample-ip-only'] * 100:+.1f}%): 85% of instrumented "
        f"{verdict(gi > 0 and gain['sample-ip-only'] >= 0.85 * gi)}, beats llvm-profgen {verdict(gain['sample-ip-only'] > gain['profgen'])}",
        f"- syspgo BOLT alone beats perf2bolt -nl + BOLT ({gain['bolt-only'] * 100:+.1f}% vs {gain['perf2bolt'] * 100:+.1f}%): "
        f"{verdict(gain['bolt-only'] > gain['perf2bolt'])}",
    ]
    # The same targets on the deterministic counts: the share of the plain
    # build's instructions each variant saves.
    save = {n: 1 - counts[n][0] / ci for n in names}
    si = save["instr"]
    # Each training run's profile, as a share saved; medians decide.
    runs_saved = {t: [1 - c[0] / ci for c in cs] for t, cs in spread_counts.items()}
    mb, m2 = B.med(runs_saved["bolt-only"]), B.med(runs_saved["perf2bolt"])
    run_med = lambda t, i: B.med([c[i] for c in spread_counts[t]])
    run_range = lambda t, i: f"{min(c[i] for c in spread_counts[t]):,}–{max(c[i] for c in spread_counts[t]):,}"
    ms, mp, mg = B.med(runs_saved["sample"]), B.med(runs_saved["profgen"]), B.med(runs_saved["gperftools"])
    mc = B.med(runs_saved["sample-cs"])
    ml = B.med(runs_saved["sample-lowfreq"])
    mf, mm = B.med(runs_saved["gperftools-fastest"]), B.med(runs_saved["gperftools-fleet"])
    # The same without libc's mem* routines: what instrumentation gains there
    # comes from its value profiles (call sizes), which sample profiles lack.
    rest = lambda c: 1 - (c[0] - c[3]) / (ci - cmem)
    ri, rs = rest(counts["instr"]), B.med([rest(c) for c in spread_counts["sample"]])
    spread_rows = "\n".join(
        f"| {t} | " + ", ".join(f"{x * 100:.1f}%" for x in xs) + f" | {B.med(xs) * 100:.1f}% | "
        f"{min(xs) * 100:.1f}–{max(xs) * 100:.1f}% |" for t, xs in runs_saved.items())
    targets_cg = [
        f"- full pipeline ({save['full'] * 100:.1f}% fewer) matches instrumented PGO ({si * 100:.1f}% fewer): "
        f"{verdict(save['full'] >= si)}",
        f"- sample profile alone, median over {a.profiles} training runs ({ms * 100:.1f}%; the first run alone: "
        f"{save['sample'] * 100:.1f}%) reaches 85% of instrumented's saving ({0.85 * si * 100:.1f}%): "
        f"{verdict(si > 0 and ms >= 0.85 * si)}",
        f"- sample profile beats perf + llvm-profgen, medians over {a.profiles} training runs each ({ms * 100:.1f}% vs "
        f"{mp * 100:.1f}%; the first runs alone: {save['sample'] * 100:.1f}% vs {save['profgen'] * 100:.1f}%): {verdict(ms > mp)}",
        f"- an external profiler's pprof (gperftools' CPU profiler, `go tool pprof -proto`, `syspgo optimize --pprof`), "
        f"medians over {a.profiles} profiles each, beside syspgo's own profile ({ms * 100:.1f}%) and perf + llvm-profgen "
        f"({mp * 100:.1f}%): one training run with the CPU-time timer a fleet's hosts use (`{gperftools_env_str(GPERF_CPU)}`, "
        f"which ticks at the kernel's HZ; gperftools) {mg * 100:.1f}% (the first run alone: {save['gperftools'] * 100:.1f}%); "
        f"one run at gperftools' fastest setting (`{gperftools_env_str(fastest)}`; gperftools-fastest) {mf * 100:.1f}%; "
        f"{FLEET_RUNS} runs of the first kind summed by `go tool pprof -proto`, as a fleet's backend sums its hosts' "
        f"(gperftools-fleet) {mm * 100:.1f}%. The fleet's merge within 1 point of syspgo's own "
        f"{verdict(abs(mm - ms) <= 0.01)}, beats llvm-profgen {verdict(mm > mp)}; the fastest setting's one run within "
        f"1 point of syspgo's own {verdict(abs(mf - ms) <= 0.01)}; syspgo's own profile at the rate the CPU-time timer "
        f"sampled (sample-lowfreq, median {ml * 100:.1f}%) says how much of one run's gap is the sample count: within 1 "
        f"point of gperftools' {verdict(abs(mg - ml) <= 0.01)}",
        f"- for context, not a target: instrumented PGO also specializes calls of memcpy, memset and memcmp by the "
        f"sizes its value profiles counted (clang's PGOMemOPSizeOpt), which a sample profile cannot carry. Instructions "
        f"in libc's mem* routines: base {cmem:,}, instr {counts['instr'][3]:,}, sample {counts['sample'][3]:,}. Without "
        f"them, the sample profile's median saves {rs * 100:.1f}% of the rest against instr's {ri * 100:.1f}% "
        f"({rs / ri * 100 if ri > 0 else 0:.0f}% of it)",
        f"- for comparison: --sample-counts stacks {save['sample-stacks'] * 100:.1f}%, --sample-counts ip-only "
        f"{save['sample-ip-only'] * 100:.1f}% (no call targets)",
        f"- calling contexts from the stacks, pre-inlined (`--profile-kind cs`), median over {a.profiles} training runs "
        f"({mc * 100:.1f}%; the first run alone: {save['sample-cs'] * 100:.1f}%) against the flat profile of the same "
        f"runs ({ms * 100:.1f}%): {'helps' if mc > ms else 'does not help'}; 85% of instrumented's saving "
        f"{verdict(si > 0 and mc >= 0.85 * si)}",
        f"- BOLT alone beats perf2bolt -nl + BOLT, medians over {a.profiles} training runs each ({mb * 100:.1f}% vs "
        f"{m2 * 100:.1f}%; the first runs alone: {save['bolt-only'] * 100:.1f}% vs {save['perf2bolt'] * 100:.1f}%): "
        f"{verdict(mb > m2)}. Over the same runs, mispredicted branches (medians) {run_med('bolt-only', 2):,.0f} vs "
        f"{run_med('perf2bolt', 2):,.0f}; I1 misses {run_med('bolt-only', 1):,.0f} vs {run_med('perf2bolt', 1):,.0f}, "
        f"ranging {run_range('bolt-only', 1)} and {run_range('perf2bolt', 1)}: which hot code shares I-cache sets "
        "changes from one profile to the next, so one build's wall time says little about either tool",
    ]
    # Samples per CPU second of each run: gperftools' count against the
    # run's CPU time, its own overhead included.
    rate_rows = "\n".join(
        f"| {'plain (no profiler)' if k == 'plain' else '`' + k + '`'} | "
        + ("—" if k == "plain" else f"{B.med([x[0] for x in xs]):,.0f} ({min(x[0] for x in xs):,}–{max(x[0] for x in xs):,})")
        + f" | {B.med([x[1] for x in xs]):.2f} s | "
        + ("—" if k == "plain" else f"{B.med([x[0] / x[1] for x in xs]):,.0f} Hz ({min(x[0] / x[1] for x in xs):,.0f}–"
                                    f"{max(x[0] / x[1] for x in xs):,.0f})")
        + f" | {(B.med([x[1] for x in xs]) / B.med([x[1] for x in rates['plain']]) - 1) * 100:+.1f}% |"
        for k, xs in rates.items())
    cost_rows = "\n".join(f"| {k} | {v_:.1f} s |" for k, v_ in costs.items())
    ob = B.med(over["plain"])
    over_rows = "\n".join(f"| {k} | {B.fmt_range(xs)} | {(B.med(xs) / ob - 1) * 100:+.1f}% |" for k, xs in over.items())
    note_rows = "\n".join(f"- {k}: {v_ if not isinstance(v_, float) else round(v_, 3)}" for k, v_ in notes.items())
    return (f"### {prog.name}\n\n"
            f"Evaluation: `{shlex.join(prog.cmd(prog.binary, 'eval', prog.eval_scale))}`, training: "
            f"`{shlex.join(prog.cmd(prog.binary, 'train', prog.train_scale))}`; cachegrind on scale {prog.cg_scale}.\n\n"
            "| variant | eval wall, median (min–max) | speedup | instructions (÷ base) | of them in libc mem* | I1 misses (÷ base) | "
            "mispredicted branches (÷ base) | output |\n|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n\nTargets (from the medians above):\n\n" + "\n".join(targets) +
            "\n\nThe same targets on cachegrind's instruction counts (deterministic; the machine's wall times "
            "are not):\n\n" + "\n".join(targets_cg) +
            f"\n\nInstructions saved by the profile of each training run ({a.profiles} runs of each profiler; the first is "
            "the variant in the table above), and by syspgo's profiles of three of those runs merged (`syspgo merge "
            "--normalize`, what `syspgo pgo --train-runs 3` makes; each window of three consecutive runs); bolt-only and "
            "perf2bolt: BOLT on the plain build from each run's samples:\n\n"
            "| profiler | each profile | median | range |\n|---|---|---|---|\n" + spread_rows +
            f"\n\ngperftools' sampling rate on the training run ({a.rate_runs} rounds, each the plain run then every "
            "setting once; samples as gperftools counts them at exit, over the run's CPU time, the profiler's own "
            f"included). The fastest median, `{gperftools_env_str(fastest)}`, made gperftools-fastest:\n\n"
            "| gperftools setting | samples, median (min–max) | CPU, median | samples per CPU second, median (min–max) | "
            "CPU vs plain |\n|---|---|---|---|---|\n" + rate_rows +
            "\n\nBuild and profiling steps, wall time:\n\n| step | wall |\n|---|---|\n" + cost_rows +
            f"\n\nCollection overhead on the training run ({a.overhead_runs} interleaved runs):\n\n"
            "| training run | wall, median (min–max) | vs plain |\n|---|---|---|\n" + over_rows +
            "\n\nProfile figures:\n\n" + note_rows + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--overhead-runs", type=int, default=5)
    ap.add_argument("--profiles", type=int, default=3, help="training runs per profiler for the spread (>= 1)")
    ap.add_argument("--rate-runs", type=int, default=5, help="rounds of gperftools' sampling-rate measurement (>= 5)")
    ap.add_argument("--programs", default=DEFAULT_PROGRAMS)
    ap.add_argument("--work", default=None, help="work directory (default: a new one under /var/tmp)")
    a = ap.parse_args()
    if a.runs < 10:
        raise SystemExit("bench: at least 10 runs per variant")
    if a.overhead_runs < 3:
        raise SystemExit("bench: at least 3 overhead runs")
    if a.rate_runs < 5:
        raise SystemExit("bench: at least 5 rounds of gperftools' sampling rates, for a median")
    if a.profiles < 1:
        raise SystemExit("bench: --profiles is at least 1 (the main variants' training runs)")
    work = a.work or tempfile.mkdtemp(prefix="syspgo-bench-pgo-", dir="/var/tmp")
    os.makedirs(work, exist_ok=True)
    timeit = B.build_timeit(work)
    srcroot = os.path.join(work, "src")
    os.makedirs(srcroot, exist_ok=True)
    fetch_sources(srcroot, {"lua5.4": "lua5.4-*", "sqlite3": "sqlite3-3*"})
    progs = {"lua": Lua, "sqlite": Sqlite}
    body = ("Variants: base (plain build, clang-19 -O2 with the flags profiling needs: frame pointers, "
            "`-gline-tables-only -fdebug-info-for-profiling -ffunction-sections`, lld, `--emit-relocs`, the same for all); "
            "instr (`-fprofile-generate`/`-fprofile-use`); sample, sample+order, full (+ BOLT): the stages of `syspgo pgo`; "
            "sample-stacks and sample-ip-only (the same training run's profile with `--sample-counts stacks` and "
            "`ip-only`); sample-cs (the same with `--profile-kind cs`: calling contexts, pre-inlined); sample-profile variants "
            f"(sample, sample-stacks, sample-ip-only, sample-cs, profgen, the gperftools ones, sample-lowfreq, and the later stages) also get "
            f"`{' '.join(SAMPLE_USE_FLAGS)}`; "
            "bolt-only (syspgo fdata on base); profgen (`perf record -e cpu-clock` + `llvm-profgen --leading-ip-only`); "
            "gperftools (gperftools' CPU profiler on the same training command, `go tool pprof -proto`, "
            f"`syspgo optimize --pprof`: an external profiler's pprof, as a fleet's backend would give it; "
            f"`{gperftools_env_str(GPERF_CPU)}`, its CPU-time timer); gperftools-fastest (the same at the setting that "
            f"sampled fastest, below); gperftools-fleet ({FLEET_RUNS} such runs of gperftools summed by one "
            "`go tool pprof -proto BINARY a.prof b.prof ...`, as a fleet's hosts would give them, then "
            "`syspgo optimize --pprof`); "
            "sample-lowfreq (syspgo's own profile of the training command at the rate gperftools sampled); "
            "perf2bolt (`perf2bolt -nl` + the same BOLT options). Speedup = base median ÷ variant median; "
            f"{a.runs} interleaved runs each. Sources: `apt-get source lua5.4 sqlite3` (Debian bookworm). "
            f"BOLT options of bolt-only and perf2bolt (plain build): `{' '.join(BOLT_OPTS)}`; full uses syspgo "
            "pgo's own, which after the sample stage reorder functions only (`-reorder-blocks=none`).\n\n")
    for name in a.programs.split(","):
        prog = progs[name](name, work)
        prog.fetch(srcroot)
        print(f"bench: {name}: building the variants", file=sys.stderr)
        v, costs, notes, over, spread, rates, fastest = prepare(prog, a, timeit)
        print(f"bench: {name}: timing", file=sys.stderr)
        names, times, outs, counts = measure(prog, v, a, timeit)
        print(f"bench: {name}: cachegrind on every training run's profile", file=sys.stderr)
        # The first build of a tool the table above has is counted already.
        jobs = [(tool, b, f"{tool} {k + 1}") for tool, bins in spread.items() for k, b in enumerate(bins)
                if k > 0 or tool not in counts]
        spread_counts = {tool: [counts[tool]] if tool in counts else [] for tool in spread}
        for (tool, _, _), c in zip(jobs, cachegrind_all(prog, [(b, n) for _, b, n in jobs])):
            spread_counts[tool].append(c)
        section = report(prog, names, times, outs, counts, costs, notes, over, a, spread_counts, rates, fastest)
        print(section)
        body += section + "\n"
    # A run of some of the programs gets a section of its own, so that it
    # does not replace the figures of the others.
    name = "pgo" if a.programs == DEFAULT_PROGRAMS else f"pgo ({a.programs})"
    B.write_section(name, f"sudo bench/pgo.py --runs {a.runs} --profiles {a.profiles} --rate-runs {a.rate_runs} "
                    f"--programs {a.programs}", body)


DEFAULT_PROGRAMS = "lua,sqlite"


if __name__ == "__main__":
    main()
