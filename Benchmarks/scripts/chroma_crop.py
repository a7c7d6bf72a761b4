#!/usr/bin/env python3
"""The README's chroma crop pair: one busy photo at 1280 px encoded 4:2:0 and 4:4:4 at the same
bytes (4:4:4's quality lowered until it is no larger), a crop of each side by side at 2x.

    chroma_crop.py SOURCE OUT.png [QUALITY_420] [CROP_X CROP_Y]
Pillow's JPEG encoder (libjpeg-turbo, as the engine's) with optimised Huffman tables and
progressive scans, as the allocator encodes; scores with the PyPI ssimulacra2 package.
"""
import io
import os
import sys
import tempfile

import ssimulacra2
from PIL import Image, ImageDraw

source = Image.open(sys.argv[1]).convert("RGB")
source.thumbnail((1280, 1280), Image.LANCZOS)
quality = int(sys.argv[3]) if len(sys.argv) > 3 else 60
x, y = (int(sys.argv[4]), int(sys.argv[5])) if len(sys.argv) > 5 else (source.width // 3, source.height // 3)


def encode(q, subsampling):
    buffer = io.BytesIO()
    source.save(buffer, "JPEG", quality=q, subsampling=subsampling, optimize=True, progressive=True)
    return buffer.getvalue()


subsampled = encode(quality, 2)
full_quality = max(q for q in range(1, quality + 1) if len(encode(q, 0)) <= len(subsampled))
full = encode(full_quality, 0)
scratch = tempfile.mkdtemp()
source.save(os.path.join(scratch, "reference.png"))
labels = []
for name, data, q in (("4:2:0", subsampled, quality), ("4:4:4", full, full_quality)):
    path = os.path.join(scratch, name.replace(":", "") + ".png")
    Image.open(io.BytesIO(data)).save(path)
    score = ssimulacra2.compute_ssimulacra2(os.path.join(scratch, "reference.png"), path)
    labels.append(f"{name} q{q}, {len(data)} bytes, SSIMULACRA2 {score:.1f}")
    print(labels[-1])

width, height = 300, 200
sheet = Image.new("RGB", (4 * width + 10, 2 * height + 30), "white")
draw = ImageDraw.Draw(sheet)
for index, data in enumerate((subsampled, full)):
    crop = Image.open(io.BytesIO(data)).crop((x, y, x + width, y + height)).resize((2 * width, 2 * height), Image.NEAREST)
    sheet.paste(crop, (index * (2 * width + 10), 30))
    draw.text((index * (2 * width + 10) + 4, 8), labels[index], fill="black")
sheet.save(sys.argv[2])
