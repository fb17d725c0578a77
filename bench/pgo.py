#!/usr/bin/env python3
"""pgo.py - `syspgo pgo`, the main job, on real Debian programs.

Fetches the programs with `apt-get source` into a work directory (nothing
vendored) and builds each with clang-19 by its own compiler command:
SQLite 3, Lua 5.4, zstd (a compressor) and gawk (a text processor). Each
trains on one input and is evaluated on another (bench/workloads/*_train.*
and *_eval.*; zstd compresses Debian's gawk sources to train, SQLite's to
evaluate; gawk runs its scripts over Lua's and zstd's C sources, then
SQLite's). Variants, side by side in one run:

  plain         the user's build: the program's flags, no profiling flags.
                Every ratio is against it, and against base as well
  syspgo-plain  syspgo pgo's build of the same command (should equal plain)
  base          syspgo pgo's profiling build (frame pointers, profiling
                debug info, function sections, --emit-relocs)
  instr         instrumented PGO on the user's flags: -fprofile-generate,
                the same training run, -fprofile-use
  instr-nomemop the same profile built with -mllvm -disable-memop-opt: what
                instrumented PGO saves without the value profiles a sample
                profile cannot carry (memcpy/memset/memcmp sizes)
  sample, order, bolt
                syspgo pgo's stages; the one it chose (deciding on
                cachegrind's instructions) is marked final
  sample-probe  syspgo pgo's probe leg (--profile-kind auto, its default):
                its own training of a build with pseudo-probes and the
                rebuild with that probe-keyed profile, a candidate beside
                sample; which kind it kept, and why, is said

Instructions come from cachegrind on `strip -g` copies (valgrind 3.19
cannot read clang-19's DWARF 5) and decide the verdicts; wall and CPU time
from --runs interleaved rounds, reported as the ratio of medians with a
paired bootstrap interval (optimize/pgo_eval's method), "no significant
difference" where it crosses 1. For SQLite and Lua (--sweep) the sample
stage is rebuilt from profiles taken at 250 Hz to 10 kHz, of one training
run (three of them one by one, for the spread) and of several merged
(--sweep-runs): where the saving stops growing with the samples. Writes
its section of bench/RESULTS.md.

usage: sudo bench/pgo.py [--runs 10] [--programs sqlite,lua,zstd,gawk] [--sweep sqlite,lua] [--sweep-runs 1,3]
                         [--work DIR]

With --tools it compares instead syspgo's profiles with today's perf-based
tools and an external profiler on Lua and SQLite (the "pgo" sections),
all built with the profiling flags of syspgo pgo's training build:

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

usage: sudo bench/pgo.py --tools [--runs 10] [--profiles 3] [--rate-runs 5] [--programs lua,sqlite] [--work DIR]
"""
import argparse
import concurrent.futures
import fcntl
import glob
import hashlib
import os
import random
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
    # errors="replace": a compressor's output is bytes, read for the tools' messages around it.
    p = subprocess.run(cmd, shell=isinstance(cmd, str), cwd=cwd, env=dict(os.environ, **(env or {})),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, encoding="utf-8", errors="replace")
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


def corpus(out, trees, exts, size):
    """The first `size` bytes of the files under `trees` whose names end in
    one of `exts` ("" for every file), concatenated in sorted path order:
    a fixed input made of Debian's sources, written once to `out`."""
    if not os.path.exists(out):
        files = sorted(os.path.join(dp, f) for t in trees for dp, _, fs in os.walk(t) for f in fs
                       if f.endswith(exts) and not os.path.islink(os.path.join(dp, f)))
        data = bytearray()
        for f in files:
            if len(data) >= size:
                break
            data += open(f, "rb").read()
        if len(data) < size:
            sys.exit(f"bench: {', '.join(trees)} hold only {len(data)} bytes of {exts}, not {size}")
        with open(out + ".tmp", "wb") as f:
            f.write(data[:size])
        os.rename(out + ".tmp", out)
    return out


class Zstd(Program):
    """zstd's command-line compressor (Debian source libzstd), compressing
    the Debian sources of gawk (training) and of SQLite (evaluation)."""
    binary = "zstd"
    train_scale, eval_scale, cg_scale = 16 << 20, 12 << 20, 3 << 20

    def fetch(self, srcroot):
        self.src = glob.glob(os.path.join(srcroot, "libzstd-*"))[0]
        self.inputs = {"train": glob.glob(os.path.join(srcroot, "gawk-*[0-9]"))[0],
                       "eval": glob.glob(os.path.join(srcroot, "sqlite3-3*[0-9]"))[0]}

    def build_cmd(self, cc, extra=()):
        # zstd's own Makefile flags (-O3, no legacy formats, its xxhash
        # namespace), single-threaded (the Makefile's default without
        # pthread), as one compiler call like the other programs.
        lib = os.path.join(self.src, "lib")
        srcs = [f for d in ("common", "compress", "decompress", "dictBuilder")
                for f in sorted(glob.glob(os.path.join(lib, d, "*.c")))]
        srcs += [os.path.join(lib, "decompress", "huf_decompress_amd64.S")]
        srcs += sorted(glob.glob(os.path.join(self.src, "programs", "*.c")))
        return cc + " " + shlex.join(["-O3", "-DZSTD_LEGACY_SUPPORT=0", "-DXXH_NAMESPACE=ZSTD_", "-I", lib,
                                      "-I", os.path.join(lib, "common"), "-I", os.path.join(self.src, "programs"),
                                      *extra, "-o", self.binary, *srcs])

    def cmd(self, binary, which, scale):
        data = corpus(os.path.join(self.dir, f"{which}_{scale}.bin"), [self.inputs[which]], "", scale)
        return [binary, "-q", "-c", "-6", data]


class Gawk(Program):
    """GNU awk (Debian source gawk): bench/workloads/gawk_train.awk over the
    C sources of Lua and zstd, gawk_eval.awk over SQLite's."""
    binary = "gawk"
    train_scale, eval_scale, cg_scale = 6 << 20, 2 << 20, 300 << 10
    CORE = ["array", "awkgram", "builtin", "cint_array", "command", "debug", "eval", "ext", "field", "floatcomp",
            "gawkapi", "gawkmisc", "int_array", "io", "main", "mpfr", "msg", "node", "profile", "re", "replace",
            "str_array", "symbol", "version"]
    SUPPORT = ["dfa", "getopt", "getopt1", "localeinfo", "random", "regex", "pma", "malloc/dynarray_at_failure",
               "malloc/dynarray_emplace_enlarge", "malloc/dynarray_finalize", "malloc/dynarray_resize",
               "malloc/dynarray_resize_clear"]

    def fetch(self, srcroot):
        # configure once (its config.h); every variant compiles the same files.
        self.src = glob.glob(os.path.join(srcroot, "gawk-*[0-9]"))[0]
        self.conf = os.path.join(self.dir, "configured")
        if not os.path.exists(os.path.join(self.conf, "config.h")):
            os.makedirs(self.conf, exist_ok=True)
            sh(f"CC=clang-19 {shlex.quote(self.src)}/configure --disable-nls --without-readline --without-mpfr "
               "--disable-extensions >/dev/null", cwd=self.conf, what="configuring gawk")
        self.inputs = {"train": [glob.glob(os.path.join(srcroot, p))[0] for p in ("lua5.4-*[0-9]", "libzstd-*[0-9]")],
                       "eval": [os.path.join(glob.glob(os.path.join(srcroot, "sqlite3-3*[0-9]"))[0], "src")]}

    def build_cmd(self, cc, extra=()):
        # gawk's Makefile flags: -O2 -DNDEBUG and its DEFS.
        srcs = [os.path.join(self.src, f + ".c") for f in self.CORE]
        srcs += [os.path.join(self.src, "support", f + ".c") for f in self.SUPPORT]
        return cc + " " + shlex.join(["-O2", "-DNDEBUG", "-DHAVE_CONFIG_H", "-DGAWK", '-DDEFPATH=".:/usr/share/awk"',
                                      '-DDEFLIBPATH="/usr/lib/x86_64-linux-gnu/gawk"', '-DSHLIBEXT="so"',
                                      '-DLOCALEDIR="/usr/share/locale"', "-I", self.conf, "-I", self.src,
                                      "-I", os.path.join(self.src, "support"), *extra, "-o", self.binary, *srcs, "-lm"])

    def cmd(self, binary, which, scale):
        data = corpus(os.path.join(self.dir, f"{which}_{scale}.c"), self.inputs[which], (".c", ".h"), scale)
        return [binary, "-f", os.path.join(WORKLOADS, f"gawk_{which}.awk"), data]


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
    """The samples `syspgo optimize --binary` says it read, or `syspgo merge` wrote (their messages)."""
    m = (re.search(r"(\d+) of (\d+) samples pass through", out)
         or re.search(r"from \d+ runs, ((\d+)) weighted samples", out))
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
        mem = memop_instructions(out.name)
    get = lambda key: int(re.search(rf"{key}:\s+([\d,]+)", text).group(1).replace(",", ""))
    return get(r"I\s+refs"), get(r"I1\s+misses"), get(r"Mispredicts"), mem


def memop_instructions(cg_out):
    """Instructions a cachegrind output file counts in libc's mem* routines."""
    per_fn = sh(["cg_annotate", "--show=Ir", "--threshold=0", "--auto=no", cg_out], what="cg_annotate", capture=True)
    # Function rows are "Ir  file:function"; the binary's own have no file
    # (its DWARF was stripped), libc's name their source file.
    mem = 0
    for line in per_fn.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S+):(\S+)$", line)
        if m and m.group(2) != "???" and MEMOP_RE.match(m.group(3)):
            mem += int(m.group(1).replace(",", ""))
    return mem


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


# ---------------------------------------------------------------------------
# The main job: `syspgo pgo` as a user runs it, against the user's own build.

# optimize/pgo_eval.h: the bootstrap's resamples and seed, and the smallest
# gain that counts even when the interval is sure of it.
RESAMPLES, SEED, MIN_EFFECT = 2000, 0x53595350474f, 0.005
# The saving against the number of samples: syspgo collect's rate, and how
# many training runs a profile merges (syspgo pgo --freq, --train-runs).
SWEEP_HZ = [250, 1000, 4000, 10000]
# Profiles of one training run built one by one, for the spread, at SPREAD_HZ
# (the others build the first run's alone).
SPREAD_RUNS, SPREAD_HZ = 3, 4000
MAIN_VARIANTS = ["plain", "syspgo-plain", "base", "instr", "instr-nomemop", "sample", "sample-probe", "order", "bolt"]
# The stages of `syspgo pgo` whose binaries the bench measures, by their
# names in its manifest; "syspgo-plain" is its build of the user's command.
PGO_STAGES = {"syspgo-plain": "plain", "base": "build", "sample": "sample", "sample-probe": "sample-probe",
              "order": "order", "bolt": "bolt"}


def paired_speedup(ref, cand, seed=SEED):
    """optimize/pgo_eval.cc's PairedSpeedup: (ref median ÷ cand median, and
    the 2.5th and 97.5th percentiles of that ratio over rounds resampled
    whole, so that a slow moment of the machine stays on both builds of its
    round). Above 1: cand is faster."""
    n = min(len(ref), len(cand))
    rng = random.Random(seed)
    ratios = []
    for _ in range(RESAMPLES):
        idx = [rng.randrange(n) for _ in range(n)]
        m = B.med([cand[i] for i in idx])
        if m > 0:
            ratios.append(B.med([ref[i] for i in idx]) / m)
    ratios.sort()

    def q(p):
        pos = p * (len(ratios) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(ratios) - 1)
        return ratios[lo] + (ratios[hi] - ratios[lo]) * (pos - lo)
    return B.med(ref[:n]) / B.med(cand[:n]), q(0.025), q(0.975)


def verdict_of(iv):
    _, lo, hi = iv
    return "faster" if lo > 1 + MIN_EFFECT else "slower" if hi < 1 - MIN_EFFECT else "none"


def describe(iv):
    """As optimize/pgo_eval.cc's DescribeSpeedup: never a bare ratio."""
    r, lo, hi = iv
    ci = f"95% CI {lo:.3f}–{hi:.3f}"
    v = verdict_of(iv)
    return f"no significant difference ({ci})" if v == "none" else f"{v} {r:.3f}× ({ci})"


def plain_build(prog, d, extra, costs, step):
    """The program built by its own command with clang-19 and `extra`: with
    none, the user's own build (no profiling flags)."""
    os.makedirs(d, exist_ok=True)
    timed_step(costs, step, lambda: sh(prog.build_cmd("clang-19", list(extra)), cwd=d, what=f"{prog.name}: {step}"))
    return os.path.join(d, prog.binary)


def pgo_command(prog, pgo_dir, *options):
    """`syspgo pgo` on prog's build, training and evaluation, deciding on
    cachegrind's instruction counts at cg_scale (one round: they do not
    vary), with `options` added."""
    return [B.SYSPGO, "pgo", "--build", prog.build_cmd("$CC"), "--binary", "./" + prog.binary,
            "--train", shlex.join(prog.cmd("./" + prog.binary, "train", prog.train_scale)),
            "--eval", shlex.join(prog.cmd("./" + prog.binary, "eval", prog.cg_scale)),
            "--eval-metric", "instructions", "--runs", "1", "--max-runs", "1", *options, "--dir", pgo_dir, "-q"]


def run_syspgo_pgo(prog, d, costs, reuse):
    """`syspgo pgo` with its defaults, deciding on cachegrind's instruction
    counts of the evaluation at cg_scale (one round: they do not vary).
    Returns (its command, manifest, summary, what it printed). With `reuse`,
    an earlier run's directory is read instead (to work on the report)."""
    pgo_dir, build_dir = os.path.join(d, "pgo"), os.path.join(d, "pgo-build")
    reuse = prog.reused = reuse and os.path.exists(os.path.join(pgo_dir, "said.txt"))
    if not reuse:
        shutil.rmtree(pgo_dir, ignore_errors=True)
    os.makedirs(build_dir, exist_ok=True)
    cmd = pgo_command(prog, pgo_dir)
    if reuse:
        said = open(os.path.join(pgo_dir, "said.txt")).read()
    else:
        # A failed stage is a finding, not the end of the bench: the stages
        # before it are measured, and the failure is reported.
        p = timed_step(costs, "syspgo pgo (every stage, its evaluation included)", lambda: subprocess.run(
            cmd, cwd=build_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, encoding="utf-8", errors="replace"))
        said = p.stdout + (f"(exit status {p.returncode})\n" if p.returncode else "")
        if not os.path.exists(os.path.join(pgo_dir, "manifest.json")):
            sys.exit(f"bench: syspgo pgo on {prog.name} wrote no manifest:\n{said[-3000:]}")
        open(os.path.join(pgo_dir, "said.txt"), "w").write(said)
    man = B.read_json(os.path.join(pgo_dir, "manifest.json"))
    for s in man["stages"]:
        costs[f"syspgo pgo: {s['name']}"] = s["seconds"]
    return cmd, man, B.read_json(os.path.join(pgo_dir, "summary.json")), said


def stage_of(man, name):
    return next((s for s in man["stages"] if s["name"] == name), {})


def instructions(prog, binary, which="eval", scale=None, memops=False):
    """Instructions cachegrind counts in one run of the evaluation at
    cg_scale, on a copy without debug sections (valgrind 3.19 cannot read
    clang-19's DWARF 5). llvm-objcopy, as `strip -g`: GNU strip's copy of a
    BOLTed binary crashes in the dynamic loader. With memops, (instructions,
    those in libc's mem* routines)."""
    nodbg = binary + ".nodebug"
    sh(["llvm-objcopy-19", "--strip-debug", binary, nodbg], what="llvm-objcopy --strip-debug")
    with tempfile.NamedTemporaryFile(prefix="cachegrind.", suffix=".out") as out:
        text = sh(["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out.name}"] +
                  prog.cmd(nodbg, which, scale or prog.cg_scale), what=f"cachegrind on {binary}", capture=True)
        mem = memop_instructions(out.name) if memops else None
    ir = int(re.search(r"I\s+refs:\s+([\d,]+)", text).group(1).replace(",", ""))
    return (ir, mem) if memops else ir


def instructions_all(prog, binaries, memops=False):
    """instructions() of each binary, os.cpu_count() at a time: the counts
    are the simulated run's, whatever else the machine runs."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count()) as ex:
        return list(ex.map(lambda b: instructions(prog, b, memops=memops), binaries))


def output_digest(prog, binary):
    """What the evaluation at cg_scale prints, as a digest (a compressor's output is bytes)."""
    p = subprocess.run(prog.cmd(binary, "eval", prog.cg_scale), capture_output=True)
    if p.returncode != 0:
        sys.exit(f"bench: {binary} failed the evaluation ({p.returncode}): {p.stderr[-2000:]!r}")
    return hashlib.sha256(p.stdout).hexdigest()


def wall_rounds(prog, v, runs, timeit):
    """`runs` rounds, each every variant once, starting one further each
    round: {variant: ([wall s], [CPU s])}, paired by round."""
    names = list(v)
    out = {n: ([], []) for n in names}
    for r in range(runs):
        for k in range(len(names)):
            n = names[(k + r) % len(names)]
            wall, user, syst, _, _ = B.timed(timeit, prog.cmd(v[n], "eval", prog.eval_scale), prog.dir)
            out[n][0].append(wall / 1e9)
            out[n][1].append((user + syst) / 1e9)
    return out


def instr_pgo(prog, d, costs):
    """Instrumented PGO on the user's own flags: -fprofile-generate, the same
    training run, -fprofile-use."""
    raw = os.path.join(d, "instr-raw")
    shutil.rmtree(raw, ignore_errors=True)
    gen = plain_build(prog, os.path.join(d, "instr-gen"), [f"-fprofile-generate={raw}"], costs,
                      "instr: instrumented build")
    timed_step(costs, "instr: training run (instrumented)", lambda: sh(
        prog.cmd(gen, "train", prog.train_scale), what="instrumented training run"))
    prof = os.path.join(d, "instr.profdata")
    timed_step(costs, "instr: llvm-profdata merge", lambda: sh(
        ["llvm-profdata-19", "merge", "-o", prof] + glob.glob(os.path.join(raw, "*.profraw")),
        what="llvm-profdata merge"))
    use = [f"-fprofile-use={prof}", "-Wno-profile-instr-unprofiled"]
    return (plain_build(prog, os.path.join(d, "instr"), use, costs, "instr: build with the profile"),
            plain_build(prog, os.path.join(d, "instr-nomemop"), use + ["-mllvm", "-disable-memop-opt"], costs,
                        "instr-nomemop: the same without the memop specialization"))


def sample_stage_flags(man):
    """What syspgo pgo's sample stage added to the build, its profile left out."""
    s = stage_of(man, "sample")
    return [f for f in s["compile_flags"] + s["link_flags"] if not f.startswith("-fprofile-sample-use=")]


def sweep(prog, a, man, costs):
    """The sample stage rebuilt from profiles of more or fewer samples. At
    each of SWEEP_HZ, training runs of syspgo pgo's profiling build under
    syspgo collect; the profile of the first run alone (syspgo optimize; of
    each of the first SPREAD_RUNS at SPREAD_HZ), and of the first n runs merged for each n > 1 of
    --sweep-runs (syspgo merge --normalize, what --train-runs n does); each
    built with the sample stage's flags. Returns {(hz, n): [(binary, samples)]}."""
    base = stage_of(man, PGO_STAGES["base"])["binary"]
    flags = sample_stage_flags(man)
    d = os.path.join(prog.dir, "sweep")
    os.makedirs(d, exist_ok=True)
    most = max(a.sweep_runs + ([SPREAD_RUNS] if 1 in a.sweep_runs else []))
    rows = {}
    for hz in SWEEP_HZ:
        dbs = [os.path.join(d, f"{hz}hz-run{k + 1}.db") for k in range(most)]
        for k, db in enumerate(dbs):
            for f in glob.glob(db + "*"):
                os.unlink(f)
            timed_step(costs, f"sweep {hz} Hz: training run {k + 1} under syspgo collect", lambda: sh(
                [B.SYSPGO, "collect", "-o", db, "--probes", "cpu", "--freq", str(hz), "--"] +
                prog.cmd(base, "train", prog.train_scale), what="syspgo collect"))
        for n in a.sweep_runs:
            singles = SPREAD_RUNS if hz == SPREAD_HZ else 1
            for j, group in enumerate([[db] for db in dbs[:singles]] if n == 1 else [dbs[:n]]):
                tag = f"{hz}hz-{n}runs-{j + 1}"
                prof = os.path.join(d, tag + ".prof")
                how = ["optimize", group[0]] if n == 1 else ["merge", *group, "--normalize"]
                said = timed_step(costs, f"sweep {tag}: syspgo {how[0]}", lambda: sh(
                    [B.SYSPGO, *how, "--binary", base, "--emit", "sample-profile", "-o", prof],
                    what=f"syspgo {how[0]}", capture=True))
                b = plain_build(prog, os.path.join(d, tag), flags + [f"-fprofile-sample-use={prof}"], costs,
                                f"sweep {tag}: build")
                rows.setdefault((hz, n), []).append((b, samples_of(said)))
    return rows


def main_job(prog, a, timeit):
    """Every variant of the main job for one program, measured; returns the
    report's section and its row of the summary."""
    costs = {}
    d = os.path.join(prog.dir, "main")
    print(f"bench: {prog.name}: syspgo pgo", file=sys.stderr)
    cmd, man, summ, said = run_syspgo_pgo(prog, d, costs, a.reuse)
    v = {"plain": plain_build(prog, os.path.join(d, "plain"), [], costs, "plain: the user's build")}
    v.update({n: stage_of(man, s)["binary"] for n, s in PGO_STAGES.items()
              if stage_of(man, s).get("status") == "ok" and stage_of(man, s).get("binary")})
    v["instr"], v["instr-nomemop"] = instr_pgo(prog, d, costs)
    v = {n: v[n] for n in MAIN_VARIANTS if v.get(n)}
    rows = {}
    if prog.name in a.sweep and "sample" in v:
        print(f"bench: {prog.name}: the sample count sweep", file=sys.stderr)
        rows = sweep(prog, a, man, costs)
    print(f"bench: {prog.name}: timing, {a.runs} rounds", file=sys.stderr)
    times = wall_rounds(prog, v, a.runs, timeit)
    outs = {n: output_digest(prog, b) for n, b in v.items()}
    print(f"bench: {prog.name}: cachegrind", file=sys.stderr)
    swept = [b for pts in rows.values() for b, _ in pts]
    got = instructions_all(prog, list(v.values()), memops=True)
    counts, memops = {n: g[0] for n, g in zip(v, got)}, {n: g[1] for n, g in zip(v, got)}
    by_bin = dict(zip(swept, instructions_all(prog, swept)))
    sweep_counts = {k: [(by_bin[b], s) for b, s in pts] for k, pts in rows.items()}
    return report_main(prog, cmd, man, summ, said, counts, memops, times, outs, sweep_counts, costs)


def pct(x):
    return f"{x * 100:.1f}%"


def saved(counts, ref, n):
    """The share of ref's instructions variant n does not execute."""
    return 1 - counts[n] / counts[ref]


def sweep_section(counts, sweep_counts):
    """The sweep's table and where its saving stops growing."""
    if not sweep_counts:
        return ""
    lines, meds = [], []
    for (hz, n), pts in sorted(sweep_counts.items()):
        sv = [1 - c / counts["plain"] for c, _ in pts]
        sb = [1 - c / counts["base"] for c, _ in pts]
        samples = B.med([s for _, s in pts])
        meds.append((samples, B.med(sv), hz, n))
        each = ", ".join(f"{x * 100:.1f}%" for x in sv)
        lines.append(f"| {hz} Hz | {n} | {', '.join(f'{s:,}' for _, s in pts)} | {each} | {pct(B.med(sv))} | "
                     f"{min(sv) * 100:.1f}–{max(sv) * 100:.1f}% ({(max(sv) - min(sv)) * 100:.1f} points) | "
                     f"{pct(B.med(sb))} |")
    best = max(m for _, m, _, _ in meds)
    # The fewest samples whose median saving is within half a point of the best.
    first = min((m for m in meds if m[1] >= best - 0.005), key=lambda m: m[0])
    return ("\n\nThe sample stage's saving against the number of samples (syspgo collect's rate, and how many "
            "training runs of the profiling build each profile merges: one run's profile alone (at "
            f"{SPREAD_HZ} Hz {SPREAD_RUNS} runs one by one, for the spread); n runs with "
            "`syspgo merge --normalize`, what "
            "`syspgo pgo --train-runs n` does), each profile built with the sample stage's flags, instructions "
            "saved against the user's build:\n\n"
            "| rate | training runs | samples in the binary (each profile) | saved, each profile | median | range | "
            "saved vs the profiling build, median |\n|---|---|---|---|---|---|---|\n" + "\n".join(lines) +
            f"\n\nThe best median saving is {pct(best)}; the first within half a point of it takes "
            f"{first[0]:,} samples ({first[2]} Hz, {first[3]} run{'s' if first[3] > 1 else ''}).")


def report_main(prog, cmd, man, summ, said, counts, memops, times, outs, sweep_counts, costs):
    final = summ.get("final_stage") or "?"
    fv = next((n for n, s in PGO_STAGES.items() if s == final), None)
    wall = {n: paired_speedup(times["plain"][0], times[n][0]) for n in times}
    wall_b = {n: paired_speedup(times["base"][0], times[n][0]) for n in times}
    cpu = {n: paired_speedup(times["plain"][1], times[n][1]) for n in times}
    rows = []
    ref = lambda n, r, iv: "(the reference)" if n == r else describe(iv)
    for n in times:
        mark = " (**final**)" if n == fv else ""
        rows.append(f"| {n}{mark} | {counts[n]:,} | {counts[n] / counts['plain']:.3f} | "
                    f"{counts[n] / counts['base']:.3f} | "
                    f"{B.fmt_range(times[n][0], 1e-3)} | {ref(n, 'plain', wall[n])} | {ref(n, 'base', wall_b[n])} | "
                    f"{ref(n, 'plain', cpu[n])} | {'same' if outs[n] == outs['plain'] else '**differs**'} |")
    si = saved(counts, "plain", "instr")
    lines = [f"- instrumented PGO saves {pct(si)} of the user's build's instructions; wall {describe(wall['instr'])}"]
    for n in [n for n in ("sample", "sample-probe", "order", "bolt") if n in times]:
        # A share of a saving within noise of nothing says nothing.
        share = pct(saved(counts, "plain", n) / si) if si > MIN_EFFECT else "—"
        lines.append(f"- stage {n}: saves {pct(saved(counts, 'plain', n))} against the user's build, "
                     f"{pct(saved(counts, 'base', n))} against the profiling build ({share} of instrumented's saving); "
                     f"wall {describe(wall[n])}")
    if fv in times:
        vs_instr = paired_speedup(times["instr"][0], times[fv][0])
        fs = saved(counts, "plain", fv)
        lines.append(f"- the final binary ({final}) saves {pct(fs)}; no more instructions than the user's build "
                     f"(within {pct(MIN_EFFECT)}): {'met' if fs >= -MIN_EFFECT else '**not met**'}; wall against the user's build {describe(wall[fv])}: "
                     f"never slower {'met' if verdict_of(wall[fv]) != 'slower' else '**not met**'}; at least "
                     f"instrumented's saving ({pct(si)}) {'met' if fs >= si else '**not met**'}; wall against "
                     f"instrumented {describe(vs_instr)}")
    else:
        lines.append(f"- syspgo pgo's final stage is {final!r}, none of the measured ones")
    kind = summ.get("profile_kind", {})
    # The sample stage of the kind pgo chose is the one it ships.
    sv = "sample-probe" if kind.get("chosen") == "probe" and "sample-probe" in times else "sample"
    if sv in times:
        ss, sn = saved(counts, "plain", sv), saved(counts, "plain", "instr-nomemop")
        lines.append(f"- the sample stage ({sv}, the kind pgo chose) reaches 85% of instrumented's saving "
                     f"({pct(0.85 * si)}): {'met' if si > 0 and ss >= 0.85 * si else '**not met**'}")
        # The memop specialization needs value profiles (the sizes each call
        # of memcpy, memset, memcmp passed), which the sample profile format
        # has no record for: instrumented PGO built without it, from the same
        # profile, is what a sample profile could reach.
        lines.append(f"- for context, not a target: instrumented PGO without its memop specialization "
                     f"(`-mllvm -disable-memop-opt`, the same profile) saves {pct(sn)}, so the specialization is "
                     f"worth {(si - sn) * 100:.2f} points; the sample stage is "
                     f"{pct(ss / sn) if sn > MIN_EFFECT else '—'} of that saving. Instructions in libc's mem* routines: "
                     f"plain {memops['plain']:,}, {sv} {memops[sv]:,}, instr {memops['instr']:,}, "
                     f"instr-nomemop {memops['instr-nomemop']:,} (instr's specialized copies run in its callers)")
    # A probe leg that made no stage is a finding: said where its figures would be.
    lines.append(f"- profile kind (`--profile-kind {kind.get('requested', '?')}`): syspgo pgo kept "
                 f"**{kind.get('chosen', '?')}**: {kind.get('reason') or '—'}")
    train = stage_of(man, "train")
    quality = [f"{q.get('line', '')} ({q.get('freq_hz') or 'collect default'} Hz, {q.get('train_runs')} run(s))"
               for q in man.get("profile_quality", [])]
    # Its warnings and last line, each with the lines it is wrapped onto.
    told, keep = [], False
    for l in said.splitlines():
        keep = bool(re.search(r"warning|done|failed|exit status", l)) or (keep and l.startswith(" "))
        if keep:
            told.append(l)
    ev = summ.get("eval", {})
    decided = "; ".join(f"{n} {e.get('verdict')} ({e.get('speedup', 0):.3f}×)" for n, e in ev.items() if n != "plain")
    cost_rows = "\n".join(f"| {k} | {x:.1f} s |" for k, x in costs.items())
    section = (f"### {prog.name}\n\n`syspgo pgo` as a user runs it (its defaults; its own decision on cachegrind's "
               f"instructions):\n\n```\n{shlex.join(['syspgo'] + cmd[1:])}\n```\n\n"
               f"Wall time: `{shlex.join(prog.cmd(prog.binary, 'eval', prog.eval_scale))}`; cachegrind: the same at "
               f"scale {prog.cg_scale}; training: `{shlex.join(prog.cmd(prog.binary, 'train', prog.train_scale))}`.\n\n"
               "| variant | instructions | ÷ plain | ÷ profiling build | wall, median (min–max) | wall vs plain | "
               "wall vs profiling build | CPU vs plain | output |\n|---|---|---|---|---|---|---|---|---|\n" +
               "\n".join(rows) +
               "\n\nVerdicts (instructions decide; wall times are paired rounds with a bootstrap interval of the ratio "
               "of medians):\n\n" + "\n".join(lines) +
               f"\n\nsyspgo pgo chose **{final}**: {man.get('final_reason') or '—'}. Its own evaluation: {decided or '—'}. "
               f"Its training: {train.get('runs_collected', '?')} run(s), {train.get('train_seconds', 0):.1f} s; "
               f"its profile: {' / '.join(quality) or '—'}." +
               ("\nIt printed:\n\n```\n" + "\n".join(told) + "\n```" if told else "") +
               sweep_section(counts, sweep_counts) +
               "\n\nBuild and profiling steps, wall time:\n\n| step | wall |\n|---|---|\n" + cost_rows + "\n")
    sample = pct(saved(counts, "plain", "sample")) if "sample" in times else "—"
    summary = (f"| {prog.name} | {pct(si)} | {sample} | {final} | {pct(saved(counts, 'plain', fv)) if fv in times else '—'} | "
               f"{describe(wall['instr'])} | {describe(wall[fv]) if fv in times else '—'} |")
    return section, summary


PROGRAMS = {"sqlite": Sqlite, "lua": Lua, "zstd": Zstd, "gawk": Gawk}
# Debian source packages and the trees they unpack to.
SOURCES = {"lua5.4": "lua5.4-*", "sqlite3": "sqlite3-3*", "libzstd": "libzstd-*", "gawk": "gawk-*[0-9]"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10, help="interleaved rounds of wall time (>= 5; --tools: >= 10)")
    ap.add_argument("--programs", default=None, help=f"of {','.join(PROGRAMS)} (default: all; --tools: lua,sqlite)")
    ap.add_argument("--sweep", default="sqlite,lua", help="programs of the sample-count sweep ('' for none)")
    ap.add_argument("--sweep-runs", default="1,3", help="training runs merged into each sweep profile, e.g. 1,3,10")
    ap.add_argument("--work", default=None, help="work directory, kept for reuse (default: a new one under /var/tmp)")
    ap.add_argument("--reuse", action="store_true",
                    help="measure the syspgo pgo runs an earlier bench left in --work instead of running it again")
    ap.add_argument("--tools", action="store_true",
                    help="instead: syspgo's profiles against perf, llvm-profgen, gperftools and perf2bolt")
    ap.add_argument("--overhead-runs", type=int, default=5, help="--tools: rounds of the collection overhead")
    ap.add_argument("--profiles", type=int, default=3, help="--tools: training runs per profiler for the spread (>= 1)")
    ap.add_argument("--rate-runs", type=int, default=5, help="--tools: rounds of gperftools' sampling rates (>= 5)")
    a = ap.parse_args()
    if a.runs < 5:
        raise SystemExit("bench: at least 5 rounds, for a median")
    a.programs = a.programs or (TOOLS_PROGRAMS if a.tools else ",".join(PROGRAMS))
    a.sweep = [p for p in a.sweep.split(",") if p]
    a.sweep_runs = sorted({int(n) for n in a.sweep_runs.split(",")})
    work = a.work or tempfile.mkdtemp(prefix="syspgo-bench-pgo-", dir="/var/tmp")
    os.makedirs(work, exist_ok=True)
    timeit = B.build_timeit(work)
    srcroot = os.path.join(work, "src")
    os.makedirs(srcroot, exist_ok=True)
    B.fetch_sources(srcroot, SOURCES)
    (tools_bench if a.tools else main_bench)(a, work, timeit, srcroot)


def main_bench(a, work, timeit, srcroot):
    """Each program's section is written as soon as it is measured: one
    program's figures do not wait for the others'."""
    for name in a.programs.split(","):
        prog = PROGRAMS[name](name, work)
        prog.fetch(srcroot)
        section, row = main_job(prog, a, timeit)
        print(section)
        body = (MAIN_INTRO.format(runs=a.runs, sources=" ".join(SOURCES)) +
                "| program | instr saves | sample stage saves | syspgo pgo's final | final saves | instr wall vs plain | "
                "final wall vs plain |\n|---|---|---|---|---|---|---|\n" + row + "\n\n" + section)
        command = (f"sudo bench/pgo.py --runs {a.runs} --programs {name} --sweep {shlex.quote(','.join(a.sweep))} "
                   f"--sweep-runs {','.join(map(str, a.sweep_runs))}" + (" --reuse" if prog.reused else ""))
        if prog.reused:
            body += ("\nWith --reuse: syspgo pgo's run is the one an earlier bench made in the same work directory "
                     "(its manifest's); every other figure is this run's.\n")
        # Benches of other programs may run beside this one: one rewrite of RESULTS.md at a time.
        with open("/tmp/syspgo-bench-results.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            B.write_section(f"pgo: the main job ({name})", command, body)


MAIN_INTRO = (
    "Every program is built by its own compiler command with clang-19: **plain** is the user's build "
    "(the program's own flags, no profiling flags) and the reference; **syspgo-plain** is syspgo pgo's build of "
    "the same command; **base** is syspgo pgo's profiling build (frame pointers, profiling debug info, function "
    "sections, lld, `--emit-relocs`); **instr** is instrumented PGO on the user's flags "
    "(`-fprofile-generate`, the same training run, `-fprofile-use`) and **instr-nomemop** the same profile built "
    "with `-mllvm -disable-memop-opt` (no memcpy/memset/memcmp specialization by the sizes its value profiles "
    "counted: what a sample profile, which has no values, could reach); **sample**, **order**, **bolt** are "
    "syspgo pgo's stages, **sample-probe** its probe leg's (`--profile-kind auto`, its default: its own training "
    "of a build with pseudo-probes and a rebuild with the probe-keyed profile, beside sample), and the one it "
    "chose is marked final. Instructions: cachegrind on copies without debug "
    "sections, one run (the count does not vary). Wall and CPU time: {runs} interleaved rounds, each every variant "
    "once, starting one further each round; a ratio is the reference's median over the variant's (above 1: "
    "faster), with the 2.5th–97.5th percentiles of 2000 bootstrap resamples of whole rounds; within 0.5% of 1 or "
    "an interval crossing it is \"no significant difference\". The machine is shared and loaded: the verdicts "
    "are the instruction counts'. Each program trains on one input and is evaluated on another. Sources: "
    "`apt-get source {sources}` (Debian bookworm).\n\n")


def tools_bench(a, work, timeit, srcroot):
    if a.runs < 10:
        raise SystemExit("bench: at least 10 runs per variant")
    if a.overhead_runs < 3:
        raise SystemExit("bench: at least 3 overhead runs")
    if a.rate_runs < 5:
        raise SystemExit("bench: at least 5 rounds of gperftools' sampling rates, for a median")
    if a.profiles < 1:
        raise SystemExit("bench: --profiles is at least 1 (the main variants' training runs)")

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
        prog = PROGRAMS[name](name, work)
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
    name = "pgo" if a.programs == TOOLS_PROGRAMS else f"pgo ({a.programs})"
    B.write_section(name, f"sudo bench/pgo.py --tools --runs {a.runs} --profiles {a.profiles} --rate-runs {a.rate_runs} "
                    f"--programs {a.programs}", body)


TOOLS_PROGRAMS = "lua,sqlite"


if __name__ == "__main__":
    main()
