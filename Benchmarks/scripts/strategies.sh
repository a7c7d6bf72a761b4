#!/usr/bin/env bash
# The cache-strategy benchmark in one command: installs what is missing (the engine's C
# libraries; matplotlib from PyPI for the charts), builds in release, starts the loopback image
# server, runs every strategy on the same scrolled grid, and writes Benchmarks/Results/
# strategies.md, strategies.json and strategies-*.png. About 23 minutes on 2 cores with the
# default 3 repetitions (the committed results took 1315 s); --quick (128 MiB only, one
# repetition) about 8.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-dependencies.sh
python3 -c "import matplotlib" 2>/dev/null || python3 -m pip install --quiet matplotlib
exec python3 Benchmarks/scripts/strategies.py "$@"
