#!/usr/bin/python3
"""Bytes needed for the same luma SSIM with different JPEG luma quantization tables.

How JPEGQuantization.ssimTuned was chosen: the family base·(1 + b·r)^p, r = √(u² + v²),
was compared with Annex K on the wallpapers (training) and then checked on the camera photos
(held out). Each image is brought to 1280 px (Lanczos) and encoded in grayscale, so only the
luma table is measured; the curve of total bytes against mean SSIM over qualities 20-97 is
interpolated (log bytes) at the listed SSIM levels. Negative percentages: fewer bytes than
Annex K for the same SSIM. SSIM is scikit-image's with the Gaussian window (σ 1.5), as in
the engine.

Usage: /usr/bin/python3 Benchmarks/scripts/quantization_tables.py SampleImages/Dragonfly.jpg ...
Needs Pillow and scikit-image (Debian: python3-pil python3-skimage).
"""
import io
import sys

import numpy as np
from PIL import Image
from skimage.metrics import structural_similarity

ANNEX_K = np.array([
    16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55,
    14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62,
    18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
    49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99], float).reshape(8, 8)
U, V = np.meshgrid(range(8), range(8))
RADIUS = np.sqrt(U ** 2 + V ** 2)
LEVELS = [0.90, 0.92, 0.94, 0.96]


def family(b, p, base=13.5):
    return np.round(base * (1 + b * RADIUS) ** p)


def scaled(table, quality):
    """libjpeg's quality scaling (jpeg_quality_scaling + jpeg_add_quant_table, baseline)."""
    scale = 5000 / quality if quality < 50 else 200 - 2 * quality
    return np.clip(np.floor((table * scale + 50) / 100), 1, 255).astype(int)


def curve(images, table):
    points = []
    for quality in range(20, 98, 6):
        total, scores = 0, []
        for pixels in images:
            buffer = io.BytesIO()
            Image.fromarray(pixels).save(buffer, "JPEG", qtables=[scaled(table, quality).flatten().tolist()],
                                         progressive=True, optimize=True)
            decoded = np.asarray(Image.open(io.BytesIO(buffer.getvalue())))
            scores.append(structural_similarity(pixels, decoded, gaussian_weights=True, sigma=1.5,
                                                use_sample_covariance=False, data_range=255))
            total += len(buffer.getvalue())
        points.append((float(np.mean(scores)), total))
    return sorted(points)


def bytes_at(points, level):
    scores = [p[0] for p in points]
    if not scores[0] <= level <= scores[-1]:
        return None  # outside the measured range: no extrapolation
    return float(np.exp(np.interp(level, scores, [np.log(p[1]) for p in points])))


def main():
    images = []
    for path in sys.argv[1:]:
        image = Image.open(path).convert("L")
        image.thumbnail((1280, 1280), Image.LANCZOS)
        images.append(np.asarray(image))
    reference = curve(images, ANNEX_K)
    print("SSIM level       " + "  ".join(f"{level:>6.2f}" for level in LEVELS))
    print("Annex K (bytes)  " + "  ".join(f"{(bytes_at(reference, level) or 0) / 1000:>5.0f}K" for level in LEVELS))
    candidates = {f"b={b} p={p}": family(b, p) for b in (0.1, 0.2, 0.35) for p in (0.8, 1.2)}
    for name, table in candidates.items():
        points = curve(images, table)
        cells = []
        for level in LEVELS:
            ours, theirs = bytes_at(points, level), bytes_at(reference, level)
            cells.append(f"{(ours / theirs - 1) * 100:>+5.1f}%" if ours and theirs else "     -")
        marker = "  <- ssimTuned" if name == "b=0.2 p=1.2" else ""
        print(f"{name:<16} " + "  ".join(cells) + marker, flush=True)


if __name__ == "__main__":
    main()
