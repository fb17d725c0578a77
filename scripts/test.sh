#!/usr/bin/env bash
#===- test.sh - set up and run every test ----------------------------------===#
# The tests load real eBPF programs, drop caches and make memory cgroups, so
# they run as root, one at a time. scripts/setup.sh installs and builds;
# scripts/test-setup.sh adds what only the tests need (the privilege tests'
# user and sudoers entry, ESLint), which scripts/test-teardown.sh removes.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/test-setup.sh
# Under `sudo ./scripts/test.sh`, syspgo would act for the user who ran sudo
# in every test (common/identity.h), in test directories that are root's.
# The tests run syspgo as root, and the privilege tests make their own sudo
# users (tests/privilege_test.cc).
unset SUDO_UID SUDO_GID SUDO_USER SUDO_COMMAND
ctest --test-dir build --output-on-failure --timeout 600 "$@"
