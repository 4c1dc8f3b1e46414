#!/usr/bin/env bash
# The serve benchmark: `binrelay serve` against MariaDB's own tools on
# ~1 GiB of binlog generated in a throwaway MariaDB 10.11. See bench/README.md.
#
#   bench/serve_bench.sh                 # full run (SCALE=1.0, ~1 GiB of binlog)
#   SCALE=0.05 bench/serve_bench.sh      # quick check of the whole pipeline
#
# Parts, all in one run against the same binlog:
#   ingest   binrelay serve (sync=off / transaction / interval) copying every
#            file into an empty store vs mariadb-binlog --raw --to-last-log,
#            and dd conv=fdatasync as the disk's own durable write rate
#   replica  a fresh MariaDB replica catching up from binrelay vs from the source
#   fanout   FANOUT concurrent mariadb-binlog --raw readers from binrelay vs source
#   latency  a live replica of binrelay (sync=transaction) vs one of the source:
#            commit on the source -> event read by the replica's IO thread
#
# Environment:
#   SCALE=1.0         scales every row count (1.0: about 1 GiB of binlog)
#   RUNS=3            timed runs per cell (the median is reported)
#   PARTS="ingest replica fanout latency"
#   LATENCY_N=300     single-row transactions timed in the latency part
#   SERVE_SYNC=transaction  [store] sync of the binrelay that replicas read from
#   INGEST_TOOLS="binrelay-off binrelay-txn binrelay-interval mariadb-binlog dd"
#   SYNC_INTERVAL=100ms   [store] sync of binrelay-interval
#   FANOUT=8          concurrent readers in the fan-out part
#   APPLY_RUNS=1      replica runs per upstream with the SQL thread on too (0: none)
#   BINRELAY=build/binrelay
#   BENCH_TMPDIR=${TMPDIR:-/tmp}  where datadirs, stores and copies go
#   TOOL_TIMEOUT=900  seconds before a measurement is abandoned
#   KEEP_TMP=1        keep the temp dir after the run
#   BENCH_NICE=10     niceness for the whole run (servers and clients)
set -euo pipefail

if [ -z "${BENCH_NICED:-}" ]; then
  export BENCH_NICED=1
  exec nice -n "${BENCH_NICE:-10}" bash "$0" "$@"
fi

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
SCALE=${SCALE:-1.0}
RUNS=${RUNS:-3}
PARTS=${PARTS:-"ingest replica fanout latency"}
LATENCY_N=${LATENCY_N:-300}
SERVE_SYNC=${SERVE_SYNC:-transaction}
INGEST_TOOLS=${INGEST_TOOLS:-"binrelay-off binrelay-txn binrelay-interval mariadb-binlog dd"}
SYNC_INTERVAL=${SYNC_INTERVAL:-100ms}
FANOUT=${FANOUT:-8}
APPLY_RUNS=${APPLY_RUNS:-1}
BINRELAY=${BINRELAY:-$ROOT/build/binrelay}
TOOL_TIMEOUT=${TOOL_TIMEOUT:-900}
PW=${BENCH_PASSWORD:-bench-pw}
STAMP=$(date +%Y%m%d-%H%M%S)
OUT=$HERE/out/$STAMP
mkdir -p "$OUT"
RAW=$OUT/raw.jsonl
: >"$RAW"
TIMED=$HERE/serve_timed.py

brief() {  # brief JSON -> the fields worth a log line
  python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(" ".join("%s=%s" % (k, round(v, 3) if isinstance(v, float) else v) for k, v in r.items() if k in ("wall", "exec", "stop", "user", "sys", "ok", "note", "rc", "rcs") and v not in ("", None)))' "$1" 2>/dev/null || echo "$1"
}
log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" | tee -a "$OUT/bench.log" >&2; }
die() { log "ERROR: $*"; exit 1; }
part_on() { [[ " $PARTS " == *" $1 "* ]]; }

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

HAVE_BINRELAY=0
BINRELAY_NOTE=""
BINRELAY_ORIG=$BINRELAY
BINRELAY_SHA=""
if [ -x "$BINRELAY" ] && "$BINRELAY" serve --help >/dev/null 2>&1; then
  HAVE_BINRELAY=1
  # others rebuild build/binrelay at any time: run a copy, so one run measures one binary
  cp "$BINRELAY" "$OUT/binrelay"
  BINRELAY=$OUT/binrelay
  BINRELAY_SHA=$(sha256sum "$BINRELAY" | cut -c1-12)
else
  BINRELAY_NOTE="\`$BINRELAY serve --help\` failed: binrelay not measured"
  log "$BINRELAY_NOTE"
fi

# ---------------------------------------------------------------- servers
TMP=$(mktemp -d "${BENCH_TMPDIR:-${TMPDIR:-/tmp}}/binrelay-sbench.XXXXXX")
declare -A PIDS=()   # name -> pid of every server this script started

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

cleanup() {
  local rc=$?
  for name in "${!PIDS[@]}"; do stop_pid "$name"; done
  cp "$TMP/source.err" "$OUT/mariadbd-source.err" 2>/dev/null || true
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

# cpu_of NAME: user+sys seconds a started server has used so far
cpu_of() {
  local pid=${PIDS[$1]:-}
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || { echo 0; return; }
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$pid/stat"
}

# start_mariadbd NAME DATADIR [mariadbd options...]; sets PORT_<NAME>, SOCK_<NAME>
start_mariadbd() {
  local name=$1 datadir=$2 port up pid sock=$TMP/$1.sock
  shift 2
  for attempt in 1 2 3; do
    port=$(free_port)
    /usr/sbin/mariadbd --no-defaults --user=root --datadir="$datadir" \
      --socket="$sock" --port="$port" --bind-address=127.0.0.1 --skip-name-resolve \
      --pid-file="$TMP/$name.pid" --log-error="$TMP/$name.err" --default-time-zone=+00:00 \
      --innodb-buffer-pool-size=1G --innodb-log-file-size=512M \
      --innodb-flush-log-at-trx-commit=0 --max-allowed-packet=256M "$@" >/dev/null 2>&1 &
    pid=$!
    PIDS[$name]=$pid
    up=0
    for _ in $(seq 1 600); do
      kill -0 "$pid" 2>/dev/null || break
      if mariadb-admin --no-defaults --socket="$sock" -uroot ping >/dev/null 2>&1; then up=1; break; fi
      sleep 0.1
    done
    if [ $up = 1 ]; then
      printf -v "PORT_$name" '%s' "$port"
      printf -v "SOCK_$name" '%s' "$sock"
      return 0
    fi
    log "mariadbd $name did not come up on port $port (attempt $attempt): $(tail -2 "$TMP/$name.err" 2>/dev/null)"
    stop_pid "$name"
  done
  die "could not start mariadbd $name"
}

install_db() {  # install_db DATADIR LOGNAME
  mariadb-install-db --no-defaults --auth-root-authentication-method=normal \
    --datadir="$1" --user=root --skip-test-db >"$OUT/$2.log" 2>&1 ||
    die "mariadb-install-db failed, see $OUT/$2.log"
}

log "out: $OUT   tmp: $TMP   SCALE=$SCALE RUNS=$RUNS PARTS=$PARTS"
install_db "$TMP/source" install-source
# sync_binlog=0 and no InnoDB flush per commit: generation speed only (reading
# the binlog is unaffected). 256M files: the 1 GiB spans several files.
start_mariadbd source "$TMP/source" --log-bin="$TMP/source/mysql-bin" --binlog-format=ROW \
  --binlog-row-image=FULL --server-id=1 --max-binlog-size=256M --sync-binlog=0
log "source mariadbd pid ${PIDS[source]} on 127.0.0.1:$PORT_source"

sql() { mariadb --no-defaults --socket="$SOCK_source" -uroot -N -B "$@"; }

# Users are created outside the binlog: replicas apply everything from file 1.
sql <<SQL
SET sql_log_bin = 0;
CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';
ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY '$PW';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
SQL
SERVER_VERSION=$(sql -e 'SELECT VERSION()')
CHECKSUM=$(sql -e 'SELECT @@binlog_checksum')
GIT_HEAD=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
BINRELAY_MTIME=$(date -r "$BINRELAY_ORIG" '+%Y-%m-%d %H:%M:%S' 2>/dev/null || echo missing)
CPU_MODEL=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
FS_INFO=$(df -hT "$TMP" | awk 'NR==2 {print $1 " (" $2 ")"}')

# ---------------------------------------------------------------- the binlog
# One orders table with realistic rows (about 250 bytes per row image: ids,
# amounts, timestamps, short and medium strings). Three parts:
#   bulk    inserts in 2,000-row transactions (~0.5 MB each)
#   update  updates of 1,000 rows per transaction (before and after images)
#   small   autocommit single-row updates (one small transaction each)
sql <<'SQL'
CREATE DATABASE bench;
CREATE TABLE bench.orders (
  id BIGINT PRIMARY KEY, customer_id INT NOT NULL, status TINYINT NOT NULL,
  amount DECIMAL(12,2) NOT NULL, currency CHAR(3) NOT NULL,
  created_at DATETIME(6) NOT NULL, updated_at DATETIME(6) NOT NULL,
  sku VARCHAR(32) NOT NULL, email VARCHAR(128), note VARCHAR(255)) ENGINE=InnoDB;
SQL

mark() { printf "SELECT 'TAG', '%s'; SHOW MASTER STATUS;\n" "$1"; }
scaled() { python3 -c "import sys; print(max(1, round(float(sys.argv[1]) * float(sys.argv[2]))))" "$1" "$SCALE"; }
N_BULK=$(scaled 3200000)
N_UPDATE=$(scaled 1100000)
N_SMALL=$(scaled 5000)
BULK_TXN=2000
UPDATE_TXN=1000

order_cols="seq, seq * 7919 % 200000, seq % 5, (seq * 37 % 10000000) / 100, ELT(1 + seq % 3, 'EUR', 'USD', 'GBP'),
  '2024-01-01 00:00:00.000000' + INTERVAL seq * 1000 MICROSECOND, '2024-01-01 00:00:00' + INTERVAL seq SECOND,
  CONCAT('SKU-', LPAD(seq % 100000, 6, '0'), '-', LEFT(MD5(seq), 6)),
  CONCAT('customer', seq * 7919 % 200000, '@example.', ELT(1 + seq % 4, 'com', 'org', 'net', 'de')),
  CONCAT('order ', seq, ': ', REPEAT(MD5(seq), 1 + seq % 5))"
gen() {
  local a b
  echo "USE bench;"
  mark start
  for ((a = 1; a <= N_BULK; a += BULK_TXN)); do
    b=$((a + BULK_TXN - 1)); ((b > N_BULK)) && b=$N_BULK
    echo "INSERT INTO bench.orders SELECT $order_cols FROM seq_${a}_to_${b};"; mark bulk
  done
  for ((a = 1; a <= N_UPDATE; a += UPDATE_TXN)); do
    b=$((a + UPDATE_TXN - 1)); ((b > N_UPDATE)) && b=$N_UPDATE
    echo "UPDATE bench.orders SET status = status + 1, amount = amount + 1.25, updated_at = updated_at + INTERVAL 1 DAY, note = CONCAT('shipped ', id, ': ', REPEAT(SHA1(id), 1 + id % 4)) WHERE id BETWEEN $a AND $b;"; mark update
  done
  printf '%s\n' "DELIMITER //" \
    "BEGIN NOT ATOMIC DECLARE i INT DEFAULT 0; WHILE i < $N_SMALL DO UPDATE bench.orders SET status = 9, amount = amount - 0.5, updated_at = updated_at + INTERVAL 1 SECOND WHERE id = 1 + (i * 7919) % $N_BULK; SET i = i + 1; END WHILE; END//" \
    "DELIMITER ;"
  mark small
}

log "generating: $N_BULK bulk inserts, $N_UPDATE updates, $N_SMALL small transactions"
t0=$(date +%s.%N)
gen >"$OUT/gen.sql"
sql <"$OUT/gen.sql" >"$OUT/positions"
# Close the last data file (every data file is then final on the source), then
# end the stream with one small transaction in the new file: the stream ends
# at a transaction end, as it does on a live primary.
sql -e 'FLUSH BINARY LOGS'
wait_end_stable() {  # the last file's size stops moving (BINLOG_CHECKPOINT is written late)
  local prev="" now
  for _ in $(seq 1 100); do
    sleep 0.3
    sql -e 'SHOW BINARY LOGS' >"$OUT/binlogs"
    now=$(tail -1 "$OUT/binlogs" | cut -f1,2)
    [ "$now" = "$prev" ] && return 0
    prev=$now
  done
  die "the source's binlog end kept moving: $now"
}
wait_end_stable
sql -e "CREATE TABLE bench.marker (id INT PRIMARY KEY) ENGINE=InnoDB; INSERT INTO bench.marker VALUES (1)"
t1=$(date +%s.%N)
wait_end_stable
# SHOW MASTER STATUS can lag the file after a rotation: the end is the size.
read -r END_FILE END_POS < <(tail -1 "$OUT/binlogs" | cut -f1,2)
mapfile -t FILES < <(cut -f1 "$OUT/binlogs")
FIRST_FILE=${FILES[0]}
TOTAL_BYTES=$(awk '{s += $2} END {print s}' "$OUT/binlogs")
# Bytes per part from the marks (pairs of lines "TAG<TAB>part", "file<TAB>pos").
# A part may span rotations (the small part is 5,000 transactions): it gets
# the rest of the old file, the files in between and the new file up to the mark.
python3 - "$OUT/positions" "$OUT/binlogs" >"$OUT/parts.json" <<'EOF'
import json, sys
sizes, order = {}, []
for line in open(sys.argv[2]):
    name, size = line.split("\t")[:2]
    sizes[name] = int(size)
    order.append(name)
marks, tag = [], None
for line in open(sys.argv[1]):
    cols = line.rstrip("\n").split("\t")
    if cols[0] == "TAG" and len(cols) >= 2:
        tag = cols[1]
    elif tag is not None and len(cols) >= 2 and cols[1].isdigit():
        marks.append((tag, cols[0], int(cols[1])))
        tag = None
parts = {}
for (_, f0, p0), (part, f1, p1) in zip(marks, marks[1:]):
    i0, i1 = order.index(f0), order.index(f1)
    if i0 == i1:
        delta = p1 - p0
    else:
        delta = sizes[f0] - p0 + sum(sizes[n] for n in order[i0 + 1:i1]) + p1
    parts[part] = parts.get(part, 0) + delta
print(json.dumps({"bytes_parts": parts}))
EOF
log "binlog: ${#FILES[@]} files $FIRST_FILE..$END_FILE, $TOTAL_BYTES bytes, end $END_FILE:$END_POS, generated in $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}")s"

python3 - "$OUT/meta.json" <<EOF
import json, sys
parts = json.load(open("$OUT/parts.json"))
meta = {"scale": float("$SCALE"), "runs": int("$RUNS"), "parts": "$PARTS".split(),
        "server": "$SERVER_VERSION", "checksum": "$CHECKSUM", "binrelay": "$BINRELAY_ORIG",
        "binrelay_sha": "$BINRELAY_SHA", "binrelay_mtime": "$BINRELAY_MTIME",
        "have_binrelay": $HAVE_BINRELAY, "binrelay_note": "$BINRELAY_NOTE", "git_head": "$GIT_HEAD",
        "stamp": "$STAMP", "cpu": "$CPU_MODEL", "nproc": $(nproc), "fs": "$FS_INFO",
        "load_start": open("/proc/loadavg").read().split()[:3],
        "files": "${FILES[*]}".split(), "total_bytes": int("$TOTAL_BYTES"),
        "end": ["$END_FILE", int("$END_POS")], "bytes_parts": parts["bytes_parts"],
        "rows": {"bulk": int("$N_BULK"), "update": int("$N_UPDATE"), "small": int("$N_SMALL")},
        "transactions": {"bulk": -(-int("$N_BULK") // $BULK_TXN),
                         "update": -(-int("$N_UPDATE") // $UPDATE_TXN), "small": int("$N_SMALL")},
        "gen_seconds": float("$t1") - float("$t0"), "sync_interval": "$SYNC_INTERVAL",
        "fanout": int("$FANOUT"), "notes": []}
json.dump(meta, open(sys.argv[1], "w"))
EOF
note() {  # note TEXT: a line for the results' notes
  log "note: $*"
  python3 - "$OUT/meta.json" "$*" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1])); m["notes"].append(sys.argv[2]); json.dump(m, open(sys.argv[1], "w"))
EOF
}

# rec PART TOOL RUN JSON [key=value...] -> raw.jsonl
rec() {
  python3 - "$@" >>"$RAW" <<'EOF'
import json, sys
part, tool, run, res = sys.argv[1:5]
r = json.loads(res) if res.strip() else {"ok": False, "note": "no result"}
r.update(part=part, tool=tool, run=int(run))
for kv in sys.argv[5:]:
    k, v = kv.split("=", 1)
    try:
        r[k] = json.loads(v)
    except ValueError:
        r[k] = v
print(json.dumps(r))
EOF
}

settle() {  # between measurements: no dirty page cache left from the last one
  sync -f "$TMP" 2>/dev/null || sync
  sleep 1
}

# write_cnf FILE STORE_DIR SYNC LISTEN_PORT HTTP_PORT
# Every binrelay start registers with a new [source] server_id: after a stop,
# the source lists the old registration until its dump thread notices the
# closed connection (binrelay before f6323f3 refused to start then).
NEXT_SID=4001
write_cnf() {
  local sid=$NEXT_SID
  NEXT_SID=$((NEXT_SID + 1))
  cat >"$1" <<EOF
[source]
host = 127.0.0.1
port = $PORT_source
user = root
password = $PW
server_id = $sid
ssl_mode = disabled
start = earliest
heartbeat = 2s
[store]
dir = $2
sync = $3
[listen]
address = 127.0.0.1
port = $4
server_id = 1
user = replica
password = $PW
[http]
address = 127.0.0.1:$5
EOF
}

compare_copy() {  # compare_copy DIR -> JSON
  python3 "$TIMED" compare --src "$TMP/source" --dst "$1" -- "${FILES[@]}"
}

# ---------------------------------------------------------------- part 1: ingest
MIB=$(( (TOTAL_BYTES + 1048575) / 1048576 ))
SERVE_STORE=""
ingest_one() {  # ingest_one TOOL RUN
  local tool=$1 run=$2 res dir=$TMP/ingest-$1 extra=() cpu0 cpu1 sync http
  rm -rf "$dir"
  cpu0=$(cpu_of source)
  case $tool in
    binrelay-off|binrelay-txn|binrelay-interval)
      case $tool in
        binrelay-off) sync=off ;;
        binrelay-txn) sync=transaction ;;
        binrelay-interval) sync=$SYNC_INTERVAL ;;
      esac
      mkdir -p "$dir"
      http=$(free_port)
      write_cnf "$dir.cnf" "$dir/store" "$sync" "$(free_port)" "$http"
      res=$(python3 "$TIMED" ingest --status-url "http://127.0.0.1:$http/status" \
        --file "$END_FILE" --offset "$END_POS" --stderr "$OUT/ingest.$tool.stderr" \
        --timeout "$TOOL_TIMEOUT" -- "$BINRELAY" serve --config "$dir.cnf")
      extra+=("bytes=$TOTAL_BYTES" "sync=\"$sync\"")
      if [ "$run" = 0 ]; then
        extra+=("compare=$(compare_copy "$dir/store")")
      fi ;;
    mariadb-binlog)
      mkdir -p "$dir"
      res=$(python3 "$HERE/run_timed.py" null --stderr "$OUT/ingest.$tool.stderr" --timeout "$TOOL_TIMEOUT" -- \
        mariadb-binlog --no-defaults --read-from-remote-server -h127.0.0.1 -P "$PORT_source" -uroot "-p$PW" \
        --raw --to-last-log --result-file="$dir/" "$FIRST_FILE")
      extra+=("bytes=$TOTAL_BYTES")
      [ "$run" = 0 ] && extra+=("compare=$(compare_copy "$dir")") ;;
    dd)
      mkdir -p "$dir"
      res=$(python3 "$HERE/run_timed.py" null --stderr "$OUT/ingest.dd.stderr" --timeout "$TOOL_TIMEOUT" -- \
        dd if=/dev/zero of="$dir/dd.img" bs=1M count="$MIB" conv=fdatasync)
      extra+=("bytes=$((MIB * 1048576))") ;;
    *) die "unknown ingest tool $tool" ;;
  esac
  cpu1=$(cpu_of source)
  rec ingest "$tool" "$run" "$res" "source_cpu=$(awk "BEGIN{print $cpu1 - $cpu0}")" "${extra[@]}"
  log "  ingest $tool run $run: $(brief "$res")"
  # Keep one durable store for the serving parts; everything else goes.
  if [ "$tool" = binrelay-txn ] && [ -z "$SERVE_STORE" ] && [ -d "$dir/store" ]; then
    mv "$dir/store" "$TMP/serve-store"
    SERVE_STORE=$TMP/serve-store
  fi
  rm -rf "$dir" "$dir.cnf"
  settle
}

if part_on ingest; then
  tools=()
  for t in $INGEST_TOOLS; do
    [[ $t == binrelay* ]] && [ $HAVE_BINRELAY = 0 ] && continue
    tools+=("$t")
  done
  log "part 1: ingest of $TOTAL_BYTES bytes by ${tools[*]}"
  for ((r = 0; r <= RUNS; r++)); do
    for t in "${tools[@]}"; do
      [ "$r" = 0 ] && [ "$t" = dd ] && continue   # run 0 validates copies; dd copies nothing
      ingest_one "$t" "$r"
    done
  done
fi

# ---------------------------------------------------------------- binrelay serving
LISTEN_PORT=""
SERVING=0
if [ $HAVE_BINRELAY = 1 ] && { part_on replica || part_on fanout || part_on latency; }; then
  if [ -z "$SERVE_STORE" ]; then
    log "preparing a store for the serving parts (untimed ingest, sync=transaction)"
    mkdir -p "$TMP/prep"
    http=$(free_port)
    write_cnf "$TMP/prep.cnf" "$TMP/serve-store" transaction "$(free_port)" "$http"
    res=$(python3 "$TIMED" ingest --status-url "http://127.0.0.1:$http/status" \
      --file "$END_FILE" --offset "$END_POS" --stderr "$OUT/prepare.stderr" \
      --timeout "$TOOL_TIMEOUT" -- "$BINRELAY" serve --config "$TMP/prep.cnf")
    rec prepare binrelay-txn 0 "$res"
    SERVE_STORE=$TMP/serve-store
  fi
  LISTEN_PORT=$(free_port)
  SERVE_HTTP=$(free_port)
  write_cnf "$TMP/serve.cnf" "$SERVE_STORE" "$SERVE_SYNC" "$LISTEN_PORT" "$SERVE_HTTP"
  "$BINRELAY" serve --config "$TMP/serve.cnf" 2>>"$OUT/serve.stderr" &
  PIDS[binrelay]=$!
  # The store already holds everything: serving starts once the listener answers.
  for _ in $(seq 1 100); do
    if python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$LISTEN_PORT" 2>/dev/null; then
      SERVING=1; break
    fi
    kill -0 "${PIDS[binrelay]}" 2>/dev/null || break
    sleep 0.1
  done
  if [ $SERVING = 1 ]; then
    log "binrelay serving pid ${PIDS[binrelay]} on 127.0.0.1:$LISTEN_PORT (store $SERVE_STORE)"
    curl -s "http://127.0.0.1:$SERVE_HTTP/status" >"$OUT/serve.status.json" 2>/dev/null || true
  else
    note "binrelay serve does not accept connections on [listen] (no serving in this build?): replica and fan-out measured for the source only"
  fi
fi

upstream_args() {  # upstream_args UPSTREAM -> sets UP_PORT UP_USER
  if [ "$1" = binrelay ]; then UP_PORT=$LISTEN_PORT; UP_USER=replica
  else UP_PORT=$PORT_source; UP_USER=root; fi
}
upstreams=(source)
[ $SERVING = 1 ] && upstreams=(binrelay source)

# ---------------------------------------------------------------- part 2: replica
replica_one() {  # replica_one UPSTREAM THREADS RUN
  local up=$1 threads=$2 run=$3 res c0 c1 b0 b1
  upstream_args "$up"
  rm -rf "$TMP/replica"
  cp -a "$TMP/replica-template" "$TMP/replica"
  REPLICA_SID=$((REPLICA_SID + 1))   # a new replica each time, as a fresh server would be
  start_mariadbd replica "$TMP/replica" --server-id="$REPLICA_SID" --skip-slave-start \
    --relay-log="$TMP/replica/relay" --relay-log-index="$TMP/replica/relay.index"
  mariadb --no-defaults --socket="$SOCK_replica" -uroot -e "CHANGE MASTER TO
    MASTER_HOST='127.0.0.1', MASTER_PORT=$UP_PORT, MASTER_USER='$UP_USER', MASTER_PASSWORD='$PW',
    MASTER_LOG_FILE='$FIRST_FILE', MASTER_LOG_POS=4, MASTER_USE_GTID=no"
  c0=$(cpu_of source); b0=$(cpu_of binrelay)
  res=$(python3 "$TIMED" replica --socket "$SOCK_replica" --file "$END_FILE" --offset "$END_POS" \
    --threads "$threads" --timeout "$TOOL_TIMEOUT" --poll 0.05 --log "$OUT/replica.$up.log")
  c1=$(cpu_of source); b1=$(cpu_of binrelay)
  local relay_bytes
  relay_bytes=$(cat "$TMP"/replica/relay.[0-9]* 2>/dev/null | wc -c)
  rec replica "$up" "$run" "$res" "threads=\"$threads\"" "bytes=$TOTAL_BYTES" "relay_bytes=$relay_bytes" \
    "source_cpu=$(awk "BEGIN{print $c1 - $c0}")" "binrelay_cpu=$(awk "BEGIN{print $b1 - $b0}")"
  log "  replica from $up ($threads) run $run: $(brief "$res")"
  cp "$TMP/replica.err" "$OUT/replica.$up.$threads.$run.err" 2>/dev/null || true
  stop_pid replica
  rm -rf "$TMP/replica"
  settle
}

REPLICA_SID=100
if part_on replica; then
  install_db "$TMP/replica-template" install-replica
  log "part 2: replica catch-up from ${upstreams[*]} (IO thread x $RUNS, both threads x $APPLY_RUNS)"
  for ((r = 1; r <= RUNS; r++)); do
    for up in "${upstreams[@]}"; do replica_one "$up" io "$r"; done
  done
  for ((r = 1; r <= APPLY_RUNS; r++)); do
    for up in "${upstreams[@]}"; do replica_one "$up" both "$r"; done
  done
fi

# ---------------------------------------------------------------- part 3: fan-out
# Readers write into per-reader directories whose FILE entries are symlinks
# to /dev/null: the disk stays out of the measurement (run 0: one reader
# writing real files, compared with the source's).
fanout_one() {  # fanout_one UPSTREAM RUN
  local up=$1 run=$2 n=$FANOUT res c0 c1 b0 b1 extra=()
  upstream_args "$up"
  rm -rf "$TMP/fan"
  [ "$run" = 0 ] && n=1
  for ((i = 0; i < n; i++)); do
    mkdir -p "$TMP/fan/r$i"
    if [ "$run" != 0 ]; then
      for f in "${FILES[@]}"; do ln -s /dev/null "$TMP/fan/r$i/$f"; done
    fi
  done
  c0=$(cpu_of source); b0=$(cpu_of binrelay)
  res=$(python3 "$TIMED" fanout --n "$n" --stderr-prefix "$OUT/fanout.$up.$run.r" --timeout "$TOOL_TIMEOUT" -- \
    mariadb-binlog --no-defaults --read-from-remote-server -h127.0.0.1 -P "$UP_PORT" -u"$UP_USER" "-p$PW" \
    --raw --to-last-log --result-file="$TMP/fan/r{i}/" "$FIRST_FILE")
  c1=$(cpu_of source); b1=$(cpu_of binrelay)
  [ "$run" = 0 ] && extra+=("compare=$(compare_copy "$TMP/fan/r0")")
  rec fanout "$up" "$run" "$res" "readers=$n" "bytes=$((n * TOTAL_BYTES))" \
    "source_cpu=$(awk "BEGIN{print $c1 - $c0}")" "binrelay_cpu=$(awk "BEGIN{print $b1 - $b0}")" "${extra[@]}"
  log "  fanout from $up run $run ($n readers): $(brief "$res")"
  rm -rf "$TMP/fan"
  settle
}

if part_on fanout; then
  log "part 3: $FANOUT concurrent mariadb-binlog readers from ${upstreams[*]}"
  for ((r = 0; r <= RUNS; r++)); do
    for up in "${upstreams[@]}"; do fanout_one "$up" "$r"; done
  done
fi

# ---------------------------------------------------------------- part 4: latency
# Two live replicas from the source's current end: one of the source, one of
# binrelay (following the source with sync=transaction: each event is
# fdatasynced before any replica sees it). Single-row autocommits on the
# source; each sample is commit -> read by the replica's IO thread.
latency_part() {
  local lat_file lat_pos res ups=(source)
  [ $SERVING = 1 ] && ups=(source binrelay)
  [ -d "$TMP/replica-template" ] || install_db "$TMP/replica-template" install-replica
  read -r lat_file lat_pos < <(sql -e 'SHOW MASTER STATUS' | cut -f1,2)
  sql -e "CREATE DATABASE latdb; CREATE TABLE latdb.t (id INT PRIMARY KEY) ENGINE=InnoDB"
  local args=()
  for up in "${ups[@]}"; do
    upstream_args "$up"
    rm -rf "$TMP/lat-$up"
    cp -a "$TMP/replica-template" "$TMP/lat-$up"
    REPLICA_SID=$((REPLICA_SID + 1))
    start_mariadbd "lat_$up" "$TMP/lat-$up" --server-id="$REPLICA_SID" --skip-slave-start \
      --relay-log="$TMP/lat-$up/relay" --relay-log-index="$TMP/lat-$up/relay.index"
    local sock_var="SOCK_lat_$up"
    mariadb --no-defaults --socket="${!sock_var}" -uroot -e "CHANGE MASTER TO
      MASTER_HOST='127.0.0.1', MASTER_PORT=$UP_PORT, MASTER_USER='$UP_USER', MASTER_PASSWORD='$PW',
      MASTER_LOG_FILE='$lat_file', MASTER_LOG_POS=$lat_pos, MASTER_USE_GTID=no; START SLAVE"
    args+=(--replica "$up=${!sock_var}")
  done
  res=$(python3 "$TIMED" latency --socket "$SOCK_source" "${args[@]}" --n "$LATENCY_N" \
    --warmup 10 --gap 0.02 --timeout 30 --log "$OUT/latency.log")
  rec latency replicas 1 "$res" "sync=\"$SERVE_SYNC\""
  log "  latency: $(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(r.get("note") or "", " ".join("%s median %.2f ms p99 %.2f ms" % (k, v["median"] or 0, v["p99"] or 0) for k, v in r["by"].items()))' "$res" 2>/dev/null || echo "$res")"
  for up in "${ups[@]}"; do
    cp "$TMP/lat_$up.err" "$OUT/latency.$up.err" 2>/dev/null || true
    stop_pid "lat_$up"
    rm -rf "$TMP/lat-$up"
  done
}
if part_on latency; then
  log "part 4: latency of single-row transactions to a live replica of ${upstreams[*]}"
  latency_part
fi

if [ -n "${PIDS[binrelay]:-}" ]; then
  curl -s "http://127.0.0.1:$SERVE_HTTP/status" >"$OUT/serve.status.end.json" 2>/dev/null || true
  stop_pid binrelay
fi

# ---------------------------------------------------------------- report
DAY=$(date +%Y-%m-%d)
if [ "$SCALE" = 1 ] || [ "$SCALE" = 1.0 ]; then
  RESULTS=$HERE/results-serve-$DAY.md
else
  RESULTS=$HERE/results-serve-$DAY-scale$SCALE.md
fi
python3 - "$OUT/meta.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1])); m["load_end"] = open("/proc/loadavg").read().split()[:3]
json.dump(m, open(sys.argv[1], "w"))
EOF
python3 "$HERE/serve_report.py" "$OUT/meta.json" "$RAW" >"$OUT/results.md"
cp "$OUT/results.md" "$RESULTS"
cat "$RESULTS"
log "wrote $RESULTS (raw data in $OUT)"
