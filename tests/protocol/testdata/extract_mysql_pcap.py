#!/usr/bin/env python3
"""One-off extractor: MySQL packets from the zeek pcap/pcapng captures.

Usage: extract_mysql_pcap.py CAPTURE... > zeek_mysql_packets.txt

Reassembles each TCP connection to port 3306 (in-order segments, duplicate
segments dropped), splits both directions into MySQL packets and prints, per
connection, lines "<c|s> <seq> <hex payload>" in capture order of the first
byte of each packet. The output is committed as test data so the C++ tests
need no pcap parser.
"""
import struct
import sys


def pcap_frames(data):
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4"):
        end = "<" if magic == b"\xd4\xc3\xb2\xa1" else ">"
        linktype = struct.unpack(end + "I", data[20:24])[0]
        off = 24
        while off + 16 <= len(data):
            _, _, incl, _ = struct.unpack(end + "IIII", data[off:off + 16])
            yield linktype, data[off + 16:off + 16 + incl]
            off += 16 + incl
    elif magic == b"\x0a\x0d\x0d\x0a":
        off = 0
        linktypes = []
        end = "<"
        while off + 12 <= len(data):
            btype, blen = struct.unpack(end + "II", data[off:off + 8])
            body = data[off + 8:off + blen - 4]
            if btype == 0x0A0D0D0A:
                end = "<" if body[:4] == b"\x4d\x3c\x2b\x1a" else ">"
                btype, blen = struct.unpack(end + "II", data[off:off + 8])
                body = data[off + 8:off + blen - 4]
            elif btype == 1:
                linktypes.append(struct.unpack(end + "H", body[:2])[0])
            elif btype == 6:
                iface, _, _, cap, _ = struct.unpack(end + "IIIII", body[:20])
                yield linktypes[iface], body[20:20 + cap]
            off += blen
    else:
        raise SystemExit("unknown capture format")


def tcp_segments(linktype, frame):
    if linktype == 1:  # Ethernet
        eth_type = struct.unpack(">H", frame[12:14])[0]
        ip = frame[14:]
        if eth_type == 0x8100:
            eth_type = struct.unpack(">H", frame[16:18])[0]
            ip = frame[18:]
    elif linktype == 0 or linktype == 108:  # BSD loopback
        ip = frame[4:]
        eth_type = 0x0800 if ip[0] >> 4 == 4 else 0x86DD
    elif linktype == 113:  # Linux cooked
        eth_type = struct.unpack(">H", frame[14:16])[0]
        ip = frame[16:]
    elif linktype == 101:  # raw IP
        ip = frame
        eth_type = 0x0800 if ip[0] >> 4 == 4 else 0x86DD
    else:
        return None
    if eth_type == 0x0800:
        ihl = (ip[0] & 15) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        if ip[9] != 6:
            return None
        src, dst = ip[12:16], ip[16:20]
        tcp = ip[ihl:total]
    elif eth_type == 0x86DD:
        if ip[6] != 6:
            return None
        plen = struct.unpack(">H", ip[4:6])[0]
        src, dst = ip[8:24], ip[24:40]
        tcp = ip[40:40 + plen]
    else:
        return None
    sport, dport, seq = struct.unpack(">HHI", tcp[:8])
    doff = (tcp[12] >> 4) * 4
    flags = tcp[13]
    return (src, sport, dst, dport, seq, flags, tcp[doff:])


def main():
    for path in sys.argv[1:]:
        data = open(path, "rb").read()
        conns = {}  # key: (client, server) -> list of (dir, seq, payload)
        order = []
        for lt, frame in pcap_frames(data):
            seg = tcp_segments(lt, frame)
            if not seg:
                continue
            src, sport, dst, dport, seq, flags, payload = seg
            if dport == 3306:
                key, d = ((src, sport), (dst, dport)), "c"
            elif sport == 3306:
                key, d = ((dst, dport), (src, sport)), "s"
            else:
                continue
            if key not in conns:
                conns[key] = {"c": {"next": None, "buf": b"", "pk": []},
                              "s": {"next": None, "buf": b"", "pk": []}, "events": []}
                order.append(key)
            st = conns[key][d]
            if flags & 0x02:  # SYN
                st["next"] = (seq + 1) & 0xFFFFFFFF
                continue
            if not payload:
                continue
            if st["next"] is None:
                st["next"] = seq
            if seq != st["next"]:
                continue  # retransmission or out of order: ignored
            st["next"] = (seq + len(payload)) & 0xFFFFFFFF
            st["buf"] += payload
            while len(st["buf"]) >= 4:
                n = int.from_bytes(st["buf"][:3], "little")
                if len(st["buf"]) < 4 + n:
                    break
                conns[key]["events"].append((d, st["buf"][3], st["buf"][4:4 + n]))
                st["buf"] = st["buf"][4 + n:]
        print("# file %s" % path.split("/")[-1])
        for i, key in enumerate(order):
            print("# connection %d" % i)
            for d, s, p in conns[key]["events"]:
                print("%s %d %s" % (d, s, p.hex()))


if __name__ == "__main__":
    main()
