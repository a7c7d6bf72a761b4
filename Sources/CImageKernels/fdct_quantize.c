// The perceptual encoder's forward DCT and quantization of a row of 8×8 blocks (see
// CImageKernels.h), operation for operation the Swift it replaced (ForwardDCT.swift and
// PerceptualQuantization.swift keep the constants; the derivation is in the DocC article
// "Encoding JPEG"): a column pass over the block's rows as vectors of eight lanes, split by the
// cosines' symmetries; a row pass that multiplies each row by the transposed basis with
// broadcast scalars, left to right; then each coefficient times its reciprocal step, rounded to
// nearest (ties to even) by the 1.5·2²³ trick, zeroed inside its dead zone and saturated to 16
// bits. No coefficient of 8-bit samples comes near 16 bits; saturating is what AVX2's pack does,
// so every path gives the same bytes whatever the input. Every lane is independent, so a
// version may hold a row in any width; the order of the operations is the same in all. Blocks
// are read where they lie in the encoder's planes, a row of them a call. No contraction
// anywhere in this file.
#pragma clang fp contract(off)

#include "CImageKernels.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/// One lane of the column pass: f[y] is row y's value in this lane; c[n] = cos(nπ/16).
static inline void columns_lane(float f[8], const float c[8]) {
    const float s0 = f[0] + f[7], s1 = f[1] + f[6], s2 = f[2] + f[5], s3 = f[3] + f[4];
    const float d0 = f[0] - f[7], d1 = f[1] - f[6], d2 = f[2] - f[5], d3 = f[3] - f[4];
    const float e0 = s0 + s3, e1 = s1 + s2, o0 = s0 - s3, o1 = s1 - s2;
    f[0] = e0 + e1;
    f[4] = (e0 - e1) * c[4];
    f[2] = o0 * c[2] + o1 * c[6];
    f[6] = o0 * c[6] - o1 * c[2];
    f[1] = ((d0 * c[1] + d1 * c[3]) + d2 * c[5]) + d3 * c[7];
    f[3] = ((d0 * c[3] - d1 * c[7]) - d2 * c[1]) - d3 * c[5];
    f[5] = ((d0 * c[5] - d1 * c[1]) + d2 * c[7]) + d3 * c[3];
    f[7] = ((d0 * c[7] - d1 * c[5]) + d2 * c[3]) - d3 * c[1];
}

/// The rounded coefficient of `scaled`, or 0 inside the dead zone `threshold`.
static inline short quantized(float scaled, float threshold) {
    const float biased = scaled + 12582912.0f;
    uint32_t bits, magnitude;
    memcpy(&bits, &biased, sizeof bits);
    memcpy(&magnitude, &scaled, sizeof magnitude);
    magnitude &= 0x7FFFFFFFu;
    float absolute;
    memcpy(&absolute, &magnitude, sizeof absolute);
    const int32_t rounded = absolute < threshold ? 0 : (int32_t)(bits - 0x4B400000u);
    return (short)(rounded < -32768 ? -32768 : rounded > 32767 ? 32767 : rounded);
}

/// The transform, in place: afterwards block[8u + v] is F(u, v) times the column pass's scale.
static inline void transform_portable(float *block, const float *transposedBasis, const float *cosines) {
    for (int lane = 0; lane < 8; lane++) {
        float f[8];
        for (int y = 0; y < 8; y++) f[y] = block[8 * y + lane];
        columns_lane(f, cosines);
        for (int y = 0; y < 8; y++) block[8 * y + lane] = f[y];
    }
    for (int u = 0; u < 8; u++) {
        float row[8], sum[8];
        memcpy(row, block + 8 * u, sizeof row);
        for (int v = 0; v < 8; v++) sum[v] = row[0] * transposedBasis[v];
        for (int x = 1; x < 8; x++) {
            for (int v = 0; v < 8; v++) {
                const float product = row[x] * transposedBasis[8 * x + v];
                sum[v] = sum[v] + product;
            }
        }
        memcpy(block + 8 * u, sum, sizeof sum);
    }
}

void iec_fdct_portable(float *block, const float *transposedBasis, const float *cosines) {
    transform_portable(block, transposedBasis, cosines);
}

void iec_fdct_quantize_row_portable(const float *samples, size_t stride, size_t count, const float *strengths,
                                    const float *transposedBasis, const float *cosines, const float *reciprocals,
                                    const float *deadZone, const float *maskedDeadZone, short *coefficients) {
    for (size_t index = 0; index < count; index++) {
        float block[64];
        for (int y = 0; y < 8; y++) memcpy(block + 8 * y, samples + 8 * index + stride * (size_t)y, 8 * sizeof(float));
        transform_portable(block, transposedBasis, cosines);
        short *out = coefficients + 64 * index;
        for (int i = 0; i < 64; i++) {
            const float scaled = block[i] * reciprocals[i];
            const float threshold = deadZone[i] + strengths[index] * maskedDeadZone[i];
            out[i] = quantized(scaled, threshold);
        }
    }
}

#if defined(__x86_64__)
#define ADD _mm256_add_ps
#define SUB _mm256_sub_ps
#define MUL _mm256_mul_ps

// AVX2 without FMA: a row of the block is one register. F's rows into `out`.
__attribute__((target("avx2")))
static inline void transform_avx2(const float *samples, size_t stride, const float *transposedBasis, const float *cosines,
                                  __m256 out[8]) {
    __m256 f[8];
    for (int y = 0; y < 8; y++) f[y] = _mm256_loadu_ps(samples + stride * (size_t)y);
    const __m256 c1 = _mm256_set1_ps(cosines[1]), c2 = _mm256_set1_ps(cosines[2]), c3 = _mm256_set1_ps(cosines[3]);
    const __m256 c4 = _mm256_set1_ps(cosines[4]), c5 = _mm256_set1_ps(cosines[5]), c6 = _mm256_set1_ps(cosines[6]);
    const __m256 c7 = _mm256_set1_ps(cosines[7]);
    const __m256 s0 = ADD(f[0], f[7]), s1 = ADD(f[1], f[6]), s2 = ADD(f[2], f[5]), s3 = ADD(f[3], f[4]);
    const __m256 d0 = SUB(f[0], f[7]), d1 = SUB(f[1], f[6]), d2 = SUB(f[2], f[5]), d3 = SUB(f[3], f[4]);
    const __m256 e0 = ADD(s0, s3), e1 = ADD(s1, s2), o0 = SUB(s0, s3), o1 = SUB(s1, s2);
    __m256 g[8];
    g[0] = ADD(e0, e1);
    g[4] = MUL(SUB(e0, e1), c4);
    g[2] = ADD(MUL(o0, c2), MUL(o1, c6));
    g[6] = SUB(MUL(o0, c6), MUL(o1, c2));
    g[1] = ADD(ADD(ADD(MUL(d0, c1), MUL(d1, c3)), MUL(d2, c5)), MUL(d3, c7));
    g[3] = SUB(SUB(SUB(MUL(d0, c3), MUL(d1, c7)), MUL(d2, c1)), MUL(d3, c5));
    g[5] = ADD(ADD(SUB(MUL(d0, c5), MUL(d1, c1)), MUL(d2, c7)), MUL(d3, c3));
    g[7] = SUB(ADD(SUB(MUL(d0, c7), MUL(d1, c5)), MUL(d2, c3)), MUL(d3, c1));
    for (int u = 0; u < 8; u++) {
        float row[8];
        _mm256_storeu_ps(row, g[u]);
        __m256 sum = MUL(_mm256_set1_ps(row[0]), _mm256_loadu_ps(transposedBasis));
        for (int x = 1; x < 8; x++) sum = ADD(sum, MUL(_mm256_set1_ps(row[x]), _mm256_loadu_ps(transposedBasis + 8 * x)));
        out[u] = sum;
    }
}

__attribute__((target("avx2")))
void iec_fdct_avx2(float *block, const float *transposedBasis, const float *cosines) {
    __m256 out[8];
    transform_avx2(block, 8, transposedBasis, cosines, out);
    for (int u = 0; u < 8; u++) _mm256_storeu_ps(block + 8 * u, out[u]);
}

__attribute__((target("avx2")))
void iec_fdct_quantize_row_avx2(const float *samples, size_t stride, size_t count, const float *strengths,
                                const float *transposedBasis, const float *cosines, const float *reciprocals,
                                const float *deadZone, const float *maskedDeadZone, short *coefficients) {
    const __m256 magic = _mm256_set1_ps(12582912.0f);
    const __m256i magicBits = _mm256_set1_epi32(0x4B400000);
    const __m256 signless = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    for (size_t index = 0; index < count; index++) {
        __m256 g[8];
        transform_avx2(samples + 8 * index, stride, transposedBasis, cosines, g);
        const __m256 strength = _mm256_set1_ps(strengths[index]);
        __m256i kept[8];
        for (int u = 0; u < 8; u++) {
            const __m256 scaled = MUL(g[u], _mm256_loadu_ps(reciprocals + 8 * u));
            const __m256 threshold = ADD(_mm256_loadu_ps(deadZone + 8 * u), MUL(strength, _mm256_loadu_ps(maskedDeadZone + 8 * u)));
            const __m256i rounded = _mm256_sub_epi32(_mm256_castps_si256(ADD(scaled, magic)), magicBits);
            const __m256 inside = _mm256_cmp_ps(_mm256_and_ps(scaled, signless), threshold, _CMP_LT_OQ);
            kept[u] = _mm256_andnot_si256(_mm256_castps_si256(inside), rounded);
        }
        // Two rows a store: the saturating pack interleaves their halves, the permute puts them
        // back in order.
        for (int u = 0; u < 8; u += 2) {
            const __m256i packed = _mm256_permute4x64_epi64(_mm256_packs_epi32(kept[u], kept[u + 1]), 0xD8);
            _mm256_storeu_si256((__m256i *)(coefficients + 64 * index + 8 * u), packed);
        }
    }
}
#undef ADD
#undef SUB
#undef MUL
#else
void iec_fdct_avx2(float *block, const float *transposedBasis, const float *cosines) {
    iec_fdct_portable(block, transposedBasis, cosines);
}

void iec_fdct_quantize_row_avx2(const float *samples, size_t stride, size_t count, const float *strengths,
                                const float *transposedBasis, const float *cosines, const float *reciprocals,
                                const float *deadZone, const float *maskedDeadZone, short *coefficients) {
    iec_fdct_quantize_row_portable(samples, stride, count, strengths, transposedBasis, cosines, reciprocals, deadZone,
                                   maskedDeadZone, coefficients);
}
#endif
