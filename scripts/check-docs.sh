#!/usr/bin/env bash
# Every public symbol of the library products has a doc comment, and DocC builds their
# documentation without a warning (a broken ``Symbol`` link is one). Uses the toolchain's
# docc directly, so no plugin dependency is needed.
set -euo pipefail
cd "$(dirname "$0")/.."
swift package dump-symbol-graph --minimum-access-level public --skip-synthesized-members >/dev/null
graphs=$(find .build -maxdepth 3 -type d -name symbolgraph | head -1)
python3 scripts/doc-coverage.py "$graphs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for module in ImageCodec ImageCache ImageBudget ImagePipeline MultipartForm; do
    mkdir -p "$work/$module"
    cp "$graphs/$module.symbols.json" "$work/$module/"
    docc convert --additional-symbol-graph-dir "$work/$module" --fallback-display-name "$module" \
        --fallback-bundle-identifier "image-engine.$module" --output-dir "$work/$module.doccarchive" --warnings-as-errors >/dev/null
done
echo "DocC: no warnings in ImageCodec, ImageCache, ImageBudget, ImagePipeline, MultipartForm" >&2
