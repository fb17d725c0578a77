#!/usr/bin/env bash
#===- run_in_memcg.sh - run pagecache_thrash inside a memory cgroup (v1) ---===#
# Story 3 needs the program to run under a memory limit smaller than the
# library it executes from, and nothing else on the machine to have cached
# that library first. This script makes a child memory cgroup of the caller's
# own (cgroup v1, as on this VM; tests and users may not touch the root),
# drops the page cache so the library's pages are charged to the new cgroup
# when they are read, moves a shell into the cgroup and execs the program
# there, and always removes the cgroup afterwards, also when interrupted.
# The script's own shell stays outside, so it can clean up after the program.
#===----------------------------------------------------------------------===#
set -euo pipefail

prog=run_in_memcg.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
  cat <<EOF
usage: $prog [options]
Runs pagecache_thrash in a new child memory cgroup of this shell's own, with
a memory limit, after dropping the page cache; removes the cgroup afterwards.

  --limit-mb N    memory limit of the cgroup in MiB      (default 16, 4..1048576)
  --mb N          size of the library file in MiB        (default 64, 1..65536)
  --passes N      passes over the library                (default 3, 1..10000)
  --segment-kb N  passed to pagecache_thrash             (default 64, 0..1048576)
  --file PATH     library file to use, kept afterwards; generated if missing
                  or not N MiB (default: a temporary file in /var/tmp)
  --bin PATH      the pagecache_thrash program (default: beside this script,
                  then on PATH)

Needs root and the cgroup v1 memory controller. Dropping the page cache
affects the whole machine (its caches refill as they are used).

examples:
  $prog --bin build/examples/bin/pagecache_thrash --limit-mb 16    # thrashes
  $prog --bin build/examples/bin/pagecache_thrash --limit-mb 128   # fits
EOF
}

die() {
  echo "$prog: $*" >&2
  echo "run '$prog --help' for the options" >&2
  exit 2
}

# count NAME VALUE MIN MAX: a whole number in range, or a clear error.
count() {
  [[ $2 =~ ^[0-9]+$ ]] && (( 10#$2 >= $3 && 10#$2 <= $4 )) ||
    die "$1 wants a whole number from $3 to $4, not '$2'"
  echo $((10#$2))
}

limit_mb=16 mb=64 passes=3 segment_kb=64 file= bin=
while (($#)); do
  opt=$1
  case $opt in
    -h|--help) usage; exit 0 ;;
    --*=*) val=${opt#*=}; opt=${opt%%=*} ;;
    --*) (($# >= 2)) || die "$opt needs a value"; val=$2; shift ;;
    *) die "unexpected argument '$opt'" ;;
  esac
  shift
  case $opt in
    --limit-mb) limit_mb=$(count "$opt" "$val" 4 1048576) ;;
    --mb) mb=$(count "$opt" "$val" 1 65536) ;;
    --passes) passes=$(count "$opt" "$val" 1 10000) ;;
    --segment-kb) segment_kb=$(count "$opt" "$val" 0 1048576) ;;
    --file) file=$val ;;
    --bin) bin=$val ;;
    *) die "unknown option '$opt'" ;;
  esac
done

if [[ -z $bin ]]; then
  if [[ -x $here/pagecache_thrash ]]; then
    bin=$here/pagecache_thrash
  elif command -v pagecache_thrash >/dev/null; then
    bin=$(command -v pagecache_thrash)
  else
    die "cannot find pagecache_thrash; build it (make pagecache_thrash) and pass --bin BUILD/examples/bin/pagecache_thrash"
  fi
fi
[[ -x $bin ]] || die "--bin '$bin' is not an executable file"
(( EUID == 0 )) || die "making memory cgroups and dropping the page cache need root"

# Where the v1 memory hierarchy is mounted, and this shell's place in it.
memroot=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/self/mounts)
[[ -n $memroot ]] || die "no cgroup v1 memory controller is mounted (this script is for cgroup v1 hosts)"
own=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' /proc/self/cgroup)
[[ -n $own ]] || die "this shell is in no memory cgroup (see /proc/self/cgroup)"
parent=${memroot}${own%/}
cg=$parent/syspgo-thrash-$$

child= tmpfile=
cleanup() {
  local rc=$?
  # The program may still run if we were interrupted: stop it first, since
  # a cgroup with a task in it cannot be removed.
  if [[ -n $child ]] && kill -0 "$child" 2>/dev/null; then
    kill -TERM "$child" 2>/dev/null || true
    wait "$child" 2>/dev/null || true
  fi
  if [[ -d $cg ]]; then
    # A task that has exited can stay attached for a moment; retry briefly.
    local tries=0
    until rmdir "$cg" 2>/dev/null; do
      if (( ++tries > 50 )); then
        echo "$prog: could not remove cgroup $cg; remove it by hand with rmdir" >&2
        rc=1
        break
      fi
      sleep 0.1
    done
  fi
  [[ -z $tmpfile ]] || rm -f "$tmpfile"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# The library is written from outside the new cgroup: generating it inside
# would charge (and evict) its pages before the run even starts.
if [[ -z $file ]]; then
  tmpfile=$(mktemp /var/tmp/libthrash-XXXXXX.so)
  file=$tmpfile
fi
if [[ ! -f $file ]] || (( $(stat -c %s "$file") != mb * 1048576 )); then
  "$bin" --file "$file" --generate --mb "$mb"
fi

mkdir "$cg"
echo $((limit_mb * 1048576)) > "$cg/memory.limit_in_bytes"
# Pages read earlier by anyone stay charged to that reader's cgroup, and a
# warm cache would hide the cold first pass: start every run from disk.
sync
echo 3 > /proc/sys/vm/drop_caches

echo "$prog: cgroup $cg, memory limit $limit_mb MiB, library $file ($mb MiB)"
# A shell that moves itself into the cgroup and becomes the program: every
# page the program touches is charged to the cgroup from its first fault.
sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
  "$bin" --file "$file" --passes "$passes" --segment-kb "$segment_kb" &
child=$!
status=0
wait "$child" || status=$?
child=

peak=$(($(cat "$cg/memory.max_usage_in_bytes") / 1048576))
hits=$(cat "$cg/memory.failcnt")
majflt=$(awk '$1 == "pgmajfault" { print $2 }' "$cg/memory.stat")
echo "$prog: cgroup peak usage $peak MiB of $limit_mb MiB, limit reached $hits times, $majflt major faults"
exit "$status"
