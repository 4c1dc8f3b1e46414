#!/usr/bin/env bash
# Runs the whole test suite (unit and integration) against the build from
# scripts/setup.sh. Integration tests start their own throwaway MariaDB
# servers on loopback ports; nothing else needs to be running.
# Usage: ./scripts/test.sh [extra ctest args, e.g. -L unit]
#        BINRELAY_SANITIZE=1 ./scripts/test.sh   (runs the ASan/UBSan build)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build
[ "${BINRELAY_SANITIZE:-0}" = 1 ] && dir=build-asan
cmake --build "$dir" -j "$(nproc)"
# mariadbd refuses to run as root without --user; the harness handles that,
# but it needs a world-traversable temp dir for the datadir.
export TMPDIR="${TMPDIR:-/tmp}"
# The test processes share one initialised datadir per server flavour
# (tests/harness/server_sandbox.cc); each run starts from fresh ones.
rm -rf "$TMPDIR/binrelay-templates-$(id -u)"
# Each integration test starts its own servers on free ports, so tests run
# in parallel safely.
ctest --test-dir "$dir" --output-on-failure --timeout 900 -j "$(nproc)" "$@"
