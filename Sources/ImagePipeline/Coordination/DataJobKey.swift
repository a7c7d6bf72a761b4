/// Jobs that produce original bytes, by what they would do.
struct DataJobKey: Hashable, Sendable {
    let dataKey: String
    let policy: ImageRequest.CachePolicy
    /// The request's method and headers: a `Vary`ing server may answer them differently.
    let variant: RequestVariant
    // Not a stale image in memory: requests for one URL share one download whatever each
    // holds in memory. The job revalidates what its creator held; a joiner whose image the
    // answer did not confirm gets bytes, or downloads again after it (ImagePipeline+Image).
}
