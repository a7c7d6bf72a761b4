#!/usr/bin/env bash
# The main job: thumbnails of every file in SampleImages/ (longest side 1080, JPEG q85) in
# out/thumbnails/, with one JSON line of results per file.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh
swift build -c release --product image-engine
.build/release/image-engine thumbnail SampleImages/*.jpg SampleImages/*.png \
    --output out/thumbnails --max-pixel-size 1080 --quality 85 --json "$@"
echo "Thumbnails written to out/thumbnails/" >&2
