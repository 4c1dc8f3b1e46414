#!/usr/bin/env python3
"""Summary for bench/tail_bench.sh: report.py META.jsonl RAW.jsonl > results.md

Medians of the timed runs (run >= 1); run 0 is the untimed validation pass.
rows/s counts rows of the subscribed table delivered (mariadb-binlog decodes
every table, so its rows/s on `mixed` is subscribed rows / its wall time).
"net" subtracts the same tool's median wall time on the `empty` variant (one
row: process start, connect, handshake, schema look-ups), which dominates at
small SCALE.
"""
import json
import statistics
import sys

GOAL_GO = 5.0
GOAL_MB = 2.0
GOAL_SKIP = 0.10
TOOL_ORDER = ["binrelay", "binrelay-all", "binrelay-none", "mariadb-binlog", "go-mysql"]
VARIANT_ORDER = ["empty", "mixed", "insert", "hot", "wide"]
WHAT = {
    "binrelay": "`binrelay tail --tables <subscribed table>`",
    "binrelay-all": "`binrelay tail --tables bench.sub,bench.unsub` (decodes everything)",
    "binrelay-none": "`binrelay tail --tables bench.unsub_nonexistent_table` (skips everything)",
    "mariadb-binlog": "`mariadb-binlog --read-from-remote-server -v` (decodes every table)",
    "go-mysql": "go-mysql canal (npm @solashi/go-mysql-binlog-node prebuilt binary), time to last row",
}


def load(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def fmt_s(x):
    return "—" if x is None else ("%.3f" % x if x < 10 else "%.2f" % x)


def fmt_rate(x):
    if x is None:
        return "—"
    if x >= 1e6:
        return "%.2fM" % (x / 1e6)
    if x >= 1e3:
        return "%.1fk" % (x / 1e3)
    return "%.1f" % x


def fmt_ratio(x):
    return "—" if x is None else "%.2fx" % x


def fmt_bytes(n):
    if n is None:
        return "—"
    if n >= 1 << 20:
        return "%.1f MiB" % (n / (1 << 20))
    if n >= 1 << 10:
        return "%.1f KiB" % (n / (1 << 10))
    return "%d B" % n


def main():
    meta = load(sys.argv[1])
    raw = load(sys.argv[2])
    run = next(m for m in meta if m["kind"] == "run")
    variants = {m["variant"]: m for m in meta if m["kind"] == "variant"}
    vorder = [v for v in VARIANT_ORDER if v in variants] + \
        [v for v in variants if v not in VARIANT_ORDER]

    stats = {}  # (variant, tool) -> dict
    for r in raw:
        key = (r["variant"], r["tool"])
        s = stats.setdefault(key, {"walls": [], "cpu": [], "fail": [], "valid": None})
        if r["run"] == 0:
            s["valid"] = r
            continue
        if r.get("ok"):
            s["walls"].append(r["wall"])
            s["cpu"].append(r["user"] + r["sys"])
        else:
            s["fail"].append(r.get("note") or "failed")
    for s in stats.values():
        s["med"] = statistics.median(s["walls"]) if s["walls"] else None
        s["cpu_med"] = statistics.median(s["cpu"]) if s["cpu"] else None

    def med(v, t):
        s = stats.get((v, t))
        return s["med"] if s else None

    def base(t):
        # fixed per-invocation cost, from the one-row `empty` variant
        return med("empty", "binrelay" if t == "binrelay-all" else t)

    def rows_of(v, t):
        return variants[v]["expected"]

    def rate(v, t, net=False):
        m = med(v, t)
        if m is None:
            return None
        if net:
            b = base(t)
            if b is None or v == "empty" or m - b <= 0:
                return None
            m = m - b
        return rows_of(v, t) / m

    def expected_valid(v, t):
        if t == "binrelay-none":
            return 0
        if t == "binrelay-all":
            return variants[v]["expected"] * 2  # sub and unsub get equal row counts
        return variants[v]["expected"]

    out = []
    p = out.append
    p("# binrelay tail benchmark — %s" % run["stamp"])
    p("")
    p("SCALE=%s, %d timed runs per cell (median shown, min–max in brackets), "
      "server %s, binlog_row_metadata=%s, binlog_row_image=FULL, everything under `nice -n 10` "
      "on a shared 2-core machine." % (run["scale"], run["runs"], run["server"], run["row_metadata"]))
    p("")
    p("binrelay: `%s` (built %s, sha256 %s…, main at %s). Server TLS (have_ssl): %s — every client "
      "ran unencrypted. Machine: %s × %s cores, load average at start %s." % (
          run.get("binrelay"), run.get("binrelay_mtime"), run.get("binrelay_sha") or "—", run.get("git_head"), run.get("have_ssl"),
          run.get("cpu"), run.get("nproc"), " ".join(run.get("load_start", []))))
    p("")
    notes = [n for n in (run.get("binrelay_note"), run.get("gomysql_note")) if n]
    for n in notes:
        p("- **%s**" % n)
    if notes:
        p("")
    p("## Binlog generated")
    p("")
    p("| variant | subscribed table | rows of it | stream bytes | bytes per part | files | generation s |")
    p("|---|---|---:|---:|---|---|---:|")
    for v in vorder:
        m = variants[v]
        parts = ", ".join("%s %s" % (k, fmt_bytes(b)) for k, b in sorted(m["bytes_parts"].items()))
        p("| %s | %s | %d | %s | %s | %s | %.1f |" % (
            v, m["table"], m["expected"], fmt_bytes(m["bytes_total"]), parts,
            " ".join(m["files"]), m["gen_seconds"]))
    p("")
    p("## Times")
    p("")
    p("| variant | tool | median wall s [min–max] | rows/s | net rows/s | client CPU s | validation (run 0) |")
    p("|---|---|---|---:|---:|---:|---|")
    for v in vorder:
        for t in TOOL_ORDER:
            s = stats.get((v, t))
            if not s:
                continue
            rng = ""
            if s["walls"]:
                rng = " [%s–%s]" % (fmt_s(min(s["walls"])), fmt_s(max(s["walls"])))
            val = "—"
            if s["valid"] is not None:
                vr = s["valid"]
                want = expected_valid(v, t)
                if not vr.get("ok"):
                    val = "FAILED: %s" % (vr.get("note") or "rc %s" % vr.get("rc"))
                elif vr.get("rows") is None:
                    val = "ok"
                elif vr["rows"] == want:
                    val = "ok (%d rows)" % vr["rows"]
                    if vr.get("stats"):
                        val += "; binrelay: %s" % vr["stats"].replace("done: ", "")
                else:
                    val = "MISMATCH: %d rows, expected %d" % (vr["rows"], want)
            fails = ""
            if s["fail"]:
                fails = " (%d failed: %s)" % (len(s["fail"]), s["fail"][0])
            r = rate(v, t) if t != "binrelay-none" else None
            rn = rate(v, t, net=True) if t != "binrelay-none" else None
            p("| %s | %s | %s%s%s | %s | %s | %s | %s |" % (
                v, t, fmt_s(s["med"]), rng, fails, fmt_rate(r), fmt_rate(rn),
                fmt_s(s["cpu_med"]), val))
    p("")
    p("rows/s = rows of the subscribed table / median wall time. net = the same after "
      "subtracting that tool's median on `empty`. Client CPU = user+sys of the client "
      "process only (the server's work is not included).")
    p("")
    p("## Ratios (binrelay rows/s over the peer's rows/s; goals: ≥ %gx go-mysql, ≥ %gx mariadb-binlog)"
      % (GOAL_GO, GOAL_MB))
    p("")
    p("| variant | binrelay / go-mysql | net | client CPU | binrelay / mariadb-binlog | net | client CPU |")
    p("|---|---:|---:|---:|---:|---:|---:|")

    def ratio(v, peer, net):
        a, b = rate(v, "binrelay", net), rate(v, peer, net)
        return a / b if a and b else None

    def goal(x, g):
        if x is None:
            return "—"
        return "%s %s" % (fmt_ratio(x), "✓" if x >= g else "✗")

    def cpu_ratio(v, peer):
        a, b = stats.get((v, "binrelay")), stats.get((v, peer))
        if not a or not b or not a["cpu_med"] or not b["cpu_med"]:
            return None
        return b["cpu_med"] / a["cpu_med"]

    for v in vorder:
        if v == "empty":
            continue
        p("| %s | %s | %s | %s | %s | %s | %s |" % (
            v, goal(ratio(v, "go-mysql", False), GOAL_GO), goal(ratio(v, "go-mysql", True), GOAL_GO),
            fmt_ratio(cpu_ratio(v, "go-mysql")),
            goal(ratio(v, "mariadb-binlog", False), GOAL_MB), goal(ratio(v, "mariadb-binlog", True), GOAL_MB),
            fmt_ratio(cpu_ratio(v, "mariadb-binlog"))))
    p("")
    p("client CPU = the peer's user+sys CPU seconds over binrelay's for the same rows (the "
      "goals are on wall-clock rows/s; this column shows how much of a gap is the clients' "
      "own work rather than the shared server and machine).")
    ta, tm = med("mixed", "binrelay-all"), med("mixed", "mariadb-binlog")
    if ta and tm:
        p("")
        p("Same work on `mixed` (both decode every row of bench.sub and bench.unsub): "
          "mariadb-binlog wall / binrelay-all wall = %s." % fmt_ratio(tm / ta))
    p("")
    p("## Skip cost (goal: skipped part < %d%% of decoded part, per byte)" % round(GOAL_SKIP * 100))
    p("")
    p("skip = `binrelay-none` over the whole stream; decode = `binrelay-all` on `mixed` "
      "(same bytes, every row decoded), `binrelay` on the others (the one table is the whole stream). "
      "(b) on `mixed`: skip ns/byte over the marginal cost of one decoded byte of bench.sub, "
      "(T_sub − T_skip·B_unsub/B) / B_sub. net = after subtracting the `empty` medians. "
      "Wall time includes the server reading and sending the stream, which no client can "
      "skip; client CPU skip/decode is binrelay's own user+sys with nothing subscribed "
      "over the same when decoding.")
    p("")
    p("| variant | bytes | skip ns/B | decode ns/B | skip/decode | net | (b) | (b) net | client CPU skip/decode |")
    p("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for v in vorder:
        if v == "empty":
            continue
        B = variants[v]["bytes_total"]
        dec_tool = "binrelay-all" if v == "mixed" else "binrelay"
        tn, td = med(v, "binrelay-none"), med(v, dec_tool)
        if tn is None or td is None:
            p("| %s | %s | — | — | — | — | — | — | — |" % (v, fmt_bytes(B)))
            continue
        bn, bd = base("binrelay-none"), base(dec_tool)
        ra = tn / td
        rn = None
        if bn is not None and bd is not None and td - bd > 0:
            rn = max(tn - bn, 0) / (td - bd)
        rb = rbn = None
        if v == "mixed" and med(v, "binrelay") is not None:
            parts = variants[v]["bytes_parts"]
            bs, bu = parts.get("sub", 0), parts.get("unsub", 0)

            def marg(tsub, tnone):
                d = (tsub - tnone * bu / B) / bs if bs else None
                return (tnone / B) / d if d and d > 0 else None
            ts = med(v, "binrelay")
            rb = marg(ts, tn)
            if bn is not None and base("binrelay") is not None:
                rbn = marg(ts - base("binrelay"), max(tn - bn, 0))

        def pct(x):
            return "—" if x is None else "%.1f%% %s" % (100 * x, "✓" if x < GOAL_SKIP else "✗")
        cn, cd = stats[(v, "binrelay-none")]["cpu_med"], stats[(v, dec_tool)]["cpu_med"]
        rc = cn / cd if cn is not None and cd else None
        p("| %s | %s | %.2f | %.2f | %s | %s | %s | %s | %s |" % (
            v, fmt_bytes(B), tn / B * 1e9, td / B * 1e9, pct(ra), pct(rn), pct(rb), pct(rbn), pct(rc)))
    p("")
    p("## What was run")
    p("")
    for t in TOOL_ORDER:
        if any(k[1] == t for k in stats):
            p("- **%s**: %s" % (t, WHAT[t]))
    p("")
    bad = [(k, s["fail"]) for k, s in stats.items() if s["fail"]]
    if bad:
        p("## Failures")
        p("")
        for (v, t), f in bad:
            p("- %s / %s: %d failed runs, e.g. %s" % (v, t, len(f), f[0]))
        p("")
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
