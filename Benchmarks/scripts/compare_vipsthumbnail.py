"""`image-engine thumbnail` against `vipsthumbnail` run the ways a user would, in one run.

Two modes: `--mode fit` (the longest side at most --size: `--max-pixel-size` against
`-s 'SxS>'`) and `--mode fill` (exactly --size × --size, cropped around the centre:
`--size SxS --mode fill` against `-s SxS --smartcrop centre`, which vips implements by shrinking
and then cropping on whole pixels).

Four runs of the same batch, alternating so machine noise hits all alike, medians over the
repetitions (and the range):

  engine          image-engine thumbnail FILES (default --jobs: one per core)
  engine -j1      image-engine thumbnail FILES --jobs 1
  vips            vipsthumbnail FILES (one process, one file after another)
  vips -P N       one vipsthumbnail process per file, N at a time (xargs -P N -n 1)
  vips ×N lists   the files dealt into N lists, one vipsthumbnail per list, all at once

vipsthumbnail gets `--export-profile srgb` for the files that carry an ICC profile (converted
to sRGB, as the engine does by default; vips 8.14 given it for an untagged file darkens it,
MilkyWay-q90.jpg from a mean level of 36.9 to 27.9, so untagged files go without it, in a
second invocation of the sequential run) and `[Q=85,strip,background=255]` (alpha flattened
on white, as the engine does; vips would use black). Ratios are against the fastest vips run.

Peak memory: for a single process, its maximum RSS (GNU time); for the parallel vips runs, the largest
sum of the RSS of all its processes alive at once (sampled every 2 ms from /proc), which is
what the machine has to hold. Quality: SSIM (Wang et al. 2004, Gaussian sigma 1.5, luma) of
each output against a full decode (no DCT shrink), converted to sRGB when profiled, resized
with Lanczos to the output's size; for fill, the exact centre crop of the box's aspect ratio
(fractional, as Pillow's resize box takes it) resized with Lanczos.

With fill, also: for every photo alone, the engine's peak memory filling it against fitting it
to the same output width (`--size Sx0`): cropping must not cost memory. A landscape photo's
fill output is taller than its fit output (S×S against S×S·h/w), so that ratio also carries
the larger bitmap; beside it, filling against forcing the same S×S (`--mode force`: the
whole photo, no crop) compares the same output with and without the crop.
"""
import argparse
import glob
import io
import os
import shlex
import shutil
import statistics
import subprocess
import tempfile
import threading
import time

import numpy as np
from PIL import Image, ImageCms
from skimage.metrics import structural_similarity

PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


def tree_rss_kib(root):
    """Sum of the RSS of `root` and all its descendants, from /proc."""
    children = {}
    rss = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            parent, pages = int(fields[1]), int(fields[21])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
        rss[int(entry)] = pages * PAGE_KIB
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total


def run(command, sample_tree=False):
    """Wall seconds and peak memory (MiB) of one command."""
    with tempfile.NamedTemporaryFile("r") as report:
        start = time.perf_counter()
        process = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", report.name, *command],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        peak = [0]
        done = threading.Event()

        def sample():
            while not done.is_set():
                peak[0] = max(peak[0], tree_rss_kib(process.pid))
                time.sleep(0.002)

        sampler = threading.Thread(target=sample) if sample_tree else None
        if sampler:
            sampler.start()
        status = process.wait()
        wall = time.perf_counter() - start
        done.set()
        if sampler:
            sampler.join()
        if status != 0:
            raise SystemExit(f"command failed: {' '.join(command)}")
        largest_process_kib = int(report.read().strip().splitlines()[-1])
    return wall, (peak[0] if sample_tree else largest_process_kib) / 1024


HEIF_EXTENSIONS = (".heic", ".avif")
EXTENSIONS = (".jpg", ".png", ".webp") + HEIF_EXTENSIONS
heif_decoded = {}


def open_source(source):
    """The source as Pillow opens it (lazily: the header now, the pixels in full when first read,
    never DCT-shrunk); HEIC and AVIF, which Pillow does not read, through libheif's
    heif-convert to a PNG first, which decodes the primary image in full with its
    transformations applied. Those decodes are kept: each file is read more than once."""
    if not source.lower().endswith(HEIF_EXTENSIONS):
        image = Image.open(source)
        image.draft(None, None)  # never let Pillow DCT-shrink the reference
        return image
    if source not in heif_decoded:
        with tempfile.TemporaryDirectory() as directory:
            png = os.path.join(directory, "full.png")
            subprocess.run(["heif-convert", source, png], check=True, stdout=subprocess.DEVNULL)
            with Image.open(png) as image:
                image.load()
                heif_decoded[source] = image.copy()
    return heif_decoded[source]


def luma(image):
    rgb = np.asarray(image.convert("RGB"), dtype=np.float64)
    return rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114


SRGB = ImageCms.createProfile("sRGB")
references = {}


def reference(source, size, fill=False):
    """The source fully decoded, in sRGB, alpha over white, resized with Lanczos to `size`; with
    `fill`, only the centre crop of `size`'s aspect ratio (fractional pixels)."""
    key = (source, size, fill)
    if key not in references:
        src = open_source(source)
        profile = src.info.get("icc_profile")
        if src.mode in ("RGBA", "LA", "P"):
            src = src.convert("RGBA")
            src = Image.alpha_composite(Image.new("RGBA", src.size, (255, 255, 255, 255)), src)
        image = src.convert("RGB")
        if profile:
            image = ImageCms.profileToProfile(image, ImageCms.ImageCmsProfile(io.BytesIO(profile)), SRGB,
                                              renderingIntent=ImageCms.Intent.RELATIVE_COLORIMETRIC)
        box = None
        if fill:
            width, height = image.size
            scale = max(size[0] / width, size[1] / height)
            crop_width, crop_height = size[0] / scale, size[1] / scale
            left, top = (width - crop_width) / 2, (height - crop_height) / 2
            box = (left, top, left + crop_width, top + crop_height)
        references[key] = luma(image.resize(size, Image.LANCZOS, box=box))
    return references[key]


def ssim(source, output, fill=False):
    with Image.open(output) as out:
        return structural_similarity(reference(source, out.size, fill), luma(out), data_range=255, gaussian_weights=True,
                                     sigma=1.5, use_sample_covariance=False)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", required=True)
    parser.add_argument("--samples", required=True, action="append",
                        help="a directory of JPEGs, PNGs, WebPs, HEICs and AVIFs (repeatable)")
    parser.add_argument("--mode", choices=["fit", "fill"], default="fit")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--size", type=int, default=1080)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--single", default="MilkyWay-q90.jpg",
                        help="the file for the single-file figure (the first file when it is not among them)")
    args = parser.parse_args()

    files = sorted(path for directory in args.samples for path in glob.glob(os.path.join(directory, "*"))
                   if path.lower().endswith(EXTENSIONS))
    work = tempfile.mkdtemp(prefix="thumbnail-compare-")
    fill = args.mode == "fill"
    size = f"{args.size}x{args.size}" if fill else f"{args.size}x{args.size}>"
    vips_crop = "--smartcrop centre" if fill else ""
    engine_size = ["--size", f"{args.size}x{args.size}", "--mode", "fill"] if fill else ["--max-pixel-size", str(args.size)]
    vips_out = "[Q=85,strip,background=255]"

    profiled = [f for f in files if open_source(f).info.get("icc_profile")]
    untagged = [f for f in files if f not in profiled]

    def vips_script(directory, batch_files):
        # One process for the untagged files, then one for the profiled ones.
        output = shlex.quote(os.path.join(directory, "%s.jpg" + vips_out))
        calls = [f"vipsthumbnail -s '{size}' {vips_crop} {extra} -o {output} {' '.join(map(shlex.quote, batch))}"
                 for batch, extra in (([f for f in batch_files if f in untagged], ""),
                                      ([f for f in batch_files if f in profiled], "--export-profile srgb")) if batch]
        return " && ".join(calls)

    def vips_sequential(directory):
        return ["sh", "-c", vips_script(directory, files)]

    def vips_split(directory):
        # The files dealt largest first into args.jobs lists, one vipsthumbnail run per list.
        by_size = sorted(files, key=os.path.getsize, reverse=True)
        parts = [by_size[i::args.jobs] for i in range(args.jobs)]
        return ["sh", "-c", " & ".join(f"({vips_script(directory, part)})" for part in parts if part) + " & wait"]

    def vips_parallel(directory):
        # One vipsthumbnail per file, args.jobs at a time; profiled files get --export-profile.
        script = (f'for f in "$@"; do printf "%s\\0" "$f"; done | xargs -0 -P {args.jobs} -I FILE sh -c '
                  f'\'case " {" ".join(os.path.basename(f) for f in profiled)} " in *" $(basename "$1") "*) p="--export-profile srgb";; *) p="";; esac; '
                  f'exec vipsthumbnail "$1" -s "{size}" {vips_crop} $p -o "{directory}/%s.jpg{vips_out}"\' sh FILE')
        return ["sh", "-c", script, "sh", *files]

    def engine(directory, jobs=None):
        command = [args.engine, "thumbnail", *files, "--output", directory, *engine_size, "--quality", "85"]
        return command + (["--jobs", str(jobs)] if jobs else [])

    modes = [
        ("engine", lambda d: engine(d), False),
        ("engine -j1", lambda d: engine(d, 1), False),
        ("vips", vips_sequential, False),
        (f"vips -P {args.jobs}", vips_parallel, True),
        (f"vips ×{args.jobs} lists", vips_split, True),
    ]
    results = {name: [] for name, _, _ in modes}
    try:
        for _ in range(args.runs):
            for name, command, tree in modes:
                directory = os.path.join(work, name.replace(" ", ""))
                shutil.rmtree(directory, ignore_errors=True)
                os.makedirs(directory)
                results[name].append(run(command(directory), sample_tree=tree))

        single = next((f for f in files if os.path.basename(f) == args.single), files[0])
        single_engine, single_vips = [], []
        for _ in range(args.runs):
            single_engine.append(run([args.engine, "thumbnail", single, "--output", os.path.join(work, "single"),
                                      *engine_size, "--jobs", "1"]))
            single_vips.append(run(["vipsthumbnail", single, "-s", size, *vips_crop.split(),
                                    "-o", os.path.join(work, "%s-single.jpg" + vips_out)]))

        def median(values, index):
            return statistics.median(value[index] for value in values)

        def spread(values, index):
            return min(value[index] for value in values), max(value[index] for value in values)

        fastest_vips = min((name for name in results if name.startswith("vips")), key=lambda n: median(results[n], 0))
        what = f"filled into {args.size}×{args.size}" if fill else f"→ {args.size} px"
        print(f"{len(files)} files {what} q85, {args.runs} alternating runs, {os.cpu_count()} cores; "
              f"medians (range); ratios against {fastest_vips}, the fastest vips run")
        print()
        print("| run | wall | peak memory | wall ratio | memory ratio |")
        print("|---|---|---|---|---|")
        for name in results:
            wall, memory = median(results[name], 0), median(results[name], 1)
            low, high = spread(results[name], 0)
            print(f"| {name} | {wall:.3f} s ({low:.3f}–{high:.3f}) | {memory:.1f} MiB | "
                  f"{wall / median(results[fastest_vips], 0):.2f} | {memory / median(results[fastest_vips], 1):.2f} |")
        print()
        print(f"like for like: engine -j1 / vips (one stream each) = "
              f"{median(results['engine -j1'], 0) / median(results['vips'], 0):.2f}; "
              f"engine / {fastest_vips} = {median(results['engine'], 0) / median(results[fastest_vips], 0):.2f}")
        print(f"single {os.path.basename(single)} {what}: image-engine {median(single_engine, 1):.1f} MiB "
              f"{median(single_engine, 0) * 1000:.0f} ms, vipsthumbnail {median(single_vips, 1):.1f} MiB "
              f"{median(single_vips, 0) * 1000:.0f} ms (process start included)")
        print()
        # Lossless outputs too (one run of each, untimed): q85 costs busy photos 0.02-0.07 SSIM,
        # which would hide what the resize and the crop themselves do.
        lossless = {"engine": os.path.join(work, "engine-png"), "vips": os.path.join(work, "vips-png")}
        for directory in lossless.values():
            os.makedirs(directory)
        subprocess.run([args.engine, "thumbnail", *files, "--output", lossless["engine"], *engine_size, "--format", "png"],
                       check=True, stdout=subprocess.DEVNULL)
        for source in files:
            profile = ["--export-profile", "srgb"] if source in profiled else []
            subprocess.run(["vipsthumbnail", source, "-s", size, *vips_crop.split(), *profile,
                            "-o", os.path.join(lossless["vips"], "%s.png")], check=True)
        print("| file | engine SSIM | vips SSIM | difference | engine, PNG | vips, PNG | difference, PNG |")
        print("|---|---|---|---|---|---|---|")
        engine_dir, vips_dir = os.path.join(work, "engine"), os.path.join(work, "vips")
        differences, png_differences, png_scores = [], [], []
        for source in files:
            stem = os.path.splitext(os.path.basename(source))[0]
            ours = ssim(source, os.path.join(engine_dir, stem + ".jpg"), fill)
            theirs = ssim(source, os.path.join(vips_dir, stem + ".jpg"), fill)
            differences.append(ours - theirs)
            row = f"| {os.path.basename(source)} | {ours:.4f} | {theirs:.4f} | {ours - theirs:+.4f} |"
            image = open_source(source)
            opaque = image.mode not in ("RGBA", "LA", "P") and "transparency" not in image.info
            if opaque:
                ours_png = ssim(source, os.path.join(lossless["engine"], stem + ".png"), fill)
                theirs_png = ssim(source, os.path.join(lossless["vips"], stem + ".png"), fill)
                png_differences.append(ours_png - theirs_png)
                png_scores.append(ours_png)
                row += f" {ours_png:.4f} | {theirs_png:.4f} | {ours_png - theirs_png:+.4f} |"
            else:
                row += " – (alpha) | – | – |"
            print(row)
        print()
        print(f"SSIM difference (engine − vips), q85: worst {min(differences):+.4f}, mean {statistics.mean(differences):+.4f}; "
              f"lossless, opaque photos: worst {min(png_differences):+.4f}, mean {statistics.mean(png_differences):+.4f}, "
              f"lowest engine SSIM {min(png_scores):.4f}")
        if fill:
            print()
            print(f"| file | fill {args.size}×{args.size} peak | fit to width {args.size} peak | ratio "
                  f"| force {args.size}×{args.size} peak | fill / force |")
            print("|---|---|---|---|---|---|")
            ratios, forced_ratios = [], []
            for source in files:
                def peak(extra):
                    return statistics.median(run([args.engine, "thumbnail", source, "--output", os.path.join(work, "alone"),
                                                  *extra, "--jobs", "1"])[1] for _ in range(3))
                filled = peak(["--size", f"{args.size}x{args.size}", "--mode", "fill"])
                fitted = peak(["--size", f"{args.size}x0"])
                forced = peak(["--size", f"{args.size}x{args.size}", "--mode", "force"])
                ratios.append(filled / fitted)
                forced_ratios.append(filled / forced)
                print(f"| {os.path.basename(source)} | {filled:.1f} MiB | {fitted:.1f} MiB | {filled / fitted:.3f} "
                      f"| {forced:.1f} MiB | {filled / forced:.3f} |")
            print()
            print(f"fill / fit peak memory, one photo at a time: worst {max(ratios):.3f}, median {statistics.median(ratios):.3f}; "
                  f"fill / force (same output): worst {max(forced_ratios):.3f}, median {statistics.median(forced_ratios):.3f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
