"""jpegli's outputs for jpeg-encoder-report: every NAME-SIZE.png in REFERENCES encoded with jpegli
(PyPI pyjpegli, its default settings: 4:2:0, adaptive quantization) at each quality, then made
progressive losslessly with jpegtran (-optimize -progressive), keeping the smaller of the two,
so jpegli is compared at its best against encoders that write progressive JPEGs.

Usage: python jpegli_encode.py REFERENCES OUTPUT Q,Q,...
"""
import os
import subprocess
import sys
import tempfile

import pyjpegli
from PIL import Image


def main():
    references, output, qualities = sys.argv[1], sys.argv[2], [int(q) for q in sys.argv[3].split(",")]
    os.makedirs(output, exist_ok=True)
    for name in sorted(os.listdir(references)):
        if not name.endswith(".png"):
            continue
        image = Image.open(os.path.join(references, name)).convert("RGB")
        for quality in qualities:
            baseline = pyjpegli.encode(image.tobytes(), image.width, image.height, quality)
            with tempfile.NamedTemporaryFile(suffix=".jpg") as source:
                source.write(baseline)
                source.flush()
                progressive = subprocess.run(
                    ["jpegtran", "-copy", "none", "-optimize", "-progressive", source.name],
                    check=True, capture_output=True).stdout
            best = progressive if len(progressive) < len(baseline) else baseline
            with open(os.path.join(output, f"{name[:-4]}-q{quality}.jpg"), "wb") as file:
                file.write(best)


if __name__ == "__main__":
    main()
