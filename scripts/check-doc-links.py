#!/usr/bin/env python3
"""Fails on a link in the repository's Markdown to a file or an anchor that does not exist.

    scripts/check-doc-links.py

Checks every Markdown file git tracks (README.md, CONTRIBUTING.md, CHANGELOG.md,
Benchmarks/README.md, the DocC articles, ...): relative links and images must name a file or
directory that exists, and a `#fragment` must name a heading of the target (GitHub's anchor
rules). In a DocC catalog an image or link by bare name may also be a file of the catalog's
`Resources/`. Web links and DocC's own `<doc:...>` and ``Symbol`` links are left to their
tools (DocC checks its links with warnings as errors).
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")


def markdown_files():
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "*.md"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.split()
    return [ROOT / name for name in listed if (ROOT / name).exists()]


def prose(path):
    return INLINE_CODE.sub("", FENCE.sub("", path.read_text()))


def anchors(path):
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered."""
    seen = {}
    result = set()
    for line in FENCE.sub("", path.read_text()).splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(1).replace("`", "").lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def main():
    broken = []
    for path in markdown_files():
        catalog = next((parent for parent in path.parents if parent.suffix == ".docc"), None)
        for target in LINK.findall(prose(path)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("<"):
                continue
            file_part, _, fragment = target.partition("#")
            if file_part:
                resolved = (path.parent / file_part).resolve()
                if not resolved.exists() and catalog is not None:
                    resolved = catalog / "Resources" / file_part
                if not resolved.exists():
                    broken.append(f"{path.relative_to(ROOT)}: {target}: no such file")
                    continue
            else:
                resolved = path
            if fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
                broken.append(f"{path.relative_to(ROOT)}: {target}: no heading with that anchor")
    for line in broken:
        print("broken link:", line)
    print(f"links checked in {len(markdown_files())} Markdown files: {len(broken)} broken", file=sys.stderr)
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
