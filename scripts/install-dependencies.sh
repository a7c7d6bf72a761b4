#!/usr/bin/env bash
# Installs what the engine needs and is missing: the C libraries (found with pkg-config) and,
# with --benchmarks, the tools the comparison script measures against. Uses apt (run as root).
# Swift itself must already be installed (https://www.swift.org/install/linux/).
set -euo pipefail

# publicsuffix: the Public Suffix List, from which serve's per-origin shares (DNS lookups, memory)
# take a host's registrable domain.
# libgif-dev: giflib, the LZW decoder GIF frames are handed to (the block walk is the engine's).
packages=(pkg-config libjpeg-dev libpng-dev liblcms2-dev libwebp-dev libheif-dev libavif-dev libgif-dev publicsuffix)
if [[ "${1:-}" == "--tests" ]]; then
    # transicc: Little CMS' own converter, the reference the colour-management tests check against.
    packages+=(liblcms2-utils)
    # dwebp, heif-convert and avifdec: libwebp's, libheif's and libavif's own decoders, the
    # WebP, HEIC and AVIF tests' references (heif-enc made the HEIF fixtures).
    packages+=(webp libheif-examples libavif-bin)
    # Pillow: a second JPEG decoder for the perceptual encoder's outputs.
    packages+=(python3-pil)
    # nginx and curl: the smoke test of scripts/cluster.sh (nginx in front of the service).
    packages+=(nginx-light curl)
elif [[ "${1:-}" == "--benchmarks" ]]; then
    # vipsthumbnail is the reference; Pillow + scikit-image compute the SSIM reference; cwebp,
    # heif-enc and heif-convert make the WebP, HEIC and AVIF sources and decode the references.
    packages+=(libvips-tools python3-skimage python3-pil time webp libheif-examples)
fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
for package in "${packages[@]}"; do
    installed "$package" || missing+=("$package")
done
export DEBIAN_FRONTEND=noninteractive
updated=false
if (( ${#missing[@]} > 0 )); then
    apt-get update -qq
    updated=true
fi
# Ubuntu 24.04 and Debian 13 package libheif's codecs apart, as plug-ins: HEVC decoding, all the
# engine asks of libheif (AVIF goes through libavif); Debian 12 builds it into libheif1.
for plugin in libheif-plugin-libde265; do
    if ! installed "$plugin" && apt-cache show "$plugin" >/dev/null 2>&1; then missing+=("$plugin"); fi
done
if (( ${#missing[@]} > 0 )); then
    echo "Installing: ${missing[*]}" >&2
    [[ "$updated" == true ]] || apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1; then
    echo "swift is not on PATH: install a Swift 6.2+ toolchain first (https://www.swift.org/install/linux/)" >&2
    exit 1
fi
pkg-config --exists libjpeg libpng lcms2 libwebp libheif || { echo "pkg-config cannot find libjpeg, libpng, lcms2, libwebp and libheif" >&2; exit 1; }
