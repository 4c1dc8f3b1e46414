#!/usr/bin/env bash
# Runs every libFuzzer target (tests/fuzz) for SECONDS each (default 300) on
# a corpus seeded from the recorded fixtures, the sample configs and small
# hand-made inputs, after replaying the kept regression inputs
# (tests/fuzz/regressions/TARGET/*: inputs that once crashed, hung or ran
# out of memory; each must now pass).
#
# Usage: bench/fuzz.sh [SECONDS] [TARGET...]
#   BINRELAY_FIXTURES_DIR   recorded fixtures (default ../shared/fixtures, else .fixtures:
#                           tests/fixtures/fetch_fixtures_test.sh fetches them)
#   FUZZ_WORK               corpora and crash files (default build-fuzz/corpus)
#   FUZZ_SEED               libFuzzer's -seed (default 0: a new one each run; CI sets 1)
# Builds build-fuzz with clang if it is missing (BINRELAY_FUZZ=1 scripts/setup.sh).
# Prints one line per target: executions, corpus size, new coverage; exits 1
# on any crash, timeout or out-of-memory (the input is kept in FUZZ_WORK/TARGET.crashes
# with the command that reproduces it).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=300
if [[ ${1:-} =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi
if [ "$seconds" -lt 1 ]; then echo "fuzz: SECONDS must be at least 1" >&2; exit 2; fi
targets=("$@")
((${#targets[@]})) || targets=(binlog_stream rows_event json client_protocol server_protocol config store_files
                             http_request)
fixtures=${BINRELAY_FIXTURES_DIR:-}
if [ -z "$fixtures" ]; then
  if [ -d ../shared/fixtures ]; then fixtures=../shared/fixtures; else fixtures=.fixtures; fi
fi
work=${FUZZ_WORK:-build-fuzz/corpus}

if [ ! -x build-fuzz/tests/fuzz/json_fuzz ]; then
  BINRELAY_FUZZ=1 ./scripts/setup.sh
fi

hex() { xxd -r -p > "$1"; }

seed() {  # seed TARGET DIR: fills DIR with the starting corpus of TARGET
  local t=$1 dir=$2
  case $t in
    binlog_stream|store_files)
      if [ -d "$fixtures" ]; then
        # Binlog and relay-log files, inflated, at most 256 KiB each.
        find "$fixtures" -type f ! -name '*.txt' ! -name '*.sql' ! -name '*.terms' \
             ! -name '*.md' ! -name '*.py' ! -name '*.pcap*' ! -name '*.packets.bin' | sort |
        while read -r f; do
          out="$dir/$(echo "$f" | tr '/' '_')"
          if [[ $f == *.gz ]]; then gzip -dc "$f" | head -c 262144 > "$out" || true
          else head -c 262144 "$f" > "$out"; fi
        done
      else
        echo "fuzz: no fixtures at $fixtures; $t starts from its regressions only" >&2
      fi
      ;;
    rows_event)
      # MySQL WRITE_ROWS v2 of (INT, VARCHAR(20), DECIMAL(10,2)): 7, 'hi', 1.50;
      # the same as MariaDB.
      for flavour in 00 01; do
        echo "$flavour 1800 010000000000 0000 0164 00 0174 00 03 030ff6 04 1400 0a02 00
              010000000000 0000 0200 03 07 00 07000000 02 6869 8000000132" |
          tr -d ' \n' | hex "$dir/write_$flavour"
      done
      ;;
    json)
      # Binary JSON documents (sql-common/json_binary.cc layout) and a diff.
      echo '00 0200 1c00 0e00 0100 0f00 0100 0c 1000 02 1300 61 62 05 78 7900 0200 0c00 0c 0a00 05 0100 0561' | hex "$dir/object"
      echo '02 0300 0e00 04 0100 05 ffff 0c 0d00 0178' | hex "$dir/array"
      echo '0f f6 04 0402 8000 0001' | hex "$dir/opaque_decimal"
      echo '0c 03 616263 ff 00 03 242e61 01 0c0131' | hex "$dir/string_then_diff"
      printf '{"a": [1, 2.5, "x", null, true, {"b": -7}], "c": "\\u00e9"}' > "$dir/text"
      ;;
    client_protocol)
      # A MariaDB greeting (native password), auth switch to caching_sha2,
      # 01 04, an OK; then an ERR.
      echo '5b0000 00 0a 352e352e352d31302e31312e362d4d617269614442 00 07000000 3031323334353637 00 fef7 21 0200 ff81 15 000000000000 0f000000 303132333435363738393031 00 6d7973716c5f6e61746976655f70617373776f726400
            2c0000 02 fe 63616368696e675f736861325f70617373776f726400 3031323334353637383930313233343536373839 00
            020000 04 0104
            070000 06 00000002000000
            160000 07 ff 1504 233238303030 4163636573732064656e696564' | tr -d ' \n' | hex "$dir/login"
      ;;
    server_protocol)
      # mode byte, a HandshakeResponse41 for user repl, then COM_REGISTER_SLAVE,
      # COM_BINLOG_DUMP and a SHOW statement.
      echo '02
            3e0000 01 0da2bf00 00000001 21 0000000000000000000000000000000000000000000000 7265706c00 14 3031323334353637383930313233343536373839 6d7973716c5f6e61746976655f70617373776f726400
            120000 00 15 a00f0000 00 00 00 ea0c 00000000 01000000
            1b0000 00 12 04000000 0000 a00f0000 62696e6c6f672e303030303031
            110000 00 03 53484f5720534c41564520484f535453' | tr -d ' \n' | hex "$dir/session"
      ;;
    config)
      cp conf/*.cnf "$dir/"
      ;;
    http_request)
      printf 'GET /status HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAccept: */*\r\n\r\n' > "$dir/status"
      printf 'GET /metrics?x=1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n' > "$dir/metrics"
      printf 'HEAD /healthz HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n' > "$dir/chunked"
      ;;
  esac
}

failed=0
for t in "${targets[@]}"; do
  bin=build-fuzz/tests/fuzz/${t}_fuzz
  corpus=$work/$t
  crashes=$work/$t.crashes
  mkdir -p "$corpus" "$crashes"
  if [ -z "$(ls -A "$corpus")" ]; then seed "$t" "$corpus"; fi
  # Regressions first: each must run clean.
  if [ -d "tests/fuzz/regressions/$t" ] && [ -n "$(ls -A "tests/fuzz/regressions/$t")" ]; then
    if ! "$bin" -rss_limit_mb=2048 -malloc_limit_mb=256 -timeout=10 "tests/fuzz/regressions/$t"/* \
        > "$work/$t.regressions.log" 2>&1; then
      echo "fuzz: $t: a kept regression input fails again; see $work/$t.regressions.log"
      failed=1
      continue
    fi
  fi
  log=$work/$t.log
  set +e
  "$bin" "$corpus" -max_total_time="$seconds" -max_len=262144 -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb=1024 -seed="${FUZZ_SEED:-0}" -print_final_stats=1 \
    -artifact_prefix="$crashes/" > "$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  size=$(ls "$corpus" | wc -l)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo 0)
  if [ $rc -ne 0 ]; then
    echo "fuzz: $t: FAILED after $execs executions; input and trace: $crashes, $log"
    echo "      reproduce: $bin $crashes/<file>"
    failed=1
  else
    echo "fuzz: $t: $execs executions in ${seconds}s, corpus $size inputs, coverage $cov edges"
  fi
done
exit $failed
