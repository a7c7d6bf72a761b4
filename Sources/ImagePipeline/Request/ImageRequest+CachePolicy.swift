import Foundation

extension ImageRequest {
    /// Which caches a request may use and when it asks the server.
    public enum CachePolicy: String, Sendable, Hashable, CaseIterable, Codable {
        /// Serves what is fresh from memory or disk, revalidates what is stale (a conditional
        /// request; a 304 serves the cached bytes), downloads what is missing. The default.
        case useCache
        /// Skips memory and disk, downloads, and replaces both (pull-to-refresh).
        case reloadIgnoringCache
        /// Serves from memory or disk, fresh or stale, and never touches the network: a miss
        /// is `ImagePipelineError.notCached` (offline mode).
        case returnCacheDataDontLoad
        /// Always asks the server, conditionally when something is cached.
        case revalidate
    }
}
