#!/usr/bin/env bash
#===- setup.sh - make a fresh Debian bookworm machine ready for syspgo ----===#
# Idempotent: installs the Debian packages syspgo builds and tests with (only
# those missing), enables deb-src (the benchmarks fetch real programs with
# `apt-get source`), mounts tracefs if absent, and builds into build/,
# saying which packages it installs and which build step it is at.
# It creates no user and changes no sudoers: the privilege tests' user is
# made by scripts/test-setup.sh (and removed by scripts/test-teardown.sh).
# Needs root (it never calls sudo itself). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: needs root to install packages and load eBPF programs; run it as root" \
    "(or as a sudo user: sudo $0)" >&2
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
  nlohmann-json3-dev libcli11-dev
  help2man man-db  # the man pages are written at build time from each command's --help (cli/CMakeLists.txt)
  dpkg-dev  # dpkg-shlibdeps: cpack -G DEB declares the package's library dependencies (packaging/)
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
  echo "setup.sh: installing ${#missing[@]} Debian packages: ${missing[*]:-(none; refreshing package lists for deb-src)}"
  apt-get update -q >/dev/null
  # apt's own lines, one per package fetched and set up, as they happen.
  [ ${#missing[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o Dpkg::Use-Pty=0 "${missing[@]}" |
    { grep --line-buffered -E '^(Get:|Setting up )' || true; }
fi

# Classic tracepoints need tracefs.
if [ ! -d /sys/kernel/tracing/events ]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || mount -t debugfs nodev /sys/kernel/debug || true
fi
if [ ! -r /sys/kernel/btf/vmlinux ]; then
  echo "setup.sh: this kernel has no BTF (/sys/kernel/btf/vmlinux); syspgo's CO-RE programs need it" >&2
  exit 1
fi

# The build, one line per step ("[ 42%] Building CXX object analyze/...")
# and every warning or error, instead of minutes of silence.
echo "setup.sh: configuring build/ (cmake -S . -B build)"
# ccache, where the machine has it, makes a rebuild in a new clone take
# minutes less; nothing needs it.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
echo "setup.sh: building (cmake --build build -j$(nproc))"
steps() { grep --line-buffered -E '^\[ *[0-9]+%\] |error|warning' | grep --line-buffered -v '%\] Built target' || true; }
if ! cmake --build build -j"$(nproc)" 2>&1 | steps || [ ! -x build/cli/syspgo ]; then
  echo "setup.sh: the build failed; run: cmake --build build" >&2
  exit 1
fi
echo "setup.sh: built build/cli/syspgo (install it with: cmake --install build)"
