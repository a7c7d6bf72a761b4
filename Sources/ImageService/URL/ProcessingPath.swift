import URLSigning
import Foundation

/// A processing URL's path, taken apart: `/{signature}/{options}/plain/{percent-encoded
/// source}[@{ext}]` or `/{signature}/{options}/{base64url source, may be split by /}[.{ext}]`.
struct ProcessingPath: Sendable, Equatable {
    /// The first segment.
    let signature: String
    /// Everything after it, from its `/`: what the signature signs.
    let signed: String

    struct Failure: Error, Equatable {
        let message: String
    }

    /// Splits `path` (as received, percent-encoding intact, no query) after its signature, and
    /// undoes what proxies and CDNs do to such paths, as imgproxy does before it checks the
    /// signature: `%3A` back to `:` in the options, and a plain source's `scheme:/x` (a `//`
    /// merged into one) back to `scheme://x`.
    init(_ path: String) throws(Failure) {
        guard path.hasPrefix("/") else { throw Failure(message: "the path must start with /") }
        let rest = path.dropFirst()
        guard let slash = rest.firstIndex(of: "/") else { throw Failure(message: "no options or source after the signature") }
        signature = String(rest[..<slash])
        signed = Self.redenormalised(String(rest[slash...]))
    }

    /// True when `path` (and no query) is exactly this path's canonical spelling,
    /// `/signature` + what it signs: not a proxy's rewriting of it, and nothing the signature
    /// does not cover.
    func isCanonical(_ path: String, query: String?) -> Bool {
        query == nil && path.utf8.count == signature.utf8.count + 1 + signed.utf8.count && path == "/" + signature + signed
    }

    /// `path` (after the signature, from its `/`) with the normalisation undone.
    static func redenormalised(_ path: String) -> String {
        let (options, plain): (Substring, Substring?) =
            if path.hasPrefix("/plain/") {
                ("", path.dropFirst("/plain/".count))
            } else if let range = path.range(of: "/plain/") {
                (path[..<range.lowerBound], path[range.upperBound...])
            } else {
                (Substring(path), nil)
            }
        let fixedOptions = options.replacingOccurrences(of: "%3A", with: ":").replacingOccurrences(of: "%3a", with: ":")
        guard var source = plain.map(String.init) else { return fixedOptions }
        // `scheme:/x` where `scheme://x` was meant: the scheme is everything before the first
        // `:/` (no whitespace), and the character after it is not a second `/`.
        if let marker = source.range(of: ":/"), !source[..<marker.lowerBound].isEmpty,
            source[..<marker.lowerBound].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }),
            marker.upperBound < source.endIndex, source[marker.upperBound] != "/"
        {
            source.replaceSubrange(marker, with: "://")
        }
        return fixedOptions + "/plain/" + source
    }

    /// The option segments, the source URL and the extension asked for.
    func contents() throws(Failure) -> (options: [Substring], source: String, extension: String?) {
        let segments = signed.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        var options: [Substring] = []
        var index = 0
        while index < segments.count, segments[index] != "plain", segments[index].contains(":") {
            options.append(segments[index])
            index += 1
        }
        guard index < segments.count else { throw Failure(message: "no source URL") }
        if segments[index] == "plain" {
            var plain = segments[(index + 1)...].joined(separator: "/")
            var ext: String?
            if let at = plain.lastIndex(of: "@"), !plain[plain.index(after: at)...].contains("/") {
                ext = String(plain[plain.index(after: at)...])
                plain = String(plain[..<at])
            }
            guard let source = plain.removingPercentEncoding, !source.isEmpty else {
                throw Failure(message: "the plain source URL is not percent-encoded text")
            }
            return (options, source, ext)
        }
        var encoded = segments[index...].joined()
        var ext: String?
        if let dot = encoded.lastIndex(of: ".") {
            ext = String(encoded[encoded.index(after: dot)...])
            encoded = String(encoded[..<dot])
        }
        guard !encoded.isEmpty, let data = Base64URL.decodeCanonical(encoded), let source = String(data: data, encoding: .utf8) else {
            throw Failure(message: "the source URL is not canonical base64url (no padding, unused bits zero)")
        }
        return (options, source, ext)
    }
}
