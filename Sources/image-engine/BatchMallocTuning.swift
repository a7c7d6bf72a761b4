import CGlibcMalloc

/// glibc's allocator, set for a batch of big transient decode buffers (the `thumbnail` command
/// only; the library and the long-running `serve` keep the defaults).
///
/// By default glibc serves blocks of a few MB with fresh `mmap`s and gives freed heap back to the
/// kernel, so every decode of a batch page-faults and zeroes its row and plane buffers again: 12%
/// of a 27-photo batch's CPU time was the kernel doing that. Keeping blocks up to 32 MB (glibc's
/// ceiling for this setting) in the heap, not trimming it, and one arena (so a block freed by
/// one decode thread serves the next decode on another, instead of each thread's arena keeping
/// its own) cut the kernel's share to 0.24 s from 0.48 s and the batch from 1.65 s to 1.54 s,
/// for a peak 7 MB higher (170 against 163 MB). Measured on SampleImages/ and the photos of
/// `Benchmarks/scripts/outside-photos.sh` filled into 512×512, `--jobs 2`.
enum BatchMallocTuning {
    /// Call before any other thread allocates (an arena made before stays in use).
    static func apply() {
        #if canImport(Glibc) && !os(Android)
        _ = mallopt(M_ARENA_MAX, 1)
        _ = mallopt(M_MMAP_THRESHOLD, 32 << 20)
        _ = mallopt(M_TRIM_THRESHOLD, 256 << 20)
        #endif
    }
}
