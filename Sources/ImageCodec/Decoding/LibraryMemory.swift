import CImageCodecShim

/// What a codec library allocated for one reader, as the C shim's counting allocator saw it.
struct LibraryMemory: Sendable, Hashable {
    /// Bytes held now.
    var current: Int
    /// The most held at once since the reader was made, or since its ceiling was last set.
    var peak: Int
    /// The ceiling (0: none).
    var limit: Int

    init(_ usage: iec_memory_usage) {
        current = Int(clamping: usage.current)
        peak = Int(clamping: usage.peak)
        limit = Int(clamping: usage.limit)
    }

    init(current: Int, peak: Int, limit: Int) {
        (self.current, self.peak, self.limit) = (current, peak, limit)
    }
}
