#!/usr/bin/env bash
# Shows binrelay's main jobs on a throwaway setup, everything on free
# loopback ports with temporary data directories, stopped by pid on exit:
#   1. a sandbox MariaDB source takes some changes; `binrelay tail` prints them;
#   2. `binrelay serve` follows the source, keeping its binlog; a second
#      MariaDB replicates from binrelay as if it were the source;
#   3. an apply pipeline of the same serve keeps shop.orders identical on a
#      third MariaDB, while the source keeps writing;
#   4. `binrelay move` moves crm.customers (50,000 rows) to that third
#      MariaDB while a writer keeps changing it: copy, checksum, cutover.
# Requires ./scripts/setup.sh to have run.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/binrelay
[ -x "$bin" ] || { echo "demo: $bin is missing; run ./scripts/setup.sh first" >&2; exit 1; }

dir=$(mktemp -d /tmp/binrelay-demo.XXXXXX)
chmod 755 "$dir"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pids=()
cleanup() {
  for p in "${pids[@]}"; do
    if kill -0 "$p" 2>/dev/null; then kill "$p"; wait "$p" 2>/dev/null || true; fi
  done
  rm -rf "$dir"
}
trap cleanup EXIT

user_args=()
[ "$(id -u)" -eq 0 ] && user_args=(--user=root)
# start_server NAME SERVER_ID: a MariaDB in $dir/NAME on a free port.
start_server() {
  local name=$1 id=$2 port
  port=$(free_port)
  mkdir -p "$dir/$name"
  mariadb-install-db --no-defaults --datadir="$dir/$name/data" \
    --auth-root-authentication-method=normal "${user_args[@]}" >"$dir/$name/install.log" 2>&1
  mariadbd --no-defaults "${user_args[@]}" --datadir="$dir/$name/data" --port="$port" \
    --bind-address=127.0.0.1 --socket="$dir/$name/sock" --log-error="$dir/$name/error.log" \
    --server-id="$id" --log-bin="$dir/$name/data/mysql-bin" --binlog-format=ROW \
    --binlog-row-image=FULL --skip-name-resolve --innodb-buffer-pool-size=64M \
    --character-set-server=utf8mb4 2>/dev/null &
  pids+=($!)
  for _ in $(seq 1 60); do
    mariadb --no-defaults -uroot --socket="$dir/$name/sock" -e 'SELECT 1' >/dev/null 2>&1 && break
    sleep 0.5
  done
  echo "$port" >"$dir/$name/port"
}
on() { local name=$1; shift; mariadb --no-defaults --default-character-set=utf8mb4 -uroot \
  --socket="$dir/$name/sock" "$@"; }

echo "demo: initialising a sandbox MariaDB source in $dir"
start_server source 1
port=$(cat "$dir/source/port")
sql() { on source "$@"; }

sql -e "CREATE USER repl@'%' IDENTIFIED BY 'demo-pass';
        GRANT REPLICATION SLAVE, BINLOG MONITOR, SELECT ON *.* TO repl@'%';"
start=$(sql -N -e 'SHOW MASTER STATUS' | awk '{print $1":"$2}')
echo "demo: writing changes to shop.orders and shop.audit (binlog starts at $start)"
sql <<'SQL'
CREATE DATABASE shop CHARACTER SET utf8mb4;
CREATE TABLE shop.orders (id INT PRIMARY KEY, customer VARCHAR(40), total DECIMAL(10,2),
  placed DATETIME(3), note TEXT);
CREATE TABLE shop.audit (id INT AUTO_INCREMENT PRIMARY KEY, msg VARCHAR(80));
INSERT INTO shop.orders VALUES (1, 'Zoë', 19.99, '2026-11-29 10:00:00.125', NULL),
                               (2, 'Björn', 5.00, '2026-11-29 10:05:00.000', 'gift 🎁');
INSERT INTO shop.audit (msg) VALUES ('not subscribed: never decoded');
UPDATE shop.orders SET total = total * 2 WHERE id = 1;
DELETE FROM shop.orders WHERE id = 2;
SQL

echo "demo: binrelay tail --tables shop.orders --start $start --until-end"
BINRELAY_SOURCE_PASSWORD=demo-pass "$bin" tail --source "127.0.0.1:$port" --user repl \
  --tables shop.orders --start "$start" --until-end

echo
echo "demo: starting a replica server and an apply target server"
start_server replica 2
start_server target 3
on target -e "CREATE USER applier@'%' IDENTIFIED BY 'demo-apply'; GRANT ALL ON *.* TO applier@'%';"
# The target table is a copy of the source's as of a binlog position: here
# it is created empty with the same definition, and the pipeline starts at
# the position where the source's rows were still what the copy holds.
on target -e "CREATE DATABASE shop CHARACTER SET utf8mb4;"
sql -N -r -e "SHOW CREATE TABLE shop.orders" | cut -f2 | on target shop
copy_at=$(sql -N -e 'SHOW MASTER STATUS' | awk '{print $1":"$2}')
on target -e "INSERT INTO shop.orders VALUES (1, 'Zoë', 39.98, '2026-11-29 10:00:00.125', NULL)"

listen=$(free_port)
http=$(free_port)
cat >"$dir/binrelay.cnf" <<CNF
[source]
host = 127.0.0.1
port = $port
user = repl
password = demo-pass
server_id = 4001
start = earliest
[store]
dir = $dir/store
[listen]
address = 127.0.0.1
port = $listen
server_id = 1
user = repl
password = demo-pass
[http]
address = 127.0.0.1:$http
[apply.orders]
target_host = 127.0.0.1
target_port = $(cat "$dir/target/port")
target_user = applier
target_password = demo-apply
tables = shop.orders
start = $copy_at
flush_interval = 200ms
CNF
echo "demo: binrelay serve --config $dir/binrelay.cnf (replicas on port $listen, status on :$http)"
"$bin" serve --config "$dir/binrelay.cnf" 2>"$dir/serve.log" &
pids+=($!)
for _ in $(seq 1 60); do
  (echo >/dev/tcp/127.0.0.1/"$listen") 2>/dev/null && break
  sleep 0.25
done

on replica -e "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$listen, MASTER_USER='repl',
               MASTER_PASSWORD='demo-pass', MASTER_USE_GTID=slave_pos; START SLAVE;"
echo "demo: the source keeps writing"
sql <<'SQL'
INSERT INTO shop.orders VALUES (3, 'Chidi', 12.50, '2026-11-30 09:00:00.000', 'express');
UPDATE shop.orders SET note = 'paid' WHERE id = 1;
UPDATE shop.orders SET id = 30 WHERE id = 3;
INSERT INTO shop.audit (msg) VALUES ('audit rows are relayed, not applied');
SQL
want=$(sql -N -e 'CHECKSUM TABLE shop.orders' | cut -f2)
for _ in $(seq 1 80); do
  got_t=$(on target -N -e 'CHECKSUM TABLE shop.orders' 2>/dev/null | cut -f2 || true)
  got_r=$(on replica -N -e 'CHECKSUM TABLE shop.orders' 2>/dev/null | cut -f2 || true)
  [ "$got_t" = "$want" ] && [ "$got_r" = "$want" ] && break
  sleep 0.25
done
echo "demo: shop.orders on the source, the replica (through binrelay) and the apply target:"
for s in source replica target; do
  printf '  %-8s CHECKSUM %s\n' "$s" "$(on "$s" -N -e 'CHECKSUM TABLE shop.orders' | cut -f2)"
done
on target -t -e 'SELECT * FROM shop.orders ORDER BY id'
echo "demo: the pipeline as SHOW RELAY STATUS shows it:"
mariadb --no-defaults -h127.0.0.1 -P"$listen" -urepl -pdemo-pass -N -e 'SHOW RELAY STATUS' | \
  awk -F'\t' '{print "  " $NF}'
echo "demo: its checkpoint on the target:"
on target -t -e 'SELECT pipeline, binlog_file, binlog_pos FROM binrelay.apply_checkpoint'
[ "$(on target -N -e 'CHECKSUM TABLE shop.orders' | cut -f2)" = "$want" ] || {
  echo "demo: the target did not converge; see $dir/serve.log" >&2; cat "$dir/serve.log" >&2; exit 1; }

echo
echo "demo: binrelay move: crm.customers to the target server while a writer changes it"
sql -e "CREATE USER mover@'%' IDENTIFIED BY 'demo-move';
        GRANT REPLICATION SLAVE, BINLOG MONITOR, SELECT, LOCK TABLES, ALTER, DROP, CREATE,
              INSERT, RELOAD ON *.* TO mover@'%';
        CREATE DATABASE crm;
        CREATE TABLE crm.customers (id INT PRIMARY KEY, name VARCHAR(40), balance DECIMAL(12,2));
        INSERT INTO crm.customers SELECT seq, CONCAT('customer ', seq), seq / 100
          FROM crm.seq_1_to_50000;"
cat >"$dir/move.cnf" <<CNF
[source]
host = 127.0.0.1
port = $port
user = mover
password = demo-move
server_id = 4002
start = next
[store]
dir = $dir/move-store
[move]
name = customers
target_host = 127.0.0.1
target_port = $(cat "$dir/target/port")
target_user = applier
target_password = demo-apply
tables = crm.customers
chunk_time = 100ms
cutover = auto
CNF
( for i in $(seq 1 400); do
    sql -e "UPDATE crm.customers SET balance = balance + 1 WHERE id = $(( (i * 7919) % 50000 + 1 ));
            DELETE FROM crm.customers WHERE id = $(( (i * 104729) % 50000 + 1 ));" 2>/dev/null || break
  done ) &
writer=$!
pids+=($writer)
echo "demo: $bin move --config $dir/move.cnf --json-status (progress once a second)"
"$bin" move --config "$dir/move.cnf" --json-status 2>"$dir/move.log" |   python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    print("  %-10s copied %6d rows, checksum %d/%d chunks (%d repaired)" % (m["phase"],
          m["rows_copied"], m["chunks_checked"], m["chunks_total"], m["chunks_repaired"]))'
wait "$writer" 2>/dev/null || true
echo "demo: after the cutover the source's table is crm.customers_old (writers now fail fast):"
printf '  source crm.customers_old CHECKSUM %s\n' "$(sql -N -e 'CHECKSUM TABLE crm.customers_old' | cut -f2)"
printf '  target crm.customers     CHECKSUM %s\n' "$(on target -N -e 'CHECKSUM TABLE crm.customers' | cut -f2)"
grep -E "start = next|cut over|checksum:" "$dir/move.log" | sed 's/^/  /'
[ "$(sql -N -e 'CHECKSUM TABLE crm.customers_old' | cut -f2)" = \
  "$(on target -N -e 'CHECKSUM TABLE crm.customers' | cut -f2)" ] || {
  echo "demo: the moved table differs; see $dir/move.log" >&2; cat "$dir/move.log" >&2; exit 1; }
