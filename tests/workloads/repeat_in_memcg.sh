#!/usr/bin/env bash
#===- repeat_in_memcg.sh - a real program started N times in a memory cgroup ===#
# usage: repeat_in_memcg.sh LIMIT_MB TIMES CMD [ARGS...]
# Makes a child memory cgroup (v1) of this shell's own with a limit of
# LIMIT_MB, drops the page cache so the program's libraries are read into
# the cgroup, runs CMD TIMES times inside it, and prints what the kernel
# counted meanwhile: the cgroup's memory.stat (pgmajfault, and the page
# cache left), /proc/vmstat's file refaults, shadow nodes reclaimed and
# reclaim, so a test can hold syspgo's answer against the kernel's own
# counts. The cgroup is removed at the end. Needs root and the cgroup v1
# memory controller.
#===----------------------------------------------------------------------===#
set -euo pipefail
(($# >= 3)) || { echo "usage: $0 LIMIT_MB TIMES CMD [ARGS...]" >&2; exit 2; }
limit_mb=$1 times=$2
shift 2
memroot=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/self/mounts)
own=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' /proc/self/cgroup)
[[ -n $memroot && -n $own ]] || { echo "$0: no cgroup v1 memory controller" >&2; exit 2; }
cg=${memroot}${own%/}/syspgo-repeat-$$
cleanup() { for _ in $(seq 50); do rmdir "$cg" 2>/dev/null && return; sleep 0.1; done; }
trap cleanup EXIT

mkdir "$cg"
echo $((limit_mb * 1048576)) > "$cg/memory.limit_in_bytes"
sync
echo 3 > /proc/sys/vm/drop_caches
vm() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
counters=(workingset_refault_file workingset_nodereclaim pgsteal_kswapd pgsteal_direct pgmajfault)
declare -A before
for k in "${counters[@]}"; do before[$k]=$(vm "$k"); done
for ((i = 1; i <= times; i++)); do
  sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@" >/dev/null
done
stat() { awk -v k="$1" '$1 == k { print $2 }' "$cg/memory.stat"; }
echo "repeat_in_memcg: cgroup ${own%/}/syspgo-repeat-$$ limit $limit_mb MiB, $times runs of $1"
echo "repeat_in_memcg: memory.stat pgmajfault $(stat pgmajfault) failcnt $(cat "$cg/memory.failcnt")" \
  "max_usage $(($(cat "$cg/memory.max_usage_in_bytes") / 1048576)) MiB cache $(($(stat cache) / 1048576)) MiB"
for k in "${counters[@]}"; do
  echo "repeat_in_memcg: vmstat $k +$(($(vm "$k") - before[$k]))"
done
