#!/usr/bin/env python3
"""scale_all.py - `syspgo collect --all` on a busy host: what it costs and what it keeps.

The load is a real multi-process one: Lua's `make -j2` (`apt-get source
lua5.4`) built over and over, beside a syscall flood (`dd bs=1` from
/dev/zero to /dev/null, two syscalls a byte). Each round runs the load for
--duration seconds alone, then the same load while `syspgo collect --all
--duration S` records the whole host (every default probe group, the
default lean tier), in alternating order from round to round. For the
recorded half: the collector's CPU (user + system, from wait4) and peak RSS
(ru_maxrss), the database's size, the events kept and lost (as collect
prints them), and the wall time and peak RSS of `analyze stalls`, `analyze
pagecache` and `report` on it. For both halves: the load's own progress
(Lua builds finished, bytes dd copied), so the tax recording the host puts
on it is read side by side. Writes its section of bench/RESULTS.md.

usage: sudo bench/scale_all.py [--runs 5] [--duration 60]
"""
import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import benchlib as B


class Load:
    """Lua built in a loop (make -j2) and a dd flood, until stopped: then
    the builds finished and the bytes copied."""

    def __init__(self, lua, work):
        self.lua, self.work = lua, work

    def __enter__(self):
        log = os.path.join(self.work, "builds.log")
        open(log, "w").close()
        self.log = log
        loop = f"while :; do make -s clean >/dev/null; make -s -j2 linux >/dev/null 2>&1 && echo done >> {log}; done"
        self.make = subprocess.Popen(["sh", "-c", loop], cwd=self.lua, start_new_session=True)
        # SIGINT as dd expects it, even when the bench runs in the background
        # (where the shell set it ignored, and exec keeps it so).
        self.dd = subprocess.Popen(["dd", "if=/dev/zero", "of=/dev/null", "bs=1"], stderr=subprocess.PIPE, text=True,
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        return self

    def stop(self):
        """(Lua builds finished, bytes dd copied)."""
        os.killpg(self.make.pid, signal.SIGKILL)
        self.make.wait()
        self.dd.send_signal(signal.SIGINT)  # dd prints what it copied, then exits
        err = self.dd.communicate()[1]
        copied = re.search(r"^(\d+) bytes", err, re.M)
        if not copied:
            sys.exit(f"bench: dd printed no byte count: {err[-500:]}")
        return sum(1 for _ in open(self.log)), int(copied.group(1))

    def __exit__(self, *exc):
        if self.make.poll() is None:
            os.killpg(self.make.pid, signal.SIGKILL)
            self.make.wait()
        if self.dd.poll() is None:
            self.dd.kill()
            self.dd.wait()


def alone(lua, work, duration):
    with Load(lua, work) as load:
        time.sleep(duration)
        return load.stop()


def recorded(lua, work, duration):
    """The load while syspgo records the host: (load's progress, figures)."""
    db = os.path.join(work, "all.db")
    for f in glob.glob(db + "*"):
        os.unlink(f)
    with Load(lua, work) as load:
        wall, ru, _, err = B.run_measured([B.SYSPGO, "collect", "-o", db, "--all", "--duration", str(duration)])
        progress = load.stop()
    kept = re.search(r"recorded into\s+\S+:\s+(\d+)\s+events", err)
    lost = re.search(r"(\d+) events were LOST", err)
    fig = {"cpu": (ru.ru_utime + ru.ru_stime) * 1e9, "rss": ru.ru_maxrss * 1024, "wall": wall,
           "db": sum(os.path.getsize(f) for f in glob.glob(db + "*")),
           "kept": int(kept.group(1)) if kept else 0, "lost": int(lost.group(1)) if lost else 0}
    html = os.path.join(work, "all.html")
    for name, argv in (("stalls", ["analyze", db, "stalls"]), ("pagecache", ["analyze", db, "pagecache"]),
                       ("report", ["report", db, "-o", html])):
        t, r, _, _ = B.run_measured([B.SYSPGO] + argv)
        fig[name] = t
        fig[name + "_rss"] = r.ru_maxrss * 1024
    return progress, fig


def mib(xs):
    return B.fmt_range(xs, scale=1 << 20, unit="MiB")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--duration", type=int, default=60, help="seconds of each half of a round")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench: syspgo collect --all needs real root; run with sudo")
    work = B.work_dir("scale", a.runs)
    srcroot = os.path.join(work, "src")
    os.makedirs(srcroot)
    B.fetch_sources(srcroot, {"lua5.4": "lua5.4-*[0-9]"})
    lua = glob.glob(os.path.join(srcroot, "lua5.4-*[0-9]"))[0]
    base, rec, figs = [], [], []
    for i in range(a.runs):
        order = ("alone", "recorded") if i % 2 == 0 else ("recorded", "alone")
        for which in order:
            print(f"bench: round {i + 1}/{a.runs}: {which}", file=sys.stderr, flush=True)
            if which == "alone":
                base.append(alone(lua, work, a.duration))
            else:
                progress, fig = recorded(lua, work, a.duration)
                rec.append(progress)
                figs.append(fig)
    col = lambda key: [f[key] for f in figs]
    builds = lambda xs: f"{B.med([b for b, _ in xs]):g} ({min(b for b, _ in xs)}–{max(b for b, _ in xs)})"
    copied = lambda xs: mib([c for _, c in xs])

    def change(k):
        alone_med = B.med([x[k] for x in base])
        return f"{(B.med([x[k] for x in rec]) / alone_med - 1) * 100:+.1f}%" if alone_med else "none alone to compare"

    body = (f"The load: Lua 5.4's `make -j2 linux` (`apt-get source lua5.4`) in a loop beside `dd if=/dev/zero "
            f"of=/dev/null bs=1`, for {a.duration} s alone and {a.duration} s while `syspgo collect --all --duration "
            f"{a.duration}` records the host (default groups, lean tier), alternating which comes first; medians "
            f"of {a.runs} rounds (min–max).\n\n"
            "| the load | alone | while syspgo records the host | change |\n|---|---|---|---|\n"
            f"| Lua builds finished | {builds(base)} | {builds(rec)} | {change(0)} |\n"
            f"| bytes dd copied | {copied(base)} | {copied(rec)} | {change(1)} |\n\n"
            "| syspgo collect --all | median (min–max) |\n|---|---|\n"
            f"| collector CPU (user + system) | {B.fmt_range(col('cpu'), scale=1e9, unit='s', digits=2)} |\n"
            f"| collector peak RSS | {mib(col('rss'))} |\n"
            f"| database size | {mib(col('db'))} |\n"
            f"| events kept | {B.med(col('kept')):,.0f} ({min(col('kept')):,}–{max(col('kept')):,}) |\n"
            f"| events lost | {B.med(col('lost')):,.0f} ({min(col('lost')):,}–{max(col('lost')):,}) |\n"
            f"| `analyze stalls` wall, peak RSS | {B.fmt_range(col('stalls'), scale=1e9, unit='s', digits=2)}, "
            f"{mib(col('stalls_rss'))} |\n"
            f"| `analyze pagecache` wall, peak RSS | {B.fmt_range(col('pagecache'), scale=1e9, unit='s', digits=2)}, "
            f"{mib(col('pagecache_rss'))} |\n"
            f"| `report` wall, peak RSS | {B.fmt_range(col('report'), scale=1e9, unit='s', digits=2)}, "
            f"{mib(col('report_rss'))} |\n")
    B.write_section("scale: --all on a busy host", f"sudo bench/scale_all.py --runs {a.runs} --duration {a.duration}",
                    body)
    print(body)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
