import ImageCodec

/// Jobs that produce a decoded image.
struct ImageJobKey: Hashable, Sendable {
    let dataKey: String
    let resize: Resize?
    let policy: ImageRequest.CachePolicy
}
