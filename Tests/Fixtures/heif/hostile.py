#!/usr/bin/env python3
"""Hostile HEIC and AVIF containers for the container walker's tests and fuzz seeds.

    python3 hostile.py OUTDIR        # writes the files below into OUTDIR (hostile/ in the repo)

Each file is composed from the real coded image of `small.heic` (a 96×64 HEVC tile) or
`kite.avif` (a 480×300 AV1 image), so everything but the construction under test is sound:

    grid-2x2.heic            a sound 2×2 grid of four copies of the tile (192×120)
    grid-cycle.heic/.avif    grid 1 is built from grid 2, grid 2 from grid 1
    grid-of-grids.heic       a grid whose one tile is itself a grid
    reference-chain.heic     thumbnails of thumbnails, 8 'thmb' references deep
    many-items.heic          a sound image and 2,100 one-byte 'mime' items
    many-tiles.heic          a 33×32 grid of 16×16 tiles (1,056 references to one tile)
    overlay-layers.heic      an overlay of 65 layers
    icc-8k.heic              a sound image with an 8 KiB 'prof' colour profile
    extent-past-end.heic     the tile's data runs 1,000 bytes past the end of the file
    extent-overlap.heic      the 2×2 grid with every tile pointing at the same bytes (sound: it decodes)
    shared-thumbnails.heic   a sound image and 500 'thmb' items all pointing at its bytes (sound)
    read-amplification.heic  a 32×32 grid of one tile whose extent is 20,000 bytes: 20 MB read
    extent-overflow.heic     an extent offset near 2^64
    deep-boxes.heic          'meta' > 'iprp' > 'ipco' nested 12 times inside a property list
    lying-ispe.heic/.avif    coded at 4096×4096, 'ispe' says 64×64 (needs heif-enc)

No library is needed but heif-enc (Debian's libheif-examples) for the two lying-ispe files.
"""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def box(kind, payload):
    return struct.pack('>I4s', 8 + len(payload), kind) + payload


def full(kind, version, flags, payload):
    return box(kind, struct.pack('>I', version << 24 | flags) + payload)


def children(data, start, end):
    while start + 8 <= end:
        size, kind = struct.unpack('>I4s', data[start:start + 8])
        yield kind, start + 8, start + size
        start += size


def read_image(path):
    """The primary coded item's type, configuration property (whole box), ispe and data."""
    data = open(path, 'rb').read()
    meta = next((s, e) for k, s, e in children(data, 0, len(data)) if k == b'meta')
    top = {k: (s, e) for k, s, e in children(data, meta[0] + 4, meta[1])}
    types = {}
    s, e = top[b'iinf']
    for k, cs, ce in children(data, s + 6, e):
        item_id, = struct.unpack('>H', data[cs + 4:cs + 6])
        types[item_id] = data[cs + 8:cs + 12]
    coded = next(i for i, t in types.items() if t in (b'hvc1', b'av01'))
    s, e = top[b'iprp']
    props = []
    for k, cs, ce in children(data, s, e):
        if k == b'ipco':
            props = [(pk, data[ps - 8:pe]) for pk, ps, pe in children(data, cs, ce)]
        if k == b'ipma':
            flags = data[cs + 3]
            count, = struct.unpack('>I', data[cs + 4:cs + 8])
            at, assoc = cs + 8, {}
            for _ in range(count):
                item_id, n = struct.unpack('>HB', data[at:at + 3])
                at += 3
                wide = flags & 1
                indices = []
                for _ in range(n):
                    v = struct.unpack('>H', data[at:at + 2])[0] & 0x7fff if wide else data[at] & 0x7f
                    at += 2 if wide else 1
                    indices.append(v)
                assoc[item_id] = indices
    config = next(props[i - 1][1] for i in assoc[coded] if props[i - 1][0] in (b'hvcC', b'av1C'))
    ispe = next(props[i - 1][1] for i in assoc[coded] if props[i - 1][0] == b'ispe')
    width, height = struct.unpack('>II', ispe[12:20])
    # iloc version 0 or 1, one extent an item, file offsets (what heif-enc writes).
    s, e = top[b'iloc']
    version = data[s]
    offset_size, length_size, base_size = data[s + 4] >> 4, data[s + 4] & 15, data[s + 5] >> 4
    index_size = data[s + 5] & 15 if version else 0
    count, = struct.unpack('>H', data[s + 6:s + 8])
    at = s + 8

    def number(size):
        nonlocal at
        value = int.from_bytes(data[at:at + size], 'big')
        at += size
        return value
    for _ in range(count):
        item_id = number(2)
        at += (2 if version else 0) + 2
        base = number(base_size)
        for _ in range(number(2)):
            number(index_size)
            offset, length = base + number(offset_size), number(length_size)
        if item_id == coded:
            payload = data[offset:offset + length]
    return types[coded], config, (width, height), payload


def ispe(width, height):
    return full(b'ispe', 0, 0, struct.pack('>II', width, height))


def grid_descriptor(rows, columns, width, height):
    return struct.pack('>BBBBHH', 0, 0, rows - 1, columns - 1, width, height)


def build(brand, items, properties, refs, primary, idat_items=(), extra_ipco=b'', iloc_override=None):
    """items: [(id, type, [property indices], data)]; refs: [(type, from, [to])].
    Items listed in idat_items keep their data in 'idat' (construction method 1)."""
    ftyp = box(b'ftyp', brand + b'\0\0\0\0' + b'mif1' + brand)
    hdlr = full(b'hdlr', 0, 0, b'\0' * 4 + b'pict' + b'\0' * 12 + b'\0')
    pitm = full(b'pitm', 0, 0, struct.pack('>H', primary))
    # Every item but the primary is hidden, as tiles are.
    infes = b''.join(full(b'infe', 2, 0 if i == primary else 1, struct.pack('>HH4s', i, 0, t) + b'\0') for i, t, _, _ in items)
    iinf = full(b'iinf', 0, 0, struct.pack('>H', len(items)) + infes)
    ipco = box(b'ipco', b''.join(properties) + extra_ipco)
    entries = b''.join(struct.pack('>HB', i, len(p)) + b''.join(struct.pack('>H', 0x8000 | x) for x in p) for i, _, p, _ in items if p)
    ipma = full(b'ipma', 0, 1, struct.pack('>I', sum(1 for it in items if it[2])) + entries)
    iprp = box(b'iprp', ipco + ipma)
    iref = full(b'iref', 0, 0, b''.join(box(t, struct.pack('>HH', f, len(to)) + b''.join(struct.pack('>H', x) for x in to)) for t, f, to in refs)) if refs else b''
    idat_data = b''.join(d for i, _, _, d in items if i in idat_items)
    idat = box(b'idat', idat_data) if idat_items else b''

    def iloc(mdat_start):
        rows, at_mdat, at_idat = [], mdat_start + 8, 0
        for i, _, _, d in items:
            if i in idat_items:
                rows.append(struct.pack('>HHHHII', i, 1, 0, 1, at_idat, len(d)))
                at_idat += len(d)
            else:
                rows.append(struct.pack('>HHHHII', i, 0, 0, 1, at_mdat, len(d)))
                at_mdat += len(d)
        if iloc_override:
            return iloc_override(rows)
        return full(b'iloc', 1, 0, struct.pack('>BBH', 0x44, 0x00, len(rows)) + b''.join(rows))

    def meta(mdat_start):
        return full(b'meta', 0, 0, hdlr + pitm + iloc(mdat_start) + iinf + iprp + iref + idat)

    mdat_start = len(ftyp) + len(meta(0))
    mdat = box(b'mdat', b''.join(d for i, _, _, d in items if i not in idat_items))
    return ftyp + meta(mdat_start) + mdat


def write(outdir, name, data):
    with open(os.path.join(outdir, name), 'wb') as f:
        f.write(data)


def flat_png(width, height):
    raw = (b'\0' + b'\x80' * width * 3) * height
    def chunk(kind, payload):
        return struct.pack('>I', len(payload)) + kind + payload + struct.pack('>I', zlib.crc32(kind + payload))
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', width, height, 8, 2, 0, 0, 0))
            + chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b''))


def patch_ispe(data, width, height):
    """Every ispe box (and a grid descriptor in idat) made to declare width × height."""
    out = bytearray(data)
    at = 0
    while True:
        at = out.find(b'ispe', at)
        if at < 0:
            break
        out[at + 8:at + 16] = struct.pack('>II', width, height)
        at += 4
    at = out.find(b'idat')
    if at > 0 and struct.unpack('>I', out[at - 4:at])[0] == 16:
        out[at + 8:at + 12] = struct.pack('>HH', width, height)
    return bytes(out)


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    htype, hvcC, (tw, th), tile = read_image(os.path.join(HERE, 'small.heic'))
    atype, av1C, (aw, ah), frame = read_image(os.path.join(HERE, 'kite.avif'))
    heic, avif = b'heic', b'avif'

    def tile_props(config, w, h):
        return [config, ispe(w, h)]

    # A sound 2×2 grid: tiles 2-5, grid 1 (descriptor in idat).
    props = tile_props(hvcC, tw, th) + [ispe(2 * tw, 120)]
    tiles = [(i, htype, [1, 2], tile) for i in range(2, 6)]
    grid = (1, b'grid', [3], grid_descriptor(2, 2, 2 * tw, 120))
    write(outdir, 'grid-2x2.heic', build(heic, [grid] + tiles, props, [(b'dimg', 1, [2, 3, 4, 5])], 1, idat_items={1}))

    # Every tile at the same bytes.
    def same_bytes(rows):
        first = rows[1]
        rows = [rows[0]] + [row[:2] + first[2:] for row in rows[1:]]
        return full(b'iloc', 1, 0, struct.pack('>BBH', 0x44, 0x00, len(rows)) + b''.join(rows))
    write(outdir, 'extent-overlap.heic',
          build(heic, [grid] + tiles, props, [(b'dimg', 1, [2, 3, 4, 5])], 1, idat_items={1}, iloc_override=same_bytes))

    # 500 thumbnails sharing the primary's bytes: the decode reads the primary alone.
    props = tile_props(hvcC, tw, th)
    items = [(1, htype, [1, 2], tile)] + [(k, htype, [1, 2], b'\0') for k in range(2, 502)]
    def thumbnails_share(rows):
        rows = [rows[0]] + [row[:8] + rows[0][8:] for row in rows[1:]]
        return full(b'iloc', 1, 0, struct.pack('>BBH', 0x44, 0x00, len(rows)) + b''.join(rows))
    write(outdir, 'shared-thumbnails.heic',
          build(heic, items, props, [(b'thmb', k, [1]) for k in range(2, 502)], 1, iloc_override=thumbnails_share))

    # 1,024 references to one tile whose extent runs 20,000 bytes: 20 MB read for a 20 KB file.
    props = [hvcC, ispe(tw, th), ispe(32 * tw, 32 * th)]
    padded = tile + bytes(20_000 - len(tile))
    items = [(1, b'grid', [3], grid_descriptor(32, 32, 32 * tw, 32 * th)), (2, htype, [1, 2], padded)]
    write(outdir, 'read-amplification.heic', build(heic, items, props, [(b'dimg', 1, [2] * 1024)], 1, idat_items={1}))

    # A cycle of two grids over one tile each, HEIC and AVIF.
    for brand, kind, config, (w, h), data, ext in ((heic, htype, hvcC, (tw, th), tile, 'heic'), (avif, atype, av1C, (aw, ah), frame, 'avif')):
        props = tile_props(config, w, h)
        items = [(1, b'grid', [2], grid_descriptor(1, 1, w, h)), (2, b'grid', [2], grid_descriptor(1, 1, w, h)), (3, kind, [1, 2], data)]
        write(outdir, f'grid-cycle.{ext}', build(brand, items, props, [(b'dimg', 1, [2]), (b'dimg', 2, [1])], 1, idat_items={1, 2}))

    # A grid of a grid of the tile.
    props = tile_props(hvcC, tw, th)
    items = [(1, b'grid', [2], grid_descriptor(1, 1, tw, th)), (2, b'grid', [2], grid_descriptor(1, 1, tw, th)), (3, htype, [1, 2], tile)]
    write(outdir, 'grid-of-grids.heic', build(heic, items, props, [(b'dimg', 1, [2]), (b'dimg', 2, [3])], 1, idat_items={1, 2}))

    # Thumbnails of thumbnails: item k+1 is a thumbnail of item k, 8 deep (each a copy of the tile).
    items = [(k, htype, [1, 2], tile) for k in range(1, 10)]
    write(outdir, 'reference-chain.heic', build(heic, items, props, [(b'thmb', k + 1, [k]) for k in range(1, 9)], 1))

    # A sound image among 2,100 one-byte items.
    items = [(1, htype, [1, 2], tile)] + [(k, b'mime', [], bytes([k & 255])) for k in range(2, 2102)]
    write(outdir, 'many-items.heic', build(heic, items, props, [], 1))

    # 1,056 references to one 16×16 tile.
    props = [hvcC, ispe(16, 16), ispe(33 * 16, 32 * 16)]
    items = [(1, b'grid', [3], grid_descriptor(32, 33, 33 * 16, 32 * 16)), (2, htype, [1, 2], tile)]
    write(outdir, 'many-tiles.heic', build(heic, items, props, [(b'dimg', 1, [2] * 1056)], 1, idat_items={1}))

    # An overlay of 65 layers of the tile.
    props = tile_props(hvcC, tw, th) + [ispe(tw, th)]
    descriptor = struct.pack('>BB4HHH', 0, 0, 0, 0, 0, 0xffff, tw, th) + struct.pack('>hh', 0, 0) * 65
    items = [(1, b'iovl', [3], descriptor), (2, htype, [1, 2], tile)]
    write(outdir, 'overlay-layers.heic', build(heic, items, props, [(b'dimg', 1, [2] * 65)], 1, idat_items={1}))

    # An 8 KiB colour profile on a sound image.
    props = tile_props(hvcC, tw, th) + [box(b'colr', b'prof' + bytes(range(256)) * 32)]
    write(outdir, 'icc-8k.heic', build(heic, [(1, htype, [1, 2, 3], tile)], props, [], 1))

    # The tile's data runs past the end of the file.
    props = tile_props(hvcC, tw, th)
    def past_end(rows):
        row = bytearray(rows[0])
        length, = struct.unpack('>I', row[-4:])
        row[-4:] = struct.pack('>I', length + 1000)
        return full(b'iloc', 1, 0, struct.pack('>BBH', 0x44, 0x00, 1) + bytes(row))
    write(outdir, 'extent-past-end.heic', build(heic, [(1, htype, [1, 2], tile)], props, [], 1, iloc_override=past_end))

    # An extent at base offset 2^64 - 16 (8-byte fields).
    def overflow(rows):
        row = struct.pack('>HHHQHQQ', 1, 0, 0, 2**64 - 16, 1, 64, len(tile))
        return full(b'iloc', 1, 0, struct.pack('>BBH', 0x88, 0x80, 1) + row)
    write(outdir, 'extent-overflow.heic', build(heic, [(1, htype, [1, 2], tile)], props, [], 1, iloc_override=overflow))

    # meta > iprp > ipco nested 12 times, as one more property.
    nested = box(b'free', b'')
    for _ in range(12):
        nested = full(b'meta', 0, 0, box(b'iprp', box(b'ipco', nested)))
    write(outdir, 'deep-boxes.heic', build(heic, [(1, htype, [1, 2], tile)], props, [], 1, extra_ipco=nested))

    # Coded at 4096², declared 64×64.
    with tempfile.TemporaryDirectory() as scratch:
        png = os.path.join(scratch, 'flat.png')
        open(png, 'wb').write(flat_png(4096, 4096))
        for ext, flags in (('heic', []), ('avif', ['-A'])):
            out = os.path.join(scratch, 'big.' + ext)
            subprocess.run(['heif-enc', *flags, '-q', '30', png, '-o', out], check=True, capture_output=True)
            write(outdir, f'lying-ispe.{ext}', patch_ispe(open(out, 'rb').read(), 64, 64))


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, 'hostile'))
