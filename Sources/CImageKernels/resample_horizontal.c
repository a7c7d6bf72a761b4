// The resampler's horizontal pass for pixels of four floats (see CImageKernels.h). Output pixel
// x, lane by lane: two running sums from 0, one over its even taps and one over its odd taps,
// each in tap order, each product (tap weight × source pixel) rounded before it is added; the
// result is even + odd. Two sums because a pixel's taps t and t + 1 lie side by side in memory,
// weights and pixels alike, so one 256-bit load holds both (and two chains of adds overlap
// where one would wait on each add). Output pixels are independent, so how many a version works
// on at once cannot change a result; the order of the adds and the rounding of each product
// must not change, hence no contraction anywhere in this file.
#pragma clang fp contract(off)

#include "CImageKernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

static inline ptrdiff_t min_count(const ptrdiff_t *counts, size_t x, size_t n) {
    ptrdiff_t m = counts[x];
    for (size_t i = 1; i < n; i++) m = counts[x + i] < m ? counts[x + i] : m;
    return m;
}

/// Continues one pixel's even and odd sums over tap pairs from `pair`, adds the last tap of an
/// odd count to the even sum, and stores even + odd.
static inline void finish_pixel(float even[4], float odd[4], const float *w, const float *p, ptrdiff_t pair, ptrdiff_t count, float *out) {
    for (ptrdiff_t tap = 2 * pair; tap + 1 < count; tap += 2) {
        for (int lane = 0; lane < 4; lane++) {
            const float a = w[4 * tap + lane] * p[4 * tap + lane];
            const float b = w[4 * tap + 4 + lane] * p[4 * tap + 4 + lane];
            even[lane] = even[lane] + a;
            odd[lane] = odd[lane] + b;
        }
    }
    if (count % 2 == 1) {
        for (int lane = 0; lane < 4; lane++) {
            const float a = w[4 * (count - 1) + lane] * p[4 * (count - 1) + lane];
            even[lane] = even[lane] + a;
        }
    }
    for (int lane = 0; lane < 4; lane++) out[lane] = even[lane] + odd[lane];
}

void iec_resample_horizontal4_portable(const float *source, const float *weights, const ptrdiff_t *starts, const ptrdiff_t *counts, int stride, float *destination, size_t width) {
    const size_t pixelTaps = 4 * (size_t)stride;
    size_t x = 0;
    // Two pixels at a time: four chains of adds in flight.
    for (; x + 2 <= width; x += 2) {
        const float *w0 = weights + pixelTaps * x, *w1 = w0 + pixelTaps;
        const float *p0 = source + 4 * starts[x], *p1 = source + 4 * starts[x + 1];
        const ptrdiff_t pairs = min_count(counts, x, 2) / 2;
        float even0[4] = {0, 0, 0, 0}, odd0[4] = {0, 0, 0, 0}, even1[4] = {0, 0, 0, 0}, odd1[4] = {0, 0, 0, 0};
        for (ptrdiff_t pair = 0; pair < pairs; pair++) {
            const ptrdiff_t tap = 2 * pair;
            for (int lane = 0; lane < 4; lane++) {
                const float a0 = w0[4 * tap + lane] * p0[4 * tap + lane], b0 = w0[4 * tap + 4 + lane] * p0[4 * tap + 4 + lane];
                const float a1 = w1[4 * tap + lane] * p1[4 * tap + lane], b1 = w1[4 * tap + 4 + lane] * p1[4 * tap + 4 + lane];
                even0[lane] = even0[lane] + a0;
                odd0[lane] = odd0[lane] + b0;
                even1[lane] = even1[lane] + a1;
                odd1[lane] = odd1[lane] + b1;
            }
        }
        finish_pixel(even0, odd0, w0, p0, pairs, counts[x], destination + 4 * x);
        finish_pixel(even1, odd1, w1, p1, pairs, counts[x + 1], destination + 4 * x + 4);
    }
    for (; x < width; x++) {
        float even[4] = {0, 0, 0, 0}, odd[4] = {0, 0, 0, 0};
        finish_pixel(even, odd, weights + pixelTaps * x, source + 4 * starts[x], 0, counts[x], destination + 4 * x);
    }
}

#if defined(__x86_64__)
/// Continues one pixel's [even | odd] sums over tap pairs from `pair`, adds an odd count's last
/// tap to the even half, and returns even + odd: multiply, then add, as the portable version
/// rounds them.
__attribute__((target("avx2")))
static inline __m128 finish_pixel_avx2(__m256 sums, const float *w, const float *p, ptrdiff_t pair, ptrdiff_t count) {
    for (ptrdiff_t tap = 2 * pair; tap + 1 < count; tap += 2) {
        sums = _mm256_add_ps(sums, _mm256_mul_ps(_mm256_loadu_ps(w + 4 * tap), _mm256_loadu_ps(p + 4 * tap)));
    }
    __m128 even = _mm256_castps256_ps128(sums);
    if (count % 2 == 1) {
        even = _mm_add_ps(even, _mm_mul_ps(_mm_loadu_ps(w + 4 * (count - 1)), _mm_loadu_ps(p + 4 * (count - 1))));
    }
    return _mm_add_ps(even, _mm256_extractf128_ps(sums, 1));
}

// AVX2 without FMA: a pixel's taps t and t + 1 in one register, four pixels (four chains) per step.
__attribute__((target("avx2")))
void iec_resample_horizontal4_avx2(const float *source, const float *weights, const ptrdiff_t *starts, const ptrdiff_t *counts, int stride, float *destination, size_t width) {
    const size_t pixelTaps = 4 * (size_t)stride;
    size_t x = 0;
    for (; x + 4 <= width; x += 4) {
        const float *w0 = weights + pixelTaps * x, *w1 = w0 + pixelTaps, *w2 = w1 + pixelTaps, *w3 = w2 + pixelTaps;
        const float *p0 = source + 4 * starts[x], *p1 = source + 4 * starts[x + 1];
        const float *p2 = source + 4 * starts[x + 2], *p3 = source + 4 * starts[x + 3];
        const ptrdiff_t pairs = min_count(counts, x, 4) / 2;
        __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
        for (ptrdiff_t tap = 0; tap < 2 * pairs; tap += 2) {
            s0 = _mm256_add_ps(s0, _mm256_mul_ps(_mm256_loadu_ps(w0 + 4 * tap), _mm256_loadu_ps(p0 + 4 * tap)));
            s1 = _mm256_add_ps(s1, _mm256_mul_ps(_mm256_loadu_ps(w1 + 4 * tap), _mm256_loadu_ps(p1 + 4 * tap)));
            s2 = _mm256_add_ps(s2, _mm256_mul_ps(_mm256_loadu_ps(w2 + 4 * tap), _mm256_loadu_ps(p2 + 4 * tap)));
            s3 = _mm256_add_ps(s3, _mm256_mul_ps(_mm256_loadu_ps(w3 + 4 * tap), _mm256_loadu_ps(p3 + 4 * tap)));
        }
        _mm_storeu_ps(destination + 4 * x, finish_pixel_avx2(s0, w0, p0, pairs, counts[x]));
        _mm_storeu_ps(destination + 4 * x + 4, finish_pixel_avx2(s1, w1, p1, pairs, counts[x + 1]));
        _mm_storeu_ps(destination + 4 * x + 8, finish_pixel_avx2(s2, w2, p2, pairs, counts[x + 2]));
        _mm_storeu_ps(destination + 4 * x + 12, finish_pixel_avx2(s3, w3, p3, pairs, counts[x + 3]));
    }
    for (; x < width; x++) {
        const float *w = weights + pixelTaps * x, *p = source + 4 * starts[x];
        _mm_storeu_ps(destination + 4 * x, finish_pixel_avx2(_mm256_setzero_ps(), w, p, 0, counts[x]));
    }
}
#else
void iec_resample_horizontal4_avx2(const float *source, const float *weights, const ptrdiff_t *starts, const ptrdiff_t *counts, int stride, float *destination, size_t width) {
    iec_resample_horizontal4_portable(source, weights, starts, counts, stride, destination, width);
}
#endif

// Gray pixels are one float, and gray photos are rare: one version, two pixels at a time for
// the same reason as above.
void iec_resample_horizontal1(const float *source, const float *weights, const ptrdiff_t *starts, const ptrdiff_t *counts, int stride, float *destination, size_t width) {
    size_t x = 0;
    for (; x + 2 <= width; x += 2) {
        const float *w0 = weights + (size_t)stride * x, *w1 = w0 + stride;
        const float *p0 = source + starts[x], *p1 = source + starts[x + 1];
        const ptrdiff_t shared = min_count(counts, x, 2);
        float s0 = 0, s1 = 0;
        for (ptrdiff_t tap = 0; tap < shared; tap++) {
            const float a = w0[tap] * p0[tap], b = w1[tap] * p1[tap];
            s0 = s0 + a;
            s1 = s1 + b;
        }
        for (ptrdiff_t tap = shared; tap < counts[x]; tap++) s0 = s0 + w0[tap] * p0[tap];
        for (ptrdiff_t tap = shared; tap < counts[x + 1]; tap++) s1 = s1 + w1[tap] * p1[tap];
        destination[x] = s0;
        destination[x + 1] = s1;
    }
    for (; x < width; x++) {
        const float *w = weights + (size_t)stride * x, *p = source + starts[x];
        float s = 0;
        for (ptrdiff_t tap = 0; tap < counts[x]; tap++) s = s + w[tap] * p[tap];
        destination[x] = s;
    }
}
