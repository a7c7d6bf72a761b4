import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ImageCache

/// What the pipeline keeps about a stored response to decide freshness and revalidate it:
/// validators, the moment it goes stale, the response header fields freshness comes from (so a
/// 304 can be merged into them, RFC 9111 §4.3.4), and, for a response with `Vary`, the request
/// header values it was selected by. Stored with the bytes on disk (`DiskCacheMetadata`) and
/// with decoded images in memory.
struct HTTPCacheInfo: Sendable, Hashable {
    var contentType: String?
    var etag: String?
    var lastModified: String?
    /// Fresh until then; nil means no expiry (entries stored by other tools without one).
    var expires: Date?
    /// The stored response's fields among `HTTPCacheInfo.storedFields`, names lowercased.
    var headers: [String: String] = [:]
    /// For a response with `Vary`: each named request field's value when it was stored ("" when
    /// the request had none).
    var variedRequest: [String: String] = [:]
    /// When the response arrived, by the pipeline's clock (a 304's arrival, once it refreshed
    /// the entry): a stored thumbnail made from a response that arrived before its URL was last
    /// invalidated is not served. nil for entries stored before it was recorded.
    var received: Date?

    /// The response header fields kept: what freshness is computed from, and what a 304 updates.
    static let storedFields: Set<String> = [
        "cache-control", "expires", "date", "age", "last-modified", "etag", "content-type",
        "pragma", "vary"
    ]

    func isFresh(at now: Date) -> Bool { expires.map { now < $0 } ?? true }

    /// True when a conditional request can be made.
    var hasValidators: Bool { etag != nil || lastModified != nil }

    /// Whether this stored response may answer `request`: every field its `Vary` names has
    /// the value it had when the response was stored (RFC 9111 §4.1).
    func matches(_ request: URLRequest) -> Bool {
        variedRequest.allSatisfy { name, value in (request.value(forHTTPHeaderField: name) ?? "") == value }
    }

    init(
        contentType: String? = nil, etag: String? = nil, lastModified: String? = nil, expires: Date?,
        headers: [String: String] = [:], variedRequest: [String: String] = [:], received: Date? = nil
    ) {
        self.contentType = contentType
        self.etag = etag
        self.lastModified = lastModified
        self.expires = expires
        self.headers = headers
        self.variedRequest = variedRequest
        self.received = received
    }

    init(_ metadata: DiskCacheMetadata) {
        var headers: [String: String] = [:], varied: [String: String] = [:]
        for (name, value) in metadata.fields {
            if name.hasPrefix(Self.headerPrefix) { headers[String(name.dropFirst(Self.headerPrefix.count))] = value }
            if name.hasPrefix(Self.varyPrefix) { varied[String(name.dropFirst(Self.varyPrefix.count))] = value }
        }
        self.init(
            contentType: metadata.contentType, etag: metadata.etag, lastModified: metadata.lastModified, expires: metadata.expires,
            headers: headers, variedRequest: varied,
            received: metadata.fields[Self.receivedField].flatMap { Double($0) }.map { Date(timeIntervalSince1970: $0) })
    }

    var metadata: DiskCacheMetadata {
        var fields: [String: String] = [:]
        for (name, value) in headers { fields[Self.headerPrefix + name] = value }
        for (name, value) in variedRequest { fields[Self.varyPrefix + name] = value }
        if let received { fields[Self.receivedField] = String(received.timeIntervalSince1970) }
        return DiskCacheMetadata(contentType: contentType, etag: etag, lastModified: lastModified, expires: expires, fields: fields)
    }

    private static let headerPrefix = "response:", varyPrefix = "vary:", receivedField = "received"
}
