#!/usr/bin/env bash
# Coverage-guided fuzzing of the engine's parsers with libFuzzer, under AddressSanitizer with
# leak detection.
#
#   scripts/fuzz.sh --list                          the targets, one per line
#   scripts/fuzz.sh TARGET SECONDS [EXTRA_SEED_DIR]  build TARGET, fuzz it for SECONDS
#
# Starts from the committed seeds (Fuzz/Corpus/TARGET) plus the files in EXTRA_SEED_DIR, in a
# scratch corpus; prints libFuzzer's final statistics; writes any crash, leak or timeout to
# Fuzz/Findings/TARGET-TIME/ and exits non-zero. A finding becomes a regression input: copy it
# to Tests/Fixtures/fuzz-regressions/TARGET/, where the normal test suite runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(jpeg-header jpeg-decode png-header png-decode webp-header webp-decode heif-header heif-decode heif-container gif-decode webp-animation service-request exif-orientation disk-cache-entry journal-replay encode-roundtrip)

usage() {
    echo "usage: scripts/fuzz.sh --list | TARGET SECONDS [EXTRA_SEED_DIR]" >&2
    exit 64
}

if [[ "${1:-}" == "--list" ]]; then
    printf '%s\n' "${targets[@]}"
    exit 0
fi
[[ $# -ge 2 && $# -le 3 ]] || usage
target=$1
seconds=$2
extra=${3:-}
[[ " ${targets[*]} " == *" $target "* ]] || { echo "scripts/fuzz.sh: unknown target '$target' (see --list)" >&2; exit 64; }
[[ "$seconds" =~ ^[0-9]+$ && "$seconds" -gt 0 ]] || { echo "scripts/fuzz.sh: SECONDS must be a positive whole number" >&2; exit 64; }
[[ -z "$extra" || -d "$extra" ]] || { echo "scripts/fuzz.sh: $extra is not a directory" >&2; exit 64; }

scripts/install-dependencies.sh >&2
# Swift code gets -sanitize=fuzzer,address; the C shim gets coverage and ASan too.
swift build --package-path Fuzz -c release --product "$target" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -g -Xswiftc -use-ld=lld -Xcc -fsanitize=fuzzer-no-link,address >&2
binary="Fuzz/.build/release/$target"

corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp -r "Fuzz/Corpus/$target/." "$corpus/"
if [[ -n "$extra" ]]; then find "$extra" -type f -size -16M -exec cp {} "$corpus/" \; ; fi
findings="Fuzz/Findings/$target-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$findings"

# Memory ceilings close to what a run may hold, so that amplification is a finding, not a pass.
# The header and decode targets take inputs up to 16 MiB (bombs are small files that ask for
# much): no single allocation may pass 17 MB (libFuzzer's own 16 MiB input buffer is the largest
# a sound run makes: the targets read the input without a copy, a 4 MP decode's bitmap is 16 MB),
# and the process stays within 256 MB (header) or 384 MB (decode): measured 137-180 MB over
# 45 s runs with ASan's quarantine at 32 MB. The header targets also trap when a header read
# allocates more than its bound (FuzzingEntryPoints.boundedHeader).
case "$target" in
    *-header|heif-container) limits=(-max_len=16777216 -malloc_limit_mb=17 -rss_limit_mb=256) ;;
    *-decode|webp-animation) limits=(-max_len=16777216 -malloc_limit_mb=17 -rss_limit_mb=384) ;;
    *) limits=(-max_len=1048576 -rss_limit_mb=2560) ;;
esac

status=0
log="$findings/fuzz.log"
# SWIFT_BACKTRACE: Swift's own crash backtracer, reading memory after ASan aborts, can spin.
SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1:quarantine_size_mb=32:${ASAN_OPTIONS:-}" \
    "$binary" "$corpus" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 "${limits[@]}" \
    -artifact_prefix="$findings/" 2>&1 | tee "$log" || status=${PIPESTATUS[0]}
# One line for reports: the last status line's coverage and features, and the final statistics.
last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
echo "summary: $target runs=${runs:-?} exec/s=${rate:-?} cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last") ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<<"$last")" >&2
[[ $status -ne 0 ]] || rm -f "$log"
if [[ $status -ne 0 || -n "$(ls -A "$findings")" ]]; then
    echo "scripts/fuzz.sh: $target found something (exit $status): $findings" >&2
    exit $(( status == 0 ? 1 : status ))
fi
rmdir "$findings"
echo "scripts/fuzz.sh: $target: no findings in $seconds s" >&2
