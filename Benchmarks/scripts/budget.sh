#!/usr/bin/env bash
# The upload-budget benchmark: budget-report (scored with the engine's SSIM and SSIMULACRA2,
# which the allocator maximises) and the same outputs scored independently with scikit-image
# and the PyPI ssimulacra2 package. About 6 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-dependencies.sh --benchmarks
# The PyPI scorer, in a virtualenv that also sees Debian's scikit-image and Pillow.
venv=Benchmarks/.venv-budget
[ -x "$venv/bin/python" ] || python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -c "import ssimulacra2" 2>/dev/null || "$venv/bin/pip" install --quiet ssimulacra2==0.3.0
(cd Benchmarks && swift build -c release --product budget-report >/dev/null)
outputs=$(mktemp -d)
trap 'rm -rf "$outputs"' EXIT
{
    Benchmarks/.build/release/budget-report --outputs "$outputs" SampleImages
    "$venv/bin/python" Benchmarks/scripts/budget_ssim.py "$outputs"
} | tee Benchmarks/Results/budget.md
