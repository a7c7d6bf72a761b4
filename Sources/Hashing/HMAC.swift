/// HMAC-SHA-256 (RFC 2104, FIPS 198-1): `H((K ⊕ opad) ‖ H((K ⊕ ipad) ‖ message))`, the key
/// hashed first when longer than a block and zero-padded to one. imgproxy's URL signatures
/// are this over the salt and the path.
package struct HMACSHA256: Sendable {
    private var inner: SHA256
    private let outerKey: [UInt8]

    /// An authenticator keyed with `key` (any length).
    package init(key: [UInt8]) {
        var block = key.count > SHA256.blockBytes ? SHA256.hash(key) : key
        block += [UInt8](repeating: 0, count: SHA256.blockBytes - block.count)
        inner = SHA256()
        inner.update(block.map { $0 ^ 0x36 })
        outerKey = block.map { $0 ^ 0x5c }
    }

    /// Appends `bytes` to the authenticated message.
    package mutating func update(_ bytes: some Sequence<UInt8>) {
        inner.update(bytes)
    }

    /// The 32-byte authentication code.
    package consuming func finalize() -> [UInt8] {
        var outer = SHA256()
        outer.update(outerKey)
        outer.update(inner.finalize())
        return outer.finalize()
    }
}
