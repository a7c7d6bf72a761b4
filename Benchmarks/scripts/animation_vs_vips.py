#!/usr/bin/env python3
"""GIF to animated WebP: `image-engine thumbnail --format webp` against `vipsthumbnail
'FILE[n=-1]'` on the same 50-frame 480×270 GIFs, in one run.

Each GIF pans a 480×270 window across a photo made 960 px wide (crops moving right and down,
quantized to 256 colours by Pillow, 80 ms a frame, looping). Both tools make a 240 px animated
WebP of every frame; each is run RUNS times, alternating, and the median wall and peak RSS
(`/usr/bin/time`) are printed per photo, with the output bytes.

    python3 Benchmarks/scripts/animation_vs_vips.py [--runs 5] PHOTO...

Needs Pillow (`python3-pil`), libvips' `vipsthumbnail` and a release build of image-engine
(`swift build -c release --product image-engine`).
"""
import argparse
import os
import statistics
import subprocess
import tempfile

from PIL import Image

ENGINE = os.path.join(os.path.dirname(__file__), "..", "..", ".build", "release", "image-engine")


def make_gif(photo, path):
    image = Image.open(photo).convert("RGB")
    image = image.resize((960, round(image.height * 960 / image.width)), Image.LANCZOS)
    frames = []
    for index in range(50):
        x = round((960 - 480) * index / 49)
        y = round((image.height - 270) * (index % 10) / 9)
        frames.append(image.crop((x, y, x + 480, y + 270)).quantize(256))
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=80, loop=0)


def timed(command):
    result = subprocess.run(["/usr/bin/time", "-f", "%e %M"] + command, capture_output=True, text=True, check=True)
    wall, rss = result.stderr.strip().splitlines()[-1].split()
    return float(wall), int(rss) / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("photos", nargs="+")
    arguments = parser.parse_args()
    print("| photo | GIF | engine wall | vips wall | ratio | engine RSS | vips RSS | engine bytes | vips bytes |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for photo in arguments.photos:
            name = os.path.splitext(os.path.basename(photo))[0]
            gif = os.path.join(work, name + ".gif")
            make_gif(photo, gif)
            runs = {"engine": [], "vips": []}
            for _ in range(arguments.runs):
                out = os.path.join(work, "engine")
                runs["engine"].append(timed([ENGINE, "thumbnail", gif, "--output", out, "--size", "240x240", "--format", "webp"]))
                os.makedirs(os.path.join(work, "vips"), exist_ok=True)
                runs["vips"].append(timed(["vipsthumbnail", gif + "[n=-1]", "-s", "240", "-o", os.path.join(work, "vips", "%s.webp")]))
            engine = [statistics.median(values) for values in zip(*runs["engine"])]
            vips = [statistics.median(values) for values in zip(*runs["vips"])]
            sizes = [os.path.getsize(os.path.join(work, tool, name + ".webp")) for tool in ("engine", "vips")]
            print(f"| {name} | {os.path.getsize(gif) // 1024} KB | {engine[0]:.2f} s | {vips[0]:.2f} s | {engine[0] / vips[0]:.2f}× "
                  f"| {engine[1]:.0f} MB | {vips[1]:.0f} MB | {sizes[0]} | {sizes[1]} |")


if __name__ == "__main__":
    main()
