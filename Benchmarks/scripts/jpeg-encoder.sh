#!/usr/bin/env bash
# The JPEG encoder benchmark: the perceptual encoder against libjpeg-turbo (as the engine ran it
# before) and jpegli (PyPI pyjpegli, in a virtualenv of its own), at equal bytes, on the photos
# of outside-photos.sh (one per scene) at 640 and 1280 px, and encode time and memory at 512 and
# 1080 px. About 4 minutes on 2 cores.
# Usage: Benchmarks/scripts/jpeg-encoder.sh [DIR|FILE...]   (default: the outside photos)
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-dependencies.sh --benchmarks
command -v jpegtran >/dev/null || { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libjpeg-turbo-progs >/dev/null; }
venv=Benchmarks/.venv-jpegli
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
"$venv/bin/python" -c "import pyjpegli, PIL" 2>/dev/null || "$venv/bin/pip" install --quiet pyjpegli==0.3.2 pillow
(cd Benchmarks && swift build -c release --product jpeg-encoder-report >/dev/null)
report=Benchmarks/.build/release/jpeg-encoder-report
if (( $# == 0 )); then
    photos="$(Benchmarks/scripts/outside-photos.sh)"
    set -- "$photos/Kleiber-20MP-progressive.jpg" "$photos/InfiniteSea-17MP-progressive.jpg" "$photos/PaintingColors-24MP.jpg" "$photos/lomiri-4K.png"
fi
qualities=30,40,50,60,65,70,75,80,85,90,95
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/references" "$work/jpegli"
"$report" --references "$work/references" "$@"
"$venv/bin/python" Benchmarks/scripts/jpegli_encode.py "$work/references" "$work/jpegli" "$qualities"
{
    echo "### SSIMULACRA2 at equal bytes (median and range over the points scored 50-85)"
    echo
    # Without --repeat the memory columns are not measured: dropped.
    "$report" --qualities "$qualities" --jpegli "$work/jpegli" "$@" | cut -d'|' -f1-9,13-
    echo
    # The first table only (the score columns are empty at one quality). Baseline is how
    # thumbnails are written by default; progressive is how the budget writes.
    for scans in baseline progressive; do
        echo "### Encode time and memory at 512 and 1080 px, $scans, quality 75 (time: median of 21, one encode at a time; memory: the peak charged to a ledger)"
        echo
        flags=()
        [[ $scans == baseline ]] && flags=(--baseline)
        "$report" --sizes 512,1080 --qualities 75 --repeat 21 "${flags[@]}" "$@" \
            | sed -n '1,/\*\*all/p' | cut -d'|' -f1-3,7-
        echo
    done
} | tee Benchmarks/Results/jpeg-encoder.md
