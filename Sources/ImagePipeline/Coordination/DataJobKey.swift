/// Jobs that produce original bytes, by what they would do.
struct DataJobKey: Hashable, Sendable {
    let dataKey: String
    let policy: ImageRequest.CachePolicy
    /// Validators of a stale image in memory when there is no disk entry to revalidate.
    let memoryValidators: Validators?
}
