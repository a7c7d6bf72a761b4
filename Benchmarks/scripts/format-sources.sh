#!/usr/bin/env bash
# WebP, HEIC and AVIF sources for the format benchmarks, made from the photos of outside-photos.sh
# (never from SampleImages/): each photo converted to sRGB, then encoded at quality 90 by Debian's
# cwebp (WebP, method 4) and heif-enc (HEIC through x265, AVIF through libaom at speed 6), one
# directory per format. The photos: InfiniteSea-17MP (4096×4096), Kleiber-20MP (6028×3391),
# PaintingColors-24MP (6000×4000, Display-P3-like profile, converted), lomiri-4K (4096×2304) and
# Kleiber-12MP, a 4032×3024 centre crop (a phone camera's frame). heif-enc 1.15 writes one coded
# image per file, not the 512×512 grid an iPhone writes; the engine's grid path is covered by its
# tests, not by this benchmark.
# Usage: Benchmarks/scripts/format-sources.sh [DIR]   (default: Benchmarks/.format-sources, ignored by git)
# Prints DIR; DIR/webp, DIR/heic and DIR/avif hold the files. Skips the work when it is complete.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
directory="${1:-$root/Benchmarks/.format-sources}"
stems=(InfiniteSea-17MP Kleiber-20MP PaintingColors-24MP lomiri-4K Kleiber-12MP)
complete=1
for stem in "${stems[@]}"; do
    for format in webp heic avif; do [[ -s "$directory/$format/$stem.$format" ]] || complete=0; done
done
if (( complete )); then echo "$directory"; exit 0; fi

"$root/scripts/install-dependencies.sh" --benchmarks
photos="$("$root/Benchmarks/scripts/outside-photos.sh")"
mkdir -p "$directory/webp" "$directory/heic" "$directory/avif"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A originals=([InfiniteSea-17MP]=InfiniteSea-17MP-progressive.jpg [Kleiber-20MP]=Kleiber-20MP-progressive.jpg
                      [PaintingColors-24MP]=PaintingColors-24MP.jpg [lomiri-4K]=lomiri-4K.png)
for stem in "${!originals[@]}"; do
    # icc_transform converts a profiled photo to sRGB and leaves an untagged one as it is.
    vips icc_transform "$photos/${originals[$stem]}" "$work/$stem.png" srgb --embedded 2>/dev/null \
        || vips copy "$photos/${originals[$stem]}" "$work/$stem.png"
done
vips crop "$work/Kleiber-20MP.png" "$work/Kleiber-12MP.png" 998 183 4032 3024
for stem in "${stems[@]}"; do
    echo "encoding $stem" >&2
    cwebp -quiet -q 90 -m 4 "$work/$stem.png" -o "$directory/webp/$stem.webp"
    heif-enc -q 90 "$work/$stem.png" -o "$directory/heic/$stem.heic" >/dev/null
    heif-enc -A -q 90 -p speed=6 "$work/$stem.png" -o "$directory/avif/$stem.avif" >/dev/null
done
echo "$directory"
