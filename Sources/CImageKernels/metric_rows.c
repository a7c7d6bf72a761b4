// The quality metrics' per-pixel maps, summed along a row (see CImageKernels.h). Each returns
// eight lane sums, lane k summing pixels k, k + 8, k + 16, …, which the caller adds up: the
// order the Swift it replaces used, so scores are unchanged. Every version rounds the same
// operations in the same order (no contraction), so scores do not depend on the CPU.
#pragma clang fp contract(off)

#include "CImageKernels.h"

#include <math.h>

/// SSIM over eight pixels at `i`, added to `acc`.
#define IEC_SSIM_BODY                                                                                \
    for (int lane = 0; lane < 8; lane++) {                                                           \
        const float x = mx[i + lane], y = my[i + lane];                                              \
        const float mean_xy = x * y, square_x = x * x, square_y = y * y;                             \
        const float covariance = xy[i + lane] - mean_xy;                                             \
        const float variances = (xx[i + lane] - square_x) + (yy[i + lane] - square_y);               \
        const float numerator = (2.0f * mean_xy + c1) * (2.0f * covariance + c2);                    \
        const float denominator = ((square_x + square_y) + c1) * (variances + c2);                   \
        acc[lane] = acc[lane] + numerator / denominator;                                             \
    }

/// max(v, 0) as (v + |v|) / 2, exact; v⁴ as (v²)².
#define IEC_POSITIVE(v) (0.5f * ((v) + fabsf(v)))
#define IEC_FOURTH(v) (((v) * (v)) * ((v) * (v)))

/// SSIMULACRA2's SSIM map over eight pixels at `i`, it and its fourth power added to `acc`.
#define IEC_SSIMULACRA2_SSIM_BODY                                                                    \
    for (int lane = 0; lane < 8; lane++) {                                                           \
        const size_t p = i + lane;                                                                   \
        const float difference = mu1[p] - mu2[p];                                                    \
        const float luminance = 1.0f - difference * difference;                                      \
        const float covariance = s12[p] - mu1[p] * mu2[p];                                           \
        const float structure = 2.0f * covariance + c2;                                              \
        const float variances = ((s11[p] - mu1[p] * mu1[p]) + (s22[p] - mu2[p] * mu2[p])) + c2;      \
        const float raw = 1.0f - (luminance * structure) / variances;                                \
        const float ssim = IEC_POSITIVE(raw);                                                        \
        acc[lane] = acc[lane] + ssim;                                                                \
        acc[8 + lane] = acc[8 + lane] + IEC_FOURTH(ssim);                                            \
    }

/// SSIMULACRA2's artefact and detail-lost maps over eight pixels at `i`, each and its fourth
/// power added to `acc`.
#define IEC_SSIMULACRA2_EDGE_BODY                                                                    \
    for (int lane = 0; lane < 8; lane++) {                                                           \
        const size_t p = i + lane;                                                                   \
        const float own = x2[p] - mu2[p], original = x1[p] - mu1[p];                                 \
        const float edge = (1.0f + fabsf(own)) / (1.0f + fabsf(original)) - 1.0f;                    \
        const float artefact = IEC_POSITIVE(edge);                                                   \
        const float lost = IEC_POSITIVE(-edge);                                                      \
        acc[16 + lane] = acc[16 + lane] + artefact;                                                  \
        acc[24 + lane] = acc[24 + lane] + IEC_FOURTH(artefact);                                      \
        acc[32 + lane] = acc[32 + lane] + lost;                                                      \
        acc[40 + lane] = acc[40 + lane] + IEC_FOURTH(lost);                                          \
    }

/// A whole function of the SSIM kernel: sums in a local array (so the compiler keeps them in
/// registers: `lanes` could alias an input), copied out at the end.
#define IEC_SSIM_FUNCTION                                                                            \
    float acc[8] = {0};                                                                              \
    size_t i = 0;                                                                                    \
    for (; i + 8 <= count; i += 8) {                                                                 \
        IEC_SSIM_BODY                                                                                \
    }                                                                                                \
    for (int lane = 0; lane < 8; lane++) lanes[lane] = acc[lane];                                    \
    return i;

/// The same for SSIMULACRA2's maps, the SSIM map's loop apart (it is skipped without `with_ssim`).
#define IEC_SSIMULACRA2_FUNCTION                                                                     \
    float acc[48] = {0};                                                                             \
    size_t i = 0;                                                                                    \
    if (with_ssim) {                                                                                 \
        for (i = 0; i + 8 <= count; i += 8) {                                                        \
            IEC_SSIMULACRA2_SSIM_BODY                                                                \
        }                                                                                            \
    }                                                                                                \
    for (i = 0; i + 8 <= count; i += 8) {                                                            \
        IEC_SSIMULACRA2_EDGE_BODY                                                                    \
    }                                                                                                \
    for (int lane = 0; lane < 48; lane++) lanes[lane] = acc[lane];                                   \
    return i;

size_t iec_ssim_row_lanes_portable(const float *mx, const float *xx, const float *my, const float *yy, const float *xy,
                                   size_t count, float c1, float c2, float *lanes) {
    IEC_SSIM_FUNCTION
}

size_t iec_ssimulacra2_row_lanes_portable(const float *x1, const float *mu1, const float *s11, const float *x2, const float *mu2,
                                          const float *s22, const float *s12, size_t count, int with_ssim, float c2, float *lanes) {
    IEC_SSIMULACRA2_FUNCTION
}

#if defined(__x86_64__)
// The same bodies compiled for AVX2: the compiler turns the eight lanes into one vector.
__attribute__((target("avx2")))
size_t iec_ssim_row_lanes_avx2(const float *mx, const float *xx, const float *my, const float *yy, const float *xy,
                               size_t count, float c1, float c2, float *lanes) {
    IEC_SSIM_FUNCTION
}

__attribute__((target("avx2")))
size_t iec_ssimulacra2_row_lanes_avx2(const float *x1, const float *mu1, const float *s11, const float *x2, const float *mu2,
                                      const float *s22, const float *s12, size_t count, int with_ssim, float c2, float *lanes) {
    IEC_SSIMULACRA2_FUNCTION
}
#else
size_t iec_ssim_row_lanes_avx2(const float *mx, const float *xx, const float *my, const float *yy, const float *xy,
                               size_t count, float c1, float c2, float *lanes) {
    return iec_ssim_row_lanes_portable(mx, xx, my, yy, xy, count, c1, c2, lanes);
}

size_t iec_ssimulacra2_row_lanes_avx2(const float *x1, const float *mu1, const float *s11, const float *x2, const float *mu2,
                                      const float *s22, const float *s12, size_t count, int with_ssim, float c2, float *lanes) {
    return iec_ssimulacra2_row_lanes_portable(x1, mu1, s11, x2, mu2, s22, s12, count, with_ssim, c2, lanes);
}
#endif
