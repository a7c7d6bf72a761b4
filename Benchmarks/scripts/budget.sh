#!/usr/bin/env bash
# The upload-budget benchmark: budget-report (scored with the engine's SSIM, which the
# allocator maximises) and the same outputs scored independently with scikit-image.
# About 2 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-dependencies.sh --benchmarks
(cd Benchmarks && swift build -c release --product budget-report >/dev/null)
outputs=$(mktemp -d)
trap 'rm -rf "$outputs"' EXIT
Benchmarks/.build/release/budget-report --outputs "$outputs" SampleImages
/usr/bin/python3 Benchmarks/scripts/budget_ssim.py "$outputs"
