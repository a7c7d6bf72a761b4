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
# The CLI's fetch tests talk to a loopback server in the test process: kept apart from the CLI
# tests that run CPU-heavy children (thumbnails and uploads of every sample photo).
groups=("^ImageCodecTests\." "^ImageCacheTests\." "^ImageBudgetTests\." "^ImagePipelineTests\."
        "^ImageEngineCLITests\.FetchCommandTests" "^ImageEngineCLITests\.(?!FetchCommandTests)")
for group in "${groups[@]}"; do
    echo "== $group" >&2
    swift test --skip-build --filter "$group"
done
# A separate build folder, so the sanitized build does not replace the normal one.
swift test --sanitize=thread --scratch-path .build-tsan --filter Concurrency
