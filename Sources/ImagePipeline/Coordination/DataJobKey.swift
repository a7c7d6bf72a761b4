/// Jobs that produce original bytes, by what they would do.
struct DataJobKey: Hashable, Sendable {
    let dataKey: String
    let policy: ImageRequest.CachePolicy
    /// The request's method and headers: a `Vary`ing server may answer them differently.
    let variant: RequestVariant
    /// What is known of a stale image in memory when there is no disk entry to revalidate: all
    /// of its stored information, so that a 304 is merged into its real headers.
    let staleInMemory: HTTPCacheInfo?
}
