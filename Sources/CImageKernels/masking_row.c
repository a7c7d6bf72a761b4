// The perceptual encoder's masking field, one row (see CImageKernels.h): each 8-pixel block's
// sum of |Laplacian| over the row, in 32-bit integers (exact, so every version agrees), added
// to the block's float total. Edge pixels take their own value for the missing neighbour.
#pragma clang fp contract(off)

#include "CImageKernels.h"

#include <stdint.h>
#include <stdlib.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

static inline int32_t block_sum(const int32_t *above, const int32_t *centre, const int32_t *below, size_t width, size_t first) {
    int32_t sum = 0;
    const size_t end = first + 8 < width ? first + 8 : width;
    for (size_t x = first; x < end; x++) {
        const int32_t left = centre[x > 0 ? x - 1 : 0], right = centre[x + 1 < width ? x + 1 : x];
        sum += abs(4 * centre[x] - left - right - above[x] - below[x]);
    }
    return sum;
}

void iec_masking_row_portable(const int32_t *above, const int32_t *centre, const int32_t *below, size_t width, float *blocks) {
    const size_t count = (width + 7) / 8;
    for (size_t block = 0; block < count; block++) blocks[block] += (float)block_sum(above, centre, below, width, 8 * block);
}

#if defined(__x86_64__)
/// |Laplacian| of the eight pixels from `x` (all interior: x ≥ 1, x + 9 ≤ width), one per lane.
__attribute__((target("avx2")))
static inline __m256i laplacian8(const int32_t *above, const int32_t *centre, const int32_t *below, size_t x) {
    __m256i laplacian = _mm256_slli_epi32(_mm256_loadu_si256((const __m256i *)(centre + x)), 2);
    laplacian = _mm256_sub_epi32(laplacian, _mm256_loadu_si256((const __m256i *)(centre + x - 1)));
    laplacian = _mm256_sub_epi32(laplacian, _mm256_loadu_si256((const __m256i *)(centre + x + 1)));
    laplacian = _mm256_sub_epi32(laplacian, _mm256_loadu_si256((const __m256i *)(above + x)));
    laplacian = _mm256_sub_epi32(laplacian, _mm256_loadu_si256((const __m256i *)(below + x)));
    return _mm256_abs_epi32(laplacian);
}

// AVX2: an interior block (one with both neighbours of all its pixels) is one register. Eight
// interior blocks in a row are summed together: three rounds of pairwise horizontal additions
// leave block i's eight lanes in lane i (integers, so the grouping changes nothing), and the
// eight totals are added to their floats in one register, each its own single addition as in
// the portable version.
__attribute__((target("avx2")))
void iec_masking_row_avx2(const int32_t *above, const int32_t *centre, const int32_t *below, size_t width, float *blocks) {
    const size_t count = (width + 7) / 8;
    size_t block = 0;
    for (; block < count; block++) {
        const size_t x = 8 * block;
        if (x >= 1 && x + 8 * 8 + 1 <= width) {
            __m256i m[8];
            for (int i = 0; i < 8; i++) m[i] = laplacian8(above, centre, below, x + 8 * (size_t)i);
            const __m256i pairs0 = _mm256_hadd_epi32(m[0], m[1]), pairs1 = _mm256_hadd_epi32(m[2], m[3]);
            const __m256i pairs2 = _mm256_hadd_epi32(m[4], m[5]), pairs3 = _mm256_hadd_epi32(m[6], m[7]);
            // Lane i of `quads0` holds block i's low half (i < 4) or block i − 4's high half.
            const __m256i quads0 = _mm256_hadd_epi32(pairs0, pairs1), quads1 = _mm256_hadd_epi32(pairs2, pairs3);
            const __m256i sums = _mm256_add_epi32(_mm256_permute2x128_si256(quads0, quads1, 0x20),
                                                  _mm256_permute2x128_si256(quads0, quads1, 0x31));
            _mm256_storeu_ps(blocks + block, _mm256_add_ps(_mm256_loadu_ps(blocks + block), _mm256_cvtepi32_ps(sums)));
            block += 7;
            continue;
        }
        if (x < 1 || x + 9 > width) {
            blocks[block] += (float)block_sum(above, centre, below, width, x);
            continue;
        }
        const __m256i magnitude = laplacian8(above, centre, below, x);
        __m128i sum = _mm_add_epi32(_mm256_castsi256_si128(magnitude), _mm256_extracti128_si256(magnitude, 1));
        sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0x4E));
        sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0xB1));
        blocks[block] += (float)_mm_cvtsi128_si32(sum);
    }
}
#else
void iec_masking_row_avx2(const int32_t *above, const int32_t *centre, const int32_t *below, size_t width, float *blocks) {
    iec_masking_row_portable(above, centre, below, width, blocks);
}
#endif
