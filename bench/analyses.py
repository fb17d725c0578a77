#!/usr/bin/env python3
"""analyses.py - peak memory and time of syspgo's analyses on large runs, against an earlier build.

Two real runs are recorded first:
- reads: python3 reads a sparse file of --mib MiB in 4 KiB preads under
  `syspgo collect --cold --probes fileio,faults,pagecache` (one file touch
  per read): what `analyze access`, `optimize --emit plan` and the report's
  access section load;
- mixed: every probe group for --seconds on three threads, one doing 1-byte
  pread/pwrite pairs, one writing 1 MiB and fsyncing every 50 ms, one
  touching random pages of a mapped 256 MiB file and dropping them again
  (syscalls, block I/O, off-CPU waits, faults and page-cache churn).
Then syspgo is built as it was at each --baseline revision (comma-separated,
oldest first; from `git archive`, the same build type), and each command runs
with every build, interleaved, --runs times: peak RSS (getrusage ru_maxrss),
wall time, and whether each build wrote the same bytes as the one before it. On the reads run each command also runs
once under cachegrind for the instructions executed (on the mixed run that
would take hours with the baseline's report). Writes its section of
bench/RESULTS.md.

usage: sudo bench/analyses.py [--runs 5] [--mib 2048] [--seconds 8] [--baseline REV[,REV...]]
"""
import argparse
import functools
import os
import re
import subprocess
import sys

import benchlib as B

READER = """
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
size, off = os.fstat(fd).st_size, 0
while off < size:
    os.pread(fd, 4096, off)
    off += 4096
"""

MIXED = """
import mmap, os, random, sys, threading, time
d, end = sys.argv[1], time.time() + float(sys.argv[2])
def syscalls():
    fd = os.open(d + "/small", os.O_RDWR | os.O_CREAT, 0o644)
    os.pwrite(fd, b"x" * 65536, 0)
    i = 0
    while time.time() < end:
        for _ in range(1000):
            os.pread(fd, 1, i % 65536)
            os.pwrite(fd, b"y", i % 65536)
            i += 1
def syncs():
    fd = os.open(d + "/ckpt", os.O_RDWR | os.O_CREAT, 0o644)
    buf = os.urandom(1 << 20)
    while time.time() < end:
        os.pwrite(fd, buf, 0)
        os.fsync(fd)
        time.sleep(0.05)
def faults():
    with open(d + "/mapped", "wb") as f:
        f.truncate(256 << 20)
    fd = os.open(d + "/mapped", os.O_RDONLY)
    m = mmap.mmap(fd, 256 << 20, prot=mmap.PROT_READ)
    r = random.Random(1)
    while time.time() < end:
        for _ in range(20000):
            m[r.randrange(256 << 20)]
        m.madvise(mmap.MADV_DONTNEED)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
threads = [threading.Thread(target=f) for f in (syscalls, syncs, faults)]
for t in threads:
    t.start()
for t in threads:
    t.join()
"""


def run_peak(cmd, out_file=None):
    """Runs cmd; returns (its peak RSS in KiB, wall ns, what it wrote: out_file's bytes or its
    stdout, its stderr)."""
    ns, ru, out, err = B.run_measured(cmd, capture=out_file is None)
    return ru.ru_maxrss, ns, (open(out_file, "rb").read() if out_file else out), err


def record(work, name, probes, argv):
    """Records argv under syspgo collect into work/NAME.db; returns the path and the events line."""
    db = os.path.join(work, f"{name}.db")
    p = subprocess.run([B.SYSPGO, "collect"] + probes + ["-o", db, "--"] + argv, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bench: recording the {name} run failed: {p.stderr[-1500:]}")
    m = re.search(r"recorded into\s+\S+:\s+(\d+)\s+events", p.stderr)
    return db, int(m.group(1)) if m else 0


@functools.lru_cache(maxsize=None)
def python_code():
    """The file holding python3's interpreter loop: its shared libpython if it
    has one, else the executable."""
    out = subprocess.run(["python3", "-c", "import os, sys, sysconfig; g = sysconfig.get_config_var; "
                          "lib = os.path.join(g('LIBDIR') or '', g('INSTSONAME') or ''); "
                          "print(lib if g('Py_ENABLE_SHARED') and os.path.isfile(lib) else os.path.realpath(sys.executable))"],
                         capture_output=True, text=True, check=True).stdout.strip()
    return out


def commands_for(db, work, names):
    """(label, make(binary, tag) -> (argv, output file or None)) for each command named."""
    out = os.path.join(work, "out")
    os.makedirs(out, exist_ok=True)
    table = {
        "access": lambda s, k: ([s, "analyze", db, "access"], None),
        "files": lambda s, k: ([s, "analyze", db, "files", "--json"], None),
        "pagecache": lambda s, k: ([s, "analyze", db, "pagecache", "--json"], None),
        "stalls": lambda s, k: ([s, "analyze", db, "stalls", "--json"], None),
        "hot": lambda s, k: ([s, "analyze", db, "hot", "--json"], None),
        "sample-profile": lambda s, k: ([s, "optimize", db, "--binary", python_code(), "--emit", "sample-profile",
                                         "-o", os.path.join(out, f"{k}.prof")], os.path.join(out, f"{k}.prof")),
        "plan": lambda s, k: ([s, "optimize", db, "--emit", "plan", "-o", os.path.join(out, f"{k}.plan")],
                              os.path.join(out, f"{k}.plan")),
        "report": lambda s, k: ([s, "report", db, "-o", os.path.join(out, f"{k}.html")],
                                os.path.join(out, f"{k}.html")),
    }
    label = {"access": "analyze access", "files": "analyze files", "pagecache": "analyze pagecache",
             "stalls": "analyze stalls", "hot": "analyze hot", "plan": "optimize --emit plan", "report": "report",
             "sample-profile": "optimize --emit sample-profile (python)"}
    return [(label[n], table[n]) for n in names]


def measure(commands, variants, runs, cachegrind):
    """{(label, variant): {"rss": [...], "wall": [...], "out": bytes, "instr": n or None}}"""
    res = {(c, v): {"rss": [], "wall": [], "out": None, "instr": None} for c, _ in commands for v, _ in variants}
    for r in range(runs):
        print(f"bench: round {r + 1} of {runs}", file=sys.stderr)
        for c, make in commands:
            for v, binary in (variants if r % 2 == 0 else variants[::-1]):
                cmd, out_file = make(binary, f"v{[x for x, _ in variants].index(v)}")
                peak, ns, out, _ = run_peak(cmd, out_file)
                res[(c, v)]["rss"].append(peak)
                res[(c, v)]["wall"].append(ns)
                if res[(c, v)]["out"] is None:
                    res[(c, v)]["out"] = out
    if cachegrind:
        # Deterministic counts behind the wall times: one run of each under
        # cachegrind (instructions executed, syspgo and SQLite alike).
        for c, make in commands:
            for v, binary in variants:
                print(f"bench: cachegrind: {c}, {v}", file=sys.stderr)
                cmd, _ = make(binary, "cg")
                p = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--trace-children=yes",
                                    "--cachegrind-out-file=/dev/null"] + cmd, capture_output=True, text=True)
                m = re.search(r"I\s+refs:\s+([\d,]+)", p.stderr)
                if p.returncode != 0 or not m:
                    sys.exit(f"bench: cachegrind on {' '.join(cmd)} failed: {p.stderr[-1500:]}")
                res[(c, v)]["instr"] = int(m.group(1).replace(",", ""))
    return res


def table(commands, variants, res):
    """Rows per command and build; ratios to the first (oldest) build; output
    compared with the build before each."""
    first = variants[0][0]
    cg = any(x["instr"] is not None for x in res.values())
    rows = [f"| command | syspgo | peak RSS | wall | RSS ÷ {first} | wall ÷ {first} |" +
            (" instructions (cachegrind) |" if cg else "") + " output |",
            "|---|---|---|---|---|---|" + ("---|" if cg else "") + "---|"]
    for c, _ in commands:
        for i, (v, _) in enumerate(variants):
            x, base = res[(c, v)], res[(c, first)]
            ratio = lambda k: "" if v == first else f"{B.med(x[k]) / B.med(base[k]):.2f}x"
            rss = x["rss"]
            row = (f"| {c} | {v} | {B.med(rss) / 1024:.1f} MiB ({min(rss) / 1024:.1f}–{max(rss) / 1024:.1f}) | "
                   f"{B.fmt_range(x['wall'], 1e9, 's', 2)} | {ratio('rss')} | {ratio('wall')} |")
            if cg:
                row += f" {x['instr'] / 1e9:.2f} G" + ("" if v == first else f" ({x['instr'] / base['instr']:.2f}x)") + " |"
            if i == 0:
                row += " |"
            else:
                prev = variants[i - 1][0]
                same = x["out"] == res[(c, prev)]["out"]
                row += f" {'same' if same else '**differs**'} as {prev} |"
            rows.append(row)
    notes = []
    for c, _ in commands:
        for i in range(1, len(variants)):
            pv, v = variants[i - 1][0], variants[i][0]
            a, b = res[(c, pv)]["out"], res[(c, v)]["out"]
            if a != b:
                k = next((j for j in range(min(len(a), len(b))) if a[j] != b[j]), min(len(a), len(b)))
                clip = lambda x: x[max(0, k - 40):k + 12].decode(errors="replace").replace("`", "'").replace("\n", " ")
                ndiff = sum(1 for x, y in zip(a, b) if x != y) + abs(len(a) - len(b))
                notes.append(f"- {c}, {pv} against {v}: {ndiff} byte(s) differ, the first at byte {k:,}: "
                             f"`{clip(a)}` against `{clip(b)}`")
    return "\n".join(rows) + "\n" + ("\nWhere the outputs differ:\n\n" + "\n".join(notes) + "\n" if notes else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mib", type=int, default=2048, help="reads run: size of the file read in 4 KiB preads")
    ap.add_argument("--seconds", type=float, default=8, help="mixed run: how long the load runs")
    ap.add_argument("--baseline", default="94f81db,b724300",
                    help="git revisions to compare with, oldest first (default: before session 13's changes to "
                         "these commands, and before session 14's)")
    a = ap.parse_args()
    work = B.work_dir("analyses", a.runs)
    data = os.path.join(work, "big.data")
    with open(data, "wb") as f:
        f.truncate(a.mib << 20)
    open(os.path.join(work, "reader.py"), "w").write(READER)
    open(os.path.join(work, "mixed.py"), "w").write(MIXED)
    print(f"bench: recording the reads run ({a.mib} MiB of 4 KiB reads, --cold)", file=sys.stderr)
    reads_db, reads_events = record(work, "reads", ["--cold", "--probes", "fileio,faults,pagecache"],
                                    ["python3", os.path.join(work, "reader.py"), data])
    print(f"bench: recording the mixed run ({a.seconds:g} s, every probe group)", file=sys.stderr)
    mixed_db, mixed_events = record(work, "mixed", [], ["python3", os.path.join(work, "mixed.py"), work,
                                                        str(a.seconds)])
    revs = [r for r in a.baseline.split(",") if r]
    variants = [(f"at {r}", B.build_baseline(r, work)) for r in revs] + [("this tree", B.SYSPGO)]
    reads_cmds = commands_for(reads_db, work, ["access", "files", "plan", "report"])
    mixed_cmds = commands_for(mixed_db, work, ["files", "pagecache", "stalls", "hot", "sample-profile", "access", "plan",
                                               "report"])
    print("bench: the reads run", file=sys.stderr)
    reads = measure(reads_cmds, variants, a.runs, cachegrind=True)
    print("bench: the mixed run", file=sys.stderr)
    mixed = measure(mixed_cmds, variants, a.runs, cachegrind=False)
    mib = lambda p: os.path.getsize(p) / (1 << 20)
    body = (f"Each command ran with syspgo as built at {', '.join(f'`{r}`' for r in revs)} and as built from this "
            f"tree, interleaved, {a.runs} runs each: peak RSS (getrusage ru_maxrss) and wall time, medians (min–max). "
            "*Output*: whether each build wrote the same bytes as the build above it (the plan, the HTML report, "
            "the tables and JSON).\n\n"
            f"**Reads run**: python3 reads a sparse {a.mib} MiB file in 4 KiB preads under `syspgo collect --cold "
            f"--probes fileio,faults,pagecache` ({reads_events:,} events, database {mib(reads_db):.0f} MiB). "
            "Instructions from one more run of each under `valgrind --tool=cachegrind`.\n\n" +
            table(reads_cmds, variants, reads) +
            f"\n**Mixed run**: {a.seconds:g} s with every probe group of three threads: 1-byte pread/pwrite pairs, "
            "1 MiB writes each followed by fsync every 50 ms, and random reads of a mapped 256 MiB file whose pages "
            f"are dropped again and again ({mixed_events:,} events, database {mib(mixed_db):.0f} MiB). The sample "
            f"profile is of `{python_code()}`, where python3 runs its interpreter.\n\n" +
            table(mixed_cmds, variants, mixed))
    B.write_section("analyses on large runs: memory and time",
                    f"sudo bench/analyses.py --runs {a.runs} --mib {a.mib} --seconds {a.seconds:g} "
                    f"--baseline {a.baseline}", body)
    print(body)


if __name__ == "__main__":
    main()
