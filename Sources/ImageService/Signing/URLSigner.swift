import Crypto
import Foundation

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

    /// A signer for `keys` (at least one to sign).
    public init(keys: [SigningKey]) {
        self.keys = keys
    }

    /// The signature of `path` (which starts with `/`) with `key`.
    public static func signature(of path: String, key: SigningKey) -> String {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: key.key))
        hmac.update(data: key.salt)
        hmac.update(data: Array(path.utf8))
        return Base64URL.encode(Array(hmac.finalize()))
    }

    /// True when `signature` is the signature of `path` with any of the keys. Compared in
    /// constant time: the time taken says nothing about how much of a guess was right.
    public func verify(_ signature: String, path: String) -> Bool {
        guard let given = Base64URL.decode(signature), given.count == SHA256.byteCount else { return false }
        var matched = false
        for key in keys {
            var hmac = HMAC<SHA256>(key: SymmetricKey(data: key.key))
            hmac.update(data: key.salt)
            hmac.update(data: Array(path.utf8))
            // HMAC's own comparison (constant time), for every key, without stopping early.
            if hmac.finalize() == given { matched = true }
        }
        return matched
    }

    /// `/signature` + `path` with the first key; nil without keys.
    public func sign(_ path: String) -> String? {
        keys.first.map { "/" + Self.signature(of: path, key: $0) + path }
    }

    /// The signed path for a source and options (`rs:fill:400:400/g:no`, no slashes around):
    /// the source as base64url (split every 16 characters with `/`, as imgproxy's examples do)
    /// and `.extension`, or with `plain`, percent-encoded after `/plain/` and `@extension`.
    public func signedPath(options: String, source: String, extension ext: String? = nil, plain: Bool = false) -> String? {
        sign(Self.unsignedPath(options: options, source: source, extension: ext, plain: plain))
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
