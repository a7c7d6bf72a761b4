"""SSIM of the engine's thumbnails against vipsthumbnail's at many sizes: where the DCT-scale rule
(`TargetSize.jpegScaleNumerator`) and the reduced-scale IDCTs hold quality and where they lose it.

For every JPEG of the sample directories and every size, `image-engine thumbnail --format png`
and `vipsthumbnail ... .png` (lossless outputs, so only the resize is compared), each scored
with SSIM against a full decode resized with Lanczos (the reference of compare_vipsthumbnail.py;
for fill, the exact centre crop). Prints one row per (file, mode, size) whose engine − vips
difference is below --show, and the worst difference per size.

Usage: python3 Benchmarks/scripts/dct_scale_sweep.py --engine .build/release/image-engine
           --samples SampleImages [--samples DIR] [--fit 256,400,...] [--fill 256,400,...]
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_vipsthumbnail import ssim  # noqa: E402
from PIL import Image  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", required=True)
    parser.add_argument("--samples", required=True, action="append")
    parser.add_argument("--fit", default="256,400,512,640,800,1080,1280,1600")
    parser.add_argument("--fill", default="256,400,512,800")
    parser.add_argument("--show", type=float, default=-0.001, help="print rows whose difference is below this")
    args = parser.parse_args()
    files = sorted(path for directory in args.samples for path in glob.glob(os.path.join(directory, "*.jpg")))
    profiled = {f for f in files if Image.open(f).info.get("icc_profile")}
    runs = [("fit", int(s)) for s in args.fit.split(",") if s] + [("fill", int(s)) for s in args.fill.split(",") if s]
    worst = {}
    print("| file | mode | size | engine | vips | difference |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="dct-sweep-") as work:
        for mode, size in runs:
            ours, theirs = os.path.join(work, f"{mode}{size}-engine"), os.path.join(work, f"{mode}{size}-vips")
            os.makedirs(ours)
            os.makedirs(theirs)
            engine_size = ["--size", f"{size}x{size}", "--mode", "fill"] if mode == "fill" else ["--max-pixel-size", str(size)]
            subprocess.run([args.engine, "thumbnail", *files, "--output", ours, *engine_size, "--format", "png"],
                           check=True, stdout=subprocess.DEVNULL)
            vips_size = f"{size}x{size}" if mode == "fill" else f"{size}x{size}>"
            for source in files:
                extra = (["--smartcrop", "centre"] if mode == "fill" else []) + (["--export-profile", "srgb"] if source in profiled else [])
                subprocess.run(["vipsthumbnail", source, "-s", vips_size, *extra, "-o", os.path.join(theirs, "%s.png")], check=True)
                stem = os.path.splitext(os.path.basename(source))[0]
                a = ssim(source, os.path.join(ours, stem + ".png"), mode == "fill")
                b = ssim(source, os.path.join(theirs, stem + ".png"), mode == "fill")
                key = (mode, size)
                if key not in worst or a - b < worst[key][0]:
                    worst[key] = (a - b, os.path.basename(source))
                if a - b < args.show:
                    print(f"| {os.path.basename(source)} | {mode} | {size} | {a:.4f} | {b:.4f} | {a - b:+.4f} |", flush=True)
    print()
    print("| mode | size | worst engine − vips | file |")
    print("|---|---|---|---|")
    for (mode, size), (difference, name) in worst.items():
        print(f"| {mode} | {size} | {difference:+.4f} | {name} |")
    print(f"\nworst of all: {min(d for d, _ in worst.values()):+.4f}")


if __name__ == "__main__":
    main()
