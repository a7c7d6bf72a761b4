#!/usr/bin/env python3
"""The run-time kernels (CImageKernels): the same bytes on both paths, and what they cost.

1. Thumbnails every photo at each size with the CPU's fast kernels and again with
   IMAGE_ENGINE_PORTABLE_KERNELS=1, as JPEG and as WebP (the resampler, the reduced-scale IDCTs
   and the encoder's colour conversion all run), and fails unless every output is byte for byte
   the same.
2. With --baseline BINARY, times `thumbnail --jobs 1` of all the photos at each size, this build
   and BINARY alternating, --runs times: CPU seconds (user + system) of each, medians and range,
   and their ratio.

Usage: Benchmarks/scripts/kernel_paths.py [--binary B] [--baseline BINARY] [--runs N]
                                         [--sizes 1080x1080,400x400] FILE...
"""
import argparse
import filecmp
import os
import resource
import statistics
import subprocess
import sys
import tempfile


def thumbnails(binary, files, size, output, extra=(), env=None):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([binary, "thumbnail", *files, "--output", output, "--size", size, "--jobs", "1", *extra],
                   check=True, stdout=subprocess.DEVNULL, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=".build/release/image-engine")
    parser.add_argument("--baseline")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--sizes", default="1080x1080,400x400,240x240")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    sizes = args.sizes.split(",")
    portable = dict(os.environ, IMAGE_ENGINE_PORTABLE_KERNELS="1")
    fast = {k: v for k, v in os.environ.items() if k != "IMAGE_ENGINE_PORTABLE_KERNELS"}

    compared, different = 0, []
    with tempfile.TemporaryDirectory() as work:
        for size in sizes:
            for fmt in ("jpeg", "webp"):
                a, b = os.path.join(work, f"fast-{size}-{fmt}"), os.path.join(work, f"portable-{size}-{fmt}")
                thumbnails(args.binary, args.files, size, a, ("--format", fmt), fast)
                thumbnails(args.binary, args.files, size, b, ("--format", fmt), portable)
                for name in sorted(os.listdir(a)):
                    compared += 1
                    if not filecmp.cmp(os.path.join(a, name), os.path.join(b, name), shallow=False):
                        different.append(f"{size} {name}")
    print(f"identical bytes on both paths: {compared - len(different)} of {compared} thumbnails")
    for item in different:
        print(f"  DIFFERENT: {item}")

    if args.baseline:
        print(f"\nCPU seconds of `thumbnail --jobs 1` over {len(args.files)} files, {args.runs} runs alternating")
        print("| size | this build | baseline | ratio |")
        print("|---|---|---|---|")
        for size in sizes:
            times = {"new": [], "base": []}
            for run in range(args.runs):
                order = [("new", args.binary), ("base", args.baseline)]
                for name, binary in (order if run % 2 == 0 else order[::-1]):
                    with tempfile.TemporaryDirectory() as out:
                        times[name].append(thumbnails(binary, args.files, size, out, env=fast))
            new, base = statistics.median(times["new"]), statistics.median(times["base"])
            print(f"| {size} | {new:.3f} s ({min(times['new']):.3f}-{max(times['new']):.3f}) "
                  f"| {base:.3f} s ({min(times['base']):.3f}-{max(times['base']):.3f}) | {new / base:.3f} |")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
