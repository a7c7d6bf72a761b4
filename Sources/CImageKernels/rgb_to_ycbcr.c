// The perceptual encoder's colour conversion (see CImageKernels.h): RGB8 pixels to level-shifted
// Y and centred Cb, Cr floats, T.81's (JFIF's) BT.601 full-range matrix. Each output is
// ((k0·R + k1·G) + k2·B), with Y then less 128, each product rounded before it is added: the
// order the encoder has always used, so versions agree to the bit. No contraction in this file.
#pragma clang fp contract(off)

#include "CImageKernels.h"

#include <stdint.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

static inline void one_pixel(const unsigned char *rgb, float *y, float *cb, float *cr) {
    const float r = (float)rgb[0], g = (float)rgb[1], b = (float)rgb[2];
    *y = ((0.299f * r + 0.587f * g) + 0.114f * b) - 128.0f;
    *cb = (-0.1687359f * r - 0.3312641f * g) + 0.5f * b;
    *cr = (0.5f * r - 0.4186876f * g) - 0.0813124f * b;
}

void iec_rgb_to_ycbcr_portable(const unsigned char *rgb, size_t count, float *y, float *cb, float *cr) {
    for (size_t x = 0; x < count; x++) one_pixel(rgb + 3 * x, y + x, cb + x, cr + x);
}

/// The masking field's luma ×256 in integers: 77R + 150G + 29B (exact, so every version agrees).
void iec_rgb_to_luma256_portable(const unsigned char *rgb, size_t count, int32_t *luma) {
    for (size_t x = 0; x < count; x++) luma[x] = 77 * (int32_t)rgb[3 * x] + 150 * (int32_t)rgb[3 * x + 1] + 29 * (int32_t)rgb[3 * x + 2];
}

#if defined(__x86_64__)
/// Shuffles that gather byte 3i + offset (i < 8) of 24 bytes held as `low` (bytes 0-15) and
/// `high` (16-23) into bytes i: one mask for each half, -1 where the byte is in the other.
__attribute__((target("avx2")))
static void channel_masks(int offset, __m128i *fromLow, __m128i *fromHigh) {
    int8_t low[16], high[16];
    for (int i = 0; i < 16; i++) low[i] = high[i] = -1;
    for (int i = 0; i < 8; i++) {
        const int byte = 3 * i + offset;
        if (byte < 16) low[i] = (int8_t)byte; else high[i] = (int8_t)(byte - 16);
    }
    *fromLow = _mm_loadu_si128((const __m128i *)low);
    *fromHigh = _mm_loadu_si128((const __m128i *)high);
}

/// One channel of eight pixels as 32-bit integers.
__attribute__((target("avx2")))
static inline __m256i channel_integers(__m128i low, __m128i high, __m128i fromLow, __m128i fromHigh) {
    const __m128i bytes = _mm_or_si128(_mm_shuffle_epi8(low, fromLow), _mm_shuffle_epi8(high, fromHigh));
    return _mm256_cvtepu8_epi32(bytes);
}

/// One channel of eight pixels as floats.
__attribute__((target("avx2")))
static inline __m256 channel(__m128i low, __m128i high, __m128i fromLow, __m128i fromHigh) {
    return _mm256_cvtepi32_ps(channel_integers(low, high, fromLow, fromHigh));
}

// AVX2 without FMA: eight pixels at a time, read as exactly their 24 bytes.
__attribute__((target("avx2")))
void iec_rgb_to_ycbcr_avx2(const unsigned char *rgb, size_t count, float *y, float *cb, float *cr) {
    __m128i redLow, redHigh, greenLow, greenHigh, blueLow, blueHigh;
    channel_masks(0, &redLow, &redHigh);
    channel_masks(1, &greenLow, &greenHigh);
    channel_masks(2, &blueLow, &blueHigh);
    size_t x = 0;
    for (; x + 8 <= count; x += 8) {
        const __m128i low = _mm_loadu_si128((const __m128i *)(rgb + 3 * x));
        const __m128i high = _mm_loadl_epi64((const __m128i *)(rgb + 3 * x + 16));
        const __m256 r = channel(low, high, redLow, redHigh), g = channel(low, high, greenLow, greenHigh);
        const __m256 b = channel(low, high, blueLow, blueHigh);
#define TERM(k, v) _mm256_mul_ps(_mm256_set1_ps(k), v)
        _mm256_storeu_ps(y + x, _mm256_sub_ps(_mm256_add_ps(_mm256_add_ps(TERM(0.299f, r), TERM(0.587f, g)), TERM(0.114f, b)),
                                              _mm256_set1_ps(128.0f)));
        _mm256_storeu_ps(cb + x, _mm256_add_ps(_mm256_sub_ps(TERM(-0.1687359f, r), TERM(0.3312641f, g)), TERM(0.5f, b)));
        _mm256_storeu_ps(cr + x, _mm256_sub_ps(_mm256_sub_ps(TERM(0.5f, r), TERM(0.4186876f, g)), TERM(0.0813124f, b)));
#undef TERM
    }
    for (; x < count; x++) one_pixel(rgb + 3 * x, y + x, cb + x, cr + x);
}
__attribute__((target("avx2")))
void iec_rgb_to_luma256_avx2(const unsigned char *rgb, size_t count, int32_t *luma) {
    __m128i redLow, redHigh, greenLow, greenHigh, blueLow, blueHigh;
    channel_masks(0, &redLow, &redHigh);
    channel_masks(1, &greenLow, &greenHigh);
    channel_masks(2, &blueLow, &blueHigh);
    size_t x = 0;
    for (; x + 8 <= count; x += 8) {
        const __m128i low = _mm_loadu_si128((const __m128i *)(rgb + 3 * x));
        const __m128i high = _mm_loadl_epi64((const __m128i *)(rgb + 3 * x + 16));
        const __m256i r = channel_integers(low, high, redLow, redHigh), g = channel_integers(low, high, greenLow, greenHigh);
        const __m256i b = channel_integers(low, high, blueLow, blueHigh);
        const __m256i sum = _mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(_mm256_set1_epi32(77), r),
                                                              _mm256_mullo_epi32(_mm256_set1_epi32(150), g)),
                                             _mm256_mullo_epi32(_mm256_set1_epi32(29), b));
        _mm256_storeu_si256((__m256i *)(luma + x), sum);
    }
    for (; x < count; x++) luma[x] = 77 * (int32_t)rgb[3 * x] + 150 * (int32_t)rgb[3 * x + 1] + 29 * (int32_t)rgb[3 * x + 2];
}
#else
void iec_rgb_to_luma256_avx2(const unsigned char *rgb, size_t count, int32_t *luma) {
    iec_rgb_to_luma256_portable(rgb, count, luma);
}

void iec_rgb_to_ycbcr_avx2(const unsigned char *rgb, size_t count, float *y, float *cb, float *cr) {
    iec_rgb_to_ycbcr_portable(rgb, count, y, cb, cr);
}
#endif
