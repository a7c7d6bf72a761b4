"""Compare `image-engine thumbnail` with `vipsthumbnail` on the same files in the same run.

Runs alternate (engine, vips, engine, vips, ...) so machine noise hits both alike; figures are
medians over the runs. Peak RSS comes from wait4() on each child. Quality is SSIM (Wang et al.
2004: Gaussian window sigma 1.5 on luma) of each output against a reference made by a full
decode (no DCT shrink) and a Lanczos resize to the output's own size.
"""
import argparse
import glob
import os
import shutil
import statistics
import subprocess
import tempfile
import time

import numpy as np
from PIL import Image
from skimage.metrics import structural_similarity


def run(command):
    """Wall seconds and peak RSS (MiB) of one command.

    RSS comes from GNU time rather than this process's wait4(): on Linux a child's maxrss
    includes the parent's RSS at fork time, which for Python with numpy loaded is ~80 MiB.
    """
    with tempfile.NamedTemporaryFile("r") as report:
        start = time.perf_counter()
        status = subprocess.call(["/usr/bin/time", "-f", "%M", "-o", report.name, *command],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        if status != 0:
            raise SystemExit(f"command failed: {' '.join(command)}")
        peak_kib = int(report.read().strip().splitlines()[-1])
    return wall, peak_kib / 1024


def luma(image):
    rgb = np.asarray(image.convert("RGB"), dtype=np.float64)
    return rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114


def ssim_against_reference(source, output):
    with Image.open(output) as out:
        size = out.size
        out_luma = luma(out)
    with Image.open(source) as src:
        src.draft(None, None)  # never let Pillow DCT-shrink the reference
        if src.mode in ("RGBA", "LA", "P"):
            src = src.convert("RGBA")
            background = Image.new("RGBA", src.size, (255, 255, 255, 255))
            src = Image.alpha_composite(background, src)
        reference = luma(src.convert("RGB").resize(size, Image.LANCZOS))
    return structural_similarity(reference, out_luma, data_range=255, gaussian_weights=True, sigma=1.5,
                                 use_sample_covariance=False)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", required=True)
    parser.add_argument("--samples", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--size", type=int, default=1080)
    parser.add_argument("--single", default="MilkyWay-q90.jpg", help="baseline JPEG for the single-file RSS figure")
    args = parser.parse_args()

    files = sorted(glob.glob(os.path.join(args.samples, "*.jpg")) + glob.glob(os.path.join(args.samples, "*.png")))
    work = tempfile.mkdtemp(prefix="thumbnail-compare-")
    engine_dir, vips_dir = os.path.join(work, "engine"), os.path.join(work, "vips")
    engine_cmd = [args.engine, "thumbnail", *files, "--output", engine_dir, "--max-pixel-size", str(args.size), "--quality", "85"]
    vips_cmd = ["vipsthumbnail", *files, "-s", f"{args.size}x{args.size}>", "-o", os.path.join(vips_dir, "%s.jpg[Q=85,strip]")]
    try:
        engine, vips = [], []
        for _ in range(args.runs):
            for directory in (engine_dir, vips_dir):
                shutil.rmtree(directory, ignore_errors=True)
                os.makedirs(directory)
            engine.append(run(engine_cmd))
            vips.append(run(vips_cmd))

        single = os.path.join(args.samples, args.single)
        single_engine, single_vips = [], []
        for _ in range(args.runs):
            single_engine.append(run([args.engine, "thumbnail", single, "--output", engine_dir + "-single",
                                      "--max-pixel-size", str(args.size), "--jobs", "1"]))
            single_vips.append(run(["vipsthumbnail", single, "-s", f"{args.size}x{args.size}>",
                                    "-o", os.path.join(work, "%s-single.jpg[Q=85,strip]")]))

        def median(values, index):
            return statistics.median(value[index] for value in values)

        print(f"{len(files)} files, {args.runs} alternating runs, {os.cpu_count()} cores; medians")
        print(f"batch wall: image-engine {median(engine, 0):.3f} s, vipsthumbnail {median(vips, 0):.3f} s, "
              f"ratio {median(engine, 0) / median(vips, 0):.2f}")
        print(f"batch peak RSS: image-engine {median(engine, 1):.1f} MiB, vipsthumbnail {median(vips, 1):.1f} MiB, "
              f"ratio {median(engine, 1) / median(vips, 1):.2f}")
        print(f"single {args.single} → {args.size} px: image-engine {median(single_engine, 1):.1f} MiB RSS "
              f"{median(single_engine, 0) * 1000:.0f} ms, vipsthumbnail {median(single_vips, 1):.1f} MiB RSS "
              f"{median(single_vips, 0) * 1000:.0f} ms")
        print()
        print(f"{'file':<22} {'engine SSIM':>11} {'vips SSIM':>10} {'diff':>8}")
        worst = 1.0
        for source in files:
            stem = os.path.splitext(os.path.basename(source))[0]
            ours = ssim_against_reference(source, os.path.join(engine_dir, stem + ".jpg"))
            theirs = ssim_against_reference(source, os.path.join(vips_dir, stem + ".jpg"))
            worst = min(worst, ours - theirs)
            print(f"{os.path.basename(source):<22} {ours:>11.4f} {theirs:>10.4f} {ours - theirs:>+8.4f}")
        print(f"worst SSIM difference (engine − vips): {worst:+.4f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
