import ImageCodec

/// Jobs that produce a decoded image.
struct ImageJobKey: Hashable, Sendable {
    let dataKey: String
    let resize: Resize?
    let policy: ImageRequest.CachePolicy
    /// The request's method and headers: a `Vary`ing server may answer them differently.
    let variant: RequestVariant
}
