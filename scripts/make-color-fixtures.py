#!/usr/bin/env python3
"""Writes the ICC profiles the colour-management tests and the P3 sample use.

Run once; the outputs are committed (Tests/Fixtures/color/README.md says where each comes from):

- DisplayP3.icc: Display P3 as Apple defines it (DCI-P3 primaries, D65 white, the sRGB tone
  curve), built with Little CMS' own cmsCreateRGBProfile through ctypes.
- FOGRA39L-colprof.icc: a CMYK print profile made by ArgyllCMS' colprof from the FOGRA39L
  characterization data that Debian's icc-profiles-free ships under the Zlib licence.
- AdobeRGB-compatible.icc and Gray.icc: copied from icc-profiles-free (Zlib).
- ProPhoto.icc: ROMM RGB (ProPhoto) primaries, D50 white, gamma 1.8, built the same way.
- P3-matrix-and-LUT.icc: Display P3's matrix/TRC tags plus an A2B0 lookup table (17 nodes a
  side) sampled from the same profile: Little CMS converts through the table, so a converter
  that reads the matrix instead models a different profile between the nodes.

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


def save(profile, path, description):
    lcms.cmsSetProfileVersion(profile, 4.3)
    text_tag(profile, 0x64657363, description)  # 'desc'
    text_tag(profile, 0x63707274, "No copyright, use freely")  # 'cprt'
    lcms.cmsSaveProfileToFile(profile, str(path).encode())
    lcms.cmsCloseProfile(profile)


def prophoto(path):
    params = (ctypes.c_double * 1)(1.8)
    curve = lcms.cmsBuildParametricToneCurve(None, 1, params)
    white = xyY(0.3457, 0.3585, 1.0)
    primaries = xyYTriple(xyY(0.7347, 0.2653, 1.0), xyY(0.1596, 0.8404, 1.0), xyY(0.0366, 0.0001, 1.0))
    curves = (ctypes.c_void_p * 3)(curve, curve, curve)
    save(lcms.cmsCreateRGBProfile(ctypes.byref(white), ctypes.byref(primaries), curves), path,
         "ProPhoto RGB (ROMM primaries, gamma 1.8; image-engine test fixture, Little CMS)")


SAMPLER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_uint16), ctypes.POINTER(ctypes.c_uint16), ctypes.c_void_p)
lcms.cmsOpenProfileFromFile.restype = ctypes.c_void_p
lcms.cmsOpenProfileFromFile.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
lcms.cmsCreateXYZProfile.restype = ctypes.c_void_p
lcms.cmsCreateTransform.restype = ctypes.c_void_p
lcms.cmsCreateTransform.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint]
lcms.cmsDoTransform.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint]
lcms.cmsPipelineAlloc.restype = ctypes.c_void_p
lcms.cmsPipelineAlloc.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint]
lcms.cmsStageAllocCLut16bit.restype = ctypes.c_void_p
lcms.cmsStageAllocCLut16bit.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p]
lcms.cmsStageSampleCLut16bit.argtypes = [ctypes.c_void_p, SAMPLER, ctypes.c_void_p, ctypes.c_uint]
lcms.cmsPipelineInsertStage.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
lcms.cmsStageAllocToneCurves.restype = ctypes.c_void_p
lcms.cmsStageAllocToneCurves.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p]


def p3_matrix_and_lut(path, p3_path):
    source = lcms.cmsOpenProfileFromFile(str(p3_path).encode(), b"r")
    xyz = lcms.cmsCreateXYZProfile()
    # TYPE_RGB_16 and TYPE_XYZ_16: the PCS encoding an A2B0 table in an XYZ-PCS profile holds.
    type_rgb_16, type_xyz_16 = 0x4001A, 0x9001A
    transform = lcms.cmsCreateTransform(source, type_rgb_16, xyz, type_xyz_16, 1, 0x0040)  # relative, NOCACHE

    def sample(inputs, outputs, _):
        rgb = (ctypes.c_uint16 * 3)(inputs[0], inputs[1], inputs[2])
        out = (ctypes.c_uint16 * 3)()
        lcms.cmsDoTransform(transform, rgb, out, 1)
        for i in range(3):
            outputs[i] = out[i]
        return 1

    sampler = SAMPLER(sample)
    pipeline = lcms.cmsPipelineAlloc(None, 3, 3)
    clut = lcms.cmsStageAllocCLut16bit(None, 17, 3, 3, None)
    lcms.cmsStageSampleCLut16bit(clut, sampler, None, 0)
    # Identity curves around the table: the shape an A2B tag's writer needs.
    for stage in (lcms.cmsStageAllocToneCurves(None, 3, None), clut, lcms.cmsStageAllocToneCurves(None, 3, None)):
        lcms.cmsPipelineInsertStage(pipeline, 1, stage)  # cmsAT_END
    profile = lcms.cmsOpenProfileFromFile(str(p3_path).encode(), b"r")
    lcms.cmsWriteTag(profile, 0x41324230, pipeline)  # 'A2B0'
    save(profile, path, "Display P3 matrix/TRC plus an A2B0 table (image-engine test fixture, Little CMS)")


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
prophoto(OUT / "ProPhoto.icc")
p3_matrix_and_lut(OUT / "P3-matrix-and-LUT.icc", OUT / "DisplayP3.icc")
for file in sorted(OUT.glob("*.icc")):
    print(file.name, file.stat().st_size)
