import Foundation
import Hashing

/// imgproxy's URL signature: `base64url-without-padding(HMAC-SHA256(key, salt ‖ path))`, the
/// path being everything after the signature segment, starting with `/`. Any imgproxy URL
/// builder (Python, Node, Go, PHP, Ruby, Elixir, ...) makes URLs this service accepts.
///
/// ```swift
/// let signer = URLSigner(keys: [SigningKey(hexKey: key, hexSalt: salt)!])
/// let path = signer.signedPath(options: "rs:fill:400:400/g:no", source: "https://cdn.example.com/a.jpg", extension: "jpg")
/// // "/<signature>/rs:fill:400:400/g:no/aHR0cHM6Ly9jZG4uZXhhbXBsZS5jb20vYS5qcGc.jpg"
/// ```
public struct URLSigner: Sendable {
    /// Every pair is accepted when verifying; the first signs.
    public let keys: [SigningKey]
    /// Bytes of the HMAC a signature carries, 1-32 (imgproxy's `IMGPROXY_SIGNATURE_SIZE`;
    /// `IMAGE_ENGINE_SIGNATURE_SIZE` for `serve` and `sign`): shorter URLs for less security.
    public let signatureSize: Int

    /// The sizes a signature may be truncated to.
    public static let signatureSizes = 1...32

    /// A signer for `keys` (at least one to sign), with signatures of `signatureSize` bytes
    /// (clamped to 1-32).
    public init(keys: [SigningKey], signatureSize: Int = 32) {
        self.keys = keys
        self.signatureSize = min(max(signatureSize, Self.signatureSizes.lowerBound), Self.signatureSizes.upperBound)
    }

    /// The signature of `path` (which starts with `/`) with `key`: the first `size` bytes of
    /// its HMAC, base64url without padding.
    public static func signature(of path: String, key: SigningKey, size: Int = 32) -> String {
        Base64URL.encode(Array(mac(of: path, key: key).prefix(size)))
    }

    /// True when `signature` is the signature of `path` with any of the keys, at this signer's
    /// size. Compared in constant time: the time taken says nothing about how much of a guess
    /// was right. A padded signature (`…=`), or one whose last character has unused bits set,
    /// is refused, so that each image has one URL, and one cache key.
    public func verify(_ signature: String, path: String) -> Bool {
        guard let given = Base64URL.decodeCanonical(signature), given.count == signatureSize else { return false }
        var matched = false
        for key in keys {
            // Every key, every byte, without stopping early.
            var difference: UInt8 = 0
            for (expected, actual) in zip(Self.mac(of: path, key: key).prefix(signatureSize), given) { difference |= expected ^ actual }
            if difference == 0 { matched = true }
        }
        return matched
    }

    /// `/signature` + `path` with the first key; nil without keys.
    public func sign(_ path: String) -> String? {
        keys.first.map { "/" + Self.signature(of: path, key: $0, size: signatureSize) + path }
    }

    private static func mac(of path: String, key: SigningKey) -> [UInt8] {
        var hmac = HMACSHA256(key: key.key)
        hmac.update(key.salt)
        hmac.update(path.utf8)
        return hmac.finalize()
    }

    /// The signed path for a source and options (`rs:fill:400:400/g:no`, no slashes around):
    /// the source as base64url (split every 16 characters with `/`, as imgproxy's examples do)
    /// and `.extension`, or with `plain`, percent-encoded after `/plain/` and `@extension`.
    ///
    /// Nil without keys, and for a path with a `.` or `..` segment (a plain source such as
    /// `https://a.example/x/../y.jpg`; ``dotSegment(in:)``): the service refuses those, because
    /// a cache in front would resolve them and key the answer as another path. Sign such a
    /// source without `plain`, or resolve it first.
    public func signedPath(options: String, source: String, extension ext: String? = nil, plain: Bool = false) -> String? {
        let path = Self.unsignedPath(options: options, source: source, extension: ext, plain: plain)
        return Self.dotSegment(in: path) == nil ? sign(path) : nil
    }

    /// The first `.` or `..` segment of `path` (as received, without its query), once the
    /// spellings caches and proxies decode before they resolve dot segments are decoded too —
    /// `%2E` as `.`, `%2F` as `/`, `%5C` as `\` (which some treat as `/`) — or nil when it has
    /// none: what the service refuses (400) before checking a signature.
    ///
    /// nginx's `$uri`, and CDNs that normalise paths, resolve such segments: a signed path
    /// `/sig/opts/plain/http://x/../../../<another signature>/<options>/plain/<source>` would be
    /// *keyed* as the other path while the service renders its own, so one signed URL could fill
    /// the entry of any other. A path with none of them is a fixed point of every such
    /// normalisation, so the service refuses the rest before anything else.
    public static func dotSegment(in path: String) -> String? {
        let (dot, slash, backslash) = (UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: "\\"))
        let escapes: [String: UInt8] = ["2E": dot, "2F": slash, "5C": backslash]
        var segment: [UInt8] = []
        var bytes = path.utf8[...]
        while true {
            var byte = bytes.popFirst()
            if byte == UInt8(ascii: "%"), bytes.count >= 2,
                let escaped = escapes[String(decoding: bytes.prefix(2), as: UTF8.self).uppercased()]
            {
                byte = escaped
                bytes = bytes.dropFirst(2)
            }
            guard let byte, byte != slash, byte != backslash else {
                if segment == [dot] || segment == [dot, dot] { return String(decoding: segment, as: UTF8.self) }
                if byte == nil { return nil }
                segment.removeAll(keepingCapacity: true)
                continue
            }
            // Only "." and ".." matter: a longer segment is no dot segment whatever follows.
            if segment.count < 3 { segment.append(byte) }
        }
    }

    /// The path `signedPath` signs.
    public static func unsignedPath(options: String, source: String, extension ext: String? = nil, plain: Bool = false) -> String {
        let optionsPart = options.split(separator: "/").isEmpty ? "" : "/" + options.split(separator: "/").joined(separator: "/")
        if plain {
            let escaped = source.addingPercentEncoding(withAllowedCharacters: plainAllowed) ?? source
            return optionsPart + "/plain/" + escaped + (ext.map { "@" + $0 } ?? "")
        }
        let encoded = Base64URL.encode(Array(source.utf8))
        let chunks = stride(from: 0, to: encoded.count, by: 16).map { start -> String in
            let from = encoded.index(encoded.startIndex, offsetBy: start)
            return String(encoded[from..<(encoded.index(from, offsetBy: 16, limitedBy: encoded.endIndex) ?? encoded.endIndex)])
        }
        return optionsPart + "/" + chunks.joined(separator: "/") + (ext.map { "." + $0 } ?? "")
    }

    /// Characters a plain source keeps as they are: unreserved ones and the URL's own
    /// delimiters, but not `?`, `#`, `%` or `@`, which the path would misread.
    private static let plainAllowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/!$&'()*+,;=")
}
