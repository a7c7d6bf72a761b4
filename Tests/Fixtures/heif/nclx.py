#!/usr/bin/env python3
"""Sets the colour primaries and transfer characteristics (ITU-T H.273 code points) of a file's
nclx colour box in place: heif-enc 1.15 takes --colour_primaries and --transfer_characteristic
but always writes 2 (unspecified). Usage: nclx.py IN OUT PRIMARIES TRANSFER. The matrix
coefficients stay what the encoder used, so the pixels decode as encoded."""
import struct
import sys

source, target, primaries, transfer = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
data = bytearray(open(source, "rb").read())
position = data.find(b"colrnclx")
if position < 0 or data.find(b"colrnclx", position + 1) >= 0:
    sys.exit(f"{source}: not exactly one nclx colour box")
struct.pack_into(">HH", data, position + 8, primaries, transfer)
open(target, "wb").write(data)
