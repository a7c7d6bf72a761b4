"""Turns `swift package benchmark --target CodecBenchmarks` output into the README's table."""
import re
import sys

text = open(sys.argv[1]).read()
results = {}
for match in re.finditer(r"\n(thumbnail 1080 q85|full decode \+ resample \(reference\)): (\S+(?: untagged)?)\n(.*?)╛", text, re.S):
    kind, name, body = match.groups()
    metrics = {}
    for line in body.split("\n"):
        cells = [cell.strip() for cell in line.split("│") if cell.strip()]
        if len(cells) >= 4:
            metrics[cells[0]] = cells[3]  # p50
    results.setdefault(name, {})[kind] = metrics


def milliseconds(metrics):
    key = next(k for k in metrics if "wall clock" in k)
    scale = 1 if "(ms)" in key else 0.001 if "(μs)" in key else 1000
    return float(metrics[key]) * scale


def value(metrics, word):
    return next(v for k, v in metrics.items() if word in k)


print("| file | thumbnail: wall | reference: wall | ratio | thumbnail: peak RSS | reference: peak RSS | thumbnail: mallocs |")
print("|---|---|---|---|---|---|---|")
for name in sorted(n for n in results if "full decode + resample (reference)" in results[n]):
    ours, reference = results[name]["thumbnail 1080 q85"], results[name]["full decode + resample (reference)"]
    print(f"| {name} | {milliseconds(ours):.0f} ms | {milliseconds(reference):.0f} ms | "
          f"{milliseconds(ours) / milliseconds(reference):.2f} | {value(ours, 'resident')} MB | "
          f"{value(reference, 'resident')} MB | {value(ours, 'Malloc')} |")

# The price of colour management: the same P3 file with and without its profile.
if "Dragonfly-P3.jpg untagged" in results:
    tagged = milliseconds(results["Dragonfly-P3.jpg"]["thumbnail 1080 q85"])
    untagged = milliseconds(results["Dragonfly-P3.jpg untagged"]["thumbnail 1080 q85"])
    print(f"\nDragonfly-P3.jpg (13.4 MP, Display P3) thumbnail: {tagged:.1f} ms converted to sRGB, "
          f"{untagged:.1f} ms with the profile stripped: conversion adds {100 * (tagged / untagged - 1):+.1f}%")
