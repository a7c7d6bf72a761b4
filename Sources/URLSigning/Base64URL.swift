import Foundation

/// URL-safe Base64 without padding (RFC 4648 §5), as imgproxy's signatures and encoded source
/// URLs use it.
package enum Base64URL {
    package static func encode(_ data: some Sequence<UInt8>) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes, or nil unless `text` is exactly how `encode` writes them: no padding, and
    /// the unused low bits of the last character zero. Anything looser gives one value several
    /// spellings, and so several cache keys for one image.
    package static func decodeCanonical(_ text: some StringProtocol) -> Data? {
        guard let data = decode(text), encode(data) == String(text) else { return nil }
        return data
    }

    /// The bytes, or nil for anything but URL-safe Base64 (trailing padding optional).
    package static func decode(_ text: some StringProtocol) -> Data? {
        var body = Substring(text)
        var padding = 0
        while body.last == "=" && padding < 2 {
            body = body.dropLast()
            padding += 1
        }
        guard body.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var base64 = body.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard base64.count % 4 != 1 else { return nil }
        while base64.count % 4 != 0 { base64.append("=") }
        return Data(base64Encoded: base64)
    }
}
