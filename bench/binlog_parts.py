#!/usr/bin/env python3
"""Binlog byte accounting for bench/tail_bench.sh.

usage: binlog_parts.py POSITIONS_FILE BINARY_LOGS_FILE VARIANT START_FILE

POSITIONS_FILE is the batch output (mariadb -N -B) of the generator script, in
which every statement is followed by
    SELECT 'TAG', '<part>'; SHOW MASTER STATUS;
so it reads as pairs of lines "TAG<TAB>part" / "file<TAB>pos...". The first
pair (part "start") is the position before the first statement.
BINARY_LOGS_FILE is `SHOW BINARY LOGS` output (name<TAB>size) taken after the
generator ran. Prints one JSON object: bytes per part (positions delta of each
statement's transaction), the variant's files, and its total stream bytes from
START_FILE:4 to the end of the last file.
"""
import json
import sys


def main():
    pos_path, logs_path, variant, start_file = sys.argv[1:5]
    sizes = {}
    order = []
    with open(logs_path) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) >= 2 and cols[1].isdigit():
                sizes[cols[0]] = int(cols[1])
                order.append(cols[0])
    marks = []  # (part, file, pos)
    tag = None
    with open(pos_path) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if cols[0] == "TAG" and len(cols) >= 2:
                tag = cols[1]
            elif tag is not None and len(cols) >= 2 and cols[1].isdigit():
                marks.append((tag, cols[0], int(cols[1])))
                tag = None
    parts = {}
    for (_, f0, p0), (part, f1, p1) in zip(marks, marks[1:]):
        if f0 == f1:
            delta = p1 - p0
        else:
            # rotation: the transaction went to the tail of f0 (plus any whole
            # files in between); the new file's header is not counted
            i0, i1 = order.index(f0), order.index(f1)
            delta = sizes[f0] - p0 + sum(sizes[n] for n in order[i0 + 1:i1])
        parts[part] = parts.get(part, 0) + delta
    files = order[order.index(start_file):]
    total = sum(sizes[n] for n in files) - 4
    out = {"kind": "variant", "variant": variant, "files": files,
           "bytes_total": total, "bytes_parts": parts}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
