"""What thumbor's speed on the load benchmark's part A buys: quality of its steps against the engine's.

Part A of `serve-load.sh` fits JPEGs of 1600-3000 px (the sample JPEGs with a side of 3000 px
or more, each fitted to 1600, 1800, 2040, 2048, 2400, 2600 and 3000 at q90) into 512×512 at
q80. thumbor's PIL engine (`thumbor/engines/pil.py`, `resize`) calls `Image.draft(None, size)`
and then `resize(size, LANCZOS)`: draft lets libjpeg decode at the smallest DCT scale still at
least the target — 1/4 for 2048 → 512 (libjpeg-turbo's 2×2 reduced IDCT, an average of 4×4
pixels, and the resize has nothing left to do), 1/2 for 2040 — the rule the engine's
`--fast-shrink-on-load` follows. This script repeats thumbor's steps with Pillow (no HTTP, no
thumbor process), makes the engine's thumbnails of the same inputs in both modes, and scores
all three as `compare_vipsthumbnail.py` does: SSIM (luma, Gaussian σ 1.5) against a full decode
resized with Lanczos.

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
        inputs, engine, fast, thumbor = (os.path.join(work, name) for name in ("inputs", "engine", "fast", "thumbor"))
        os.makedirs(thumbor)
        sources = [os.path.join(inputs, name) for name in serve_load.make_inputs(args.engine, args.samples, inputs)]
        for output, extra in ((engine, []), (fast, ["--fast-shrink-on-load"])):
            subprocess.run([args.engine, "thumbnail", *sources, "--output", output, "--max-pixel-size", "512", "--quality", "80",
                            *extra], check=True, stdout=subprocess.DEVNULL)
        print(f"{len(sources)} JPEGs (the sample JPEGs with a side ≥ {max(serve_load.SOURCE_SIDES)} px, each fitted to "
              f"{', '.join(map(str, serve_load.SOURCE_SIDES))} px at q90) → fit 512×512, q80; SSIM against a full decode + Lanczos")
        print()
        print("| file | thumbor's draft decode | engine | engine --fast-shrink-on-load | thumbor's steps | engine − thumbor "
              "| fast − thumbor |")
        print("|---|---|---|---|---|---|---|")
        differences, fast_differences = [], []
        for source in sources:
            name = os.path.basename(source)
            with Image.open(source) as image:
                scale = 512 / max(image.size)
                size = (round(image.size[0] * scale), round(image.size[1] * scale))
                image.draft(None, size)
                drafted = image.size
                image.resize(size, Image.LANCZOS).save(os.path.join(thumbor, name), quality=80)
            ours = compare_vipsthumbnail.ssim(source, os.path.join(engine, name))
            quick = compare_vipsthumbnail.ssim(source, os.path.join(fast, name))
            theirs = compare_vipsthumbnail.ssim(source, os.path.join(thumbor, name))
            differences.append(ours - theirs)
            fast_differences.append(quick - theirs)
            print(f"| {name} | {drafted[0]}×{drafted[1]} | {ours:.4f} | {quick:.4f} | {theirs:.4f} | {ours - theirs:+.4f} "
                  f"| {quick - theirs:+.4f} |")
        print()
        for label, values in (("engine", differences), ("engine --fast-shrink-on-load", fast_differences)):
            print(f"{label} − thumbor's steps: mean {statistics.mean(values):+.4f}, worst {min(values):+.4f}, "
                  f"best {max(values):+.4f}; below thumbor − 0.001: {sum(value < -0.001 for value in values)} of {len(values)}")


if __name__ == "__main__":
    main()
