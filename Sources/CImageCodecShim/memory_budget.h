// The byte counter every decoder's library allocations pass through (libpng's malloc_fn,
// libjpeg's memory-manager methods): what the library holds now, the most it held, and a
// ceiling it may not pass. See iec_memory_usage in CImageCodecShim.h.
#ifndef IEC_MEMORY_BUDGET_H
#define IEC_MEMORY_BUDGET_H

#include "CImageCodecShim.h"

/// Counts `bytes` as held; 0 (and nothing counted) when that would pass the limit or overflow.
static inline int iec_memory_reserve(iec_memory_usage *usage, size_t bytes) {
    if (bytes > SIZE_MAX - usage->current) return 0;
    size_t next = usage->current + bytes;
    if (usage->limit > 0 && next > usage->limit) return 0;
    usage->current = next;
    if (next > usage->peak) usage->peak = next;
    return 1;
}

static inline void iec_memory_release(iec_memory_usage *usage, size_t bytes) {
    usage->current = bytes > usage->current ? 0 : usage->current - bytes;
}

/// a × b, or SIZE_MAX when it overflows (which no limit admits).
static inline size_t iec_multiply(size_t a, size_t b) {
    return a != 0 && b > SIZE_MAX / a ? SIZE_MAX : a * b;
}

static inline size_t iec_add(size_t a, size_t b) { return b > SIZE_MAX - a ? SIZE_MAX : a + b; }

#endif
