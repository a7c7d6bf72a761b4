#!/usr/bin/env bash
# The ledger's gate: in the code a request's work runs through (the codec, the pipeline, the
# service), a buffer whose size comes from an image or from outside is made only through the
# charged types in Sources/ImageCodec/Admission (ChargedArray, Data.charged, ChargedBuffer),
# which charge the request's MemoryLedger as they allocate. Any other allocation must say on its
# line why it is small (`// small: …`, a bound that no input can raise) or which charged owner
# holds it (`// charged: …`). Run by scripts/test.sh; prints each offending line.
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='\[[A-Za-z0-9_<>.]+\]\((repeating|unsafeUninitializedCapacity)|(^|[^A-Za-z])Array\(repeating|\.allocate\((capacity|byteCount)|\b(malloc|calloc|realloc)\(|Data\((count|capacity|repeating):|ByteBuffer\((bytes|repeating)|\.buffer\(capacity|reserveCapacity\(|bytesNoCopy:'
found=$(grep -rnE "$pattern" Sources/ImageCodec Sources/ImagePipeline Sources/ImageService --include='*.swift' \
    | grep -v '^Sources/ImageCodec/Admission/' \
    | grep -vE '// (small|charged): ' \
    | grep -vE '^[^:]+:[0-9]+:\s*///' || true)
if [[ -n "$found" ]]; then
    echo "check-allocations: buffers made outside the ledger's charged types (mark a small one '// small: why'):" >&2
    echo "$found" >&2
    exit 1
fi
echo "check-allocations: every buffer in the render path is charged or marked small" >&2
