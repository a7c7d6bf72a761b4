import Hashing
import Foundation

/// File names for cache keys: the SHA-256 of the key in hex. Keys are URLs or arbitrary
/// strings from outside; using them as paths would allow traversal ("../../etc") and hit
/// name-length and character limits.
enum DiskCacheKey {
    static func fileName(for key: String) -> String {
        let digest = SHA256.hash(key.utf8)
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        var name = [UInt8]()
        name.reserveCapacity(64)
        for byte in digest {
            name.append(hex[Int(byte >> 4)])
            name.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: name, as: UTF8.self)
    }

    /// True for names `fileName(for:)` can produce, so stray files are told apart.
    static func isEntryName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
