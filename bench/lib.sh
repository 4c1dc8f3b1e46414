# Helpers shared by the benchmarks that run throwaway servers (apply_bench.sh,
# move_bench.sh). Server NAME listens on the socket $TMP/NAME.sock (TMP is
# read when a helper runs, not when this file is sourced).
#
# select_flavour SCRIPT: from FLAVOUR (mariadb-10.11, the default, or
# mysql-9.7) sets CLIENT, DUMP, SERVER_MYSQL (quiesce's status queries and
# start_server's initialisation), MYSQLD, SERVER_ARGS, DUMP_ARGS, SERVER_NAME
# and REPORT_TAG. start_server NAME SERVER_ID [options] then initialises and
# starts one server of that flavour.

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
CLIENT=${CLIENT:-mariadb}
SERVER_MYSQL=${SERVER_MYSQL:-0}
on() { local n=$1; shift; "$CLIENT" --no-defaults -uroot --socket="$TMP/$n.sock" "$@"; }

# CPU seconds (user + system) process $1 has used so far.
cpu_of() { awk -v t="$(getconf CLK_TCK)" '{sub(/.*\) /, ""); print ($12 + $13) / t}' "/proc/$1/stat"; }

# quiesce SERVER: waits (at most 60 s) until the server has written its dirty
# pages and purged its undo history, so that a timing does not pay for the
# background work of whatever ran on that server before it (a previous copy
# or workload, a load, a writer's changes).
quiesce() {
  local s=$1 pct dirty history
  pct=$(on "$s" -N -e 'SELECT @@GLOBAL.innodb_max_dirty_pages_pct')
  on "$s" -e 'SET GLOBAL innodb_max_dirty_pages_pct = 0'
  local status_sql="SELECT
      MAX(IF(VARIABLE_NAME = 'INNODB_BUFFER_POOL_PAGES_DIRTY', VARIABLE_VALUE, NULL)),
      MAX(IF(VARIABLE_NAME = 'INNODB_HISTORY_LIST_LENGTH', VARIABLE_VALUE, NULL))
      FROM information_schema.GLOBAL_STATUS
      WHERE VARIABLE_NAME IN ('INNODB_BUFFER_POOL_PAGES_DIRTY', 'INNODB_HISTORY_LIST_LENGTH')"
  # MySQL has neither information_schema.GLOBAL_STATUS nor a history-length
  # status variable: performance_schema.global_status (answered with
  # --performance-schema=OFF too) and InnoDB's trx_rseg_history_len metric.
  [ "$SERVER_MYSQL" = 1 ] && status_sql="SELECT
      (SELECT VARIABLE_VALUE FROM performance_schema.global_status
        WHERE VARIABLE_NAME = 'Innodb_buffer_pool_pages_dirty'),
      (SELECT COUNT FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len')"
  for _ in $(seq 1 600); do
    read -r dirty history < <(on "$s" -N -e "$status_sql")
    [ "${dirty:-0}" -lt 64 ] && [ "${history:-0}" -lt 1000 ] && break
    sleep 0.1
  done
  on "$s" -e "SET GLOBAL innodb_max_dirty_pages_pct = $pct"
}

# FLAVOUR: which release every server of the script runs, its client and dump
# tool. SCRIPT names the caller in error messages.
select_flavour() {
  local me=$1
  FLAVOUR=${FLAVOUR:-mariadb-10.11}
  SERVER_ARGS=() DUMP_ARGS=() MYSQLD=""
  case $FLAVOUR in
    mariadb-10.11)
      SERVER_MYSQL=0 CLIENT=mariadb DUMP=mariadb-dump SERVER_NAME="MariaDB 10.11" REPORT_TAG="" ;;
    mysql-9.7)
      # As tests/harness/server_flavour.cc: the wrappers in bin/ run the unpacked
      # binaries through the unpacked tree's dynamic loader; the server needs the
      # tree's basedir, messages, plugins.
      # Absolute: mysqld takes a relative --lc-messages-dir as under --basedir
      # (then it finds no errmsg.sys and logs an error at every start).
      MYSQL_DIR=$(realpath -m "${BINRELAY_SERVERS_DIR:-.servers}/mysql-9.7")
      [ -f "$MYSQL_DIR/.complete" ] || { echo "$me: mysql-9.7 is not fetched into $MYSQL_DIR: run scripts/fetch-servers.sh mysql-9.7" >&2; exit 1; }
      SERVER_MYSQL=1 CLIENT=$MYSQL_DIR/bin/mysql DUMP=$MYSQL_DIR/bin/mysqldump MYSQLD=$MYSQL_DIR/bin/mysqld
      # 9.7 has gtid_mode = ON by default: a dump of one table must not carry
      # the source's GTID_PURGED (a second load of it would then fail).
      DUMP_ARGS=(--set-gtid-purged=OFF)
      SERVER_ARGS=(--basedir="$MYSQL_DIR/root/usr" --lc-messages-dir="$MYSQL_DIR/root/usr/share/mysql")
      [ -d "$MYSQL_DIR/root/usr/lib/mysql/plugin" ] && SERVER_ARGS+=(--plugin-dir="$MYSQL_DIR/root/usr/lib/mysql/plugin")
      SERVER_NAME="MySQL 9.7" REPORT_TAG="mysql97-" ;;
    *) echo "$me: unknown FLAVOUR '$FLAVOUR' (mariadb-10.11 or mysql-9.7)" >&2; exit 1 ;;
  esac
}

# start_server NAME SERVER_ID [options]: a fresh datadir $TMP/NAME and a
# server on a free loopback port (written to $TMP/NAME.port), its pid in
# PIDS[NAME]. The InnoDB buffer pool is $BUFFER_POOL; SERVER_EXTRA_ARGS (an
# array, optional) go before the options.
start_server() {
  local name=$1 id=$2; shift 2
  local port; port=$(free_port)
  local user_args=(); [ "$(id -u)" -eq 0 ] && user_args=(--user=root)
  local extra=("${SERVER_EXTRA_ARGS[@]}")
  if [ "$SERVER_MYSQL" = 1 ]; then
    # As InitDataDir and ServerSandbox::Launch in tests/harness/server_sandbox.cc:
    # root@localhost without a password, no X plugin, no performance schema
    # (MariaDB's default); the server's own defaults otherwise.
    mkdir -p "$TMP/$name.tmp"
    "$MYSQLD" --no-defaults --initialize-insecure --datadir="$TMP/$name" --tmpdir="$TMP/$name.tmp" \
      --secure-file-priv= "${user_args[@]}" "${SERVER_ARGS[@]}" >"$TMP/$name.install" 2>&1
    "$MYSQLD" --no-defaults "${user_args[@]}" --datadir="$TMP/$name" --port="$port" \
      --bind-address=127.0.0.1 --socket="$TMP/$name.sock" --log-error="$TMP/$name.err" \
      --tmpdir="$TMP/$name.tmp" --pid-file="$TMP/$name.pid" "${SERVER_ARGS[@]}" \
      --mysqlx=OFF --secure-file-priv= --performance-schema=OFF \
      --server-id="$id" --skip-name-resolve --innodb-buffer-pool-size="$BUFFER_POOL" \
      --innodb-flush-log-at-trx-commit=2 --sync-binlog=0 --max-allowed-packet=256M \
      --character-set-server=utf8mb4 --default-time-zone=+00:00 "${extra[@]}" "$@" 2>/dev/null &
  else
    mariadb-install-db --no-defaults --datadir="$TMP/$name" --auth-root-authentication-method=normal \
      "${user_args[@]}" >"$TMP/$name.install" 2>&1
    /usr/sbin/mariadbd --no-defaults "${user_args[@]}" --datadir="$TMP/$name" --port="$port" \
      --bind-address=127.0.0.1 --socket="$TMP/$name.sock" --log-error="$TMP/$name.err" \
      --server-id="$id" --skip-name-resolve --innodb-buffer-pool-size="$BUFFER_POOL" \
      --innodb-flush-log-at-trx-commit=2 --sync-binlog=0 --max-allowed-packet=256M \
      --character-set-server=utf8mb4 --default-time-zone=+00:00 "${extra[@]}" "$@" 2>/dev/null &
  fi
  PIDS[$name]=$!
  for _ in $(seq 1 120); do
    on "$name" -e 'SELECT 1' >/dev/null 2>&1 && break
    sleep 0.5
  done
  echo "$port" >"$TMP/$name.port"
}
