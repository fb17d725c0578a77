#!/usr/bin/env python3
"""tax.py - what recording one command costs the processes it does not record.

Two syscall floods that syspgo does not record, each timed (bench/timeit.c:
the command's own wall time, and its CPU time from wait4) alone, beside the
floor (bench/floor_syscalls.bpf.c: empty tp_btf programs on sys_enter and
sys_exit, the hooks syspgo's fileio group uses; the same asking whether the
task is recorded; empty programs on the per-syscall tracepoints of the
fileio group's calls only, with the time their detach takes; beside the
read/write flood, the same timing every call, and timing every call after
asking whether its task is recorded) and beside
`syspgo collect -- sleep` recording something else; then the read/write
flood recorded by `syspgo collect -- dd ...`:

  - a read/write flood, `dd if=/dev/zero of=/dev/null bs=1 count=C` (2C syscalls);
  - a non-file flood, bench/workloads/getppid.c: 2C getppid calls, a syscall
    no analysis reads.

With --baseline REV, syspgo as built at REV runs beside and records too
(benchlib.build_baseline; SYSPGO_BASELINE_BUILD reuses a build of REV).
Variants are interleaved, --runs rounds, medians with min-max. Then one
more pass with kernel.bpf_stats_enabled=1 (restored after) counts, from
each tracer's own programs on the syscall hooks (/proc/PID/fdinfo), how
many program runs each syscall of an untraced flood made and how many ns a
run took (medians of 3): the deterministic side of the tax, free of the wall time's noise;
and, while each syspgo records the read/write flood, ns per run of its
programs on sys_enter and sys_exit and the ns its other programs add.
Writes its section of bench/RESULTS.md.

usage: sudo bench/tax.py [--runs 9] [--count 1000000] [--baseline REV]
"""
import argparse
import os
import signal
import sqlite3
import subprocess
import time

import benchlib as B

SLEEP = "600"  # what the tracers beside the load record; ended by the bench


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


class Beside:
    """A tracer running `sleep` (its prefix + ["sleep", SLEEP]) while the
    block runs: entered once the sleep runs (the tracer attaches before it
    starts the command), left by ending the sleep, so the tracer ends as it
    does when its command exits."""

    def __init__(self, prefix):
        self.prefix, self.p, self.sleep = prefix, None, None

    def __enter__(self):
        self.p = subprocess.Popen(self.prefix + ["sleep", SLEEP], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            self.sleep = next((c for c in children(self.p.pid) if comm(c) == "sleep"), None)
            if self.sleep or self.p.poll() is not None:
                break
            time.sleep(0.02)
        if not self.sleep:
            self.p.kill()
            raise SystemExit(f"bench: {' '.join(self.prefix)} did not start its command")
        return self

    def __exit__(self, *exc):
        os.kill(self.sleep, signal.SIGTERM)
        self.p.wait()


def fdinfos(pid, kind):
    """The /proc/PID/fdinfo fields of each fd of pid that is an anon_inode:KIND."""
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != f"anon_inode:{kind}":
                continue
            text = open(f"/proc/{pid}/fdinfo/{fd}").read()
        except OSError:
            continue
        out.append(dict(line.split(":\t", 1) for line in text.splitlines() if ":\t" in line))
    return out


SYSCALL_HOOKS = ("sys_enter", "sys_exit")
# The floor on the per-syscall tracepoints of the fileio group's calls
# (syscalls:sys_enter_read, ...), which issue 44 suggests instead of every
# syscall's hook.
PER_SYSCALL = "floor on per-syscall tracepoints"
# The floor of timing each call (-DFLOOR_TIME), beside the read/write flood
# only: what any tracer of syscall latency pays on the calls it times.
TIMING = "timing floor"
# The same after the membership test (-DFLOOR_TIME -DFLOOR_ASK): the least a
# recorder of some processes' call times pays on each call it records.
TIMING_ASK = "timing floor + membership test"


def teardown(prefix, rounds=5):
    """Median wall time, in s, of a tracer running `true`: its attach, the
    command, and the detach that the end of every recording pays."""
    walls = []
    for _ in range(rounds):
        t0 = time.monotonic()
        subprocess.run(prefix + ["true"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.monotonic() - t0)
    return B.med(walls)


def hook_stats(pid):
    """{hook: (run_cnt, run_time_ns)} summed over the BPF programs process
    pid has loaded, by the tracepoint its link attaches each to: sys_enter,
    sys_exit, or "other" (every other program)."""
    links = {l["prog_id"]: l.get("tp_name", "") for l in fdinfos(pid, "bpf_link")}
    out = {h: (0, 0) for h in SYSCALL_HOOKS + ("other",)}
    for p in fdinfos(pid, "bpf-prog"):
        hook = links.get(p.get("prog_id"), "")
        hook = hook if hook in SYSCALL_HOOKS else "other"
        out[hook] = (out[hook][0] + int(p.get("run_cnt", 0)), out[hook][1] + int(p.get("run_time_ns", 0)))
    return out


def prog_stats(pid):
    """(run_cnt, run_time_ns) summed over the BPF programs process pid has
    attached to sys_enter and sys_exit."""
    hooks = hook_stats(pid)
    return tuple(sum(hooks[h][i] for h in SYSCALL_HOOKS) for i in (0, 1))


class BpfStats:
    """kernel.bpf_stats_enabled=1 while the block runs, as it was after."""

    PATH = "/proc/sys/kernel/bpf_stats_enabled"

    def __enter__(self):
        self.was = open(self.PATH).read().strip()
        open(self.PATH, "w").write("1\n")

    def __exit__(self, *exc):
        open(self.PATH, "w").write(self.was + "\n")


def recorded_calls(db):
    """The read and write calls the run counted (lean totals) and its drops."""
    con = sqlite3.connect(db)
    calls = con.execute("SELECT COALESCE(SUM(calls), 0) FROM file_io_total WHERE nr IN (0, 1)").fetchone()[0]
    dropped = con.execute("SELECT events_dropped FROM run").fetchone()[0]
    con.close()
    return calls, dropped


def pct(xs, base):
    return (B.med(xs) - B.med(base)) / B.med(base) * 100


def cell(xs, base=None):
    s = B.fmt_range(xs, 1e9, "s", 2)
    return s if base is None else f"{s}, {pct(xs, base):+.1f}%"


def measure(a, work, timeit, loads, tracers, timings, syspgos):
    """Interleaved rounds: each untraced load alone and beside each tracer,
    and the read/write load recorded by each syspgo. Returns
    ({(load, variant): {"wall": [ns], "cpu": [ns]}}, {syspgo: [(calls, drops)]})."""
    db = os.path.join(work, "run.db")
    cells = [(load, v) for load in loads for v in ["alone"] + list(tracers)] + [("rw", v) for v in timings]
    cells += [("rw", f"recorded by {s}") for s in syspgos]
    times = {c: {"wall": [], "cpu": []} for c in cells}
    recorded = {s: [] for s in syspgos}
    for i in range(a.runs):
        for load, v in cells[i % len(cells):] + cells[:i % len(cells)]:
            cmd = loads[load][1]
            if v == "alone":
                t = B.timed(timeit, cmd, work)
            elif v in tracers or v in timings:
                with Beside(tracers.get(v) or timings[v]):
                    t = B.timed(timeit, cmd, work)
            else:
                s = v[len("recorded by "):]
                t = B.timed(timeit, cmd, work, prefix=[syspgos[s], "collect", "-o", db, "--"])
                recorded[s].append(recorded_calls(db))
                os.unlink(db)
            times[(load, v)]["wall"].append(t[0])
            times[(load, v)]["cpu"].append(t[1] + t[2])
        print(f"bench: round {i + 1} of {a.runs} done", flush=True)
    return times, recorded


def stats_pass(loads, tracers, rounds=3):
    """Per untraced load and tracer: (program runs per syscall of the load,
    ns per program run), medians of `rounds` interleaved runs."""
    runs = {}
    with BpfStats():
        for _ in range(rounds):
            for v, prefix in tracers.items():
                for load, (_, cmd, syscalls) in loads.items():
                    with Beside(prefix) as t:
                        c0, n0 = prog_stats(t.p.pid)
                        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                        c1, n1 = prog_stats(t.p.pid)
                    runs.setdefault((load, v), []).append(((c1 - c0) / syscalls, (n1 - n0) / max(c1 - c0, 1)))
    return {k: (B.med([r for r, _ in xs]), B.med([ns for _, ns in xs])) for k, xs in runs.items()}


def recorded_stats(syspgos, cmd, syscalls, work, rounds=3):
    """Per syspgo recording the load `cmd` (`syscalls` syscalls): {hook:
    (program runs per syscall, ns per run)} for sys_enter and sys_exit, and
    "other": (runs, ns of every other program per syscall of the load);
    medians of `rounds` runs. The recorded shell waits for a file before the
    load and sleeps after it, so the collector's counters are read around the
    load alone."""
    go, done, db = (os.path.join(work, n) for n in ("go", "done", "stats.db"))
    script = 'while [ ! -e "$0" ]; do sleep 0.02; done; "$@" >/dev/null 2>&1; : > "$0.done"; exec sleep ' + SLEEP
    runs = {}
    with BpfStats():
        for _ in range(rounds):
            for s, binary in syspgos.items():
                for f in (go, done, db):
                    if os.path.exists(f):
                        os.unlink(f)
                p = subprocess.Popen([binary, "collect", "-o", db, "--", "sh", "-c", script, go] + cmd,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                deadline = time.monotonic() + 120
                while not children(p.pid) and p.poll() is None and time.monotonic() < deadline:
                    time.sleep(0.02)
                before = hook_stats(p.pid)
                open(go, "w").close()
                while not os.path.exists(go + ".done") and p.poll() is None:
                    time.sleep(0.02)
                after = hook_stats(p.pid)
                for c in children(p.pid):
                    os.kill(c, signal.SIGTERM)
                p.wait()
                os.unlink(go + ".done")
                for h in before:
                    c, n = after[h][0] - before[h][0], after[h][1] - before[h][1]
                    runs.setdefault((s, h), []).append(
                        (c / syscalls, n / syscalls if h == "other" else n / max(c, 1)))
    return {k: (B.med([r for r, _ in xs]), B.med([ns for _, ns in xs])) for k, xs in runs.items()}


def verdict(met):
    return "met" if met else "**not met**"


def table(loads, names, times, kind):
    rows = []
    for load, (title, _, _) in loads.items():
        alone = times[(load, "alone")][kind]
        rows.append(f"| {title} | {cell(alone)} | " +
                    " | ".join(cell(times[(load, v)][kind], alone) for v in names) + " |")
    return ("| untraced load | alone | " + " | ".join(names) + " |\n|---|---|" + "---|" * len(names) + "\n" +
            "\n".join(rows))


def targets(times, stats, rstats, detach, kind):
    """The issue's three targets, on the command's wall or CPU time."""
    def p(load, v):
        return pct(times[(load, v)][kind], times[(load, "alone")][kind])
    floor_rw, floor_gp, per_gp = p("rw", "floor"), p("getppid", "floor"), p("getppid", PER_SYSCALL)
    beside_rw, beside_gp, rec_rw = p("rw", "beside this tree"), p("getppid", "beside this tree"), \
        p("rw", "recorded by this tree")
    def gap(load, v):
        return stats[(load, v)][1] - stats[(load, "floor")][1]
    def times_floor(x):
        return f"{x / floor_rw if floor_rw > 0 else 0:.1f}"
    return (f"- untraced read/write flood within the floor + 3 points: {beside_rw:+.1f}% against the floor's "
            f"{floor_rw:+.1f}%: {verdict(beside_rw <= floor_rw + 3)}; the floor with the membership test costs it "
            f"{p('rw', 'floor + membership test'):+.1f}%"
            f"{', so that floor stops it' if p('rw', 'floor + membership test') > floor_rw + 3 else ''}. Per program run, syspgo's programs take "
            f"{gap('rw', 'beside this tree'):+.1f} ns above the floor's, the membership test alone "
            f"{gap('rw', 'floor + membership test'):+.1f} ns (bpf_stats above).\n"
            f"- untraced non-file flood within 2% of alone: {beside_gp:+.1f}%: {verdict(beside_gp <= 2)}. The "
            f"floor itself (any program on a syscall hook) costs it {floor_gp:+.1f}%"
            f"{', so this target is stopped by the floor' if floor_gp > 2 else ''}; syspgo's programs cost it "
            f"{gap('getppid', 'beside this tree'):+.1f} ns a run above the floor's (the membership test alone "
            f"{gap('getppid', 'floor + membership test'):+.1f} ns). Hooking only the fileio group's syscalls "
            f"(empty programs on their per-syscall tracepoints) costs it {per_gp:+.1f}%: a registered syscall "
            f"tracepoint sends every syscall of every task through the kernel's slow path"
            f"{', so that floor stops it too' if per_gp > 2 else ''}; and detaching those tracepoints takes "
            f"{detach[PER_SYSCALL]:.2f} s at the end of every recording (a run of `true` under that floor, against "
            f"{detach['floor']:.2f} s under the tp_btf floor; medians of 5).\n"
            f"- recorded read/write flood within 2× the floor: {rec_rw:+.1f}% against 2 × {floor_rw:+.1f}%: "
            f"{verdict(rec_rw <= 2 * floor_rw)}. Timing each call alone (the timing floor) costs it "
            f"{p('rw', TIMING):+.1f}%, {times_floor(p('rw', TIMING))}× the floor's; asking first whether the task "
            f"is recorded, as a recorder of some processes must, {p('rw', TIMING_ASK):+.1f}%, "
            f"{times_floor(p('rw', TIMING_ASK))}× the floor's"
            f"{', so that floor stops it' if p('rw', TIMING_ASK) > 2 * floor_rw else ''}. Per program run "
            f"(bpf_stats above), on sys_enter and sys_exit: the floor {stats[('rw', 'floor')][1]:.1f} ns, the "
            f"timing floor {stats[('rw', TIMING)][1]:.1f} ns, with the membership test "
            f"{stats[('rw', TIMING_ASK)][1]:.1f} ns; syspgo recording, "
            f"{rstats[('this tree', 'sys_enter')][1]:.1f} ns and {rstats[('this tree', 'sys_exit')][1]:.1f} ns.\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--count", type=int, default=1000000, help="dd blocks of 1 byte (twice as many syscalls)")
    ap.add_argument("--baseline", help="git revision of syspgo to run beside and record too")
    a = ap.parse_args()
    work = B.work_dir("tax", a.runs)
    timeit = B.build_timeit(work)
    getppid = os.path.join(work, "getppid")
    subprocess.run(["cc", "-O2", "-o", getppid, os.path.join(B.ROOT, "bench", "workloads", "getppid.c")], check=True)
    n = 2 * a.count
    loads = {
        "rw": (f"read/write flood (`dd bs=1 count={a.count}`, {n:,} syscalls)",
               ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", f"count={a.count}", "status=none"], n),
        "getppid": (f"non-file flood (`getppid {n}`)", [getppid, str(n)], n),
    }
    syspgos = {"this tree": B.SYSPGO}
    if a.baseline:
        rev = subprocess.run(["git", "-C", B.ROOT, "rev-parse", "--short", a.baseline], capture_output=True,
                             text=True, check=True).stdout.strip()
        syspgos[f"syspgo at {rev}"] = B.build_baseline(rev, work)
    sleep_db = os.path.join(work, "beside.db")
    tracers = {"floor": B.build_floor(work), "floor + membership test": B.build_floor(work, ask=True),
               PER_SYSCALL: B.build_floor(work, per_syscall=True)}
    for s, binary in syspgos.items():
        tracers[f"beside {s}"] = [binary, "collect", "-o", sleep_db, "--"]
    timings = {TIMING: B.build_floor(work, timed=True), TIMING_ASK: B.build_floor(work, ask=True, timed=True)}
    times, recorded = measure(a, work, timeit, loads, tracers, timings, syspgos)
    # Its programs run on no syscall of either load but read and write: what
    # it costs is the kernel's, outside any program's counters.
    stats = stats_pass(loads, {**{v: t for v, t in tracers.items() if v != PER_SYSCALL}, **timings})
    detach = {v: teardown(tracers[v]) for v in ("floor", PER_SYSCALL)}
    rstats = recorded_stats(syspgos, loads["rw"][1], loads["rw"][2], work)
    if os.path.exists(sleep_db):
        os.unlink(sleep_db)

    names = list(tracers)
    rec = []
    for s in syspgos:
        calls = B.med([c for c, _ in recorded[s]])
        drops = max(d for _, d in recorded[s])
        cells = [cell(times[("rw", v)][k], times[("rw", "alone")][k]) for k in ("wall", "cpu")
                 for v in ("floor", TIMING, TIMING_ASK, f"recorded by {s}")]
        rec.append(f"| {s} | " + " | ".join(cells) + f" | {calls:,.0f} | {drops} |")
    srows = [f"| {loads[load][0]} | {v} | {runs:.3f} | {ns:.1f} |" for (load, v), (runs, ns) in stats.items()]
    rrows = [f"| {s} | " + " | ".join(f"{rstats[(s, h)][0]:.3f} | {rstats[(s, h)][1]:.1f}" for h in SYSCALL_HOOKS) +
             f" | {rstats[(s, 'other')][1]:.1f} |" for s in syspgos]
    body = (
        f"Untraced loads: the command's wall time (bench/timeit.c) and its CPU time (user + sys, wait4), medians "
        f"of {a.runs} interleaved rounds (min–max), and the change against the load alone. The floor: empty "
        "tp_btf programs on sys_enter and sys_exit (bench/floor_syscalls.bpf.c), the hooks syspgo's fileio group "
        "uses, which every syscall of every task runs; the floor + membership test: the same programs asking "
        "first, as syspgo's do, whether the running task is recorded (bench/floor_syscalls.bpf.c -DFLOOR_ASK: "
        "bpf_get_current_task_btf, then its bit in an ARRAY map), what a process outside a recording cannot "
        "avoid paying syspgo; the floor on per-syscall tracepoints: empty programs on the per-syscall "
        "tracepoints of only the calls the fileio group reads (-DFLOOR_PER_SYSCALL: syscalls:sys_enter_read, ..., "
        "58 tracepoints), the hooks issue 44 suggests. Beside: `syspgo collect -- sleep` (all groups, lean) recording something else "
        "while the load runs.\n\n"
        "Wall time:\n\n" + table(loads, names, times, "wall") + "\n\n"
        "CPU time:\n\n" + table(loads, names, times, "cpu") + "\n\n"
        "The read/write flood recorded (`syspgo collect -- dd ...`), wall and CPU time against the load alone, "
        "beside the floor's and the timing floor's (bench/floor_syscalls.bpf.c -DFLOOR_TIME: the same tp_btf hooks "
        "timing every call, as any tracer of syscall latency must: the clock at entry kept in task storage, the "
        "clock at exit, the difference summed per CPU) and the same after asking whether the task is recorded "
        "(-DFLOOR_TIME -DFLOOR_ASK: the bitmap stays empty and every call is timed); its read and write calls counted in file_io_total (median) and the events the run "
        "dropped (most).\n\n"
        "| syspgo | floor, wall | timing floor, wall | timing + membership, wall | recorded, wall | floor, CPU | "
        "timing floor, CPU | timing + membership, CPU | recorded, CPU | read/write calls counted | dropped |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rec) + "\n\n"
        "BPF program runs per syscall of each untraced load and ns per program run, from each tracer's own "
        "programs on sys_enter and sys_exit (run_cnt and run_time_ns in /proc/PID/fdinfo; "
        "kernel.bpf_stats_enabled=1; medians of 3 runs; other processes' syscalls meanwhile count too). A run's ns "
        "include the kernel's own timing of it, the same for every tracer: the gap above the floor's row is "
        "what the tracer's programs add.\n\n"
        "| untraced load | beside | program runs per syscall | ns per program run |\n|---|---|---|---|\n" +
        "\n".join(srows) + "\n\n"
        "The same counters while syspgo records the read/write flood (`syspgo collect -- sh -c '...; dd ...'`, the "
        "counters read just before and after dd; medians of 3 runs): its programs on sys_enter and sys_exit "
        "(the fileio group's), and every other program it loaded, in ns per syscall of the flood. The floor's "
        f"empty programs take {stats[('rw', 'floor')][1]:.1f} ns a run (above).\n\n"
        "| syspgo | sys_enter runs per syscall | sys_enter ns per run | sys_exit runs per syscall | "
        "sys_exit ns per run | other programs, ns per syscall |\n|---|---|---|---|---|---|\n" +
        "\n".join(rrows) + "\n\n"
        "Targets (issue 44), on wall time:\n\n" + targets(times, stats, rstats, detach, "wall") + "\n"
        "On CPU time:\n\n" + targets(times, stats, rstats, detach, "cpu"))
    B.write_section("syscall tax", f"sudo bench/tax.py --runs {a.runs} --count {a.count}" +
                    (f" --baseline {a.baseline}" if a.baseline else ""), body)
    print(body)


if __name__ == "__main__":
    main()
