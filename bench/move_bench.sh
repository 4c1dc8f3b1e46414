#!/usr/bin/env bash
# Move benchmark (issue 9): how long `binrelay move` takes to put a table on
# another server, against the usual offline tools doing the same copy on the
# same servers, in the same script:
#   - mariadb-dump --single-transaction | mariadb (one stream),
#   - mydumper -t CONC --rows (chunked, consistent) then myloader -t CONC.
# binrelay's time includes what the peers do not do: its consistent-snapshot
# checksum of every chunk on both servers and the cutover (lock, apply to the
# lock's position, unlock; rename_source = off so the next run finds the
# table). Each run drops the target's copy first; every copy is checked with
# CHECKSUM TABLE against the source's.
#
#   bench/move_bench.sh                 # SCALE=1: 1,000,000 sysbench-like rows (~250 MB)
#   SCALE=0.2 RUNS=1 bench/move_bench.sh
#
# Every server and binrelay is a child of this script on free loopback ports,
# stopped by pid on exit. Results: stdout and bench/results-move-DATE.md.
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${SCALE:-1}
RUNS=${RUNS:-3}
CONC=${CONC:-2}  # copy threads, mydumper/myloader threads
BINRELAY=${BINRELAY:-build/binrelay}
[ -x "$BINRELAY" ] || { echo "move_bench: $BINRELAY missing; run ./scripts/setup.sh" >&2; exit 1; }
for tool in mydumper myloader mariadb-dump; do
  command -v "$tool" >/dev/null || { echo "move_bench: $tool missing (apt-get install mydumper)" >&2; exit 1; }
done
TMP=$(mktemp -d "${BENCH_TMPDIR:-/tmp}/binrelay-mbench.XXXXXX")
chmod 755 "$TMP"
declare -A PIDS=()
cleanup() {
  for n in "${!PIDS[@]}"; do kill "${PIDS[$n]}" 2>/dev/null || true; wait "${PIDS[$n]}" 2>/dev/null || true; done
  [ "${KEEP_TMP:-0}" = 1 ] || rm -rf "$TMP"
}
trap cleanup EXIT
log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
user_args=(); [ "$(id -u)" -eq 0 ] && user_args=(--user=root)

start_server() {  # NAME SERVER_ID [options]
  local name=$1 id=$2; shift 2
  local port; port=$(free_port)
  mariadb-install-db --no-defaults --datadir="$TMP/$name" --auth-root-authentication-method=normal \
    "${user_args[@]}" >"$TMP/$name.install" 2>&1
  /usr/sbin/mariadbd --no-defaults "${user_args[@]}" --datadir="$TMP/$name" --port="$port" \
    --bind-address=127.0.0.1 --socket="$TMP/$name.sock" --log-error="$TMP/$name.err" \
    --server-id="$id" --skip-name-resolve --innodb-buffer-pool-size=1G \
    --innodb-flush-log-at-trx-commit=2 --sync-binlog=0 --max-allowed-packet=256M \
    --character-set-server=utf8mb4 --default-time-zone=+00:00 "$@" 2>/dev/null &
  PIDS[$name]=$!
  for _ in $(seq 1 120); do
    mariadb --no-defaults -uroot --socket="$TMP/$name.sock" -e 'SELECT 1' >/dev/null 2>&1 && break
    sleep 0.5
  done
  echo "$port" >"$TMP/$name.port"
}
on() { local n=$1; shift; mariadb --no-defaults -uroot --socket="$TMP/$n.sock" "$@"; }

log "servers: source, target (SCALE=$SCALE, CONC=$CONC)"
start_server source 1 --log-bin="$TMP/source/mysql-bin" --binlog-format=ROW --binlog-row-image=FULL
start_server target 2
for s in source target; do on "$s" -e "CREATE USER b@'%' IDENTIFIED BY 'b'; GRANT ALL ON *.* TO b@'%';"; done
ROWS=$(python3 -c "print(int(1000000*$SCALE))")
log "loading sbtest.sbtest1: $ROWS rows"
on source -e "CREATE DATABASE sbtest; CREATE TABLE sbtest.sbtest1 (id INT PRIMARY KEY,
  k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '',
  KEY k_1 (k)) ENGINE=InnoDB"
on source -e "INSERT INTO sbtest.sbtest1 SELECT seq, FLOOR(RAND(seq) * $ROWS),
  SUBSTRING(REPEAT(CONCAT(MD5(seq), '-'), 4), 1, 119), SUBSTRING(REPEAT(MD5(seq + 1), 2), 1, 59)
  FROM sbtest.seq_1_to_$ROWS"
WANT=$(on source -N -e 'CHECKSUM TABLE sbtest.sbtest1' | cut -f2)
SPORT=$(cat "$TMP/source.port"); TPORT=$(cat "$TMP/target.port")

fresh_target() { on target -e "DROP DATABASE IF EXISTS sbtest; DROP DATABASE IF EXISTS binrelay; CREATE DATABASE sbtest"; }
check() {  # TOOL
  local got; got=$(on target -N -e 'CHECKSUM TABLE sbtest.sbtest1' | cut -f2)
  [ "$got" = "$WANT" ] || { log "$1: target checksum $got, source $WANT"; exit 1; }
}
declare -A T
for run in $(seq 1 "$RUNS"); do
  fresh_target
  cat >"$TMP/move$run.cnf" <<CNF
[source]
host = 127.0.0.1
port = $SPORT
user = b
password = b
server_id = $((4000 + run))
start = current
[store]
dir = $TMP/store$run
[move]
name = bench$run
target_host = 127.0.0.1
target_port = $TPORT
target_user = b
target_password = b
tables = sbtest.sbtest1
copy_threads = $CONC
rename_source = off
CNF
  t0=$(now)
  "$BINRELAY" move --config "$TMP/move$run.cnf" 2>"$TMP/move$run.log" || { cat "$TMP/move$run.log" >&2; exit 1; }
  t1=$(now); check binrelay
  T[binrelay,$run]=$(python3 -c "print($t1-$t0)")
  copy=$(grep -o 'sbtest.sbtest1 copied' "$TMP/move$run.log" >/dev/null && python3 - "$TMP/move$run.log" <<'PY'
import re, sys, datetime
ts = {}
for line in open(sys.argv[1]):
    m = re.match(r'(\S+) info move \S+: (copy|catch up|checksum|cutover|done)$', line.strip())
    if m and m.group(2) not in ts:
        ts[m.group(2)] = datetime.datetime.fromisoformat(m.group(1))
print("%.2f %.2f" % ((ts["catch up"] - ts["copy"]).total_seconds(), (ts["cutover"] - ts["checksum"]).total_seconds()))
PY
)
  T[binrelay_copy,$run]=${copy% *}; T[binrelay_sum,$run]=${copy#* }

  fresh_target
  t0=$(now)
  mariadb-dump --no-defaults -uroot --socket="$TMP/source.sock" --single-transaction sbtest sbtest1 | on target sbtest
  t1=$(now); check mariadb-dump
  T[dump,$run]=$(python3 -c "print($t1-$t0)")

  fresh_target; rm -rf "$TMP/mydumper"
  t0=$(now)
  mydumper -h 127.0.0.1 -P "$SPORT" -u b -p b -B sbtest -t "$CONC" --rows 100000 \
    -o "$TMP/mydumper" >"$TMP/mydumper.log" 2>&1
  myloader -h 127.0.0.1 -P "$TPORT" -u b -p b -d "$TMP/mydumper" -t "$CONC" -o >"$TMP/myloader.log" 2>&1
  t1=$(now); check mydumper
  T[mydumper,$run]=$(python3 -c "print($t1-$t0)")
  log "run $run: binrelay move ${T[binrelay,$run]} s (copy ${T[binrelay_copy,$run]} s, checksum ${T[binrelay_sum,$run]} s), mariadb-dump|mariadb ${T[dump,$run]} s, mydumper+myloader ${T[mydumper,$run]} s"
done

out="bench/results-move-$(date +%Y-%m-%d).md"
{
  echo "# binrelay move vs mariadb-dump and mydumper ($(date -u +%Y-%m-%dT%H:%MZ))"
  echo
  echo "$ROWS rows of a sysbench-like table (int key, secondary index on k, CHAR(120)+CHAR(60));"
  echo "CONC=$CONC; one source and one target MariaDB 10.11 on this machine ($(nproc) cores, shared)."
  echo "binrelay's time is the whole move: preflight, copy, catch up, checksum of every chunk on both"
  echo "servers, cutover. Ratio = peer time / binrelay time (above 1: binrelay faster)."
  echo
  echo "| run | binrelay move | its copy | its checksum | mariadb-dump \\| mariadb | ratio | mydumper+myloader | ratio |"
  echo "|---|---|---|---|---|---|---|---|"
  for run in $(seq 1 "$RUNS"); do
    python3 -c "
b=${T[binrelay,$run]}; d=${T[dump,$run]}; m=${T[mydumper,$run]}
print('| $run | %.1f s | ${T[binrelay_copy,$run]} s | ${T[binrelay_sum,$run]} s | %.1f s | %.2f | %.1f s | %.2f |' % (b, d, d/b, m, m/b))"
  done
  python3 -c "
import statistics
b=[${T[binrelay,1]}$(for r in $(seq 2 "$RUNS"); do printf ',%s' "${T[binrelay,$r]}"; done)]
d=[${T[dump,1]}$(for r in $(seq 2 "$RUNS"); do printf ',%s' "${T[dump,$r]}"; done)]
m=[${T[mydumper,1]}$(for r in $(seq 2 "$RUNS"); do printf ',%s' "${T[mydumper,$r]}"; done)]
print('| median | %.1f s | | | %.1f s | %.2f | %.1f s | %.2f |' % (statistics.median(b), statistics.median(d), statistics.median(d)/statistics.median(b), statistics.median(m), statistics.median(m)/statistics.median(b)))"
} | tee "$out"
