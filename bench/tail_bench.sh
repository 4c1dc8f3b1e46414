#!/usr/bin/env bash
# The tail benchmark: binrelay tail vs mariadb-binlog -v vs go-mysql (canal), on
# binlogs generated in a throwaway MariaDB 10.11. See bench/README.md.
#
#   bench/tail_bench.sh                      # full run (SCALE=1.0)
#   SCALE=0.02 bench/tail_bench.sh           # quick run
#
# Environment:
#   SCALE=1.0        scales every row count (1.0: 1M + 1M mixed, 500k + 500k insert, 1M hot, 400k wide)
#   RUNS=3           timed runs per measurement (the median is reported)
#   VARIANTS="empty mixed insert hot wide"
#   TOOLS="binrelay mariadb-binlog go-mysql"
#   VALIDATE=1       one untimed pass per tool that checks the delivered row counts
#   BINRELAY=build/binrelay
#   BENCH_TMPDIR=${TMPDIR:-/tmp}  where the throwaway datadir goes
#   BENCH_ROW_METADATA=           binlog_row_metadata for the server (server default if empty)
#   PEER_TIMEOUT=1800 TOOL_TIMEOUT=1800   seconds before a client is killed
#   KEEP_TMP=1       keep the datadir and logs after the run
#   BENCH_NICE=10    niceness for the whole run (server and clients)
set -euo pipefail

if [ -z "${BENCH_NICED:-}" ]; then
  export BENCH_NICED=1
  exec nice -n "${BENCH_NICE:-10}" bash "$0" "$@"
fi

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
SCALE=${SCALE:-1.0}
RUNS=${RUNS:-3}
VARIANTS=${VARIANTS:-"empty mixed insert hot wide"}
TOOLS=${TOOLS:-"binrelay mariadb-binlog go-mysql"}
VALIDATE=${VALIDATE:-1}
BINRELAY=${BINRELAY:-$ROOT/build/binrelay}
PEER_TIMEOUT=${PEER_TIMEOUT:-1800}
TOOL_TIMEOUT=${TOOL_TIMEOUT:-1800}
PW=${BENCH_PASSWORD:-bench-pw}
GOMYSQL_PKG="@solashi/go-mysql-binlog-node@0.0.6"
PEERS=$HERE/.peers
GOMYSQL_BIN=$PEERS/package/prebuilds/linux-x64
STAMP=$(date +%Y%m%d-%H%M%S)
OUT=$HERE/out/$STAMP
mkdir -p "$OUT"
RAW=$OUT/raw.jsonl
: >"$RAW"

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" | tee -a "$OUT/bench.log" >&2; }
die() { log "ERROR: $*"; exit 1; }

# ---------------------------------------------------------------- prerequisites
need_apt=()
command -v mariadb-install-db >/dev/null && [ -x /usr/sbin/mariadbd ] || need_apt+=(mariadb-server)
command -v mariadb >/dev/null && command -v mariadb-binlog >/dev/null || need_apt+=(mariadb-client)
if ((${#need_apt[@]})); then
  log "installing ${need_apt[*]} (apt-get)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" </dev/null
fi
command -v python3 >/dev/null || die "python3 is required"

# binrelay: only run it once `tail --help` works (it is being finished elsewhere)
HAVE_BINRELAY=0
BINRELAY_NOTE=""
if [[ " $TOOLS " == *" binrelay "* ]]; then
  if [ -x "$BINRELAY" ] && "$BINRELAY" tail --help >/dev/null 2>&1; then
    HAVE_BINRELAY=1
  else
    BINRELAY_NOTE="\`$BINRELAY tail --help\` failed: binrelay not measured"
    log "$BINRELAY_NOTE"
  fi
fi

# go-mysql: the prebuilt Go binary shipped in the npm package (canal-based)
HAVE_GOMYSQL=0
GOMYSQL_NOTE=""
if [[ " $TOOLS " == *" go-mysql "* ]]; then
  if [ ! -x "$GOMYSQL_BIN" ]; then
    log "fetching $GOMYSQL_PKG with npm pack"
    mkdir -p "$PEERS"
    if (cd "$PEERS" && npm pack --silent "$GOMYSQL_PKG" >npm-pack.log 2>&1 &&
        tar xzf solashi-go-mysql-binlog-node-*.tgz); then :; else
      log "npm pack failed: $(tail -3 "$PEERS/npm-pack.log" 2>/dev/null)"
    fi
  fi
  if [ -x "$GOMYSQL_BIN" ]; then
    HAVE_GOMYSQL=1
  else
    GOMYSQL_NOTE="go-mysql binary $GOMYSQL_BIN missing: go-mysql not measured"
    log "$GOMYSQL_NOTE"
  fi
fi
HAVE_MB=0
[[ " $TOOLS " == *" mariadb-binlog "* ]] && HAVE_MB=1
BINRELAY_ORIG=$BINRELAY
BINRELAY_SHA=""
if [ $HAVE_BINRELAY = 1 ]; then
  # others rebuild build/binrelay at any time: run a copy, so one run measures one binary
  cp "$BINRELAY" "$OUT/binrelay"
  BINRELAY=$OUT/binrelay
  BINRELAY_SHA=$(sha256sum "$BINRELAY" | cut -c1-12)
fi

# ---------------------------------------------------------------- the server
TMP=$(mktemp -d "${BENCH_TMPDIR:-${TMPDIR:-/tmp}}/binrelay-bench.XXXXXX")
SERVER_PID=""
cleanup() {
  local rc=$?
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 300); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$SERVER_PID" 2>/dev/null && kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  cp "$TMP/error.log" "$OUT/mariadbd-error.log" 2>/dev/null || true
  if [ "${KEEP_TMP:-0}" = 1 ]; then
    log "kept $TMP"
  else
    rm -rf "$TMP"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

log "out: $OUT   tmp: $TMP   SCALE=$SCALE RUNS=$RUNS"
mariadb-install-db --no-defaults --auth-root-authentication-method=normal \
  --datadir="$TMP/data" --user=root --skip-test-db >"$OUT/install-db.log" 2>&1 ||
  die "mariadb-install-db failed, see $OUT/install-db.log"

extra_server=()
[ -n "${BENCH_ROW_METADATA:-}" ] && extra_server+=(--binlog-row-metadata="$BENCH_ROW_METADATA")
SOCK=$TMP/mariadbd.sock
for attempt in 1 2 3; do
  PORT=$(free_port)
  /usr/sbin/mariadbd --no-defaults --user=root --datadir="$TMP/data" \
    --socket="$SOCK" --port="$PORT" --bind-address=127.0.0.1 --skip-name-resolve \
    --pid-file="$TMP/mariadbd.pid" --log-error="$TMP/error.log" \
    --log-bin="$TMP/data/mysql-bin" --binlog-format=ROW --binlog-row-image=FULL \
    --server-id=1 --max-binlog-size=1073741824 --default-time-zone=+00:00 \
    --innodb-buffer-pool-size=1G --innodb-log-file-size=512M \
    --innodb-flush-log-at-trx-commit=0 --sync-binlog=0 --max-allowed-packet=256M \
    "${extra_server[@]}" >/dev/null 2>&1 &
  SERVER_PID=$!
  up=0
  for _ in $(seq 1 600); do
    kill -0 "$SERVER_PID" 2>/dev/null || break
    if mariadb-admin --no-defaults --socket="$SOCK" -uroot ping >/dev/null 2>&1; then up=1; break; fi
    sleep 0.1
  done
  [ $up = 1 ] && break
  log "mariadbd did not come up on port $PORT (attempt $attempt): $(tail -2 "$TMP/error.log" 2>/dev/null)"
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
done
[ -n "$SERVER_PID" ] || die "could not start mariadbd"
log "mariadbd pid $SERVER_PID on 127.0.0.1:$PORT"

sql() { mariadb --no-defaults --socket="$SOCK" -uroot -N -B "$@"; }

sql <<SQL
CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';
ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY '$PW';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
SQL
export BINRELAY_SOURCE_PASSWORD=$PW
SERVER_VERSION=$(sql -e 'SELECT VERSION()')
ROW_METADATA=$(sql -e 'SELECT @@binlog_row_metadata')
HAVE_SSL=$(sql -e 'SELECT @@have_ssl')
GIT_HEAD=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
BINRELAY_MTIME=$(date -r "$BINRELAY_ORIG" '+%Y-%m-%d %H:%M:%S' 2>/dev/null || echo missing)
CPU_MODEL=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')

# ---------------------------------------------------------------- schema
sql <<'SQL'
CREATE DATABASE bench;
USE bench;
CREATE TABLE bench.tiny (id INT PRIMARY KEY, v VARCHAR(16)) ENGINE=InnoDB;
CREATE TABLE bench.sub (
  id BIGINT PRIMARY KEY, k INT NOT NULL, v BIGINT, name VARCHAR(64),
  ts DATETIME, amount DECIMAL(12,2)) ENGINE=InnoDB;
CREATE TABLE bench.unsub LIKE bench.sub;
CREATE TABLE bench.hot (
  id INT PRIMARY KEY, v BIGINT NOT NULL, ts DATETIME, note VARCHAR(32),
  amount DECIMAL(12,2)) ENGINE=InnoDB;
INSERT INTO bench.hot SELECT seq, 0, '2024-01-01 00:00:00', 'n', 0 FROM seq_1_to_10;
CREATE TABLE bench.wide (
  id BIGINT PRIMARY KEY,
  i1 INT, i2 INT UNSIGNED, i3 SMALLINT, i4 TINYINT, i5 MEDIUMINT, i6 BIGINT,
  i7 BIGINT UNSIGNED,
  f1 FLOAT, f2 DOUBLE, f3 DOUBLE,
  d1 DECIMAL(10,2), d2 DECIMAL(18,4), d3 DECIMAL(30,10), d4 DECIMAL(5,0), d5 DECIMAL(12,6),
  dt1 DATETIME, dt2 DATETIME(6), ts1 TIMESTAMP NULL, ts2 TIMESTAMP(3) NULL,
  da1 DATE, tm1 TIME, tm2 TIME(3), y1 YEAR,
  s1 VARCHAR(32), s2 VARCHAR(64), s3 VARCHAR(255), s4 CHAR(16),
  s5 VARCHAR(100) CHARACTER SET utf8mb4, s6 VARCHAR(20) NULL,
  e1 ENUM('red','green','blue'), st1 SET('x','y','z'), b1 BIT(8), bin1 BINARY(8),
  vb1 VARBINARY(32), t1 TEXT, bl1 BLOB, bl2 MEDIUMBLOB, j1 JSON, flag TINYINT(1)
) ENGINE=InnoDB;
SQL

# ---------------------------------------------------------------- generators
# Each generator prints SQL on stdout; every statement is followed by a position
# mark so binlog_parts.py can attribute bytes to parts.
mark() {
  [ "$1" = start ] && echo "USE bench;"   # seq_1_to_N needs a current database
  printf "SELECT 'TAG', '%s'; SHOW MASTER STATUS;\n" "$1"
}
scaled() { python3 -c "import sys; print(max(1, round(float(sys.argv[1]) * float(sys.argv[2]))))" "$1" "$SCALE"; }

gen_empty() {
  mark start
  echo "INSERT INTO bench.tiny VALUES (1, 'x');"; mark tiny
}

sub_cols="seq, seq * 7919 % 100000, seq * 31, CONCAT('name-', seq, '-', LEFT(MD5(seq), 8)), '2024-01-01 00:00:00' + INTERVAL seq SECOND, (seq % 100000) / 100"
# Rows 1..n inserted in c-row INSERTs, alternating between bench.sub and
# bench.unsub.
insert_alternating() {
  local n=$1 c=$2 a b
  for ((a = 1; a <= n; a += c)); do
    b=$((a + c - 1)); ((b > n)) && b=$n
    for t in sub unsub; do
      echo "INSERT INTO bench.$t (id, k, v, name, ts, amount) SELECT $sub_cols FROM seq_${a}_to_${b};"; mark "$t"
    done
  done
}

gen_mixed() {
  local n=$1 c=5000 a b
  mark start
  insert_alternating "$n" "$c"
  for ((a = 1; a <= n; a += c)); do
    b=$((a + c - 1)); ((b > n)) && b=$n
    for t in sub unsub; do
      echo "UPDATE bench.$t SET k = k + 1, amount = amount + 0.01, ts = ts + INTERVAL 1 SECOND WHERE id BETWEEN $a AND $b;"; mark "$t"
    done
  done
}

# Insert-heavy: 500-row INSERTs, alternating between the subscribed and an
# unsubscribed table (the apply pipelines' load; annotate rows on, as
# MariaDB's default).
gen_insert() {
  echo "TRUNCATE bench.sub; TRUNCATE bench.unsub;"  # after mixed, which filled them
  mark start
  insert_alternating "$1" 500
}

gen_hot() {
  local stmts=$1
  mark start
  # one autocommit transaction per UPDATE, each changing the same 10 rows
  printf '%s\n' "DELIMITER //" \
    "BEGIN NOT ATOMIC DECLARE i INT DEFAULT 0; WHILE i < $stmts DO UPDATE bench.hot SET v = v + 1, ts = ts + INTERVAL 1 SECOND, note = CONCAT('n', i), amount = amount + 0.01 WHERE id BETWEEN 1 AND 10; SET i = i + 1; END WHILE; END//" \
    "DELIMITER ;"
  mark hot
}

wide_cols="seq, seq * 13, seq * 7 % 4000000000, seq % 32000, seq % 120, seq % 8000000, seq * 1000003, seq * 977,
  seq / 7, seq / 3.0e0, seq * 1.5e10,
  (seq % 1000000) / 100, seq / 10000, seq / 7, seq % 99999, (seq % 100000) / 1000000,
  '2024-01-01 00:00:00' + INTERVAL seq SECOND, '2024-01-01 00:00:00.123456' + INTERVAL seq SECOND,
  FROM_UNIXTIME(1700000000 + seq), FROM_UNIXTIME(1700000000.123 + seq), '2024-01-01' + INTERVAL (seq % 3650) DAY,
  SEC_TO_TIME(seq % 86400), SEC_TO_TIME(seq % 86400 + 0.25), 2000 + seq % 100,
  CONCAT('s1-', seq), MD5(seq), CONCAT(SHA2(seq, 256), '-', seq), LEFT(MD5(seq + 1), 16),
  CONCAT('ünïcødé-ß-€-', seq), IF(seq % 3 = 0, NULL, CONCAT('maybe-', seq)),
  ELT(1 + seq % 3, 'red', 'green', 'blue'), ELT(1 + seq % 3, 'x', 'x,y', 'x,y,z'), seq % 256, UNHEX(LPAD(HEX(seq), 16, '0')),
  UNHEX(SHA2(seq, 256)), REPEAT(CONCAT('text-', seq, ' '), 4), UNHEX(SHA2(seq, 512)), UNHEX(CONCAT(SHA2(seq, 512), SHA2(seq + 1, 512))),
  CONCAT('{\"key\": ', seq, ', \"tags\": [\"a\", \"b\"], \"n\": ', seq % 10, '}'), seq % 2"
gen_wide() {
  local n=$1 c=2000 a b
  mark start
  for ((a = 1; a <= n; a += c)); do
    b=$((a + c - 1)); ((b > n)) && b=$n
    echo "INSERT INTO bench.wide SELECT $wide_cols FROM seq_${a}_to_${b};"; mark wide
  done
  for ((a = 1; a <= n; a += c)); do
    b=$((a + c - 1)); ((b > n)) && b=$n
    echo "UPDATE bench.wide SET i1 = i1 + 1, d2 = d2 + 1, dt1 = dt1 + INTERVAL 1 SECOND WHERE id BETWEEN $a AND $b;"; mark wide
  done
}

# ---------------------------------------------------------------- measurement
# rec VARIANT TOOL RUN JSON  -> raw.jsonl
rec() {
  python3 -c 'import json,sys; r=json.loads(sys.argv[4]); r.update(variant=sys.argv[1], tool=sys.argv[2], run=int(sys.argv[3]), stats=sys.argv[5]); print(json.dumps(r))' \
    "$1" "$2" "$3" "$4" "${5:-}" >>"$RAW"
}

# measure VARIANT TOOL RUN  (RUN 0 = untimed validation pass with row counting)
measure() {
  local v=$1 tool=$2 run=$3 res mode=null grep_arg=() errf="$OUT/$v.$tool.stderr"
  [ "$run" = 0 ] && mode=lines
  case $tool in
    binrelay|binrelay-none|binrelay-all)
      local tables=$SUB_TABLE
      [ "$tool" = binrelay-none ] && tables=bench.unsub_nonexistent_table
      [ "$tool" = binrelay-all ] && tables=bench.sub,bench.unsub
      res=$(python3 "$HERE/run_timed.py" "$mode" --stderr "$errf" --timeout "$TOOL_TIMEOUT" -- \
        "$BINRELAY" tail --source "127.0.0.1:$PORT" --user root --tables "$tables" \
        --start "${FILES[0]}:4" --until-end) ;;
    mariadb-binlog)
      [ "$run" = 0 ] && grep_arg=(--grep "^### (INSERT INTO|UPDATE|DELETE FROM) \`bench\`\\.\`${SUB_TABLE#bench.}\`")
      res=$(python3 "$HERE/run_timed.py" "$mode" --stderr "$errf" --timeout "$TOOL_TIMEOUT" "${grep_arg[@]}" -- \
        mariadb-binlog --no-defaults --read-from-remote-server -h127.0.0.1 -P "$PORT" -uroot "-p$PW" \
        -v --start-position=4 "${FILES[@]}") ;;
    go-mysql)
      local extra=()
      [ "$run" = 0 ] && extra=(--verify --sample "$OUT/$v.go-mysql.sample")
      res=$(python3 "$HERE/run_timed.py" gomysql --bin "$GOMYSQL_BIN" --stderr "$errf" \
        --timeout "$PEER_TIMEOUT" --expect "$EXPECT" "${extra[@]}" --connect "$GOMYSQL_CONNECT") ;;
  esac
  local stats=""
  if [ "$run" = 0 ] && [[ $tool == binrelay* ]]; then
    stats=$(grep -o 'done: .*' "$errf" 2>/dev/null | tail -1 || true)
  fi
  rec "$v" "$tool" "$run" "$res" "$stats"
  log "  $v $tool run $run: $res"
}

python3 - "$OUT/meta.jsonl" <<EOF
import json, sys
meta = {"kind": "run", "scale": float("$SCALE"), "runs": int("$RUNS"), "server": "$SERVER_VERSION",
        "row_metadata": "$ROW_METADATA", "binrelay": "$BINRELAY_ORIG", "binrelay_sha": "$BINRELAY_SHA", "have_binrelay": $HAVE_BINRELAY,
        "binrelay_note": "$BINRELAY_NOTE", "have_gomysql": $HAVE_GOMYSQL, "gomysql_note": "$GOMYSQL_NOTE",
        "gomysql_pkg": "$GOMYSQL_PKG", "have_mariadb_binlog": $HAVE_MB, "stamp": "$STAMP",
        "have_ssl": "$HAVE_SSL", "git_head": "$GIT_HEAD", "binrelay_mtime": "$BINRELAY_MTIME",
        "cpu": "$CPU_MODEL", "nproc": $(nproc), "load_start": open("/proc/loadavg").read().split()[:3]}
open(sys.argv[1], "a").write(json.dumps(meta) + "\n")
EOF

for v in $VARIANTS; do
  case $v in
    empty) SUB_TABLE=bench.tiny; EXPECT=1; gen() { gen_empty; } ;;
    mixed) N=$(scaled 500000); SUB_TABLE=bench.sub; EXPECT=$((2 * N)); gen() { gen_mixed "$N"; } ;;
    insert) N=$(scaled 500000); SUB_TABLE=bench.sub; EXPECT=$N; gen() { gen_insert "$N"; } ;;
    hot)   N=$(scaled 100000); SUB_TABLE=bench.hot; EXPECT=$((10 * N)); gen() { gen_hot "$N"; } ;;
    wide)  N=$(scaled 200000); SUB_TABLE=bench.wide; EXPECT=$((2 * N)); gen() { gen_wide "$N"; } ;;
    *) die "unknown variant $v" ;;
  esac
  sql -e 'FLUSH BINARY LOGS'
  START_FILE=$(sql -e 'SHOW MASTER STATUS' | cut -f1)
  log "variant $v: generating into $START_FILE.. ($SUB_TABLE rows expected: $EXPECT)"
  t0=$(date +%s.%N)
  gen >"$OUT/$v.gen.sql"
  sql <"$OUT/$v.gen.sql" >"$OUT/$v.positions"
  t1=$(date +%s.%N)
  sql -e 'SHOW BINARY LOGS' >"$OUT/$v.binlogs"
  python3 "$HERE/binlog_parts.py" "$OUT/$v.positions" "$OUT/$v.binlogs" "$v" "$START_FILE" >"$OUT/$v.parts.json"
  python3 - "$OUT/$v.parts.json" "$OUT/meta.jsonl" "$EXPECT" "$SUB_TABLE" "$t0" "$t1" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
m.update(expected=int(sys.argv[3]), table=sys.argv[4], gen_seconds=float(sys.argv[6]) - float(sys.argv[5]))
open(sys.argv[2], "a").write(json.dumps(m) + "\n")
EOF
  mapfile -t FILES < <(python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["files"]))' "$OUT/$v.parts.json")
  log "variant $v: $(cat "$OUT/$v.parts.json") in $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}")s"
  GOMYSQL_CONNECT=$(python3 -c 'import json,sys; print(json.dumps({"type":"connect","config":{"hostname":"127.0.0.1","port":int(sys.argv[1]),"username":"root","password":sys.argv[2],"tableRegexes":["^"+sys.argv[3].replace(".","\\.")+"$"],"binlogPosition":{"name":sys.argv[4],"position":4}}}, separators=(",",":")))' "$PORT" "$PW" "$SUB_TABLE" "${FILES[0]}")
  echo "$GOMYSQL_CONNECT" | sed "s/$PW/***/" >"$OUT/$v.go-mysql.connect"

  tools=()
  if [ $HAVE_BINRELAY = 1 ]; then
    tools+=(binrelay binrelay-none)
    [ "$v" = mixed ] && tools+=(binrelay-all)
  fi
  [ $HAVE_MB = 1 ] && tools+=(mariadb-binlog)
  [ $HAVE_GOMYSQL = 1 ] && tools+=(go-mysql)
  runs=()
  [ "$VALIDATE" = 1 ] && runs+=(0)
  for ((r = 1; r <= RUNS; r++)); do runs+=("$r"); done
  for r in "${runs[@]}"; do
    for tool in "${tools[@]}"; do
      measure "$v" "$tool" "$r"
    done
  done
done

# ---------------------------------------------------------------- report
DAY=$(date +%Y-%m-%d)
if [ "$SCALE" = 1 ] || [ "$SCALE" = 1.0 ]; then
  RESULTS=$HERE/results-$DAY.md
else
  RESULTS=$HERE/results-$DAY-scale$SCALE.md
fi
python3 "$HERE/report.py" "$OUT/meta.jsonl" "$RAW" >"$OUT/results.md"
cp "$OUT/results.md" "$RESULTS"
cat "$RESULTS"
log "wrote $RESULTS (raw data in $OUT)"
