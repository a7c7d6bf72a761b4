import CImageCodecShim

/// Memory straight from the kernel, in whole pages, for the largest and longest-lived buffers a
/// request holds — a downloaded source, a file read whole — so that what is freed goes back to
/// the system at once, and a buffer that grows moves its pages instead of copying them (the C
/// shim's `iec_pages_*`: mmap, mremap, munmap on Linux; the C allocator elsewhere).
///
/// `serve` keeps blocks up to 32 MB in glibc's heap (its renders reuse freed rows and planes
/// there), so a source growing through 1, 2, 4 … 32 MB steps left those steps in the heap's free
/// lists: 16 sources of 60 MiB at once peaked 109 MB above what the budget held. Pages hold
/// exactly what is charged. Below 4 MiB the heap serves them after all: fresh pages fault in
/// one at a time, which cost a 512 px thumbnail of a 400 KB source about 2 % of its CPU, and
/// steps that small are not what piled up.
package enum PageMemory {
    /// `bytes` of memory (not necessarily zeroed), or nil.
    package static func allocate(_ bytes: Int) -> UnsafeMutableRawPointer? {
        iec_pages_allocate(max(0, bytes))
    }

    /// The memory at `pointer`, of `old` bytes, made `new` bytes long, its contents kept (moved,
    /// not copied, where the kernel can); nil, and the old memory untouched, on failure.
    package static func resize(_ pointer: UnsafeMutableRawPointer, from old: Int, to new: Int) -> UnsafeMutableRawPointer? {
        iec_pages_resize(pointer, max(0, old), max(0, new))
    }

    /// Gives back memory of `bytes` from ``allocate(_:)`` or ``resize(_:from:to:)``.
    package static func free(_ pointer: UnsafeMutableRawPointer, _ bytes: Int) {
        iec_pages_free(pointer, max(0, bytes))
    }
}
