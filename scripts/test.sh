#!/usr/bin/env bash
#===- test.sh - set up and run every test ----------------------------------===#
# The tests load real eBPF programs, drop caches and make memory cgroups, so
# they run as root, one at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
ctest --test-dir build --output-on-failure --timeout 600 "$@"
