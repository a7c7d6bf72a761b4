#!/usr/bin/env python3
"""serve's `mb:` (max_bytes) against imgproxy's quality loop, at the same caps on the same
pixels, scored by the PyPI `ssimulacra2` package against the lossless render.

For each photo and longest side, `serve` renders the reference (`f:png`) and the q80 JPEG; the
caps are fractions of that JPEG's size. At each cap:
- engine: `q:80/mb:CAP`, the upload budget's search (qualities, then sizes down to half);
- imgproxy loop, libjpeg-turbo: imgproxy's `saveImageToFitBytes` (from q80, ×0.25, ×0.5 or
  ×0.75 by how far over, until it fits or reaches q10, then answers over the cap) with
  `vips jpegsave --optimize-coding --strip` of the reference, as imgproxy saves;
- imgproxy loop, engine encoder: the same loop over `serve`'s own `q:` renders, which isolates
  the search from the encoder.
An answer smaller than the reference (the search may step the size down) is scored after a
Lanczos resize back to the reference's size, as a browser would show it.

Usage: byte-cap.sh (makes the venv) or byte_cap.py ENGINE PHOTO..."""
import os
import statistics
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

import ssimulacra2
from PIL import Image

import loopback_serve

SIDES = [512, 1080]
FRACTIONS = [0.6, 0.4, 0.25]


def imgproxy_loop(encode, cap, quality=80):
    """imgproxy's saveImageToFitBytes over `encode(quality) -> bytes`: (bytes, quality)."""
    while True:
        data = encode(quality)
        if len(data) <= cap or quality <= 10:
            return data, quality
        delta = len(data) / cap
        scale = 0.25 if delta > 3 else 0.5 if delta > 1.5 else 0.75
        quality = max(1, min(quality - 1, round(quality * scale)))


def score(reference, data, work):
    path = os.path.join(work, "candidate.png")
    image = Image.open(__import__("io").BytesIO(data)).convert("RGB")
    size = Image.open(reference).size
    if image.size != size:
        image = image.resize(size, Image.LANCZOS)
    image.save(path)
    return float(ssimulacra2.compute_ssimulacra2(reference, path))


def main():
    engine, photos = sys.argv[1], sys.argv[2:]
    work = tempfile.mkdtemp()

    with loopback_serve.serving(engine, work, ["--unsafe"], port_base=19000) as (origin_port, port):

        def get(options, name):
            source = urllib.parse.quote(f"http://127.0.0.1:{origin_port}/{name}", safe="")
            try:
                return urllib.request.urlopen(f"http://127.0.0.1:{port}/unsafe/{options}/plain/{source}", timeout=120).read()
            except urllib.error.HTTPError as error:
                return error.code

        rows, gains = [], {"turbo": [], "engine": []}
        over = {"engine": 0, "turbo": 0, "loop": 0}
        print("| photo | side | cap | engine bytes | engine S2 | loop (libjpeg-turbo) bytes, q | S2 | loop (engine encoder) bytes, q | S2 |")
        print("|---|---|---|---|---|---|---|---|---|")
        for photo in photos:
            name = os.path.basename(photo)
            subprocess.run(["cp", photo, os.path.join(work, name)], check=True)
            for side in SIDES:
                reference = os.path.join(work, "reference.png")
                with open(reference, "wb") as file:
                    file.write(get(f"rs:fit:{side}:{side}/f:png", name))
                start = get(f"rs:fit:{side}:{side}/q:80/f:jpg", name)
                for fraction in FRACTIONS:
                    cap = int(len(start) * fraction)
                    ours = get(f"rs:fit:{side}:{side}/q:80/mb:{cap}/f:jpg", name)
                    if isinstance(ours, int):
                        print(f"| {name} | {side} | {cap} | {ours} | | | | | |")
                        continue

                    def turbo(quality):
                        out = os.path.join(work, "turbo.jpg")
                        subprocess.run(["vips", "jpegsave", reference, out, "--Q", str(quality), "--optimize-coding", "--strip"],
                                       check=True, capture_output=True)
                        return open(out, "rb").read()

                    turbo_data, turbo_q = imgproxy_loop(turbo, cap)
                    loop_data, loop_q = imgproxy_loop(lambda q: get(f"rs:fit:{side}:{side}/q:{q}/f:jpg", name), cap)
                    s_ours, s_turbo, s_loop = (score(reference, d, work) for d in (ours, turbo_data, loop_data))
                    over["engine"] += len(ours) > cap
                    over["turbo"] += len(turbo_data) > cap
                    over["loop"] += len(loop_data) > cap
                    gains["turbo"].append(s_ours - s_turbo)
                    gains["engine"].append(s_ours - s_loop)
                    print(f"| {name} | {side} | {cap} | {len(ours)} | {s_ours:.2f} | {len(turbo_data)}, q{turbo_q} | {s_turbo:.2f} "
                          f"| {len(loop_data)}, q{loop_q} | {s_loop:.2f} |", flush=True)
        for key, label in (("turbo", "imgproxy's loop with libjpeg-turbo"), ("engine", "imgproxy's loop with the engine's encoder")):
            values = gains[key]
            print(f"\nengine S2 minus {label}: median {statistics.median(values):+.2f}, min {min(values):+.2f}, "
                  f"max {max(values):+.2f}, engine at or above in {sum(v >= 0 for v in values)} of {len(values)}")
        print(f"over the cap: engine {over['engine']}, loop with libjpeg-turbo {over['turbo']}, loop with the engine's encoder {over['loop']}")


if __name__ == "__main__":
    main()
