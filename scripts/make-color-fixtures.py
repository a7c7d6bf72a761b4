#!/usr/bin/env python3
"""Writes the ICC profiles the colour-management tests and the P3 sample use.

Run once; the outputs are committed (Tests/Fixtures/color/README.md says where each comes from):

- DisplayP3.icc: Display P3 as Apple defines it (DCI-P3 primaries, D65 white, the sRGB tone
  curve), built with Little CMS' own cmsCreateRGBProfile through ctypes.
- FOGRA39L-colprof.icc: a CMYK print profile made by ArgyllCMS' colprof from the FOGRA39L
  characterization data that Debian's icc-profiles-free ships under the Zlib licence.
- AdobeRGB-compatible.icc and Gray.icc: copied from icc-profiles-free (Zlib).

Needs liblcms2-2, argyll and icc-profiles-free (apt-get install argyll icc-profiles-free).
"""
import ctypes
import pathlib
import shutil
import subprocess
import tempfile

OUT = pathlib.Path(__file__).resolve().parent.parent / "Tests" / "Fixtures" / "color"
FREE = pathlib.Path("/usr/share/color/icc")
lcms = ctypes.CDLL("liblcms2.so.2")


class xyY(ctypes.Structure):
    _fields_ = [("x", ctypes.c_double), ("y", ctypes.c_double), ("Y", ctypes.c_double)]


class xyYTriple(ctypes.Structure):
    _fields_ = [("red", xyY), ("green", xyY), ("blue", xyY)]


lcms.cmsBuildParametricToneCurve.restype = ctypes.c_void_p
lcms.cmsBuildParametricToneCurve.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_double)]
lcms.cmsCreateRGBProfile.restype = ctypes.c_void_p
lcms.cmsCreateRGBProfile.argtypes = [ctypes.POINTER(xyY), ctypes.POINTER(xyYTriple), ctypes.c_void_p * 3]
lcms.cmsMLUalloc.restype = ctypes.c_void_p
lcms.cmsMLUalloc.argtypes = [ctypes.c_void_p, ctypes.c_uint]
lcms.cmsMLUsetASCII.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]
lcms.cmsWriteTag.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p]
lcms.cmsSaveProfileToFile.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lcms.cmsSetProfileVersion.argtypes = [ctypes.c_void_p, ctypes.c_double]
lcms.cmsCloseProfile.argtypes = [ctypes.c_void_p]


def text_tag(profile, signature, text):
    mlu = lcms.cmsMLUalloc(None, 1)
    lcms.cmsMLUsetASCII(mlu, b"en", b"US", text.encode())
    lcms.cmsWriteTag(profile, signature, mlu)


def display_p3(path):
    params = (ctypes.c_double * 5)(2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045)
    curve = lcms.cmsBuildParametricToneCurve(None, 4, params)
    white = xyY(0.3127, 0.3290, 1.0)
    primaries = xyYTriple(xyY(0.680, 0.320, 1.0), xyY(0.265, 0.690, 1.0), xyY(0.150, 0.060, 1.0))
    curves = (ctypes.c_void_p * 3)(curve, curve, curve)
    profile = lcms.cmsCreateRGBProfile(ctypes.byref(white), ctypes.byref(primaries), curves)
    lcms.cmsSetProfileVersion(profile, 4.3)
    text_tag(profile, 0x64657363, "Display P3 (image-engine test fixture, Little CMS)")  # 'desc'
    text_tag(profile, 0x63707274, "No copyright, use freely")  # 'cprt'
    lcms.cmsSaveProfileToFile(profile, str(path).encode())
    lcms.cmsCloseProfile(profile)


def fogra39(path):
    with tempfile.TemporaryDirectory() as work:
        shutil.copy(FREE / "FOGRA39L.ti3", work)
        subprocess.run(["colprof", "-ql", "-b", "n",
                        "-D", "FOGRA39L (ArgyllCMS colprof from icc-profiles-free data; image-engine test fixture)",
                        "-C", "Zlib licence: derived from FOGRA39L.ti3 (Kai-Uwe Behrmann, icc-profiles-free)",
                        "FOGRA39L"], cwd=work, check=True, stdout=subprocess.DEVNULL)
        shutil.copy(pathlib.Path(work) / "FOGRA39L.icc", path)


OUT.mkdir(parents=True, exist_ok=True)
display_p3(OUT / "DisplayP3.icc")
fogra39(OUT / "FOGRA39L-colprof.icc")
shutil.copy(FREE / "compatibleWithAdobeRGB1998.icc", OUT / "AdobeRGB-compatible.icc")
shutil.copy(FREE / "Gray.icc", OUT / "Gray.icc")
for file in sorted(OUT.glob("*.icc")):
    print(file.name, file.stat().st_size)
