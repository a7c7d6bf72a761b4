#!/usr/bin/env python3
"""Scores budget-report's outputs with scikit-image and the PyPI ssimulacra2 package,
independently of the engine.

The allocator maximises the engine's own SSIM, so scoring its results with that same code
would flatter it. Here everything is someone else's: Pillow decodes the source and the
output and resizes both with its Lanczos to a longest side of 1280 (display size),
scikit-image computes SSIM on luma (Gaussian window, sigma 1.5, as Wang et al. 2004), and
the PyPI `ssimulacra2` package (0.3.0) SSIMULACRA2 on the same two display-size images,
written as PNG for it.

    budget-report --outputs DIR SAMPLES && budget_ssim.py DIR
Needs Debian's python3-skimage and python3-pil (scripts/install-dependencies.sh --benchmarks)
and `ssimulacra2` from PyPI (budget.sh makes a virtualenv for it).
"""
import json
import os
import sys
import tempfile
from collections import defaultdict

import numpy as np
import ssimulacra2
from PIL import Image
from skimage.metrics import structural_similarity

DISPLAY = 1280


def luma(image):
    rgb = np.asarray(image.convert("RGB"), dtype=np.float64)
    return rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114


def display(path):
    image = Image.open(path)
    image.draft("RGB", image.size)  # no DCT shrinking: a full decode
    scale = DISPLAY / max(image.size)
    if scale < 1:
        image = image.resize((round(image.width * scale), round(image.height * scale)), Image.LANCZOS)
    return image


references = {}


def reference(path):
    if path not in references:
        references[path] = display(path)
    return references[path]


scratch = tempfile.mkdtemp()


def score(source, output):
    ref = reference(source)
    out = Image.open(output).convert("RGB").resize(ref.size, Image.LANCZOS)
    ssim = structural_similarity(luma(ref), luma(out), data_range=255, gaussian_weights=True, sigma=1.5,
                                 use_sample_covariance=False)
    paths = [os.path.join(scratch, name) for name in ("reference.png", "output.png")]
    ref.convert("RGB").save(paths[0])
    out.save(paths[1])
    return ssim, float(ssimulacra2.compute_ssimulacra2(*paths))


manifest = json.load(open(f"{sys.argv[1]}/manifest.json"))
rows = defaultdict(list)
for entry in manifest:
    scores = [score(s, o) for s, o in zip(entry["sources"], entry["outputs"])]
    luma_scores, colour = [s[0] for s in scores], [s[1] for s in scores]
    rows[entry["collection"]].append((entry["set"], entry["method"], min(luma_scores), sum(luma_scores) / len(scores),
                                      min(colour), sum(colour) / len(scores)))

print("SSIM by scikit-image and SSIMULACRA2 by the PyPI package, on Pillow's Lanczos at 1280 px "
      "(independent of the engine's metrics)\n")
for collection, entries in rows.items():
    print(f"### {collection}\n")
    print("| set | method | min SSIM | mean SSIM | min SSIMULACRA2 | mean SSIMULACRA2 |")
    print("|---|---|---|---|---|---|")
    for count, method, worst, mean, worst_colour, mean_colour in entries:
        print(f"| {count} | {method} | {worst:.4f} | {mean:.4f} | {worst_colour:.2f} | {mean_colour:.2f} |")
    print()
