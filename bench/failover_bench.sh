#!/usr/bin/env bash
# Failover benchmark: how long after a primary dies binrelay streams from the
# promoted standby, and how long the promoted server's first transaction then
# takes to reach binrelay's GTID replica and an apply pipeline's target;
# against a plain replica of the primary re-pointed by hand
# (CHANGE MASTER TO ... MASTER_USE_GTID = slave_pos / SOURCE_AUTO_POSITION = 1)
# the moment the standby is promoted, in the same round.
#
# Each round is a fresh topology: primary P; binrelay serve following P
# ([source] candidates = S, failover_after = $DETECT) with an apply pipeline
# into T; standby S (binrelay's replica by GTID, read_only = ON); G (binrelay's
# replica by GTID); H (P's own replica by GTID, the peer). P takes 200 rows,
# everything catches up, P is killed (SIGKILL), and after $PROMOTE_AFTER
# seconds (each value in the list is a round kind) the procedure runs as an
# orchestrator would: S executes binrelay's stored GTIDs, is promoted
# (RESET SLAVE ALL, read_only = OFF), H is re-pointed to S at once (no human
# delay), and a marker row is inserted on S. Pollers (10 ms) time binrelay's
# switch (/status source_switches) and the marker's arrival on G, T and H.
#
#   bench/failover_bench.sh                              # MariaDB 10.11, RUNS=3
#   FLAVOUR=mysql-9.7 bench/failover_bench.sh            # MySQL 9.7 (fetched)
#   DETECT=1s PROMOTE_AFTER="0 3" RUNS=3                 # the defaults
#
# Results: stdout and bench/results-failover-[mysql97-]DATE.md.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
DETECT=${DETECT:-1s}
PROMOTE_AFTER=${PROMOTE_AFTER:-0 3}
BINRELAY=${BINRELAY:-build/binrelay}
BUFFER_POOL=${BUFFER_POOL:-64M}
[ -x "$BINRELAY" ] || { echo "failover_bench: $BINRELAY missing; run ./scripts/setup.sh" >&2; exit 1; }
[ "${BENCH_NICE:-}" = 1 ] || BENCH_NICE=1 exec nice -n 10 "$0" "$@"
source bench/lib.sh
select_flavour failover_bench
PW=bench-pw
declare -A PIDS=()
TMP=""
cleanup_round() {
  local k
  for k in "${!PIDS[@]}"; do kill -9 "${PIDS[$k]}" 2>/dev/null || true; wait "${PIDS[$k]}" 2>/dev/null || true; done
  PIDS=()
  if [ -n "$TMP" ] && [ "${KEEP_TMP:-0}" != 1 ]; then rm -rf "$TMP"; fi
}
trap cleanup_round EXIT

if [ "$SERVER_MYSQL" = 1 ]; then
  GTID_ARGS=(--gtid-mode=ON --enforce-gtid-consistency=ON)
  GRANTS="REPLICATION SLAVE, REPLICATION CLIENT, SELECT"
  STOP="STOP REPLICA" START="START REPLICA" RESET="RESET REPLICA ALL"
  STORED_SQL="SELECT @@GLOBAL.gtid_executed"
  WAIT_FN=WAIT_FOR_EXECUTED_GTID_SET
else
  GTID_ARGS=(--log-slave-updates --gtid-strict-mode=ON)
  GRANTS="REPLICATION SLAVE, BINLOG MONITOR, SELECT"
  STOP="STOP SLAVE" START="START SLAVE" RESET="RESET SLAVE ALL"
  STORED_SQL="SELECT @@GLOBAL.gtid_binlog_pos"
  WAIT_FN=MASTER_GTID_WAIT
fi
# CHANGE MASTER TO a GTID source in the flavour's words: HOST PORT USER
change_to() {
  if [ "$SERVER_MYSQL" = 1 ]; then
    echo "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=$1, SOURCE_USER='$2',
      SOURCE_PASSWORD='$PW', SOURCE_AUTO_POSITION=1, GET_SOURCE_PUBLIC_KEY=1,
      SOURCE_CONNECT_RETRY=1, SOURCE_HEARTBEAT_PERIOD=1"
  else
    echo "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$1, MASTER_USER='$2',
      MASTER_PASSWORD='$PW', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1,
      MASTER_HEARTBEAT_PERIOD=1"
  fi
}
wait_until() {  # SECONDS CMD...: polls every 50 ms
  local limit=$1; shift
  for _ in $(seq 1 $((limit * 20))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.05; done
  echo "failover_bench: timed out waiting for: $*" >&2; return 1
}
has_rows() { [ "$(on "$1" -N -e "SELECT COUNT(*) FROM app.t" 2>/dev/null)" = "$2" ]; }
# poll NAME CMD...: in the background, writes the time CMD first succeeds
# to $TMP/t.NAME (checks every 10 ms, gives up after 60 s).
POLLERS=()
poll() {
  local name=$1; shift
  ( for _ in $(seq 1 6000); do
      if "$@" >/dev/null 2>&1; then now >"$TMP/t.$name"; exit 0; fi
      sleep 0.01
    done ) &
  POLLERS+=($!)
}
switched() { curl -sf "http://127.0.0.1:$HPORT/status" | grep -Eq '"source_switches": ?1[,}]'; }
has_marker() { [ "$(on "$1" -N -e "SELECT COUNT(*) FROM app.t WHERE id = 1000000" 2>/dev/null)" = 1 ]; }

round() {  # round KIND(promote-after seconds) N
  local promote_after=$1 n=$2
  TMP=$(mktemp -d "${BENCH_TMPDIR:-/tmp}/binrelay-fobench.XXXXXX")
  chmod 755 "$TMP"
  start_server p 1 --log-bin="$TMP/p/binlog" --binlog-format=ROW "${GTID_ARGS[@]}"
  start_server s 5 --log-bin="$TMP/s/binlog" --binlog-format=ROW --read-only=1 "${GTID_ARGS[@]}"
  start_server g 6 --log-bin="$TMP/g/binlog" --binlog-format=ROW "${GTID_ARGS[@]}"
  start_server h 7 --log-bin="$TMP/h/binlog" --binlog-format=ROW "${GTID_ARGS[@]}"
  start_server t 8 --log-bin="$TMP/t/binlog" --binlog-format=ROW "${GTID_ARGS[@]}"
  local pport sport tport; pport=$(cat "$TMP/p.port"); sport=$(cat "$TMP/s.port"); tport=$(cat "$TMP/t.port")
  on p -e "CREATE USER repl@'%' IDENTIFIED BY '$PW'; GRANT $GRANTS ON *.* TO repl@'%';
    CREATE DATABASE app; CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(64))"
  on t -e "CREATE USER applier@'%' IDENTIFIED BY '$PW'; GRANT ALL ON *.* TO applier@'%';
    CREATE DATABASE app; CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(64))"
  local created; created=$(on p -N -e "$STORED_SQL")  # the pipeline starts after the DDL
  LPORT=$(free_port); HPORT=$(free_port)
  mkdir -p "$TMP/store"
  cat >"$TMP/binrelay.cnf" <<CNF
[source]
host = 127.0.0.1
port = $pport
user = repl
password = $PW
server_id = 4001
start = earliest
candidates = 127.0.0.1:$sport
failover_after = $DETECT
get_server_public_key = on
[store]
dir = $TMP/store
[listen]
address = 127.0.0.1
port = $LPORT
server_id = 4002
user = replica
password = $PW
[http]
address = 127.0.0.1:$HPORT
[apply.t]
target_host = 127.0.0.1
target_port = $tport
target_user = applier
target_password = $PW
target_get_server_public_key = on
tables = app.t
start = gtid:$created
flush_interval = 100ms
CNF
  chmod 600 "$TMP/binrelay.cnf"
  "$BINRELAY" serve --config "$TMP/binrelay.cnf" >"$TMP/binrelay.log" 2>&1 &
  PIDS[binrelay]=$!
  wait_until 30 curl -sf "http://127.0.0.1:$HPORT/status"
  for r in s g; do on "$r" -e "$(change_to "$LPORT" replica); $START"; done
  on h -e "$(change_to "$pport" repl); $START"
  on p -e "INSERT INTO app.t SELECT seq, 'before' FROM (WITH RECURSIVE c(seq) AS (SELECT 1 UNION ALL SELECT seq + 1 FROM c WHERE seq < 200) SELECT seq FROM c) x"
  for r in s g h t; do wait_until 60 has_rows "$r" 200; done

  local t_kill t_promoted t_marker stored
  t_kill=$(now)
  kill -9 "${PIDS[p]}"; wait "${PIDS[p]}" 2>/dev/null || true; unset 'PIDS[p]'
  poll switch switched
  sleep "$promote_after"
  # What binrelay stored, asked on its listener as on a server.
  stored=$("$CLIENT" --no-defaults --protocol=TCP -h127.0.0.1 -P"$LPORT" -ureplica -p"$PW" -N \
    -e "$STORED_SQL")
  [ "$(on s -N -e "SELECT $WAIT_FN('$stored', 60)")" = 0 ] ||
    { echo "failover_bench: the standby did not execute binrelay's $stored" >&2; exit 1; }
  on s -e "$STOP; $RESET; SET GLOBAL read_only = 0"
  t_promoted=$(now)
  on h -e "$STOP; $(change_to "$sport" repl); $START"
  on s -e "INSERT INTO app.t VALUES (1000000, 'marker')"
  t_marker=$(now)
  poll g has_marker g; poll t has_marker t; poll h has_marker h
  wait "${POLLERS[@]}"
  POLLERS=()
  for f in switch g t h; do
    [ -f "$TMP/t.$f" ] || { echo "failover_bench: $f never happened; binrelay log:" >&2; tail -20 "$TMP/binrelay.log" >&2; exit 1; }
  done
  row=$(python3 - "$n" "$promote_after" "$t_kill" "$t_promoted" "$t_marker" "$(cat "$TMP/t.switch")" \
    "$(cat "$TMP/t.g")" "$(cat "$TMP/t.t")" "$(cat "$TMP/t.h")" <<'PY'
import sys
n, after = sys.argv[1], sys.argv[2]
kill, promoted, marker, switch, g, t, h = map(float, sys.argv[3:])
ms = lambda x: round(x * 1000)
print(f"{n} {after} {ms(switch - kill)} {ms(switch - promoted)} {ms(g - marker)} {ms(t - marker)} {ms(h - marker)}")
PY
)
  cleanup_round
  TMP=""
  log "round $n, promoted ${promote_after}s after the kill: $row"
  ROWS+=("$row")
}

declare -a ROWS=()
for n in $(seq 1 "$RUNS"); do
  for after in $PROMOTE_AFTER; do
    round "$after" "$n"
  done
done

out="bench/results-failover-${REPORT_TAG}$(date +%Y-%m-%d).md"
python3 - "$SERVER_NAME" "$DETECT" "${ROWS[@]}" >"$out" <<'PY'
import statistics, sys
name, detect = sys.argv[1], sys.argv[2]
rows = [r.split() for r in sys.argv[3:]]
print(f"# Failover: binrelay following the promoted standby vs a replica re-pointed by hand ({name})\n")
print(f"failover_after = {detect}; 2 shared cores; each round a fresh topology (primary, binrelay,")
print("standby fed by binrelay, binrelay's GTID replica G, an apply target T, the primary's own")
print("replica H re-pointed by a script the moment the standby is promoted). Times in ms;")
print("'promoted' is when the standby took writes, 'marker' when its first transaction committed.\n")
print("| round | promoted after kill | kill -> binrelay switched | promoted -> switched | marker -> G (via binrelay) | marker -> T (apply) | marker -> H (by hand) | G / H |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    g, h = int(r[4]), int(r[6])
    print(f"| {r[0]} | {r[1]} s | {r[2]} | {r[3]} | {r[4]} | {r[5]} | {r[6]} | {g / max(h, 1):.1f} |")
for after in sorted({r[1] for r in rows}, key=float):
    sel = [r for r in rows if r[1] == after]
    med = [statistics.median(int(r[i]) for r in sel) for i in range(2, 7)]
    print(f"| median | {after} s | {med[0]:.0f} | {med[1]:.0f} | {med[2]:.0f} | {med[3]:.0f} | {med[4]:.0f} | {med[2] / max(med[4], 1):.1f} |")
PY
cat "$out"
