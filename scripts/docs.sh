#!/usr/bin/env bash
# Builds each library module's documentation as static HTML for offline reading, into
# out/docs/<Module>/ (open out/docs/<Module>/documentation/<module>/index.html through any
# static file server, e.g. `python3 -m http.server -d out/docs/ImageCodec`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh >&2
swift package dump-symbol-graph --minimum-access-level public --skip-synthesized-members >/dev/null
graphs=$(find .build -maxdepth 3 -type d -name symbolgraph | head -1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for module in $(scripts/library-modules.sh); do
    mkdir -p "$work/$module"
    cp "$graphs/$module.symbols.json" "$work/$module/"
    rm -rf "out/docs/$module"
    docc convert "Sources/$module/Documentation.docc" --additional-symbol-graph-dir "$work/$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "image-engine.$module" \
        --transform-for-static-hosting --hosting-base-path "" --output-dir "out/docs/$module" >/dev/null
    echo "out/docs/$module/documentation/$(tr '[:upper:]' '[:lower:]' <<<"$module")/index.html" >&2
done
