#!/usr/bin/env python3
"""Adds HEIF transformation properties (irot, imir, clap) to a file's primary item, as a phone
would write them: heif-enc cannot. Usage: transform.py IN OUT [clap=W,H,DX,DY] [irot=N] [imir=AXIS]
[nclx=PRIMARIES,TRANSFER,MATRIX,FULL] ... (written in the order given; clap is a W×H clean
aperture whose centre is DX, DY pixels off the image's; nclx a colour box of those H.273 code
points, which heif-enc 1.15 leaves out of an 8-bit HEIC). Rewrites ipco, ipma and the box sizes, and moves iloc's file offsets by what the
meta box grew."""
import struct
import sys


def boxes(data, start, end):
    offset = start
    while offset < end:
        size, kind = struct.unpack(">I4s", data[offset:offset + 8])
        yield kind.decode(), offset, size
        offset += size


def box(kind, payload):
    return struct.pack(">I4s", 8 + len(payload), kind.encode()) + payload


def fix_iloc(payload, delta):
    version = payload[0]
    body = bytearray(payload)
    offset_size, length_size = body[4] >> 4, body[4] & 15
    base_size, index_size = body[5] >> 4, (body[5] & 15 if version in (1, 2) else 0)
    position = 6
    count_size = 4 if version == 2 else 2
    count = int.from_bytes(body[position:position + count_size], "big")
    position += count_size

    def field(size):
        nonlocal position
        value = int.from_bytes(body[position:position + size], "big") if size else 0
        position += size
        return position - size, value

    for _ in range(count):
        position += count_size  # item_ID
        method = 0
        if version in (1, 2):
            _, word = field(2)
            method = word & 15
        position += 2  # data_reference_index
        base_at, base = field(base_size)
        _, extents = field(2)
        if method == 0 and base_size and base:
            body[base_at:base_at + base_size] = (base + delta).to_bytes(base_size, "big")
        for _ in range(extents):
            field(index_size)
            at, value = field(offset_size)
            if method == 0 and not base and offset_size:
                body[at:at + offset_size] = (value + delta).to_bytes(offset_size, "big")
            field(length_size)
    return bytes(body)


def main():
    source, target, transforms = sys.argv[1], sys.argv[2], sys.argv[3:]
    data = open(source, "rb").read()
    out = b""
    for kind, offset, size in boxes(data, 0, len(data)):
        if kind != "meta":
            out += data[offset:offset + size]
            continue
        meta_payload = data[offset + 8:offset + size]
        header, children = meta_payload[:4], meta_payload[4:]
        primary = None
        for child, at, length in boxes(children, 0, len(children)):
            if child == "pitm":
                primary = struct.unpack(">H", children[at + 12:at + 14])[0]
        rebuilt = []
        for child, at, length in boxes(children, 0, len(children)):
            payload = children[at + 8:at + length]
            if child == "iprp":
                parts = {name: (a, n) for name, a, n in boxes(payload, 0, len(payload))}
                a, n = parts["ipco"]
                ipco = payload[a + 8:a + n]
                existing = sum(1 for _ in boxes(ipco, 0, len(ipco)))
                added = []
                for transform in transforms:
                    name, value = transform.split("=")
                    if name == "nclx":
                        primaries, transfer, matrix, full = (int(v) for v in value.split(","))
                        ipco += box("colr", b"nclx" + struct.pack(">HHHB", primaries, transfer, matrix, full << 7))
                    elif name == "clap":
                        width, height, dx, dy = (int(v) for v in value.split(","))
                        ipco += box(name, struct.pack(">iIiIiIiI", width, 1, height, 1, dx, 1, dy, 1))
                    else:
                        ipco += box(name, bytes([int(value)]))
                    added.append(existing + len(added) + 1)
                a, n = parts["ipma"]
                ipma = bytearray(payload[a + 8:a + n])
                version, flags = ipma[0], int.from_bytes(ipma[1:4], "big")
                entries = struct.unpack(">I", ipma[4:8])[0]
                position, result = 8, bytearray(ipma[:8])
                for _ in range(entries):
                    id_size = 4 if version >= 1 else 2
                    item = int.from_bytes(ipma[position:position + id_size], "big")
                    count = ipma[position + id_size]
                    width = 2 if flags & 1 else 1
                    associations = ipma[position + id_size + 1:position + id_size + 1 + count * width]
                    position += id_size + 1 + count * width
                    if item == primary:
                        extra = b"".join(((0x8000 | index).to_bytes(2, "big") if width == 2 else bytes([0x80 | index])) for index in added)
                        associations += extra
                        count += len(added)
                    result += item.to_bytes(id_size, "big") + bytes([count]) + associations
                payload = box("ipco", ipco) + box("ipma", bytes(result))
            rebuilt.append((child, payload))
        grown = sum(8 + len(p) for _, p in rebuilt) - len(children)
        meta = header + b"".join(box(c, fix_iloc(p, grown) if c == "iloc" else p) for c, p in rebuilt)
        out += box("meta", meta)
    open(target, "wb").write(out)


main()
