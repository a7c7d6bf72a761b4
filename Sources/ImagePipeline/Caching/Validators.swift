/// Validators of a cached representation that a conditional request asks about.
struct Validators: Hashable, Sendable {
    let etag: String?
    let lastModified: String?

    init?(_ info: HTTPCacheInfo) {
        guard info.hasValidators else { return nil }
        etag = info.etag
        lastModified = info.lastModified
    }
}
