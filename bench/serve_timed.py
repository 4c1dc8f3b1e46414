#!/usr/bin/env python3
"""Timing helper for bench/serve_bench.sh. Prints one line of JSON per call.

Modes:

  serve_timed.py ingest --status-url URL --file F --offset P [--stderr FILE]
                 [--timeout S] [--poll S] -- ARGV...
      Spawns `binrelay serve` (ARGV), polls GET URL (/status) every --poll
      seconds until the committed end (stored_file, stored_offset) reaches
      F:P, then sends SIGTERM and waits for the exit.
      {"wall": spawn -> end reached, "stop": end reached -> exit, "user", "sys",
       "rc", "ok", "note", "polls", "status": last /status JSON}

  serve_timed.py fanout --n N [--stderr-prefix P] [--timeout S] -- ARGV...
      Spawns N copies of ARGV at once; "{i}" in any argument becomes the
      reader's index (0..N-1). Times from just before the first spawn to the
      last exit. {"wall", "walls": [per reader], "user", "sys" (all readers),
      "rcs", "ok", "note"}

  serve_timed.py replica --socket SOCK --file F --offset P --threads io|both
                 [--timeout S] [--poll S] [--log FILE]
      Talks to a replica through one long-lived `mariadb` client (batch mode,
      unbuffered): START SLAVE IO_THREAD (io) or START SLAVE (both), then polls
      SHOW SLAVE STATUS until Master_Log_File:Read_Master_Log_Pos reaches F:P
      (t_io) and, for `both`, until Relay_Master_Log_File:Exec_Master_Log_Pos
      does (t_exec). Times count from just before START SLAVE is sent.
      {"wall": t_io, "exec": t_exec|null, "ok", "note", "polls", "last": {...}}

  serve_timed.py latency --socket SOURCE_SOCK --replica NAME=SOCK [--replica ...]
                 [--n N] [--warmup K] [--gap S] [--timeout S]
      N times: one single-row INSERT autocommitted on the source, SHOW MASTER
      STATUS for its end, then SHOW SLAVE STATUS on every replica (one thread
      each, polling as fast as it answers) until its IO thread has read up to
      that end (Master_Log_File:Read_Master_Log_Pos). A sample is commit ->
      read, from the INSERT's return; it includes up to one poll round trip. --gap seconds pass between INSERTs; the first K (replicas
      still connecting) are not counted.
      {"ok", "note", "n", "by": {NAME: {"ms": [samples], "median", "p90", "p99",
       "max"}}}. The table is latdb.t (id INT PRIMARY KEY), replicated already.

  serve_timed.py compare --src DIR --dst DIR -- FILE...
      Byte comparison of binlog copies: {"identical", "files", "bytes", "diffs":
      ["FILE: what differs", ...], "in_use_flag_only": [FILE, ...]} (a diff names
      sizes or the first differing offset and how many bytes differ; files whose
      only difference is the FDE's BINLOG_IN_USE flag are listed apart).

Wall times are time.monotonic(); user/sys are the children's own CPU (wait4),
never the servers'. Binlog file names compare as strings (mysql-bin.NNNNNN has
a fixed width).
"""
import argparse
import json
import os
import resource
import select
import signal
import subprocess
import sys
import threading
import time
import urllib.request


CHILDREN = []  # spawned processes, stopped if this helper is terminated


def on_signal(signum, _frame):
    for p in CHILDREN:
        if p.poll() is None:
            p.terminate()
    for p in CHILDREN:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
    sys.exit(128 + signum)


def spawn(argv, **kw):
    p = subprocess.Popen(argv, **kw)
    CHILDREN.append(p)
    return p


def reached(file, offset, want_file, want_offset):
    if not file:
        return False
    return file > want_file or (file == want_file and offset >= want_offset)


def wait_rusage(pid):
    _, status, ru = os.wait4(pid, 0)
    rc = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
    return rc, ru.ru_utime, ru.ru_stime


def open_stderr(path):
    return open(path, "ab") if path else subprocess.DEVNULL


def mode_ingest(a):
    err = open_stderr(a.stderr)
    t0 = time.monotonic()
    p = spawn(a.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    deadline = t0 + a.timeout
    t_end = None
    polls = 0
    last = {}
    note = ""
    while True:
        time.sleep(a.poll)
        if p.poll() is not None:
            note = "binrelay exited early (code %s)" % p.returncode
            break
        if time.monotonic() > deadline:
            note = "timeout after %.0fs at %s:%s" % (a.timeout, last.get("stored_file"),
                                                     last.get("stored_offset"))
            break
        try:
            with urllib.request.urlopen(a.status_url, timeout=2) as r:
                last = json.loads(r.read())
            polls += 1
        except (OSError, ValueError):
            continue  # not listening yet
        if reached(last.get("stored_file", ""), last.get("stored_offset", 0), a.file, a.offset):
            t_end = time.monotonic()
            break
    t_stop = time.monotonic()
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            note = (note + "; " if note else "") + "did not stop within 120s of SIGTERM"
    # Popen.wait reaped the child: this short-lived helper has one child per
    # call, so RUSAGE_CHILDREN is binrelay's own CPU.
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    t_exit = time.monotonic()
    rc = p.returncode
    ok = t_end is not None and rc == 0
    if t_end is not None and rc != 0 and not note:
        note = "exit code %s after SIGTERM" % rc
    return {"wall": (t_end if t_end is not None else t_stop) - t0, "stop": t_exit - t_stop,
            "user": ru.ru_utime, "sys": ru.ru_stime, "rc": rc, "ok": ok, "note": note,
            "polls": polls, "status": last}


def mode_fanout(a):
    procs = {}
    t0 = time.monotonic()
    for i in range(a.n):
        argv = [s.replace("{i}", str(i)) for s in a.argv]
        err = open_stderr("%s%d.stderr" % (a.stderr_prefix, i) if a.stderr_prefix else None)
        p = spawn(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        procs[p.pid] = i
    walls = [None] * a.n
    rcs = [None] * a.n
    user = sys_ = 0.0
    note = ""
    deadline = t0 + a.timeout
    while procs:
        pid, status, ru = os.wait4(-1, os.WNOHANG)
        if pid == 0:
            if time.monotonic() > deadline:
                note = "timeout after %.0fs: killed %d readers" % (a.timeout, len(procs))
                for p in procs:
                    os.kill(p, signal.SIGKILL)
                deadline = float("inf")
            time.sleep(0.002)
            continue
        i = procs.pop(pid)
        walls[i] = time.monotonic() - t0
        rcs[i] = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
        user += ru.ru_utime
        sys_ += ru.ru_stime
    ok = all(rc == 0 for rc in rcs) and not note
    if not ok and not note:
        note = "exit codes %s" % rcs
    return {"wall": max(walls), "walls": walls, "user": user, "sys": sys_, "rcs": rcs,
            "ok": ok, "note": note}


class Cli:
    """One `mariadb` batch client; each query's output ends at a marker row."""

    def __init__(self, socket_path, log):
        self.p = spawn(
            ["mariadb", "--no-defaults", "--socket=" + socket_path, "-uroot", "-B", "-n"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=0)
        self.buf = b""
        self.log = log

    def query(self, sql, timeout=30):
        self.p.stdin.write(sql.encode() + b";\nSELECT 'END-OF-QUERY' AS m;\n")
        fd = self.p.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\nEND-OF-QUERY\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer to %r" % sql)
            r, _, _ = select.select([fd], [], [], left)
            if r:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise EOFError("mariadb client exited: %r" % self.buf[-500:])
                self.buf += chunk
        out, self.buf = self.buf.split(b"\nEND-OF-QUERY\n", 1)
        lines = out.decode(errors="replace").split("\n")
        if lines and lines[-1] == "m":
            lines.pop()  # the marker's column header
        if self.log:
            self.log.write("%.3f %s -> %r\n" % (time.monotonic(), sql, lines[:3]))
        return lines

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.p.kill()
            self.p.wait()


def slave_status(cli):
    lines = [l for l in cli.query("SHOW SLAVE STATUS") if l != ""]
    if len(lines) < 2:
        return {}
    return dict(zip(lines[0].split("\t"), lines[1].split("\t")))


def mode_replica(a):
    log = open(a.log, "a") if a.log else None
    cli = Cli(a.socket, log)
    slave_status(cli)  # the client is connected and answering before the clock starts
    t0 = time.monotonic()
    cli.query("START SLAVE IO_THREAD" if a.threads == "io" else "START SLAVE")
    t_io = t_exec = None
    polls = 0
    note = ""
    st = {}
    deadline = t0 + a.timeout
    io_error_since = None
    while True:
        st = slave_status(cli)
        polls += 1
        now = time.monotonic()
        if t_io is None and reached(st.get("Master_Log_File", ""),
                                    int(st.get("Read_Master_Log_Pos") or 0), a.file, a.offset):
            t_io = now
        if a.threads == "both" and t_exec is None and reached(
                st.get("Relay_Master_Log_File", ""), int(st.get("Exec_Master_Log_Pos") or 0),
                a.file, a.offset):
            t_exec = now
        if t_io is not None and (a.threads == "io" or t_exec is not None):
            break
        if st.get("Last_SQL_Error"):
            note = "SQL thread error: " + st["Last_SQL_Error"]
            break
        # The IO thread retries after errors; give it a little time, then fail.
        if st.get("Last_IO_Error"):
            io_error_since = io_error_since or now
            if now - io_error_since > 10:
                note = "IO thread error: " + st["Last_IO_Error"]
                break
        if now > deadline:
            note = "timeout after %.0fs" % a.timeout
            break
        time.sleep(a.poll)
    keep = ("Slave_IO_State Master_Log_File Read_Master_Log_Pos Relay_Master_Log_File "
            "Exec_Master_Log_Pos Slave_IO_Running Slave_SQL_Running Last_IO_Error "
            "Last_SQL_Error Relay_Log_Space Seconds_Behind_Master").split()
    last = {k: st.get(k) for k in keep}
    try:
        cli.query("STOP SLAVE", timeout=120)
    except (TimeoutError, EOFError) as e:
        note = (note + "; " if note else "") + "STOP SLAVE: %s" % e
    cli.close()
    ok = t_io is not None and (a.threads == "io" or t_exec is not None) and not note
    return {"wall": (t_io - t0) if t_io is not None else None,
            "exec": (t_exec - t0) if t_exec is not None else None,
            "ok": ok, "note": note, "polls": polls, "last": last}


def percentile(sorted_ms, q):
    if not sorted_ms:
        return None
    i = min(len(sorted_ms) - 1, int(round(q * (len(sorted_ms) - 1))))
    return sorted_ms[i]


def mode_latency(a):
    log = open(a.log, "a") if a.log else None
    src = Cli(a.socket, log)
    replicas = {}
    for spec in a.replica:
        name, sock = spec.split("=", 1)
        replicas[name] = Cli(sock, None)
    samples = {name: [] for name in replicas}
    note = ""
    try:
        for i in range(a.warmup + a.n):
            time.sleep(a.gap)
            src.query("INSERT INTO latdb.t VALUES (%d)" % (i + 1))
            t_commit = time.monotonic()
            cols = [l for l in src.query("SHOW MASTER STATUS") if l]
            end_file, end_pos = cols[1].split("\t")[:2]
            end_pos = int(end_pos)
            deadline = t_commit + a.timeout
            errors = []

            def watch(name):  # one thread per replica: no replica waits on another's poll
                while True:
                    st = slave_status(replicas[name])
                    if reached(st.get("Master_Log_File", ""),
                               int(st.get("Read_Master_Log_Pos") or 0), end_file, end_pos):
                        if i >= a.warmup:
                            samples[name].append((time.monotonic() - t_commit) * 1000.0)
                        return
                    if st.get("Slave_IO_Running") == "No":
                        errors.append("%s: IO thread stopped: %s" % (name, st.get("Last_IO_Error")))
                        return
                    if time.monotonic() > deadline:
                        errors.append("insert %d not read by %s within %.0fs" % (i + 1, name,
                                                                               a.timeout))
                        return

            watchers = [threading.Thread(target=watch, args=(n,)) for n in replicas]
            for t in watchers:
                t.start()
            for t in watchers:
                t.join()
            if errors:
                note = "; ".join(errors)
                break
    finally:
        src.close()
        for c in replicas.values():
            c.close()
    by = {}
    for name, ms in samples.items():
        o = sorted(ms)
        by[name] = {"ms": [round(x, 3) for x in ms], "median": percentile(o, 0.5),
                    "p90": percentile(o, 0.9), "p99": percentile(o, 0.99),
                    "max": o[-1] if o else None}
    return {"ok": not note, "note": note, "n": a.n, "by": by}


# The FDE's flags start after the 4-byte magic and 13 header bytes; bit 0 is
# LOG_EVENT_BINLOG_IN_USE_F, set in the source's open file and cleared in the
# FDE a dump stream sends.
IN_USE_OFFSET = 4 + 17
IN_USE_FLAG = 0x01


def mode_compare(a):
    diffs = []
    in_use = []
    total = 0
    for name in a.argv:
        src, dst = os.path.join(a.src, name), os.path.join(a.dst, name)
        if not os.path.exists(dst):
            diffs.append("%s: missing in the copy" % name)
            continue
        ss, ds = os.path.getsize(src), os.path.getsize(dst)
        total += ds
        first = None
        count = 0
        xor = 0
        with open(src, "rb") as f, open(dst, "rb") as g:
            off = 0
            while True:
                x, y = f.read(1 << 20), g.read(1 << 20)
                if not x and not y:
                    break
                if x != y:
                    for i in range(min(len(x), len(y))):
                        if x[i] != y[i]:
                            count += 1
                            if first is None:
                                first = off + i
                                xor = x[i] ^ y[i]
                off += max(len(x), len(y))
        if ss == ds and count == 1 and first == IN_USE_OFFSET and xor == IN_USE_FLAG:
            in_use.append(name)
        elif ss != ds or first is not None:
            what = "%s: source %d bytes, copy %d bytes" % (name, ss, ds)
            if first is not None:
                what += ", %d differing bytes in the common part, first at offset %d" % (
                    count, first)
            diffs.append(what)
    return {"identical": not diffs and not in_use, "files": len(a.argv), "bytes": total,
            "diffs": diffs, "in_use_flag_only": in_use}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["ingest", "fanout", "replica", "latency", "compare"])
    ap.add_argument("--status-url")
    ap.add_argument("--file")
    ap.add_argument("--offset", type=int)
    ap.add_argument("--stderr")
    ap.add_argument("--stderr-prefix")
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--poll", type=float, default=0.02)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--socket")
    ap.add_argument("--threads", choices=["io", "both"], default="io")
    ap.add_argument("--log")
    ap.add_argument("--src")
    ap.add_argument("--dst")
    ap.add_argument("--replica", action="append", default=[])
    ap.add_argument("--gap", type=float, default=0.02)
    ap.add_argument("--warmup", type=int, default=10)
    argv = sys.argv[1:]
    cmd = []
    if "--" in argv:
        i = argv.index("--")
        argv, cmd = argv[:i], argv[i + 1:]
    a = ap.parse_args(argv)
    a.argv = cmd
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if a.mode == "ingest":
        res = mode_ingest(a)
    elif a.mode == "fanout":
        res = mode_fanout(a)
    elif a.mode == "replica":
        res = mode_replica(a)
    elif a.mode == "latency":
        res = mode_latency(a)
    else:
        res = mode_compare(a)
    sys.stdout.write(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
