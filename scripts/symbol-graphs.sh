#!/usr/bin/env bash
# Extracts the public symbol graphs of every module and prints the directory that holds them
# (<Module>.symbols.json), for the docs gate and scripts/docs.sh. Build output goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
# dump-symbol-graph builds the libraries but extracts every module, the test targets' too: a
# fresh clone needs the test build first (a no-op when the test run already made it).
swift build --build-tests >&2
swift package dump-symbol-graph --minimum-access-level public --skip-synthesized-members >/dev/null
find .build -maxdepth 3 -type d -name symbolgraph | head -1
