#!/usr/bin/env bash
# Photos the engine was not tuned on, for the benchmarks' "outside" runs: the inputs that break
# figures that hold only on SampleImages/. Downloaded from Debian (lomiri-wallpapers(-20.04),
# CC-BY-SA-3.0, see the package's copyright file) and derived losslessly where possible:
#   Kleiber-20MP-progressive.jpg   6028×3391 camera photo, baseline → progressive (jpegtran, lossless)
#   Kleiber-17MP-progressive.jpg   its left 5120×3391, progressive (jpegtran -crop, lossless)
#   InfiniteSea-17MP-progressive.jpg  4096×4096 progressive, as shipped
#   PaintingColors-24MP.jpg        6000×4000 baseline, as shipped
#   Kleiber-5K-16bit.png           5120×2880 16-bit RGB PNG (vips: resized, cast to 16 bits)
#   Kleiber-5K-adam7.png           5120×2880 8-bit Adam7-interlaced PNG
#   lomiri-4K.png                  4096×2304 RGB PNG, as shipped
# Usage: Benchmarks/scripts/outside-photos.sh [DIR]   (default: Benchmarks/.outside-photos, ignored by git)
# Prints the directory. Skips the work when it is already complete.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
directory="${1:-$root/Benchmarks/.outside-photos}"
names=(Kleiber-20MP-progressive.jpg Kleiber-17MP-progressive.jpg InfiniteSea-17MP-progressive.jpg PaintingColors-24MP.jpg
       Kleiber-5K-16bit.png Kleiber-5K-adam7.png lomiri-4K.png)
complete=1
for name in "${names[@]}"; do [[ -s "$directory/$name" ]] || complete=0; done
if (( complete )); then echo "$directory"; exit 0; fi

missing=()
for package in libjpeg-turbo-progs libvips-tools; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if (( ${#missing[@]} > 0 )); then
    echo "Installing: ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

mkdir -p "$directory"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download lomiri-wallpapers lomiri-wallpapers-20.04 >/dev/null 2>&1 && for deb in *.deb; do dpkg -x "$deb" x; done)
backgrounds="$work/x/usr/share/backgrounds"
kleiber="$backgrounds/Kleiber_by_Lukas_Baubkus.jpg"
jpegtran -copy none -progressive -outfile "$directory/Kleiber-20MP-progressive.jpg" "$kleiber"
jpegtran -copy none -crop 5120x3391+0+0 -progressive -outfile "$directory/Kleiber-17MP-progressive.jpg" "$kleiber"
cp "$backgrounds/Infinite-Sea_by_Aury88.jpg" "$directory/InfiniteSea-17MP-progressive.jpg"
cp "$backgrounds/Painting-Colors_by__herobrine7gamer.jpg" "$directory/PaintingColors-24MP.jpg"
cp "$backgrounds/lomiri-default-background.png" "$directory/lomiri-4K.png"
vips thumbnail "$kleiber" "$work/k5.v" 5120 --height 2880 --crop centre
vips colourspace "$work/k5.v" "$directory/Kleiber-5K-16bit.png" rgb16
vips pngsave "$work/k5.v" "$directory/Kleiber-5K-adam7.png" --interlace
echo "$directory"
