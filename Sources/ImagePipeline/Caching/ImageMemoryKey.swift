import ImageCodec

/// Memory-cache key of a decoded image: the data key and the resize it was decoded with (nil:
/// full size).
struct ImageMemoryKey: Hashable, Sendable {
    let dataKey: String
    let resize: Resize?
}
