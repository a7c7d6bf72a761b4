// 8-bit YCbCr rows to interleaved RGB, for decoders whose library hands out planes (libheif):
// converting one row at a time into the resampler spares the whole interleaved image a library
// conversion would allocate. Integers only, so the two versions — one body, compiled for the
// x86-64 baseline and for AVX2, whose compiler vectorises its loops (five times faster on a
// 6000-pixel row) — give the same bytes by construction.
#include "CImageKernels.h"

static inline __attribute__((always_inline)) uint8_t to_level(int32_t value) {
    // Q19 (Q16 coefficients × eighths of a level): round half up, clamp to 0...255.
    value += 1 << 18;
    value = value < 0 ? 0 : value;
    value >>= 19;
    return (uint8_t)(value > 255 ? 255 : value);
}

/// One pixel from its luma and its chroma in eighths of a level, centred on 0.
static inline __attribute__((always_inline)) void pixel(uint8_t luma, int32_t b, int32_t r, const iec_ycbcr_matrix *m, uint8_t *rgb) {
    const int32_t y = (luma - m->luma_offset) * m->luma * 8;
    rgb[0] = to_level(y + m->cr_r * r);
    rgb[1] = to_level(y - m->cb_g * b - m->cr_g * r);
    rgb[2] = to_level(y + m->cb_b * b);
}

static inline __attribute__((always_inline)) void convert_row(
    const uint8_t *luma, const uint8_t *cb_near, const uint8_t *cr_near, const uint8_t *cb_far, const uint8_t *cr_far, int near_quarters,
    int horizontal_shift, size_t width, size_t chroma_width, const iec_ycbcr_matrix *matrix, int32_t *scratch, uint8_t *rgb) {
    // The vertical blend, in quarters of a level.
    int32_t *cb = scratch, *cr = scratch + chroma_width;
    const int32_t far_quarters = 4 - near_quarters;
    for (size_t i = 0; i < chroma_width; i++) {
        cb[i] = near_quarters * cb_near[i] + far_quarters * cb_far[i];
        cr[i] = near_quarters * cr_near[i] + far_quarters * cr_far[i];
    }
    const iec_ycbcr_matrix m = *matrix;
    if (horizontal_shift == 0) {
        for (size_t x = 0; x < width; x++) pixel(luma[x], 2 * cb[x] - 1024, 2 * cr[x] - 1024, &m, rgb + 3 * x);
        return;
    }
    // 4:2:0 and 4:2:2 (H.273 chroma location 0): sample i sits on column 2i, so column 2i takes
    // it doubled and column 2i + 1 takes it plus sample i + 1 (the last sample repeated past
    // the edge), both in eighths.
    const size_t pairs = width / 2;
    for (size_t i = 0; i < pairs; i++) {
        const size_t next = i + 1 < chroma_width ? i + 1 : chroma_width - 1;
        pixel(luma[2 * i], 2 * cb[i] - 1024, 2 * cr[i] - 1024, &m, rgb + 6 * i);
        pixel(luma[2 * i + 1], cb[i] + cb[next] - 1024, cr[i] + cr[next] - 1024, &m, rgb + 6 * i + 3);
    }
    if (width % 2 == 1) pixel(luma[width - 1], 2 * cb[pairs] - 1024, 2 * cr[pairs] - 1024, &m, rgb + 3 * (width - 1));
}

void iec_ycbcr_to_rgb_row_portable(const uint8_t *luma, const uint8_t *cb_near, const uint8_t *cr_near, const uint8_t *cb_far,
                                   const uint8_t *cr_far, int near_quarters, int horizontal_shift, size_t width, size_t chroma_width,
                                   const iec_ycbcr_matrix *matrix, int32_t *scratch, uint8_t *rgb) {
    convert_row(luma, cb_near, cr_near, cb_far, cr_far, near_quarters, horizontal_shift, width, chroma_width, matrix, scratch, rgb);
}

#if defined(__x86_64__)
__attribute__((target("avx2")))
void iec_ycbcr_to_rgb_row_avx2(const uint8_t *luma, const uint8_t *cb_near, const uint8_t *cr_near, const uint8_t *cb_far,
                               const uint8_t *cr_far, int near_quarters, int horizontal_shift, size_t width, size_t chroma_width,
                               const iec_ycbcr_matrix *matrix, int32_t *scratch, uint8_t *rgb) {
    convert_row(luma, cb_near, cr_near, cb_far, cr_far, near_quarters, horizontal_shift, width, chroma_width, matrix, scratch, rgb);
}
#else
void iec_ycbcr_to_rgb_row_avx2(const uint8_t *luma, const uint8_t *cb_near, const uint8_t *cr_near, const uint8_t *cb_far,
                               const uint8_t *cr_far, int near_quarters, int horizontal_shift, size_t width, size_t chroma_width,
                               const iec_ycbcr_matrix *matrix, int32_t *scratch, uint8_t *rgb) {
    convert_row(luma, cb_near, cr_near, cb_far, cr_far, near_quarters, horizontal_shift, width, chroma_width, matrix, scratch, rgb);
}
#endif

void iec_ycbcr_to_rgb_row(const uint8_t *luma, const uint8_t *cb_near, const uint8_t *cr_near, const uint8_t *cb_far,
                          const uint8_t *cr_far, int near_quarters, int horizontal_shift, size_t width, size_t chroma_width,
                          const iec_ycbcr_matrix *matrix, int32_t *scratch, uint8_t *rgb) {
    if (iec_kernels_level() == 1) {
        iec_ycbcr_to_rgb_row_avx2(luma, cb_near, cr_near, cb_far, cr_far, near_quarters, horizontal_shift, width, chroma_width, matrix,
                                  scratch, rgb);
    } else {
        iec_ycbcr_to_rgb_row_portable(luma, cb_near, cr_near, cb_far, cr_far, near_quarters, horizontal_shift, width, chroma_width,
                                      matrix, scratch, rgb);
    }
}
