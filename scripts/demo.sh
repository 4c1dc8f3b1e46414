#!/usr/bin/env bash
# Shows binrelay's main job on a throwaway setup: starts a sandbox MariaDB on a
# free loopback port with a temporary data directory, writes some changes, and
# runs `binrelay tail` over them. Everything it starts is stopped by pid on exit.
# Requires ./scripts/setup.sh to have run.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/binrelay
[ -x "$bin" ] || { echo "demo: $bin is missing; run ./scripts/setup.sh first" >&2; exit 1; }

dir=$(mktemp -d /tmp/binrelay-demo.XXXXXX)
chmod 755 "$dir"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"; wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

user_args=()
[ "$(id -u)" -eq 0 ] && user_args=(--user=root)
echo "demo: initialising a sandbox MariaDB in $dir (port $port)"
mariadb-install-db --no-defaults --datadir="$dir/data" --auth-root-authentication-method=normal \
  "${user_args[@]}" >"$dir/install.log" 2>&1
mariadbd --no-defaults "${user_args[@]}" --datadir="$dir/data" --port="$port" \
  --bind-address=127.0.0.1 --socket="$dir/sock" --log-error="$dir/error.log" \
  --server-id=1 --log-bin="$dir/data/mysql-bin" --binlog-format=ROW --binlog-row-image=FULL \
  --skip-name-resolve --innodb-buffer-pool-size=64M --character-set-server=utf8mb4 2>/dev/null &
pid=$!
for _ in $(seq 1 60); do
  mariadb --no-defaults -uroot --socket="$dir/sock" -e 'SELECT 1' >/dev/null 2>&1 && break
  sleep 0.5
done
sql() { mariadb --no-defaults --default-character-set=utf8mb4 -uroot --socket="$dir/sock" "$@"; }

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
