#!/usr/bin/env python3
"""Makes one recorded fixture from its upstream file (standard library only).

Usage: fixtures-derive.py HOW SRC DEST

HOW is the last field of tests/fixtures/MANIFEST:
  zip:MEMBER      DEST is member MEMBER of the zip file SRC
  zongji-packets  SRC is zongji JSON with a "packets" array of hex strings;
                  DEST is each packet as a u32 little-endian length, then its bytes
  zongji-events   same SRC; DEST is the binlog magic fe 62 69 6e, then every
                  packet without its leading 00 (OK) byte
(`copy` needs no helper.) Exits non-zero with a message on stderr when SRC
does not have the expected shape.
"""

import json
import struct
import sys
import zipfile

BINLOG_MAGIC = b"\xfe\x62\x69\x6e"


def zongji_packets(src):
    with open(src, "rb") as f:
        doc = json.loads(f.read().decode("utf-8"))
    packets = doc.get("packets") if isinstance(doc, dict) else None
    if not isinstance(packets, list) or not packets:
        raise ValueError("no \"packets\" array")
    out = []
    for i, text in enumerate(packets):
        if not isinstance(text, str):
            raise ValueError(f"packet {i} is not a hex string")
        packet = bytes.fromhex(text)
        if not packet or packet[0] != 0:
            raise ValueError(f"packet {i} does not start with the 00 OK byte")
        out.append(packet)
    return out


def derive(how, src):
    if how.startswith("zip:"):
        member = how[len("zip:"):]
        with zipfile.ZipFile(src) as z:
            try:
                return z.read(member)
            except KeyError:
                raise ValueError(f"no member {member}") from None
    if how == "zongji-packets":
        return b"".join(struct.pack("<I", len(p)) + p for p in zongji_packets(src))
    if how == "zongji-events":
        return BINLOG_MAGIC + b"".join(p[1:] for p in zongji_packets(src))
    raise ValueError(f"unknown way of making a fixture: {how}")


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    how, src, dest = argv[1:]
    try:
        data = derive(how, src)
    except (OSError, ValueError, zipfile.BadZipFile, UnicodeDecodeError) as e:
        sys.stderr.write(f"fixtures-derive: {how}: {e}\n")
        return 1
    with open(dest, "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
