import Crypto
import Foundation
import Hashing
import Testing
import TestSupport

/// The SHA-256 and HMAC written from FIPS 180-4 and RFC 2104, against the standards' own
/// examples and against BoringSSL's (swift-crypto) on random messages of every length around
/// the block and padding boundaries.
@Suite("Hashing: SHA-256 and HMAC-SHA-256")
struct HashingTests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    static func bytes(hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
    }

    @Test("FIPS 180-4's examples: empty, \"abc\", the two-block message, a million a's")
    func sha256Vectors() {
        #expect(Self.hex(Hashing.SHA256.hash([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Self.hex(Hashing.SHA256.hash("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            Self.hex(Hashing.SHA256.hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        var million = Hashing.SHA256()
        for _ in 0..<1000 { million.update([UInt8](repeating: UInt8(ascii: "a"), count: 1000)) }
        #expect(Self.hex(million.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("RFC 4231's HMAC-SHA-256 cases 1, 2 and 6 (a key longer than a block)")
    func hmacVectors() {
        func mac(_ key: [UInt8], _ message: String) -> String {
            var hmac = HMACSHA256(key: key)
            hmac.update(message.utf8)
            return Self.hex(hmac.finalize())
        }
        #expect(mac([UInt8](repeating: 0x0b, count: 20), "Hi There") == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(mac(Array("Jefe".utf8), "what do ya want for nothing?") == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(
            mac([UInt8](repeating: 0xaa, count: 131), "Test Using Larger Than Block-Size Key - Hash Key First")
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test("the same digests and MACs as BoringSSL for every length 0-300 and random keys, fed in pieces")
    func againstBoringSSL() {
        var random = SeededGenerator()
        for length in 0...300 {
            let message = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            let key = (0..<Int.random(in: 1...140, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let split = Int.random(in: 0...length, using: &random)
            var ours = Hashing.SHA256()
            ours.update(message[..<split])
            ours.update(message[split...])
            #expect(ours.finalize() == Array(Crypto.SHA256.hash(data: message)), "length \(length), seed \(random.seed)")
            var mac = HMACSHA256(key: key)
            mac.update(message[..<split])
            mac.update(message[split...])
            let theirs = Array(HMAC<Crypto.SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
            #expect(mac.finalize() == theirs, "length \(length), key \(key.count) bytes, seed \(random.seed)")
        }
    }
}
