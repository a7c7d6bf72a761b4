#!/usr/bin/env bash
# Load benchmark of `image-engine serve` against thumbor 7.8, on loopback:
#   A  the imgproxy benchmark's shape: JPEGs of 1600-3000 px fitted to 512×512 at q80, at 2 and 8 connections,
#      every request a new source from an nginx origin (its CPU per request reported); serve
#      (default and --fast-shrink-on-load) vs thumbor (best of a config sweep) vs the no-HTTP
#      `image-engine thumbnail` ceiling of each mode
#   B  many sizes: every request a different (image, size, mode)
#   C  hot URL: 200 concurrent requests for one new URL
#   D  2 instances behind nginx (scripts/cluster.sh), cold then warm
#   soak    10 minutes at 80% of A's throughput: RSS and p99 over time (--soak)
#   faults  kill -9, rolling restart, origin down, under load behind nginx (--faults)
#   R  this build's serve against another build's (--parts R --baseline BINARY): A's shape, alternating runs
# Installs what is missing (wrk from apt; thumbor and matplotlib from PyPI into
# Benchmarks/.venv), builds the release binary, starts everything itself, prints a table and
# writes Benchmarks/Results/serve-load.{md,json} and charts.
#
# Usage: Benchmarks/scripts/serve-load.sh [--duration S] [--runs N] [--soak] [--soak-minutes M]
#                                         [--faults] [--parts A,B,C,D,R] [--baseline BINARY]
# Full run (A-D, 60 s × 3 runs, soak, faults): about 35 minutes on 2 cores.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
"$root/scripts/install-dependencies.sh" --benchmarks
missing=()
for package in wrk nginx-light curl python3-venv; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if (( ${#missing[@]} > 0 )); then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
venv="$root/Benchmarks/.venv"
if [[ ! -x "$venv/bin/thumbor" ]] || ! "$venv/bin/python" -c "import matplotlib" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "thumbor==7.8.*" matplotlib
fi
swift build -c release --product image-engine --package-path "$root" >&2
exec "$venv/bin/python" "$root/Benchmarks/scripts/serve_load.py" \
    --engine "$root/.build/release/image-engine" --thumbor "$venv/bin/thumbor" --root "$root" "$@"
