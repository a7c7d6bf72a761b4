// The quality metrics' Gaussian (SSIM's window and SSIMULACRA2's blur): a symmetric window
// applied along one direction (see CImageKernels.h). Per float: the centre tap's product,
// then, tap pair by tap pair from the outside in, the pair's sum times its weight added. Every
// lane is independent, so how many lanes a version handles at once cannot change a result;
// what must not change is that order and the rounding of each operation, hence no contraction
// anywhere in this file. Each float's sum stays in a register across the taps: the loop it
// replaced wrote the output row back once per tap pair.
#pragma clang fp contract(off)

#include "CImageKernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/// One float: the order every version keeps.
static inline float one_float(const float *const *lines, const float *window, int radius, size_t x) {
    float s = window[radius] * lines[radius][x];
    for (int tap = 0; tap < radius; tap++) {
        const float pair = lines[tap][x] + lines[2 * radius - tap][x];
        const float product = window[tap] * pair;
        s = s + product;
    }
    return s;
}

void iec_convolve_symmetric_portable(const float *const *lines, const float *window, int radius, float *out, size_t count) {
    size_t x = 0;
    // Eight independent sums, which the compiler keeps in vector registers.
    for (; x + 8 <= count; x += 8) {
        float s[8];
        const float centre = window[radius];
        for (int lane = 0; lane < 8; lane++) s[lane] = centre * lines[radius][x + lane];
        for (int tap = 0; tap < radius; tap++) {
            const float w = window[tap];
            const float *near = lines[tap] + x, *far = lines[2 * radius - tap] + x;
            for (int lane = 0; lane < 8; lane++) {
                const float pair = near[lane] + far[lane];
                const float product = w * pair;
                s[lane] = s[lane] + product;
            }
        }
        for (int lane = 0; lane < 8; lane++) out[x + lane] = s[lane];
    }
    for (; x < count; x++) out[x] = one_float(lines, window, radius, x);
}

#if defined(__x86_64__)
// AVX2 without FMA: an add, a multiply, an add, exactly as the portable version rounds them.
__attribute__((target("avx2")))
void iec_convolve_symmetric_avx2(const float *const *lines, const float *window, int radius, float *out, size_t count) {
    size_t x = 0;
    const __m256 centre = _mm256_set1_ps(window[radius]);
    for (; x + 32 <= count; x += 32) {
        const float *middle = lines[radius] + x;
        __m256 a = _mm256_mul_ps(centre, _mm256_loadu_ps(middle));
        __m256 b = _mm256_mul_ps(centre, _mm256_loadu_ps(middle + 8));
        __m256 c = _mm256_mul_ps(centre, _mm256_loadu_ps(middle + 16));
        __m256 d = _mm256_mul_ps(centre, _mm256_loadu_ps(middle + 24));
        for (int tap = 0; tap < radius; tap++) {
            const __m256 w = _mm256_set1_ps(window[tap]);
            const float *near = lines[tap] + x, *far = lines[2 * radius - tap] + x;
            a = _mm256_add_ps(a, _mm256_mul_ps(w, _mm256_add_ps(_mm256_loadu_ps(near), _mm256_loadu_ps(far))));
            b = _mm256_add_ps(b, _mm256_mul_ps(w, _mm256_add_ps(_mm256_loadu_ps(near + 8), _mm256_loadu_ps(far + 8))));
            c = _mm256_add_ps(c, _mm256_mul_ps(w, _mm256_add_ps(_mm256_loadu_ps(near + 16), _mm256_loadu_ps(far + 16))));
            d = _mm256_add_ps(d, _mm256_mul_ps(w, _mm256_add_ps(_mm256_loadu_ps(near + 24), _mm256_loadu_ps(far + 24))));
        }
        _mm256_storeu_ps(out + x, a);
        _mm256_storeu_ps(out + x + 8, b);
        _mm256_storeu_ps(out + x + 16, c);
        _mm256_storeu_ps(out + x + 24, d);
    }
    for (; x + 8 <= count; x += 8) {
        __m256 a = _mm256_mul_ps(centre, _mm256_loadu_ps(lines[radius] + x));
        for (int tap = 0; tap < radius; tap++) {
            const __m256 pair = _mm256_add_ps(_mm256_loadu_ps(lines[tap] + x), _mm256_loadu_ps(lines[2 * radius - tap] + x));
            a = _mm256_add_ps(a, _mm256_mul_ps(_mm256_set1_ps(window[tap]), pair));
        }
        _mm256_storeu_ps(out + x, a);
    }
    for (; x < count; x++) out[x] = one_float(lines, window, radius, x);
}
#else
void iec_convolve_symmetric_avx2(const float *const *lines, const float *window, int radius, float *out, size_t count) {
    iec_convolve_symmetric_portable(lines, window, radius, out, count);
}
#endif
