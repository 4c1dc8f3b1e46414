#!/usr/bin/env bash
# Semi-sync benchmark: the commit latency a MariaDB primary sees
# when binrelay is its semi-synchronous replica ([source] semi_sync = on,
# [store] sync = transaction) against a real MariaDB replica in the same
# role (rpl_semi_sync_slave_enabled), on the same primary in the same run,
# plus the primary with semi-sync off for reference. The primary is durable
# (sync_binlog=1, innodb_flush_log_at_trx_commit=1) and waits AFTER_SYNC.
# Each round commits N single-row transactions from a stored procedure
# that times every commit with SYSDATE(6) (a client round trip is not in
# the figure); rounds alternate the ACKers.
#
#   bench/semisync_bench.sh             # N=2000 commits, ROUNDS=3
#
# Note what each ACK promises: binrelay acknowledges after fdatasync of its
# store; MariaDB's replica after writing its relay log (sync_relay_log
# decides when that is synced; its default syncs every 10000 events).
# Results: stdout and bench/results-semisync-DATE.md.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-2000}
ROUNDS=${ROUNDS:-3}
BINRELAY=${BINRELAY:-build/binrelay}
[ -x "$BINRELAY" ] || { echo "semisync_bench: $BINRELAY missing; run ./scripts/setup.sh" >&2; exit 1; }
TMP=$(mktemp -d "${BENCH_TMPDIR:-/tmp}/binrelay-ssbench.XXXXXX")
chmod 755 "$TMP"
declare -A PIDS=()
cleanup() {
  for n in "${!PIDS[@]}"; do kill "${PIDS[$n]}" 2>/dev/null || true; wait "${PIDS[$n]}" 2>/dev/null || true; done
  [ "${KEEP_TMP:-0}" = 1 ] || rm -rf "$TMP"
}
trap cleanup EXIT
log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
user_args=(); [ "$(id -u)" -eq 0 ] && user_args=(--user=root)

start_server() {  # NAME SERVER_ID [options]
  local name=$1 id=$2; shift 2
  local port; port=$(free_port)
  mariadb-install-db --no-defaults --datadir="$TMP/$name" --auth-root-authentication-method=normal \
    "${user_args[@]}" >"$TMP/$name.install" 2>&1
  /usr/sbin/mariadbd --no-defaults "${user_args[@]}" --datadir="$TMP/$name" --port="$port" \
    --bind-address=127.0.0.1 --socket="$TMP/$name.sock" --log-error="$TMP/$name.err" \
    --server-id="$id" --skip-name-resolve "$@" 2>/dev/null &
  PIDS[$name]=$!
  for _ in $(seq 1 120); do
    mariadb --no-defaults -uroot --socket="$TMP/$name.sock" -e 'SELECT 1' >/dev/null 2>&1 && break
    sleep 0.5
  done
  echo "$port" >"$TMP/$name.port"
}
on() { local n=$1; shift; mariadb --no-defaults -uroot --socket="$TMP/$n.sock" "$@"; }
status() { on source -N -e "SHOW GLOBAL STATUS LIKE '$1'" | cut -f2; }

start_server source 1 --log-bin="$TMP/source/mysql-bin" --binlog-format=ROW --sync-binlog=1 \
  --innodb-flush-log-at-trx-commit=1 --rpl-semi-sync-master-wait-point=AFTER_SYNC \
  --rpl-semi-sync-master-timeout=10000
start_server replica 2 --rpl-semi-sync-slave-enabled=ON --log-bin="$TMP/replica/mysql-bin"
SPORT=$(cat "$TMP/source.port")
PW=bench-pw
on source <<SQL
CREATE USER repl@'%' IDENTIFIED BY '$PW';
GRANT REPLICATION SLAVE, BINLOG MONITOR, REPLICATION MASTER ADMIN, SELECT ON *.* TO repl@'%';
CREATE DATABASE bench;
CREATE TABLE bench.t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(100));
DELIMITER //
CREATE PROCEDURE bench.commits(n INT)
BEGIN
  DECLARE i INT DEFAULT 0; DECLARE t0 DATETIME(6); DECLARE c INT;
  CREATE OR REPLACE TEMPORARY TABLE bench.lat (us BIGINT);
  WHILE i < n DO
    SET t0 = SYSDATE(6);
    INSERT INTO bench.t (v) VALUES (REPEAT('x', 100));
    INSERT INTO bench.lat VALUES (TIMESTAMPDIFF(MICROSECOND, t0, SYSDATE(6)));
    SET i = i + 1;
  END WHILE;
  SET c = FLOOR(n * 0.5);
  SELECT us INTO @p50 FROM bench.lat ORDER BY us LIMIT c, 1;
  SET c = FLOOR(n * 0.99);
  SELECT us INTO @p99 FROM bench.lat ORDER BY us LIMIT c, 1;
  SELECT @p50, @p99;
END//
DELIMITER ;
SQL
on replica -e "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$SPORT, MASTER_USER='repl',
  MASTER_PASSWORD='$PW', MASTER_USE_GTID=slave_pos"

LPORT=$(free_port); HPORT=$(free_port)
mkdir -p "$TMP/store"
cat >"$TMP/binrelay.cnf" <<CNF
[source]
host = 127.0.0.1
port = $SPORT
user = repl
password = $PW
server_id = 4001
ssl_mode = disabled
start = current
semi_sync = on
[store]
dir = $TMP/store
sync = transaction
[listen]
address = 127.0.0.1
port = $LPORT
server_id = 1
user = replica
password = $PW
[http]
address = 127.0.0.1:$HPORT
CNF
chmod 600 "$TMP/binrelay.cnf"

wait_clients() {  # wait until the source has exactly $1 semi-sync replicas
  for _ in $(seq 1 100); do [ "$(status Rpl_semi_sync_master_clients)" = "$1" ] && return 0; sleep 0.2; done
  echo "semisync_bench: the source never had $1 semi-sync replica(s)" >&2; exit 1
}
measure() {  # measure -> "p50 p99" in microseconds; checks no_tx did not grow
  local no0; no0=$(status Rpl_semi_sync_master_no_tx)
  local r; r=$(on source -N -e "CALL bench.commits($N)")
  local no1; no1=$(status Rpl_semi_sync_master_no_tx)
  if [ "$(on source -N -e 'SELECT @@rpl_semi_sync_master_enabled')" = 1 ] && [ "$no1" != "$no0" ]; then
    echo "semisync_bench: $((no1 - no0)) commits went without an ACK" >&2; exit 1
  fi
  echo "$r" | tr '\t' ' '
}

declare -a ROWS=()
for round in $(seq 1 "$ROUNDS"); do
  on source -e "SET GLOBAL rpl_semi_sync_master_enabled = OFF"
  async=$(measure); log "round $round: semi-sync off: p50/p99 $async us"

  on source -e "SET GLOBAL rpl_semi_sync_master_enabled = ON"
  "$BINRELAY" serve --config "$TMP/binrelay.cnf" >"$TMP/binrelay.$round.log" 2>&1 &
  PIDS[binrelay]=$!
  wait_clients 1
  br=$(measure); log "round $round: binrelay ACKs: p50/p99 $br us"
  kill "${PIDS[binrelay]}"; wait "${PIDS[binrelay]}" 2>/dev/null || true; unset 'PIDS[binrelay]'

  on replica -e "START SLAVE"
  wait_clients 1
  rep=$(measure); log "round $round: MariaDB replica ACKs: p50/p99 $rep us"
  on replica -e "STOP SLAVE"
  wait_clients 0
  ROWS+=("$round $async $br $rep")
done

out="bench/results-semisync-$(date +%Y-%m-%d).md"
python3 - "$N" "${ROWS[@]}" >"$out" <<'PY'
import statistics, sys
n = sys.argv[1]
rows = [list(map(int, r.split())) for r in sys.argv[2:]]
print(f"# Semi-sync commit latency: binrelay vs a MariaDB replica as the ACKer\n")
print(f"{n} single-row commits per cell, timed inside the primary (SYSDATE(6) around each")
print("INSERT); MariaDB 10.11 primary with sync_binlog=1, innodb_flush_log_at_trx_commit=1,")
print("AFTER_SYNC; 2 shared cores. binrelay ACKs after fdatasync of its store; the replica")
print("after writing its relay log. Ratio = binrelay / replica (below 1: binrelay faster).\n")
print("| round | async p50 | async p99 | binrelay p50 | binrelay p99 | replica p50 | replica p99 | p50 ratio | p99 ratio |")
print("|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r[0]} | {r[1]} us | {r[2]} us | {r[3]} us | {r[4]} us | {r[5]} us | {r[6]} us | {r[3]/r[5]:.2f} | {r[4]/r[6]:.2f} |")
med = [statistics.median(r[i] for r in rows) for i in range(1, 7)]
print(f"| median | {med[0]:.0f} us | {med[1]:.0f} us | {med[2]:.0f} us | {med[3]:.0f} us | {med[4]:.0f} us | {med[5]:.0f} us | {med[2]/med[4]:.2f} | {med[3]/med[5]:.2f} |")
PY
cat "$out"
