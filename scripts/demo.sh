#!/usr/bin/env bash
#===- demo.sh - the main job on the bundled examples ----------------------===#
# Sets up, then shows in a few minutes what syspgo is for:
#  1. records story 1 (examples/checkpoint_stall: a training loop that stalls
#     on synchronous checkpoints) with `syspgo collect`;
#  2. diagnoses it (`syspgo analyze stalls`) and writes the HTML report;
#  3. rebuilds a small bundled bytecode interpreter (tests/workloads/pgo_interp)
#     with `syspgo pgo` (profile, sample-profile rebuilds keyed by lines and
#     by pseudo-probes, the faster kept, symbol order, BOLT) and compares every build with the plain one in paired rounds: the
#     instructions it runs (cachegrind, the same every run) decide, and a
#     stage slower in wall or CPU time is refused; each figure has its 95%
#     interval; where a stage gains nothing on this machine the output says so.
#     The line-keyed profile's counts come from the stacks (--sample-counts
#     stacks): its hot arithmetic is a call, whose time the stacks give to
#     the call's line, so the compiler inlines it (docs/profiles.md; the
#     probe-keyed one counts at the sampled IP, as probes need);
# and ends with a summary of what each step produced and where. Run it as
# root, or as a sudo user with sudo (it never calls sudo itself); under sudo
# the outputs are the invoking user's, as syspgo makes them. The set-up
# (scripts/setup.sh) installs missing Debian packages and builds, printing
# each package and build step; it creates no user.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "demo.sh: set-up (scripts/setup.sh): missing Debian packages, tracefs, the build in build/"
./scripts/setup.sh
syspgo=$PWD/build/cli/syspgo
work=$(mktemp -d /var/tmp/syspgo-demo-XXXXXX)
chmod 755 "$work"
# syspgo writes as the user who ran sudo: give them the directory.
[ -n "${SUDO_UID:-}" ] && [ -n "${SUDO_GID:-}" ] && chown "$SUDO_UID:$SUDO_GID" "$work"
step() { printf '\n== %s\n' "$*"; }

step "1/3 syspgo collect: a training loop with a 50 MiB checkpoint every 5th step"
"$syspgo" collect -o "$work/stall.db" -- build/examples/bin/checkpoint_stall --steps 10 --period 5 --mb 50 \
  --step-ms 100 "$work" >/dev/null

step "2/3 syspgo analyze stalls: why the loop stalls, and what to do"
"$syspgo" analyze "$work/stall.db" stalls
"$syspgo" report "$work/stall.db" -o "$work/stall.html" 2>/dev/null

step "3/3 syspgo pgo: build, profile, rebuild with the profile and BOLT, compare with the plain build"
cp -r tests/workloads/pgo_interp "$work/pgo-src"
[ -n "${SUDO_UID:-}" ] && [ -n "${SUDO_GID:-}" ] && chown -R "$SUDO_UID:$SUDO_GID" "$work/pgo-src"
(cd "$work/pgo-src" && "$syspgo" pgo --build 'make clean >/dev/null; make' --binary ./interp \
  --train './interp train 100' --freq 9999 --sample-counts stacks --eval './interp eval 5' \
  --eval-metric instructions --runs 10 \
  --dir "$work/pgo")

step "what each step produced"
printf '%-28s %s\n' \
  "profile database" "$work/stall.db" \
  "HTML report (open it)" "$work/stall.html" \
  "pgo manifest, per stage" "$work/pgo/manifest.json" \
  "pgo summary (for CI)" "$work/pgo/summary.json" \
  "sample profile" "$work/pgo/profile/sample.prof" \
  "symbol order" "$work/pgo/profile/order.txt" \
  "BOLT profile" "$work/pgo/profile/bolt.fdata" \
  "final binary" "$work/pgo-src/interp"
echo "(remove $work when done)"
