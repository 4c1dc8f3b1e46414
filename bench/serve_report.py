#!/usr/bin/env python3
"""Summary for bench/serve_bench.sh: serve_report.py META.json RAW.jsonl > results.md

Medians of the timed runs (run >= 1). Run 0 is a validation pass (copies are
compared byte for byte with the source's files) and is not in the medians.
MB/s is 10^6 bytes per second, as dd prints it.
"""
import json
import statistics
import sys

GOAL_OFF = 1.0       # binrelay sync=off vs mariadb-binlog --raw
GOAL_DURABLE = 0.9   # binrelay durable vs dd conv=fdatasync
GOAL_REPLICA = 1.0   # source time / binrelay time
GOAL_FANOUT = 1.0    # aggregate MB/s binrelay / source

INGEST_WHAT = {
    "binrelay-off": "`binrelay serve`, `[store] sync = off`",
    "binrelay-txn": "`binrelay serve`, `[store] sync = transaction` (fdatasync per transaction)",
    "binrelay-interval": "`binrelay serve`, `[store] sync = {interval}` (fdatasync at most every {interval})",
    "mariadb-binlog": "`mariadb-binlog --read-from-remote-server --raw --to-last-log` (no fsync)",
    "dd": "`dd if=/dev/zero bs=1M count={mib} conv=fdatasync` (the disk's durable write rate)",
}
INGEST_ORDER = ["binrelay-off", "binrelay-txn", "binrelay-interval", "mariadb-binlog", "dd"]


def load(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def fmt_s(x):
    return "—" if x is None else ("%.3f" % x if x < 10 else "%.2f" % x)


def fmt_mb(x):
    return "—" if x is None else ("%.1f" % x if x < 100 else "%.0f" % x)


def fmt_bytes(n):
    if n >= 1 << 30:
        return "%.2f GiB" % (n / (1 << 30))
    if n >= 1 << 20:
        return "%.1f MiB" % (n / (1 << 20))
    if n >= 1 << 10:
        return "%.1f KiB" % (n / (1 << 10))
    return "%d B" % n


def goal(ratio, target, counts):
    if ratio is None:
        return "—"
    mark = ("✓" if ratio >= target else "✗") if counts else "(SCALE≠1: not judged)"
    return "**%.2fx** %s" % (ratio, mark)


class Cell:
    def __init__(self, rows, key="wall"):
        timed = [r for r in rows if r["run"] >= 1]
        self.ok = [r for r in timed if r.get("ok")]
        self.failed = [r for r in timed if not r.get("ok")]
        vals = [r[key] for r in self.ok if r.get(key) is not None]
        self.median = statistics.median(vals) if vals else None
        self.lo = min(vals) if vals else None
        self.hi = max(vals) if vals else None
        self.valid = next((r for r in rows if r["run"] == 0), None)
        self.n = len(vals)

    def wall_text(self):
        if self.median is None:
            return "—"
        if self.n == 1:
            return fmt_s(self.median)
        return "%s [%s–%s]" % (fmt_s(self.median), fmt_s(self.lo), fmt_s(self.hi))

    def mean_of(self, key):
        vals = [r[key] for r in self.ok if isinstance(r.get(key), (int, float))]
        return statistics.median(vals) if vals else None

    def fail_text(self):
        if not self.failed:
            return ""
        return "; ".join("run %d failed: %s" % (r["run"], r.get("note") or "?") for r in self.failed)


def compare_text(r):
    if r is None:
        return "—"
    c = r.get("compare")
    if not r.get("ok"):
        return "failed: %s" % (r.get("note") or "?")
    if not isinstance(c, dict):
        return "ok (not compared)"
    if c.get("identical"):
        return "identical (%d files, %s)" % (c["files"], fmt_bytes(c["bytes"]))
    if not c.get("diffs"):
        return "identical (%d files, %s) except the FDE's BINLOG_IN_USE flag in %s" % (
            c["files"], fmt_bytes(c["bytes"]), ", ".join(c["in_use_flag_only"]))
    return "DIFFERS: " + "; ".join(c.get("diffs", [])[:4])


def main():
    meta = json.load(open(sys.argv[1]))
    raw = load(sys.argv[2])
    counts = meta["scale"] == 1.0
    total = meta["total_bytes"]
    out = []
    w = out.append
    w("# binrelay serve benchmark — %s" % meta["stamp"])
    w("")
    w("SCALE=%s, %d timed runs per cell (median shown, min–max in brackets), source %s "
      "(binlog_checksum=%s), everything under `nice -n 10` on a shared %d-core machine (%s); "
      "temp files on %s." % (meta["scale"], meta["runs"], meta["server"], meta["checksum"],
                             meta["nproc"], meta["cpu"], meta["fs"]))
    w("")
    if meta["have_binrelay"]:
        w("binrelay: `%s` (built %s, sha256 %s…, checkout at %s). Load average at start %s, at end %s." % (
            meta["binrelay"], meta["binrelay_mtime"], meta["binrelay_sha"], meta["git_head"],
            " ".join(meta["load_start"]), " ".join(meta.get("load_end", []))))
    else:
        w("binrelay: not measured — %s" % meta["binrelay_note"])
    w("")
    for n in meta.get("notes", []):
        w("- **Note:** %s" % n)
    if meta.get("notes"):
        w("")

    w("## Binlog")
    w("")
    w("%d files (`%s` … `%s`, max_binlog_size=256M), **%s** (%d bytes) in all; end `%s:%d`; "
      "generated in %.1f s." % (len(meta["files"]), meta["files"][0], meta["files"][-1],
                                fmt_bytes(total), total, meta["end"][0], meta["end"][1],
                                meta["gen_seconds"]))
    w("")
    w("| part | rows | transactions | bytes | avg transaction |")
    w("|---|---:|---:|---:|---:|")
    for p, what in (("bulk", "bulk INSERT … SELECT"), ("update", "UPDATE of 1,000 rows"),
                    ("small", "autocommit 1-row UPDATE")):
        b = meta["bytes_parts"].get(p, 0)
        t = meta["transactions"][p]
        w("| %s (%s) | %d | %d | %s | %s |" % (p, what, meta["rows"][p], t, fmt_bytes(b),
                                              fmt_bytes(b / t) if t else "—"))
    w("")

    by = {}
    for r in raw:
        by.setdefault((r["part"], r["tool"]), []).append(r)

    # ------------------------------------------------------------ ingest
    if any(p == "ingest" for p, _ in by):
        w("## 1. Ingest: copying the whole binlog into an empty directory")
        w("")
        w("binrelay is timed from its start until `/status` shows the committed end at `%s:%d` "
          "(polled every 20 ms), then stopped with SIGTERM; mariadb-binlog until it exits; dd "
          "until it exits (its fdatasync included)." % tuple(meta["end"]))
        w("")
        w("| tool | median wall s | MB/s | client CPU s | source mariadbd CPU s | validation (run 0) |")
        w("|---|---|---:|---:|---:|---|")
        cells = {}
        for t in INGEST_ORDER:
            rows = by.get(("ingest", t))
            if not rows:
                continue
            c = cells[t] = Cell(rows)
            nbytes = rows[0].get("bytes", total)
            c.rate = nbytes / c.median / 1e6 if c.median else None
            cpu = c.mean_of("user")
            cpu = (cpu + (c.mean_of("sys") or 0)) if cpu is not None else None
            what = INGEST_WHAT[t].format(interval=meta["sync_interval"], mib=(nbytes >> 20))
            valid = compare_text(c.valid) if t != "dd" else "—"
            if c.fail_text():
                valid += "; " + c.fail_text()
            w("| %s | %s | %s | %s | %s | %s |" % (what, c.wall_text(), fmt_mb(c.rate), fmt_s(cpu),
                                               fmt_s(c.mean_of("source_cpu")), valid))
        w("")

        def ratio(a, b):
            ca, cb = cells.get(a), cells.get(b)
            if not ca or not cb or not ca.rate or not cb.rate:
                return None
            return ca.rate / cb.rate
        w("| comparison | ratio of MB/s | goal |")
        w("|---|---:|---|")
        w("| binrelay sync=off ÷ mariadb-binlog --raw | %s | ≥ %.1fx |" % (
            goal(ratio("binrelay-off", "mariadb-binlog"), GOAL_OFF, counts), GOAL_OFF))
        w("| binrelay sync=transaction ÷ dd conv=fdatasync | %s | ≥ %.1fx |" % (
            goal(ratio("binrelay-txn", "dd"), GOAL_DURABLE, counts), GOAL_DURABLE))
        w("| binrelay sync=%s ÷ dd conv=fdatasync | %s | ≥ %.1fx |" % (
            meta["sync_interval"], goal(ratio("binrelay-interval", "dd"), GOAL_DURABLE, counts),
            GOAL_DURABLE))
        r = ratio("mariadb-binlog", "dd")
        w("| (mariadb-binlog --raw ÷ dd, for scale) | %s | — |" % ("%.2fx" % r if r else "—"))
        w("")

    # ------------------------------------------------------------ replica
    rep = [(t, rows) for (p, t), rows in by.items() if p == "replica"]
    if rep:
        w("## 2. Replica catch-up: a fresh MariaDB replica reading the whole binlog")
        w("")
        w("Fresh datadir per run, `CHANGE MASTER TO … MASTER_LOG_FILE='%s', MASTER_LOG_POS=4, "
          "MASTER_USE_GTID=no`; timed from `START SLAVE` until `SHOW SLAVE STATUS` (polled every "
          "50 ms) shows `Master_Log_File:Read_Master_Log_Pos` = `%s:%d` (IO thread: relay log "
          "written) and, with both threads, `Relay_Master_Log_File:Exec_Master_Log_Pos` at the same "
          "position (applied)." % (meta["files"][0], meta["end"][0], meta["end"][1]))
        w("")
        w("| upstream | threads | median IO catch-up s | MB/s | median applied s | source CPU s | binrelay CPU s | runs |")
        w("|---|---|---|---:|---|---:|---:|---|")
        cells = {}
        for up in ("binrelay", "source"):
            rows = by.get(("replica", up))
            if not rows:
                continue
            for threads in ("io", "both"):
                sel = [r for r in rows if r.get("threads") == threads]
                if not sel:
                    continue
                c = cells[(up, threads)] = Cell(sel)
                ce = Cell(sel, key="exec")
                c.exec_median = ce.median
                rate = total / c.median / 1e6 if c.median else None
                w("| %s | %s | %s | %s | %s | %s | %s | %d ok%s |" % (
                    up, "IO only" if threads == "io" else "IO + SQL", c.wall_text(), fmt_mb(rate),
                    ce.wall_text() if threads == "both" else "—", fmt_s(c.mean_of("source_cpu")),
                    fmt_s(c.mean_of("binrelay_cpu")) if up == "binrelay" else "—", c.n,
                    ("; " + c.fail_text()) if c.fail_text() else ""))
        w("")
        w("| comparison | source time ÷ binrelay time | goal |")
        w("|---|---:|---|")
        for threads, key, label in (("io", "median", "IO thread catch-up"),
                                    ("both", "median", "IO thread catch-up, SQL thread running"),
                                    ("both", "exec_median", "applied (IO + SQL)")):
            b, s = cells.get(("binrelay", threads)), cells.get(("source", threads))
            r = None
            if b and s and getattr(b, key) and getattr(s, key):
                r = getattr(s, key) / getattr(b, key)
            tgt = GOAL_REPLICA if threads == "io" else None
            w("| %s | %s | %s |" % (label, goal(r, GOAL_REPLICA, counts) if tgt else (
                "%.2fx" % r if r else "—"), "≥ %.1fx" % GOAL_REPLICA if tgt else "(informative)"))
        w("")

    # ------------------------------------------------------------ fan-out
    fan = [(t, rows) for (p, t), rows in by.items() if p == "fanout"]
    if fan:
        w("## 3. Fan-out: %d concurrent `mariadb-binlog --read-from-remote-server --raw --to-last-log` readers" % meta["fanout"])
        w("")
        w("All readers start at once; timed until the last one exits. Each reader writes into its "
          "own directory whose binlog file names are symlinks to /dev/null, so the disk is out of "
          "the measurement. Run 0 is one reader writing real files, compared with the source's.")
        w("")
        w("| upstream | median wall s | aggregate MB/s | readers' wall s min–max (median run) | readers' CPU s | server CPU s | one reader (run 0) |")
        w("|---|---|---:|---|---:|---:|---|")
        cells = {}
        for up in ("binrelay", "source"):
            rows = by.get(("fanout", up))
            if not rows:
                continue
            c = cells[up] = Cell(rows)
            nbytes = max((r.get("bytes", 0) for r in rows if r["run"] >= 1), default=0)
            c.rate = nbytes / c.median / 1e6 if c.median else None
            med_run = None
            if c.ok:
                med_run = sorted(c.ok, key=lambda r: r["wall"])[len(c.ok) // 2]
            spread = "—"
            if med_run:
                spread = "%s–%s" % (fmt_s(min(med_run["walls"])), fmt_s(max(med_run["walls"])))
            cpu = c.mean_of("user")
            cpu = (cpu + (c.mean_of("sys") or 0)) if cpu is not None else None
            server_cpu = c.mean_of("binrelay_cpu" if up == "binrelay" else "source_cpu")
            v = c.valid
            one = "—"
            if v is not None:
                one = compare_text(v)
                if v.get("ok"):
                    one = "%.3f s, %s MB/s; %s" % (v["wall"], fmt_mb(total / v["wall"] / 1e6), one)
            w("| %s | %s | %s | %s | %s | %s | %s%s |" % (
                up, c.wall_text(), fmt_mb(c.rate), spread, fmt_s(cpu), fmt_s(server_cpu), one,
                ("; " + c.fail_text()) if c.fail_text() else ""))
        w("")
        b, s = cells.get("binrelay"), cells.get("source")
        r = b.rate / s.rate if b and s and b.rate and s.rate else None
        w("| comparison | ratio of aggregate MB/s | goal |")
        w("|---|---:|---|")
        w("| binrelay ÷ source, %d readers | %s | ≥ %.1fx |" % (meta["fanout"], goal(r, GOAL_FANOUT, counts), GOAL_FANOUT))
        w("")
    # ------------------------------------------------------------ latency
    lat = by.get(("latency", "replicas"))
    if lat:
        r = lat[0]
        w("## 4. Latency: a committed transaction reaching a live replica")
        w("")
        w("%d single-row autocommits on the source, 20 ms apart (10 more before them not "
          "counted). Two replicas run at once from the source's current end, one of the source "
          "and one of binrelay (which follows the source with `sync=%s`%s). A sample runs from the "
          "INSERT's return to the replica's IO thread reporting the event read "
          "(`Read_Master_Log_Pos`); each replica is polled by its own thread as fast as it "
          "answers, so each sample includes up to one poll round trip." % (
              r.get("n", 0), r.get("sync", "?"),
              ": every transaction is fdatasynced before any replica may read it"
              if r.get("sync") == "transaction" else ""))
        w("")
        if not r.get("ok"):
            w("**Failed:** %s" % r.get("note"))
            w("")
        w("| replica of | samples | median ms | p90 ms | p99 ms | max ms |")
        w("|---|---:|---:|---:|---:|---:|")
        by_up = r.get("by", {})
        for up in ("binrelay", "source"):
            v = by_up.get(up)
            if not v:
                continue
            f = lambda x: "%.2f" % x if x is not None else "—"
            w("| %s | %d | %s | %s | %s | %s |" % (up, len(v["ms"]), f(v["median"]), f(v["p90"]),
                                                 f(v["p99"]), f(v["max"])))
        w("")
        b, src = by_up.get("binrelay"), by_up.get("source")
        if b and src and b["median"] is not None and src["median"] is not None:
            w("binrelay adds **%.2f ms** at the median and %.2f ms at p99 to what the source's own "
              "replica sees (the goal: \"a new event reaches a connected replica within a few "
              "milliseconds\")." % (b["median"] - src["median"], b["p99"] - src["p99"]))
            w("")
    if not counts:
        w("Only a SCALE=1 run counts for the goals.")
    print("\n".join(out))


if __name__ == "__main__":
    main()
