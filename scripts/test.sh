#!/usr/bin/env bash
# The whole test suite, after installing what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh
swift build --build-tests
swift test --skip-build
