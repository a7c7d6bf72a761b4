#!/usr/bin/env bash
# An app that depends on this package with `traits: []` (the README's "Install") and uses every
# client product: its package graph must hold this package and swift-collections alone (no
# server or TLS package is fetched), it must build, and its URLSigning must sign imgproxy's
# documentation example as the service expects. About a minute and a half: a debug build of the
# client modules in a scratch package.
set -euo pipefail
cd "$(dirname "$0")/.."
repository=$PWD
app=$(mktemp -d)
trap 'rm -rf "$app"' EXIT
mkdir -p "$app/Sources/App"
cat > "$app/Package.swift" <<MANIFEST
// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "App",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "$repository", traits: [])],
    targets: [
        .executableTarget(name: "App", dependencies: [
            .product(name: "ImageCodec", package: "$(basename "$repository")"),
            .product(name: "ImageCache", package: "$(basename "$repository")"),
            .product(name: "ImagePipeline", package: "$(basename "$repository")"),
            .product(name: "ImageBudget", package: "$(basename "$repository")"),
            .product(name: "MultipartForm", package: "$(basename "$repository")"),
            .product(name: "URLSigning", package: "$(basename "$repository")"),
        ])
    ]
)
MANIFEST
cat > "$app/Sources/App/main.swift" <<'SOURCE'
import ImageBudget
import ImageCache
import ImageCodec
import ImagePipeline
import MultipartForm
import URLSigning

let signer = URLSigner(keys: [SigningKey(hexKey: "736563726574", hexSalt: "68656C6C6F")!])
print(URLSigner.signature(of: "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png", key: signer.keys[0]))
print(ImageFormat.jpeg, UploadBudgetOptions().budget, ImagePipeline.Configuration().memoryCacheLimit > 0)
SOURCE
cd "$app"
# Every package the app resolves, below this one (the app's only direct dependency).
packages=$(swift package show-dependencies --format json | python3 -c '
import json, sys
def walk(node):
    yield node["identity"]
    for child in node["dependencies"]:
        yield from walk(child)
(this,) = json.load(sys.stdin)["dependencies"]
print(" ".join(sorted({identity for child in this["dependencies"] for identity in walk(child)})))')
if [[ "$packages" != "swift-collections" ]]; then
    echo "check-embedding: a client app resolves [$packages] besides this package, expected [swift-collections]" >&2
    exit 1
fi
swift build >/dev/null
signature=$(.build/debug/App | head -1)
if [[ "$signature" != "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8" ]]; then
    echo "check-embedding: URLSigning gave $signature for imgproxy's documented example" >&2
    exit 1
fi
echo "check-embedding: a client app resolves this package and $packages alone, and builds" >&2
