// SSIMULACRA2's colour space (see CImageKernels.h): linear RGB to JPEG XL's XYB, shifted
// positive, in place. Every lane is independent and every version rounds the same operations
// in the same order (no contraction), so scores do not depend on the CPU.
#pragma clang fp contract(off)

#include "CImageKernels.h"

#include <math.h>
#include <string.h>

/// Eight pixels, as every version computes them: `r`, `g`, `b` in, X, Y, B out.
#define IEC_XYB_BODY                                                                                   \
    float mixed[3][8];                                                                               \
    for (int row = 0; row < 3; row++) {                                                              \
        const float w0 = matrix[3 * row], w1 = matrix[3 * row + 1], w2 = matrix[3 * row + 2];        \
        for (int lane = 0; lane < 8; lane++) {                                                       \
            float sum = w0 * r[lane];                                                                \
            sum = sum + w1 * g[lane];                                                                \
            sum = sum + w2 * b[lane];                                                                \
            sum = sum + bias;                                                                        \
            /* max(sum, 0) as (x + |x|) / 2, exact. */                                               \
            const float value = 0.5f * (sum + fabsf(sum));                                           \
            /* Cube root: an exponent-thirding guess, then two Newton steps. */                      \
            uint32_t bits;                                                                           \
            memcpy(&bits, &value, 4);                                                                \
            bits = bits / 3u + 709921077u;                                                           \
            float guess;                                                                             \
            memcpy(&guess, &bits, 4);                                                                \
            for (int step = 0; step < 2; step++) {                                                   \
                const float square = guess * guess;                                                  \
                const float excess = square * guess - value;                                         \
                guess = guess - excess / (3.0f * square);                                            \
            }                                                                                        \
            mixed[row][lane] = (value <= 0 ? 0.0f : guess) - bias_root;                              \
        }                                                                                            \
    }                                                                                                \
    for (int lane = 0; lane < 8; lane++) {                                                           \
        const float x = 0.5f * (mixed[0][lane] - mixed[1][lane]);                                    \
        const float y = 0.5f * (mixed[0][lane] + mixed[1][lane]);                                    \
        r[lane] = x * 14.0f + 0.42f;                                                                 \
        g[lane] = y + 0.01f;                                                                         \
        b[lane] = (mixed[2][lane] - y) + 0.55f;                                                      \
    }

static inline void eight_portable(float *r, float *g, float *b, const float *matrix, float bias, float bias_root) {
    IEC_XYB_BODY
}

/// The last pixels (fewer than eight), through a block of eight whose unused lanes are zero.
static void tail(float *r, float *g, float *b, size_t count, const float *matrix, float bias, float bias_root) {
    float lanes[3][8] = {{0}};
    for (size_t i = 0; i < count; i++) {
        lanes[0][i] = r[i];
        lanes[1][i] = g[i];
        lanes[2][i] = b[i];
    }
    eight_portable(lanes[0], lanes[1], lanes[2], matrix, bias, bias_root);
    for (size_t i = 0; i < count; i++) {
        r[i] = lanes[0][i];
        g[i] = lanes[1][i];
        b[i] = lanes[2][i];
    }
}

void iec_positive_xyb_portable(float *r, float *g, float *b, size_t count, const float *matrix, float bias, float bias_root) {
    size_t i = 0;
    for (; i + 8 <= count; i += 8) eight_portable(r + i, g + i, b + i, matrix, bias, bias_root);
    tail(r + i, g + i, b + i, count - i, matrix, bias, bias_root);
}

#if defined(__x86_64__)
// The same body, compiled for AVX2 (the compiler vectorises the eight lanes; it may not fuse).
__attribute__((target("avx2"))) static inline void eight_avx2(float *r, float *g, float *b, const float *matrix, float bias,
                                                              float bias_root) {
    IEC_XYB_BODY
}

__attribute__((target("avx2")))
void iec_positive_xyb_avx2(float *r, float *g, float *b, size_t count, const float *matrix, float bias, float bias_root) {
    size_t i = 0;
    for (; i + 8 <= count; i += 8) eight_avx2(r + i, g + i, b + i, matrix, bias, bias_root);
    tail(r + i, g + i, b + i, count - i, matrix, bias, bias_root);
}
#else
void iec_positive_xyb_avx2(float *r, float *g, float *b, size_t count, const float *matrix, float bias, float bias_root) {
    iec_positive_xyb_portable(r, g, b, count, matrix, bias, bias_root);
}
#endif
