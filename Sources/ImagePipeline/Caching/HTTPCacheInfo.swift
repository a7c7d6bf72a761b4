import Foundation
import ImageCache

/// What the pipeline keeps about a response to decide freshness and revalidate it: the
/// validators and the moment it goes stale. Stored with the bytes on disk
/// (`DiskCacheMetadata`) and with the decoded image in memory.
struct HTTPCacheInfo: Sendable, Hashable {
    var contentType: String?
    var etag: String?
    var lastModified: String?
    /// Fresh until then; nil means no expiry (entries stored by other tools without one).
    var expires: Date?

    func isFresh(at now: Date) -> Bool { expires.map { now < $0 } ?? true }

    /// True when a conditional request can be made.
    var hasValidators: Bool { etag != nil || lastModified != nil }

    init(contentType: String? = nil, etag: String? = nil, lastModified: String? = nil, expires: Date?) {
        self.contentType = contentType
        self.etag = etag
        self.lastModified = lastModified
        self.expires = expires
    }

    init(_ metadata: DiskCacheMetadata) {
        self.init(contentType: metadata.contentType, etag: metadata.etag, lastModified: metadata.lastModified, expires: metadata.expires)
    }

    var metadata: DiskCacheMetadata {
        DiskCacheMetadata(contentType: contentType, etag: etag, lastModified: lastModified, expires: expires)
    }
}

/// RFC 9111 for a private cache: whether a response may be stored, and until when it is fresh.
enum HTTPFreshness {
    /// What to do with a response.
    enum Storage: Equatable {
        /// `no-store`: keep it nowhere.
        case none
        /// Keep it with this information (`no-cache` gives an entry that is stale at once).
        case store(HTTPCacheInfo)
    }

    /// `response` was requested at `requested` and received at `received`. Without explicit
    /// freshness, 10% of the time since `Last-Modified` applies (RFC 9111 §4.2.2), or
    /// `heuristicLifetime` when there is no `Last-Modified` either.
    static func storage(for response: DataLoadingResponse, requested: Date, received: Date, heuristicLifetime: TimeInterval,
                        previous: HTTPCacheInfo? = nil) -> Storage {
        let directives = cacheControl(response.header("cache-control"))
        if directives["no-store"] != nil { return .none }
        let etag = response.header("etag") ?? previous?.etag
        let lastModified = response.header("last-modified") ?? previous?.lastModified
        let contentType = response.header("content-type") ?? previous?.contentType
        let noCache = directives["no-cache"] != nil
            || (response.header("cache-control") == nil && response.header("pragma")?.lowercased().contains("no-cache") == true)
        let date = response.header("date").flatMap(HTTPDate.parse) ?? received
        let lifetime: TimeInterval
        if noCache {
            lifetime = 0
        } else if let maxAge = directives["max-age"].flatMap({ $0.flatMap(TimeInterval.init) }) {
            lifetime = max(0, maxAge)
        } else if let expiresHeader = response.header("expires") {
            // An invalid Expires (such as "0") means already expired.
            lifetime = HTTPDate.parse(expiresHeader).map { max(0, $0.timeIntervalSince(date)) } ?? 0
        } else if let modified = lastModified.flatMap(HTTPDate.parse) {
            lifetime = max(0, date.timeIntervalSince(modified)) * 0.1
        } else {
            lifetime = heuristicLifetime
        }
        // Age already spent elsewhere (RFC 9111 §4.2.3).
        let apparentAge = max(0, received.timeIntervalSince(date))
        let ageHeader = response.header("age").flatMap(TimeInterval.init) ?? 0
        let correctedAge = ageHeader + received.timeIntervalSince(requested)
        let age = max(apparentAge, correctedAge)
        return .store(HTTPCacheInfo(contentType: contentType, etag: etag, lastModified: lastModified,
                                    expires: received.addingTimeInterval(lifetime - age)))
    }

    /// Directives of a `Cache-Control` value, names lowercased, values unquoted.
    static func cacheControl(_ value: String?) -> [String: String?] {
        guard let value else { return [:] }
        var directives: [String: String?] = [:]
        for part in value.split(separator: ",") {
            let pieces = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let name = pieces.first?.lowercased(), !name.isEmpty else { continue }
            let argument = pieces.count > 1 ? pieces[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : nil
            if directives[name] == nil { directives[name] = .some(argument) }
        }
        return directives
    }
}

/// HTTP dates: IMF-fixdate and the two obsolete formats a recipient must accept (RFC 9110 §5.6.7).
enum HTTPDate {
    private static let formats = ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"]
    private static let formatters: [DateFormatter] = formats.map { format in
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = format
        return formatter
    }
    private static let lock = NSLock()

    static func parse(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        // DateFormatter is not thread-safe on every platform.
        return lock.withLock { formatters.lazy.compactMap { $0.date(from: trimmed) }.first }
    }

    static func format(_ date: Date) -> String {
        lock.withLock { formatters[0].string(from: date) }
    }
}
