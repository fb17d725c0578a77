#!/usr/bin/env bash
#===- demo.sh - the main job on the bundled example -----------------------===#
# Sets up, then records examples/fileio_demo (writes 32 MiB, fsyncs, reads it
# back) under `syspgo collect`, and prints `syspgo analyze files`.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
work=$(mktemp -d /var/tmp/syspgo-demo-XXXXXX)
trap 'rm -rf "$work"' EXIT
echo
echo "== syspgo collect -o $work/demo.db -- fileio_demo $work/demo.dat 32"
build/cli/syspgo collect -o "$work/demo.db" -- build/examples/bin/fileio_demo "$work/demo.dat" 32
echo
echo "== syspgo analyze $work/demo.db files"
build/cli/syspgo analyze "$work/demo.db" files
