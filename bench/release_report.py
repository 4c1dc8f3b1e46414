#!/usr/bin/env python3
"""Helper for bench/release_bench.sh. Two modes:

  release_report.py catchup --socket SOCK --change SQL --gtid SET --file F --offset P
                    [--timeout S] [--poll S] [--log FILE]
      Times a fresh MySQL replica catching up. Through one long-lived `mariadb`
      client on the replica's socket (batch mode): runs the CHANGE REPLICATION
      SOURCE statement (untimed), then START REPLICA, and polls every --poll
      seconds until the replica has executed everything the source wrote:
      GTID_SUBSET(SET, @@GLOBAL.gtid_executed) is 1, SET being the source's
      gtid_executed at the end. Timed from just before START REPLICA is sent to
      the first poll that sees it. Then (untimed) SHOW REPLICA STATUS must show
      Relay_Source_Log_File:Exec_Source_Log_Pos at F:P (the multi-threaded
      applier moves it only at checkpoints, every 300 ms by default), and
      errors in SHOW REPLICA STATUS stop the wait.
      Prints {"wall", "ok", "note", "polls", "last": {...}}.

  release_report.py report META RAW
      The markdown summary of a run: META is meta.jsonl (run facts, one line per
      release, notes), RAW is raw.jsonl (one line per measurement).

Wall times are time.monotonic(). Binlog file names compare as strings
(mysql-bin.NNNNNN has a fixed width).
"""
import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import time


# ---------------------------------------------------------------- catchup

class Cli:
    """One `mariadb` batch client; each query's output ends at a marker row."""

    def __init__(self, socket_path, log):
        self.p = subprocess.Popen(
            ["mariadb", "--no-defaults", "--socket=" + socket_path, "-uroot", "-B", "-n"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=0)
        self.buf = b""
        self.log = log

    def query(self, sql, timeout=60):
        self.p.stdin.write(sql.encode() + b";\nSELECT 'END-OF-QUERY' AS m;\n")
        fd = self.p.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\nEND-OF-QUERY\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer to %r" % sql[:200])
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
            self.log.write("%.3f %s -> %r\n" % (time.monotonic(), sql[:200], lines[:3]))
        if any(l.startswith("ERROR ") for l in lines):
            raise RuntimeError("%s: %s" % (sql[:200], " ".join(lines)))
        return lines

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.p.kill()
            self.p.wait()


def replica_status(cli):
    lines = [l for l in cli.query("SHOW REPLICA STATUS") if l != ""]
    if len(lines) < 2:
        return {}
    return dict(zip(lines[0].split("\t"), lines[1].split("\t")))


def reached(file, offset, want_file, want_offset):
    if not file:
        return False
    return file > want_file or (file == want_file and offset >= want_offset)


def mode_catchup(a):
    log = open(a.log, "a") if a.log else None
    cli = Cli(a.socket, log)
    note = ""
    polls = 0
    st = {}
    t_done = None
    t0 = None
    try:
        cli.query(a.change)
        replica_status(cli)  # connected and answering before the clock starts
        check = "SELECT GTID_SUBSET('%s', @@GLOBAL.gtid_executed)" % a.gtid
        t0 = time.monotonic()
        cli.query("START REPLICA")
        deadline = t0 + a.timeout
        io_error_since = None
        while True:
            subset = [l for l in cli.query(check) if l != ""]
            polls += 1
            now = time.monotonic()
            if subset and subset[-1].strip() == "1":
                t_done = now
                break
            if polls % 10 == 1:  # errors: every 10th poll (about every 0.5 s)
                st = replica_status(cli)
                if st.get("Last_SQL_Error"):
                    note = "SQL thread error: " + st["Last_SQL_Error"]
                    break
                if st.get("Last_IO_Error"):  # it retries: give it a little time
                    io_error_since = io_error_since or now
                    if now - io_error_since > 10:
                        note = "IO thread error: " + st["Last_IO_Error"]
                        break
            if now > deadline:
                note = "timeout after %.0fs" % a.timeout
                break
            time.sleep(a.poll)
        # Where the applier stands once every GTID is executed. With the
        # multi-threaded applier (replica_parallel_workers=4 by default)
        # Exec_Source_Log_Pos is a checkpoint, moved every
        # replica_checkpoint_period (300 ms): wait for it, untimed.
        if t_done is not None:
            for _ in range(200):
                st = replica_status(cli)
                if reached(st.get("Relay_Source_Log_File", ""),
                           int(st.get("Exec_Source_Log_Pos") or 0), a.file, a.offset):
                    break
                time.sleep(0.05)
            else:
                note = "every GTID executed, but Exec_Source_Log_Pos stayed at %s:%s" % (
                    st.get("Relay_Source_Log_File"), st.get("Exec_Source_Log_Pos"))
        try:
            cli.query("STOP REPLICA", timeout=120)
        except (TimeoutError, EOFError, RuntimeError) as e:
            note = (note + "; " if note else "") + "STOP REPLICA: %s" % e
    except (TimeoutError, EOFError, RuntimeError) as e:
        note = (note + "; " if note else "") + str(e)
    finally:
        cli.close()
    keep = ("Replica_IO_State Source_Log_File Read_Source_Log_Pos Relay_Source_Log_File "
            "Exec_Source_Log_Pos Replica_IO_Running Replica_SQL_Running Last_IO_Error "
            "Last_SQL_Error Source_SSL_Allowed Auto_Position Retrieved_Gtid_Set").split()
    last = {k: st.get(k) for k in keep}
    wall = (t_done - t0) if t_done is not None else (time.monotonic() - t0 if t0 else None)
    return {"wall": wall, "ok": t_done is not None and not note, "note": note,
            "polls": polls, "last": last}


# ---------------------------------------------------------------- report

def load_jsonl(path):
    out = []
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out


def fmt_s(x):
    return "-" if x is None else "%.3f" % x


def fmt_bytes(n):
    if n is None:
        return "-"
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return "%.1f %s" % (n / div, unit)
    return "%d B" % n


def fmt_ratio(x, goal=None):
    if x is None:
        return "-"
    s = "%.2fx" % x
    if goal is not None:
        s = "**%s** %s" % (s, "✓" if round(x, 2) >= goal else "✗")
    return s


def fmt_int(n):
    return "-" if n is None else "{:,}".format(n)


class Cell:
    """The timed runs (run >= 1) of one tool in one part of one release."""

    def __init__(self, recs):
        self.recs = sorted(recs, key=lambda r: r.get("run", 0))
        timed = [r for r in self.recs if r.get("run", 0) >= 1]
        self.ok = [r for r in timed if r.get("ok") and r.get("wall") is not None]
        self.failed = [r for r in timed if not (r.get("ok") and r.get("wall") is not None)]
        walls = [r["wall"] for r in self.ok]
        self.median = statistics.median(walls) if walls else None
        self.min = min(walls) if walls else None
        self.max = max(walls) if walls else None
        self.n = len(timed)

    def cpu(self, key=None):
        vals = []
        for r in self.ok:
            if key:
                if r.get(key) is not None:
                    vals.append(r[key])
            elif r.get("user") is not None:
                vals.append(r["user"] + r.get("sys", 0.0))
        return statistics.median(vals) if vals else None

    def runs_text(self):
        s = ", ".join("%.3f" % r["wall"] for r in self.ok)
        if self.failed:
            s += (" " if s else "") + "(%d of %d failed: %s)" % (
                len(self.failed), self.n, "; ".join(sorted({r.get("note") or "failed" for r in self.failed})))
        return s or "-"


def ratio(peer, mine):
    if peer is None or mine is None or mine <= 0:
        return None
    return peer / mine


def report(meta_path, raw_path):
    meta = load_jsonl(meta_path)
    raw = load_jsonl(raw_path)
    run = next((m for m in meta if m.get("kind") == "run"), {})
    end = next((m for m in meta if m.get("kind") == "end"), {})
    flavours = [m for m in meta if m.get("kind") == "flavour"]
    notes = [m for m in meta if m.get("kind") == "note"]
    order = run.get("flavours", [f["flavour"] for f in flavours])
    by_flavour = {f["flavour"]: f for f in flavours}

    def cell(flavour, part, tool):
        return Cell([r for r in raw if r.get("flavour") == flavour and r.get("part") == part
                     and r.get("tool") == tool])

    def val(flavour, part, tool):
        return next((r for r in raw if r.get("flavour") == flavour and r.get("part") == part
                     and r.get("tool") == tool and r.get("validate")), None)

    def notes_of(flavour):
        return [n["text"] for n in notes if n.get("flavour") == flavour]

    o = []
    w = o.append
    w("# binrelay per release: ingest, tail and replica catch-up (%s)" % run.get("date", "?"))
    w("")
    w("`bench/release_bench.sh`, SCALE=%s, RUNS=%s (median of the timed runs; min-max and every "
      "run below). Per release: %s inserts in 1,000-row `INSERT … SELECT` transactions, %s updated "
      "and %s deleted rows (%s row changes in `bench.t`), `FLUSH BINARY LOGS` after each quarter, "
      "then one marker transaction in a new file." % (
          run.get("scale"), run.get("runs"), fmt_int(run.get("inserts")), fmt_int(run.get("updates")),
          fmt_int(run.get("deletes")), fmt_int(run.get("expect"))))
    w("")
    w("binrelay %s (sha256 %s, built %s), main at %s. %s, %s cores, load %s at start, %s at end; "
      "everything under `nice -n %s`." % (
          run.get("binrelay_version", "?"), run.get("binrelay_sha", "?"), run.get("binrelay_mtime", "?"),
          run.get("git_head", "?"), run.get("cpu", "?"), run.get("nproc", "?"),
          " ".join(run.get("load_start", [])), " ".join(end.get("load_end", [])), run.get("nice", "?")))
    w("")

    # ---- summary
    w("## Summary")
    w("")
    w("Ratios are the peer's median time over binrelay's (>1: binrelay faster). "
      "Ingest: binrelay `serve` (`[store] sync = transaction`: fdatasync per transaction) vs the "
      "release's binlog tool `--raw` (no fsync). Tail: `binrelay tail --tables 'bench.*'` vs the "
      "tool's `-v` and go-mysql (canal). CPU columns: the client process's user+sys over its "
      "whole life (for `binrelay serve` from spawn to its exit after SIGTERM, so start-up and "
      "shutdown are in it; the shutdown is not in its wall time).")
    w("")
    w("| release | binlog | ingest binrelay s | ingest tool s | tool / binrelay | tail binrelay s "
      "| tail tool s | tail go-mysql s | tool / binrelay (goal ≥ 2x) | go-mysql / binrelay (goal ≥ 5x) |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for f in order:
        m = by_flavour.get(f)
        if m is None or m.get("status") != "ok":
            why = (m or {}).get("note") or "not run"
            w("| %s | skipped: %s | | | | | | | | |" % (f, why.replace("|", "/")))
            continue
        ib, it = cell(f, "ingest", "binrelay"), cell(f, "ingest", "tool")
        tb, tt, tg = cell(f, "tail", "binrelay"), cell(f, "tail", "tool"), cell(f, "tail", "go-mysql")
        g = fmt_s(tg.median) if tg.median is not None else ("not measured" if not tg.recs else "failed")
        w("| %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            f, m.get("version", "?"), fmt_bytes(m.get("bytes")), fmt_s(ib.median), fmt_s(it.median),
            fmt_ratio(ratio(it.median, ib.median)), fmt_s(tb.median), fmt_s(tt.median), g,
            fmt_ratio(ratio(tt.median, tb.median), 2.0), fmt_ratio(ratio(tg.median, tb.median), 5.0)))
    w("")
    rep = [f for f in order if by_flavour.get(f, {}).get("status") == "ok" and
           any(r.get("flavour") == f and r.get("part") == "replica" for r in raw)]
    for f in rep:
        d, r = cell(f, "replica", "direct"), cell(f, "replica", "relay")
        w("Replica catch-up, %s: a fresh replica from `START REPLICA` until it has executed the "
          "source's end: reading the source directly %s s, reading binrelay %s s: direct / relay "
          "%s (goal ≥ 1.0x)." % (f, fmt_s(d.median), fmt_s(r.median),
                                  fmt_ratio(ratio(d.median, r.median), 1.0)))
        w("")
    if run.get("scale") not in (1, 1.0):
        w("Only a SCALE=1 run counts for the goals: at small scales process start, connection "
          "and authentication dominate.")
        w("")

    # ---- per release
    for f in order:
        m = by_flavour.get(f)
        w("## %s" % f)
        w("")
        if m is None or m.get("status") != "ok":
            w("Skipped: %s" % ((m or {}).get("note") or "not run"))
            for n in notes_of(f):
                w("")
                w("- %s" % n)
            w("")
            continue
        tls = m.get("tls") or "none"
        tls = ("TLS offered (%s): binrelay and the binlog tool use it, go-mysql does not" % tls
               if tls != "none" else "no TLS offered")
        w("Server %s; %s; binlog tool `%s`; %d files %s..%s, %s bytes (%s), end %s:%s; "
          "`binlog_row_metadata=%s`; workload generated in %.1f s." % (
              m.get("version"), tls, m.get("tool_name"), len(m.get("files", [])),
              (m.get("files") or ["?"])[0], (m.get("files") or ["?"])[-1], fmt_int(m.get("bytes")),
              fmt_bytes(m.get("bytes")), m.get("end", ["?", "?"])[0], m.get("end", ["?", "?"])[1],
              m.get("row_metadata", "?"), m.get("gen_seconds") or 0.0))
        w("")
        nbytes = m.get("bytes") or 0
        parts = [("ingest", [("binrelay", "binrelay serve"), ("tool", m.get("tool_name", "tool") + " --raw")]),
                 ("tail", [("binrelay", "binrelay tail"), ("tool", m.get("tool_name", "tool") + " -v"),
                           ("go-mysql", "go-mysql")])]
        for part, tools in parts:
            if not any(r.get("flavour") == f and r.get("part") == part for r in raw):
                continue
            base = cell(f, part, "binrelay")
            w("| %s | median s | min s | max s | MB/s | rows/s | CPU s (median) | binrelay faster by | runs |" % part)
            w("|---|---:|---:|---:|---:|---:|---:|---:|---|")
            for tool, label in tools:
                c = cell(f, part, tool)
                if not c.recs:
                    continue
                mbs = nbytes / c.median / 1e6 if c.median else None
                rows = (m.get("expect") / c.median) if (c.median and part == "tail") else None
                cpu = c.cpu()
                w("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    label, fmt_s(c.median), fmt_s(c.min), fmt_s(c.max),
                    "-" if mbs is None else "%.1f" % mbs,
                    "-" if rows is None else "{:,.0f}".format(rows),
                    "-" if cpu is None else "%.2f" % cpu,
                    "" if tool == "binrelay" else fmt_ratio(ratio(c.median, base.median)),
                    c.runs_text()))
            w("")
        if any(r.get("flavour") == f and r.get("part") == "replica" for r in raw):
            w("| replica catch-up | median s | min s | max s | binrelay CPU s | runs |")
            w("|---|---:|---:|---:|---:|---|")
            for tool, label in (("direct", "from the source"), ("relay", "from binrelay")):
                c = cell(f, "replica", tool)
                cpu = c.cpu("binrelay_cpu") if tool == "relay" else None
                w("| %s | %s | %s | %s | %s | %s |" % (label, fmt_s(c.median), fmt_s(c.min), fmt_s(c.max),
                                                       "-" if cpu is None else "%.2f" % cpu, c.runs_text()))
            d, r = cell(f, "replica", "direct"), cell(f, "replica", "relay")
            w("")
            w("direct / relay: %s (goal ≥ 1.0x)." % fmt_ratio(ratio(d.median, r.median), 1.0))
            w("")
        # validation
        w("Validation:")
        w("")
        for part, tool, label in (("ingest", "binrelay", "binrelay's store"),
                                  ("ingest", "tool", "the tool's `--raw` files")):
            v = val(f, part, tool)
            if v is None:
                continue
            cmp_ = v.get("compare") or {}
            if cmp_.get("identical"):
                what = "identical to the source's (%d files, cmp)" % cmp_.get("files", 0)
            elif not cmp_.get("diffs") and cmp_.get("in_use_flag_only"):
                what = ("identical to the source's except the FDE's BINLOG_IN_USE flag of %s (a dump "
                        "stream sends the open file's FDE with the flag cleared)" %
                        ", ".join(cmp_["in_use_flag_only"]))
            else:
                what = "**DIFFERENT**: %s" % "; ".join(cmp_.get("diffs") or [v.get("note") or "no comparison"])
            w("- %s: %s" % (label, what))
        for tool, label in (("direct", "replica from the source"), ("relay", "replica from binrelay")):
            v = val(f, "replica", tool)
            if v is None:
                continue
            if not v.get("ok"):
                what = "**did not catch up**: %s" % (v.get("note") or "failed")
            elif v.get("checksum") and v.get("checksum") == v.get("source_checksum"):
                what = "every GTID executed, `CHECKSUM TABLE bench.t` equals the source's (%s)" % v["checksum"]
            else:
                what = "**`CHECKSUM TABLE bench.t` %s, the source's %s**" % (v.get("checksum"),
                                                                         v.get("source_checksum"))
            w("- %s (run 1): %s" % (label, what))
        for tool, label in (("binrelay", "binrelay tail"), ("tool", m.get("tool_name", "tool") + " -v"),
                            ("go-mysql", "go-mysql")):
            v = val(f, "tail", tool)
            if v is None:
                continue
            exp = m.get("expect")
            if v.get("ok") and v.get("rows") == exp:
                what = "%s rows, as expected" % fmt_int(v.get("rows"))
            elif v.get("rows") is not None and v.get("ok"):
                what = "**%s rows, expected %s**" % (fmt_int(v.get("rows")), fmt_int(exp))
            else:
                what = "**failed**: %s (%s rows)" % (v.get("note") or "rc %s" % v.get("rc"),
                                                    fmt_int(v.get("rows")))
            if v.get("stats"):
                what += " (`%s`)" % v["stats"]
            w("- %s: %s" % (label, what))
        w("")
        for n in notes_of(f):
            w("- Note: %s" % n)
        if notes_of(f):
            w("")
    general = [n["text"] for n in notes if not n.get("flavour")]
    if general:
        w("## Notes")
        w("")
        for n in general:
            w("- %s" % n)
        w("")
    return "\n".join(o)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["catchup", "report"])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--socket")
    ap.add_argument("--change")
    ap.add_argument("--gtid", default="")
    ap.add_argument("--file")
    ap.add_argument("--offset", type=int)
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--poll", type=float, default=0.05)
    ap.add_argument("--log")
    a = ap.parse_args()
    if a.mode == "catchup":
        sys.stdout.write(json.dumps(mode_catchup(a)) + "\n")
    else:
        if len(a.paths) != 2:
            ap.error("report needs META and RAW")
        sys.stdout.write(report(a.paths[0], a.paths[1]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
