#!/usr/bin/env python3
"""overhead.py - what collecting costs the program, beside perf and bpftrace.

Three workloads (CPU-bound, syscall-heavy, page-cache-heavy), each run
plain, under `syspgo collect` (all probe groups, defaults: the lean tier),
under `syspgo collect --detail full` (every event a row), under
`perf record -F 999 -g`, under a bpftrace script on the same tracepoints
(syscalls, sched_switch, user page faults, page-cache add and delete, block
issue/complete, 999 Hz stack sampling; it aggregates in maps), and under
the floor: programs on sys_enter and sys_exit of syspgo's own kind (tp_btf)
that return at once (bench/floor_syscalls.bpf.c), what any tracer hooking
every syscall costs on this kernel before it does any work.
Variants are interleaved, --runs rounds. The command's wall time is measured
inside each variant by bench/timeit.c (the tools' start-up is not counted);
its CPU time (user + sys, from wait4) is reported too, since it is less
noisy on this shared machine. The page-cache workload drops the page cache
before every run of every variant. Writes its section of bench/RESULTS.md.

With --sampling HZ it measures only stack sampling, the one kind of event
all three tools record alike: the CPU-bound workload plain, under `syspgo
collect --probes cpu --freq HZ`, `perf record -F HZ -g` and a bpftrace
`profile:hz:HZ` taking both stacks. At a high rate the cost per sample
stands out of the machine's noise; it is reported from the command's CPU
time (user + sys), which the sampling interrupt is charged to.

With --group GROUP --baseline REV it measures one probe group alone
against the same group as built at git revision REV, interleaved in one
run: a context-switch-heavy workload (bench/workloads/pingpong.c: two
processes passing a byte through pipes) and the CPU-bound one, plain, under
`syspgo collect --probes GROUP` at REV, and under the same from this tree.
It checks that a change left a group's cost where it was (issue 27: the
sched group within its figure + 5%).

usage: sudo bench/overhead.py [--runs 7] [--only cpu|syscall|pagecache]
       sudo bench/overhead.py --sampling 9999 [--runs 15]
       sudo bench/overhead.py --group sched --baseline 87099e9 [--runs 9]
"""
import argparse
import os
import sqlite3
import subprocess

import benchlib as B

BPFTRACE = r"""
tracepoint:raw_syscalls:sys_enter /comm == "%(comm)s"/ { @start[tid] = nsecs; }
tracepoint:raw_syscalls:sys_exit /@start[tid]/ { @lat[args->id] = hist(nsecs - @start[tid]); delete(@start[tid]); }
tracepoint:sched:sched_switch /args->prev_comm == "%(comm)s"/ { @off[kstack, ustack] = count(); }
tracepoint:exceptions:page_fault_user /comm == "%(comm)s"/ { @faults[args->error_code] = count(); }
tracepoint:filemap:mm_filemap_add_to_page_cache /comm == "%(comm)s"/ { @added[args->i_ino] = count(); }
tracepoint:filemap:mm_filemap_delete_from_page_cache { @deleted[args->i_ino] = count(); }
tracepoint:block:block_rq_issue { @issue[args->sector] = nsecs; }
tracepoint:block:block_rq_complete /@issue[args->sector]/ { @blk = hist(nsecs - @issue[args->sector]); delete(@issue[args->sector]); }
profile:hz:999 /comm == "%(comm)s"/ { @cpu[kstack, ustack] = count(); }
"""



def under_bpftrace(script, timeit, cmd, work):
    """Runs cmd under bench/timeit with the bpftrace script attached (-c
    starts it once the probes are); returns its (wall, user, sys) ns."""
    out = os.path.join(work, "timeit.out")
    p = subprocess.run(["bpftrace", "-q", "-c", " ".join([timeit] + cmd), script], env=dict(os.environ, TIMEIT_OUT=out),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise SystemExit(f"bench: bpftrace failed: {p.stderr[-2000:]}")
    w_, u_, s_, _ = (int(x) for x in open(out).read().split())
    return w_, u_, s_


def sampling(a, work, timeit, cpu_bound):
    hz = a.sampling
    cmd = [cpu_bound, "400000000"]
    script = os.path.join(work, "profile.bt")
    open(script, "w").write(f'profile:hz:{hz} /comm == "cpu_bound"/ {{ @cpu[kstack, ustack] = count(); }}\n')
    db = os.path.join(work, "run.db")
    variants = {
        "plain": None,
        "syspgo": [B.SYSPGO, "collect", "--probes", "cpu", "--freq", str(hz), "-o", db, "--"],
        "perf": ["perf", "record", "-F", str(hz), "-g", "-q", "--no-bpf-event", "-o", os.path.join(work, "perf.data"), "--"],
        "bpftrace": None,
    }
    cpu = {v: [] for v in variants}
    samples = []
    for i in range(a.runs):
        for v in list(variants)[i % 4:] + list(variants)[:i % 4]:
            if v == "bpftrace":
                _, u_, s_ = under_bpftrace(script, timeit, cmd, work)
            else:
                _, u_, s_, _, _ = B.timed(timeit, cmd, work, prefix=variants[v])
            cpu[v].append(u_ + s_)
            if v == "syspgo":
                con = sqlite3.connect(db)
                samples.append(con.execute("SELECT COUNT(*) FROM cpu_sample").fetchone()[0])
                con.close()
                os.unlink(db)
    base = B.med(cpu["plain"])
    rows = []
    for v in variants:
        extra = B.med(cpu[v]) - base
        per = "" if v == "plain" else f"{extra / (hz * base / 1e9) / 1e3:.2f} µs"
        rows.append(f"| {v} | {B.fmt_range(cpu[v])} | {extra / base * 100:+.2f}% | {per} |")
    body = (f"The CPU-bound workload (`cpu_bound 400000000`), its CPU time (user + sys) as medians of {a.runs} "
            f"interleaved rounds (min–max), sampled at {hz} Hz with user and kernel stacks by each tool: "
            f"`syspgo collect --probes cpu --freq {hz}`, `perf record -F {hz} -g`, and bpftrace "
            f"`profile:hz:{hz} {{ @[kstack, ustack] = count(); }}`. Cost per sample = (CPU time − plain's) ÷ "
            f"({hz} × plain's CPU seconds). syspgo recorded {B.med(samples):,.0f} samples a run (median).\n\n"
            "| variant | command CPU time | vs plain | cost per sample |\n|---|---|---|---|\n" + "\n".join(rows) + "\n")
    B.write_section(f"overhead (sampling at {hz} Hz)", f"sudo bench/overhead.py --sampling {hz} --runs {a.runs}", body)
    print(body)


def one_group(a, work, timeit, bins):
    rev = subprocess.run(["git", "-C", B.ROOT, "rev-parse", "--short", a.baseline], capture_output=True, text=True,
                         check=True).stdout.strip()
    builds = {f"at {rev}": B.build_baseline(rev, work), "this tree": B.SYSPGO}
    workloads = [
        ("context switches (pingpong, 100k round trips through pipes)", [bins["pingpong"], "100000"]),
        ("CPU-bound (4e8 iterations of a multiply-xor loop)", [bins["cpu_bound"], "400000000"]),
    ]
    variants = ["plain"] + list(builds)
    db = os.path.join(work, "run.db")
    rows = []
    for title, cmd in workloads:
        wall = {v: [] for v in variants}
        cpu = {v: [] for v in variants}
        events = {v: [] for v in builds}
        for i in range(a.runs):
            for v in variants[i % len(variants):] + variants[:i % len(variants)]:
                prefix = None if v == "plain" else [builds[v], "collect", "--probes", a.group, "-o", db, "--"]
                w_, u_, s_, _, _ = B.timed(timeit, cmd, work, prefix=prefix)
                wall[v].append(w_)
                cpu[v].append(u_ + s_)
                if v in builds:
                    con = sqlite3.connect(db)
                    events[v].append(con.execute("SELECT events_recorded FROM run").fetchone()[0])
                    con.close()
                    os.unlink(db)
        base = B.med(wall["plain"])
        cells = [title, B.fmt_range(wall["plain"])]
        for v in builds:
            cells.append(f"{B.fmt_range(wall[v])}, {(B.med(wall[v]) - base) / base * 100:+.1f}%")
        cells.append(" / ".join(f"{B.med(cpu[v]) / 1e6:.0f}" for v in variants))
        cells.append(" / ".join(f"{B.med(events[v]):,.0f}" for v in builds))
        rows.append(cells)
    names = list(builds)
    body = (f"The {a.group} probe group alone (`syspgo collect --probes {a.group}`), as built at {rev} and as built "
            f"from this tree, interleaved with plain runs: command wall time, medians of {a.runs} rounds (min–max), "
            "and the change against plain.\n\n"
            f"| workload | plain | syspgo {names[0]} | syspgo {names[1]} | command CPU ms: plain / {names[0]} / "
            f"{names[1]} | events recorded: {names[0]} / {names[1]} |\n|---|---|---|---|---|---|\n" +
            "\n".join("| " + " | ".join(r) + " |" for r in rows) + "\n")
    B.write_section(f"overhead ({a.group} group)",
                    f"sudo bench/overhead.py --group {a.group} --baseline {a.baseline} --runs {a.runs}", body)
    print(body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--only", choices=["cpu", "syscall", "pagecache"], help="one workload (its own section)")
    ap.add_argument("--sampling", type=int, metavar="HZ", help="stack sampling alone at HZ (its own section)")
    ap.add_argument("--group", help="one probe group alone, against --baseline (its own section)")
    ap.add_argument("--baseline", default="main", help="git revision --group compares with (default: main)")
    a = ap.parse_args()
    B.require("perf", "linux-perf", "a comparison")
    B.require("bpftrace", "bpftrace", "a comparison and the floor")
    work = B.work_dir("overhead", a.runs)
    timeit = B.build_timeit(work)
    bins = {}
    for w in ("cpu_bound", "pc_touch", "pingpong"):
        bins[w] = os.path.join(work, w)
        subprocess.run(["cc", "-O2", "-fno-omit-frame-pointer", "-o", bins[w],
                        os.path.join(B.ROOT, "bench", "workloads", w + ".c")], check=True)
    if a.sampling:
        return sampling(a, work, timeit, bins["cpu_bound"])
    if a.group:
        return one_group(a, work, timeit, bins)
    floor = B.build_floor(work)
    big = os.path.join(work, "big.bin")
    subprocess.run(["dd", "if=/dev/urandom", f"of={big}", "bs=1M", "count=512", "status=none"], check=True)
    workloads = [
        ("CPU-bound (4e8 iterations of a multiply-xor loop)", "cpu_bound", [bins["cpu_bound"], "400000000"], False),
        ("syscall-heavy (dd bs=512, 200k blocks to a file)", "dd",
         ["dd", "if=/dev/zero", f"of={os.path.join(work, 'out.bin')}", "bs=512", "count=200000", "status=none"], False),
        ("page-cache-heavy (cold mmap touch of 512 MiB)", "pc_touch", [bins["pc_touch"], big], True),
    ]
    if a.only:
        workloads = [w for w in workloads if w[1] == {"cpu": "cpu_bound", "syscall": "dd", "pagecache": "pc_touch"}[a.only]]
    variants = ["plain", "syspgo", "syspgo-full", "floor", "perf", "bpftrace"]
    rows = []
    for title, comm, cmd, cold in workloads:
        wall = {v: [] for v in variants}
        cpu = {v: [] for v in variants}
        drops, events = {"syspgo": [], "syspgo-full": []}, {"syspgo": [], "syspgo-full": []}
        script = os.path.join(work, "trace.bt")
        open(script, "w").write(BPFTRACE % {"comm": comm[:15]})
        for i in range(a.runs):
            for v in variants[i % len(variants):] + variants[:i % len(variants)]:
                if cold:
                    B.drop_caches()
                db = os.path.join(work, "run.db")
                prefix = {
                    "syspgo": [B.SYSPGO, "collect", "-o", db, "--"],
                    "syspgo-full": [B.SYSPGO, "collect", "--detail", "full", "-o", db, "--"],
                    "floor": floor,
                    "perf": ["perf", "record", "-F", "999", "-g", "-q", "--no-bpf-event", "-o",
                             os.path.join(work, "perf.data"), "--"],
                }.get(v)
                if v == "bpftrace":
                    w_, u_, s_ = under_bpftrace(script, timeit, cmd, work)
                else:
                    w_, u_, s_, _, _ = B.timed(timeit, cmd, work, prefix=prefix)
                wall[v].append(w_)
                cpu[v].append(u_ + s_)
                if v in events:
                    con = sqlite3.connect(db)
                    ev, dr = con.execute("SELECT events_recorded, events_dropped FROM run").fetchone()
                    con.close()
                    os.unlink(db)
                    events[v].append(ev)
                    drops[v].append(dr)
        base = B.med(wall["plain"])
        cells = [title, B.fmt_range(wall["plain"])]
        for v in variants[1:]:
            over = (B.med(wall[v]) - base) / base * 100
            cells.append(f"{B.fmt_range(wall[v])}, {over:+.1f}%")
        cells.append(" / ".join(f"{B.med(cpu[v]) / 1e6:.0f}" for v in variants))
        cells.append(" / ".join(f"{B.med(events[v]):,.0f} / {max(drops[v])}" for v in events))
        rows.append(cells)
    body = (f"Command wall time, medians of {a.runs} interleaved rounds (min–max), and the change against plain.\n\n"
            "| workload | plain | syspgo (all groups, lean) | syspgo --detail full | floor: empty programs on "
            "sys_enter and sys_exit | perf record -F 999 -g | bpftrace (same tracepoints) | "
            "command CPU ms: " + " / ".join(variants) + " | syspgo events / dropped: lean; full |\n"
            "|---|---|---|---|---|---|---|---|---|\n" + "\n".join("| " + " | ".join(r) + " |" for r in rows) +
            "\n\nThe lean tier counts file calls in the kernel and records only the instances analyses need "
            "(bpf/fileio.bpf.c); --detail full records every call. The floor is what hooking every syscall with "
            "a BPF program costs here before the program does anything (bench/floor_syscalls.bpf.c: tp_btf "
            "programs on sys_enter and sys_exit that return at once); syspgo must hook every syscall to see the file calls, so its syscall "
            "overhead cannot go below the floor. The bpftrace script aggregates in maps; perf records only the "
            "stack samples.\n")
    B.write_section("overhead" + (f" ({a.only})" if a.only else ""),
                    f"sudo bench/overhead.py --runs {a.runs}" + (f" --only {a.only}" if a.only else ""), body)
    print(body)


if __name__ == "__main__":
    main()
