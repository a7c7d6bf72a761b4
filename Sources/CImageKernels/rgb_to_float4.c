// The resampler's input (see CImageKernels.h): RGB8 pixels spread to four floats each, the
// fourth 0. Integers to floats are exact, so every version gives the same floats.
#include "CImageKernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

static inline void one_pixel(const uint8_t *rgb, float *pixel) {
    pixel[0] = (float)rgb[0];
    pixel[1] = (float)rgb[1];
    pixel[2] = (float)rgb[2];
    pixel[3] = 0;
}

void iec_rgb_to_float4_portable(const uint8_t *rgb, size_t width, float *pixels) {
    for (size_t x = 0; x < width; x++) one_pixel(rgb + 3 * x, pixels + 4 * x);
}

#if defined(__x86_64__)
// AVX2: four pixels a step, their 12 bytes spread to 16 by one shuffle (zero in every fourth),
// then two pixels a register. A step reads 16 bytes, so it stops while two pixels remain and
// those take the one-pixel path: the row is never read past its end.
__attribute__((target("avx2")))
void iec_rgb_to_float4_avx2(const uint8_t *rgb, size_t width, float *pixels) {
    const __m128i spread = _mm_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
    size_t x = 0;
    for (; x + 6 <= width; x += 4) {
        const __m128i bytes = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(rgb + 3 * x)), spread);
        _mm256_storeu_ps(pixels + 4 * x, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes)));
        _mm256_storeu_ps(pixels + 4 * x + 8, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(bytes, 8))));
    }
    for (; x < width; x++) one_pixel(rgb + 3 * x, pixels + 4 * x);
}
#else
void iec_rgb_to_float4_avx2(const uint8_t *rgb, size_t width, float *pixels) {
    iec_rgb_to_float4_portable(rgb, width, pixels);
}
#endif
