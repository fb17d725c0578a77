#!/usr/bin/env bash
#===- test-teardown.sh - undo scripts/test-setup.sh ------------------------===#
# Removes what scripts/test-setup.sh made: the user syspgo-test and its home,
# the group syspgo-test-extra, /etc/sudoers.d/syspgo-test and
# /usr/local/libexec/syspgo-test, and analyze/report/node_modules. Leaves the
# Debian packages (sudo, passwd, podman, runc, nodejs, npm) installed: other
# software may use them. Idempotent. Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "test-teardown.sh: needs root to remove the test user; run it as root (or: sudo $0)" >&2
  exit 1
fi
rm -f /etc/sudoers.d/syspgo-test /etc/sudoers.d/syspgo-test.new
if id syspgo-test >/dev/null 2>&1; then
  userdel --remove syspgo-test 2>/dev/null || userdel syspgo-test
fi
if getent group syspgo-test-extra >/dev/null; then groupdel syspgo-test-extra; fi
rm -rf /usr/local/libexec/syspgo-test analyze/report/node_modules
echo "test-teardown.sh: removed the user syspgo-test, its group, its sudoers entry and the tests' ESLint"
