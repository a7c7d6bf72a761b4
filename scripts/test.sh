#!/usr/bin/env bash
# The whole test suite, after installing what is missing: every test in a debug build, one
# test target at a time; the concurrency and pipeline tests again under the thread sanitizer;
# the hostile-input tests (truncations, bit flips, bombs, hostile cache directories, fuzz regressions)
# again under AddressSanitizer with leak detection; then the benchmark package's strategy
# runner builds. The test build compiles ImageCodec and ImageBudget with -O, the sanitized
# builds ImageCodec (IMAGE_ENGINE_OPTIMIZED_TESTS, see Package.swift): their tests decode,
# resample and score real photos, which at -Onone took 7 of the suite's 8 minutes.
#
# One target at a time: Swift Testing runs every test of a process at once, and on a 2-core
# machine the CPU-bound codec and budget tests would hold the few cooperative threads for tens
# of seconds, so the network tests' timeouts (loopback server, pipeline) would measure them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh --tests
export IMAGE_ENGINE_OPTIMIZED_TESTS=1
swift build --build-tests
# The code's format (.swift-format; the generated snippets are the docs' own), doc comments on
# every public symbol, DocC without a warning, Markdown links, current snippets (20 s).
find Sources Tests -name '*.swift' -not -path 'Tests/DocumentationSnippets/*' -print0 | xargs -0 swift format lint --strict
scripts/check-docs.sh
# The memory ledger's gate: no buffer in the render path is made around the charged types.
scripts/check-allocations.sh
# An app using every client product with `traits: []` resolves no server or TLS package.
scripts/check-embedding.sh
# The CLI's fetch tests talk to a loopback server in the test process: kept apart from the CLI
# tests that run CPU-heavy children (thumbnails and uploads of every sample photo). So are the
# service's connection tests, which wait seconds at most for answers and deadlines, from the
# service tests that render (max_bytes runs the budget's search on every core).
groups=("^ImageCodecTests\." "^ImageCacheTests\." "^ImageBudgetTests\." "^MultipartFormTests\." "^ImagePipelineTests\."
        "^ImageServiceTests\.(?!ServiceConnectionTests)" "^ImageServiceTests\.ServiceConnectionTests"
        "^ImageEngineCLITests\.FetchCommandTests" "^ImageEngineCLITests\.(?!FetchCommandTests)")
for group in "${groups[@]}"; do
    echo "== $group" >&2
    swift test --skip-build --filter "$group"
done
# The codec and the service's golden hashes again on the portable kernels (CImageKernels): every
# decode and resample test and every golden thumbnail must give the same bytes as on the CPU's
# fast versions (30 s).
echo "== ^ImageCodecTests\. and RenderVersionTests with IMAGE_ENGINE_PORTABLE_KERNELS=1" >&2
IMAGE_ENGINE_PORTABLE_KERNELS=1 swift test --skip-build --filter "^ImageCodecTests\.|RenderVersionTests"
# The cluster script, once, with one instance of the debug build behind nginx (a few seconds).
scripts/cluster-smoke.sh
# Separate build folders, so the sanitized builds do not replace the normal one. Without the
# service, the budget and the multipart form (Package.swift): they are not tested here, and
# their SwiftNIO stack would double each sanitized build's time. The codec stays at -O there
# too (the C shim, where memory errors would be, is compiled as before): the sanitized
# concurrency tests took 122 s at -Onone, 12 s at -O.
export IMAGE_ENGINE_SANITIZER_BUILD=1
# Every pipeline test, not only the concurrency ones: the coordinator's edges (cancel, joins,
# priorities, invalidation) run in all of them (74 s under TSan on 2 cores).
swift test --sanitize=thread --scratch-path .build-tsan --filter "Concurrency|^ImagePipelineTests\."
# Hostile inputs, and the C kernels on random sizes (no read past a row, block or pixel run).
# SWIFT_BACKTRACE: Swift's crash backtracer, reading memory after an ASan report, can spin forever.
SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS="suppressions=$PWD/scripts/lsan-suppressions.txt" \
    swift test --sanitize=address --scratch-path .build-asan \
    --filter "HostileInput|JPEGDamagePolicy|CodecErrorPath|FuzzRegression|HostileDirectory|CacheFuzzRegression|ColorManagementTests|KernelTests|ReducedScaleIDCTTests|EntropyDecodingTests"
# The benchmark package builds, every product of it (its own package, so `swift build` above
# never compiles it; the benchmarks themselves take minutes to hours and run on demand): a
# report that stopped compiling went unnoticed for a round when only two products were built.
unset IMAGE_ENGINE_SANITIZER_BUILD IMAGE_ENGINE_OPTIMIZED_TESTS
swift build --package-path Benchmarks
