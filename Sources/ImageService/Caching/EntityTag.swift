import Crypto
import Foundation

/// The service's `ETag`s, and `If-None-Match` matching (RFC 9110 §13.1.2).
enum EntityTag {
    /// Bumped whenever the engine's output for the same inputs changes (a new resampler, a new
    /// DCT-scale rule or IDCT, new encoder settings), so caches in front do not keep answering
    /// 304 for an old rendering. `RenderVersionTests` holds the hashes of a few thumbnails for
    /// this version: a change to the output fails it until the version is bumped.
    static let renderVersion = "11"

    /// A strong validator for a result: it changes when the source's validator (its `ETag`, else
    /// its `Last-Modified`, else a hash of its bytes), the canonical options (with the effective
    /// quality), the resize actually made (the output-size clamp included) or the output format
    /// change, and never otherwise.
    static func make(sourceValidator: String, canonicalOptions: String, resize: String, format: String) -> String {
        var hash = SHA256()
        for part in [renderVersion, sourceValidator, canonicalOptions, resize, format] {
            hash.update(data: Array(part.utf8))
            hash.update(data: [0])
        }
        return "\"" + hash.finalize().prefix(16).map { String(format: "%02x", $0) }.joined() + "\""
    }

    /// The source's validator: its `ETag`, else its `Last-Modified`, else a digest of its bytes.
    static func sourceValidator(etag: String?, lastModified: String?, data: Data) -> String {
        if let etag { return "etag:" + etag }
        if let lastModified { return "last-modified:" + lastModified }
        return "sha256:" + SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    /// True when `header` (an `If-None-Match` value) names `etag` or is `*`; weak comparison, so
    /// `W/"x"` matches `"x"`, as RFC 9110 asks for `If-None-Match`.
    static func matches(_ header: String, _ etag: String) -> Bool {
        let wanted = opaque(etag)
        return header.split(separator: ",").contains { candidate in
            let trimmed = candidate.trimmingCharacters(in: .whitespaces)
            return trimmed == "*" || opaque(trimmed) == wanted
        }
    }

    private static func opaque(_ tag: some StringProtocol) -> Substring {
        let text = Substring(tag)
        return text.hasPrefix("W/") ? text.dropFirst(2) : text
    }
}
