#!/usr/bin/env bash
# The documentation gate: every public symbol of every library module has a doc comment, each
# module's DocC catalog (Sources/<Module>/Documentation.docc) builds without a warning (a broken
# ``Symbol`` or <doc:> link is one), no Markdown link points at a missing file or anchor, and
# the Swift blocks of the README and the articles are what the DocumentationSnippets test
# target compiles. Uses the toolchain's docc directly, so no plugin dependency is needed.
set -euo pipefail
cd "$(dirname "$0")/.."
modules=$(scripts/library-modules.sh)
graphs=$(scripts/symbol-graphs.sh)
python3 scripts/doc-coverage.py "$graphs" $modules
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for module in $modules; do
    catalog="Sources/$module/Documentation.docc"
    [[ -d "$catalog" ]] || { echo "check-docs: $module has no DocC catalog ($catalog)" >&2; exit 1; }
    mkdir -p "$work/$module"
    cp "$graphs/$module.symbols.json" "$work/$module/"
    docc convert "$catalog" --additional-symbol-graph-dir "$work/$module" --fallback-display-name "$module" \
        --fallback-bundle-identifier "image-engine.$module" --output-dir "$work/$module.doccarchive" --warnings-as-errors >/dev/null
done
echo "DocC: no warnings in" $modules >&2
python3 scripts/check-doc-links.py
python3 scripts/snippets.py check
