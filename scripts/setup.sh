#!/usr/bin/env bash
# Installs every dependency from Debian's packages, fetches the other server
# releases the tests run (scripts/fetch-servers.sh) and builds binrelay.
# Usage: ./scripts/setup.sh            (release build in build/)
#        BINRELAY_SANITIZE=1 ./scripts/setup.sh   (ASan/UBSan build in build-asan/)
#        BINRELAY_FUZZ=1 ./scripts/setup.sh       (clang: libFuzzer targets and the
#                                                  -Wthread-safety check, in build-fuzz/)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config
  libboost-dev libssl-dev libmariadb-dev libmariadb-dev-compat
  libspdlog-dev libabsl-dev libgtest-dev libgmock-dev zlib1g-dev libzstd-dev
  mariadb-server mariadb-client
)
if [ "${BINRELAY_FUZZ:-0}" = 1 ]; then
  packages+=(clang xxd)  # clang brings libFuzzer (libclang-common-*-dev)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
  # The Debian package starts a system mariadb service; binrelay's tests run
  # their own throwaway servers and do not need it.
fi

# Third-party binlog clients (npm registry) the integration tests run against
# binrelay: Node.js from Debian's packages if the machine has none.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "setup: installing nodejs npm"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm </dev/null
fi
if [ ! -d tests/clients/node_modules/@vlasky/zongji ] ||
   [ tests/clients/package-lock.json -nt tests/clients/node_modules/.package-lock.json ]; then
  echo "setup: installing the npm test clients (tests/clients)"
  (cd tests/clients && npm ci --no-audit --no-fund --loglevel=error </dev/null)
fi

# The other releases the integration tests run live (MySQL 9.7, MariaDB 10.5
# and 11.8), unpacked from Debian's archive into .servers/ without installing
# them (scripts/fetch-servers.sh; already fetched ones are left alone).
if [ "${BINRELAY_SKIP_SERVERS:-0}" != 1 ]; then
  ./scripts/fetch-servers.sh
fi

if [ "${BINRELAY_FUZZ:-0}" = 1 ]; then
  dir=build-fuzz
  extra=(-DBINRELAY_FUZZ=ON -DBINRELAY_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
         -DCMAKE_CXX_COMPILER=clang++)
elif [ "${BINRELAY_SANITIZE:-0}" = 1 ]; then
  dir=build-asan
  extra=(-DBINRELAY_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug)
else
  dir=build
  extra=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
fi
cmake -S . -B "$dir" -G Ninja "${extra[@]}"
cmake --build "$dir" -j "$(nproc)"
echo "setup: built $dir/binrelay"
