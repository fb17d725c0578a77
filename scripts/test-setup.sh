#!/usr/bin/env bash
#===- test-setup.sh - what the tests need beyond scripts/setup.sh ----------===#
# Run by scripts/test.sh after scripts/setup.sh. Idempotent. Needs root.
# Changes on the machine, all undone by scripts/test-teardown.sh:
#  - installs sudo and passwd if missing (the privilege tests run real sudo),
#    python3-torch (a real-program scenario trains a model with it), and podman
#    and runc (collect --container's test starts a container; runc because crun
#    refuses hybrid cgroup hierarchies);
#  - creates the system group syspgo-test-extra and the user syspgo-test
#    (home /home/syspgo-test), the unprivileged user of the privilege tests;
#  - writes /etc/sudoers.d/syspgo-test, which lets syspgo-test run the test
#    copies of syspgo and syspgo-prefetch below /usr/local/libexec/syspgo-test
#    as root, and nothing else; makes that directory (root's);
#  - installs nodejs and npm if missing, and ESLint from npm into
#    analyze/report/node_modules (in the clone; ignored by git) for the
#    report page's lint test (tests/report.cmake).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "test-setup.sh: needs root to create the test user; run it as root (or as a sudo user: sudo $0)" >&2
  exit 1
fi

# python3-torch: the real-program scenarios train a model with Debian's
# PyTorch (tests/diagnosis_real.cmake).
missing=()
for p in sudo passwd python3-torch podman runc; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "test-setup.sh: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
fi

# The privilege tests (tests/privilege_test.cc) run syspgo as a real
# unprivileged user through real sudo, as a site that grants syspgo in
# sudoers would: user syspgo-test, with a supplementary group of its own,
# may run syspgo and syspgo-prefetch as root and nothing else. The tests
# copy the binaries under test into a directory of their own below
# $testbin (root's, so the user can neither change them nor add a
# directory there), wherever the clone lives and whoever may enter it.
getent group syspgo-test-extra >/dev/null || groupadd --system syspgo-test-extra
if ! id syspgo-test >/dev/null 2>&1; then
  echo "test-setup.sh: creating the privilege tests' user syspgo-test and /etc/sudoers.d/syspgo-test"
  useradd --create-home --shell /bin/sh --groups syspgo-test-extra syspgo-test
fi
testbin=/usr/local/libexec/syspgo-test
install -d -m 0755 -o root -g root "$testbin"
sudoers=/etc/sudoers.d/syspgo-test
cat >"$sudoers.new" <<EOF_SUDOERS
# syspgo's privilege tests (scripts/test-setup.sh, tests/privilege_test.cc)
syspgo-test ALL=(root) NOPASSWD: $testbin/*/syspgo, $testbin/*/syspgo-prefetch
EOF_SUDOERS
chmod 0440 "$sudoers.new"
visudo -cqf "$sudoers.new" && mv "$sudoers.new" "$sudoers"

# ESLint for the report page's scripts (tests/report.cmake), from npm, into
# analyze/report/node_modules (ignored by git), at the versions its
# package.json pins.
if [ ! -x analyze/report/node_modules/.bin/eslint ]; then
  echo "test-setup.sh: installing ESLint into analyze/report/node_modules (npm)"
  command -v npm >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm >/dev/null
  (cd analyze/report && npm install --no-package-lock --no-audit --no-fund --silent >/dev/null)
fi
