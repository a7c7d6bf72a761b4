import Crypto
import Foundation

/// File names for cache keys: the SHA-256 of the key in hex. Keys are URLs or arbitrary
/// strings from outside; using them as paths would allow traversal ("../../etc") and hit
/// name-length and character limits.
enum DiskCacheKey {
    static func fileName(for key: String) -> String {
        SHA256.hash(data: Data(key.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// True for names `fileName(for:)` can produce, so stray files are told apart.
    static func isEntryName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
