#!/usr/bin/env bash
# image-engine thumbnail vs vipsthumbnail on all of SampleImages/, same run, alternating.
# Usage: Benchmarks/scripts/compare-vipsthumbnail.sh [--runs N] [--size PX] [--jobs N]
# Four runs of the batch (engine default and --jobs 1, vips sequential and one process per
# core), ratios against the fastest vips run, per-file SSIM. About 2 minutes with 5 runs.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
"$root/scripts/install-dependencies.sh" --benchmarks
swift build -c release --product image-engine --package-path "$root" >&2
exec /usr/bin/python3 "$root/Benchmarks/scripts/compare_vipsthumbnail.py" \
    --engine "$root/.build/release/image-engine" --samples "$root/SampleImages" "$@"
