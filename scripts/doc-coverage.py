#!/usr/bin/env python3
"""Lists public symbols of the library products that have no doc comment; exits 1 if any.

    swift package dump-symbol-graph --minimum-access-level public --skip-synthesized-members
    scripts/doc-coverage.py .build/x86_64-unknown-linux-gnu/symbolgraph MODULE...

A symbol counts as documented when it has its own doc comment, or when it implements a
protocol requirement (`description`, `hash(into:)`, ...) whose documentation it inherits.
Enum cases count too: a case is an API a caller switches over.
"""
import json
import pathlib
import sys

MODULES = sys.argv[2:] or ["ImageCodec", "ImageCache", "ImageBudget", "ImagePipeline", "MultipartForm", "ImageService"]
# Members whose meaning the protocol documents.
INHERITED = {"description", "debugDescription", "hash(into:)", "==(_:_:)", "<(_:_:)", "init(from:)", "encode(to:)",
             "next()", "makeIterator()", "hashValue", "rawValue", "init(rawValue:)", "allCases", "id",
             "defaultValueDescription", "init(argument:)", "errorDescription"}

directory = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".build/x86_64-unknown-linux-gnu/symbolgraph")
missing = []
total = 0
for module in MODULES:
    graph = json.loads((directory / f"{module}.symbols.json").read_text())
    implements = {rel["source"] for rel in graph.get("relationships", [])
                  if rel["kind"] in ("requirementOf", "defaultImplementationOf", "overrides")}
    for symbol in graph["symbols"]:
        if symbol.get("accessLevel") not in ("public", "open"):
            continue
        path = ".".join(symbol["pathComponents"])
        name = symbol["pathComponents"][-1]
        if path.startswith("FuzzingEntryPoints") or symbol["kind"]["identifier"] == "swift.extension":
            continue
        total += 1
        documented = bool(symbol.get("docComment", {}).get("lines"))
        if not documented and (name in INHERITED or symbol["identifier"]["precise"] in implements):
            continue
        if not documented:
            missing.append(f"{module}.{path} ({symbol['kind']['displayName']})")

for line in sorted(missing):
    print("undocumented:", line)
print(f"{total - len(missing)} of {total} public symbols documented", file=sys.stderr)
sys.exit(1 if missing else 0)
