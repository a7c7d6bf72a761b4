// The quality metrics' per-pixel maps, summed along a row (see CImageKernels.h). Each returns
// eight lane sums, lane k summing pixels k, k + 8, k + 16, …, which the caller adds up: the
// order the Swift it replaces used, so scores are unchanged. Every version rounds the same
// operations in the same order (no contraction), so scores do not depend on the CPU.
#pragma clang fp contract(off)

#include "CImageKernels.h"

#include <math.h>

/// max(v, 0) as (v + |v|) / 2, exact; v⁴ as (v²)².
static inline float positive(float v) { return 0.5f * (v + fabsf(v)); }
static inline float fourth(float v) { return (v * v) * (v * v); }

// One pixel of each map: the definitions the row kernels' lanes, and the caller's last few
// pixels (through the exported functions), all compute.

static inline float ssim_pixel(float mx, float xx, float my, float yy, float xy, float c1, float c2) {
    const float mean_xy = mx * my, square_x = mx * mx, square_y = my * my;
    const float covariance = xy - mean_xy;
    const float variances = (xx - square_x) + (yy - square_y);
    const float numerator = (2.0f * mean_xy + c1) * (2.0f * covariance + c2);
    const float denominator = ((square_x + square_y) + c1) * (variances + c2);
    return numerator / denominator;
}

static inline float ssimulacra2_ssim_pixel(float mu1, float s11, float mu2, float s22, float s12, float c2) {
    const float difference = mu1 - mu2;
    const float luminance = 1.0f - difference * difference;
    const float covariance = s12 - mu1 * mu2;
    const float structure = 2.0f * covariance + c2;
    const float variances = ((s11 - mu1 * mu1) + (s22 - mu2 * mu2)) + c2;
    return positive(1.0f - (luminance * structure) / variances);
}

/// The edge ratio whose positive part is the artefact map and whose negative part's is the
/// detail-lost map.
static inline float ssimulacra2_edge_pixel(float x1, float mu1, float x2, float mu2) {
    return (1.0f + fabsf(x2 - mu2)) / (1.0f + fabsf(x1 - mu1)) - 1.0f;
}

float iec_ssim_pixel(float mx, float xx, float my, float yy, float xy, float c1, float c2) {
    return ssim_pixel(mx, xx, my, yy, xy, c1, c2);
}

void iec_ssimulacra2_pixel(float x1, float mu1, float s11, float x2, float mu2, float s22, float s12, int with_ssim, float c2,
                           float terms[6]) {
    const float ssim = with_ssim ? ssimulacra2_ssim_pixel(mu1, s11, mu2, s22, s12, c2) : 0.0f;
    const float edge = ssimulacra2_edge_pixel(x1, mu1, x2, mu2);
    const float artefact = positive(edge), lost = positive(-edge);
    terms[0] = ssim;
    terms[1] = fourth(ssim);
    terms[2] = artefact;
    terms[3] = fourth(artefact);
    terms[4] = lost;
    terms[5] = fourth(lost);
}

/// SSIM over eight pixels at `i`, added to `acc`.
#define IEC_SSIM_BODY                                                                                \
    for (int lane = 0; lane < 8; lane++) {                                                           \
        const size_t p = i + lane;                                                                   \
        acc[lane] = acc[lane] + ssim_pixel(mx[p], xx[p], my[p], yy[p], xy[p], c1, c2);               \
    }

/// SSIMULACRA2's SSIM map over eight pixels at `i`, it and its fourth power added to `acc`.
#define IEC_SSIMULACRA2_SSIM_BODY                                                                    \
    for (int lane = 0; lane < 8; lane++) {                                                           \
        const size_t p = i + lane;                                                                   \
        const float ssim = ssimulacra2_ssim_pixel(mu1[p], s11[p], mu2[p], s22[p], s12[p], c2);       \
        acc[lane] = acc[lane] + ssim;                                                                \
        acc[8 + lane] = acc[8 + lane] + fourth(ssim);                                                \
    }

/// SSIMULACRA2's artefact and detail-lost maps over eight pixels at `i`, each and its fourth
/// power added to `acc`.
#define IEC_SSIMULACRA2_EDGE_BODY                                                                    \
    for (int lane = 0; lane < 8; lane++) {                                                           \
        const size_t p = i + lane;                                                                   \
        const float edge = ssimulacra2_edge_pixel(x1[p], mu1[p], x2[p], mu2[p]);                     \
        const float artefact = positive(edge), lost = positive(-edge);                               \
        acc[16 + lane] = acc[16 + lane] + artefact;                                                  \
        acc[24 + lane] = acc[24 + lane] + fourth(artefact);                                          \
        acc[32 + lane] = acc[32 + lane] + lost;                                                      \
        acc[40 + lane] = acc[40 + lane] + fourth(lost);                                              \
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
