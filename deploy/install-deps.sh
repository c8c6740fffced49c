#!/bin/bash
# install-deps.sh - the one set-up step: every Debian 12 package ntprof needs to build, test and run
# its test bed. Safe to run again; installs only what is missing.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "install-deps.sh: run as root (apt-get install)" >&2; exit 1; }

packages=(
  # build
  build-essential cmake ninja-build pkg-config git
  # tests/run.sh caches compiled objects across clones (CI builds a fresh clone each run)
  ccache
  # BPF: compiler, skeleton generator, loader
  clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev linux-libc-dev
  # control plane and libraries
  protobuf-compiler libprotobuf-dev protobuf-compiler-grpc libgrpc++-dev libabsl-dev libssl-dev openssl
  libspdlog-dev nlohmann-json3-dev libcli11-dev libsystemd-dev
  # the frames' CRC-32 (.ntp files, the spool) in a sixth of zlib's instructions
  libisal-dev
  # the collector's allocator: its join threads free what the receiving thread allocated
  libjemalloc-dev
  # USDT (probe contract) and tests
  systemtap-sdt-dev catch2 libclang-rt-14-dev
  # Prometheus: promtool checks the collector's /metrics exposition and the shipped rules, the
  # server scrapes a running collector (tests/collector/prometheus_scrape_test.sh)
  prometheus
  # fleet store: the collector writes joined commands to ClickHouse over HTTP (libcurl); the tests
  # start Debian's clickhouse-server themselves (tests/fleet/)
  libcurl4-openssl-dev clickhouse-server clickhouse-client
  # real SPDK v23.01.1 built by the tests (tests/spdk/real/build_spdk.sh; Debian's DPDK)
  libdpdk-dev libaio-dev libnuma-dev libibverbs-dev librdmacm-dev uuid-dev libncurses-dev
  python3-pyelftools nasm meson autoconf automake libtool
  # test bed: image build and VMs
  debootstrap cpio e2fsprogs qemu-system-x86 openssh-client iproute2 util-linux
  # tools the tests drive on this machine (chromium renders the HTML report headless)
  fio python3 jq chromium curl
  # Debian packages (cmake/Packaging.cmake): man pages from --help, and the package checker
  help2man lintian
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
