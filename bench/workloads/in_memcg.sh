#!/usr/bin/env bash
#===- in_memcg.sh - run a command in a new child memory cgroup (v1) --------===#
# For the benches: makes a child memory cgroup of this shell's own with a
# limit of LIMIT_MB MiB, drops the page cache (so pages are charged to the
# cgroup that reads them), runs CMD inside it and removes the cgroup
# afterwards, also when interrupted. Needs root and cgroup v1.
#
# usage: in_memcg.sh LIMIT_MB CMD [ARGS...]
#===----------------------------------------------------------------------===#
set -euo pipefail
[[ $# -ge 2 && $1 =~ ^[0-9]+$ ]] || { echo "usage: $0 LIMIT_MB CMD [ARGS...]" >&2; exit 2; }
limit_mb=$1
shift
memroot=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/self/mounts)
own=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' /proc/self/cgroup)
[[ -n $memroot && -n $own ]] || { echo "$0: no cgroup v1 memory controller here" >&2; exit 1; }
cg=${memroot}${own%/}/syspgo-bench-$$
mkdir "$cg"
child=
# Every task left in the cgroup (the command's own children too: an
# interrupted run left a clang behind, and the cgroup could not be removed).
cleanup() {
  local rc=$?
  [[ -z $child ]] || kill -TERM "$child" 2>/dev/null || true
  [[ -z $child ]] || wait "$child" 2>/dev/null || true
  for _ in $(seq 50); do
    xargs -r kill -KILL < "$cg/cgroup.procs" 2>/dev/null || true
    rmdir "$cg" 2>/dev/null && break
    sleep 0.1
  done
  [[ ! -d $cg ]] || echo "$0: could not remove $cg; remove it with rmdir" >&2
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
echo $((limit_mb << 20)) > "$cg/memory.limit_in_bytes"
sync
echo 3 > /proc/sys/vm/drop_caches
sh -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' sh "$cg" "$@" &
child=$!
wait "$child"
