#!/usr/bin/env bash
# Move benchmark: how long `binrelay move` takes to put a table on
# another server, idle and while a writer changes the table at a steady rate
# (RATE statements/s: updates, inserts and deletes), against the usual
# offline tools doing the same copy on the same servers, in the same script:
#   - mariadb-dump --single-transaction | mariadb (one stream; on MySQL
#     mysqldump --single-transaction --set-gtid-purged=OFF | mysql),
#   - mydumper -t CONC --rows (chunked, consistent) then myloader -t CONC.
# Each peer runs twice: idle, and with the same writer on the source as the
# live move (the issue's "while writers run" for every tool; the peers'
# copy is then of their snapshot, so it is not compared).
# binrelay's time includes what the peers do not do: its consistent-snapshot
# checksum of every chunk on both servers and the cutover (lock, apply to the
# lock's position, unlock; rename_source = off so the next run finds the
# table). Each run drops the target's copy first; the idle copies are
# checked with CHECKSUM TABLE against the source's. Every timing starts with
# both servers quiesced and records the CPU seconds of source, target and
# client. Variables: see bench/README.md (the move benchmark).
#
#   bench/move_bench.sh                 # SCALE=1: 1,000,000 sysbench-like rows (~250 MB)
#   SCALE=5 RUNS=1 bench/move_bench.sh  # the issue's 5M rows (about 1 GiB)
#   FLAVOUR=mysql-9.7 SCALE=0.5 RUNS=1 bench/move_bench.sh  # both servers MySQL 9.7
#
# FLAVOUR: mariadb-10.11 (default: the system's /usr/sbin/mariadbd) or
# mysql-9.7 (the release scripts/fetch-servers.sh unpacked into .servers/,
# initialised and started as tests/harness/server_sandbox.cc does).
# Every server and binrelay is a child of this script on free loopback ports,
# stopped by pid on exit. Results: stdout and bench/results-move-DATE-xSCALE.md
# (bench/results-move-mysql97-DATE-xSCALE.md for MySQL 9.7).
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${SCALE:-1}
RUNS=${RUNS:-3}
CONC=${CONC:-2}    # copy threads, mydumper/myloader threads
COPY_THREADS=${COPY_THREADS:-$CONC}  # the move's copy_threads, when it should differ
RATE=${RATE:-500}  # the live run's writes per second
# Which binrelay moves each run times (live: bulk copy writes, the default;
# livetext: bulk_copy = off), and whether the peers run (PEERS=0: not).
KINDS=${KINDS:-idle live livetext}
PEERS=${PEERS:-1}
# CALLGRIND=DIR: each binrelay move runs under valgrind's callgrind, its
# instruction profile in DIR/move-RUN-KIND.out (times are then meaningless;
# with KINDS=idle PEERS=0 it compares two binaries' instructions, BINRELAY=...).
# Both servers' InnoDB buffer pool: by default sized to hold the table (about
# 0.25 GiB per SCALE, with its index and room for the writer's changes), as
# a primary's pool holds its hot tables.
BUFFER_POOL=${BUFFER_POOL:-$(python3 -c "print(max(1, round(0.6 * $SCALE + 0.5)))")G}
export BUFFER_POOL
BINRELAY=${BINRELAY:-build/binrelay}
[ -x "$BINRELAY" ] || { echo "move_bench: $BINRELAY missing; run ./scripts/setup.sh" >&2; exit 1; }
# FLAVOUR: which servers (both source and target), their client and dump
# tool (bench/lib.sh's select_flavour).
. bench/lib.sh  # select_flavour, start_server, log, free_port, now, on, cpu_of, quiesce
select_flavour move_bench
if [ "$SERVER_MYSQL" = 1 ]; then
  DUMP_NAME="dump \\| mysql" CLIENTS_NAME="mysqldump and mysql"
else
  DUMP_NAME="dump \\| mariadb" CLIENTS_NAME="mariadb-dump and mariadb"
fi
export SERVER_NAME DUMP_NAME CLIENTS_NAME FLAVOUR
for tool in mydumper myloader "$DUMP" "$CLIENT" ${MYSQLD:+"$MYSQLD"}; do
  command -v "$tool" >/dev/null || { echo "move_bench: $tool missing (apt-get install mydumper)" >&2; exit 1; }
done
TMP=$(mktemp -d "${BENCH_TMPDIR:-/tmp}/binrelay-mbench.XXXXXX")
chmod 755 "$TMP"
declare -A PIDS=()
cleanup() {
  for n in "${!PIDS[@]}"; do kill "${PIDS[$n]}" 2>/dev/null || true; wait "${PIDS[$n]}" 2>/dev/null || true; done
  [ "${KEEP_TMP:-0}" = 1 ] || rm -rf "$TMP"
}
trap cleanup EXIT
log "servers: source, target $FLAVOUR (SCALE=$SCALE, CONC=$CONC, RATE=$RATE, BUFFER_POOL=$BUFFER_POOL)"
start_server source 1 --log-bin="$TMP/source/mysql-bin" --binlog-format=ROW --binlog-row-image=FULL
# MySQL writes a binlog by default, MariaDB does not: the MySQL target runs
# without one, as the MariaDB target does.
target_args=(); [ "$SERVER_MYSQL" = 1 ] && target_args=(--disable-log-bin)
start_server target 2 "${target_args[@]}"
SERVER_VERSION=$(on source -N -e 'SELECT VERSION()')
export SERVER_VERSION
for s in source target; do on "$s" -e "CREATE USER b@'%' IDENTIFIED BY 'b'; GRANT ALL ON *.* TO b@'%';"; done
ROWS=$(python3 -c "print(int(1000000*$SCALE))")
log "loading sbtest.sbtest1: $ROWS rows"
# As sysbench's prepare does, the secondary index is built after the rows are
# in (a sort: compact pages, and a third of the load time). INDEX_AFTER_LOAD=0
# creates it with the table instead: the rows' random k values then leave its
# pages about half full, as in a table that grew by random inserts.
INDEX_AFTER_LOAD=${INDEX_AFTER_LOAD:-1}
k_index="KEY k_1 (k)"; [ "$INDEX_AFTER_LOAD" = 1 ] && k_index=""
on source -e "CREATE DATABASE sbtest; CREATE TABLE sbtest.sbtest1 (id INT PRIMARY KEY,
  k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT ''
  ${k_index:+, $k_index}) ENGINE=InnoDB"
if [ "$SERVER_MYSQL" = 1 ]; then
  # MySQL has no seq_1_to_N (sequence engine) and 9.7 no MD5(): the same rows'
  # shape from a recursive CTE, with the first 32 hex digits of SHA2 for MD5.
  on source -e "SET SESSION cte_max_recursion_depth = $((ROWS + 1));
  INSERT INTO sbtest.sbtest1 WITH RECURSIVE s (seq) AS (SELECT 1 UNION ALL SELECT seq + 1 FROM s WHERE seq < $ROWS)
  SELECT seq, FLOOR(RAND(seq) * $ROWS), SUBSTRING(REPEAT(CONCAT(LEFT(SHA2(seq, 256), 32), '-'), 4), 1, 119),
  SUBSTRING(REPEAT(LEFT(SHA2(seq + 1, 256), 32), 2), 1, 59) FROM s"
else
on source -e "INSERT INTO sbtest.sbtest1 SELECT seq, FLOOR(RAND(seq) * $ROWS),
  SUBSTRING(REPEAT(CONCAT(MD5(seq), '-'), 4), 1, 119), SUBSTRING(REPEAT(MD5(seq + 1), 2), 1, 59)
  FROM sbtest.seq_1_to_$ROWS"
fi
[ "$INDEX_AFTER_LOAD" = 1 ] && on source -e "ALTER TABLE sbtest.sbtest1 ADD KEY k_1 (k)"
on source -e "ANALYZE TABLE sbtest.sbtest1" >/dev/null
SPORT=$(cat "$TMP/source.port"); TPORT=$(cat "$TMP/target.port")
stats_now=""; [ "$SERVER_MYSQL" = 1 ] && stats_now="SET SESSION information_schema_stats_expiry = 0;"
BYTES=$(on source -N -e "$stats_now SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sbtest' AND TABLE_NAME = 'sbtest1'")

# start_timing / stop_timing KEY: wall time and the two servers' CPU seconds
# (after quiesce: the live writer starts between the two).
start_timing() {
  C0S=$(cpu_of "${PIDS[source]}"); C0T=$(cpu_of "${PIDS[target]}"); T0=$(now)
}
stop_timing() {
  local t1; t1=$(now)
  T[$1,$run]=$(python3 -c "print($t1-$T0)")
  CPU[$1,$run]=$(python3 -c "print('%.1f/%.1f' % ($(cpu_of "${PIDS[source]}")-$C0S, $(cpu_of "${PIDS[target]}")-$C0T))")
}
declare -A CPU

fresh_target() { on target -e "DROP DATABASE IF EXISTS sbtest; DROP DATABASE IF EXISTS binrelay; CREATE DATABASE sbtest"; }
check() {  # TOOL
  local want got
  want=$(on source -N -e 'CHECKSUM TABLE sbtest.sbtest1' | cut -f2)
  got=$(on target -N -e 'CHECKSUM TABLE sbtest.sbtest1' | cut -f2)
  [ "$got" = "$want" ] || { log "$1: target checksum $got, source $want"; exit 1; }
}
# The live run's writer: RATE statements a second on one connection.
cat >"$TMP/writer.py" <<'PY'
import os, random, sys, time
rows, rate = int(sys.argv[1]), int(sys.argv[2])
open(sys.argv[3], "w").write(str(os.getpid()))
n = int(sys.argv[4])
rng = random.Random(n)
# No writer inserts a key an earlier one did (each inserts about 100 rows a
# second, far fewer than a million), and keys stay within INT.
next_id = 2 * rows + 1000000 * n + 1
t = time.time()
while True:
    for _ in range(max(1, rate // 20)):
        r, i = rng.random(), rng.randint(1, rows)
        if r < 0.6:
            print("UPDATE sbtest1 SET k = k + 1, c = '%032x' WHERE id = %d;" % (rng.getrandbits(128), i))
        elif r < 0.8:
            print("INSERT INTO sbtest1 (id, k, c, pad) VALUES (%d, %d, 'new', 'new');" % (next_id, i))
            next_id += 1
        else:
            print("DELETE FROM sbtest1 WHERE id = %d;" % i)
    sys.stdout.flush()
    t += 0.05
    time.sleep(max(0.0, t - time.time()))
PY
# Phase durations and the cutover pause from a move's log; on MySQL also the
# longest lock of the table for a checksum snapshot ("snapshot of ... at
# FILE:POS: the table was locked for X (waited Y for the lock)"), its wait,
# and how many snapshots locked it (0 0 0 on MariaDB, which needs no lock).
cat >"$TMP/phases.py" <<'PY'
import re, sys, datetime
def dur(s):  # absl::FormatDuration: 1h2m3.5s, 2.5ms, 120us, 800ns, 0
    u = {'h': 3600.0, 'm': 60.0, 's': 1.0, 'ms': 1e-3, 'us': 1e-6, 'ns': 1e-9}
    return sum(float(n) * u[k] for n, k in re.findall(r'([0-9.]+)(ns|us|ms|h|m|s)', s))
ts, pause, snap, snapwait, snaps, built = {}, 0.0, 0.0, 0.0, 0, 0.0
for line in open(sys.argv[1]):
    b = re.search(r'built \d+ index\(es\) of \S+ on the target in (\S+):', line)
    if b:
        built += dur(b.group(1))
        continue
    m = re.match(r'(\S+) info move \S+: (copy|indexes|catch up|checksum|cutover|done)$', line.strip())
    if m and m.group(2) not in ts:
        ts[m.group(2)] = datetime.datetime.fromisoformat(m.group(1))
    s = re.search(r'snapshot of .* the table was locked for (\S+) \(waited (\S+) for the lock\)', line)
    if s:
        snap, snapwait, snaps = max(snap, dur(s.group(1))), max(snapwait, dur(s.group(2))), snaps + 1
        continue
    p = re.search(r'locked for ([0-9.]+)(ms|us|s)', line)
    if p:
        pause = float(p.group(1)) * {'ms': 1e-3, 'us': 1e-6, 's': 1.0}[p.group(2)]
# The index build starts during the checksum (its time is its own log
# line's); the checksum runs to the indexes phase, which waits for the build.
print("%.2f %.2f %.2f %.3f %.6f %.6f %d" % ((ts["catch up"] - ts["copy"]).total_seconds(),
                              built,
                              (ts.get("indexes", ts["cutover"]) - ts["checksum"]).total_seconds(),
                              pause, snap, snapwait, snaps))
PY

declare -A T
move_run() {  # RUN KIND (idle, live, or livetext: live with bulk_copy = off)
  local run=$1 kind=$2 cfg="$TMP/move-$1-$2.cnf" log="$TMP/move-$1-$2.log"
  fresh_target
  cat >"$cfg" <<CNF
[source]
host = 127.0.0.1
port = $SPORT
user = b
password = b
server_id = $((4000 + run))
start = next
[store]
dir = $TMP/store-$run-$kind
[move]
name = bench$run$kind
target_host = 127.0.0.1
target_port = $TPORT
target_user = b
target_password = b
tables = sbtest.sbtest1
copy_threads = $COPY_THREADS
rename_source = off
CNF
  [ "$kind" = livetext ] && echo "bulk_copy = off" >>"$cfg"
  quiesce source; quiesce target
  [ "$kind" != idle ] && start_writer
  start_timing
  local wrap=()
  [ -n "${CALLGRIND:-}" ] && wrap=(valgrind --tool=callgrind --callgrind-out-file="$CALLGRIND/move-$run-$kind.out")
  /usr/bin/time -f '%U %S' -o "$TMP/time" "${wrap[@]}" "$BINRELAY" move --config "$cfg" 2>"$log" || { cat "$log" >&2; exit 1; }
  stop_timing "$kind"
  CPU[$kind,$run]="${CPU[$kind,$run]}/$(awk '{printf "%.1f", $1 + $2}' "$TMP/time")"
  [ -n "$writer" ] && stop_writer
  [ "$kind" = idle ] && check "binrelay move"
  read -r copy idx sum pause snap snapwait snaps < <(python3 "$TMP/phases.py" "$log")
  T[${kind}_copy,$run]=$copy; T[${kind}_idx,$run]=$idx; T[${kind}_sum,$run]=$sum
  T[${kind}_pause,$run]=$pause
  T[${kind}_snap,$run]=$snap; T[${kind}_snapwait,$run]=$snapwait; T[${kind}_snaps,$run]=$snaps
  [ -n "${MOVE_LOGS:-}" ] && cp "$log" "$MOVE_LOGS/move-$run-$kind.log"
  return 0
}

# start_writer / stop_writer: the live runs' writer on the source.
WRITERS=0  # writers started so far: each inserts keys of its own
start_writer() {
  WRITERS=$((WRITERS + 1))
  python3 "$TMP/writer.py" "$ROWS" "$RATE" "$TMP/writer.pid" "$WRITERS" | \
    "$CLIENT" --no-defaults -uroot --socket="$TMP/source.sock" --force sbtest 2>/dev/null &
  writer=$!
}
stop_writer() {
  kill "$(cat "$TMP/writer.pid")" "$writer" 2>/dev/null || true
  wait "$writer" 2>/dev/null || true
  writer=""
}
# The peers: PEER (dump or mydumper) and whether the writer runs meanwhile
# (the copy is then of the snapshot the dump took, not of the table at the
# end: not compared with the source).
peer_run() {
  local peer=$1 live=$2 key=$1
  [ "$live" = 1 ] && key=${peer}live
  fresh_target; rm -rf "$TMP/mydumper"; quiesce source; quiesce target
  [ "$live" = 1 ] && start_writer
  start_timing
  if [ "$peer" = dump ]; then
    /usr/bin/time -f '%U %S' -o "$TMP/time" \
      "$DUMP" --no-defaults -uroot --socket="$TMP/source.sock" --single-transaction "${DUMP_ARGS[@]}" sbtest sbtest1 | \
      /usr/bin/time -f '%U %S' -o "$TMP/time2" "$CLIENT" --no-defaults -uroot --socket="$TMP/target.sock" sbtest
  else
    /usr/bin/time -f '%U %S' -o "$TMP/time" \
      mydumper -h 127.0.0.1 -P "$SPORT" -u b -p b -B sbtest -t "$CONC" --rows 100000 \
      -o "$TMP/mydumper" >"$TMP/mydumper.log" 2>&1
    /usr/bin/time -f '%U %S' -o "$TMP/time2" \
      myloader -h 127.0.0.1 -P "$TPORT" -u b -p b -d "$TMP/mydumper" -t "$CONC" -o >"$TMP/myloader.log" 2>&1
  fi
  stop_timing "$key"
  CPU[$key,$run]="${CPU[$key,$run]}/$(cat "$TMP/time" "$TMP/time2" | awk '{c += $1 + $2} END {printf "%.1f", c}')"
  if [ "$live" = 1 ]; then stop_writer; else check "$([ "$peer" = dump ] && basename "$DUMP" || echo mydumper)"; fi
}

writer=""
for run in $(seq 1 "$RUNS"); do
  for kind in $KINDS; do move_run "$run" "$kind"; done
  if [ "$PEERS" = 1 ]; then
    for peer in dump mydumper; do peer_run "$peer" 0; peer_run "$peer" 1; done
  fi
  line="run $run:"
  for k in $KINDS; do
    line="$line $k ${T[$k,$run]} s (copy ${T[${k}_copy,$run]}, CPU ${CPU[$k,$run]}, cutover pause ${T[${k}_pause,$run]} s"
    [ "${T[${k}_snaps,$run]}" != 0 ] && line="$line, ${T[${k}_snaps,$run]} snapshot locks, max ${T[${k}_snap,$run]} s"
    line="$line);"
  done
  [ "$PEERS" = 1 ] && line="$line dump ${T[dump,$run]} s (CPU ${CPU[dump,$run]}), live ${T[dumplive,$run]} s (CPU ${CPU[dumplive,$run]}); mydumper ${T[mydumper,$run]} s (CPU ${CPU[mydumper,$run]}), live ${T[mydumperlive,$run]} s (CPU ${CPU[mydumperlive,$run]})"
  log "$line"
done
if [ "$PEERS" != 1 ] || [ "$KINDS" != "idle live livetext" ]; then
  log "partial run (KINDS=$KINDS PEERS=$PEERS): no report written"
  exit 0
fi

list() { local k=$1 r out=""; for r in $(seq 1 "$RUNS"); do out="$out${T[$k,$r]},"; done; echo "[$out]"; }
clist() { local k=$1 r out=""; for r in $(seq 1 "$RUNS"); do out="$out'${CPU[$k,$r]}',"; done; echo "[$out]"; }
out="bench/results-move-${REPORT_TAG}$(date +%Y-%m-%d)-x${SCALE}.md"
# A second invocation on the same day keeps the first's report.
[ -e "$out" ] && out="bench/results-move-${REPORT_TAG}$(date +%Y-%m-%d-%H%M)-x${SCALE}.md"
python3 - "$RUNS" "$ROWS" "$BYTES" "$CONC" "$RATE" "$(nproc)" \
  "$(list idle)" "$(list idle_copy)" "$(list idle_idx)" "$(list idle_sum)" "$(list live)" \
  "$(list live_copy)" "$(list live_pause)" "$(list dump)" "$(list mydumper)" \
  "$(list livetext)" "$(list livetext_copy)" \
  "$(clist idle)" "$(clist live)" "$(clist livetext)" "$(clist dump)" "$(clist mydumper)" \
  "$(list idle_snap)" "$(list live_snap)" "$(list livetext_snap)" \
  "$(list idle_snapwait)" "$(list live_snapwait)" "$(list livetext_snapwait)" \
  "$(list idle_snaps)" "$(list live_snaps)" "$(list livetext_snaps)" \
  "$(list idle_pause)" "$(list livetext_pause)" \
  "$(list dumplive)" "$(list mydumperlive)" "$(clist dumplive)" "$(clist mydumperlive)" <<'PY' | tee "$out"
import ast, os, statistics as st, sys, datetime
runs, rows, size, conc, rate, cores = map(int, sys.argv[1:7])
idle, icopy, iidx, isum, live, lcopy, pause, dump, myd, text, tcopy = (ast.literal_eval(a) for a in sys.argv[7:18])
cidle, clive, ctext, cdump, cmyd = (ast.literal_eval(a) for a in sys.argv[18:23])
snap, snapwait, snaps = [[ast.literal_eval(a) for a in sys.argv[i:i + 3]] for i in (23, 26, 29)]
ipause, tpause = (ast.literal_eval(a) for a in sys.argv[32:34])
dumplive, mydlive, cdumplive, cmydlive = (ast.literal_eval(a) for a in sys.argv[34:38])
server, dumpname, clients = os.environ["SERVER_NAME"], os.environ["DUMP_NAME"], os.environ["CLIENTS_NAME"]
mysql = os.environ["FLAVOUR"].startswith("mysql")
print("# binrelay move vs %s and mydumper (%s)" % ("mysqldump" if mysql else "mariadb-dump",
                                                   datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%MZ")))
print()
print("%d rows of a sysbench-like table (%d MiB with its index); CONC=%d; source and target" % (rows, size >> 20, conc))
print("buffer pools %s each;" % __import__("os").environ.get("BUFFER_POOL", "?"))
print("%s on this machine (%d cores, shared). binrelay's time is the whole move:" % (server, cores))
print("preflight, copy, catch up, checksum of every chunk on both servers at one binlog")
print("position, secondary indexes built after the copy (the build starts beside the checksum's")
print("last source sums: its column is the build's own time, which overlaps the checksum's),")
print("cutover. Live: a writer at %d statements/s (60%% updates, 20%% inserts, 20%% deletes)" % rate)
print("through the whole move. The first table's peers copy it idle (they cannot keep it live);")
print("the second's run under the same writer too.")
print("Each move starts with start = next: its store begins in a binlog file the source opens")
print("for it (FLUSH BINARY LOGS) rather than fetching the load's current file.")
print("Ratio = peer time / binrelay time (above 1: binrelay faster); in the first table against")
print("the live move.")
if mysql:
    print("Servers: %s, both initialised with mysqld --initialize-insecure and run with" % os.environ["SERVER_VERSION"])
    print("--performance-schema=OFF and the release's defaults otherwise (gtid_mode = ON); the target")
    print("with --disable-log-bin (the MariaDB target has no binlog either). The dump peer is")
    print("mysqldump --single-transaction --set-gtid-purged=OFF | mysql, both 9.7.")
print()
print("| run | move idle | its copy | its indexes | its checksum | move live | its copy | cutover pause | %s | ratio | mydumper+myloader | ratio |" % dumpname)
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for i in range(runs):
    print("| %d | %.1f s | %.1f s | %.1f s | %.1f s | %.1f s | %.1f s | %.3f s | %.1f s | %.2f | %.1f s | %.2f |" % (
        i + 1, idle[i], icopy[i], iidx[i], isum[i], live[i], lcopy[i], pause[i], dump[i], dump[i] / live[i], myd[i], myd[i] / live[i]))
m = st.median
print("| median | %.1f s | %.1f s | %.1f s | %.1f s | %.1f s | %.1f s | %.3f s | %.1f s | %.2f | %.1f s | %.2f |" % (
    m(idle), m(icopy), m(iidx), m(isum), m(live), m(lcopy), m(pause), m(dump), m(dump) / m(live), m(myd), m(myd) / m(live)))
print()
print("The same timings side by side: the move and the peers each with the same writer on the")
print("source throughout (the peers' copy is then of their snapshot: not compared), and each idle.")
print()
print("| run | move live | %s live | ratio | mydumper+myloader live | ratio | move idle | %s idle | ratio | mydumper+myloader idle | ratio |" % (dumpname, dumpname))
print("|---|---|---|---|---|---|---|---|---|---|---|")
for i in range(runs):
    print("| %d | %.1f s | %.1f s | %.2f | %.1f s | %.2f | %.1f s | %.1f s | %.2f | %.1f s | %.2f |" % (
        i + 1, live[i], dumplive[i], dumplive[i] / live[i], mydlive[i], mydlive[i] / live[i],
        idle[i], dump[i], dump[i] / idle[i], myd[i], myd[i] / idle[i]))
print("| median | %.1f s | %.1f s | %.2f | %.1f s | %.2f | %.1f s | %.1f s | %.2f | %.1f s | %.2f |" % (
    m(live), m(dumplive), m(dumplive) / m(live), m(mydlive), m(mydlive) / m(live),
    m(idle), m(dump), m(dump) / m(idle), m(myd), m(myd) / m(idle)))
print()
print("Idle move end to end: %.0f rows/s, %.2f GiB/h; its copy phase alone %.0f rows/s (%.2f GiB/h)." % (
    rows / m(idle), size / m(idle) * 3600 / 2**30, rows / m(icopy), size / m(icopy) * 3600 / 2**30))
print("Live move end to end: %.0f rows/s, %.2f GiB/h." % (rows / m(live), size / m(live) * 3600 / 2**30))
print()
print("The copy's writes: bulk commands (bulk_copy = on, the default) against multi-row INSERT IGNORE")
print("text (bulk_copy = off), both live, in the same runs:")
if mysql:
    print("(on a MySQL target, which has no COM_STMT_BULK_EXECUTE, bulk_copy = on writes prepared")
    print("multi-row INSERT IGNOREs run by COM_STMT_EXECUTE, values in binary form)")
print()
print("| run | live, bulk | its copy | live, text | its copy | text / bulk |")
print("|---|---|---|---|---|---|")
for i in range(runs):
    print("| %d | %.1f s | %.1f s | %.1f s | %.1f s | %.2f |" % (i + 1, live[i], lcopy[i], text[i], tcopy[i], text[i] / live[i]))
print("| median | %.1f s | %.1f s | %.1f s | %.1f s | %.2f |" % (m(live), m(lcopy), m(text), m(tcopy), m(text) / m(live)))
print()
print("CPU seconds (user + system) during each timing: source server / target server / the client")
print("(binrelay; %s; mydumper and myloader). Every timing starts with both" % clients)
print("servers quiesced (dirty pages written, undo purged).")
print()
print("| run | move idle | move live | move live, text | %s | %s live | mydumper+myloader | mydumper+myloader live |" % (dumpname, dumpname))
print("|---|---|---|---|---|---|---|---|")
for i in range(runs):
    print("| %d | %s | %s | %s | %s | %s | %s | %s |" % (i + 1, cidle[i], clive[i], ctext[i], cdump[i], cdumplive[i], cmyd[i], cmydlive[i]))
if any(n for k in snaps for n in k):
    print()
    print("The checksum's snapshots on the MySQL source (MySQL reports no snapshot position: the")
    print("move holds LOCK TABLES ... READ while the snapshot opens and SHOW BINARY LOG STATUS is")
    print("read; from the move's log lines \"snapshot of ... the table was locked for X (waited Y")
    print("for the lock)\"), next to the cutover pause (LOCK TABLES ... WRITE):")
    print()
    print("| run | move | snapshot locks | longest lock | longest wait for it | cutover pause |")
    print("|---|---|---|---|---|---|")
    for i in range(runs):
        for k, name, p in ((0, "idle", ipause), (1, "live", pause), (2, "live, text", tpause)):
            print("| %d | %s | %d | %.1f ms | %.1f ms | %.1f ms |" % (
                i + 1, name, snaps[k][i], snap[k][i] * 1e3, snapwait[k][i] * 1e3, p[i] * 1e3))
    print()
    print("Longest snapshot lock over every move: %.1f ms." % (max(max(k) for k in snap) * 1e3))
PY
