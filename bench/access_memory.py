#!/usr/bin/env python3
"""access_memory.py - peak memory and time of the commands that read a run's file I/O.

`syspgo analyze DB access`, `syspgo optimize DB --emit plan` and `syspgo
report DB` load every file touch of a run (reads, faults, page-cache
additions); `syspgo analyze DB files` sums its file syscalls. This records a real run with many of them: under
`syspgo collect --cold --probes fileio,faults,pagecache`, python3 reads a
sparse file of --mib MiB in 4 KiB preads (one touch per read). Then it
builds syspgo as it was at --baseline (a git revision, from `git archive`)
and runs each command with both builds, interleaved, --runs times, reading
each one's peak RSS (getrusage ru_maxrss) and wall time, and whether both
builds wrote the same output; then once each under cachegrind for the
instructions executed. Writes its section of bench/RESULTS.md.

usage: sudo bench/access_memory.py [--runs 5] [--mib 2048] [--baseline REV]
"""
import argparse
import os
import re
import selectors
import subprocess
import sys
import time

import benchlib as B

READER = """
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
size, off = os.fstat(fd).st_size, 0
while off < size:
    os.pread(fd, 4096, off)
    off += 4096
"""


def build_baseline(rev, work):
    """syspgo at git revision rev, built like this tree's build; returns its binary."""
    src = os.path.join(work, "baseline-src")
    os.makedirs(src)
    archive = subprocess.run(["git", "-C", B.ROOT, "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
    build = os.path.join(work, "baseline-build")
    build_type = "RelWithDebInfo"
    cache = os.path.join(B.BUILD, "CMakeCache.txt")
    if os.path.exists(cache):
        m = re.search(r"^CMAKE_BUILD_TYPE:STRING=(\S+)", open(cache).read(), re.M)
        build_type = m.group(1) if m else build_type
    print(f"bench: building syspgo at {rev} ({build_type}) in {build}", file=sys.stderr)
    subprocess.run(["cmake", "-S", src, "-B", build, f"-DCMAKE_BUILD_TYPE={build_type}"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", build, "--target", "syspgo", "-j", str(os.cpu_count())], check=True,
                   stdout=subprocess.DEVNULL)
    return os.path.join(build, "cli", "syspgo")


def run_peak(cmd, out_file=None):
    """Runs cmd; returns (its peak RSS in KiB, wall ns, what it wrote: out_file's bytes or its
    stdout, its stderr)."""
    t0 = time.monotonic_ns()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Read the pipes before reaping, so a large output cannot block the child.
    out, err = b"", b""
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ)
    sel.register(p.stderr, selectors.EVENT_READ)
    open_pipes = 2
    while open_pipes:
        for key, _ in sel.select():
            chunk = os.read(key.fileobj.fileno(), 65536)
            if not chunk:
                sel.unregister(key.fileobj)
                open_pipes -= 1
            elif key.fileobj is p.stdout:
                out += chunk
            else:
                err += chunk
    _, status, ru = os.wait4(p.pid, 0)
    t1 = time.monotonic_ns()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed ({p.returncode}): {err.decode()[-1500:]}")
    return ru.ru_maxrss, t1 - t0, (open(out_file, "rb").read() if out_file else out), err.decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mib", type=int, default=2048, help="size of the file read in 4 KiB preads")
    ap.add_argument("--baseline", default="94f81db",
                    help="git revision to compare with (default: the last one before session 13's changes to "
                         "these commands)")
    a = ap.parse_args()
    work = B.work_dir("access-memory", a.runs)
    data = os.path.join(work, "big.data")
    with open(data, "wb") as f:
        f.truncate(a.mib << 20)
    reader = os.path.join(work, "reader.py")
    open(reader, "w").write(READER)
    db = os.path.join(work, "run.db")
    print(f"bench: recording {a.mib} MiB of 4 KiB reads under syspgo collect --cold", file=sys.stderr)
    subprocess.run([B.SYSPGO, "collect", "--cold", "--probes", "fileio,faults,pagecache", "-o", db, "--",
                    "python3", reader, data], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = build_baseline(a.baseline, work)
    variants = [(f"at {a.baseline}", base), ("this tree", B.SYSPGO)]
    commands = [
        ("syspgo analyze DB access", lambda s, k: ([s, "analyze", db, "access"], None)),
        ("syspgo analyze DB files", lambda s, k: ([s, "analyze", db, "files", "--json"], None)),
        ("syspgo optimize DB --emit plan", lambda s, k: ([s, "optimize", db, "--emit", "plan", "-o",
                                                          os.path.join(work, f"{k}.plan")],
                                                         os.path.join(work, f"{k}.plan"))),
        ("syspgo report DB", lambda s, k: ([s, "report", db, "-o", os.path.join(work, f"{k}.html")],
                                           os.path.join(work, f"{k}.html"))),
    ]
    rss = {(c, v): [] for c, _ in commands for v, _ in variants}
    wall = {(c, v): [] for c, _ in commands for v, _ in variants}
    outputs = {}
    touches = "?"
    for r in range(a.runs):
        print(f"bench: round {r + 1} of {a.runs}", file=sys.stderr)
        for c, make in commands:
            order = variants if r % 2 == 0 else variants[::-1]
            for v, binary in order:
                cmd, out_file = make(binary, f"v{variants.index((v, binary))}")
                peak, ns, out, err = run_peak(cmd, out_file)
                rss[(c, v)].append(peak)
                wall[(c, v)].append(ns)
                outputs.setdefault((c, v), out)
                m = re.search(r"from (\d+) touches", err)
                if m:
                    touches = f"{int(m.group(1)):,}"
    # Deterministic counts behind the wall times: one run of each under
    # cachegrind (instructions executed, syspgo and SQLite alike).
    instr = {}
    for c, make in commands:
        for v, binary in variants:
            print(f"bench: cachegrind: {c}, {v}", file=sys.stderr)
            cmd, _ = make(binary, "cg")
            p = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"] +
                               cmd, capture_output=True, text=True)
            m = re.search(r"I\s+refs:\s+([\d,]+)", p.stderr)
            if p.returncode != 0 or not m:
                sys.exit(f"bench: cachegrind on {' '.join(cmd)} failed: {p.stderr[-1500:]}")
            instr[(c, v)] = int(m.group(1).replace(",", ""))
    rows = []
    for c, _ in commands:
        same = outputs[(c, variants[0][0])] == outputs[(c, variants[1][0])]
        first = variants[0][0]
        for v, _ in variants:
            x = rss[(c, v)]
            ratio = lambda d: "" if v == first else f"{B.med(d[(c, v)]) / B.med(d[(c, first)]):.2f}x"
            rows.append(f"| {c} | {v} | {B.med(x) / 1024:.1f} MiB ({min(x) / 1024:.1f}–{max(x) / 1024:.1f}) | "
                        f"{B.fmt_range(wall[(c, v)], 1e9, 's', 2)} | {ratio(rss)} | {ratio(wall)} | "
                        f"{instr[(c, v)] / 1e9:.2f} G{'' if v == first else f' ({instr[(c, v)] / instr[(c, first)]:.2f}x)'} | "
                        f"{'' if v == first else ('same' if same else '**differs**')} |")
    db_mib = os.path.getsize(db) / (1 << 20)
    body = (f"A real run: python3 reads a sparse {a.mib} MiB file in 4 KiB preads under `syspgo collect --cold "
            f"--probes fileio,faults,pagecache` ({touches} touches in the plan's count, database {db_mib:.0f} MiB). "
            f"Each command ran with syspgo as built at `{a.baseline}` and as built from this tree, interleaved, "
            f"{a.runs} runs each; peak RSS (getrusage ru_maxrss) and wall time, medians (min–max); instructions "
            f"executed from one more run of each under `valgrind --tool=cachegrind`. *Output*: "
            f"whether both builds wrote the same bytes (the plan file, the HTML report, the tables).\n\n"
            "| command | syspgo | peak RSS | wall | RSS ÷ baseline | wall ÷ baseline | instructions (cachegrind) | output |\n"
            "|---|---|---|---|---|---|---|---|\n" +
            "\n".join(rows) + "\n")
    B.write_section("file I/O analyses: memory and time", f"sudo bench/access_memory.py --runs {a.runs} --mib {a.mib} "
                    f"--baseline {a.baseline}", body)
    print(body)


if __name__ == "__main__":
    main()
