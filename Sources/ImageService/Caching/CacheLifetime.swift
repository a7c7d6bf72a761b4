import Foundation
import ImagePipeline

/// How long caches in front (nginx, a CDN, browsers) may keep an answer: the service's TTL, but
/// never past a URL's own expiry (`exp:`), after which the service answers 410 and no cache may
/// answer for it (imgproxy caps `max-age` the same way).
struct CacheLifetime: Equatable {
    /// Seconds, for `Cache-Control: max-age`.
    let maxAge: Int
    /// The same moment as an HTTP date, for HTTP/1.0 caches that read only `Expires`.
    let expires: String

    /// RFC 9111 §1.2.2: a cache treats larger delta-seconds as this.
    static let longest = 2_147_483_648

    /// The lifetime of an answer made at `now` under `timeToLive` for a URL expiring at the unix
    /// time `urlExpiry` (nil: never).
    init(timeToLive: Int, urlExpiry: Int?, now: Date = Date()) {
        let nowSeconds = Int(now.timeIntervalSince1970.rounded(.down))
        var seconds = min(max(0, timeToLive), Self.longest)
        if let urlExpiry {
            let (left, overflow) = urlExpiry.subtractingReportingOverflow(nowSeconds)
            seconds = min(seconds, overflow ? (urlExpiry < 0 ? 0 : seconds) : max(0, left))
        }
        maxAge = seconds
        expires = HTTPDate.format(Date(timeIntervalSince1970: TimeInterval(nowSeconds + seconds)))
    }

    /// The headers that say it.
    var headers: [(name: String, value: String)] {
        [("Cache-Control", "public, max-age=\(maxAge)"), ("Expires", expires)]
    }
}
