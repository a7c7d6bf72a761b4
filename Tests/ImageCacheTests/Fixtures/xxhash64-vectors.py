"""Reference XXH64 values for XXHash64Tests, from the `xxhash` PyPI package (the reference C
implementation's Python binding). Regenerate with: pip install xxhash && python3 xxhash64-vectors.py"""
import xxhash

inputs = {
    "empty": b"",
    "a": b"a",
    "abc": b"abc",
    "32 bytes": b"0123456789abcdef0123456789abcdef",
    "771 bytes": bytes(range(256)) * 3 + b"xyz",
}
for name, data in inputs.items():
    print(name, len(data), hex(xxhash.xxh64(data, seed=0).intdigest()), hex(xxhash.xxh64(data, seed=12345).intdigest()))
