// Scaled inverse DCTs (see CImageKernels.h): an N×N block of samples from the lowest
// min(N, 8)² coefficients of an 8×8 block, at the DCT scales where libjpeg-turbo either averages
// (2/8, 4/8) or runs plain C (3/8, 5/8, 6/8, 7/8, and 4:2:0 chroma at 10, 12, 14).
//
// Written as two matrix products with the basis of idct_basis.h (the 2-D formula's factor split
// so that a block's DC reaches its samples as DC/8 exactly), taken in an order that needs no
// transpose: first T, each row a sum of first-pass basis rows scaled by one coefficient each
// (row v of T = Σᵤ X[v][u]·pass1[u]); then each output row a sum of T's rows scaled by one
// second-pass basis value each (row y = Σᵥ pass2[v][y]·T[v]). Both are "scalar
// times a row of floats, added to a running row", so every lane is independent and a version
// may handle as many at once as it likes. What every version keeps: the terms added in
// increasing u (then v), each product rounded to float before it is added, sums starting from
// 0. A version may leave out terms whose coefficient is zero: such a term is ±0, and adding ±0
// changes no sum but the sign of a zero, which every sample shows as 128. No contraction
// anywhere in this file.
#pragma clang fp contract(off)

#include "CImageKernels.h"
#include "idct_basis.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define ALWAYS_INLINE inline __attribute__((always_inline))

/// The two passes' basis for n (idct_basis.h), or NULLs.
typedef struct {
    const float (*pass1)[16];
    const float (*pass2)[16];
} basis;

static ALWAYS_INLINE basis basis_for(int n) {
    switch (n) {
    case 2: return (basis){idct_pass1_2, idct_pass2_2};
    case 3: return (basis){idct_pass1_3, idct_pass2_3};
    case 4: return (basis){idct_pass1_4, idct_pass2_4};
    case 5: return (basis){idct_pass1_5, idct_pass2_5};
    case 6: return (basis){idct_pass1_6, idct_pass2_6};
    case 7: return (basis){idct_pass1_7, idct_pass2_7};
    case 10: return (basis){idct_pass1_10, idct_pass2_10};
    case 12: return (basis){idct_pass1_12, idct_pass2_12};
    case 14: return (basis){idct_pass1_14, idct_pass2_14};
    default: return (basis){NULL, NULL};
    }
}

int iec_idct_scaled_supports(int n) { return basis_for(n).pass1 != NULL; }

/// A sample: level-shifted by 128, rounded half up as libjpeg rounds (128.5 added, then
/// truncated: the value is not negative by then), clamped to 0...255.
static ALWAYS_INLINE unsigned char sample(float value) {
    float shifted = value + 128.5f;
    shifted = shifted < 0.0f ? 0.0f : shifted;
    shifted = shifted > 255.0f ? 255.0f : shifted;
    return (unsigned char)(int)shifted;
}

/// The dequantized coefficient (v, u): 16-bit × 16-bit, exact in 32 bits, then to float.
static ALWAYS_INLINE float coefficient(const short *coefficients, const unsigned short *quantization, int v, int u) {
    return (float)((int32_t)coefficients[8 * v + u] * (int32_t)quantization[8 * v + u]);
}

/// A coefficient row's two 64-bit words (u 0-3, u 4-7) kept to u < k and folded into one word
/// that is zero exactly when those coefficients are.
static ALWAYS_INLINE uint64_t first_columns(uint64_t low, uint64_t high, int k) {
    if (k <= 4) return low & (k == 4 ? ~(uint64_t)0 : (((uint64_t)1 << (16 * k)) - 1));
    return low | (high & (k == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (16 * (k - 4))) - 1)));
}

/// Whether coefficients u < k of row v are all zero.
static ALWAYS_INLINE int row_is_zero(const short *coefficients, int v, int k) {
    uint64_t words[2];
    memcpy(words, coefficients + 8 * v, sizeof words);
    return first_columns(words[0], words[1], k) == 0;
}

/// Whether the only coefficient of the k×k the IDCT reads that is not zero is the DC, if any.
static ALWAYS_INLINE int only_dc(const short *coefficients, int k) {
    uint64_t words[16];
    memcpy(words, coefficients, sizeof words);
    uint64_t any = first_columns(words[0] & ~(uint64_t)0xFFFF, words[1], k);
    for (int v = 1; v < k; v++) any |= first_columns(words[2 * v], words[2 * v + 1], k);
    return any == 0;
}

/// A block with only a DC: every sample is pass2[0][y]·(x₀₀·pass1[0][x]), which the general
/// sums give exactly (the other terms are ±0, see the top of this file), and row 0 of each
/// basis is one value (cos 0 in every column), so one sample fills the block. In photos most
/// chroma blocks and many luma blocks are flat at these scales.
static ALWAYS_INLINE void idct_dc(const int n, const short *coefficients, const unsigned short *quantization, unsigned char *const *rows, unsigned column) {
    const float (*pass1)[16] = basis_for(n).pass1, (*pass2)[16] = basis_for(n).pass2;
    const float t = coefficient(coefficients, quantization, 0, 0) * pass1[0][0];
    const unsigned char value = sample(pass2[0][0] * t);
    for (int y = 0; y < n; y++) memset(rows[y] + column, value, (size_t)n);
}

/// The portable version for one n, the compiler's vectors over `lanes` (8 or 16) floats.
static ALWAYS_INLINE void idct_portable(const int n, const short *coefficients, const unsigned short *quantization, unsigned char *const *rows, unsigned column) {
    if (only_dc(coefficients, n < 8 ? n : 8)) {
        idct_dc(n, coefficients, quantization, rows, column);
        return;
    }
    const float (*pass1)[16] = basis_for(n).pass1, (*pass2)[16] = basis_for(n).pass2;
    const int k = n < 8 ? n : 8, lanes = n <= 4 ? 4 : n <= 8 ? 8 : 16;
    float t[8][16];
    int used[8], rowsUsed = 0;
    for (int v = 0; v < k; v++) {
        if (row_is_zero(coefficients, v, k)) continue;
        float s[16] = {0};
        for (int u = 0; u < k; u++) {
            const float x = coefficient(coefficients, quantization, v, u);
            for (int lane = 0; lane < lanes; lane++) {
                const float product = x * pass1[u][lane];
                s[lane] = s[lane] + product;
            }
        }
        memcpy(t[rowsUsed], s, sizeof s);
        used[rowsUsed++] = v;
    }
    for (int y = 0; y < n; y++) {
        float s[16] = {0};
        for (int r = 0; r < rowsUsed; r++) {
            const float a = pass2[used[r]][y];
            for (int lane = 0; lane < lanes; lane++) {
                const float product = a * t[r][lane];
                s[lane] = s[lane] + product;
            }
        }
        unsigned char bytes[16];
        for (int x = 0; x < lanes; x++) bytes[x] = sample(s[x]);
        memcpy(rows[y] + column, bytes, (size_t)n);
    }
}

/// The 2×2 block, in scalars (four coefficients; any vector would be mostly empty), used by
/// every version. The same sums as the general case: with two terms, the sum from 0 is the sum
/// of the two products (0 + p is p but for the sign of a zero).
static ALWAYS_INLINE void idct2(const short *coefficients, const unsigned short *quantization, unsigned char *const *rows, unsigned column) {
    if (only_dc(coefficients, 2)) {
        idct_dc(2, coefficients, quantization, rows, column);
        return;
    }
    const float (*pass1)[16] = idct_pass1_2, (*pass2)[16] = idct_pass2_2;
    const float x00 = coefficient(coefficients, quantization, 0, 0), x01 = coefficient(coefficients, quantization, 0, 1);
    const float x10 = coefficient(coefficients, quantization, 1, 0), x11 = coefficient(coefficients, quantization, 1, 1);
    float t[2][2];
    for (int x = 0; x < 2; x++) {
        const float a0 = x00 * pass1[0][x], b0 = x01 * pass1[1][x];
        const float a1 = x10 * pass1[0][x], b1 = x11 * pass1[1][x];
        t[0][x] = a0 + b0;
        t[1][x] = a1 + b1;
    }
    for (int y = 0; y < 2; y++) {
        for (int x = 0; x < 2; x++) {
            const float a = pass2[0][y] * t[0][x], b = pass2[1][y] * t[1][x];
            rows[y][column + x] = sample(a + b);
        }
    }
}

void iec_idct_scaled_portable(int n, const short *coefficients, const unsigned short *quantization, unsigned char *const *rows, unsigned column) {
    // One copy per size, so every loop bound is a constant.
    switch (n) {
    case 2: idct2(coefficients, quantization, rows, column); break;
    case 3: idct_portable(3, coefficients, quantization, rows, column); break;
    case 4: idct_portable(4, coefficients, quantization, rows, column); break;
    case 5: idct_portable(5, coefficients, quantization, rows, column); break;
    case 6: idct_portable(6, coefficients, quantization, rows, column); break;
    case 7: idct_portable(7, coefficients, quantization, rows, column); break;
    case 10: idct_portable(10, coefficients, quantization, rows, column); break;
    case 12: idct_portable(12, coefficients, quantization, rows, column); break;
    case 14: idct_portable(14, coefficients, quantization, rows, column); break;
    default: break;
    }
}

#if defined(__x86_64__)
/// Eight samples as bytes, exactly as `sample` makes each (truncation is the conversion that
/// does not depend on the rounding mode), in the low 8 bytes.
__attribute__((target("avx2")))
static ALWAYS_INLINE uint64_t samples8(__m256 values) {
    __m256 shifted = _mm256_add_ps(values, _mm256_set1_ps(128.5f));
    shifted = _mm256_min_ps(_mm256_max_ps(shifted, _mm256_setzero_ps()), _mm256_set1_ps(255.0f));
    const __m256i integers = _mm256_cvttps_epi32(shifted);
    const __m256i gather = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                            0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i packed = _mm256_shuffle_epi8(integers, gather);
    const uint64_t low = (uint32_t)_mm_cvtsi128_si32(_mm256_castsi256_si128(packed));
    const uint64_t high = (uint32_t)_mm_cvtsi128_si32(_mm256_extracti128_si256(packed, 1));
    return low | high << 32;
}

// The 2×2 block in one 128-bit register, lanes (y, x) = (0, 0), (0, 1), (1, 0), (1, 1): idct2's
// products and sums, four at a time. Most blocks of a fast shrink (2/8) come here, four
// samples each, so what counts is the instructions around the arithmetic.
__attribute__((target("avx2")))
static ALWAYS_INLINE void idct2_avx2(const short *coefficients, const unsigned short *quantization, unsigned char *const *rows, unsigned column) {
    if (only_dc(coefficients, 2)) {
        idct_dc(2, coefficients, quantization, rows, column);
        return;
    }
    const float (*pass1)[16] = idct_pass1_2, (*pass2)[16] = idct_pass2_2;
    // x00, x01, x10, x11: 16 × 16 bits, exact in 32, then each to float as `coefficient` does.
    int32_t words[2];
    memcpy(&words[0], coefficients, 4);
    memcpy(&words[1], coefficients + 8, 4);
    const __m128i wanted = _mm_cvtepi16_epi32(_mm_loadl_epi64((const __m128i *)words));
    const __m128i steps = _mm_setr_epi32(quantization[0], quantization[1], quantization[8], quantization[9]);
    const __m128 x = _mm_cvtepi32_ps(_mm_mullo_epi32(wanted, steps));
    // t(v, x) = x(v, 0)·pass1[0][x] + x(v, 1)·pass1[1][x]
    const __m128 first = _mm_setr_ps(pass1[0][0], pass1[0][1], pass1[0][0], pass1[0][1]);
    const __m128 second = _mm_setr_ps(pass1[1][0], pass1[1][1], pass1[1][0], pass1[1][1]);
    const __m128 t = _mm_add_ps(_mm_mul_ps(_mm_shuffle_ps(x, x, 0xA0), first), _mm_mul_ps(_mm_shuffle_ps(x, x, 0xF5), second));
    // sample(y, x) = pass2[0][y]·t(0, x) + pass2[1][y]·t(1, x)
    const __m128 top = _mm_setr_ps(pass2[0][0], pass2[0][0], pass2[0][1], pass2[0][1]);
    const __m128 bottom = _mm_setr_ps(pass2[1][0], pass2[1][0], pass2[1][1], pass2[1][1]);
    const __m128 out = _mm_add_ps(_mm_mul_ps(top, _mm_shuffle_ps(t, t, 0x44)), _mm_mul_ps(bottom, _mm_shuffle_ps(t, t, 0xEE)));
    // The four samples are the low four bytes `samples8` makes of the register.
    const uint32_t bytes = (uint32_t)samples8(_mm256_zextps128_ps256(out));
    const uint16_t upper = (uint16_t)bytes, lower = (uint16_t)(bytes >> 16);
    memcpy(rows[0] + column, &upper, 2);
    memcpy(rows[1] + column, &lower, 2);
}

// The 3×3 and 4×4 blocks, two rows to a register (one in each 128-bit half, four lanes each):
// the same products and sums as idct_avx2, with no test per row. A row of zero coefficients
// still goes through pass 2, which adds ±0 terms: that changes the sign of a zero at most, and
// every such sample is 128 either way (see the top of this file). Most blocks of a 3/8 or 4/8
// decode come here, and the tests per row were what they cost.
__attribute__((target("avx2")))
static ALWAYS_INLINE void idct_small_avx2(const int n, const short *coefficients, const unsigned short *quantization, unsigned char *const *rows, unsigned column) {
    if (only_dc(coefficients, n)) {
        idct_dc(n, coefficients, quantization, rows, column);
        return;
    }
    const float (*pass1)[16] = basis_for(n).pass1, (*pass2)[16] = basis_for(n).pass2;
    // Coefficient rows 0-1 and 2-3 (u < 4), dequantized: 16 × 16 bits, exact in 32, then each
    // to float as `coefficient` converts it. For n = 3, row 3 and column 3 are read and unused.
    __m256 x[2];
    for (int pair = 0; pair < 2; pair++) {
        const short *first = coefficients + 16 * pair;
        const unsigned short *steps = quantization + 16 * pair;
        const __m128i values = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)first), _mm_loadl_epi64((const __m128i *)(first + 8)));
        const __m128i scales = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)steps), _mm_loadl_epi64((const __m128i *)(steps + 8)));
        x[pair] = _mm256_cvtepi32_ps(_mm256_mullo_epi32(_mm256_cvtepi16_epi32(values), _mm256_cvtepu16_epi32(scales)));
    }
    // Pass 1: t(v, ·) = Σ_u x(v, u)·pass1[u], u increasing, from 0.
    __m256 t[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int u = 0; u < n; u++) {
        const __m128 basis = _mm_load_ps(pass1[u]);
        const __m256 both = _mm256_set_m128(basis, basis);
        const __m256i lane = _mm256_set1_epi32(u);
        for (int pair = 0; pair < 2; pair++) t[pair] = _mm256_add_ps(t[pair], _mm256_mul_ps(_mm256_permutevar_ps(x[pair], lane), both));
    }
    // Pass 2: sample row y = Σ_v pass2[v][y]·t(v, ·), v increasing, from 0; rows y and y + 1
    // in the halves of one register.
    __m256 out[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int v = 0; v < n; v++) {
        const __m256 row = v % 2 == 0 ? _mm256_permute2f128_ps(t[v / 2], t[v / 2], 0x00) : _mm256_permute2f128_ps(t[v / 2], t[v / 2], 0x11);
        for (int pair = 0; pair < 2; pair++) {
            const __m256 weights = _mm256_set_m128(_mm_set1_ps(pass2[v][2 * pair + 1]), _mm_set1_ps(pass2[v][2 * pair]));
            out[pair] = _mm256_add_ps(out[pair], _mm256_mul_ps(weights, row));
        }
    }
    for (int pair = 0; pair < 2; pair++) {
        const uint64_t bytes = samples8(out[pair]);
        memcpy(rows[2 * pair] + column, &bytes, (size_t)n);
        if (2 * pair + 1 < n) memcpy(rows[2 * pair + 1] + column, (const unsigned char *)&bytes + 4, (size_t)n);
    }
}

// AVX2 without FMA: a row of up to 16 floats is two registers, one for N ≤ 8.
__attribute__((target("avx2")))
static ALWAYS_INLINE void idct_avx2(const int n, const short *coefficients, const unsigned short *quantization, unsigned char *const *rows, unsigned column) {
    if (only_dc(coefficients, n < 8 ? n : 8)) {
        idct_dc(n, coefficients, quantization, rows, column);
        return;
    }
    const float (*pass1)[16] = basis_for(n).pass1, (*pass2)[16] = basis_for(n).pass2;
    const int k = n < 8 ? n : 8, wide = n > 8;
    __m256 t[8][2];
    int used[8], rowsUsed = 0;
    for (int v = 0; v < k; v++) {
        if (row_is_zero(coefficients, v, k)) continue;
        // The row dequantized at once: 16 × 16 bits, exact in 32, then each to float as
        // `coefficient` converts it.
        const __m256i products = _mm256_mullo_epi32(_mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(coefficients + 8 * v))),
                                                    _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(quantization + 8 * v))));
        const __m256 row = _mm256_cvtepi32_ps(products);
        __m256 low = _mm256_setzero_ps(), high = _mm256_setzero_ps();
        for (int u = 0; u < k; u++) {
            const __m256 x = _mm256_permutevar8x32_ps(row, _mm256_set1_epi32(u));
            low = _mm256_add_ps(low, _mm256_mul_ps(x, _mm256_load_ps(pass1[u])));
            if (wide) high = _mm256_add_ps(high, _mm256_mul_ps(x, _mm256_load_ps(pass1[u] + 8)));
        }
        t[rowsUsed][0] = low;
        t[rowsUsed][1] = high;
        used[rowsUsed++] = v;
    }
    for (int y = 0; y < n; y++) {
        __m256 low = _mm256_setzero_ps(), high = _mm256_setzero_ps();
        for (int r = 0; r < rowsUsed; r++) {
            const __m256 a = _mm256_set1_ps(pass2[used[r]][y]);
            low = _mm256_add_ps(low, _mm256_mul_ps(a, t[r][0]));
            if (wide) high = _mm256_add_ps(high, _mm256_mul_ps(a, t[r][1]));
        }
        unsigned char *out = rows[y] + column;
        const uint64_t first = samples8(low);
        if (wide) {
            const uint64_t second = samples8(high);
            memcpy(out, &first, 8);
            memcpy(out + 8, &second, (size_t)(n - 8));
        } else {
            memcpy(out, &first, (size_t)n);
        }
    }
}

__attribute__((target("avx2")))
void iec_idct_scaled_avx2(int n, const short *coefficients, const unsigned short *quantization, unsigned char *const *rows, unsigned column) {
    switch (n) {
    case 2: idct2_avx2(coefficients, quantization, rows, column); break;
    case 3: idct_small_avx2(3, coefficients, quantization, rows, column); break;
    case 4: idct_small_avx2(4, coefficients, quantization, rows, column); break;
    case 5: idct_avx2(5, coefficients, quantization, rows, column); break;
    case 6: idct_avx2(6, coefficients, quantization, rows, column); break;
    case 7: idct_avx2(7, coefficients, quantization, rows, column); break;
    case 10: idct_avx2(10, coefficients, quantization, rows, column); break;
    case 12: idct_avx2(12, coefficients, quantization, rows, column); break;
    case 14: idct_avx2(14, coefficients, quantization, rows, column); break;
    default: break;
    }
}
#else
void iec_idct_scaled_avx2(int n, const short *coefficients, const unsigned short *quantization, unsigned char *const *rows, unsigned column) {
    iec_idct_scaled_portable(n, coefficients, quantization, rows, column);
}
#endif
