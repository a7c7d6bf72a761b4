#!/usr/bin/env bash
# The library modules, one per line: every `.library` product of Package.swift (the docs gate
# and scripts/docs.sh cover exactly these, so a module added later is covered too).
set -euo pipefail
cd "$(dirname "$0")/.."
sed -n 's/^ *\.library(name: "\([A-Za-z]*\)".*/\1/p' Package.swift
