import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// RFC 9111 for a private cache: whether a response may be stored, and until when it is fresh.
enum HTTPFreshness {
    /// What to do with a response.
    enum Storage: Equatable {
        /// `no-store`, or `Vary: *` (no later request can match it): keep it nowhere.
        case none
        /// Keep it with this information (`no-cache` gives an entry that is stale at once).
        case store(HTTPCacheInfo)
    }

    /// `response` to `request` was requested at `requested` and received at `received`.
    /// Without explicit freshness, 10% of the time since `Last-Modified` applies (§4.2.2), or
    /// `heuristicLifetime` when there is no `Last-Modified` either.
    static func storage(
        for response: DataLoadingResponse, to request: URLRequest, requested: Date, received: Date,
        heuristicLifetime: TimeInterval
    ) -> Storage {
        storage(
            headers: response.headers.filter { HTTPCacheInfo.storedFields.contains($0.key) }, request: request,
            requested: requested, received: received, heuristicLifetime: heuristicLifetime)
    }

    /// A 304 for `stored`: the stored header fields updated with those the 304 carries, what
    /// it omits kept (§4.3.4), and freshness computed again from the result — so a stored
    /// `no-cache` or `max-age=60` is not forgotten because the 304 carries only `ETag` and
    /// `Date`. The stored `Date` and `Age` describe the old response and go.
    static func revalidated(
        _ stored: HTTPCacheInfo, by response: DataLoadingResponse, to request: URLRequest, requested: Date,
        received: Date, heuristicLifetime: TimeInterval
    ) -> Storage {
        var headers = stored.headers
        headers["date"] = nil
        headers["age"] = nil
        for (name, value) in response.headers where HTTPCacheInfo.storedFields.contains(name) { headers[name] = value }
        return storage(headers: headers, request: request, requested: requested, received: received, heuristicLifetime: heuristicLifetime)
    }

    private static func storage(
        headers: [String: String], request: URLRequest, requested: Date, received: Date,
        heuristicLifetime: TimeInterval
    ) -> Storage {
        let directives = CacheControl.directives(headers["cache-control"])
        if directives["no-store"] != nil { return .none }
        let varied = (headers["vary"] ?? "").split(separator: ",").map { $0.trimmingSpaces.lowercased() }.filter { !$0.isEmpty }
        if varied.contains("*") { return .none }
        let lastModified = headers["last-modified"]
        let noCache =
            directives["no-cache"] != nil
            || (headers["cache-control"] == nil && headers["pragma"]?.lowercased().contains("no-cache") == true)
        let date = headers["date"].flatMap(HTTPDate.parse) ?? received
        let lifetime: TimeInterval
        if noCache {
            lifetime = 0
        } else if let maxAge = directives["max-age"] {
            // Not delta-seconds ("inf", "1e9", "-5"): freshness information that is invalid, so stale (§4.2.1).
            lifetime = CacheControl.deltaSeconds(maxAge ?? nil).map(TimeInterval.init) ?? 0
        } else if let expiresHeader = headers["expires"] {
            // An invalid Expires (such as "0") means already expired.
            lifetime = HTTPDate.parse(expiresHeader).map { max(0, $0.timeIntervalSince(date)) } ?? 0
        } else if let modified = lastModified.flatMap(HTTPDate.parse) {
            lifetime = max(0, date.timeIntervalSince(modified)) * 0.1
        } else {
            lifetime = heuristicLifetime
        }
        // Age already spent elsewhere (§4.2.3).
        let apparentAge = max(0, received.timeIntervalSince(date))
        let ageHeader = TimeInterval(CacheControl.deltaSeconds(headers["age"]) ?? 0)
        let correctedAge = ageHeader + received.timeIntervalSince(requested)
        let age = max(apparentAge, correctedAge)
        var requestValues: [String: String] = [:]
        for name in varied { requestValues[name] = request.value(forHTTPHeaderField: name) ?? "" }
        return .store(
            HTTPCacheInfo(
                contentType: headers["content-type"], etag: headers["etag"], lastModified: lastModified,
                expires: received.addingTimeInterval(lifetime - age), headers: headers, variedRequest: requestValues))
    }
}
