#ifndef C_IMAGE_KERNELS_H
#define C_IMAGE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/// Hot loops of the codec, each in two versions that give the same bytes: a portable one, for
/// any x86-64 or ARM CPU, and one for the CPUs that have the instructions it needs, chosen at
/// run time. Both compute every float with the same operations in the same order and no
/// contraction into fused multiply-adds, so outputs (and the service's ETags) do not depend on
/// the CPU. `IMAGE_ENGINE_PORTABLE_KERNELS=1` in the environment forces the portable versions.

/// Which version the calls below use: 0 portable, 1 AVX2.
int iec_kernels_level(void);

/// Whether code outside this target may use BMI2's pdep: on the AVX2 level, on a CPU that has
/// it and runs it in one step (not AMD's family 17h, Zen 1 and 2, where it is microcode).
int iec_kernels_fast_bit_deposit(void);

/// The resampler's vertical pass: tap t's row starts at `ring + offsets[t]`; for each of
/// `count` floats x, `sum[x] = ((0 + w[0]·row0[x]) + w[1]·row1[x]) + …` over `taps` rows,
/// each product rounded to float before it is added.
void iec_resample_vertical(const float *ring, const ptrdiff_t *offsets, const float *weights, int taps, float *sum, size_t count);

/// The resampler's horizontal pass over pixels of four floats: output pixel x (four floats at
/// `destination + 4x`) sums `counts[x]` taps, tap t being the four weights at
/// `weights + 4·(stride·x + t)` times source pixel `starts[x] + t`, lane by lane: the even taps
/// in tap order from 0, the odd taps likewise, then even + odd, each product rounded to float
/// before it is added.
void iec_resample_horizontal4(const float *source, const float *weights, const ptrdiff_t *starts, const ptrdiff_t *counts, int stride, float *destination, size_t width);

/// The resampler's input: `width` RGB8 pixels as four floats each (R, G, B, 0) at `pixels`.
void iec_rgb_to_float4(const uint8_t *rgb, size_t width, float *pixels);

/// The resampler's box pre-reduction, over a row of `width` pixels of `lanes` floats: block b
/// (pixels b·box ..< min(width, b·box + box)) adds each of its pixels, in order, to its running
/// sum at `sums + lanes·b`. One version on every CPU.
void iec_box_accumulate(const float *restrict pixels, size_t width, size_t lanes, size_t box, float *restrict sums);

/// Ends a row of blocks: `pixels + lanes·b` becomes (1 / (columns · rows)) · the sum of block b,
/// where columns is how many pixels of the row the block covers, and the sums return to 0.
void iec_box_average(float *restrict sums, size_t width, size_t lanes, size_t box, size_t rows, float *restrict pixels);

/// The same for pixels of one float (gray), one weight per tap at `weights + stride·x + t`; one
/// version on every CPU.
void iec_resample_horizontal1(const float *source, const float *weights, const ptrdiff_t *starts, const ptrdiff_t *counts, int stride, float *destination, size_t width);

/// A YCbCr → RGB matrix in Q16 fixed point, with the range's scaling folded in:
/// R = luma·(Y − luma_offset) + cr_r·Cr', G = luma·(Y − luma_offset) − cb_g·Cb' − cr_g·Cr',
/// B = luma·(Y − luma_offset) + cb_b·Cb', where Cb' and Cr' are the samples minus 128.
typedef struct {
    int32_t luma;
    int32_t luma_offset;
    int32_t cr_r, cb_g, cr_g, cb_b;
} iec_ycbcr_matrix;

/// One row of 8-bit YCbCr to `width` interleaved 8-bit RGB pixels. Chroma comes from two rows
/// of `chroma_width` samples, weighted `near_quarters`/4 and the rest (4:2:0's vertical
/// interpolation; 4 for one row); with `horizontal_shift` 1 a sample serves two columns, sited
/// on the even one (H.273 chroma location 0) and averaged with the next on the odd one; with 0
/// one sample a column. In integers: chroma in eighths of a level, products in Q19, rounded
/// half up and clamped (see ycbcr_to_rgb.c). `scratch` holds 2·chroma_width int32s.
void iec_ycbcr_to_rgb_row(const uint8_t *luma, const uint8_t *cb_near, const uint8_t *cr_near, const uint8_t *cb_far,
                          const uint8_t *cr_far, int near_quarters, int horizontal_shift, size_t width, size_t chroma_width,
                          const iec_ycbcr_matrix *matrix, int32_t *scratch, uint8_t *rgb);

/// A scaled inverse DCT: the n×n samples (n = 2, 3, 4, 5, 6, 7, 10, 12 or 14; others write
/// nothing) of an 8×8 block from its lowest min(n, 8)² coefficients (natural order, dequantized
/// by `quantization`), written at `column` of `rows[0..<n]`: the band-limited signal of T.81's
/// IDCT sampled at the centres of n pixels across the block, in float, plus 128, rounded half
/// up and clamped to 0...255 (see idct_scaled.c for the order of operations every version
/// keeps). The scales where libjpeg-turbo averages (2/8, 4/8) or runs plain C (the others).
void iec_idct_scaled(int n, const short *coefficients, const unsigned short *quantization, unsigned char *const *rows, unsigned column);
/// Whether `iec_idct_scaled` has a basis for n.
int iec_idct_scaled_supports(int n);

/// The perceptual JPEG encoder's colour conversion of `count` RGB8 pixels: y = 0.299R + 0.587G +
/// 0.114B − 128, cb = −0.1687359R − 0.3312641G + 0.5B, cr = 0.5R − 0.4186876G − 0.0813124B, each
/// summed left to right with every product rounded to float before it is added.
void iec_rgb_to_ycbcr(const unsigned char *rgb, size_t count, float *y, float *cb, float *cr);

/// The perceptual JPEG encoder's forward DCT of one block (64 floats, row y at 8y: level-shifted
/// samples), in the order of operations fdct_quantize.c writes out (derived in the "Encoding
/// JPEG" article; ForwardDCT.swift holds the constants): afterwards block[8u + v] is F(u, v) times
/// the column pass's scale (2√2 for u = 0, 2 otherwise). `transposedBasis` is Mᵀ's rows (64
/// floats) and `cosines[n]` cos(nπ/16), both as the encoder computes them.
void iec_fdct(float *block, const float *transposedBasis, const float *cosines);
/// The same transform of `count` blocks side by side, each coefficient then times
/// `reciprocals[i]`, rounded to nearest (ties to even) and saturated to 16 bits, or 0 when its
/// magnitude is below deadZone[i] + strengths[b]·maskedDeadZone[i]. Block b's row y is the 8
/// floats at samples + 8b + stride·y; its coefficients go to coefficients + 64b (natural order).
void iec_fdct_quantize_row(const float *samples, size_t stride, size_t count, const float *strengths,
                           const float *transposedBasis, const float *cosines, const float *reciprocals,
                           const float *deadZone, const float *maskedDeadZone, short *coefficients);

/// The masking field's luma ×256 of `count` RGB8 pixels: 77R + 150G + 29B, in integers.
void iec_rgb_to_luma256(const unsigned char *rgb, size_t count, int32_t *luma);
/// The masking field's activity, one row: for each 8-pixel block of the `width` pixels of
/// `centre`, the sum of |4c − left − right − above − below| (an edge pixel's missing neighbour
/// is itself), in 32-bit integers, converted to float and added to `blocks[block]`.
void iec_masking_row(const int32_t *above, const int32_t *centre, const int32_t *below, size_t width, float *blocks);

/// The quality metrics' Gaussian along one direction: `lines` holds 2·radius + 1 row pointers
/// (tap order), `window` as many weights, symmetric; for each of `count` floats x,
/// `out[x] = w[r]·line_r[x]`, then for t = 0, 1, …, r − 1, `out[x] += w[t]·(line_t[x] + line_{2r−t}[x])`,
/// each sum and product rounded to float in that order.
void iec_convolve_symmetric(const float *const *lines, const float *window, int radius, float *out, size_t count);

/// SSIMULACRA2's positive XYB of `count` linear-light pixels, in place (R, G, B in; X, Y, B out):
/// per pixel and row k of the row-major 3×3 `matrix`, m_k = ∛max(((w0·R + w1·G) + w2·B) + bias, 0)
/// − bias_root (the cube root an exponent-thirding guess and two Newton steps, see
/// positive_xyb.c), then X = 0.5(m0 − m1)·14 + 0.42, Y = 0.5(m0 + m1) + 0.01, B = (m2 − 0.5(m0 + m1))
/// + 0.55, each operation rounded to float in that order.
void iec_positive_xyb(float *r, float *g, float *b, size_t count, const float *matrix, float bias, float bias_root);

/// SSIM's map summed over the first ⌊count/8⌋·8 pixels of a row, from the windowed statistics
/// (means mx, my; mean squares xx, yy; mean product xy): per pixel ((2·mx·my + c1)·(2·(xy − mx·my)
/// + c2)) / (((mx² + my²) + c1)·(((xx − mx²) + (yy − my²)) + c2)), pixel k added to lane k mod 8 of
/// `lanes` (8 floats, zeroed first). Returns how many pixels it summed.
size_t iec_ssim_row_lanes(const float *mx, const float *xx, const float *my, const float *yy, const float *xy,
                          size_t count, float c1, float c2, float *lanes);
/// SSIMULACRA2's maps summed the same way (see metric_rows.c for each map's operations): `lanes`
/// holds 48 floats, eight each for the SSIM map, its fourth power, the artefact map, its fourth
/// power, the detail-lost map and its fourth power; the first sixteen stay zero without
/// `with_ssim` (and `s11`, `s22`, `s12` are then not read). Returns how many pixels it summed.
size_t iec_ssimulacra2_row_lanes(const float *x1, const float *mu1, const float *s11, const float *x2, const float *mu2,
                                 const float *s22, const float *s12, size_t count, int with_ssim, float c2, float *lanes);
/// One pixel of SSIM's map, the row kernel's definition: for the pixels past its last lane.
float iec_ssim_pixel(float mx, float xx, float my, float yy, float xy, float c1, float c2);
/// One pixel of SSIMULACRA2's maps, the row kernel's definition: `terms` gets the SSIM map (0
/// without `with_ssim`), its fourth power, the artefact map, its fourth power, the detail-lost
/// map and its fourth power.
void iec_ssimulacra2_pixel(float x1, float mu1, float s11, float x2, float mu2, float s22, float s12, int with_ssim, float c2,
                           float terms[6]);

/// The two versions of each kernel, for tests that compare them; `_avx2` only when
/// `iec_kernels_level()` is 1 without the override, i.e. the CPU has AVX2.
void iec_resample_horizontal4_portable(const float *source, const float *weights, const ptrdiff_t *starts, const ptrdiff_t *counts, int stride, float *destination, size_t width);
void iec_resample_horizontal4_avx2(const float *source, const float *weights, const ptrdiff_t *starts, const ptrdiff_t *counts, int stride, float *destination, size_t width);
void iec_idct_scaled_portable(int n, const short *coefficients, const unsigned short *quantization, unsigned char *const *rows, unsigned column);
void iec_idct_scaled_avx2(int n, const short *coefficients, const unsigned short *quantization, unsigned char *const *rows, unsigned column);
void iec_rgb_to_float4_portable(const uint8_t *rgb, size_t width, float *pixels);
void iec_rgb_to_float4_avx2(const uint8_t *rgb, size_t width, float *pixels);
void iec_rgb_to_ycbcr_portable(const unsigned char *rgb, size_t count, float *y, float *cb, float *cr);
void iec_rgb_to_ycbcr_avx2(const unsigned char *rgb, size_t count, float *y, float *cb, float *cr);
void iec_fdct_portable(float *block, const float *transposedBasis, const float *cosines);
void iec_fdct_avx2(float *block, const float *transposedBasis, const float *cosines);
void iec_fdct_quantize_row_portable(const float *samples, size_t stride, size_t count, const float *strengths,
                                    const float *transposedBasis, const float *cosines, const float *reciprocals,
                                    const float *deadZone, const float *maskedDeadZone, short *coefficients);
void iec_fdct_quantize_row_avx2(const float *samples, size_t stride, size_t count, const float *strengths,
                                const float *transposedBasis, const float *cosines, const float *reciprocals,
                                const float *deadZone, const float *maskedDeadZone, short *coefficients);
void iec_ycbcr_to_rgb_row_portable(const uint8_t *luma, const uint8_t *cb_near, const uint8_t *cr_near, const uint8_t *cb_far,
                                   const uint8_t *cr_far, int near_quarters, int horizontal_shift, size_t width, size_t chroma_width,
                                   const iec_ycbcr_matrix *matrix, int32_t *scratch, uint8_t *rgb);
void iec_ycbcr_to_rgb_row_avx2(const uint8_t *luma, const uint8_t *cb_near, const uint8_t *cr_near, const uint8_t *cb_far,
                               const uint8_t *cr_far, int near_quarters, int horizontal_shift, size_t width, size_t chroma_width,
                               const iec_ycbcr_matrix *matrix, int32_t *scratch, uint8_t *rgb);
void iec_rgb_to_luma256_portable(const unsigned char *rgb, size_t count, int32_t *luma);
void iec_rgb_to_luma256_avx2(const unsigned char *rgb, size_t count, int32_t *luma);
void iec_masking_row_portable(const int32_t *above, const int32_t *centre, const int32_t *below, size_t width, float *blocks);
void iec_masking_row_avx2(const int32_t *above, const int32_t *centre, const int32_t *below, size_t width, float *blocks);
void iec_resample_vertical_portable(const float *ring, const ptrdiff_t *offsets, const float *weights, int taps, float *sum, size_t count);
void iec_resample_vertical_avx2(const float *ring, const ptrdiff_t *offsets, const float *weights, int taps, float *sum, size_t count);
void iec_convolve_symmetric_portable(const float *const *lines, const float *window, int radius, float *out, size_t count);
void iec_convolve_symmetric_avx2(const float *const *lines, const float *window, int radius, float *out, size_t count);
void iec_positive_xyb_portable(float *r, float *g, float *b, size_t count, const float *matrix, float bias, float bias_root);
void iec_positive_xyb_avx2(float *r, float *g, float *b, size_t count, const float *matrix, float bias, float bias_root);
size_t iec_ssim_row_lanes_portable(const float *mx, const float *xx, const float *my, const float *yy, const float *xy,
                                   size_t count, float c1, float c2, float *lanes);
size_t iec_ssim_row_lanes_avx2(const float *mx, const float *xx, const float *my, const float *yy, const float *xy,
                               size_t count, float c1, float c2, float *lanes);
size_t iec_ssimulacra2_row_lanes_portable(const float *x1, const float *mu1, const float *s11, const float *x2, const float *mu2,
                                          const float *s22, const float *s12, size_t count, int with_ssim, float c2, float *lanes);
size_t iec_ssimulacra2_row_lanes_avx2(const float *x1, const float *mu1, const float *s11, const float *x2, const float *mu2,
                                      const float *s22, const float *s12, size_t count, int with_ssim, float c2, float *lanes);
int iec_kernels_cpu_has_avx2(void);

#endif
