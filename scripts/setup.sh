#!/usr/bin/env bash
#===- setup.sh - make a fresh Debian bookworm machine ready for syspgo ----===#
# Idempotent: installs the Debian packages syspgo builds and tests with (only
# those missing), enables deb-src (the benchmarks fetch real programs with
# `apt-get source`), mounts tracefs if absent, and builds into build/.
# Needs root. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: needs root to install packages and load eBPF programs; run: sudo $0" >&2
  exit 1
fi

PACKAGES=(
  cmake make g++ pkg-config git
  clang-19 llvm-19-dev lld-19 bolt-19
  libclang-rt-19-dev  # libFuzzer and the sanitizer runtimes for fuzz/run.sh: only a Recommends of clang-19
  libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev
  libsqlite3-dev sqlite3 libprotobuf-dev protobuf-compiler
  googletest libgtest-dev
  util-linux python3 python3-numpy rsync squashfs-tools chromium time valgrind
  erofs-utils  # mkfs.erofs: syspgo optimize --emit erofs (tests/coldstart_test.cc, bench/coldstart.py --images)
  sudo passwd nlohmann-json3-dev libcli11-dev
  golang-go google-perftools libgoogle-perftools-dev  # go tool pprof and gperftools (tests/pprof_test.cc, bench/pgo.py)
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# deb-src next to every deb source of Debian's archive, for `apt-get source`.
debsrc=/etc/apt/sources.list.d/syspgo-deb-src.sources
added_src=0
if [ ! -f "$debsrc" ] && ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
    [ -f "$f" ] || continue
    if grep -q '^Types:' "$f"; then
      sed -n '/^Types:/,/^$/p' "$f" | sed 's/^Types: .*/Types: deb-src/' >"$debsrc"
    else
      grep -E '^deb ' "$f" | sed 's/^deb /deb-src /' >"${debsrc%.sources}.list"
    fi
    added_src=1
    break
  done
fi

if [ ${#missing[@]} -gt 0 ] || [ "$added_src" = 1 ]; then
  echo "setup.sh: installing: ${missing[*]:-(none; refreshing package lists for deb-src)}"
  apt-get update -q >/dev/null
  [ ${#missing[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
fi

# ESLint for the report page's scripts (tests/report.cmake), from npm, into
# analyze/report/node_modules (ignored by git), at the versions its
# package.json pins.
if [ ! -x analyze/report/node_modules/.bin/eslint ]; then
  command -v npm >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm >/dev/null
  (cd analyze/report && npm install --no-package-lock --no-audit --no-fund --silent >/dev/null)
fi

# Classic tracepoints need tracefs.
if [ ! -d /sys/kernel/tracing/events ]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || mount -t debugfs nodev /sys/kernel/debug || true
fi
if [ ! -r /sys/kernel/btf/vmlinux ]; then
  echo "setup.sh: this kernel has no BTF (/sys/kernel/btf/vmlinux); syspgo's CO-RE programs need it" >&2
  exit 1
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
  useradd --create-home --shell /bin/sh --groups syspgo-test-extra syspgo-test
fi
testbin=/usr/local/libexec/syspgo-test
install -d -m 0755 -o root -g root "$testbin"
sudoers=/etc/sudoers.d/syspgo-test
cat >"$sudoers.new" <<EOF_SUDOERS
# syspgo's privilege tests (scripts/setup.sh, tests/privilege_test.cc)
syspgo-test ALL=(root) NOPASSWD: $testbin/*/syspgo, $testbin/*/syspgo-prefetch
EOF_SUDOERS
chmod 0440 "$sudoers.new"
visudo -cqf "$sudoers.new" && mv "$sudoers.new" "$sudoers"

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" 2>&1 | grep -E 'error|warning|Error' || true
test -x build/cli/syspgo || { echo "setup.sh: the build failed; run: cmake --build build" >&2; exit 1; }
echo "setup.sh: built build/cli/syspgo"
