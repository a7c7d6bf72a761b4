#!/usr/bin/env python3
"""The engine's smart crop (`thumbnail --mode fill --gravity smart`) against libvips' attention
crop on the same photos and boxes: the intersection over union of the two crop windows, in the
source's pixels.

vips: `vips thumbnail SOURCE T.v SIDE` (the photo at the scale the crop is made at; SIDE is the
box's larger side scaled to cover it), then `vips smartcrop T.v OUT.v W H --interesting attention`,
whose xoffset/yoffset give the window. The engine's window is read back from its thumbnail by
sliding it over the same scaled photo (a fill's crop moves along one axis only) and keeping the
position with the least mean difference, which needs no hook into the engine.

Usage: smartcrop.py ENGINE PHOTO... (boxes: 1:1, 4:5, 16:9 at 400 px)"""
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

BOXES = [(400, 400), (320, 400), (400, 225)]


def vips_window(photo, box, work):
    """(left, top, width, height) of vips' attention crop, in the scaled photo's pixels, and that photo."""
    scaled = os.path.join(work, "scaled.png")
    # Scale so the box covers the photo's shorter dimension, as a fill does.
    width, height = Image.open(photo).size
    scale = max(box[0] / width, box[1] / height)
    size = (max(box[0], round(width * scale)), max(box[1], round(height * scale)))
    subprocess.run(["vips", "thumbnail", photo, scaled, str(size[0]), "--height", str(size[1]), "--size", "force"],
                   check=True, capture_output=True)
    out = os.path.join(work, "crop.v")
    subprocess.run(["vips", "smartcrop", scaled, out, str(box[0]), str(box[1]), "--interesting", "attention"],
                   check=True, capture_output=True)
    left = -int(subprocess.run(["vipsheader", "-f", "xoffset", out], capture_output=True, text=True).stdout.strip() or 0)
    top = -int(subprocess.run(["vipsheader", "-f", "yoffset", out], capture_output=True, text=True).stdout.strip() or 0)
    return (left, top, box[0], box[1]), np.asarray(Image.open(scaled).convert("L"), dtype=np.float64)


def engine_window(engine, photo, box, scaled, work):
    """The engine's fill window, found by sliding its thumbnail over the scaled photo."""
    out = os.path.join(work, "engine")
    os.makedirs(out, exist_ok=True)
    subprocess.run([engine, "thumbnail", photo, "--size", f"{box[0]}x{box[1]}", "--mode", "fill", "--gravity", "smart",
                    "--format", "png", "--output", out], check=True, capture_output=True)
    name = os.path.splitext(os.path.basename(photo))[0] + ".png"
    thumb = np.asarray(Image.open(os.path.join(out, name)).convert("L"), dtype=np.float64)
    height, width = scaled.shape
    best, best_error = (0, 0), float("inf")
    for top in range(0, height - box[1] + 1):
        for left in range(0, width - box[0] + 1):
            if (height - box[1]) > 0 and left > 0 or (width - box[0]) > 0 and top > 0:
                continue
            error = np.mean(np.abs(scaled[top:top + box[1], left:left + box[0]][::8, ::8] - thumb[::8, ::8]))
            if error < best_error:
                best, best_error = (left, top), error
    return (best[0], best[1], box[0], box[1])


def iou(a, b):
    left, top = max(a[0], b[0]), max(a[1], b[1])
    right, bottom = min(a[0] + a[2], b[0] + b[2]), min(a[1] + a[3], b[1] + b[3])
    inter = max(0, right - left) * max(0, bottom - top)
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def main():
    engine, photos = sys.argv[1], sys.argv[2:]
    rows, centred = [], []
    with tempfile.TemporaryDirectory() as work:
        for photo in photos:
            for box in BOXES:
                window, scaled = vips_window(photo, box, work)
                mine = engine_window(engine, photo, box, scaled, work)
                height, width = scaled.shape
                centre = ((width - box[0]) // 2, (height - box[1]) // 2, box[0], box[1])
                rows.append((os.path.basename(photo), box, window, mine, iou(window, mine), iou(window, centre)))
    print("| photo | box | vips window (x, y) | engine window (x, y) | IoU engine/vips | IoU centre/vips |")
    print("|---|---|---|---|---|---|")
    for name, box, window, mine, value, centre in rows:
        print(f"| {name} | {box[0]}×{box[1]} | {window[0]}, {window[1]} | {mine[0]}, {mine[1]} | {value:.2f} | {centre:.2f} |")
    values = [row[4] for row in rows]
    off = [row for row in rows if row[5] < 0.9]
    print(f"\nIoU ≥ 0.6 with vips: {sum(v >= 0.6 for v in values)} of {len(values)}; where vips moved off the centre "
          f"(centre IoU < 0.9): {sum(row[4] >= 0.6 for row in off)} of {len(off)}; a centre crop: "
          f"{sum(row[5] >= 0.6 for row in off)} of {len(off)}")


if __name__ == "__main__":
    main()
