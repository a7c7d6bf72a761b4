#!/usr/bin/env bash
# serve's mb: against imgproxy's quality loop (see byte_cap.py), on the outside photos' JPEGs and
# two sample photos; writes Benchmarks/Results/byte-cap.md. About 10 minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=Benchmarks/.venv-budget
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -c "import ssimulacra2, PIL" 2>/dev/null \
    || "$venv/bin/pip" install --quiet ssimulacra2==0.3.0 scipy==1.11.4 "numpy==$(/usr/bin/python3 -c 'import numpy; print(numpy.__version__)')"
swift build -c release --product image-engine >/dev/null
Benchmarks/scripts/outside-photos.sh >/dev/null
{
    echo "# mb: against imgproxy's quality loop"
    echo
    echo "\`Benchmarks/scripts/byte-cap.sh\` at $(git rev-parse --short HEAD). SSIMULACRA2 (PyPI ssimulacra2 0.3.0) against serve's lossless render of the same size."
    echo
    "$venv/bin/python" Benchmarks/scripts/byte_cap.py .build/release/image-engine Benchmarks/.outside-photos/*.jpg \
        SampleImages/Bridge.jpg SampleImages/ColorfulCups.jpg
} > Benchmarks/Results/byte-cap.md
tail -4 Benchmarks/Results/byte-cap.md
