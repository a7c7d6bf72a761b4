import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// RFC 9111: whether a response may be stored, and until when it is fresh — as a private cache
/// (an app's), or as a shared one (a service answering many clients, `isShared`).
enum HTTPFreshness {
    /// What the decision depends on beyond the response.
    struct Rules: Sendable {
        /// Freshness when the response gives none and has no `Last-Modified`.
        var heuristicLifetime: TimeInterval
        /// A shared cache stores no `private` response, prefers `s-maxage`, and stores a
        /// response to an authorised request only when it says it may (§3.5).
        var isShared = false
        /// The request carried `Authorization`.
        var requestHasAuthorization = false
    }

    /// What to do with a response.
    enum Storage: Equatable {
        /// `no-store`, or `Vary: *` (no later request can match it): keep it nowhere.
        case none
        /// Keep it with this information (`no-cache` gives an entry that is stale at once).
        case store(HTTPCacheInfo)
    }

    /// `response` to `request` was requested at `requested` and received at `received`.
    /// Without explicit freshness, 10% of the time since `Last-Modified` applies (§4.2.2), or
    /// `rules.heuristicLifetime` when there is no `Last-Modified` either.
    static func storage(
        for response: DataLoadingResponse, to request: URLRequest, requested: Date, received: Date, rules: Rules
    ) -> Storage {
        storage(
            headers: response.headers.filter { HTTPCacheInfo.storedFields.contains($0.key) }, request: request,
            requested: requested, received: received, rules: rules)
    }

    /// Whether a 304 is about `stored` (§4.3.4): when it carries a strong ETag, only a stored
    /// response with that same ETag is; a weak or missing one selects what was asked about.
    static func selects(_ stored: HTTPCacheInfo, notModified response: DataLoadingResponse) -> Bool {
        guard let etag = response.header("etag"), !etag.hasPrefix("W/") else { return true }
        return stored.etag == etag
    }

    /// A 304 for `stored`: the stored header fields updated with those the 304 carries, what
    /// it omits kept (§4.3.4), and freshness computed again from the result — so a stored
    /// `no-cache` or `max-age=60` is not forgotten because the 304 carries only `ETag` and
    /// `Date`. The stored `Date` and `Age` describe the old response and go.
    static func revalidated(
        _ stored: HTTPCacheInfo, by response: DataLoadingResponse, to request: URLRequest, requested: Date, received: Date, rules: Rules
    ) -> Storage {
        var headers = stored.headers
        headers["date"] = nil
        headers["age"] = nil
        // Not Content-Type (RFC 9111 §3.2 lets a cache keep fields its stored result depends
        // on): the stored bytes are what they are, and a 304 cannot change their type.
        for (name, value) in response.headers where HTTPCacheInfo.storedFields.contains(name) && name != "content-type" {
            headers[name] = value
        }
        return storage(headers: headers, request: request, requested: requested, received: received, rules: rules)
    }

    private static func storage(
        headers: [String: String], request: URLRequest, requested: Date, received: Date, rules: Rules
    ) -> Storage {
        let directives = CacheControl.directives(headers["cache-control"])
        if directives["no-store"] != nil { return .none }
        if rules.isShared {
            if directives["private"] != nil { return .none }
            let permits = ["public", "s-maxage", "must-revalidate"].contains { directives[$0] != nil }
            if rules.requestHasAuthorization, !permits { return .none }
        }
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
        } else if rules.isShared, let sharedMaxAge = directives["s-maxage"] {
            // A shared cache's own max-age, over max-age and Expires (§5.2.2.10).
            lifetime = CacheControl.deltaSeconds(sharedMaxAge ?? nil).map(TimeInterval.init) ?? 0
        } else if let maxAge = directives["max-age"] {
            // Not delta-seconds ("inf", "1e9", "-5"): freshness information that is invalid, so stale (§4.2.1).
            lifetime = CacheControl.deltaSeconds(maxAge ?? nil).map(TimeInterval.init) ?? 0
        } else if let expiresHeader = headers["expires"] {
            // An invalid Expires (such as "0") means already expired.
            lifetime = HTTPDate.parse(expiresHeader).map { max(0, $0.timeIntervalSince(date)) } ?? 0
        } else if let modified = lastModified.flatMap(HTTPDate.parse) {
            lifetime = max(0, date.timeIntervalSince(modified)) * 0.1
        } else {
            lifetime = rules.heuristicLifetime
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
                expires: received.addingTimeInterval(lifetime - age), headers: headers, variedRequest: requestValues,
                received: received))
    }
}
