import CGlibcMalloc

/// glibc's allocator, set per command before any other thread allocates (an arena made before
/// stays in use). The library leaves the allocator alone: an app embedding it owns its process.
enum MallocTuning {
    /// For a batch of big transient decode buffers (`thumbnail`).
    ///
    /// By default glibc serves blocks of a few MB with fresh `mmap`s and gives freed heap back to
    /// the kernel, so every decode of a batch page-faults and zeroes its row and plane buffers
    /// again: 12% of a 27-photo batch's CPU time was the kernel doing that. Keeping blocks up to
    /// 32 MB (glibc's ceiling for this setting) in the heap, not trimming it, and one arena (so a
    /// block freed by one decode thread serves the next decode on another, instead of each
    /// thread's arena keeping its own) cut the kernel's share to 0.24 s from 0.48 s and the batch
    /// from 1.65 s to 1.54 s, for a peak 7 MB higher (170 against 163 MB). Measured on
    /// SampleImages/ and the photos of `Benchmarks/scripts/outside-photos.sh` filled into
    /// 512×512, `--jobs 2`.
    static func batch() {
        #if canImport(Glibc) && !os(Android)
        _ = mallopt(M_ARENA_MAX, 1)
        _ = mallopt(M_MMAP_THRESHOLD, 32 << 20)
        _ = mallopt(M_TRIM_THRESHOLD, 256 << 20)
        #endif
    }

    /// For `serve`: blocks up to 32 MB stay in the heap, as in a batch, so each render's row and
    /// plane buffers reuse freed pages instead of mapping and zeroing new ones; the heap is given
    /// back above 64 MB of free top, so a burst does not stay resident; arenas as glibc sizes
    /// them (one arena would serialise a many-core server's allocations).
    ///
    /// Measured with `serve` behind an nginx origin, 512 px thumbnails of new 1600-3000 px JPEGs,
    /// 3 alternating runs of 20 s at 2 connections (`GLIBC_TUNABLES` with the same values): 110.7
    /// req/s against 106.7 with glibc's defaults, p99 40 ms against 50, 14.6 ms of CPU an image
    /// against 15.0, peak PSS 121 MB against 115. The batch's single arena and untrimmed heap did
    /// as well at 2 connections (112.5 req/s) and the same as the defaults at 8.
    static func service() {
        #if canImport(Glibc) && !os(Android)
        _ = mallopt(M_MMAP_THRESHOLD, 32 << 20)
        _ = mallopt(M_TRIM_THRESHOLD, 64 << 20)
        #endif
    }
}
