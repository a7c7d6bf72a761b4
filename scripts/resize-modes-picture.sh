#!/usr/bin/env bash
# The picture of the four resize modes (ImageCodec's Sizes and gravity article): one 480×300 photo into a 400×400 box with
# `image-engine thumbnail --size 400x400 --mode M`, each output drawn at its own size on a grey
# 400×400 cell (the box) with its mode and size, 2×2, into Sources/ImageCodec/Documentation.docc/Resources/resize-modes.png.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-dependencies.sh" --benchmarks
swift build -c release --product image-engine --package-path "$root" >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source="$root/Tests/Fixtures/small-photos/kite.jpg"
for mode in fit fill fill-down force; do
    "$root/.build/release/image-engine" thumbnail "$source" --output "$work/$mode" --size 400x400 --mode "$mode" --format png >/dev/null
done
/usr/bin/python3 - "$work" "$root/Sources/ImageCodec/Documentation.docc/Resources/resize-modes.png" <<'PY'
import sys
from PIL import Image, ImageDraw, ImageFont
work, output = sys.argv[1:3]
cell, margin, label = 400, 16, 28
try:
    font = ImageFont.truetype("DejaVuSans.ttf", 18)
except OSError:
    font = ImageFont.load_default()
canvas = Image.new("RGB", (2 * cell + 3 * margin, 2 * (cell + label) + 3 * margin), "white")
draw = ImageDraw.Draw(canvas)
for index, mode in enumerate(["fit", "fill", "fill-down", "force"]):
    image = Image.open(f"{work}/{mode}/kite.png").convert("RGB")
    x = margin + (index % 2) * (cell + margin)
    y = margin + (index // 2) * (cell + label + margin)
    draw.text((x, y), f"--mode {mode}: {image.width}×{image.height}", fill="black", font=font)
    box = (x, y + label)
    draw.rectangle([box[0], box[1], box[0] + cell - 1, box[1] + cell - 1], fill=(200, 200, 200))
    canvas.paste(image, (box[0] + (cell - image.width) // 2, box[1] + (cell - image.height) // 2))
canvas.save(output, optimize=True)
PY
echo "Sources/ImageCodec/Documentation.docc/Resources/resize-modes.png" >&2
