#!/usr/bin/env python3
"""Scores budget-report's outputs with scikit-image, independently of the engine.

The allocator maximises the engine's own SSIM, so scoring its results with that same code
would flatter it. Here everything is someone else's: Pillow decodes the source and the
output and resizes both with its Lanczos to a longest side of 1280 (display size),
scikit-image computes SSIM on luma (Gaussian window, sigma 1.5, as Wang et al. 2004).

    budget-report --outputs DIR SAMPLES && budget_ssim.py DIR
Needs Debian's python3-skimage and python3-pil (scripts/install-dependencies.sh --benchmarks).
"""
import json
import sys
from collections import defaultdict

import numpy as np
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


def score(source, output):
    ref = reference(source)
    out = Image.open(output).resize(ref.size, Image.LANCZOS)
    return structural_similarity(luma(ref), luma(out), data_range=255, gaussian_weights=True, sigma=1.5,
                                 use_sample_covariance=False)


manifest = json.load(open(f"{sys.argv[1]}/manifest.json"))
rows = defaultdict(list)
for entry in manifest:
    scores = [score(s, o) for s, o in zip(entry["sources"], entry["outputs"])]
    rows[entry["collection"]].append((entry["set"], entry["method"], min(scores), sum(scores) / len(scores)))

print("SSIM by scikit-image on Pillow's Lanczos at 1280 px (independent of the engine's metric)\n")
for collection, entries in rows.items():
    print(f"### {collection}\n")
    print("| set | method | min SSIM | mean SSIM |")
    print("|---|---|---|---|")
    for count, method, worst, mean in entries:
        print(f"| {count} | {method} | {worst:.4f} | {mean:.4f} |")
    print()
