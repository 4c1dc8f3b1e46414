# Helpers shared by the benchmarks that run throwaway MariaDB servers
# (apply_bench.sh, move_bench.sh). Sourced after TMP is set: server NAME
# listens on the socket $TMP/NAME.sock. A script that runs MySQL servers
# instead (move_bench.sh with FLAVOUR=mysql-9.7) sets, before sourcing,
# CLIENT to MySQL's client and SERVER_MYSQL=1 (quiesce's status queries).

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
