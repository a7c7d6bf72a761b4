#!/usr/bin/env python3
"""URLs built by imgproxy's own Python URL builder (PyPI `imgproxy`, in a venv of its own)
against `image-engine serve`: each answer's status, size, type and bytes against what imgproxy's
documentation says for that URL, `t:` against libvips' `find_trim` on the same file, and the
metadata options (`kcr`, `sm`) by the EXIF fields libvips reads from each answer.

The builder writes `/SIGNATURE/ADVANCED.../g:G/rs:T:W:H:E/BASE64URL[.EXT]`, signed with the key
and salt: the options it puts first are the ones marketplaces add (`ex`, `bg`, `pd`, `t`, `c`,
`mw`, `z`, `mb`...).

Usage: imgproxy_builder.py ENGINE PHOTO... (JPEG photos; each also gets a framed PNG copy and a
copy whose EXIF turns it and names an artist, a copyright and a place)"""
import base64
import json
import os
import struct
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
import venv

import loopback_serve

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(HERE, "..", ".venv-imgproxy")
KEY, SALT = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881", "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"


def builder():
    """imgproxy's builder module, from its own venv."""
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        venv.create(VENV, with_pip=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "imgproxy==1.0.0"], check=True)
    site = subprocess.run([python, "-c", "import imgproxy, os; print(os.path.dirname(imgproxy.__file__))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    sys.path.insert(0, site)
    import imgproxy  # noqa: E402
    return imgproxy.ImgProxy


def size_of(data):
    """(width, height) from the bytes, by the engine's own reader-independent tool: vipsheader."""
    with tempfile.NamedTemporaryFile(suffix=".img") as file:
        file.write(data)
        file.flush()
        fields = [subprocess.run(["vipsheader", "-f", f, file.name], capture_output=True, text=True).stdout.strip()
                  for f in ("width", "height")]
    return tuple(int(v) for v in fields)


def with_exif(jpeg):
    """`jpeg` with an APP1 EXIF block after SOI: orientation 6, Artist, Copyright, and a GPS IFD."""
    artist, copyright = b"Ann Example\0", b"(c) Example Photo Ltd\0"
    values = 8 + 2 + 4 * 12 + 4
    gps = values + len(artist) + len(copyright)
    ifd = struct.pack("<H", 4) + struct.pack("<HHIHH", 0x0112, 3, 1, 6, 0)
    ifd += struct.pack("<HHII", 0x013B, 2, len(artist), values) + struct.pack("<HHII", 0x8298, 2, len(copyright), values + len(artist))
    ifd += struct.pack("<HHII", 0x8825, 4, 1, gps) + struct.pack("<I", 0)
    gps_ifd = struct.pack("<H", 1) + struct.pack("<HHI", 1, 2, 2) + b"N\0\0\0" + struct.pack("<I", 0)
    segment = b"Exif\0\0" + b"II" + struct.pack("<HI", 42, 8) + ifd + artist + copyright + gps_ifd
    return jpeg[:2] + b"\xff\xe1" + struct.pack(">H", len(segment) + 2) + segment + jpeg[2:]


def exif_fields(data):
    """The EXIF fields libvips (libexif) reads from `data`, as {name: value}."""
    with tempfile.NamedTemporaryFile(suffix=".img") as file:
        file.write(data)
        file.flush()
        lines = subprocess.run(["vipsheader", "-a", file.name], capture_output=True, text=True).stdout.splitlines()
    return {line.split(":")[0]: line.split(": ", 1)[1].split(" (")[0] for line in lines if line.startswith("exif-ifd")}


def metadata_verdict(expected, fields):
    """Whether the EXIF libvips found is what `kcr`/`sm` promise, and what it was."""
    # libexif fills in the tags EXIF makes mandatory when it loads a block that lacks them.
    filled = {"ColorSpace", "ExifVersion", "FlashpixVersion", "ResolutionUnit", "XResolution", "YResolution"}
    names = {name.split("-")[-1] for name in fields} - filled
    got = ", ".join(sorted(names)) or "no EXIF"
    if expected == "copyright only":
        return got, names == {"Artist", "Copyright"} and fields.get("exif-ifd0-Copyright") == "(c) Example Photo Ltd"
    if expected == "no EXIF":
        return got, not names
    return "GPS, orientation " + fields.get("exif-ifd0-Orientation", "none").split()[0], \
        fields.get("exif-ifd3-GPSLatitudeRef") == "N" and fields.get("exif-ifd0-Orientation", "").startswith("1")


def find_trim(path, threshold):
    """libvips' trim window (left, top, width, height), background from the top-left pixel as imgproxy takes it."""
    point = subprocess.run(["vips", "getpoint", path, "0", "0"], capture_output=True, text=True, check=True).stdout.split()
    out = subprocess.run(["vips", "find_trim", path, "--threshold", str(threshold), "--background", " ".join(point[:3])],
                         capture_output=True, text=True, check=True).stdout.split()
    return tuple(int(v) for v in out)


def fit(width, height, box_w, box_h):
    scale = min(box_w / width if box_w else float("inf"), box_h / height if box_h else float("inf"), 1)
    return round(width * scale), round(height * scale)


def cases(width, height):
    """(label, advanced options, builder keyword arguments, expected (width, height) or a check)."""
    fw, fh = fit(width, height, 300, 300)
    return [
        ("white tile", ["ex:1", "bg:ffffff"], dict(resizing_type="fit", width=300, height=300), (300, 300)),
        ("padded tile", ["ex:1", "pd:20", "bg:255:255:255"], dict(resizing_type="fit", width=260, height=260), (300, 300)),
        ("padding", ["pd:10:20"], dict(resizing_type="fit", width=300, height=300), (fw + 40, fh + 20)),
        ("aspect ratio", ["exar:1", "bg:ffffff"], dict(resizing_type="fit", width=300, height=300), (300, 300)),
        ("auto square", [], dict(resizing_type="auto", width=300, height=300), (300, 300)),
        ("smart crop", [], dict(resizing_type="fill", width=300, height=200, gravity="sm"), (300, 200)),
        ("crop half", ["c:0.5:0.5"], dict(resizing_type="fit", width=300, height=300), fit(round(width / 2), round(height / 2), 300, 300)),
        ("min width", ["mw:600"], dict(resizing_type="fit", width=300, height=300), (300, min(300, round(height * 600 / width)))),
        ("zoom", ["z:2"], dict(resizing_type="fit", width=150, height=150), fit(width, height, 300, 300)),
        ("rotate", ["rot:90"], dict(resizing_type="fit", width=300, height=300), (fh, fw)),
        ("filters", ["bl:2", "sh:1", "pix:4"], dict(resizing_type="fit", width=300, height=300), (fw, fh)),
        ("webp", ["q:50"], dict(resizing_type="fit", width=300, height=300, extension="webp"), (fw, fh)),
        ("byte cap", ["mb:8000"], dict(resizing_type="fit", width=600, height=600), "at most 8000 bytes"),
        ("skip", ["skp:jpg"], dict(resizing_type="fit", width=300, height=300), "the source's bytes"),
        ("file name", ["fn:product", "att:1"], dict(resizing_type="fit", width=300, height=300), "attachment; product.jpg"),
    ]


def main():
    engine, photos = sys.argv[1], sys.argv[2:]
    ImgProxy = builder()
    work = tempfile.mkdtemp()
    env = dict(os.environ, IMAGE_ENGINE_KEY=KEY, IMAGE_ENGINE_SALT=SALT)
    failures = 0
    with loopback_serve.serving(engine, work, env=env) as (origin_port, port):
        print("| photo | case | URL options | expected | got | |")
        print("|---|---|---|---|---|---|")
        for photo in photos:
            name = os.path.basename(photo)
            subprocess.run(["cp", photo, os.path.join(work, name)], check=True)
            width, height = size_of(open(photo, "rb").read())
            # The same photo framed by uneven white margins, for t:.
            framed = os.path.join(work, "framed-" + os.path.splitext(name)[0] + ".png")
            subprocess.run([engine, "thumbnail", photo, "--size", "800x800", "--padding", "40,100,20,60", "--background", "ffffff",
                            "--format", "png", "--output", work + "/framed"], check=True, capture_output=True)
            os.replace(os.path.join(work, "framed", os.path.splitext(name)[0] + ".png"), framed)
            rows = cases(width, height)
            left, top, tw, th = find_trim(framed, 10)
            rows.append(("trim vs vips find_trim", ["t:10"], dict(resizing_type="fit", source=os.path.basename(framed)), (tw, th)))
            # The same photo with EXIF that names an artist, a copyright and a place.
            exif = "exif-" + name
            with open(os.path.join(work, exif), "wb") as file:
                file.write(with_exif(open(photo, "rb").read()))
            for label, advanced, expected in [("copyright kept (default)", [], "copyright only"), ("kcr:0", ["kcr:0"], "no EXIF"),
                                              ("sm:0", ["sm:0"], "whole EXIF, upright")]:
                rows.append((label, advanced, dict(resizing_type="fit", width=300, height=300, source=exif), expected))
            for label, advanced, kwargs, expected in rows:
                source = kwargs.pop("source", name)
                url = ImgProxy(f"http://127.0.0.1:{origin_port}/{source}", key=KEY, salt=SALT, **kwargs)(*advanced)
                try:
                    reply = urllib.request.urlopen(f"http://127.0.0.1:{port}{url}", timeout=60)
                    status, body, headers = reply.status, reply.read(), reply.headers
                except urllib.error.HTTPError as error:
                    status, body, headers = error.code, error.read(), error.headers
                got, ok = f"{status}", False
                if status == 200:
                    if expected == "at most 8000 bytes":
                        got, ok = f"{len(body)} bytes", len(body) <= 8000
                    elif expected == "the source's bytes":
                        got, ok = f"{len(body)} bytes", body == open(photo, "rb").read()
                    elif expected in ("copyright only", "no EXIF", "whole EXIF, upright"):
                        got, ok = metadata_verdict(expected, exif_fields(body))
                    elif isinstance(expected, str):
                        got = headers.get("Content-Disposition", "")
                        ok = got.startswith("attachment") and "product.jpg" in got
                    else:
                        got = size_of(body)
                        ok = got == expected
                        if kwargs.get("extension") == "webp":
                            ok = ok and headers.get("Content-Type") == "image/webp"
                failures += not ok
                print(f"| {name} | {label} | `{'/'.join(advanced)}` | {expected} | {got} | {'ok' if ok else 'MISMATCH'} |")
    print(f"\n{failures} mismatches")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
