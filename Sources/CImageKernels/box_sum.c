// The resampler's box pre-reduction (see CImageKernels.h). Block b of a row of pixels of
// `lanes` floats covers pixels b·box ..< min(width, b·box + box); each is added, in order, to
// the block's running sum, lane by lane, and the average is one reciprocal times the sum.
// Lanes are independent and every sum is the same chain of adds wherever it runs, so one
// version serves every CPU; the compiler vectorises the four lanes of a colour pixel.
#pragma clang fp contract(off)

#include "CImageKernels.h"

static inline size_t block_end(size_t block, size_t box, size_t width) {
    const size_t end = block * box + box;
    return end < width ? end : width;
}

void iec_box_accumulate(const float *restrict pixels, size_t width, size_t lanes, size_t box, float *restrict sums) {
    const size_t blocks = (width + box - 1) / box;
    if (lanes == 4 && box == 2) {
        // The common case (a 4-8× reduction), without the loop over a block's pixels.
        const size_t whole = width / 2;
        // A block's four lanes are one vector add per pixel; vectorising across blocks instead
        // only adds shuffles.
#pragma clang loop vectorize(disable)
        for (size_t block = 0; block < whole; block++) {
            for (int lane = 0; lane < 4; lane++) {
                const float sum = sums[4 * block + lane] + pixels[8 * block + lane];
                sums[4 * block + lane] = sum + pixels[8 * block + 4 + lane];
            }
        }
        if (whole < blocks) {
            for (int lane = 0; lane < 4; lane++) sums[4 * whole + lane] = sums[4 * whole + lane] + pixels[8 * whole + lane];
        }
        return;
    }
    if (lanes == 4) {
        for (size_t block = 0; block < blocks; block++) {
            float sum[4] = {sums[4 * block], sums[4 * block + 1], sums[4 * block + 2], sums[4 * block + 3]};
            for (size_t x = block * box, end = block_end(block, box, width); x < end; x++) {
                for (int lane = 0; lane < 4; lane++) sum[lane] = sum[lane] + pixels[4 * x + lane];
            }
            for (int lane = 0; lane < 4; lane++) sums[4 * block + lane] = sum[lane];
        }
        return;
    }
    for (size_t block = 0; block < blocks; block++) {
        for (size_t lane = 0; lane < lanes; lane++) {
            float sum = sums[lanes * block + lane];
            for (size_t x = block * box, end = block_end(block, box, width); x < end; x++) sum = sum + pixels[lanes * x + lane];
            sums[lanes * block + lane] = sum;
        }
    }
}

/// One block's average; `lanes` is a constant at each call, so the lanes' loop unrolls.
static inline void average_block(float *restrict sums, float *restrict pixels, size_t block, size_t lanes, float scale) {
    for (size_t lane = 0; lane < lanes; lane++) {
        pixels[lanes * block + lane] = scale * sums[lanes * block + lane];
        sums[lanes * block + lane] = 0;
    }
}

void iec_box_average(float *restrict sums, size_t width, size_t lanes, size_t box, size_t rows, float *restrict pixels) {
    const size_t blocks = (width + box - 1) / box, whole = width / box;
    // Every block but a partial last one covers `box` columns: one division for all of them.
    const float scale = 1.0f / ((float)box * (float)rows);
    for (size_t block = 0; block < whole; block++) {
        if (lanes == 4) {
            average_block(sums, pixels, block, 4, scale);
        } else {
            average_block(sums, pixels, block, lanes, scale);
        }
    }
    if (whole < blocks) average_block(sums, pixels, whole, lanes, 1.0f / ((float)(width - whole * box) * (float)rows));
}
