"""benchlib.py - shared pieces of syspgo's benchmarks.

Every figure in bench/RESULTS.md comes from a script here: the script
measures variants interleaved (A B A B ...), reports medians of at least 5
runs with min-max, and rewrites its own section of RESULTS.md between
markers, naming the command that produced it.
"""
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("SYSPGO_BUILD", os.path.join(ROOT, "build"))
SYSPGO = os.path.join(BUILD, "cli", "syspgo")
SYSPGO_PREFETCH = os.path.join(BUILD, "cli", "syspgo-prefetch")
RESULTS = os.path.join(ROOT, "bench", "RESULTS.md")


def require(tool, package, why):
    """Exits with what to install when a comparison tool is missing."""
    if subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True).returncode != 0:
        sys.exit(f"bench: {tool} is not installed; it is {why}: apt-get install {package}")


def fetch_sources(srcroot, packages):
    """`apt-get source` into srcroot of each package {name: glob of its
    unpacked tree} not unpacked there yet."""
    missing = [p for p, tree in packages.items() if not glob.glob(os.path.join(srcroot, tree))]
    if missing:
        p = subprocess.run(["apt-get", "source", *missing], cwd=srcroot, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"bench: apt-get source {' '.join(missing)} failed; enable deb-src with scripts/setup.sh:\n"
                     + p.stderr[-2000:])


def drop_caches():
    """Writes back dirty pages, then empties the page cache of the machine (root)."""
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def work_dir(name, runs, least=5):
    """Checks there are enough runs for a median; returns a new directory
    under /var/tmp (a real disk) for the bench's files."""
    if runs < least:
        raise SystemExit(f"bench: at least {least} runs, for a median")
    return tempfile.mkdtemp(prefix=f"syspgo-{name}-", dir="/var/tmp")


def build_c(workdir, name):
    """Compiles bench/NAME.c into workdir; returns the program's path."""
    out = os.path.join(workdir, name)
    subprocess.run(["cc", "-O2", "-pthread", "-o", out, os.path.join(ROOT, "bench", name + ".c")], check=True)
    return out


def build_timeit(workdir):
    return build_c(workdir, "timeit")


def build_floor(work, ask=False, per_syscall=False, timed=False):
    """bench/floor_syscalls: its BPF object and the loader that runs a
    command with it attached; returns the prefix that does so. The floor's
    programs, on sys_enter and sys_exit of syspgo's own kind (tp_btf),
    return at once; with ask, once they have asked whether the running
    task is recorded, as syspgo's do (-DFLOOR_ASK); with per_syscall, they
    sit on the per-syscall tracepoints of the calls syspgo's fileio group
    reads instead (-DFLOOR_PER_SYSCALL); with timed, they time every call
    (-DFLOOR_TIME: the clock at entry and at exit)."""
    flags = ((["-DFLOOR_ASK"] if ask else []) + (["-DFLOOR_PER_SYSCALL"] if per_syscall else []) +
             (["-DFLOOR_TIME"] if timed else []))
    obj = os.path.join(work, "floor_syscalls" + "".join(f.lower()[7:] for f in flags) + ".bpf.o")
    loader = os.path.join(work, "floor_syscalls")
    if not os.path.exists(obj):
        subprocess.run(["clang-19", "-O2", "-g", "-target", "bpf", "-I", os.path.join(BUILD, "bpfgen"), "-c",
                        os.path.join(ROOT, "bench", "floor_syscalls.bpf.c"), "-o", obj] + flags, check=True)
    if not os.path.exists(loader):
        subprocess.run(["cc", "-O2", "-o", loader, os.path.join(ROOT, "bench", "floor_syscalls.c"), "-lbpf"],
                       check=True)
    return [loader, obj, "--"]


def timed(timeit, cmd, workdir, prefix=None, env=None):
    """Runs cmd under timeit (optionally under prefix, e.g. syspgo collect);
    returns (command wall_ns, user_ns, sys_ns, outer wall_ns, outer rusage)."""
    out = os.path.join(workdir, "timeit.out")
    e = dict(os.environ, TIMEIT_OUT=out, **(env or {}))
    full = (prefix or []) + [timeit] + cmd
    before = os.times()
    t0 = time.monotonic_ns()
    p = subprocess.run(full, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    t1 = time.monotonic_ns()
    after = os.times()
    if p.returncode != 0:
        sys.exit(f"bench: {' '.join(full)} failed ({p.returncode}): {p.stderr[-2000:]}")
    wall, user, syst, _ = (int(x) for x in open(out).read().split())
    outer_cpu = ((after.children_user - before.children_user) + (after.children_system - before.children_system)) * 1e9
    return wall, user, syst, t1 - t0, outer_cpu


def run_measured(argv, cwd=None, watch=None, capture=False):
    """Runs argv to its end and exits the bench, naming it, if it fails.
    Returns (wall ns, wait4's rusage of argv and the children it waited
    for, its stdout as bytes if `capture` else None, its stderr as text).
    Both outputs go to temporary files, not pipes: a command that wrote
    more than a pipe holds would block while the bench waited for it.
    `watch`, if given, is started with the pid (.start(pid)) once the
    command runs and stopped (.stop()) once it has ended: something that
    samples the process meanwhile."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic_ns()
        p = subprocess.Popen(argv, cwd=cwd, stdout=out if capture else subprocess.DEVNULL, stderr=err)
        if watch:
            watch.start(p.pid)
        _, status, ru = os.wait4(p.pid, 0)
        t1 = time.monotonic_ns()
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait again
        if watch:
            watch.stop()
        out.seek(0)
        err.seek(0)
        stdout, stderr = (out.read() if capture else None), err.read().decode(errors="replace")
    if p.returncode != 0:
        sys.exit(f"bench: {' '.join(argv)} failed ({p.returncode}): {stderr[-1500:]}")
    return t1 - t0, ru, stdout, stderr


def build_baseline(rev, work):
    """syspgo at git revision rev, built like this tree's build; returns its binary.
    SYSPGO_BASELINE_BUILD names a build of rev made before, to reuse."""
    kept = os.environ.get("SYSPGO_BASELINE_BUILD")  # a build of rev from an earlier bench, reused
    if kept:
        print(f"bench: syspgo at {rev} from {kept} (SYSPGO_BASELINE_BUILD)", file=sys.stderr)
        return os.path.join(kept, "cli", "syspgo")
    src = os.path.join(work, f"baseline-src-{rev}")
    os.makedirs(src)
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
    build = os.path.join(work, f"baseline-build-{rev}")
    build_type = "RelWithDebInfo"
    cache = os.path.join(BUILD, "CMakeCache.txt")
    if os.path.exists(cache):
        m = re.search(r"^CMAKE_BUILD_TYPE:STRING=(\S+)", open(cache).read(), re.M)
        build_type = m.group(1) if m else build_type
    print(f"bench: building syspgo at {rev} ({build_type}) in {build}", file=sys.stderr)
    subprocess.run(["cmake", "-S", src, "-B", build, f"-DCMAKE_BUILD_TYPE={build_type}"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", build, "--target", "syspgo", "-j", str(os.cpu_count())], check=True,
                   stdout=subprocess.DEVNULL)
    return os.path.join(build, "cli", "syspgo")


class BusyLoops:
    """`n` busy loops at the default priority while the block runs: the
    stand-in for a busy machine (a build beside the work), the same from
    one run to the next."""

    def __init__(self, n):
        self.n, self.procs = n, []

    def __enter__(self):
        self.procs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(self.n)]
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()


def status_kib(pid, field):
    """A KiB field of /proc/PID/status (VmRSS, VmHWM), or None if the
    process is gone or has no such field (a zombie)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def read_json(path):
    """The JSON document in the file at path (syspgo's --json summaries)."""
    with open(path) as f:
        return json.load(f)


def med(xs):
    return statistics.median(xs)


def fmt_range(xs, scale=1e6, unit="ms", digits=1):
    return f"{med(xs) / scale:.{digits}f} {unit} ({min(xs) / scale:.{digits}f}–{max(xs) / scale:.{digits}f})"


def write_section(name, command, body):
    """Replaces the section `name` in RESULTS.md (creating it if absent)."""
    text = open(RESULTS).read() if os.path.exists(RESULTS) else "# syspgo benchmark results\n\nEvery figure below was written by the script named in its section; none is typed by hand.\n"
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    uname = os.uname()
    section = (f"<!-- BEGIN {name} -->\n## {name}\n\nProduced by `{command}` on {stamp} "
               f"({uname.nodename}, kernel {uname.release}, {os.cpu_count()} CPUs).\n\n{body.strip()}\n<!-- END {name} -->\n")
    pat = re.compile(rf"<!-- BEGIN {re.escape(name)} -->.*?<!-- END {re.escape(name)} -->\n", re.S)
    text = pat.sub(lambda m: section, text) if pat.search(text) else text.rstrip("\n") + "\n\n" + section
    open(RESULTS, "w").write(text)
