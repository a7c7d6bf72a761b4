import Foundation

/// One key and salt (imgproxy's `IMGPROXY_KEY`/`IMGPROXY_SALT` pair): any non-empty hex.
public struct SigningKey: Sendable, Hashable {
    /// The HMAC key.
    public let key: [UInt8]
    /// The bytes put before the signed path.
    public let salt: [UInt8]

    /// A pair from hex strings; nil unless both are non-empty, even-length hex.
    public init?(hexKey: String, hexSalt: String) {
        guard let key = Self.bytes(hex: hexKey), let salt = Self.bytes(hex: hexSalt), !key.isEmpty, !salt.isEmpty else { return nil }
        self.key = key
        self.salt = salt
    }

    /// The pairs in `IMAGE_ENGINE_KEY` and `IMAGE_ENGINE_SALT` style values: comma-separated
    /// lists of equal length, paired in order (several pairs rotate keys: all are accepted, the
    /// first signs). nil when the lists differ in length or an entry is not hex; empty when both
    /// values are absent or empty.
    public static func pairs(keys: String?, salts: String?) -> [SigningKey]? {
        let keyList = (keys ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let saltList = (salts ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard keyList.count == saltList.count else { return nil }
        var pairs: [SigningKey] = []
        for (key, salt) in zip(keyList, saltList) {
            guard let pair = SigningKey(hexKey: key, hexSalt: salt) else { return nil }
            pairs.append(pair)
        }
        return pairs
    }

    static func bytes(hex: String) -> [UInt8]? {
        let characters = Array(hex.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters.count / 2) // small: a key from the operator's environment
        for index in stride(from: 0, to: characters.count, by: 2) {
            guard let high = nibble(characters[index]), let low = nibble(characters[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
