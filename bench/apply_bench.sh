#!/usr/bin/env bash
# Apply benchmark: on one stored binlog, how long an apply pipeline
# takes to bring a target to the source's state, against a real MariaDB
# replica catching up the same binlog (single-threaded, and with
# slave_parallel_threads=4 / optimistic), and against the target's own limit
# (the final rows written with multi-row REPLACE over as many connections).
#
#   bench/apply_bench.sh                 # SCALE=0.3: 300k insert rows, 3k rows x 100 updates, 600 wide rows
#   SCALE=0.05 bench/apply_bench.sh      # quick check
#   BULK=off bench/apply_bench.sh        # the main column with bulk_replace = off too
#   FLAVOUR=mysql-9.7 SCALE=0.05 bench/apply_bench.sh  # every server MySQL 9.7
#
# FLAVOUR (bench/lib.sh's select_flavour): mariadb-10.11 (default: the
# system's /usr/sbin/mariadbd) or mysql-9.7 (the release scripts/fetch-servers.sh
# unpacked into .servers/, started through its wrappers as move_bench.sh does).
# On MySQL source, target and replica are all 9.7 with the release's defaults
# (gtid_mode = ON, writeset dependencies); the replica's two columns are
# replica_parallel_workers = 1 (9.7 has no 0: it is raised to 1) and 4 (its
# default), with replica_preserve_commit_order as the server has it.
#
# Every server and binrelay is a child of this script on free loopback ports,
# stopped by pid on exit. Results: stdout and bench/results-apply-DATE.md
# (bench/results-apply-mysql97-DATE.md for MySQL 9.7).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -z "${APPLY_BENCH_NICED:-}" ] && APPLY_BENCH_NICED=1 exec nice -n 10 "$0" "$@"
SCALE=${SCALE:-0.3}
RUNS=${RUNS:-1}
# Pipeline concurrency and REPLACE connections: as many as the parallel
# replica's worker threads. With 2 on this 2-core machine a connection waiting
# for its reply, or done with its share of a drain, left a core idle
# (insert-heavy, 4 runs each: 1.98-2.83 s at 2, 1.81-2.04 s at 4).
CONC=${CONC:-4}
BINRELAY=${BINRELAY:-build/binrelay}
[ -x "$BINRELAY" ] || { echo "apply_bench: $BINRELAY missing; run ./scripts/setup.sh" >&2; exit 1; }
. bench/lib.sh  # select_flavour, start_server, log, free_port, now, on, cpu_of, quiesce
select_flavour apply_bench
for tool in "$DUMP" "$CLIENT" ${MYSQLD:+"$MYSQLD"}; do
  command -v "$tool" >/dev/null || { echo "apply_bench: $tool missing" >&2; exit 1; }
done
BUFFER_POOL=${BUFFER_POOL:-512M}
SERVER_EXTRA_ARGS=(--open-files-limit=4096)
TMP=$(mktemp -d "${BENCH_TMPDIR:-/tmp}/binrelay-abench.XXXXXX")
chmod 755 "$TMP"
cp "$BINRELAY" "$TMP/binrelay"; BIN=$TMP/binrelay
declare -A PIDS=()
cleanup() {
  for n in "${!PIDS[@]}"; do kill "${PIDS[$n]}" 2>/dev/null || true; wait "${PIDS[$n]}" 2>/dev/null || true; done
  [ "${KEEP_TMP:-0}" = 1 ] || rm -rf "$TMP"
}
trap cleanup EXIT
# MySQL 8.4 and later no longer have SHOW MASTER STATUS.
pos() {
  local show='SHOW MASTER STATUS'; [ "$SERVER_MYSQL" = 1 ] && show='SHOW BINARY LOG STATUS'
  on source -N -e "$show" | awk '{print $1":"$2}'
}
block() { printf 'DELIMITER //\n%s //\n' "$1" | on source; }  # a compound statement

log "servers: source, target, replica $FLAVOUR (SCALE=$SCALE)"
start_server source 1 --log-bin="$TMP/source/mysql-bin" --binlog-format=ROW --binlog-row-image=FULL
if [ "$SERVER_MYSQL" = 1 ]; then
  # MySQL writes a binlog by default, MariaDB does not: the target runs
  # without one, and the replica logs only its own writes, as on MariaDB.
  start_server target 2 --disable-log-bin
  start_server replica 3 --log-bin="$TMP/replica/mysql-bin" --log-replica-updates=OFF --skip-replica-start \
    --relay-log=relay --relay-log-index=relay.index
else
  start_server target 2
  start_server replica 3 --log-bin="$TMP/replica/mysql-bin" --log-slave-updates=OFF
fi
for s in source target replica; do
  on "$s" -e "CREATE USER b@'%' IDENTIFIED BY 'b'; GRANT ALL ON *.* TO b@'%';"
done

INS=$(python3 -c "print(int(1000000*$SCALE))")
HOT=$(python3 -c "print(max(10, int(10000*$SCALE)))")
WIDE=$(python3 -c "print(max(10, int(2000*$SCALE)))")
DDL="CREATE DATABASE ins; CREATE TABLE ins.t (id INT PRIMARY KEY, a INT, b VARCHAR(40), c DATETIME(3), d DECIMAL(10,2));
CREATE DATABASE hot; CREATE TABLE hot.t (id INT PRIMARY KEY, n INT, s VARCHAR(40));
CREATE DATABASE wide; CREATE TABLE wide.t (id INT PRIMARY KEY, body LONGBLOB);"
for s in source target replica; do on "$s" -e "$DDL"; done
declare -A START END
if [ "$SERVER_MYSQL" = 1 ]; then
  # MySQL has no seq_1_to_N (sequence engine) and no compound statement
  # outside a stored program: the numbers come from a table of its own in a
  # schema only the source has, and each workload's loop is a procedure,
  # created before the first workload's start. Each statement in them
  # commits on its own, as in MariaDB's BEGIN NOT ATOMIC blocks.
  SEQ=$((HOT > 500 ? HOT : 500))
  on source -e "CREATE DATABASE gen; CREATE TABLE gen.seq (seq INT PRIMARY KEY);
    SET SESSION cte_max_recursion_depth = $((SEQ + 1));
    INSERT INTO gen.seq WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < $SEQ) SELECT n FROM s"
  block "CREATE PROCEDURE gen.ins(n INT) BEGIN DECLARE i INT DEFAULT 0; WHILE i < n DO
  INSERT INTO ins.t SELECT i*500+seq, seq, CONCAT('name-', i*500+seq), '2026-01-01 00:00:00.123' + INTERVAL seq SECOND, seq/7 FROM gen.seq WHERE seq <= 500;
  SET i = i + 1; END WHILE; END"
  block "CREATE PROCEDURE gen.hot(keys10 INT) BEGIN DECLARE r INT DEFAULT 1; DECLARE k INT; WHILE r <= 100 DO
  SET k = 0; WHILE k < keys10 DO
  UPDATE hot.t SET n = n + 1, s = CONCAT('round-', r) WHERE id BETWEEN k*10+1 AND k*10+10;
  SET k = k + 1; END WHILE; SET r = r + 1; END WHILE; END"
  block "CREATE PROCEDURE gen.wide(n INT) BEGIN DECLARE i INT DEFAULT 1; WHILE i <= n DO
  INSERT INTO wide.t VALUES (i, REPEAT(CHAR(65 + i % 26), 65536)); SET i = i + 1; END WHILE; END"
  on source -e "INSERT INTO hot.t SELECT seq, 0, 'start' FROM gen.seq WHERE seq <= $HOT"
  for s in target replica; do
    on "$s" -e "SET SESSION cte_max_recursion_depth = $((HOT + 1));
      INSERT INTO hot.t WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < $HOT) SELECT n, 0, 'start' FROM s"
  done
  log "generating: insert-heavy $INS rows (500-row INSERTs)"
  START[ins]=$(pos); on source -e "CALL gen.ins($((INS / 500)))"; END[ins]=$(pos)
  log "generating: hot-update $HOT rows x 100 updates (10-row transactions)"
  START[hot]=$(pos); on source -e "CALL gen.hot($((HOT / 10)))"; END[hot]=$(pos)
  log "generating: wide $WIDE rows of 64 KiB"
  START[wide]=$(pos); on source -e "CALL gen.wide($WIDE)"; END[wide]=$(pos)
else
on source -e "INSERT INTO hot.t SELECT seq, 0, 'start' FROM hot.seq_1_to_$HOT"
for s in target replica; do on "$s" -e "INSERT INTO hot.t SELECT seq, 0, 'start' FROM hot.seq_1_to_$HOT"; done

log "generating: insert-heavy $INS rows (500-row INSERTs)"
START[ins]=$(pos)
block "BEGIN NOT ATOMIC FOR i IN 0 .. $((INS / 500 - 1)) DO
  INSERT INTO ins.t SELECT i*500+seq, seq, CONCAT('name-', i*500+seq), '2026-01-01 00:00:00.123' + INTERVAL seq SECOND, seq/7 FROM ins.seq_1_to_500;
END FOR; END"
END[ins]=$(pos)
log "generating: hot-update $HOT rows x 100 updates (10-row transactions)"
START[hot]=$(pos)
block "BEGIN NOT ATOMIC FOR r IN 1 .. 100 DO FOR k IN 0 .. $((HOT / 10 - 1)) DO
  UPDATE hot.t SET n = n + 1, s = CONCAT('round-', r) WHERE id BETWEEN k*10+1 AND k*10+10;
END FOR; END FOR; END"
END[hot]=$(pos)
log "generating: wide $WIDE rows of 64 KiB"
START[wide]=$(pos)
block "BEGIN NOT ATOMIC FOR i IN 1 .. $WIDE DO
  INSERT INTO wide.t VALUES (i, REPEAT(CHAR(65 + i % 26), 65536)); END FOR; END"
END[wide]=$(pos)
fi

# binrelay stores the whole binlog once; every measurement reads that store.
LISTEN=$(free_port); HTTP=$(free_port)
cat >"$TMP/serve.cnf" <<CNF
[source]
host = 127.0.0.1
port = $(cat "$TMP/source.port")
user = b
password = b
server_id = 4001
start = earliest
[store]
dir = $TMP/store
sync = off
[listen]
address = 127.0.0.1
port = $LISTEN
server_id = 1
user = b
password = b
[http]
address = 127.0.0.1:$HTTP
CNF
"$BIN" serve --config "$TMP/serve.cnf" 2>"$TMP/serve.err" &
PIDS[serve]=$!
final=$(pos); ffile=${final%%:*}; fpos=${final##*:}
for _ in $(seq 1 600); do
  size=$(stat -c %s "$TMP/store/$ffile" 2>/dev/null || echo 0)
  [ "$size" -ge "$fpos" ] && break; sleep 0.5
done
log "stored $(du -sh "$TMP/store" | cut -f1) of binlog"
# One binrelay per store at a time: the relay for replicas and the serve
# with a pipeline take turns.
stop_relay() { kill "${PIDS[serve]}" 2>/dev/null || true; wait "${PIDS[serve]}" 2>/dev/null || true; unset "PIDS[serve]"; }
start_relay() {
  "$BIN" serve --config "$TMP/serve.cnf" 2>>"$TMP/serve.err" &
  PIDS[serve]=$!
  for _ in $(seq 1 100); do (echo >/dev/tcp/127.0.0.1/"$LISTEN") 2>/dev/null && return; sleep 0.1; done
}
stop_relay


offset_of() { echo "${1##*:}"; }
file_of() { echo "${1%%:*}"; }
checksum() { on "$1" -N -e "CHECKSUM TABLE $2" | cut -f2; }

# time_pipeline WORKLOAD: a fresh copy of the table on the target, a serve
# with one pipeline from the workload's start, until its checkpoint passes
# the workload's end.
time_pipeline() {
  # A name no earlier run used: the store keeps each pipeline's local
  # checkpoint, and a pipeline resuming a past run's would time nothing.
  local w=$1 bulk=${2:-on} name; name="b$(date +%s%N)"
  on target -e "DROP TABLE $w.t; CREATE TABLE $w.t LIKE $w.t_seed; INSERT INTO $w.t SELECT * FROM $w.t_seed"
  # The source too: it is not timed, but after generating the workloads it
  # purges a million updates and writes hundreds of MB in the background, on
  # the cores the first timings (always a pipeline's) run on.
  quiesce source; quiesce target
  local cnf=$TMP/pipe.cnf
  sed "s/^port = $LISTEN/port = $(free_port)/; s/^address = 127.0.0.1:$HTTP/address = 127.0.0.1:$(free_port)/" \
    "$TMP/serve.cnf" >"$cnf"
  local http; http=$(grep '^address = 127.0.0.1:' "$cnf" | tail -1 | sed 's/.*://')
  cat >>"$cnf" <<CNF
[apply.$name]
target_host = 127.0.0.1
target_port = $(cat "$TMP/target.port")
target_user = b
target_password = b
tables = $w.t
start = ${START[$w]}
concurrency = $CONC
flush_interval = 100ms
bulk_replace = $bulk
CNF
  sed -i "s|^dir = .*|dir = $TMP/store|" "$cnf"
  local pid peak
  # One in-process poller (no process spawned per poll, which would take
  # CPU from the pipeline and the target on this 2-core machine): timed
  # from the moment binrelay answers (its own start is not apply work)
  # until the checkpoint passes the workload's end; also peak RSS. It is
  # started, its modules loaded, before binrelay: started after it, on these
  # loaded cores its first answer came up to 0.8 s after binrelay's, that
  # much apply work untimed (a MySQL target took 50k rows in less).
  local endf endo res tperf="" bperf="" poller; endf=$(file_of "${END[$w]}"); endo=$(offset_of "${END[$w]}")
  local pidfile=$TMP/pipe-$w.pid
  rm -f "$pidfile" "$pidfile.ready"
  python3 - "$http" "$pidfile" "$endf" "$endo" "${PIDS[target]}" >"$TMP/poll-$w.out" <<'PY' &
import json, os, sys, time, urllib.request
port, pidfile, endf, endo, tpid = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
open(pidfile + ".ready", "w").close()
def cpu(p):  # user + system seconds of process p
    try:
        f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0
url = f"http://127.0.0.1:{port}/status"
def status():
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.loads(r.read())
    except Exception:
        return None
def rss():
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0
for _ in range(6000):
    if status() is not None: break
    time.sleep(0.01)
t0 = time.monotonic(); peak = 0; pid = ""
for _ in range(6000):  # written as soon as the script has started binrelay
    try:
        pid = open(pidfile).read().strip()
    except OSError:
        pass
    if pid: break
    time.sleep(0.001)
c0 = (cpu(pid), cpu(tpid))
first = True
while True:
    peak = max(peak, rss())
    s = status()
    if s is None:
        print("died"); sys.exit(0)
    if not s["pipelines"]:  # not set up yet
        time.sleep(0.025); continue
    p = s["pipelines"][0]
    if (p["flushed_file"], p["flushed_offset"]) >= (endf, endo):
        if first:  # already there: it resumed a checkpoint, no timing
            print("stale"); sys.exit(0)
        break
    first = False
    time.sleep(0.025)
cb, ct = cpu(pid) - c0[0], cpu(tpid) - c0[1]
print(f"pipeline cpu: binrelay {cb:.2f} s, target {ct:.2f} s", file=sys.stderr)
print(round(time.monotonic() - t0, 2), peak, round(cb + ct, 2))
PY
  poller=$!
  for _ in $(seq 1 3000); do [ -e "$pidfile.ready" ] && break; sleep 0.01; done
  if [ -n "${CALLGRIND_DIR:-}" ]; then  # instruction counts: callgrind_annotate $CALLGRIND_DIR/WORKLOAD.out
    mkdir -p "$CALLGRIND_DIR"
    valgrind --tool=callgrind --callgrind-out-file="$CALLGRIND_DIR/$w.out" \
      "$BIN" serve --config "$cnf" 2>"$TMP/pipe-$w.err" &
  else
    "$BIN" serve --config "$cnf" 2>"$TMP/pipe-$w.err" &
  fi
  pid=$!
  echo "$pid" >"$pidfile.tmp"; mv "$pidfile.tmp" "$pidfile"
  if [ -n "${PERF_DIR:-}" ]; then  # a profile of each pipeline run: perf report -i $PERF_DIR/WORKLOAD.data
    # Attached once binrelay answers, so the profile is the pipeline's work,
    # not the store's recovery scan at start.
    mkdir -p "$PERF_DIR"
    for _ in $(seq 1 600); do curl -sf "http://127.0.0.1:$http/healthz" >/dev/null && break; sleep 0.01; done
    perf record -F 1999 -g -p "$pid" -o "$PERF_DIR/$w.data" 2>/dev/null &
    bperf=$!
  fi
  if [ -n "${TARGET_PERF_DIR:-}" ]; then  # the target's side: perf report -i $TARGET_PERF_DIR/WORKLOAD-BULK.data
    mkdir -p "$TARGET_PERF_DIR"
    perf record -F 999 -g -p "${PIDS[target]}" -o "$TARGET_PERF_DIR/$w-$bulk.data" 2>/dev/null &
    tperf=$!
  fi
  wait "$poller" || true
  res=$(cat "$TMP/poll-$w.out")
  [ -n "$tperf" ] && { kill -INT "$tperf"; wait "$tperf" 2>/dev/null || true; }
  [ -n "$bperf" ] && { kill -INT "$bperf"; wait "$bperf" 2>/dev/null || true; }
  [ "$res" = died ] && log "pipeline serve died: $(tail -3 "$TMP/pipe-$w.err")"
  # (This runs in a subshell: binrelay is stopped before it exits, or the
  # caller's read would wait on the pipe binrelay inherited.)
  [ "$res" = stale ] && { log "pipeline $name began past the workload's end; no timing"; kill -INT "$pid"; wait "$pid" 2>/dev/null || true; exit 1; }
  local elapsed peak cpu; read -r elapsed peak cpu <<<"$res"
  local stats; stats=$(curl -s "http://127.0.0.1:$http/status" | python3 -c 'import json,sys; p=json.load(sys.stdin)["pipelines"][0]; print(p["changes_read"], p["rows_written"])')
  curl -s "http://127.0.0.1:$http/status" | python3 -c 'import json,sys; p=json.load(sys.stdin)["pipelines"][0]; print("pipeline:", {k: p[k] for k in ("drains","last_flush_seconds","concurrency","batch_rows","retries","parked")})' >&2
  kill -INT "$pid"; wait "$pid" 2>/dev/null || true
  [ "$(checksum target "$w.t")" = "$(checksum source "$w.t")" ] || log "WARNING: $w target differs from source"
  echo "$elapsed $((peak / 1024)) $stats $cpu"
}


# time_replica WORKLOAD THREADS: the replica's copy reset, START SLAVE UNTIL
# the workload's end from its start, until the SQL thread has executed it.
# On MySQL the same with replica_parallel_workers = THREADS and its
# statements' new names; the replica's GTIDs are reset before each run (with
# gtid_mode = ON it would skip the transactions an earlier run applied).
if [ "$SERVER_MYSQL" = 1 ]; then
  R_STOP="STOP REPLICA; RESET REPLICA ALL" R_PARALLEL="SET GLOBAL replica_parallel_workers=%s"
  R_PACKET="SET GLOBAL replica_max_allowed_packet=1073741824; RESET BINARY LOGS AND GTIDS"
  R_CHANGE="CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=%s, SOURCE_USER='b',
    SOURCE_PASSWORD='b', SOURCE_LOG_FILE='%s', SOURCE_LOG_POS=%s, SOURCE_AUTO_POSITION=0, SOURCE_SSL=1"
  R_START="START REPLICA UNTIL SOURCE_LOG_FILE='%s', SOURCE_LOG_POS=%s" R_WAIT=SOURCE_POS_WAIT
  R_SHOW="SHOW REPLICA STATUS" R_FILE=Relay_Source_Log_File R_POS=Exec_Source_Log_Pos
else
  R_STOP="STOP SLAVE; RESET SLAVE ALL" R_PARALLEL="SET GLOBAL slave_parallel_threads=%s;
    SET GLOBAL slave_parallel_mode='optimistic'"
  R_PACKET="SET GLOBAL slave_max_allowed_packet=1073741824"
  R_CHANGE="CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%s, MASTER_USER='b',
    MASTER_PASSWORD='b', MASTER_LOG_FILE='%s', MASTER_LOG_POS=%s, MASTER_USE_GTID=no"
  R_START="START SLAVE UNTIL MASTER_LOG_FILE='%s', MASTER_LOG_POS=%s" R_WAIT=MASTER_POS_WAIT
  R_SHOW="SHOW SLAVE STATUS" R_FILE=Relay_Master_Log_File R_POS=Exec_Master_Log_Pos
fi
time_replica() {
  local w=$1 threads=$2
  # shellcheck disable=SC2059  # the R_* formats are this script's
  on replica -e "$R_STOP; $(printf "$R_PARALLEL" "$threads"); DROP TABLE $w.t; CREATE TABLE $w.t LIKE $w.t_seed;
    INSERT INTO $w.t SELECT * FROM $w.t_seed; $R_PACKET;" 2>/dev/null
  [ "$SERVER_MYSQL" = 1 ] && log "replica: $(on replica -N -e 'SELECT CONCAT("replica_parallel_workers=", @@GLOBAL.replica_parallel_workers,
    ", replica_preserve_commit_order=", IF(@@GLOBAL.replica_preserve_commit_order, "ON", "OFF"))')"
  quiesce source; quiesce replica
  # shellcheck disable=SC2059
  on replica -e "$(printf "$R_CHANGE" "$LISTEN" "$(file_of "${START[$w]}")" "$(offset_of "${START[$w]}")")"
  local t0 t1 c0; t0=$(now); c0=$(cpu_of "${PIDS[replica]}")
  # shellcheck disable=SC2059
  on replica -e "$(printf "$R_START" "$(file_of "${END[$w]}")" "$(offset_of "${END[$w]}")")"
  # MASTER_POS_WAIT (SOURCE_POS_WAIT) blocks until the SQL thread has executed
  # up to the workload's end: no polling process competes with the replica. It is
  # NULL while the SQL thread has not started yet (or once it stopped at
  # the UNTIL position), so the executed position decides then.
  local endf endo waited exf exo; endf=$(file_of "${END[$w]}"); endo=$(offset_of "${END[$w]}")
  for _ in $(seq 1 6000); do
    waited=$(on replica -N -e "SELECT $R_WAIT('$endf', $endo, 1800)")
    [ "$waited" != NULL ] && [ "$waited" != -1 ] && break
    read -r exf exo < <(on replica --vertical -e "$R_SHOW" |
      awk -v f=" $R_FILE:" -v p=" $R_POS:" 'index($0, f) {x=$2} index($0, p) {y=$2} END {print x, y}')
    [ "$exf" = "$endf" ] && [ "${exo:-0}" -ge "$endo" ] && break
    sleep 0.01
  done
  t1=$(now)
  local st; st=$(on replica --vertical -e "$R_SHOW")
  grep -q 'Last_SQL_Errno: 0' <<<"$st" || log "replica error: $(grep Last_SQL_Error <<<"$st")"
  local c1; c1=$(cpu_of "${PIDS[replica]}")
  [ "$(checksum replica "$w.t")" = "$(checksum source "$w.t")" ] || log "WARNING: $w replica differs from source"
  python3 -c "print(round($t1-$t0,2), round($c1-$c0,2))"
}

# time_replace WORKLOAD: the source's final rows, dumped as multi-row
# REPLACE statements, written into an empty copy over $CONC connections.
time_replace() {
  local w=$1
  on target -e "DROP TABLE IF EXISTS $w.t_limit; CREATE TABLE $w.t_limit LIKE $w.t_seed"
  quiesce source; quiesce target
  "$DUMP" --no-defaults -uroot --socket="$TMP/source.sock" --replace --no-create-info \
    --skip-triggers --compact --hex-blob --extended-insert "${DUMP_ARGS[@]}" "$w" t | sed "s/REPLACE INTO \`t\`/REPLACE INTO \`t_limit\`/" >"$TMP/$w.dump"
  # Whole statements, round-robin over $CONC files.
  python3 - "$TMP/$w.dump" "$TMP/$w.part." "$CONC" <<'PY'
import sys
text = open(sys.argv[1], encoding="latin-1").read()
parts = [p for p in text.split(";\n") if p.strip()]
n = int(sys.argv[3])
outs = [open(f"{sys.argv[2]}{i}", "w", encoding="latin-1") for i in range(n)]
for i, p in enumerate(parts):
    outs[i % n].write(p + ";\n")
PY
  local t0 t1; t0=$(now)
  local pids=()
  for f in "$TMP/$w.part."*; do
    on target --max-allowed-packet=256M "$w" <"$f" & pids+=($!)
  done
  wait "${pids[@]}"
  t1=$(now)
  rm -f "$TMP/$w.part."*
  python3 -c "print(round($t1-$t0,2))"
}

for s in target replica; do
  for w in ins hot wide; do on "$s" -e "CREATE TABLE $w.t_seed LIKE $w.t; INSERT INTO $w.t_seed SELECT * FROM $w.t"; done
done

# The replica's two settings: MariaDB's single SQL thread (0) and 4 optimistic
# threads; MySQL 9.7's 1 worker (it has no 0) and 4 workers, its default.
if [ "$SERVER_MYSQL" = 1 ]; then
  R1=1 R1_NAME="replica 1 worker" R4_NAME="replica 4 workers (writeset)"
else
  R1=0 R1_NAME="replica 1 thread" R4_NAME="replica 4 threads optimistic"
fi
DATE=$(date +%Y-%m-%d)
REPORT=${REPORT:-bench/results-apply-$REPORT_TAG$DATE.md}
{
  echo "# apply benchmark, $DATE (SCALE=$SCALE, $CONC connections, $(nproc) cores, shared machine)"
  echo
  echo "binrelay $(git rev-parse --short HEAD 2>/dev/null); ${SERVER_NAME%% *} $(on source -N -e 'SELECT VERSION()')."
  if [ "$SERVER_MYSQL" = 1 ]; then
    # What the servers say of the replica's parallelism: the variables as
    # SHOW VARIABLES gives them (a name it no longer has is reported absent).
    on replica -e "SET GLOBAL replica_parallel_workers=4"
    shown() {  # SERVER NAME...: NAME=VALUE for each, or NAME absent
      local s=$1 n v out=(); shift
      for n in "$@"; do
        v=$(on "$s" -N -e "SHOW GLOBAL VARIABLES WHERE Variable_name = '$n'" | cut -f2)
        if [ -n "$v" ]; then out+=("$n=$v"); else out+=("$n absent"); fi
      done
      local IFS=,; echo "${out[*]}" | sed 's/,/, /g'
    }
    echo "Source, target and replica MySQL 9.7 with the release's defaults (target without a binlog;"
    echo "replica with log_replica_updates=OFF, as the MariaDB replica's log_slave_updates). The replica"
    echo "reads binrelay's listener by file and position (SOURCE_AUTO_POSITION=0, SOURCE_SSL=1; its GTIDs"
    echo "reset before each run) with START REPLICA UNTIL the workload's end."
    echo "Replica (SHOW VARIABLES, parallel column): $(shown replica replica_parallel_workers replica_preserve_commit_order replica_parallel_type gtid_mode log_replica_updates)."
    echo "Source: $(shown source binlog_transaction_dependency_tracking binlog_transaction_dependency_history_size transaction_write_set_extraction gtid_mode binlog_format)."
  fi
  echo "Seconds to bring the target to the source's state from the same stored binlog; lower is better."
  echo
  echo "| workload | binrelay pipeline | pipeline, bulk_replace=off | $R1_NAME | $R4_NAME | REPLACE x$CONC (target's limit) | pipeline vs 1-thread replica | pipeline vs parallel replica | pipeline vs limit | bulk vs text pipeline | CPU s: pipeline (binrelay + target) / replica 1 / replica 4 | rows written / changes read | pipeline peak RSS |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$REPORT"
for w in ${WORKLOADS:-ins hot wide}; do
  for run in $(seq 1 "$RUNS"); do
    log "$w: pipeline"; read -r tp rss changes written cp < <(time_pipeline "$w" "${BULK:-on}")
    [ -n "$tp" ] || { log "$w: the pipeline gave no timing (see above)"; exit 1; }
    if [ -n "${PERF_DIR:-}${CALLGRIND_DIR:-}" ]; then echo "$w pipeline $tp s (profiled)" | tee -a "$REPORT"; continue; fi
    log "$w: pipeline, bulk_replace=off"; read -r ttext _ _ _ < <(time_pipeline "$w" off)
    [ -n "$ttext" ] || { log "$w: the bulk_replace=off pipeline gave no timing (see above)"; exit 1; }
    start_relay
    log "$w: $R1_NAME"; read -r tr1 cr1 < <(time_replica "$w" "$R1")
    log "$w: $R4_NAME"; read -r tr4 cr4 < <(time_replica "$w" 4)
    stop_relay
    log "$w: REPLACE x$CONC"; tl=$(time_replace "$w")
    line=$(python3 -c "
tp,ttext,tr1,tr4,tl,cp,cr1,cr4=$tp,$ttext,$tr1,$tr4,$tl,$cp,$cr1,$cr4
print(f'| $w | {tp} | {ttext} | {tr1} | {tr4} | {tl} | {tr1/tp:.2f}x | {tr4/tp:.2f}x | {tp/tl:.2f}x of the limit\'s time | {ttext/tp:.2f}x | {cp} / {cr1} / {cr4} | {$written}/{$changes} = {$written/max(1,$changes):.3f} | {$rss} MiB |')")
    echo "$line" | tee -a "$REPORT"
  done
done
log "report: $REPORT"
