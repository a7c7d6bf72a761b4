// The resampler's vertical pass (see CImageKernels.h): per float, a sum over the taps' rows in
// tap order, each product rounded before it is added. Every lane is independent, so how many
// lanes a version handles at once cannot change a result; what must not change is the order of
// the adds and the rounding of each product, hence no contraction anywhere in this file.
#pragma clang fp contract(off)

#include "CImageKernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/// One float of the pass: the tap-order sum every version's tail uses.
static inline float one_float(const float *ring, const ptrdiff_t *offsets, const float *weights, int taps, size_t x) {
    float s = 0;
    for (int tap = 0; tap < taps; tap++) {
        const float product = weights[tap] * ring[offsets[tap] + (ptrdiff_t)x];
        s = s + product;
    }
    return s;
}

void iec_resample_vertical_portable(const float *ring, const ptrdiff_t *offsets, const float *weights, int taps, float *sum, size_t count) {
    size_t x = 0;
    // Eight independent sums, so the adds' latency does not set the pace.
    for (; x + 8 <= count; x += 8) {
        float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int tap = 0; tap < taps; tap++) {
            const float w = weights[tap];
            const float *row = ring + offsets[tap] + x;
            for (int lane = 0; lane < 8; lane++) {
                const float product = w * row[lane];
                s[lane] = s[lane] + product;
            }
        }
        for (int lane = 0; lane < 8; lane++) sum[x + lane] = s[lane];
    }
    for (; x < count; x++) sum[x] = one_float(ring, offsets, weights, taps, x);
}

#if defined(__x86_64__)
// AVX2 without FMA: a multiply, then an add, exactly as the portable version rounds them.
__attribute__((target("avx2")))
void iec_resample_vertical_avx2(const float *ring, const ptrdiff_t *offsets, const float *weights, int taps, float *sum, size_t count) {
    size_t x = 0;
    for (; x + 32 <= count; x += 32) {
        __m256 a = _mm256_setzero_ps(), b = _mm256_setzero_ps(), c = _mm256_setzero_ps(), d = _mm256_setzero_ps();
        for (int tap = 0; tap < taps; tap++) {
            const __m256 w = _mm256_set1_ps(weights[tap]);
            const float *row = ring + offsets[tap] + x;
            a = _mm256_add_ps(a, _mm256_mul_ps(w, _mm256_loadu_ps(row)));
            b = _mm256_add_ps(b, _mm256_mul_ps(w, _mm256_loadu_ps(row + 8)));
            c = _mm256_add_ps(c, _mm256_mul_ps(w, _mm256_loadu_ps(row + 16)));
            d = _mm256_add_ps(d, _mm256_mul_ps(w, _mm256_loadu_ps(row + 24)));
        }
        _mm256_storeu_ps(sum + x, a);
        _mm256_storeu_ps(sum + x + 8, b);
        _mm256_storeu_ps(sum + x + 16, c);
        _mm256_storeu_ps(sum + x + 24, d);
    }
    for (; x + 8 <= count; x += 8) {
        __m256 a = _mm256_setzero_ps();
        for (int tap = 0; tap < taps; tap++) {
            a = _mm256_add_ps(a, _mm256_mul_ps(_mm256_set1_ps(weights[tap]), _mm256_loadu_ps(ring + offsets[tap] + x)));
        }
        _mm256_storeu_ps(sum + x, a);
    }
    for (; x < count; x++) sum[x] = one_float(ring, offsets, weights, taps, x);
}
#else
void iec_resample_vertical_avx2(const float *ring, const ptrdiff_t *offsets, const float *weights, int taps, float *sum, size_t count) {
    iec_resample_vertical_portable(ring, offsets, weights, taps, sum, count);
}
#endif
