import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a cached entry may do for a request.
enum CacheUse: Equatable {
    /// Answer it as it is, with no request to the server.
    case serve
    /// Answer it only once the server confirms it (a conditional request; the entry's
    /// validators and stored headers go into it, and a 304 is merged into them).
    case revalidate
    /// Nothing: the request may not read caches, or the entry was stored for another variant.
    case none
}

extension ImageRequest {
    /// Whether the request may be answered from a cache at all: only GET responses are stored
    /// and served (a HEAD's has no image, a POST's is for that POST).
    var usesCache: Bool { (urlRequest.httpMethod ?? "GET").uppercased() == "GET" }

    /// What an entry stored with `info` may do for this request at `now`: the one place that
    /// decides it, for the memory cache, the disk cache, stored thumbnails and revalidation.
    ///
    /// - Method: only GET requests use caches.
    /// - Policy: `reloadIgnoringCache` uses nothing; `returnCacheDataDontLoad` serves anything
    ///   that matches; `revalidate` always asks; `useCache` serves what is fresh.
    /// - `Vary`: every request field the stored response named must have its stored value.
    func use(of info: HTTPCacheInfo, at now: Date) -> CacheUse {
        guard usesCache, cachePolicy != .reloadIgnoringCache, info.matches(urlRequest) else { return .none }
        switch cachePolicy {
        case .useCache: return info.isFresh(at: now) ? .serve : .revalidate
        case .returnCacheDataDontLoad: return .serve
        case .revalidate, .reloadIgnoringCache: return .revalidate
        }
    }

    /// The request header fields (names lowercased) and method: requests that differ in them
    /// may get different representations (`Vary`), so they never share a job.
    var variant: RequestVariant { RequestVariant(urlRequest) }
}

/// A request's method and header fields, as far as they can select a representation.
struct RequestVariant: Hashable, Sendable {
    let method: String
    let headers: [String: String]
    /// The body: two requests that send different ones are different requests. A streamed body
    /// cannot be compared, so its request shares with nothing (a token of its own).
    let body: Data?
    private let unshared: UUID?

    init(_ request: URLRequest) {
        body = request.httpBody
        unshared = request.httpBodyStream == nil ? nil : UUID()
        method = (request.httpMethod ?? "GET").uppercased()
        headers = Dictionary(
            (request.allHTTPHeaderFields ?? [:]).map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}
