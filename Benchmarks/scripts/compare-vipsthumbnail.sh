#!/usr/bin/env bash
# image-engine thumbnail vs vipsthumbnail on all of SampleImages/, same run, alternating.
# Usage: Benchmarks/scripts/compare-vipsthumbnail.sh [--mode fit|fill] [--runs N] [--size PX] [--jobs N] [--outside]
#                                                   [--sources webp|heic|avif]
# Five runs of the batch (engine default and --jobs 1, vips sequential, one process per file
# and one per list), ratios against the fastest vips run, per-file SSIM; --mode fill crops to
# SIZE×SIZE (vips: --smartcrop centre) and adds fill-vs-fit memory per photo. --outside adds
# the photos of outside-photos.sh (15-24 MP progressive and baseline JPEGs, 5K 16-bit and Adam7
# PNGs). --sources FORMAT runs on the WebP, HEIC or AVIF files of format-sources.sh instead of
# SampleImages/. About 2 minutes with 5 runs on SampleImages/.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
"$root/scripts/install-dependencies.sh" --benchmarks
swift build -c release --product image-engine --package-path "$root" >&2
samples=(--samples "$root/SampleImages")
arguments=()
while (( $# > 0 )); do
    case "$1" in
        --outside) arguments+=(--samples "$("$root/Benchmarks/scripts/outside-photos.sh")") ;;
        --sources)
            [[ "${2:-}" =~ ^(webp|heic|avif)$ ]] || { echo "--sources takes webp, heic or avif" >&2; exit 2; }
            samples=(--samples "$("$root/Benchmarks/scripts/format-sources.sh")/$2")
            shift ;;
        *) arguments+=("$1") ;;
    esac
    shift
done
exec /usr/bin/python3 "$root/Benchmarks/scripts/compare_vipsthumbnail.py" \
    --engine "$root/.build/release/image-engine" "${samples[@]}" "${arguments[@]}"
