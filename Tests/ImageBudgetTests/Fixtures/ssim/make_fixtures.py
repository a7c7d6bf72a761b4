"""Reference SSIM values for SSIMTests, computed with scikit-image.

Makes small reference/distorted PNG pairs from SampleImages and records
skimage.metrics.structural_similarity on their luma (Y = 0.299 R + 0.587 G + 0.114 B) with the
settings of Wang et al. 2004: Gaussian window sigma 1.5, population covariance, data range 255.
Run from this directory with Debian's python3-skimage and python3-pil:
    /usr/bin/python3 make_fixtures.py
"""
import json
import os

import numpy as np
from PIL import Image, ImageFilter
from skimage.metrics import structural_similarity

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "SampleImages")


def luma(path):
    rgb = np.asarray(Image.open(path).convert("RGB"), dtype=np.float64)
    return rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114


def save_jpeg_roundtrip(image, quality, path):
    image.save("tmp.jpg", quality=quality)
    Image.open("tmp.jpg").convert("RGB").save(path)
    os.remove("tmp.jpg")


pairs = []
for source, size in [("Kite.jpg", (256, 160)), ("Path.jpg", (256, 160)), ("Grey.jpg", (200, 125))]:
    stem = os.path.splitext(source)[0].lower()
    reference = Image.open(os.path.join(SAMPLES, source)).convert("RGB").resize(size, Image.LANCZOS)
    reference.save(f"{stem}-reference.png")
    # Two strengths of each distortion, so "more distortion scores lower" can be checked.
    save_jpeg_roundtrip(reference, 50, f"{stem}-jpeg50.png")
    save_jpeg_roundtrip(reference, 15, f"{stem}-jpeg15.png")
    reference.filter(ImageFilter.GaussianBlur(0.6)).save(f"{stem}-blur06.png")
    reference.filter(ImageFilter.GaussianBlur(1.2)).save(f"{stem}-blur.png")
    for sigma, name in [(4, "noise4"), (12, "noise")]:
        noise = np.random.default_rng(7).normal(0, sigma, (size[1], size[0], 3))
        noisy = np.clip(np.asarray(reference, dtype=np.float64) + noise, 0, 255).round().astype(np.uint8)
        Image.fromarray(noisy).save(f"{stem}-{name}.png")
    # No reference-against-itself pair: that is 1 by construction and checks nothing.
    for distortion in ["jpeg50", "jpeg15", "blur06", "blur", "noise4", "noise"]:
        value = structural_similarity(luma(f"{stem}-reference.png"), luma(f"{stem}-{distortion}.png"), data_range=255,
                                      gaussian_weights=True, sigma=1.5, use_sample_covariance=False)
        pairs.append({"reference": f"{stem}-reference.png", "distorted": f"{stem}-{distortion}.png", "ssim": value})

with open("expected.json", "w") as file:
    json.dump(pairs, file, indent=2)
print(json.dumps(pairs, indent=2))
