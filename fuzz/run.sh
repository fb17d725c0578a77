#!/bin/sh
# fuzz/run.sh - build the libFuzzer targets with clang-19 and run each one for
# a bounded time.
#
#   fuzz/run.sh [--seconds N] [--build-dir DIR] [TARGET...]
#
# TARGET is a name under fuzz/corpus/ (plan, plan_replay, profile_db,
# erofs_image, cpu_samples, pprof);
# default: all of them that this tree builds. Each target starts from its
# seed corpus (fuzz/corpus/<target>/) and the saved crashes
# (fuzz/regressions/<target>/); inputs it finds go to
# DIR/work/<target>/corpus, never into the source tree. A crash, sanitizer
# report, hang (--timeout, 10 s) or broken promise stops the run, leaves the
# input in DIR/work/<target>/, and exits non-zero with what to do next.
# Defaults: 30 seconds per target, DIR = build/fuzz-clang (the directory the
# ctest entry fuzz_brief uses when the main build is build/).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
seconds=30
build="$root/build/fuzz-clang"  # beside the main build, which .gitignore leaves out
targets=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    -*) echo "fuzz/run.sh: unknown option '$1'; see --help" >&2; exit 2 ;;
    *) targets="$targets $1"; shift ;;
  esac
done
explicit=$targets
if [ -z "$targets" ]; then
  for d in "$root"/fuzz/corpus/*/; do targets="$targets $(basename "$d")"; done
fi
for t in $targets; do
  [ -d "$root/fuzz/corpus/$t" ] || { echo "fuzz/run.sh: no target '$t' (no fuzz/corpus/$t/)" >&2; exit 2; }
done

command -v clang++-19 >/dev/null || { echo "fuzz/run.sh: clang++-19 not found; apt-get install clang-19 libclang-rt-19-dev" >&2; exit 1; }
mkdir -p "$build"
# Configured once, and again on every run (quick): `make help` below lists
# the targets as the last configure saw them, so a target added since would
# be missed.
if [ ! -f "$build/CMakeCache.txt" ]; then
  set -- -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSYSPGO_FUZZ=ON
else
  set -- "$build"
fi
cmake "$@" >"$build/fuzz-configure.log" 2>&1 ||
  { tail -40 "$build/fuzz-configure.log" >&2; echo "fuzz/run.sh: configuring $build failed (log above)" >&2; exit 1; }
# A target whose reader this tree lacks is not built (fuzz/CMakeLists.txt):
# skip it unless it was asked for by name.
known=$(make -C "$build" help 2>/dev/null | sed -n 's/^\.\.\. fuzz_//p')
names=""
kept=""
for t in $targets; do
  if echo "$known" | grep -qx "$t"; then
    names="$names fuzz_$t"
    kept="$kept $t"
  elif [ -n "$explicit" ]; then
    echo "fuzz/run.sh: this tree does not build fuzz_$t (see fuzz/CMakeLists.txt)" >&2
    exit 2
  else
    echo "fuzz/run.sh: skipping $t: this tree does not have its reader"
  fi
done
targets=$kept
# shellcheck disable=SC2086  # the target names are words
make -C "$build" -j"$(nproc)" $names >"$build/fuzz-make.log" 2>&1 ||
  { tail -40 "$build/fuzz-make.log" >&2; echo "fuzz/run.sh: building$names failed (see $build/fuzz-make.log)" >&2; exit 1; }

status=0
for t in $targets; do
  bin=$(find "$build" -type f -name "fuzz_$t" -perm -u+x | head -1)
  work="$build/work/$t"
  mkdir -p "$work/corpus"
  regressions="$root/fuzz/regressions/$t"
  [ -d "$regressions" ] || regressions=""
  echo "== fuzz_$t: $seconds s"
  # shellcheck disable=SC2086  # $regressions is one path or nothing
  if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$work/" "$work/corpus" "$root/fuzz/corpus/$t" $regressions >"$work/log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
    echo "fuzz_$t: no crash in ${execs:-?} executions; corpus $(ls "$work/corpus" | wc -l) inputs in $work/corpus"
  else
    status=1
    grep -E "ERROR|syspgo fuzz|SUMMARY|Test unit written" "$work/log" | head -20 >&2 || true
    echo "fuzz_$t: FAILED (full log: $work/log). Reproduce with: $bin <input>. Fix the reader, then copy the" \
         "input into fuzz/regressions/$t/ so tests/fuzz_regression_test.cc replays it." >&2
  fi
done
exit $status
