#!/usr/bin/env bash
# The upload-budget benchmark: budget-report (scored with the engine's SSIM and SSIMULACRA2,
# which the allocator maximises) and the same outputs scored independently with scikit-image
# and the PyPI ssimulacra2 package; with the constrained oracles (ConstrainedOracle.swift). About
# 15 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-dependencies.sh --benchmarks
# The PyPI scorer, in a virtualenv that also sees Debian's scikit-image and Pillow.
venv=Benchmarks/.venv-budget
# Debian's Python, whose scikit-image and Pillow install-dependencies.sh installed (a python3 earlier
# on PATH, such as pyenv's, would not see them).
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
# ssimulacra2 0.3.0 calls SciPy's gaussian_filter with `axes` (SciPy 1.11 on; Debian 12 has 1.10);
# NumPy stays at Debian's version, which Debian's scikit-image is built against.
"$venv/bin/python" -c "import ssimulacra2, skimage, scipy; assert tuple(map(int, scipy.__version__.split('.')[:2])) >= (1, 11)" 2>/dev/null \
    || "$venv/bin/pip" install --quiet ssimulacra2==0.3.0 scipy==1.11.4 "numpy==$(/usr/bin/python3 -c 'import numpy; print(numpy.__version__)')"
(cd Benchmarks && swift build -c release --product budget-report >/dev/null)
outputs=$(mktemp -d)
trap 'rm -rf "$outputs"' EXIT
{
    Benchmarks/.build/release/budget-report --outputs "$outputs" --constrained-oracle SampleImages
    "$venv/bin/python" Benchmarks/scripts/budget_ssim.py "$outputs"
} | tee Benchmarks/Results/budget.md
