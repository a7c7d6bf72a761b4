#!/usr/bin/env bash
# The whole test suite, after installing what is missing: every test in a debug build, then
# the concurrency tests again under the thread sanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh
swift build --build-tests
swift test --skip-build
# A separate build folder, so the sanitized build does not replace the normal one.
swift test --sanitize=thread --scratch-path .build-tsan --filter Concurrency
