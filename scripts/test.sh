#!/usr/bin/env bash
# The whole test suite, after installing what is missing: every test in a debug build, one
# test target at a time, then the concurrency tests again under the thread sanitizer.
#
# One target at a time: Swift Testing runs every test of a process at once, and on a 2-core
# machine the CPU-bound codec and budget tests would hold the few cooperative threads for tens
# of seconds, so the network tests' timeouts (loopback server, pipeline) would measure them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh
swift build --build-tests
for target in ImageCodecTests ImageCacheTests ImageBudgetTests ImagePipelineTests ImageEngineCLITests; do
    echo "== $target" >&2
    swift test --skip-build --filter "^$target\."
done
# A separate build folder, so the sanitized build does not replace the normal one.
swift test --sanitize=thread --scratch-path .build-tsan --filter Concurrency
