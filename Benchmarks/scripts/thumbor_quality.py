"""What thumbor's speed on the load benchmark's part A buys: quality of its steps against the engine's.

Part A of `serve-load.sh` fits ~2K px JPEGs (the sample JPEGs with a side of 2048 px or more,
fitted to 2048 at q90) into 512×512 at q80. thumbor's PIL engine (`thumbor/engines/pil.py`,
`resize`) calls `Image.draft(None, size)` and then `resize(size, LANCZOS)`: draft lets libjpeg
decode at the smallest DCT scale still at least the target, which for 2048 → 512 is 1/4 —
libjpeg-turbo's 2×2 reduced IDCT, an average of 4×4 pixels — and the resize then has nothing
left to do. This script repeats those steps with Pillow (no HTTP, no thumbor process) and makes
the engine's thumbnails of the same inputs, and scores both as `compare_vipsthumbnail.py`
does: SSIM (luma, Gaussian σ 1.5) against a full decode resized with Lanczos.

Usage: python3 Benchmarks/scripts/thumbor_quality.py --engine .build/release/image-engine
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_vipsthumbnail  # noqa: E402  (its SSIM and reference)
import serve_load  # noqa: E402  (part A's inputs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", required=True)
    parser.add_argument("--samples", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../SampleImages"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        inputs, engine, thumbor = (os.path.join(work, name) for name in ("inputs", "engine", "thumbor"))
        os.makedirs(thumbor)
        sources = [os.path.join(inputs, name) for name in serve_load.make_inputs(args.engine, args.samples, inputs)]
        subprocess.run([args.engine, "thumbnail", *sources, "--output", engine, "--max-pixel-size", "512", "--quality", "80"],
                       check=True, stdout=subprocess.DEVNULL)
        print(f"{len(sources)} JPEGs (the sample JPEGs with a side ≥ 2048 px, fitted to 2048 at q90) → fit 512×512, q80; "
              "SSIM against a full decode + Lanczos")
        print()
        print("| file | thumbor's draft decode | engine | thumbor's steps | engine − thumbor |")
        print("|---|---|---|---|---|")
        differences = []
        for source in sources:
            name = os.path.basename(source)
            with Image.open(source) as image:
                scale = 512 / max(image.size)
                size = (round(image.size[0] * scale), round(image.size[1] * scale))
                image.draft(None, size)
                drafted = image.size
                image.resize(size, Image.LANCZOS).save(os.path.join(thumbor, name), quality=80)
            ours = compare_vipsthumbnail.ssim(source, os.path.join(engine, name))
            theirs = compare_vipsthumbnail.ssim(source, os.path.join(thumbor, name))
            differences.append(ours - theirs)
            print(f"| {name} | {drafted[0]}×{drafted[1]} | {ours:.4f} | {theirs:.4f} | {ours - theirs:+.4f} |")
        print()
        print(f"engine − thumbor's steps: mean {statistics.mean(differences):+.4f}, "
              f"worst for the engine {min(differences):+.4f}, best {max(differences):+.4f}")


if __name__ == "__main__":
    main()
