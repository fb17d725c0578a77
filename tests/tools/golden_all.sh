#!/bin/bash
# golden_all.sh - every analysis, report, export and artifact of syspgo over the
# fixtures, dumped into one directory, so that a change meant to keep output
# byte-identical (a refactor) can be proven so: run it before and after, then
# `diff -r BEFORE AFTER`.
#
# usage: tests/tools/golden_all.sh SYSPGO OUTDIR TEMPLATE_DB [DB[:BINARY]...]
#   SYSPGO       the syspgo binary to run
#   OUTDIR       where to write (made; must not exist)
#   TEMPLATE_DB  a profile DB of the current schema, made if missing with
#                `syspgo collect -- true` (which loads eBPF: run it under the
#                tests' lock), emptied here of every row but syscall_name's, as
#                the fixtures expect (tests/test_util.cc FixtureDb)
#   DB:BINARY    recorded runs to put through the same commands as they are
#                (the fixtures hold no CPU samples, so symbolization needs
#                one), with the --binary of the artifacts that need one
#                (default python3); a binary built with -g reaches the DWARF
#                and symbol-table paths
# Every command's stdout, stderr, exit status and written file land in OUTDIR,
# under names that say which command made them. Commands run in a fixed work
# directory with relative paths, so messages naming files do not differ
# between two OUTDIRs. GOLDEN_WORK names that directory (default
# /tmp/syspgo-golden-work): give two runs at once different ones, and the
# before and after runs the same.
set -u
if [ $# -lt 3 ]; then
  sed -n '7,24p' "$0" >&2
  exit 2
fi
syspgo=$(realpath "$1")
out=$2
template=$3
shift 3
here=$(cd "$(dirname "$0")/../.." && pwd)
work=${GOLDEN_WORK:-/tmp/syspgo-golden-work}
fixture=$work.fixture.db
[ -e "$out" ] && { echo "golden_all.sh: $out exists; give a new directory" >&2; exit 2; }
mkdir -p "$out"
out=$(realpath "$out")

if [ ! -f "$template" ]; then
  "$syspgo" collect -o "$template" -- true >/dev/null 2>&1 || { echo "golden_all.sh: collect failed" >&2; exit 1; }
fi
for t in $(sqlite3 "$template" "SELECT name FROM sqlite_master WHERE type='table' AND name != 'syscall_name'"); do
  sqlite3 "$template" "DELETE FROM $t" || exit 1
done

# run NAME CMD...: CMD's stdout, stderr and exit status as NAME.{out,err,rc};
# a file it wrote to `o` as NAME.file.
run() {
  local name=$1
  shift
  rm -f o
  "$@" >"$out/$name.out" 2>"$out/$name.err"
  echo $? >"$out/$name.rc"
  [ -f o ] && mv o "$out/$name.file"
}

analyses=$("$syspgo" analyze /dev/null no-such-analysis 2>&1 | sed -n 's/.*choose one of: //p' | tr -d ,)
kinds=$("$syspgo" optimize --help | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p')
[ -n "$analyses" ] && [ -n "$kinds" ] || { echo "golden_all.sh: found no analyses or kinds" >&2; exit 1; }
echo "$analyses" >"$out/analyses.list"
echo "$kinds" >"$out/kinds.list"

# Every command over every run of one DB (copied to `db` in the work
# directory): a fixture's older runs hold what its newest does not.
dump() {
  local tag=$1 src=$2 binary=${3:-$(realpath /usr/bin/python3)}
  rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
  cp "$src" db
  for r in $(sqlite3 db "SELECT id FROM run ORDER BY id"); do
    local t=$tag.run$r
    for a in $analyses; do
      for flags in "" "--json" "-v" "--all" "--json --all" "-v --all"; do
        # shellcheck disable=SC2086
        run "$t.analyze.$a${flags// /}" "$syspgo" analyze db "$a" --run "$r" $flags
      done
    done
    run "$t.export" "$syspgo" export db --run "$r" -o o
    run "$t.report" "$syspgo" report db --run "$r" -o o
    for k in $kinds; do
      run "$t.optimize.$k" "$syspgo" optimize db --run "$r" --emit "$k" -o o
      run "$t.optimize.$k.binary" "$syspgo" optimize db --run "$r" --emit "$k" --binary "$binary" -o o
    done
  done
  cd / && rm -rf "$work"
}

for f in "$here"/tests/data/*.sql; do
  name=$(basename "$f" .sql)
  cp "$template" "$fixture"
  sqlite3 "$fixture" <"$f" || { echo "golden_all.sh: $f does not load" >&2; exit 1; }
  dump "$name" "$fixture"
  rm -f "$fixture"
done
i=0
for arg in "$@"; do
  i=$((i + 1))
  dump "db$i" "${arg%%:*}" "$([ "$arg" != "${arg#*:}" ] && echo "${arg#*:}")"
done
echo "golden_all.sh: $(ls "$out" | wc -l) files in $out"
