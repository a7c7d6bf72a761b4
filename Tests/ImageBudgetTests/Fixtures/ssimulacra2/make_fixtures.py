"""Reference SSIMULACRA2 scores for SSIMULACRA2Tests, computed with the PyPI `ssimulacra2`
package (the scorer outside checks use).

Makes small reference/distorted pairs from SampleImages: JPEG at five qualities with 4:2:0
chroma and two with 4:4:4 (kept as .jpg, decoded by both sides with libjpeg-turbo), and, as
PNG, two blurs, a chroma-only blur (Cb and Cr blurred, Y kept) and a colour shift. Sizes differ
so that 6, 5 and 4 scales are all exercised (a side under 8 px ends the scales early). Run
from this directory in a virtualenv with `pip install ssimulacra2==0.3.0`:
    python make_fixtures.py
"""
import json
import os

import numpy as np
import ssimulacra2
from PIL import Image, ImageFilter

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "SampleImages")


def chroma_blur(image, radius):
    y, cb, cr = image.convert("YCbCr").split()
    blurred = [channel.filter(ImageFilter.GaussianBlur(radius)) for channel in (cb, cr)]
    return Image.merge("YCbCr", [y] + blurred).convert("RGB")


def colour_shift(image, shift):
    pixels = np.asarray(image, dtype=np.int16) + np.array(shift, dtype=np.int16)
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


pairs = []
photos = [("Kite.jpg", (256, 256)), ("ColorfulCups.jpg", (256, 160)), ("Path.jpg", (200, 136)), ("Grey.jpg", (160, 100))]
for source, size in photos:
    stem = os.path.splitext(source)[0].lower()
    original = Image.open(os.path.join(SAMPLES, source))
    gray = original.mode == "L"
    # A centre crop to the fixture's aspect ratio, then Lanczos to its size.
    width, height = original.size
    scale = min(width / size[0], height / size[1])
    box = ((width - size[0] * scale) / 2, (height - size[1] * scale) / 2,
           (width + size[0] * scale) / 2, (height + size[1] * scale) / 2)
    reference = original.convert("L" if gray else "RGB").resize(size, Image.LANCZOS, box=box)
    reference.save(f"{stem}-reference.png")
    distorted = []
    qualities = [20, 60] if gray else [10, 30, 50, 75, 90]
    for quality in qualities:
        name = f"{stem}-q{quality}-420.jpg"
        reference.save(name, quality=quality, subsampling=2)
        distorted.append(name)
    if not gray:
        for quality in (50, 75):
            name = f"{stem}-q{quality}-444.jpg"
            reference.save(name, quality=quality, subsampling=0)
            distorted.append(name)
        for radius, label in ((1.0, "blur1"), (2.5, "blur25")):
            reference.filter(ImageFilter.GaussianBlur(radius)).save(f"{stem}-{label}.png")
            distorted.append(f"{stem}-{label}.png")
        chroma_blur(reference, 3).save(f"{stem}-chroma-blur.png")
        colour_shift(reference, (10, 0, -10)).save(f"{stem}-shift.png")
        distorted += [f"{stem}-chroma-blur.png", f"{stem}-shift.png"]
    # No reference-against-itself pair: that is 100 by construction and checks nothing.
    for name in distorted:
        score = ssimulacra2.compute_ssimulacra2(f"{stem}-reference.png", name)
        pairs.append({"reference": f"{stem}-reference.png", "distorted": name, "ssimulacra2": round(float(score), 4)})

with open("expected.json", "w") as file:
    json.dump({"scorer": f"ssimulacra2 {ssimulacra2.__version__} (PyPI)", "pairs": pairs}, file, indent=2)
print(json.dumps(pairs, indent=2))
