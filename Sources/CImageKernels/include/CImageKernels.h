#ifndef C_IMAGE_KERNELS_H
#define C_IMAGE_KERNELS_H

#include <stddef.h>

/// Hot loops of the codec, each in two versions that give the same bytes: a portable one, for
/// any x86-64 or ARM CPU, and one for the CPUs that have the instructions it needs, chosen at
/// run time. Both compute every float with the same operations in the same order and no
/// contraction into fused multiply-adds, so outputs (and the service's ETags) do not depend on
/// the CPU. `IMAGE_ENGINE_PORTABLE_KERNELS=1` in the environment forces the portable versions.

/// Which version the calls below use: 0 portable, 1 AVX2.
int iec_kernels_level(void);

/// The resampler's vertical pass: tap t's row starts at `ring + offsets[t]`; for each of
/// `count` floats x, `sum[x] = ((0 + w[0]·row0[x]) + w[1]·row1[x]) + …` over `taps` rows,
/// each product rounded to float before it is added.
void iec_resample_vertical(const float *ring, const ptrdiff_t *offsets, const float *weights, int taps, float *sum, size_t count);

/// The two versions, for tests that compare them; `_avx2` only when `iec_kernels_level()` is 1
/// without the override, i.e. the CPU has AVX2.
void iec_resample_vertical_portable(const float *ring, const ptrdiff_t *offsets, const float *weights, int taps, float *sum, size_t count);
void iec_resample_vertical_avx2(const float *ring, const ptrdiff_t *offsets, const float *weights, int taps, float *sum, size_t count);
int iec_kernels_cpu_has_avx2(void);

#endif
