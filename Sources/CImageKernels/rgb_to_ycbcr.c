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
static inline int32_t luma_pixel(const unsigned char *rgb) {
    return 77 * (int32_t)rgb[0] + 150 * (int32_t)rgb[1] + 29 * (int32_t)rgb[2];
}

void iec_rgb_to_luma256_portable(const unsigned char *rgb, size_t count, int32_t *luma) {
    for (size_t x = 0; x < count; x++) luma[x] = luma_pixel(rgb + 3 * x);
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

/// The shuffles that split eight packed RGB pixels into their channels, made once per call.
typedef struct {
    __m128i redLow, redHigh, greenLow, greenHigh, blueLow, blueHigh;
} rgb_gather;

__attribute__((target("avx2")))
static rgb_gather gather_masks(void) {
    rgb_gather g;
    channel_masks(0, &g.redLow, &g.redHigh);
    channel_masks(1, &g.greenLow, &g.greenHigh);
    channel_masks(2, &g.blueLow, &g.blueHigh);
    return g;
}

/// The three channels of the eight pixels at `rgb` as 32-bit integers, read as exactly their 24
/// bytes.
__attribute__((target("avx2")))
static inline void gather8(const unsigned char *rgb, const rgb_gather *g, __m256i *r, __m256i *gr, __m256i *b) {
    const __m128i low = _mm_loadu_si128((const __m128i *)rgb);
    const __m128i high = _mm_loadl_epi64((const __m128i *)(rgb + 16));
#define CHANNEL(fromLow, fromHigh) _mm256_cvtepu8_epi32(_mm_or_si128(_mm_shuffle_epi8(low, fromLow), _mm_shuffle_epi8(high, fromHigh)))
    *r = CHANNEL(g->redLow, g->redHigh);
    *gr = CHANNEL(g->greenLow, g->greenHigh);
    *b = CHANNEL(g->blueLow, g->blueHigh);
#undef CHANNEL
}

// AVX2 without FMA: eight pixels at a time.
__attribute__((target("avx2")))
void iec_rgb_to_ycbcr_avx2(const unsigned char *rgb, size_t count, float *y, float *cb, float *cr) {
    const rgb_gather masks = gather_masks();
    size_t x = 0;
    for (; x + 8 <= count; x += 8) {
        __m256i ri, gi, bi;
        gather8(rgb + 3 * x, &masks, &ri, &gi, &bi);
        const __m256 r = _mm256_cvtepi32_ps(ri), g = _mm256_cvtepi32_ps(gi), b = _mm256_cvtepi32_ps(bi);
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
    const rgb_gather masks = gather_masks();
    size_t x = 0;
    for (; x + 8 <= count; x += 8) {
        __m256i r, g, b;
        gather8(rgb + 3 * x, &masks, &r, &g, &b);
        const __m256i sum = _mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(_mm256_set1_epi32(77), r),
                                                              _mm256_mullo_epi32(_mm256_set1_epi32(150), g)),
                                             _mm256_mullo_epi32(_mm256_set1_epi32(29), b));
        _mm256_storeu_si256((__m256i *)(luma + x), sum);
    }
    for (; x < count; x++) luma[x] = luma_pixel(rgb + 3 * x);
}
#else
void iec_rgb_to_luma256_avx2(const unsigned char *rgb, size_t count, int32_t *luma) {
    iec_rgb_to_luma256_portable(rgb, count, luma);
}

void iec_rgb_to_ycbcr_avx2(const unsigned char *rgb, size_t count, float *y, float *cb, float *cr) {
    iec_rgb_to_ycbcr_portable(rgb, count, y, cb, cr);
}
#endif
