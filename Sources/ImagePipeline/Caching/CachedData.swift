import Foundation

/// Original bytes in the memory cache (`.encodedResponse`), or waiting to be written to disk.
struct CachedData: Sendable {
    let data: Data
    let info: HTTPCacheInfo
}
