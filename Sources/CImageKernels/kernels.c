// Which version of each kernel runs: decided once, on first use, from the CPU and the
// IMAGE_ENGINE_PORTABLE_KERNELS override.
#include "CImageKernels.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int level = 0;
static pthread_once_t once = PTHREAD_ONCE_INIT;

int iec_kernels_cpu_has_avx2(void) {
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 1 : 0;
#else
    return 0;
#endif
}

int iec_kernels_fast_bit_deposit(void) {
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
    if (iec_kernels_level() != 1) return 0;
    __builtin_cpu_init();
    // Zen 1 and 2 (AMD family 17h) run pdep in microcode, tens of cycles and more.
    return __builtin_cpu_supports("bmi2") && !__builtin_cpu_is("amdfam17h") ? 1 : 0;
#else
    return 0;
#endif
}

static void choose(void) {
    const char *portable = getenv("IMAGE_ENGINE_PORTABLE_KERNELS");
    if (portable != NULL && strcmp(portable, "0") != 0 && portable[0] != '\0') {
        level = 0;
        return;
    }
    level = iec_kernels_cpu_has_avx2();
}

int iec_kernels_level(void) {
    pthread_once(&once, choose);
    return level;
}

void iec_resample_vertical(const float *ring, const ptrdiff_t *offsets, const float *weights, int taps, float *sum, size_t count) {
    if (iec_kernels_level() == 1) {
        iec_resample_vertical_avx2(ring, offsets, weights, taps, sum, count);
    } else {
        iec_resample_vertical_portable(ring, offsets, weights, taps, sum, count);
    }
}

void iec_rgb_to_float4(const uint8_t *rgb, size_t width, float *pixels) {
    if (iec_kernels_level() == 1) {
        iec_rgb_to_float4_avx2(rgb, width, pixels);
    } else {
        iec_rgb_to_float4_portable(rgb, width, pixels);
    }
}

void iec_resample_horizontal4(const float *source, const float *weights, const ptrdiff_t *starts, const ptrdiff_t *counts, int stride, float *destination, size_t width) {
    if (iec_kernels_level() == 1) {
        iec_resample_horizontal4_avx2(source, weights, starts, counts, stride, destination, width);
    } else {
        iec_resample_horizontal4_portable(source, weights, starts, counts, stride, destination, width);
    }
}

void iec_idct_scaled(int n, const short *coefficients, const unsigned short *quantization, unsigned char *const *rows, unsigned column) {
    if (iec_kernels_level() == 1) {
        iec_idct_scaled_avx2(n, coefficients, quantization, rows, column);
    } else {
        iec_idct_scaled_portable(n, coefficients, quantization, rows, column);
    }
}

void iec_rgb_to_ycbcr(const unsigned char *rgb, size_t count, float *y, float *cb, float *cr) {
    if (iec_kernels_level() == 1) {
        iec_rgb_to_ycbcr_avx2(rgb, count, y, cb, cr);
    } else {
        iec_rgb_to_ycbcr_portable(rgb, count, y, cb, cr);
    }
}

void iec_fdct(float *block, const float *transposedBasis, const float *cosines) {
    if (iec_kernels_level() == 1) {
        iec_fdct_avx2(block, transposedBasis, cosines);
    } else {
        iec_fdct_portable(block, transposedBasis, cosines);
    }
}

void iec_fdct_quantize_row(const float *samples, size_t stride, size_t count, const float *strengths,
                           const float *transposedBasis, const float *cosines, const float *reciprocals,
                           const float *deadZone, const float *maskedDeadZone, short *coefficients) {
    if (iec_kernels_level() == 1) {
        iec_fdct_quantize_row_avx2(samples, stride, count, strengths, transposedBasis, cosines, reciprocals, deadZone,
                                   maskedDeadZone, coefficients);
    } else {
        iec_fdct_quantize_row_portable(samples, stride, count, strengths, transposedBasis, cosines, reciprocals, deadZone,
                                       maskedDeadZone, coefficients);
    }
}

void iec_rgb_to_luma256(const unsigned char *rgb, size_t count, int32_t *luma) {
    if (iec_kernels_level() == 1) {
        iec_rgb_to_luma256_avx2(rgb, count, luma);
    } else {
        iec_rgb_to_luma256_portable(rgb, count, luma);
    }
}

void iec_masking_row(const int32_t *above, const int32_t *centre, const int32_t *below, size_t width, float *blocks) {
    if (iec_kernels_level() == 1) {
        iec_masking_row_avx2(above, centre, below, width, blocks);
    } else {
        iec_masking_row_portable(above, centre, below, width, blocks);
    }
}

void iec_convolve_symmetric(const float *const *lines, const float *window, int radius, float *out, size_t count) {
    if (iec_kernels_level() == 1) {
        iec_convolve_symmetric_avx2(lines, window, radius, out, count);
    } else {
        iec_convolve_symmetric_portable(lines, window, radius, out, count);
    }
}

void iec_positive_xyb(float *r, float *g, float *b, size_t count, const float *matrix, float bias, float bias_root) {
    if (iec_kernels_level() == 1) {
        iec_positive_xyb_avx2(r, g, b, count, matrix, bias, bias_root);
    } else {
        iec_positive_xyb_portable(r, g, b, count, matrix, bias, bias_root);
    }
}

size_t iec_ssim_row_lanes(const float *mx, const float *xx, const float *my, const float *yy, const float *xy,
                          size_t count, float c1, float c2, float *lanes) {
    if (iec_kernels_level() == 1) return iec_ssim_row_lanes_avx2(mx, xx, my, yy, xy, count, c1, c2, lanes);
    return iec_ssim_row_lanes_portable(mx, xx, my, yy, xy, count, c1, c2, lanes);
}

size_t iec_ssimulacra2_row_lanes(const float *x1, const float *mu1, const float *s11, const float *x2, const float *mu2,
                                 const float *s22, const float *s12, size_t count, int with_ssim, float c2, float *lanes) {
    if (iec_kernels_level() == 1) return iec_ssimulacra2_row_lanes_avx2(x1, mu1, s11, x2, mu2, s22, s12, count, with_ssim, c2, lanes);
    return iec_ssimulacra2_row_lanes_portable(x1, mu1, s11, x2, mu2, s22, s12, count, with_ssim, c2, lanes);
}
