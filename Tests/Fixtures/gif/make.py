#!/usr/bin/env python3
"""Makes the GIF fixtures (Tests/Fixtures/gif/) and the seeds of the gif-decode and
webp-animation fuzz targets (Fuzz/Corpus/). Rerun with Pillow installed:

    python3 Tests/Fixtures/gif/make.py

Photos come from Pillow (its quantizer and its own GIF writer); the constructions whose every
block the tests need to control (offsets, disposals, transparency, delays, loop counts, broken
data) are written block by block here, their LZW data made of literal codes only (a clear code
before the dictionary would grow a bit), which every decoder reads.
"""
import os
import struct

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
CORPUS = os.path.join(ROOT, "Fuzz", "Corpus")


def lzw(indices, min_code=2):
    """The LZW data of `indices`: the minimum-code-size byte, sub-blocks, terminator."""
    clear, end = 1 << min_code, (1 << min_code) + 1
    size = min_code + 1
    codes = []
    run = 0
    for index in indices:
        if run == 0:
            codes.append(clear)
        codes.append(index)
        run += 1
        if run == clear - 2:
            run = 0
    codes.append(end)
    bits, count, out = 0, 0, bytearray()
    for code in codes:
        bits |= code << count
        count += size
        while count >= 8:
            out.append(bits & 0xFF)
            bits >>= 8
            count -= 8
    if count:
        out.append(bits & 0xFF)
    blocks = bytearray([min_code])
    for start in range(0, len(out), 255):
        chunk = out[start:start + 255]
        blocks += bytes([len(chunk)]) + chunk
    return bytes(blocks + b"\x00")


def table(colours, entries):
    flat = bytearray()
    for colour in colours:
        flat += bytes(colour)
    return bytes(flat + bytes(3 * entries - len(flat)))


def screen(width, height, colours=None, entries=4):
    head = b"GIF89a" + struct.pack("<HH", width, height)
    if colours is None:
        return head + bytes([0, 0, 0])
    bits = entries.bit_length() - 2
    return head + bytes([0x80 | bits, 0, 0]) + table(colours, entries)


def loop(count):
    return b"\x21\xFF\x0BNETSCAPE2.0\x03\x01" + struct.pack("<H", count) + b"\x00"


def control(disposal=0, delay=0, transparent=None):
    flags = (disposal << 2) | (1 if transparent is not None else 0)
    return b"\x21\xF9\x04" + bytes([flags]) + struct.pack("<H", delay) + bytes([transparent or 0]) + b"\x00"


def image(x, y, width, height, indices, colours=None, entries=4, interlaced=False, min_code=2):
    flags = 0x40 if interlaced else 0
    local = b""
    if colours is not None:
        flags |= 0x80 | (entries.bit_length() - 2)
        local = table(colours, entries)
    return b"\x2C" + struct.pack("<HHHH", x, y, width, height) + bytes([flags]) + local + lzw(indices, min_code)


RED, GREEN, BLUE, WHITE = (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as file:
        file.write(data)


def constructions():
    # 8×4 screen. Frame 0: red everywhere (keep). Frame 1: blue 2×2 at (1,1), restore.
    # Frame 2: green 2×2 at (4,1) with index 3 transparent on its right column, clear.
    # Frame 3: a 1×1 white at (7,3) whose local table replaces the global one.
    composite = (
        screen(8, 4, [RED, GREEN, BLUE, WHITE]) + loop(3)
        + control(disposal=1, delay=0) + image(0, 0, 8, 4, [0] * 32)
        + control(disposal=3, delay=1) + image(1, 1, 2, 2, [2] * 4)
        + control(disposal=2, delay=5, transparent=3) + image(4, 1, 2, 2, [1, 3, 1, 3])
        + control(disposal=0, delay=20) + image(7, 3, 1, 1, [1], colours=[(0, 0, 0), WHITE], entries=2)
        + b"\x3B")
    write("composite.gif", composite)
    # No loop extension: plays once. A first frame smaller than the screen, at an offset.
    write("partial.gif", screen(6, 6, [RED, GREEN, BLUE, WHITE]) + control(delay=10) + image(2, 2, 2, 2, [2] * 4)
          + control(delay=10) + image(0, 0, 6, 6, [1] * 36) + b"\x3B")
    # Interlaced rows: row y has index y % 4, stored by GIF's passes (rows 0, 8; 4; 2, 6; 1, 3,
    # 5, 7), so a wrong pass order shows.
    order = [0, 8, 4, 2, 6, 1, 3, 5, 7]
    rows = [y % 4 for y in order for _ in range(3)]
    write("interlaced.gif", screen(3, 9, [RED, GREEN, BLUE, WHITE]) + image(0, 0, 3, 9, rows, interlaced=True) + b"\x3B")
    # Hostile: LZW data that makes 8 pixels for a 2×2 frame.
    write("overrun.gif", screen(2, 2, [RED, GREEN, BLUE, WHITE]) + image(0, 0, 2, 2, [1] * 8) + b"\x3B")
    # Hostile: a minimum code size of 12.
    bad = bytearray(screen(2, 2, [RED, GREEN, BLUE, WHITE]) + image(0, 0, 2, 2, [1] * 4) + b"\x3B")
    bad[13 + 12 + 10] = 12
    write("bad-code-size.gif", bytes(bad))
    # Hostile: a 65535² screen; a 60000×60000 frame on a 4×4 screen (both a few bytes).
    write("huge-screen.gif", screen(65535, 65535, [RED, GREEN]) + image(0, 0, 1, 1, [1]) + b"\x3B")
    write("huge-frame.gif", screen(4, 4, [RED, GREEN]) + image(0, 0, 60000, 60000, [1] * 4) + b"\x3B")
    # Hostile: a frame that lies outside the screen (drawn nowhere) after one inside it.
    write("outside.gif", screen(4, 4, [RED, GREEN, BLUE, WHITE]) + control(delay=10) + image(0, 0, 4, 4, [2] * 16)
          + control(delay=10) + image(100, 100, 2, 2, [1] * 4) + b"\x3B")
    # Truncated: three frames, the file cut inside the third's data.
    whole = (screen(4, 4, [RED, GREEN, BLUE, WHITE]) + loop(0) + control(delay=10) + image(0, 0, 4, 4, [0] * 16)
             + control(delay=10) + image(0, 0, 4, 4, [1] * 16) + control(delay=10) + image(0, 0, 4, 4, [2] * 16) + b"\x3B")
    write("truncated.gif", whole[:len(whole) - 8])
    write("truncated-first.gif", whole[:40])
    return [composite, whole]


def photos():
    kite = Image.open(os.path.join(HERE, "..", "small-photos", "kite.jpg")).convert("RGB")
    kite = kite.resize((160, kite.height * 160 // kite.width), Image.LANCZOS)
    paletted = kite.quantize(colors=200)
    paletted.save(os.path.join(HERE, "photo.gif"), interlace=False)
    paletted.save(os.path.join(HERE, "photo-interlaced.gif"), interlace=True)
    Image.open(os.path.join(HERE, "photo.gif")).convert("RGB").save(os.path.join(HERE, "photo-reference.png"))
    calla = Image.open(os.path.join(HERE, "..", "small-photos", "calla.png")).convert("RGBA")
    calla = calla.resize((120, calla.height * 120 // calla.width), Image.LANCZOS)
    # Pixels under half opacity become the transparent index.
    rgb = calla.convert("RGB").quantize(colors=255)
    palette = rgb.getpalette()[:255 * 3]
    rgb.putpalette(palette + [0] * (768 - len(palette)))
    # Transparent outside an ellipse (calla.png is opaque): the index the tests look for.
    mask = Image.new("L", calla.size, 255)
    from PIL import ImageDraw
    ImageDraw.Draw(mask).ellipse((10, 5, calla.width - 10, calla.height - 5), fill=0)
    rgb.paste(255, mask=mask)
    rgb.save(os.path.join(HERE, "transparent.gif"), transparency=255, optimize=False)
    Image.open(os.path.join(HERE, "transparent.gif")).convert("RGBA").save(os.path.join(HERE, "transparent-reference.png"))
    # An animation of photo frames: the kite panned, 12 frames, 8 cs each, forever.
    frames = []
    for i in range(12):
        frame = kite.crop((i * 4, 0, i * 4 + 112, 80)).quantize(colors=128)
        frames.append(frame)
    frames[0].save(os.path.join(HERE, "pan.gif"), save_all=True, append_images=frames[1:], duration=80, loop=0, interlace=False)


def seeds(extra):
    for target in ("gif-decode", "webp-animation"):
        os.makedirs(os.path.join(CORPUS, target), exist_ok=True)
    names = sorted(n for n in os.listdir(HERE) if n.endswith(".gif"))
    for name in names:
        data = open(os.path.join(HERE, name), "rb").read()
        if len(data) > 64 << 10:
            continue
        for selector in (0, 3, 6, 9):
            with open(os.path.join(CORPUS, "gif-decode", f"{name[:-4]}-{selector}"), "wb") as file:
                file.write(bytes([selector]) + data)
    webp = os.path.join(ROOT, "Tests", "Fixtures", "webp", "kite-animated.webp")
    data = open(webp, "rb").read()
    for selector in (0, 3, 6, 9):
        with open(os.path.join(CORPUS, "webp-animation", f"kite-animated-{selector}"), "wb") as file:
            file.write(bytes([selector]) + data)
    # An animation Pillow writes (ANMF frames with blending and disposal), and one cut short.
    frames = [Image.new("RGBA", (24, 16), (0, 0, 0, 0)) for _ in range(4)]
    for i, frame in enumerate(frames):
        frame.paste((255, 40 * i, 0, 128 + 40 * i), (i * 4, 2, i * 4 + 8, 12))
    path = os.path.join(CORPUS, "webp-animation", "pillow-4-frames-0")
    frames[0].save(path + ".webp", save_all=True, append_images=frames[1:], duration=[30, 0, 200, 5], loop=2, lossless=True)
    data = open(path + ".webp", "rb").read()
    os.remove(path + ".webp")
    for selector in (0, 6):
        with open(os.path.join(CORPUS, "webp-animation", f"pillow-4-frames-{selector}"), "wb") as file:
            file.write(bytes([selector]) + data)
        with open(os.path.join(CORPUS, "webp-animation", f"pillow-4-frames-cut-{selector}"), "wb") as file:
            file.write(bytes([selector]) + data[: len(data) * 2 // 3])


if __name__ == "__main__":
    made = constructions()
    photos()
    seeds(made)
