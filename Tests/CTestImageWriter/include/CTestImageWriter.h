// Test-only: writes CMYK/YCCK JPEGs (which the engine's encoder never produces) and PNGs of any colour type, bit depth and interlace with libpng, so the
// decoder can be checked against every combination the format allows.
#ifndef C_TEST_IMAGE_WRITER_H
#define C_TEST_IMAGE_WRITER_H
#include <stddef.h>
#include <stdint.h>

/// `samples`: packed rows exactly as PNG stores them (bit_depth < 8 packed MSB first,
/// 16-bit big-endian). `palette` is RGB triples; `trans` is the tRNS payload as libpng takes
/// it: alpha bytes for palette images, otherwise one 16-bit gray or RGB colour (trans_gray /
/// trans_rgb). Returns 0 on success; *out is malloc'd.
int test_png_write(uint32_t width, uint32_t height, int bit_depth, int color_type, int interlaced,
                   const uint8_t *samples, size_t row_bytes,
                   const uint8_t *palette, int palette_entries,
                   const uint8_t *trans_alpha, int trans_count,
                   int trans_gray, int trans_red, int trans_green, int trans_blue,
                   uint8_t **out, size_t *out_length);
void test_png_free(void *pointer);

/// Writes a 4-component JPEG from interleaved CMYK samples, stored as CMYK or converted to YCCK.
/// libjpeg adds an Adobe marker, so readers treat the samples as Adobe-inverted (0 = full ink).
/// `icc_profile` (may be NULL) is embedded in APP2 markers.
int test_jpeg_write_cmyk(uint32_t width, uint32_t height, const uint8_t *cmyk, int as_ycck,
                         const uint8_t *icc_profile, unsigned int icc_length,
                         uint8_t **out, unsigned long *out_length);
/// Writes an RGB JPEG with a restart interval (in MCUs, 0 for none), optionally progressive:
/// features the engine's own encoder does not produce. `progressive`: 0 baseline, 1 libjpeg's
/// simple progression, N > 1 one scan per AC coefficient, component and bit over N bits
/// (1 + 189 × N scans).
int test_jpeg_write_rgb(uint32_t width, uint32_t height, const uint8_t *rgb, int quality, int restart_interval,
                        int progressive, uint8_t **out, unsigned long *out_length);
/// Writes a progressive JPEG of `components` (1: gray, 3: RGB at libjpeg's default 4:2:0) with
/// a scan script libjpeg's simple progression does not use: 0 spectral selection only (bands
/// 1-2, 3-9, 10-63), 1 deep successive approximation (DC with 3 bits and AC with 4 bits held
/// back, each component's DC in its own first scan, then one refinement scan per bit).
int test_jpeg_write_progressive(uint32_t width, uint32_t height, const uint8_t *samples, int components, int quality,
                                int restart_interval, int script, uint8_t **out, unsigned long *out_length);
/// Writes a sequential JPEG of `components` (1: gray, 3: RGB at libjpeg's default 4:2:0).
/// `layout`: bit 0 optimised Huffman tables (else T.81's example tables), bit 1 one scan per
/// component (else one interleaved scan).
int test_jpeg_write_sequential(uint32_t width, uint32_t height, const uint8_t *samples, int components, int quality,
                               int restart_interval, int layout, uint8_t **out, unsigned long *out_length);
/// zlib's deflate at level 9 (for hand-made PNG chunks). *out is malloc'd.
int test_deflate(const uint8_t *input, size_t length, uint8_t **out, size_t *out_length);
#endif
