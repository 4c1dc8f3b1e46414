#!/usr/bin/env python3
"""Timing helper for bench/tail_bench.sh.

Runs one client process and prints one line of JSON:
  {"wall": seconds, "user": s, "sys": s, "rows": n|null, "rc": exit code, "ok": bool, "note": str}

wall is measured with time.monotonic() from just before the process is spawned
to its exit (modes `null` and `lines`) or to the moment the last expected row
arrived (mode `gomysql`). user/sys are the client's own CPU time (wait4 rusage),
not the server's.

Modes:
  run_timed.py null  [--stderr FILE] [--timeout S] -- ARGV...   stdout to /dev/null
  run_timed.py lines [--stderr FILE] [--grep REGEX] -- ARGV...
        count stdout lines (or lines matching REGEX, a Python bytes regex)
  run_timed.py gomysql --bin PATH --connect JSON --expect N [--timeout S]
        [--stderr FILE] [--verify] [--sample FILE]
        go-mysql (canal) JSON-lines peer: writes the connect line on stdin,
        counts delivered rows until N, then kills the process by its PID.
"""
import argparse
import json
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time


def rusage_of(pid):
    _, status, ru = os.wait4(pid, 0)
    if os.WIFEXITED(status):
        rc = os.WEXITSTATUS(status)
    else:
        rc = -os.WTERMSIG(status)
    return rc, ru.ru_utime, ru.ru_stime


def open_stderr(path):
    return open(path, "ab") if path else subprocess.DEVNULL


def mode_plain(args):
    err = open_stderr(args.stderr)
    count = args.mode == "lines"
    rx = re.compile(args.grep.encode()) if args.grep else None
    t0 = time.monotonic()
    p = subprocess.Popen(args.argv, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE if count else subprocess.DEVNULL,
                         stderr=err)
    timed_out = []

    def on_timeout():
        timed_out.append(True)
        try:
            os.kill(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    timer = threading.Timer(args.timeout, on_timeout)
    timer.daemon = True
    timer.start()
    rows = None
    if count:
        rows = 0
        if rx is None:
            while True:
                chunk = p.stdout.read1(1 << 20)
                if not chunk:
                    break
                rows += chunk.count(b"\n")
        else:
            for line in p.stdout:
                if rx.search(line):
                    rows += 1
        p.stdout.close()
    rc, ut, st = rusage_of(p.pid)
    t1 = time.monotonic()
    timer.cancel()
    p.returncode = rc  # reaped by wait4 already
    note = ""
    if timed_out:
        note = "killed after timeout %.0fs" % args.timeout
    elif rc != 0:
        note = "exit code %d" % rc
    return {"wall": t1 - t0, "user": ut, "sys": st, "rows": rows, "rc": rc,
            "ok": rc == 0 and not timed_out, "note": note}


# go-mysql prints one line per rows event:
# {"type":"binlog_change","event":{"binlogPosition":{...},"table":{...},
#   "insert":[{row},...]} | "update":[{"old":{row},"new":{row}},...] | "delete":[...]}
# Go's encoding/json writes map keys sorted, so a row object's keys are column
# names in sorted order. Cheap count (no JSON parse, so the counter never slows
# the peer down): every row image of the bench tables has exactly one "id" key
# and generated values never contain the text "id":.
ID_KEY = b'"id":'


def cheap_rows(line):
    n = line.count(ID_KEY)
    if b'"update":[' in line:
        return n // 2
    return n


def exact_rows(msg):
    ev = msg.get("event") or {}
    n = 0
    for k in ("insert", "update", "delete"):
        v = ev.get(k)
        if v:
            n += len(v)
    return n


def mode_gomysql(args):
    err = open_stderr(args.stderr)
    sample = open(args.sample, "wb") if args.sample else None
    t0 = time.monotonic()
    p = subprocess.Popen([args.bin], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=err, bufsize=0)
    p.stdin.write(args.connect.encode() + b"\n")
    p.stdin.flush()
    fd = p.stdout.fileno()
    deadline = t0 + args.timeout
    rows = 0
    exact = 0
    buf = b""
    note = ""
    t_last = None
    connected = False
    done = False
    sampled = 0
    while not done:
        now = time.monotonic()
        if now > deadline:
            note = "timeout after %.0fs with %d/%d rows" % (args.timeout, rows, args.expect)
            break
        r, _, _ = select.select([fd], [], [], min(1.0, deadline - now))
        if not r:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            note = "peer exited early with %d/%d rows" % (rows, args.expect)
            break
        buf += chunk
        lines = buf.split(b"\n")
        buf = lines.pop()
        for line in lines:
            if not line:
                continue
            if line.startswith(b'{"type":"binlog_change"') or b'"type":"binlog_change"' in line[:40]:
                n = cheap_rows(line)
                rows += n
                if args.verify:
                    exact += exact_rows(json.loads(line))
                if sample is not None and sampled < 3:
                    sample.write(line[:4000] + b"\n")
                    sampled += 1
                if rows >= args.expect:
                    t_last = time.monotonic()
                    done = True
                    break
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                note = "unexpected output: %r" % line[:200]
                continue
            typ = msg.get("type")
            if typ == "connect_ok":
                connected = True
            elif typ in ("connect_error", "error"):
                note = "%s: %s" % (typ, msg.get("error"))
                done = True
                break
            elif typ == "log":
                if sample is not None:
                    sample.write(line[:4000] + b"\n")
    # stop the peer: it follows the binlog forever otherwise
    if p.poll() is None:
        try:
            os.kill(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    rc, ut, st = rusage_of(p.pid)
    p.returncode = rc
    t_end = time.monotonic()
    ok = t_last is not None
    if args.verify and ok and exact != rows:
        ok = False
        note = "row count mismatch: cheap %d, exact %d" % (rows, exact)
    if ok and rows != args.expect:
        note = "delivered %d rows, expected %d" % (rows, args.expect)
        ok = False
    if not connected and not note:
        note = "never connected"
    if sample is not None:
        sample.close()
    return {"wall": (t_last if ok else t_end) - t0, "user": ut, "sys": st,
            "rows": rows, "rc": rc, "ok": ok, "note": note}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["null", "lines", "gomysql"])
    ap.add_argument("--stderr")
    ap.add_argument("--grep")
    ap.add_argument("--bin")
    ap.add_argument("--connect")
    ap.add_argument("--expect", type=int)
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--verify", action="store_true")
    ap.add_argument("--sample")
    argv = sys.argv[1:]
    cmd = []
    if "--" in argv:
        i = argv.index("--")
        argv, cmd = argv[:i], argv[i + 1:]
    args = ap.parse_args(argv)
    args.argv = cmd
    if args.mode == "gomysql":
        res = mode_gomysql(args)
    else:
        if not args.argv:
            ap.error("missing command after --")
        res = mode_plain(args)
    sys.stdout.write(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
