#!/usr/bin/env bash
# Builds the documentation site: each library module's DocC catalog as static HTML in
# out/docs/<Module>/, and out/docs/index.html linking them. The directory is publishable as it
# stands on any static host (GitHub Pages, nginx, an S3 bucket) at the root of a site; to read
# it locally, `python3 -m http.server -d out/docs` and open http://localhost:8000/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh >&2
graphs=$(scripts/symbol-graphs.sh)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
modules=$(scripts/library-modules.sh)
mkdir -p out/docs
links=""
for module in $modules; do
    mkdir -p "$work/$module"
    cp "$graphs/$module.symbols.json" "$work/$module/"
    rm -rf "out/docs/$module"
    lower=$(tr '[:upper:]' '[:lower:]' <<<"$module")
    # Each archive lives under /<Module>/ of the one site, so its pages and assets are
    # addressed from there.
    docc convert "Sources/$module/Documentation.docc" --additional-symbol-graph-dir "$work/$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "image-engine.$module" \
        --transform-for-static-hosting --hosting-base-path "$module" --output-dir "out/docs/$module" >/dev/null
    abstract=$(sed -n '3,/^$/p' "Sources/$module/Documentation.docc/$module.md" | tr '\n' ' ' | sed 's/``//g; s/`\([^`]*\)`/<code>\1<\/code>/g; s/  */ /g; s/ $//')
    links+="<li><a href=\"$module/documentation/$lower/\">$module</a> — ${abstract}</li>"$'\n'
    echo "out/docs/$module/documentation/$lower/index.html" >&2
done
cat > out/docs/index.html <<HTML
<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>image-engine documentation</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 -apple-system,system-ui,sans-serif;max-width:48rem;margin:3rem auto;padding:0 1rem}li{margin:.6rem 0}</style>
</head>
<body>
<h1>image-engine</h1>
<p>An image caching and downsampling engine in Swift for Linux. Each module's reference and articles:</p>
<ul>
$links</ul>
</body>
</html>
HTML
echo "out/docs/index.html" >&2
