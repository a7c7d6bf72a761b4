#!/usr/bin/env python3
"""Makes the committed seed corpora of the fuzz targets (Fuzz/Corpus/TARGET/): small files that
reach the parsers' branches. Rerun after changing a target's input format:

    python3 Fuzz/make_corpus.py [path/to/image-engine]
    python3 Fuzz/make_corpus.py --bombs     only (re)write the bomb seeds (bomb-*)
    python3 Fuzz/make_corpus.py --webp      only (re)write the WebP targets' seeds
    python3 Fuzz/make_corpus.py --heif      only (re)write the HEIF targets' seeds

Needs Pillow, gcc with libjpeg's headers (for restart-marker and arithmetic-coded JPEGs) and a
built image-engine (for disk-cache entries and journals).
"""
import io
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

try:
    from PIL import Image, ImageCms
except ImportError:  # --bombs needs no Pillow
    Image = ImageCms = None

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "Corpus")
ENGINE = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "--bombs" else os.path.join(HERE, "..", ".build", "release", "image-engine")


def picture(size=(24, 16), mode="RGB"):
    image = Image.new("RGB", size)
    for y in range(size[1]):
        for x in range(size[0]):
            image.putpixel((x, y), ((x * 11) % 256, (y * 17) % 256, ((x + y) * 7) % 256))
    return image.convert(mode)


def tiff_orientation(value, little=True):
    order = "<" if little else ">"
    header = (b"II" if little else b"MM") + struct.pack(order + "HI", 42, 8)
    entries = struct.pack(order + "H", 2)
    entries += struct.pack(order + "HHI", 0x010F, 2, 4) + b"Cam\0"  # Make, inline ASCII
    entries += struct.pack(order + "HHIHH", 0x0112, 3, 1, value, 0)
    return header + entries + struct.pack(order + "I", 0)


def tiff_copyright(little=True):
    """IFD0 with an orientation, an Artist inline and a Copyright past the IFD: what the
    copyright edit keeps."""
    order = "<" if little else ">"
    copyright = b"(c) Example Photo Ltd\0"
    values = 8 + 2 + 3 * 12 + 4
    entries = struct.pack(order + "H", 3)
    entries += struct.pack(order + "HHIHH", 0x0112, 3, 1, 6, 0)
    entries += struct.pack(order + "HHI", 0x013B, 2, 3) + b"Al\0\0"
    entries += struct.pack(order + "HHII", 0x8298, 2, len(copyright), values)
    return (b"II" if little else b"MM") + struct.pack(order + "HI", 42, 8) + entries + struct.pack(order + "I", 0) + copyright


def jpeg_bytes(image, **options):
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", **options)
    return buffer.getvalue()


def special_jpegs(directory):
    """Restart intervals and arithmetic coding, which Pillow cannot write, with libjpeg itself."""
    source = os.path.join(directory, "write.c")
    with open(source, "w") as file:
        file.write(r'''
#include <stdio.h>
#include <stdlib.h>
#include <jpeglib.h>
int main(int argc, char **argv) {
    struct jpeg_compress_struct c; struct jpeg_error_mgr e;
    c.err = jpeg_std_error(&e); jpeg_create_compress(&c);
    FILE *f = fopen(argv[1], "wb"); jpeg_stdio_dest(&c, f);
    c.image_width = 32; c.image_height = 24; c.input_components = 3; c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c); jpeg_set_quality(&c, 70, TRUE);
    c.restart_interval = atoi(argv[2]); c.arith_code = atoi(argv[3]);
    if (atoi(argv[4])) jpeg_simple_progression(&c);
    int bits = argc > 5 ? atoi(argv[5]) : 0;
    if (bits > 0) {  /* one scan per AC coefficient, component and bit: 1 + 189 x bits scans */
        static jpeg_scan_info scans[1 + 3 * 63 * 13]; int n = 0;
        scans[n++] = (jpeg_scan_info){3, {0, 1, 2, 0}, 0, 0, 0, 0};
        for (int ci = 0; ci < 3; ci++) for (int k = 1; k < 64; k++) {
            scans[n++] = (jpeg_scan_info){1, {ci, 0, 0, 0}, k, k, 0, bits - 1};
            for (int b = bits - 1; b > 0; b--) scans[n++] = (jpeg_scan_info){1, {ci, 0, 0, 0}, k, k, b, b - 1};
        }
        c.scan_info = scans; c.num_scans = n;
    }
    jpeg_start_compress(&c, TRUE);
    unsigned char row[32 * 3];
    while (c.next_scanline < c.image_height) {
        for (int x = 0; x < 32 * 3; x++) row[x] = (unsigned char)(x * 5 + c.next_scanline * 9);
        JSAMPROW r = row; jpeg_write_scanlines(&c, &r, 1);
    }
    jpeg_finish_compress(&c); fclose(f); return 0;
}''')
    binary = os.path.join(directory, "write")
    subprocess.run(["gcc", source, "-o", binary, "-ljpeg"], check=True)
    made = {}
    for name, restart, arithmetic, progressive in [("restart", 1, 0, 0), ("arithmetic", 0, 1, 0),
                                                   ("restart-progressive", 2, 0, 1), ("arithmetic-progressive", 0, 1, 1)]:
        path = os.path.join(directory, name + ".jpg")
        subprocess.run([binary, path, str(restart), str(arithmetic), str(progressive)], check=True)
        with open(path, "rb") as file:
            made[name] = file.read()
    return made


def jpegs(directory):
    image = picture()
    srgb = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    exif = b"Exif\0\0" + tiff_orientation(6)
    seeds = {
        "baseline": jpeg_bytes(image, quality=75),
        "progressive": jpeg_bytes(image, quality=60, progressive=True),
        "gray": jpeg_bytes(picture(mode="L"), quality=80),
        "cmyk": jpeg_bytes(picture(mode="CMYK"), quality=80),
        "444": jpeg_bytes(image, quality=90, subsampling=0),
        "422": jpeg_bytes(image, quality=90, subsampling=1),
        "exif-orientation-6": jpeg_bytes(image, quality=70, exif=exif),
        "icc": jpeg_bytes(image, quality=70, icc_profile=srgb),
        **special_jpegs(directory),
    }
    seeds["truncated"] = seeds["baseline"][: len(seeds["baseline"]) * 2 // 3]
    seeds["padded-before-eoi"] = seeds["baseline"][:-2] + b"\0" * 6 + b"\xff\xd9"
    return seeds


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width, height, color_type, depth, rows, interlaced=False, extra=b""):
    """A PNG from unfiltered rows (lists of sample values), Adam7 when asked."""
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color_type]

    def pack(samples):
        if depth == 16:
            return b"".join(struct.pack(">H", s) for s in samples)
        if depth == 8:
            return bytes(samples)
        out, bits, filled = [], 0, 0
        for sample in samples:
            bits = (bits << depth) | sample
            filled += depth
            if filled == 8:
                out.append(bits)
                bits, filled = 0, 0
        if filled:
            out.append(bits << (8 - filled))
        return bytes(out)

    def image_data(pixels_rows):
        return b"".join(b"\0" + pack([s for pixel in row for s in pixel]) for row in pixels_rows)

    grid = [[rows(x, y) for x in range(width)] for y in range(height)]
    if interlaced:
        passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
        raw = b""
        for x0, y0, dx, dy in passes:
            sub = [[grid[y][x] for x in range(x0, width, dx)] for y in range(y0, height, dy)]
            if sub and sub[0]:
                raw += image_data(sub)
    else:
        raw = image_data(grid)
    header = struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0, 1 if interlaced else 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + extra + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def pngs():
    w, h = 13, 9
    palette = chunk(b"PLTE", bytes(range(48)))
    return {
        "gray1": png(w, h, 0, 1, lambda x, y: ((x + y) % 2,)),
        "gray4": png(w, h, 0, 4, lambda x, y: ((x * y) % 16,)),
        "gray16": png(w, h, 0, 16, lambda x, y: (x * 4000 + y,)),
        "gray-alpha": png(w, h, 4, 8, lambda x, y: (x * 9, y * 20)),
        "rgb8": png(w, h, 2, 8, lambda x, y: (x * 19, y * 27, 99)),
        "rgb16": png(w, h, 2, 16, lambda x, y: (x * 5000, y * 7000, 1234)),
        "rgba8": png(w, h, 6, 8, lambda x, y: (x * 19, y * 27, 99, (x * y) % 256)),
        "palette": png(w, h, 3, 4, lambda x, y: ((x + y) % 16,), extra=palette),
        "palette-trns": png(w, h, 3, 4, lambda x, y: ((x + y) % 16,), extra=palette + chunk(b"tRNS", bytes([0, 128, 255]))),
        "rgb-trns": png(w, h, 2, 8, lambda x, y: (x, y, 0), extra=chunk(b"tRNS", struct.pack(">HHH", 1, 1, 0))),
        "adam7-rgb": png(w, h, 2, 8, lambda x, y: (x * 19, y * 27, 99), interlaced=True),
        "adam7-gray16": png(w, h, 0, 16, lambda x, y: (x * 4000 + y,), interlaced=True),
        "exif": png(w, h, 2, 8, lambda x, y: (x, y, 9), extra=chunk(b"eXIf", tiff_orientation(8, little=False))),
        "iccp": png(w, h, 2, 8, lambda x, y: (x, y, 9), extra=chunk(b"iCCP", b"icc\0\0" + zlib.compress(
            ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()))),
    }


def bombs(directory):
    """Files that ask for far more memory or CPU than their size: what the shim's limits stop
    (HostileInputBoundsTests has the full-size versions). Kept small; the fuzzer grows them."""
    text = zlib.compress(b"A" * 1_000_000, 9)
    rgb = lambda x, y: (x * 40, y * 60, 7)
    icc = bytearray(8 << 20)
    icc[0:4] = struct.pack(">I", len(icc))
    icc[12:24] = b"mntrRGB XYZ "
    icc[36:40] = b"acsp"
    special_jpegs(directory)  # builds the libjpeg writer
    binary = os.path.join(directory, "write")

    def written(*arguments):
        path = os.path.join(directory, "bomb.jpg")
        subprocess.run([binary, path, *arguments], check=True)
        with open(path, "rb") as file:
            return file.read()

    base = written("0", "0", "0")

    def markers(code, count, payload):
        return base[:2] + b"".join(b"\xff" + bytes([code]) + struct.pack(">H", len(payload(i)) + 2) + payload(i) for i in range(count)) + base[2:]

    scans = written("0", "0", "0", "3")
    png_bombs = {
        "bomb-ztxt": png(2, 2, 2, 8, rgb, extra=b"".join(chunk(b"zTXt", b"k%d\0\0" % i + text) for i in range(20))),
        "bomb-itxt": png(2, 2, 2, 8, rgb, extra=b"".join(chunk(b"iTXt", b"k%d\0\1\0\0\0" % i + text) for i in range(20))),
        "bomb-text": png(2, 2, 2, 8, rgb, extra=b"".join(chunk(b"tEXt", b"k%d\0" % i + b"A" * 16000) for i in range(4))),
        "bomb-splt": png(2, 2, 2, 8, rgb, extra=chunk(b"sPLT", b"p\0\x08" + b"\x07" * 60000)),
        "bomb-private": png(2, 2, 2, 8, rgb, extra=b"".join(chunk(b"prVt", b"\x09" * 4000) for _ in range(10))),
        "bomb-iccp": png(2, 2, 2, 8, rgb, extra=chunk(b"iCCP", b"icc\0\0" + zlib.compress(bytes(icc), 9))),
        "bomb-chunks": png(2, 2, 2, 8, rgb, extra=chunk(b"prVt", b"") * 1000),
    }
    jpeg_bombs = {
        "bomb-app2": markers(0xE2, 1000, lambda i: b"ICC_PROFILE\0" + bytes([i % 255 + 1, 255]) + b"\x03" * 100),
        "bomb-com": markers(0xFE, 1000, lambda i: b"C" * 100),
        "bomb-app1": markers(0xE1, 1000, lambda i: b"Exif\0\0" + b"\0" * 100),
        "bomb-scans": scans,
    }
    return jpeg_bombs, png_bombs


def cache_files(directory):
    """Entry files and journals made by the engine's own cache."""
    cache = os.path.join(directory, "cache")
    source = os.path.join(directory, "bytes")
    with open(source, "wb") as file:
        file.write(b"product photo bytes " * 9)
    for key in ["https://cdn.example.com/products/1.jpg", "k", "ключ"]:
        subprocess.run([ENGINE, "cache", "--dir", cache, "put", key, source], check=True)
    subprocess.run([ENGINE, "cache", "--dir", cache, "get", "k", "--output", os.path.join(directory, "out")], check=True)
    entries = {}
    for index, name in enumerate(sorted(os.listdir(os.path.join(cache, "entries")))):
        with open(os.path.join(cache, "entries", name), "rb") as file:
            entries[f"entry-{index}"] = file.read()
    with open(os.path.join(cache, "journal"), "rb") as file:
        journal = file.read()
    name = "a" * 64
    journals = {
        "journal": journal,
        "journal-appended": journal + f"READ {name}\nDIRTY {name}\nCLEAN {name} 12\nREMOVE {name}\nLIMIT 100\n".encode(),
        "journal-torn": journal + b"CLEAN " + name.encode()[:20],
        "journal-empty": b"image-engine-disk-cache 1\n",
    }
    return entries, journals


def riff(tag, payload):
    return tag + struct.pack("<I", len(payload)) + payload + (b"\0" if len(payload) % 2 else b"")


def webp_container(chunks):
    return b"RIFF" + struct.pack("<I", 4 + len(chunks)) + b"WEBP" + chunks


def vp8x(flags, width, height):
    return riff(b"VP8X", bytes([flags, 0, 0, 0]) + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little"))


def anmf(x, y, width, height, image):
    header = (x // 2).to_bytes(3, "little") + (y // 2).to_bytes(3, "little") + (width - 1).to_bytes(3, "little")
    return riff(b"ANMF", header + (height - 1).to_bytes(3, "little") + (100).to_bytes(3, "little") + b"\0" + image)


def webps():
    """Lossy, lossless, alpha, ICC and EXIF files from Pillow's libwebp, and containers built by
    hand: an animation whose first frame covers part of its canvas, a 16384² canvas around a
    2×2 frame, a chunk that runs past the end."""
    def save(image, **options):
        out = io.BytesIO()
        image.save(out, "WEBP", **options)
        return out.getvalue()
    rgb, rgba = picture(), picture(mode="RGBA")
    rgba.putalpha(Image.linear_gradient("L").resize(rgba.size))
    profile = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    seeds = {
        "lossy": save(rgb, quality=80),
        "lossy-alpha": save(rgba, quality=80),
        "lossless": save(rgba, lossless=True),
        "icc": save(rgb, quality=80, icc_profile=profile),
        "exif": save(rgb, quality=80, exif=b"Exif\0\0" + tiff_orientation(6)),
    }
    small = save(picture(size=(2, 2)), quality=80)[12:]
    seeds["animation-partial"] = webp_container(vp8x(0x12, 8, 6) + riff(b"ANIM", bytes(6)) + anmf(2, 2, 2, 2, small))
    seeds["canvas-16384"] = webp_container(vp8x(0x02, 16384, 16384) + riff(b"ANIM", bytes(6)) + anmf(0, 0, 2, 2, small))
    runaway = bytearray(webp_container(riff(b"ICCP", b"abcd") + small))
    runaway[16:20] = struct.pack("<I", 1 << 30)
    seeds["runaway-chunk"] = bytes(runaway)
    return seeds


def write_webps():
    seeds = webps()
    write("webp-header", seeds)
    write("webp-decode", {f"{name}-{s}": bytes([s]) + data for name, data in seeds.items() for s in (0, 3, 6, 9, 16)})


def heifs():
    """The small HEIC and AVIF test fixtures (Tests/Fixtures/heif, made with heif-enc), the AVIFs
    with irot, imir and clap (libavif leaves those to the engine), one with its ispe claiming
    65535×65535, and one cut short."""
    fixtures = os.path.join(HERE, "..", "Tests", "Fixtures", "heif")
    seeds = {}
    for name in ("small.heic", "small-irot-1-imir-0.heic", "small-irot-3.heic", "small-imir-1.heic", "calla-alpha.avif",
                 "calla-alpha.heic", "kite.avif", "small-exif.heic", "small.avif", "small-clap-irot-1.avif",
                 "small-irot-3-imir-0.avif", "kite-10bit.avif"):
        with open(os.path.join(fixtures, name), "rb") as file:
            seeds[name.replace(".", "-")] = file.read()
    data = bytearray(seeds["small-heic"])
    at = data.find(b"ispe")
    data[at + 8:at + 16] = struct.pack(">II", 65535, 65535)
    seeds["ispe-65535"] = bytes(data)
    seeds["truncated"] = seeds["small-heic"][: len(seeds["small-heic"]) // 2]
    return seeds


def write_heifs():
    seeds = heifs()
    write("heif-header", seeds)
    write("heif-decode", {f"{name}-{s}": bytes([s]) + data for name, data in seeds.items() for s in (0, 3, 6, 9, 16)})


def write(target, seeds, replace=True):
    directory = os.path.join(CORPUS, target)
    if replace:
        shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(directory, name), "wb") as file:
            file.write(data)


def write_bombs(jpeg_bombs, png_bombs, replace):
    write("jpeg-header", jpeg_bombs, replace)
    write("png-header", png_bombs, replace)
    write("jpeg-decode", {f"{name}-2": b"\x02" + data for name, data in jpeg_bombs.items()}, replace)
    write("png-decode", {f"{name}-2": b"\x02" + data for name, data in png_bombs.items()}, replace)


def main():
    if sys.argv[1:] == ["--heif"]:
        write_heifs()
        return
    if sys.argv[1:] == ["--webp"]:
        write_webps()
        return
    if sys.argv[1:] == ["--bombs"]:
        # Only the bomb seeds, added to the committed corpora as they are.
        with tempfile.TemporaryDirectory() as scratch:
            write_bombs(*bombs(scratch), replace=False)
        return
    with tempfile.TemporaryDirectory() as scratch:
        jpeg_seeds = jpegs(scratch)
        png_seeds = pngs()
        entries, journals = cache_files(scratch)
        jpeg_bombs, png_bombs = bombs(scratch)
    selectors = [0, 1, 3, 6, 9, 16]  # the decode targets' first byte picks the options
    write("jpeg-header", jpeg_seeds)
    write("png-header", png_seeds)
    write("jpeg-decode", {f"{name}-{s}": bytes([s]) + data for name, data in jpeg_seeds.items() for s in selectors[:2]}
          | {f"baseline-{s}": bytes([s]) + jpeg_seeds["baseline"] for s in selectors})
    write("png-decode", {f"{name}-{s}": bytes([s]) + data for name, data in png_seeds.items() for s in selectors[:2]}
          | {f"adam7-rgb-{s}": bytes([s]) + png_seeds["adam7-rgb"] for s in selectors})
    write("encode-roundtrip", {f"{name}": bytes([85]) + data for name, data in list(jpeg_seeds.items()) + list(png_seeds.items())})
    write("exif-orientation", {f"tiff-{v}-{'le' if le else 'be'}": tiff_orientation(v, le) for v in (1, 3, 6, 8) for le in (True, False)}
          | {"app1-6": b"Exif\0\0" + tiff_orientation(6), "copyright-le": tiff_copyright(), "copyright-be": tiff_copyright(False)})
    write_bombs(jpeg_bombs, png_bombs, replace=False)
    write("disk-cache-entry", entries)
    write("journal-replay", journals)
    write_webps()
    write_heifs()


if __name__ == "__main__":
    main()
